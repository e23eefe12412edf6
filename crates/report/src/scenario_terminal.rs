//! What `loadlab validate` says of a checked scenario file: its flows, data, load, length,
//! thresholds, study and capacity sections, in a few lines.

use loadlab_scenario::study::CheckedFile;
use loadlab_scenario::{Load, Step};
use std::io::Write;

/// The file's outline after every check passed.
pub fn describe(file: &std::path::Path, checked: &CheckedFile, out: &mut dyn Write) {
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
    let _ = writeln!(
        out,
        "{}: ok — {} flow(s), {} request step(s), {}, {length}, {} threshold(s)",
        file.display(),
        scenario.flows.len(),
        requests,
        shape,
        scenario.thresholds.len()
    );
    for flow in &scenario.flows {
        let _ = writeln!(
            out,
            "  flow `{}` (weight {}): {}",
            flow.name,
            flow.weight,
            outline(&flow.steps)
        );
    }
    for d in &scenario.data {
        let _ = writeln!(
            out,
            "  data `{}`: {} row(s), columns {}, pick {}",
            d.name,
            d.rows.len(),
            d.columns.join(", "),
            d.pick.as_str()
        );
    }
    if let Some(study) = &checked.study {
        let names: Vec<&str> = checked.variants.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(
            out,
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
        let _ = writeln!(out, "  capacity: section checked");
    }
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
            Step::Ws(w) => w.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(" → ")
}
