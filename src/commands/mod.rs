//! One module per command; `dispatch` routes the parsed command line to it.

mod demo;
mod report;
mod run;
mod study;
mod target;
mod validate;

use crate::cli::{Cli, Command};
use crate::exit::{CliError, Outcome};

pub fn dispatch(cli: Cli) -> Result<Outcome, CliError> {
    match cli.command {
        Command::Run(args) => run::execute(*args),
        Command::Target(args) => target::execute(args),
        Command::Demo(args) => demo::execute(args),
        Command::Validate { file } => validate::execute(&file),
    }
}

#[allow(unused_imports)]
pub use report::write_report_for;
pub use run::{finish_run, RunSettings};
#[allow(unused_imports)]
pub use study::run_study_file;
