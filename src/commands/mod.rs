//! One module per command; `dispatch` routes the parsed command line to it.

mod demo;
mod run;
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

pub use run::{finish_run, RunSettings};
