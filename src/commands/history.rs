//! `loadlab history NAME`: a scenario's runs (or a study's medians) from the store with their
//! change points (`loadlab_pipeline::history`): the table, the `loadlab.history.v1` JSON and
//! the trend report.

use crate::cli::{DetectorArgs, HistoryArgs, SeriesArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::change_points::ChangePointParams;
use loadlab_analysis::history::build_history;
use loadlab_pipeline::history::{
    check_since, chosen_metrics, load_series, write_trend_report, Loaded, SeriesQuery,
};
use loadlab_report::history_terminal::write_history;
use loadlab_store::Store;

pub fn execute(history_args: HistoryArgs) -> Result<Outcome, CliError> {
    let params = detector_params(&history_args.detector)?;
    let args = &history_args.series;
    let (_store, loaded) = series(args)?;
    let metrics = chosen_metrics(&args.metrics, &loaded.points)?;
    let history = build_history(&args.name, loaded.kind, &loaded.points, &metrics, &params)
        .map_err(|e| CliError::bad_input(format!("history of {}: {e}", args.name)))?;
    if let Some(path) = &history_args.json {
        let text = serde_json::to_string_pretty(&history).expect("history serializes") + "\n";
        loadlab_pipeline::reports::write_json_file(path, &text)?;
    }
    let mut out = std::io::stdout().lock();
    write_history(&mut out, &history, &loaded.points, loaded.skipped);
    if let Some(html) = &history_args.report {
        write_trend_report(html, &history)?;
        super::output::print_report_paths(&mut out, html);
    }
    Ok(Outcome::Ok)
}

/// The store (none for object storage) and the points of the series the flags name.
pub fn series(args: &SeriesArgs) -> Result<(Option<Store>, Loaded), CliError> {
    let query = SeriesQuery {
        name: &args.name,
        labels: args.labels.iter().cloned().collect(),
        since: args.since.as_deref().map(check_since).transpose()?,
        runs_only: args.runs,
    };
    Ok(load_series(
        args.store.results.as_deref(),
        &query,
        &mut super::output::warn,
    )?)
}

pub fn detector_params(args: &DetectorArgs) -> Result<ChangePointParams, CliError> {
    Ok(loadlab_pipeline::history::detector_params(
        args.p_value,
        args.window,
        args.min_magnitude,
    )?)
}
