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
    known_keys(map, field, ctx)?;
    let metric = metric(map, field, ctx)?;
    let (op, bound_key) = bound_side(map, field, ctx)?;
    let bound = get(map, bound_key)
        .and_then(scalar_text)
        .unwrap_or_default();
    Threshold::parse_bound(&metric, &bound).map_err(|m| {
        let key = if m.contains("metric") {
            "metric"
        } else {
            bound_key
        };
        ctx.err(&at(field, key), m)
    })?;
    let live = live(map, field, ctx)?;
    let expr = format!("{metric} {op} {bound}{}", live.suffix());
    Threshold::parse(&expr).map_err(|m| ctx.err(field, m))
}

/// `field.key`, where an error about one key of the mapping points.
fn at(field: &str, key: &str) -> String {
    format!("{field}.{key}")
}

fn get<'a>(map: &'a Mapping, key: &str) -> Option<&'a Value> {
    map.get(Value::String(key.to_string()))
}

/// Every key is one of [`KEYS`] (a misspelt one named with its likely spelling).
fn known_keys(map: &Mapping, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    for key in map.keys() {
        let name = scalar_text(key).unwrap_or_default();
        if !KEYS.contains(&name.as_str()) {
            let mut err = ctx.err(
                &at(field, &name),
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
    Ok(())
}

/// The `metric` the threshold bounds.
fn metric(map: &Mapping, field: &str, ctx: &Ctx) -> Result<String, ScenarioError> {
    match get(map, "metric").map(scalar_text) {
        Some(Some(m)) => Ok(m),
        Some(None) => Err(ctx.err(
            &at(field, "metric"),
            format!("`metric` is a name such as latency.p95 or http.errors, {EXAMPLE}"),
        )),
        None => Err(ctx.err(
            field,
            format!("a threshold mapping needs `metric`, {EXAMPLE}"),
        )),
    }
}

/// The comparison and the key holding the bound: exactly one of `below` and `above`.
fn bound_side(
    map: &Mapping,
    field: &str,
    ctx: &Ctx,
) -> Result<(&'static str, &'static str), ScenarioError> {
    match (get(map, "below"), get(map, "above")) {
        (Some(_), None) => Ok(("<", "below")),
        (None, Some(_)) => Ok((">", "above")),
        (Some(_), Some(_)) => Err(ctx.err(
            &at(field, "above"),
            "give `below` or `above`, not both (write two thresholds to bound both sides)",
        )),
        (None, None) => Err(ctx.err(
            field,
            format!("a threshold mapping needs `below:` or `above:` (the bound), {EXAMPLE}"),
        )),
    }
}

/// What the threshold does while the run goes: `over`, `abort` and `grace`, checked together.
fn live(map: &Mapping, field: &str, ctx: &Ctx) -> Result<Live, ScenarioError> {
    let duration = |key: &str| -> Result<Option<std::time::Duration>, ScenarioError> {
        match get(map, key) {
            None => Ok(None),
            Some(v) => {
                let text = scalar_text(v).unwrap_or_default();
                parse_duration(&text)
                    .map(Some)
                    .map_err(|m| ctx.err(&at(field, key), format!("`{key}`: {m}")))
            }
        }
    };
    let live = Live {
        window: duration("over")?,
        abort: match get(map, "abort") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ctx.err(
                    &at(field, "abort"),
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
        ctx.err(&at(field, key), m)
    })?;
    Ok(live)
}
