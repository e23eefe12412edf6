//! `loadlab validate FILE`: every check of `run`, without sending a request.

use crate::exit::{CliError, Outcome};
use loadlab_scenario::{Load, Scenario};
use std::path::Path;

pub fn execute(file: &Path) -> Result<Outcome, CliError> {
    let scenario = Scenario::from_file(file)?;
    let requests = scenario.request_steps().count();
    let plan = scenario.plan();
    let shape = match &scenario.load {
        Load::Closed(c) => format!("closed model, up to {} VUs", c.max_vus()),
        Load::Open(o) => format!("open model, {:.0} arrivals planned", o.expected_arrivals()),
        Load::Burst(b) => format!("burst of {}", b.count),
    };
    println!(
        "{}: ok — {} flow(s), {} request step(s), {}, {} planned, {} threshold(s)",
        file.display(),
        scenario.flows.len(),
        requests,
        shape,
        loadlab_scenario::units::format_duration(plan.duration()),
        scenario.thresholds.len()
    );
    Ok(Outcome::Ok)
}
