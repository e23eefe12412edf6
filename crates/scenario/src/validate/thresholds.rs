//! The `thresholds:` section: each expression parsed, and the steps and groups it names checked.

use super::Ctx;
use crate::error::ScenarioError;
use crate::model::Flow;
use crate::suggest::closest;
use crate::threshold::{Scope, Threshold};

pub(super) fn thresholds(
    raw: &[String],
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
    for (i, text) in raw.iter().enumerate() {
        let field = format!("thresholds[{i}]");
        let t = Threshold::parse(text).map_err(|m| ctx.err(&field, m))?;
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
