//! `loadlab runs`: the run store's index (runs, segments, merges, partial runs);
//! `loadlab runs show ID|last`: one stored run, study or capacity search;
//! `loadlab runs studies`: studies and capacity searches, resumable ones marked;
//! `loadlab runs --results URL`: the distributed runs under an object-storage prefix.
//! `loadlab_pipeline::listing` reads them; the text is `loadlab_report::runs_terminal`'s.

use crate::cli::{RunsArgs, RunsCommand};
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::listing::{self, RunsPlace, Shown};
use loadlab_report::runs_terminal;
use loadlab_report::Style;
use std::io::{IsTerminal, Write};

pub fn execute(args: RunsArgs) -> Result<Outcome, CliError> {
    let mut out = std::io::stdout().lock();
    let place = RunsPlace::open(
        args.results.as_deref(),
        args.command.is_some(),
        &mut super::output::warn,
    )?;
    let store = match place {
        RunsPlace::Local(store) => store,
        RunsPlace::Remote(remote) => {
            let (found, newest) = listing::remote_runs(&remote, args.limit)?;
            runs_terminal::print_remote_runs(&mut out, remote.url(), found, &newest);
            let _ = out.flush();
            return Ok(Outcome::Ok);
        }
    };
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    match args.command {
        None => {
            let (runs, total) = listing::runs(&store, args.limit)?;
            runs_terminal::print_runs(&mut out, store.dir(), &runs, total);
        }
        Some(RunsCommand::Show { id }) => print_shown(
            &mut out,
            listing::show(&store, &id, &mut super::output::warn)?,
            style,
        )?,
        Some(RunsCommand::Studies) => {
            let studies = listing::studies(&store, args.limit)?;
            runs_terminal::print_studies(&mut out, store.dir(), &studies);
        }
    }
    let _ = out.flush();
    Ok(Outcome::Ok)
}

/// `loadlab runs show`: where it is stored, then its result (or why that cannot be read).
fn print_shown(out: &mut dyn Write, shown: Shown, style: Style) -> Result<(), CliError> {
    match shown {
        Shown::Capacity {
            record,
            path,
            result,
        } => {
            runs_terminal::print_stored_header(out, &record, &path);
            runs_terminal::print_stored_capacity(out, &*result?);
        }
        Shown::Study {
            record,
            path,
            result,
        } => {
            runs_terminal::print_stored_header(out, &record, &path);
            runs_terminal::print_stored_study(out, &*result?);
        }
        Shown::Run {
            record,
            dir,
            result,
        } => runs_terminal::print_stored_run(out, &record, &dir, &result, style),
    }
    Ok(())
}
