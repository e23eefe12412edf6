//! A threshold written as a mapping (`{ metric: latency.p95, over: 30s, below: 500ms, abort:
//! true, grace: 10s }`): each key checked where it stands, then written in the short form
//! (`latency.p95 < 500ms over 30s, abort after 10s`), which is what records and reports keep.

use super::Ctx;
use crate::error::ScenarioError;
use crate::suggest::closest;
use crate::threshold::{Live, Threshold};
use crate::units::parse_duration;
use crate::units::yaml_scalar_text as scalar_text;
use serde_yaml_ng::{Mapping, Value};

pub const KEYS: &[&str] = &["metric", "below", "above", "over", "abort", "grace"];

const EXAMPLE: &str =
    "e.g. `{ metric: latency.p95, over: 30s, below: 500ms, abort: true, grace: 10s }`";

/// The mapping at `field` (`thresholds[2]`) as a threshold.
pub(super) fn from_mapping(
    map: &Mapping,
    field: &str,
    ctx: &Ctx,
) -> Result<Threshold, ScenarioError> {
    let at = |key: &str| format!("{field}.{key}");
    for key in map.keys() {
        let name = scalar_text(key).unwrap_or_default();
        if !KEYS.contains(&name.as_str()) {
            let mut err = ctx.err(
                &at(&name),
                format!(
                    "unknown key `{name}` in a threshold: its keys are {}",
                    KEYS.join(", ")
                ),
            );
            if let Some(s) = closest(&name, KEYS.iter().copied()) {
                err = err.with_hint(format!("did you mean `{s}`?"));
            }
            return Err(err);
        }
    }
    let get = |key: &str| map.get(Value::String(key.to_string()));
    let metric = match get("metric").map(scalar_text) {
        Some(Some(m)) => m,
        Some(None) => {
            return Err(ctx.err(
                &at("metric"),
                format!("`metric` is a name such as latency.p95 or http.errors, {EXAMPLE}"),
            ))
        }
        None => {
            return Err(ctx.err(
                field,
                format!("a threshold mapping needs `metric`, {EXAMPLE}"),
            ))
        }
    };
    let (op, bound_key) = match (get("below"), get("above")) {
        (Some(_), None) => ("<", "below"),
        (None, Some(_)) => (">", "above"),
        (Some(_), Some(_)) => {
            return Err(ctx.err(
                &at("above"),
                "give `below` or `above`, not both (write two thresholds to bound both sides)",
            ))
        }
        (None, None) => {
            return Err(ctx.err(
                field,
                format!("a threshold mapping needs `below:` or `above:` (the bound), {EXAMPLE}"),
            ))
        }
    };
    let bound = get(bound_key).and_then(scalar_text).unwrap_or_default();
    Threshold::parse_bound(&metric, &bound).map_err(|m| {
        let key = if m.contains("metric") {
            "metric"
        } else {
            bound_key
        };
        ctx.err(&at(key), m)
    })?;
    let duration = |key: &str| -> Result<Option<std::time::Duration>, ScenarioError> {
        match get(key) {
            None => Ok(None),
            Some(v) => {
                let text = scalar_text(v).unwrap_or_default();
                parse_duration(&text)
                    .map(Some)
                    .map_err(|m| ctx.err(&at(key), format!("`{key}`: {m}")))
            }
        }
    };
    let live = Live {
        window: duration("over")?,
        abort: match get("abort") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ctx.err(
                    &at("abort"),
                    "`abort` is true (stop the run when this threshold fails) or false",
                ))
            }
        },
        grace: duration("grace")?.unwrap_or_default(),
    };
    live.check().map_err(|m| {
        let key = if live.window.is_some_and(|w| w.is_zero()) {
            "over"
        } else {
            "grace"
        };
        ctx.err(&at(key), m)
    })?;
    let expr = format!("{metric} {op} {bound}{}", live.suffix());
    Threshold::parse(&expr).map_err(|m| ctx.err(field, m))
}
