//! Typed errors for invalid statistical input, so callers never see a panic or a silent NaN.

use thiserror::Error;

/// Why a statistics function refused its input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// No values were given.
    #[error("no values given")]
    Empty,
    /// Fewer values than the method needs.
    #[error("need at least {needed} values, got {got}")]
    TooFew {
        /// Minimum number of values the method needs.
        needed: usize,
        /// Number of values given.
        got: usize,
    },
    /// A value is NaN or infinite.
    #[error("value at index {index} is not finite ({value})")]
    NotFinite {
        /// Position of the offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value is zero or negative where a logarithm or a ratio needs it positive.
    #[error("value at index {index} must be > 0, got {value}")]
    NonPositive {
        /// Position of the offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Two paired inputs have different lengths.
    #[error("paired inputs differ in length: {left} vs {right}")]
    LengthMismatch {
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// A scalar argument is outside its domain (probability, degrees of freedom, sensitivity, ...).
    #[error("invalid {name}: {value}")]
    InvalidArgument {
        /// Name of the argument.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// x values of a curve must be strictly increasing.
    #[error("x values must be strictly increasing (index {index})")]
    NotIncreasing {
        /// First index whose x is not greater than the previous one.
        index: usize,
    },
    /// The input carries no information for this method (e.g. all values equal).
    #[error("degenerate input: {0}")]
    Degenerate(&'static str),
    /// The samples are too small for any order statistic to reach 95% coverage.
    #[error("samples of sizes {m} and {n} are too small for a 95% distribution-free interval")]
    TooSmallForInterval {
        /// Size of the first sample.
        m: usize,
        /// Size of the second sample.
        n: usize,
    },
    /// An iterative fit did not converge.
    #[error("fit did not converge")]
    NoConvergence,
}
