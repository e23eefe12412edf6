//! `loadlab runs`: the run store's index (runs, segments, merges, partial runs);
//! `loadlab runs show ID|last`: one stored run, study or capacity search;
//! `loadlab runs studies`: studies and capacity searches, resumable ones marked;
//! `loadlab runs --results URL`: the distributed runs under an object-storage prefix.
//! The text is `loadlab_pipeline::listing`'s.

use crate::cli::{RunsArgs, RunsCommand};
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::listing;
use loadlab_report::Style;
use std::io::{IsTerminal, Write};

pub fn execute(args: RunsArgs) -> Result<Outcome, CliError> {
    let dir = loadlab_store::resolve_dir(args.results.as_deref());
    let mut out = std::io::stdout().lock();
    if let Some(url) = loadlab_pipeline::remote::url_of(&dir)? {
        if args.command.is_some() {
            return Err(CliError::bad_input(
                "`runs show` and `runs studies` read the local run store: merge a distributed run first (`loadlab merge URL`), then show it by its id",
            ));
        }
        let remote = loadlab_remote::Remote::open(&url)?;
        listing::list_remote_runs(&remote, args.limit, &mut out)?;
        let _ = out.flush();
        return Ok(Outcome::Ok);
    }
    let store = loadlab_pipeline::store::open(&dir, &mut super::output::warn)?;
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    match args.command {
        None => listing::list_runs(&store, args.limit, &mut out)?,
        Some(RunsCommand::Show { id }) => listing::show(&store, &id, style, &mut out)?,
        Some(RunsCommand::Studies) => listing::list_studies(&store, args.limit, &mut out)?,
    }
    let _ = out.flush();
    Ok(Outcome::Ok)
}
