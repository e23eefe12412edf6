//! `loadlab merge DIR|ID...|URL`: the segments of one plan (`run --segment i/N`, from several
//! processes or machines) become one run (`loadlab_pipeline::merge`, and `::remote` for a
//! distributed run in object storage), stored and reported like any run, with a per-segment
//! table.

use super::output::{print_errors, print_run, say_unless, warn};
use crate::cli::MergeArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::merge_command::{merge_command, MergeRequest};
use loadlab_pipeline::outcome_of;

pub fn execute(args: MergeArgs) -> Result<Outcome, CliError> {
    let request = MergeRequest {
        inputs: &args.inputs,
        results: args.results.as_deref(),
        wait: args.wait,
        json: args.json.as_deref(),
    };
    let done = merge_command(&request, &mut say_unless(args.quiet), &mut warn)?;
    let merged = &done.merged;
    let mut errors = merged.errors.clone();
    if !args.quiet {
        let line = merged.stored.as_ref().map(|p| {
            let (segments, id) = (done.segments, &merged.id);
            format!("merged {segments} segment(s) as run {id} ({})", p.display())
        });
        match print_run(&merged.result, line) {
            Ok(super::output::Printed::ReaderGone) => {}
            Ok(super::output::Printed::Whole) => {
                if let Some(published) = &done.published {
                    println!("merged run stored in {published}");
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if print_errors(&errors) {
        return Ok(Outcome::Invalid);
    }
    Ok(outcome_of(&merged.result, args.allow_saturated))
}
