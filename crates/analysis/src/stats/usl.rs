//! Universal Scalability Law fit, `X(N) = λN / (1 + σ(N−1) + κN(N−1))`: how throughput
//! scales with concurrency, where it peaks, and whether the model describes the runs at all.
//!
//! Least squares on X with `σ ≥ 0`, `κ ≥ 0` (λ free), like
//! `scipy.optimize.curve_fit(usl, n, x, p0, bounds=(0, inf))`. The bounds are handled
//! exactly by an active-set enumeration: the Levenberg–Marquardt solver in `lm.rs` fits
//! every face of the feasible region (σ and κ free; σ = 0; κ = 0; both 0) without
//! constraints, infeasible interior solutions are discarded, and the feasible candidate
//! with the smallest squared error is the constrained optimum (it is a stationary point
//! of its own face, so it is among the candidates).

use serde::{Deserialize, Serialize};

use super::lm::{self, Problem};
use super::validate;
use super::StatsError;

/// Minimum number of (N, X) points for a fit.
pub const USL_MIN_POINTS: usize = 6;

/// R² below which the fit is not trusted.
pub const POOR_FIT_R2: f64 = 0.9;

/// A fitted USL model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention (serial fraction), ≥ 0.
    pub sigma: f64,
    /// Coherency (crosstalk) cost, ≥ 0.
    pub kappa: f64,
    /// Throughput of one unit of concurrency (X(1)).
    pub lambda: f64,
    /// Concurrency of peak throughput `√((1 − σ)/κ)`; `None` when `κ = 0` or `σ ≥ 1`.
    pub n_star: Option<f64>,
    /// Predicted peak throughput `X(N*)`; `None` with `n_star`.
    pub peak: Option<f64>,
    /// Coefficient of determination `1 − SSE/SST` on X (1 when X is constant and fitted exactly, 0 when constant and not).
    pub r2: f64,
}

impl UslFit {
    /// Model throughput at concurrency `n`.
    pub fn predict(&self, n: f64) -> f64 {
        usl(n, self.lambda, self.sigma, self.kappa)
    }
}

/// Whether the USL does not describe the data well enough to trust `n_star`: `r2 < 0.9`.
pub fn poor_fit(fit: &UslFit) -> bool {
    fit.r2 < POOR_FIT_R2
}

fn usl(n: f64, lambda: f64, sigma: f64, kappa: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the USL to concurrency levels `n` (> 0) and throughputs `x` (≥ 0, not all 0).
/// Needs ≥ 6 points and ≥ 3 distinct concurrency levels.
pub fn fit_usl(n: &[f64], x: &[f64]) -> Result<UslFit, StatsError> {
    if n.len() != x.len() {
        return Err(StatsError::LengthMismatch {
            left: n.len(),
            right: x.len(),
        });
    }
    validate::positive(n, USL_MIN_POINTS)?;
    validate::finite(x, USL_MIN_POINTS)?;
    if let Some(index) = x.iter().position(|&v| v < 0.0) {
        return Err(StatsError::NonPositive {
            index,
            value: x[index],
        });
    }
    if x.iter().all(|&v| v == 0.0) {
        return Err(StatsError::Degenerate("all throughputs are zero"));
    }
    let mut levels = validate::sorted(n);
    levels.dedup();
    if levels.len() < 3 {
        return Err(StatsError::Degenerate(
            "need at least 3 distinct concurrency levels",
        ));
    }

    let starts = initial_guesses(n, x);
    let mut best: Option<(f64, [f64; 3])> = None;
    for (free_sigma, free_kappa) in [(true, true), (true, false), (false, true), (false, false)] {
        let problem = UslProblem {
            n,
            x,
            free_sigma,
            free_kappa,
        };
        for start in &starts {
            let p0 = problem.pack(start);
            let Some(res) = lm::minimize(&problem, &p0) else {
                continue;
            };
            let full = problem.unpack(&res.params);
            let feasible = full[1] >= 0.0 && full[2] >= 0.0 && full[0].is_finite();
            if feasible && res.sse.is_finite() && best.is_none_or(|(c, _)| res.sse < c) {
                best = Some((res.sse, full));
            }
        }
    }
    let (sse, [lambda, sigma, kappa]) = best.ok_or(StatsError::NoConvergence)?;
    let mean = validate::mean(x);
    let sst: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    let r2 = if sst > 0.0 {
        1.0 - sse / sst
    } else if sse == 0.0 {
        1.0
    } else {
        0.0
    };
    let n_star = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    Ok(UslFit {
        sigma,
        kappa,
        lambda,
        n_star,
        peak: n_star.map(|ns| usl(ns, lambda, sigma, kappa)),
        r2,
    })
}

/// Starting points `[λ, σ, κ]`: Gunther's linearization (λ from the best per-unit
/// throughput, then σ, κ by linear least squares on `N/C − 1`), and a generic one.
fn initial_guesses(n: &[f64], x: &[f64]) -> Vec<[f64; 3]> {
    let lambda0 = n.iter().zip(x).map(|(n, x)| x / n).fold(f64::MIN, f64::max);
    // y = N/C − 1 = σ(N−1) + κN(N−1), C = X/λ0
    let (mut s11, mut s12, mut s22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&ni, &xi) in n.iter().zip(x) {
        if xi <= 0.0 {
            continue;
        }
        let y = ni * lambda0 / xi - 1.0;
        let f1 = ni - 1.0;
        let f2 = ni * (ni - 1.0);
        s11 += f1 * f1;
        s12 += f1 * f2;
        s22 += f2 * f2;
        b1 += f1 * y;
        b2 += f2 * y;
    }
    let det = s11 * s22 - s12 * s12;
    let (mut sigma0, mut kappa0) = if det.abs() > 0.0 {
        ((b1 * s22 - b2 * s12) / det, (s11 * b2 - s12 * b1) / det)
    } else {
        (0.0, 0.0)
    };
    if !sigma0.is_finite() || sigma0 < 0.0 {
        sigma0 = 1e-3;
    }
    if !kappa0.is_finite() || kappa0 < 0.0 {
        kappa0 = 1e-5;
    }
    vec![[lambda0, sigma0, kappa0], [lambda0, 0.05, 1e-4]]
}

/// Least-squares problem for one face of the feasible set: σ and/or κ fixed at 0.
struct UslProblem<'a> {
    n: &'a [f64],
    x: &'a [f64],
    free_sigma: bool,
    free_kappa: bool,
}

impl UslProblem<'_> {
    /// Free parameters of `[λ, σ, κ]`.
    fn pack(&self, full: &[f64; 3]) -> Vec<f64> {
        let mut p = vec![full[0]];
        if self.free_sigma {
            p.push(full[1]);
        }
        if self.free_kappa {
            p.push(full[2]);
        }
        p
    }

    /// `[λ, σ, κ]` from the free parameters (fixed ones are 0).
    fn unpack(&self, p: &[f64]) -> [f64; 3] {
        let mut it = p.iter().copied();
        let lambda = it.next().unwrap_or(0.0);
        let sigma = if self.free_sigma {
            it.next().unwrap_or(0.0)
        } else {
            0.0
        };
        let kappa = if self.free_kappa {
            it.next().unwrap_or(0.0)
        } else {
            0.0
        };
        [lambda, sigma, kappa]
    }
}

impl Problem for UslProblem<'_> {
    fn residuals(&self, p: &[f64]) -> Option<Vec<f64>> {
        let [lambda, sigma, kappa] = self.unpack(p);
        self.n
            .iter()
            .zip(self.x)
            .map(|(&n, &x)| {
                let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
                (d > 0.0 && d.is_finite()).then(|| lambda * n / d - x)
            })
            .collect()
    }

    fn jacobian(&self, p: &[f64]) -> Vec<Vec<f64>> {
        let [lambda, sigma, kappa] = self.unpack(p);
        self.n
            .iter()
            .map(|&n| {
                let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
                let mut row = vec![n / d];
                if self.free_sigma {
                    row.push(-lambda * n * (n - 1.0) / (d * d));
                }
                if self.free_kappa {
                    row.push(-lambda * n * n * (n - 1.0) / (d * d));
                }
                row
            })
            .collect()
    }
}
