//! `loadlab validate FILE`: every check of `run`, `study` and `capacity` on every section of
//! the file (variants and sweep points included), without sending a request; and
//! `loadlab schema`: the JSON Schema of the file format, for editors.

use crate::exit::{CliError, Outcome};
use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::{Load, Step};
use std::path::Path;

/// The scenario file format as JSON Schema (committed as docs/schema/scenario.json).
pub const SCENARIO_SCHEMA: &str = include_str!("../../docs/schema/scenario.json");

pub fn execute(file: &Path) -> Result<Outcome, CliError> {
    let checked = StudyDocument::read(file)?.check()?;
    let scenario = &checked.scenario;
    let requests = scenario.request_steps().count();
    let plan = scenario.plan();
    let shape = match &scenario.load {
        Load::Closed(c) => match c.max_vus() {
            1 => "closed model, 1 VU".to_string(),
            n => format!("closed model, up to {n} VUs"),
        },
        Load::Open(o) => format!("open model, {:.0} arrivals planned", o.expected_arrivals()),
        Load::Burst(b) => format!("burst of {}", b.count),
    };
    let length = loadlab_scenario::units::format_duration(plan.duration());
    let length = if plan.ends_when_done() {
        format!("at most {length} (ends when its work is done)")
    } else {
        format!("{length} planned")
    };
    println!(
        "{}: ok — {} flow(s), {} request step(s), {}, {length}, {} threshold(s)",
        file.display(),
        scenario.flows.len(),
        requests,
        shape,
        scenario.thresholds.len()
    );
    for flow in &scenario.flows {
        println!(
            "  flow `{}` (weight {}): {}",
            flow.name,
            flow.weight,
            outline(&flow.steps)
        );
    }
    for d in &scenario.data {
        println!(
            "  data `{}`: {} row(s), columns {}, pick {}",
            d.name,
            d.rows.len(),
            d.columns.join(", "),
            d.pick.as_str()
        );
    }
    if let Some(study) = &checked.study {
        let names: Vec<&str> = checked.variants.iter().map(|(n, _)| n.as_str()).collect();
        println!(
            "  study: {} run(s) per variant, {} order, variants: {}",
            study.repeat,
            study.order.as_str(),
            if names.is_empty() {
                "the scenario itself".to_string()
            } else {
                first_names(&names)
            }
        );
    }
    if checked.capacity.is_some() {
        println!("  capacity: section checked");
    }
    Ok(Outcome::Ok)
}

/// The first few names, then how many more: a study of hundreds of variants is one line.
fn first_names(names: &[&str]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!(
        "{} … and {} more ({} in all)",
        names[..SHOWN].join(", "),
        names.len() - SHOWN,
        names.len()
    )
}

/// `signin → once[...] → loop 1000×[tx] → think`, one line per flow.
fn outline(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| match s {
            Step::Request(r) => r.name.clone(),
            Step::Think(t) if t.min == t.max => {
                format!("think {}", loadlab_scenario::units::format_duration(t.min))
            }
            Step::Think(t) => format!(
                "think {}..{}",
                loadlab_scenario::units::format_duration(t.min),
                loadlab_scenario::units::format_duration(t.max)
            ),
            Step::Loop { count, steps } => format!("loop {count}×[{}]", outline(steps)),
            Step::Once(steps) => format!("once[{}]", outline(steps)),
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

pub fn schema() -> Result<Outcome, CliError> {
    print!("{SCENARIO_SCHEMA}");
    Ok(Outcome::Ok)
}
