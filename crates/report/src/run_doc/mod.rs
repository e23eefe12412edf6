//! A single run → [`ReportDoc`]: the planned load it was asked for, and the report assembled
//! from its verdicts and sections (one file each); the charts and tables are shared with the
//! reports of studies and the terminal summary.

mod charts;
mod environment;
mod method;
mod phases;
mod protocols;
mod resources;
mod results;
mod segments;
mod streaming;
mod stretches;
mod summary;
mod verdicts;

pub use charts::{
    active_over_time, distribution_chart, latency_over_time, percentile_curve, throughput_over_time,
};
pub(crate) use charts::{
    active_points, failed_rate_points, latency_points, ok_rate_points, planned_series, run_end_s,
    warmup_band, window_words,
};
pub use method::{measurement_methods, plan_chart, run_measurement_methods};
pub(crate) use resources::CLIENT_SERVER_COLUMNS;
pub use resources::{bottleneck_verdicts, resource_charts};
pub use results::errors_table;
pub use verdicts::{caveats, run_verdicts};

use charts::charts;
use environment::environment;
use method::method;
use results::{errors, results, thresholds};
use summary::summary;

use crate::doc::{DocKind, ReportDoc};
use loadlab_metrics::result::RunResult;

/// The planned load over time, as the run executed it (kept in its record and result).
pub use loadlab_metrics::result::PlannedLoad;

/// Builds the report of one run. `plan` adds the planned-load chart to the method section.
pub fn run_report(r: &RunResult, plan: Option<&PlannedLoad>) -> ReportDoc {
    let mut sections = vec![summary(r), method(r, plan), environment(r), results(r)];
    sections.extend(protocols::protocols(r));
    sections.extend(streaming::streaming(r));
    sections.extend(stretches::stretches(r));
    sections.extend(segments::segments(r));
    sections.push(charts(r, plan));
    if let Some(res) = resources::resources_section(r) {
        sections.push(res);
    }
    if !r.errors.is_empty() {
        sections.push(errors(r));
    }
    if !r.thresholds.is_empty() {
        sections.push(thresholds(r));
    }
    ReportDoc {
        kind: DocKind::Run,
        title: format!("{}: load test report", r.name),
        subtitle: format!(
            "single run · started {} · {} · loadlab {}",
            r.started_at,
            r.target.as_deref().unwrap_or("no target recorded"),
            r.tool_version
        ),
        verdicts: run_verdicts(r),
        sections,
        tool_version: r.tool_version.clone(),
    }
}
