//! One new run against the runs of a stored study: how far outside what the study's runs
//! predict does it lie? A run is one observation, so no rank test can be significant (with
//! 10 baseline runs the smallest possible p is 2/11); the prediction interval on logs is the
//! honest tool: per-run values are close to log-normal, and with `n` baseline runs
//! `t = (ln r − mean ln b) / (s · √(1 + 1/n))` follows Student's t with `n − 1` degrees of
//! freedom when the run comes from the baseline's distribution. Inverting it gives a CI for
//! the shift of the new run's distribution relative to the baseline's geometric mean.
//!
//! When logs cannot be taken (zeros: error rates) or the baseline has no spread, the
//! distribution-free rank p-value `(1 + #{b at least as extreme}) / (n + 1)` is used: exact
//! for exchangeable runs, and honest about how little one run can show.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::ratio::Ratio;
use super::tdist::t_quantile;
use super::validate;
use super::StatsError;

/// A new run against baseline runs on logs: the change `run / geometric mean − 1`, its 95% CI,
/// and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub change: Ratio,
    pub p_value: f64,
}

/// Log-scale prediction test of `run` against `baseline` (≥ 2 positive values with spread).
pub fn log_prediction(baseline: &[f64], run: f64) -> Result<Prediction, StatsError> {
    validate::positive(baseline, 2)?;
    validate::positive(&[run], 1)?;
    let n = baseline.len();
    let logs: Vec<f64> = baseline.iter().map(|v| v.ln()).collect();
    let mean = validate::mean(&logs);
    let sd = validate::sample_variance(&logs).sqrt();
    if sd == 0.0 {
        return Err(StatsError::Degenerate("the baseline runs have no spread"));
    }
    let se = sd * (1.0 + 1.0 / n as f64).sqrt();
    let d = run.ln() - mean;
    let df = (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, df).map_err(|_| StatsError::InvalidArgument {
        name: "degrees of freedom",
        value: df,
    })?;
    let p_value = (2.0 * t.sf((d / se).abs())).clamp(0.0, 1.0);
    let q = t_quantile(0.975, df)?;
    Ok(Prediction {
        change: Ratio {
            change: d.exp_m1(),
            ci: ((d - q * se).exp_m1(), (d + q * se).exp_m1()),
        },
        p_value,
    })
}

/// The smallest relative change (up or down, as `(lower, upper)`) one new run must show to
/// be significant at level `alpha` against `n` baseline runs with log-scale SD `sd`.
pub fn detectable_change(n: usize, sd: f64, alpha: f64) -> Result<(f64, f64), StatsError> {
    if n < 2 {
        return Err(StatsError::TooFew { needed: 2, got: n });
    }
    let q = t_quantile(1.0 - alpha / 2.0, (n - 1) as f64)?;
    let half = q * sd * (1.0 + 1.0 / n as f64).sqrt();
    Ok(((-half).exp_m1(), half.exp_m1()))
}

/// Two-sided distribution-free p-value of one run among `n` exchangeable baseline runs:
/// `min(1, 2 · min(1 + #{b ≥ r}, 1 + #{b ≤ r}) / (n + 1))`.
pub fn rank_prediction_p(baseline: &[f64], run: f64) -> Result<f64, StatsError> {
    validate::finite(baseline, 1)?;
    validate::finite(&[run], 1)?;
    let n = baseline.len() as f64;
    let above = baseline.iter().filter(|&&b| b >= run).count() as f64;
    let below = baseline.iter().filter(|&&b| b <= run).count() as f64;
    Ok((2.0 * (1.0 + above).min(1.0 + below) / (n + 1.0)).min(1.0))
}
