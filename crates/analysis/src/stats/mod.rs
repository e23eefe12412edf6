//! Cross-run statistics: pure functions over one value per run (a run is one observation;
//! percentiles are compared across runs, never averaged or pooled across requests).

mod ci;
mod degradation;
mod describe;
mod error;
mod hodges_lehmann;
mod holm;
mod kendall;
mod kneedle;
mod lm;
mod mann_whitney;
mod outliers;
mod prediction;
mod rank_sum_exact;
mod ranks;
mod ratio;
mod rng;
mod sign_runs;
mod tdist;
mod u_dist;
mod usl;
mod validate;
mod welch;

pub use ci::{
    binom_half_cdf, mean_ci, median_ci, median_ci_coverage, median_ci_rank, CONFIDENCE,
    MEDIAN_CI_MIN_N,
};
pub use degradation::degradation_factor;
pub use describe::{describe, median, unstable, Summary, UNSTABLE_CV};
pub use error::StatsError;
pub use hodges_lehmann::{
    hodges_lehmann_ratio, hodges_lehmann_ratio_with, hodges_lehmann_shift, moses_rank,
    HL_EXACT_MAX_PAIRS,
};
pub use holm::holm;
pub use kendall::{kendall_trend, Trend};
pub use kneedle::{kneedle, Curve, Direction, Knee};
pub use mann_whitney::{
    mann_whitney_u, mann_whitney_u_with, rank_sum_test, MannWhitney, Method, MwuMethod,
    EXACT_MAX_PER_SIDE, EXACT_MAX_PER_SIDE_TIES,
};
pub use outliers::{
    tukey_fences, tukey_outliers, Fences, OutlierKind, OutlierSide, OUTLIER_MIN_DEVIATION,
    OUTLIER_MIN_N,
};
pub use prediction::{detectable_change, log_prediction, rank_prediction_p, Prediction};
pub use ratio::Ratio;
pub use rng::SplitMix64;
pub use sign_runs::{sign_runs, SignRuns};
pub use tdist::{normal_quantile, t_quantile};
pub use usl::{fit_usl, poor_fit, UslFit, POOR_FIT_R2, USL_MIN_POINTS};
pub use welch::welch_log_ratio;

#[cfg(test)]
mod tests;
