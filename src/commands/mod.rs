//! One module per command; `dispatch` routes the parsed command line to it.

mod capacity;
mod compare;
mod control;
mod demo;
mod gate;
mod history;
mod import;
mod import_results;
mod k8s;
mod live;
mod merge;
mod output;
mod report;
mod run;
mod runs;
mod session;
mod study;
mod target;
mod validate;

use crate::cli::{Cli, Command};
use crate::exit::{CliError, Outcome};

pub fn dispatch(cli: Cli) -> Result<Outcome, CliError> {
    match cli.command {
        Command::Run(args) => run::execute(*args),
        Command::Control(args) => control::execute(args),
        Command::Target(args) => target::execute(args),
        Command::Demo(args) => demo::execute(args),
        Command::Validate { file } => validate::execute(&file),
        Command::Schema => validate::schema(),
        Command::Import(args) => import::execute(args),
        Command::Study(args) => study::execute(args),
        Command::Compare(args) => compare::execute(args),
        Command::Capacity(args) => capacity::execute(args),
        Command::Runs(args) => runs::execute(args),
        Command::Report(args) => report::execute(args),
        Command::Merge(args) => merge::execute(args),
        Command::K8s(args) => k8s::execute(*args),
        Command::History(args) => history::execute(args),
        Command::Gate(args) => gate::execute(args),
        Command::ImportResults(args) => import_results::execute(args),
    }
}
