//! What every command that generates load sets up the same way before its first run: the
//! cancel flag the signals raise, the live outputs the scenario file and `--out` name, and the
//! terminal view that shows progress and feeds the live taps. `run`, a remote segment, `study`
//! and `capacity` open one each, so none of them wires these by hand.

use crate::live_outputs::LiveOutputs;
use crate::live_session::Live;
use crate::terminal_view::TerminalView;
use crate::PipelineError;
use loadlab_engine::Cancel;
use loadlab_live::LiveTap;
use loadlab_scenario::OutputSpec;
use loadlab_store::Labels;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a command keeps and shows its runs: the output flags every load command shares,
/// resolved once (labels read from `LOADLAB_LABELS` and `--label`).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `--results`: the run store directory, or a URL for `run`.
    pub results: Option<PathBuf>,
    /// `--json`: the result also written here.
    pub json: Option<PathBuf>,
    /// `--quiet`: nothing printed but errors.
    pub quiet: bool,
    /// `--no-progress`: no live progress line.
    pub no_progress: bool,
    /// `--allow-saturated`: the generator's own limits make no run invalid.
    pub allow_saturated: bool,
    /// `--threads`.
    pub threads: Option<usize>,
    /// The labels stored with every run.
    pub labels: Labels,
    /// `--out`: live outputs beside the scenario file's.
    pub outputs: Vec<OutputSpec>,
}

/// One command's runs: cancelled by the first SIGINT/SIGTERM/SIGHUP, reported to `outputs`
/// and to the terminal through `view`.
pub struct Session {
    pub cancel: Cancel,
    pub outputs: LiveOutputs,
    pub view: TerminalView,
}

impl Session {
    /// Opens the outputs of `file_outputs` and `--out` (bad input if one cannot be), and a
    /// view feeding them and `taps` (the dashboard's, a control's); `progress_bar: false`
    /// where a command prints a line per run instead.
    pub fn open(
        settings: &Settings,
        file_outputs: &[OutputSpec],
        mut taps: Vec<Arc<dyn LiveTap>>,
        progress_bar: bool,
    ) -> Result<Self, PipelineError> {
        let cancel = Cancel::new();
        crate::signals::watch(cancel.clone());
        let outputs = LiveOutputs::open(file_outputs, &settings.outputs, &settings.labels)
            .map_err(PipelineError::bad_input)?;
        taps.extend(outputs.taps());
        let no_progress = settings.no_progress || !progress_bar;
        let view = TerminalView::new(settings.quiet, no_progress).with_taps(taps);
        Ok(Self {
            cancel,
            outputs,
            view,
        })
    }
}

/// A study or capacity search that ran (or stopped): how it ended (`End`), the outputs it fed,
/// and its report.
pub struct Done<End> {
    pub end: End,
    pub outputs: LiveOutputs,
    /// The HTML report written beside the result file, when it could be.
    pub report: Option<PathBuf>,
}

impl<End> Done<End> {
    /// Writes the report beside `file` unless the work `failed` (what it saved stays as it
    /// is), and tells the dashboard where it is; `warn` hears of a report not written.
    pub fn reported(
        end: End,
        outputs: LiveOutputs,
        (file, failed): (&Path, bool),
        live: &Live,
        warn: &mut dyn FnMut(&str),
    ) -> Self {
        let report = if failed {
            None
        } else {
            crate::reports::report_beside(file, warn)
        };
        if let Some(r) = &report {
            live.report_written(r);
        }
        Self {
            end,
            outputs,
            report,
        }
    }
}
