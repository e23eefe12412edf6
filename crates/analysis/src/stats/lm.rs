//! A small dense Levenberg–Marquardt solver (≤ a handful of parameters) for the USL fit.
//!
//! Written here rather than pulled from a crate: the problem is 1–3 parameters and
//! `nalgebra`-based crates (levenberg-marquardt, argmin) would add a large dependency tree
//! for ~100 lines. Marquardt's diagonal scaling keeps parameters of very different
//! magnitudes (λ ~ 10³, κ ~ 10⁻⁴) well conditioned.

/// A least-squares problem: residuals and their Jacobian at a parameter vector.
pub(crate) trait Problem {
    /// Residuals `r_i(p)`; `None` when `p` is outside the model's domain.
    fn residuals(&self, p: &[f64]) -> Option<Vec<f64>>;
    /// Jacobian rows `∂r_i/∂p_j` at `p` (only called where `residuals` is `Some`).
    fn jacobian(&self, p: &[f64]) -> Vec<Vec<f64>>;
}

/// Outcome of a fit.
pub(crate) struct LmResult {
    /// Parameters at the minimum.
    pub params: Vec<f64>,
    /// Sum of squared residuals at `params`.
    pub sse: f64,
}

fn sse(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

/// Minimizes `Σ r_i(p)²` from `start`. `None` when the start is outside the domain.
pub(crate) fn minimize(problem: &impl Problem, start: &[f64]) -> Option<LmResult> {
    let d = start.len();
    let mut p = start.to_vec();
    let mut r = problem.residuals(&p)?;
    let mut cost = sse(&r);
    let mut mu: f64 = 1e-3;
    for _ in 0..2000 {
        let jac = problem.jacobian(&p);
        // Column norms of J: Marquardt's scaling, also used to equilibrate the QR solve.
        let mut norms = vec![0.0; d];
        let mut g = vec![0.0; d];
        for (row, ri) in jac.iter().zip(&r) {
            for j in 0..d {
                norms[j] += row[j] * row[j];
                g[j] += row[j] * ri;
            }
        }
        let norms: Vec<f64> = norms.iter().map(|v| v.sqrt().max(1e-300)).collect();
        if g.iter().all(|v| *v == 0.0) {
            break;
        }
        let mut improved = false;
        let mut converged = false;
        for _ in 0..60 {
            // Step = least-squares solution of [J; √μ·diag(‖J_j‖)] δ = [−r; 0], solved by
            // Householder QR on column-scaled J (never forms JᵀJ, whose condition number
            // would be squared and cost ~6 digits on the ill-conditioned USL valley).
            let mut rows: Vec<Vec<f64>> = jac
                .iter()
                .map(|row| row.iter().zip(&norms).map(|(v, s)| v / s).collect())
                .collect();
            let mut rhs: Vec<f64> = r.iter().map(|v| -v).collect();
            for j in 0..d {
                let mut row = vec![0.0; d];
                row[j] = mu.sqrt();
                rows.push(row);
                rhs.push(0.0);
            }
            let Some(scaled) = lstsq(rows, rhs, d) else {
                mu *= 10.0;
                continue;
            };
            let step: Vec<f64> = scaled.iter().zip(&norms).map(|(v, s)| v / s).collect();
            let trial: Vec<f64> = p.iter().zip(&step).map(|(a, b)| a + b).collect();
            if let Some(tr) = problem.residuals(&trial) {
                let tc = sse(&tr);
                if tc.is_finite() && tc <= cost {
                    let small_step = step
                        .iter()
                        .zip(&p)
                        .all(|(s, v)| s.abs() <= 1e-15 * v.abs().max(1e-300));
                    converged = small_step;
                    improved = tc < cost;
                    p = trial;
                    r = tr;
                    cost = tc;
                    mu = (mu / 3.0).max(1e-15);
                    break;
                }
            }
            mu *= 4.0;
            if mu > 1e30 {
                break;
            }
        }
        if converged || !improved {
            break;
        }
    }
    Some(LmResult {
        params: p,
        sse: cost,
    })
}

/// Least-squares solution of `rows · x ≈ rhs` (`rows` is m × d, m ≥ d) by Householder QR;
/// `None` if rank deficient.
#[allow(clippy::needless_range_loop)] // textbook Householder indexing reads clearer
fn lstsq(mut a: Vec<Vec<f64>>, mut b: Vec<f64>, d: usize) -> Option<Vec<f64>> {
    let m = a.len();
    for col in 0..d {
        let norm = (col..m).map(|i| a[i][col] * a[i][col]).sum::<f64>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        let alpha = if a[col][col] > 0.0 { -norm } else { norm };
        // v = x − αe₁, stored in place of the column.
        let mut v: Vec<f64> = (col..m).map(|i| a[i][col]).collect();
        v[0] -= alpha;
        let vnorm2: f64 = v.iter().map(|x| x * x).sum();
        if vnorm2 == 0.0 {
            continue;
        }
        for k in col..d {
            let dot: f64 = (col..m).map(|i| v[i - col] * a[i][k]).sum();
            let f = 2.0 * dot / vnorm2;
            for i in col..m {
                a[i][k] -= f * v[i - col];
            }
        }
        let dot: f64 = (col..m).map(|i| v[i - col] * b[i]).sum();
        let f = 2.0 * dot / vnorm2;
        for i in col..m {
            b[i] -= f * v[i - col];
        }
    }
    let mut x = vec![0.0; d];
    for col in (0..d).rev() {
        if a[col][col] == 0.0 {
            return None;
        }
        let s: f64 = (col + 1..d).map(|k| a[col][k] * x[k]).sum();
        x[col] = (b[col] - s) / a[col][col];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}
