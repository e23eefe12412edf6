//! `loadlab history NAME`: a scenario's runs (or a study's medians) from the store with their
//! change points (`loadlab_pipeline::history`): the table, the `loadlab.history.v1` JSON and
//! the trend report.

use crate::cli::{DetectorArgs, HistoryArgs, SeriesArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::change_points::ChangePointParams;
use loadlab_analysis::history::build_history;
use loadlab_pipeline::history::{
    check_since, chosen_metrics, load_points, load_remote_points, no_points, no_remote_points,
    write_history, write_trend_report, Loaded,
};
use loadlab_store::{Labels, Store};

pub fn execute(history_args: HistoryArgs) -> Result<Outcome, CliError> {
    let params = detector_params(&history_args.detector)?;
    let args = &history_args.series;
    let (store, loaded) = series(args)?;
    let metrics = chosen_metrics(&args.metrics, &loaded.points)?;
    let history = build_history(&args.name, loaded.kind, &loaded.points, &metrics, &params)
        .map_err(|e| CliError::bad_input(format!("history of {}: {e}", args.name)))?;
    drop(store);
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

/// The store (none for object storage) and the points of the series the flags name (exit 2
/// when there are none).
pub fn series(args: &SeriesArgs) -> Result<(Option<Store>, Loaded), CliError> {
    let since = args.since.as_deref().map(check_since).transpose()?;
    let filter: Labels = args.labels.iter().cloned().collect();
    let filtered = !filter.is_empty() || since.is_some();
    let dir = loadlab_store::resolve_dir(args.results.as_deref());
    if let Some(url) = loadlab_pipeline::remote::url_of(&dir)? {
        let remote = loadlab_remote::Remote::open(&url)?;
        let loaded = load_remote_points(&remote, &args.name, &filter, since)?;
        if loaded.points.is_empty() {
            return Err(no_remote_points(&url, &args.name, filtered).into());
        }
        return Ok((None, loaded));
    }
    let store = loadlab_pipeline::store::open(&dir, &mut super::output::warn)?;
    let loaded = load_points(&store, &args.name, &filter, args.runs, since)?;
    if loaded.points.is_empty() {
        return Err(no_points(&store, &args.name, filtered).into());
    }
    Ok((Some(store), loaded))
}

pub fn detector_params(args: &DetectorArgs) -> Result<ChangePointParams, CliError> {
    if !(args.p_value > 0.0 && args.p_value <= 1.0) {
        return Err(CliError::bad_input(format!(
            "--p-value {}: give a probability in (0, 1], e.g. 0.001",
            args.p_value
        )));
    }
    if args.window < 2 {
        return Err(CliError::bad_input(
            "--window: give at least 2 points (Otava's default is 50)",
        ));
    }
    let min_magnitude = match &args.min_magnitude {
        Some(text) => super::output::parse_percent("--min-magnitude", text)?,
        None => 0.0,
    };
    Ok(ChangePointParams {
        max_p_value: args.p_value,
        window: args.window,
        min_magnitude,
    })
}
