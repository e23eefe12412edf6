//! The JSON renderer: the run result exactly as serde writes it (the `loadlab.run.v2` schema).

use loadlab_metrics::RunResult;
use std::io::{self, Write};

/// Writes `result` as pretty-printed JSON followed by a newline.
pub fn render_json(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result).map_err(io::Error::from)?;
    writeln!(out)
}
