//! The output flags every load command shares, resolved once into the pipeline's settings.

use crate::cli::OutputArgs;
use crate::exit::CliError;
use loadlab_pipeline::session::Settings;

/// `--results`, `--json`, `--quiet`, `--label` (over `LOADLAB_LABELS`), `--out` …
pub fn settings(output: &OutputArgs) -> Result<Settings, CliError> {
    Ok(Settings {
        results: output.results.clone(),
        json: output.json.clone(),
        quiet: output.quiet,
        no_progress: output.no_progress,
        allow_saturated: output.allow_saturated,
        threads: output.threads,
        labels: output.resolved_labels()?,
        outputs: output.outputs.clone(),
    })
}
