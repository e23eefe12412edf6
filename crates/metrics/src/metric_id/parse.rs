//! Reading a metric's name: the `study.json` spelling and the threshold one, scoped to a
//! group or a step, and resource series; and (de)serializing a [`MetricId`] as its name.

use super::{MetricId, MetricNameError, Quantity, RESOURCE_SOURCES};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::str::FromStr;

impl MetricId {
    /// `resources.host.cpu_percent`, `process.target.rss_bytes.max`, `host.cpu_percent`.
    fn parse_resource(text: &str) -> Option<Result<Self, MetricNameError>> {
        let rest = text.strip_prefix("resources.").unwrap_or(text);
        let (source, canonical) = RESOURCE_SOURCES.iter().find(|(p, _)| rest.starts_with(p))?;
        let rest = &rest[source.len()..];
        let (name, max) = match rest.strip_suffix(".max") {
            Some(n) => (n, true),
            None => (rest.strip_suffix(".mean").unwrap_or(rest), false),
        };
        if name.is_empty() {
            return Some(Err(MetricNameError::EmptyName(text.to_string())));
        }
        Some(Ok(Self::resource(&format!("{canonical}{name}"), max)))
    }
}

impl FromStr for MetricId {
    type Err = MetricNameError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let s = text.trim();
        if let Some(resource) = Self::parse_resource(s) {
            return resource;
        }
        let quantities = Quantity::all();
        for q in &quantities {
            if q.spellings().iter().any(|w| w == s) {
                return Ok(MetricId::run(*q));
            }
        }
        let scoped = [
            ("groups.", true),
            ("group.", true),
            ("steps.", false),
            ("step.", false),
        ];
        for (prefix, is_group) in scoped {
            let Some(rest) = s.strip_prefix(prefix) else {
                continue;
            };
            // The longest matching quantity suffix wins, so `steps.x.errors.rate` is the error
            // rate of `x`, not the throughput (`rate`) of a step called `x.errors`.
            let mut best: Option<(usize, &str, Quantity)> = None;
            for q in &quantities {
                for w in q.spellings() {
                    if let Some(name) = rest.strip_suffix(w.as_str()) {
                        if let Some(name) = name.strip_suffix('.') {
                            if best.is_none_or(|(len, _, _)| w.len() > len) {
                                best = Some((w.len(), name, *q));
                            }
                        }
                    }
                }
            }
            let Some((_, name, quantity)) = best else {
                return Err(MetricNameError::Unknown(text.to_string()));
            };
            if name.is_empty() {
                return Err(MetricNameError::EmptyName(text.to_string()));
            }
            if quantity == Quantity::Iterations {
                return Err(MetricNameError::ScopedIterations(text.to_string()));
            }
            return Ok(if is_group {
                MetricId::group(name, quantity)
            } else {
                MetricId::step(name, quantity)
            });
        }
        Err(MetricNameError::Unknown(text.to_string()))
    }
}

impl Serialize for MetricId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MetricId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
