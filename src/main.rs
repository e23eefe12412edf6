//! The `loadlab` command line: parses flags, resolves them into a scenario, runs commands,
//! and maps every outcome to the documented exit codes (0 ok, 1 thresholds failed,
//! 2 bad input, 3 aborted or invalid run).

mod commands;
mod exit;

use clap::Parser;
use exit::Outcome;
use loadlab_cli as cli;

fn main() {
    loadlab_pipeline::signals::prepare_process();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::BAD_INPUT
            } else {
                exit::OK
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match commands::dispatch(cli) {
        Ok(Outcome::Ok) => exit::OK,
        Ok(Outcome::ThresholdsFailed) => exit::FAILED,
        Ok(Outcome::Invalid) => exit::ABORTED,
        Err(e) => {
            eprintln!("error: {}", e.message);
            e.code
        }
    };
    std::process::exit(code);
}
