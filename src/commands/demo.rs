//! `loadlab demo`: the main job on the built-in target, with nothing to set up
//! (`loadlab_demo`: its targets, its study, its report); this command runs the study as
//! `loadlab study` does and prints what happens.

use super::output::warn;
use crate::cli::DemoArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::live_session::Live;
use loadlab_pipeline::study::PlanOverrides;

pub fn execute(args: DemoArgs) -> Result<Outcome, CliError> {
    let quiet = args.output.quiet;
    let output = crate::cli::OutputArgs {
        allow_saturated: loadlab_demo::ALLOW_SATURATED,
        ..args.output.clone()
    };
    loadlab_demo::run(
        args.output.results.as_deref(),
        |targets| {
            if !quiet {
                println!("{}", targets.intro());
            }
        },
        |file| {
            let (outcome, study_json) = super::study::run_study_file(
                file,
                &output,
                &PlanOverrides::default(),
                None,
                &Live::off(),
            )?;
            let html = loadlab_demo::report(&study_json)
                .map_err(|e| warn(&format!("no report written: {e}")))
                .ok();
            if let (Some(html), false) = (html, quiet) {
                println!("\nOpen the report: {}", html.display());
            }
            Ok(outcome)
        },
    )
}
