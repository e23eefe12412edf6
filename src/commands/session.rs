//! What every command that generates load sets up the same way before its first run: the
//! cancel flag the signals raise, the live outputs the scenario file and `--output` name, and
//! the terminal view that shows progress and feeds the live taps. `run`, a remote segment,
//! `study` and `capacity` open one each, so none of them wires these by hand.

use crate::cli::OutputArgs;
use crate::exit::CliError;
use loadlab_engine::Cancel;
use loadlab_live::LiveTap;
use loadlab_pipeline::live_outputs::LiveOutputs;
use loadlab_pipeline::terminal_view::TerminalView;
use loadlab_scenario::OutputSpec;
use std::sync::Arc;

/// One command's runs: cancelled by the first SIGINT/SIGTERM/SIGHUP, reported to `outputs`
/// and to the terminal through `view`.
pub struct Session {
    pub cancel: Cancel,
    pub outputs: LiveOutputs,
    pub view: TerminalView,
}

impl Session {
    /// Opens the outputs of `file_outputs` and `--output` (bad input if one cannot be), and a
    /// view feeding them and `taps` (the dashboard's, a control's); `progress_bar: false`
    /// where a command prints a line per run instead.
    pub fn open(
        output: &OutputArgs,
        file_outputs: &[OutputSpec],
        mut taps: Vec<Arc<dyn LiveTap>>,
        progress_bar: bool,
    ) -> Result<Self, CliError> {
        let cancel = Cancel::new();
        crate::signals::watch(cancel.clone());
        let outputs = open_outputs(output, file_outputs)?;
        taps.extend(outputs.taps());
        let no_progress = output.no_progress || !progress_bar;
        let view = TerminalView::new(output.quiet, no_progress).with_taps(taps);
        Ok(Self {
            cancel,
            outputs,
            view,
        })
    }
}

/// The live outputs: the scenario's `outputs:` (`file`), then the `--out` flags, labelled
/// with `LOADLAB_LABELS` and the `--label` flags.
pub fn open_outputs(output: &OutputArgs, file: &[OutputSpec]) -> Result<LiveOutputs, CliError> {
    let labels = output.resolved_labels()?;
    LiveOutputs::open(file, &output.outputs, &labels).map_err(CliError::bad_input)
}
