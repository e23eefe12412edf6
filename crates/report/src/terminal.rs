//! The end-of-run summary for a terminal or a CI log: aligned plain text, k6-like, colour
//! optional. This file sets the order of its parts; each `terminal_*` module writes one kind.

use crate::{
    terminal_counts, terminal_grpc, terminal_header, terminal_resources, terminal_stream,
    terminal_tables, terminal_thresholds, terminal_timings, terminal_ws, Style,
};
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// Writes the end-of-run summary of `result` to `out`.
pub fn render_summary(result: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let r = result;
    terminal_header::header(r, out, style)?;
    terminal_header::validity(r, out, style)?;
    terminal_counts::requests(r, out)?;
    writeln!(out)?;
    terminal_timings::latency(r, out, style)?;
    terminal_timings::phases(r, out)?;
    terminal_resources::server_time(r, out)?;
    terminal_resources::slowest(r, out)?;
    writeln!(out)?;
    terminal_counts::statuses_and_errors(r, out, style)?;
    terminal_ws::sessions(r, out)?;
    terminal_grpc::calls(r, out)?;
    terminal_stream::streams(r, out)?;
    terminal_thresholds::checks(r, out, style)?;
    terminal_tables::steps(r, out, style)?;
    terminal_tables::groups(r, out, style)?;
    terminal_thresholds::thresholds(r, out, style)?;
    terminal_tables::stretches(r, out, style)?;
    terminal_tables::segments(r, out, style)?;
    writeln!(out)?;
    terminal_resources::generator(r, out, style)?;
    terminal_resources::resources(r, out, style)?;
    if !r.valid && r.validity_judged() {
        writeln!(
            out,
            "  {}",
            style.bold_red("INVALID RUN (see the reasons at the top)")
        )?;
    }
    Ok(())
}
