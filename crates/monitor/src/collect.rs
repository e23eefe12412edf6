//! Where every source writes its values for the current interval, and how failures become
//! missing series with one warning per failure (not one per interval).

use crate::sample::MonitorWarning;
use std::collections::{BTreeMap, HashSet};

/// The values of the interval being sampled, plus which sources are failing.
#[derive(Debug, Default)]
pub struct Collect {
    values: BTreeMap<String, f64>,
    missing: Vec<String>,
    warnings: Vec<MonitorWarning>,
    /// Sources failing since their last success: they are not warned about again.
    failing: HashSet<String>,
}

impl Collect {
    /// Records a value; non-finite values (a division by a zero interval) are dropped.
    pub fn set(&mut self, series: impl Into<String>, value: f64) {
        if value.is_finite() {
            self.values.insert(series.into(), value);
        }
    }

    /// Marks `source` missing in this interval; warns only when it was working before.
    pub fn fail(&mut self, source: &str, message: impl FnOnce() -> String) {
        self.missing.push(source.to_string());
        if self.failing.insert(source.to_string()) {
            self.warnings.push(MonitorWarning {
                source: source.to_string(),
                message: message(),
            });
        }
    }

    /// A warning that does not make the source missing (e.g. one of several files).
    pub fn warn_once(&mut self, source: &str, message: impl FnOnce() -> String) {
        if self.failing.insert(source.to_string()) {
            self.warnings.push(MonitorWarning {
                source: source.to_string(),
                message: message(),
            });
        }
    }

    /// `source` worked: a later failure is warned about again.
    pub fn ok(&mut self, source: &str) {
        if !self.failing.is_empty() {
            self.failing.remove(source);
        }
    }

    /// Takes this interval's values, missing sources (each once) and new warnings.
    pub fn take(&mut self) -> (BTreeMap<String, f64>, Vec<String>, Vec<MonitorWarning>) {
        let mut missing = std::mem::take(&mut self.missing);
        missing.sort();
        missing.dedup();
        (
            std::mem::take(&mut self.values),
            missing,
            std::mem::take(&mut self.warnings),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_per_failure_episode() {
        let mut c = Collect::default();
        c.fail("processes.target", || "gone".into());
        c.set("host.cpu_percent", f64::NAN);
        c.set("host.load1", 0.5);
        let (values, missing, warnings) = c.take();
        assert_eq!(values.len(), 1);
        assert_eq!(missing, vec!["processes.target".to_string()]);
        assert_eq!(warnings.len(), 1);
        c.fail("processes.target", || "gone".into());
        assert_eq!(c.take().2.len(), 0, "still failing: no second warning");
        c.ok("processes.target");
        c.fail("processes.target", || "gone again".into());
        assert_eq!(c.take().2[0].message, "gone again");
    }
}
