//! The `outputs:` section: each entry one live output, `{ kind: dest }` or `kind=dest`.

use super::Ctx;
use crate::error::ScenarioError;
use crate::output::OutputSpec;
use crate::raw::RawOutput;

pub(super) fn outputs(raw: Vec<RawOutput>, ctx: &Ctx) -> Result<Vec<OutputSpec>, ScenarioError> {
    let mut out = Vec::new();
    for (i, entry) in raw.into_iter().enumerate() {
        let field = format!("outputs[{i}]");
        let spec = match entry {
            RawOutput::Text(text) => OutputSpec::parse(&text),
            RawOutput::Map(map) if map.len() == 1 => {
                let (kind, dest) = map.into_iter().next().unwrap_or_default();
                OutputSpec::new(&kind, &dest)
            }
            RawOutput::Map(_) => Err(
                "write one output per entry: `- json: live.jsonl` or `- \"json=live.jsonl\"`"
                    .to_string(),
            ),
        };
        out.push(spec.map_err(|m| ctx.err(&field, m))?);
    }
    Ok(out)
}
