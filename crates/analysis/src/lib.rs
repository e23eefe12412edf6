//! Analysis: turns measured runs into verdicts — thresholds, cross-run statistics,
//! comparisons, sweeps and capacity decisions. Pure and synchronous (no engine, no I/O).
//!
//! Crates chosen: `statrs` for the normal and Student-t distributions (polished where its
//! quantiles are not accurate enough, see `stats/tdist.rs`); everything else (exact rank
//! distributions, Hodges–Lehmann, Kendall, Kneedle, the USL fit) is small and checked against
//! SciPy fixtures, because no maintained Rust crate computes them as SciPy/benchstat do.

pub mod capacity;
pub mod change_points;
pub mod compare;
pub mod history;
pub mod stats;
pub mod study;
pub mod thresholds;
