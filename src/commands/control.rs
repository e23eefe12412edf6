//! `loadlab control ADDR COMMAND`: steers a run started with --control or --dashboard through
//! its control API (`loadlab_live::control_client`), and says what the run did (or why it
//! refused).

use crate::cli::ControlArgs;
use crate::exit::{CliError, Outcome};
use loadlab_live::control_client::{send, Command};
use loadlab_live::dashboard::parse_addr;

pub fn execute(args: ControlArgs) -> Result<Outcome, CliError> {
    let addr = parse_addr(&args.addr).map_err(|e| CliError::bad_input(format!("ADDR: {e}")))?;
    let command = Command::parse(&args.command, args.value.as_deref(), args.over, &args.addr)
        .map_err(CliError::bad_input)?;
    let reply = send(addr, &command, args.token.as_deref()).map_err(CliError::bad_input)?;
    println!("{reply}");
    Ok(Outcome::Ok)
}
