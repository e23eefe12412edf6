//! The live outputs of one command: the scenario's `outputs:` and the `--out` flags opened
//! once (a study's runs share them), fed to every run through the terminal view's taps, and
//! what each did, for the summary.

use loadlab_live::{open_all, LiveTap, OutputOptions, OutputReport, OutputTap};
use loadlab_scenario::OutputSpec;
use std::sync::Arc;

/// The label of `--label`/`LOADLAB_LABELS` that names every run's `testid`.
pub const TESTID_LABEL: &str = "testid";

/// Every output of a command.
#[derive(Default)]
pub struct LiveOutputs {
    taps: Vec<Arc<OutputTap>>,
}

impl LiveOutputs {
    /// Opens the file's outputs then the flags' (flags add to the file's list); a file that
    /// cannot be created is bad input.
    pub fn open(
        file: &[OutputSpec],
        flags: &[OutputSpec],
        labels: &loadlab_store::Labels,
    ) -> Result<Self, loadlab_live::outputs::OutputError> {
        let specs: Vec<OutputSpec> = file.iter().chain(flags).cloned().collect();
        let options = OutputOptions {
            testid: labels.get(TESTID_LABEL).cloned(),
        };
        Ok(Self {
            taps: open_all(&specs, &options)?,
        })
    }

    /// The taps to give the terminal view.
    pub fn taps(&self) -> Vec<Arc<dyn LiveTap>> {
        self.taps
            .iter()
            .map(|t| t.clone() as Arc<dyn LiveTap>)
            .collect()
    }

    /// What each output did so far (a summary line each: `output json (live.jsonl): …`).
    pub fn reports(&self) -> Vec<OutputReport> {
        self.taps.iter().map(|t| t.report()).collect()
    }
}
