//! How fast this machine runs this build, so that the fuzz budgets are this machine's own: a
//! budget set where the suite was written fails a slower processor, a loaded CI machine or a
//! debug build as "a case hangs" when it is only slower (issue 44).
//!
//! The work unit is what parsers do — allocate, copy and compare short strings, fill and walk a
//! map — timed a few times, the fastest kept (the others met a preemption). Budgets are stated
//! for the machine the suite was written on and scaled by how much slower this one is; a faster
//! machine keeps them as they are.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The work unit's time where the budgets were set (a 2-core AMD EPYC VM, quiet: 7.8 ms in a
/// debug build, `cargo run -p loadlab-fuzz --example calibrate`), per build profile. The
/// release figure is an estimate (an eighth), not yet measured: the long release runs only.
pub const REFERENCE_UNIT: Duration = if cfg!(debug_assertions) {
    Duration::from_micros(REFERENCE_UNIT_DEBUG_US)
} else {
    Duration::from_micros(REFERENCE_UNIT_RELEASE_US)
};
const REFERENCE_UNIT_DEBUG_US: u64 = 8_000;
const REFERENCE_UNIT_RELEASE_US: u64 = 1_000;

/// This machine's speed against the reference: the factor budgets are multiplied by.
#[derive(Debug, Clone, Copy)]
pub struct Calibration {
    /// The work unit's fastest time here.
    pub unit: Duration,
    /// `unit / REFERENCE_UNIT`, at least 1 (a faster machine keeps the stated budgets).
    pub factor: f64,
}

impl Calibration {
    /// Times the work unit five times (a few tens of milliseconds in a debug build).
    pub fn measure() -> Self {
        let unit = (0..5)
            .map(|_| {
                let started = Instant::now();
                black_box(work_unit());
                started.elapsed()
            })
            .min()
            .unwrap_or(REFERENCE_UNIT);
        Self::from_unit(unit)
    }

    pub fn from_unit(unit: Duration) -> Self {
        let factor = (unit.as_secs_f64() / REFERENCE_UNIT.as_secs_f64()).max(1.0);
        Self { unit, factor }
    }

    /// `budget` as it applies on this machine.
    pub fn scale(&self, budget: Duration) -> Duration {
        budget.mul_f64(self.factor)
    }

    /// The figures, for a failure message: "calibration 27.0 ms against 9.0 ms where the
    /// budgets were set: ×3.0".
    pub fn words(&self) -> String {
        format!(
            "this machine ran the calibration unit in {:.1} ms against {:.1} ms where the budgets were set ({} build), so budgets are ×{:.1}",
            self.unit.as_secs_f64() * 1e3,
            REFERENCE_UNIT.as_secs_f64() * 1e3,
            if cfg!(debug_assertions) { "debug" } else { "release" },
            self.factor
        )
    }
}

/// Parser-like work: format, allocate and compare keys, fill a map, walk it.
fn work_unit() -> usize {
    let mut map = BTreeMap::new();
    for i in 0..5_000u32 {
        let key = format!("flows.{}.steps.{}.name", i % 97, i);
        let value: String = key.chars().rev().collect();
        map.insert(key, value);
    }
    map.iter()
        .filter(|(k, v)| k.len() > 20 && v.starts_with('1'))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slower_machine_scales_budgets_up_and_a_faster_one_keeps_them() {
        let slow = Calibration::from_unit(REFERENCE_UNIT * 3);
        assert!((slow.factor - 3.0).abs() < 1e-9);
        assert_eq!(slow.scale(Duration::from_secs(2)), Duration::from_secs(6));
        let fast = Calibration::from_unit(REFERENCE_UNIT / 2);
        assert_eq!(fast.factor, 1.0);
        assert_eq!(fast.scale(Duration::from_secs(2)), Duration::from_secs(2));
        assert!(slow.words().contains("×3.0"), "{}", slow.words());
    }
}
