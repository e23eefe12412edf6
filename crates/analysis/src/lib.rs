//! Analysis: turns measured runs into verdicts — thresholds, cross-run statistics, comparisons.

pub mod stats;
pub mod thresholds;
