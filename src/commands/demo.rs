//! `loadlab demo`: the main job on the built-in target, with nothing to set up — a short
//! study (2 variants × 6 runs, `demo_targets`) against targets started in-process,
//! ending in an HTML and a Markdown report with the targets' resources and their server-side
//! latency.

use super::demo_targets::DemoTargets;
use crate::cli::DemoArgs;
use crate::exit::{CliError, Outcome};
use std::path::Path;

pub fn execute(args: DemoArgs) -> Result<Outcome, CliError> {
    let targets = DemoTargets::start()?;
    let quiet = args.output.quiet;
    if !quiet {
        println!(
            "loadlab demo: two built-in targets, ~2 ms exponential service time — baseline with 4 workers on http://{}, half-workers with 2 on http://{}\n\
             a study: 800 arrivals/s, 2 variants × 6 runs of 3 s, interleaved — about a minute\n",
            targets.baseline.addr, targets.half.addr
        );
    }
    let results = loadlab_store::resolve_dir(args.output.results.as_deref());
    let file = targets.write_scenario(&results)?;
    // A demo shows what it finds: on a busy laptop its runs are kept, and the report says
    // which were contended and by whom, instead of failing the first command a user runs.
    let output = crate::cli::OutputArgs {
        allow_saturated: true,
        ..args.output.clone()
    };
    let outcome = match super::study::run_study_file(
        &file,
        &output,
        &loadlab_pipeline::study::PlanOverrides::default(),
        None,
        &loadlab_pipeline::live_session::Live::off(),
    ) {
        Ok((outcome, study_json)) => {
            let html = loadlab_pipeline::reports::html_beside(&study_json);
            let html = if html.exists() {
                Some(html)
            } else {
                super::output::report_for(&study_json)
            };
            announce(html.as_deref(), quiet);
            Ok(outcome)
        }
        Err(e) => Err(e),
    };
    targets.shutdown();
    outcome
}

fn announce(html: Option<&Path>, quiet: bool) {
    if let (Some(html), false) = (html, quiet) {
        println!("\nOpen the report: {}", html.display());
    }
}
