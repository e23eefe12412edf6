//! Analysis: turns measured runs into verdicts — thresholds, cross-run statistics, comparisons.

pub mod capacity;
pub mod compare;
pub mod stats;
pub mod study;
pub mod thresholds;
