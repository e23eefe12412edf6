//! The `capacity:` section: where the search starts, how long each step holds, when it stops.

use super::{as_text, parse_fraction, CapacitySpec, StudyDocument};
use crate::error::ScenarioError;
use crate::units::{parse_duration, parse_rate};

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
                "max_errors" => spec.max_errors = Some(parse_fraction(v).map_err(e)?),
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
        Ok(spec)
    }
}
