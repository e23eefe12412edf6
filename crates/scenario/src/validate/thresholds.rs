//! The `thresholds:` section: each expression (or mapping) parsed, and the steps and groups it
//! names checked.

use super::threshold_map::from_mapping;
use super::Ctx;
use crate::error::ScenarioError;
use crate::model::Flow;
use crate::suggest::closest;
use crate::threshold::{Scope, Threshold};

pub(super) fn thresholds(
    raw: &[serde_yaml_ng::Value],
    flows: &[Flow],
    ctx: &Ctx,
) -> Result<Vec<Threshold>, ScenarioError> {
    let mut requests = Vec::new();
    for f in flows {
        crate::model::collect_requests(&f.steps, &mut requests);
    }
    let steps: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    let groups: Vec<&str> = requests.iter().filter_map(|r| r.group.as_deref()).collect();
    let mut out = Vec::new();
    for (i, entry) in raw.iter().enumerate() {
        let field = format!("thresholds[{i}]");
        let t = match entry {
            serde_yaml_ng::Value::String(text) => {
                Threshold::parse(text).map_err(|m| ctx.err(&field, m))?
            }
            serde_yaml_ng::Value::Mapping(map) => from_mapping(map, &field, ctx)?,
            _ => {
                return Err(ctx.err(
                    &field,
                    "a threshold is a string (`latency.p95 < 500ms over 30s, abort`) or a mapping (`{ metric: latency.p95, over: 30s, below: 500ms, abort: true }`)",
                ))
            }
        };
        let (kind, name, known) = match &t.metric.scope {
            Scope::All => {
                out.push(t);
                continue;
            }
            Scope::Step(n) => ("step", n, &steps),
            Scope::Group(n) => ("group", n, &groups),
        };
        if !known.contains(&name.as_str()) {
            let mut err = ctx.err(&field, format!("no {kind} is named `{name}`"));
            if let Some(s) = closest(name, known.iter().copied()) {
                err = err.with_hint(format!("did you mean `{s}`?"));
            } else if !known.is_empty() {
                err = err.with_hint(format!("known {kind}s: {}", known.join(", ")));
            }
            return Err(err);
        }
        out.push(t);
    }
    Ok(out)
}

/// Every window holds at least one of the record's intervals (a tenth of a second for runs
/// planned under 10 s, a second for longer ones).
pub(super) fn windows(scenario: &crate::model::Scenario, ctx: &Ctx) -> Result<(), ScenarioError> {
    let planned = scenario.plan().duration();
    let slice = loadlab_metrics::slice_for(planned);
    for (i, t) in scenario.thresholds.iter().enumerate() {
        let Some(window) = t.live.window else {
            continue;
        };
        if window + std::time::Duration::from_micros(1) < slice {
            let field = format!("thresholds[{i}]");
            let over = format!("{field}.over");
            return Err(ctx.err_at(
                &[&over, &field],
                format!(
                    "`{}`: the window ({}) is shorter than the record's interval ({}, for a run planned for {}): a window holds whole intervals; write `over {}` or longer",
                    t.expr,
                    crate::units::format_duration(window),
                    crate::units::format_duration(slice),
                    crate::units::format_duration(planned),
                    crate::units::format_duration(slice),
                ),
            ));
        }
    }
    Ok(())
}
