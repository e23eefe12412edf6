//! The `capacity:` section: where the search starts, how long each step holds, when it stops.

use super::{as_text, parse_fraction, CapacitySpec, StudyDocument};
use crate::error::ScenarioError;
use crate::limits::{MAX_ARRIVALS, MAX_CONFIRM, MAX_RATE};
use crate::units::{parse_duration, parse_rate};
use std::time::Duration;

impl StudyDocument {
    /// The checked `capacity:` section; `Default` when the file has none.
    pub fn capacity(&self) -> Result<CapacitySpec, ScenarioError> {
        let mut spec = CapacitySpec::default();
        let Some(section) = self.section("capacity") else {
            return Ok(spec);
        };
        let Some(map) = section.as_mapping() else {
            return Err(self.err(
                "capacity",
                "expected a mapping (start, hold, warmup, precision, confirm)",
            ));
        };
        const KEYS: &[&str] = &[
            "start",
            "hold",
            "warmup",
            "precision",
            "confirm",
            "max",
            "max_errors",
        ];
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            let field = format!("capacity.{key}");
            let text = || as_text(v).ok_or_else(|| "expected a value".to_string());
            let e = |m: String| self.err(&field, m);
            match key {
                "start" => spec.start = Some(text().and_then(|t| parse_rate(&t)).map_err(e)?),
                "max" => spec.max = Some(text().and_then(|t| parse_rate(&t)).map_err(e)?),
                "hold" => spec.hold = Some(text().and_then(|t| parse_duration(&t)).map_err(e)?),
                "warmup" => spec.warmup = Some(text().and_then(|t| parse_duration(&t)).map_err(e)?),
                "precision" => spec.precision = Some(parse_fraction(v).map_err(e)?),
                "max_errors" => {
                    let f = parse_fraction(v).map_err(e)?;
                    if f > 1.0 {
                        return Err(self.err(
                            &field,
                            "more than every request: an error rate is 0% to 100%".to_string(),
                        ));
                    }
                    spec.max_errors = Some(f);
                }
                "confirm" => {
                    spec.confirm = Some(
                        v.as_u64()
                            .ok_or_else(|| self.err(&field, "expected a whole number of runs"))?
                            as usize,
                    )
                }
                other => return Err(self.unknown_field(&field, other, KEYS)),
            }
        }
        self.capacity_bounds(&spec)?;
        Ok(spec)
    }

    /// What the search will ask for stays within the limits a scenario has.
    fn capacity_bounds(&self, spec: &CapacitySpec) -> Result<(), ScenarioError> {
        for (key, rate) in [("start", spec.start), ("max", spec.max)] {
            if let Some(r) = rate {
                if !(r > 0.0 && r <= MAX_RATE) {
                    return Err(self.err(
                        &format!("capacity.{key}"),
                        format!("a rate above 0 and at most {MAX_RATE}/s"),
                    ));
                }
            }
        }
        if let (Some(start), Some(max)) = (spec.start, spec.max) {
            if max < start {
                return Err(self.err("capacity.max", "`max` is below `start`"));
            }
        }
        if spec.hold.is_some_and(|h| h.is_zero()) {
            return Err(self.err("capacity.hold", "must be above zero"));
        }
        if spec.precision.is_some_and(|p| p <= 0.0 || p > 1.0) {
            return Err(self.err(
                "capacity.precision",
                "a fraction above 0 and at most 100%, e.g. 5%",
            ));
        }
        if spec.confirm.is_some_and(|c| c as u64 > MAX_CONFIRM) {
            return Err(self.err(
                "capacity.confirm",
                format!("at most {MAX_CONFIRM} confirmation runs"),
            ));
        }
        let longest = spec.hold.unwrap_or(Duration::from_secs(30))
            + spec.warmup.unwrap_or(Duration::from_secs(5));
        let arrivals = spec.max.unwrap_or(1e6) * longest.as_secs_f64();
        if arrivals > MAX_ARRIVALS {
            return Err(self.err(
                "capacity",
                format!(
                    "a step at the `max` rate would plan {arrivals:.0} arrivals, above the limit of {MAX_ARRIVALS:.0}"
                ),
            ));
        }
        Ok(())
    }
}
