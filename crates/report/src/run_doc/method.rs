//! The method section of a run: its plan, the planned-load chart and how latency is measured.

use super::PlannedLoad;
use crate::chart::{Axis, Band, Chart, Series, SeriesKind, Unit};
use crate::doc::{Block, Section};
use crate::format::format_secs;
use crate::words::*;
use loadlab_metrics::result::RunResult;

/// What a report says about measurement method, shared by run and study reports.
pub fn measurement_methods(model: loadlab_metrics::LoadModel) -> Vec<String> {
    let mut m = vec![
        "Latency is recorded into HDR histograms (1 µs – 1 h, 3 significant digits), one per worker thread, merged exactly; percentiles come from the merged histogram, never from averaged percentiles.".to_string(),
        "Requests completed during the warm-up are recorded but excluded from every statistic and threshold.".to_string(),
    ];
    if model == loadlab_metrics::LoadModel::Open {
        m.push("Open model: latency is measured from each request's *intended* send time (no coordinated omission); the service time is measured from the actual send, and the difference (send lag) is reported separately.".to_string());
    } else {
        m.push(
            "Closed model: latency is measured from the actual send of each request. Beside it, the latency compensated for coordinated omission: each latency longer than a VU's schedule (`load.pace`, or the median of the first iterations) also stands for the sends that schedule would have made while the VU waited (HdrHistogram's `recordValueWithExpectedInterval`, as wrk2 corrects).".to_string(),
        );
    }
    m.push("Generator health: what the generator went through is measured every interval — its workers' CPU time, a pause probe on their own threads (closed model), how late arrivals were sent (open model) and how long the workers waited for a CPU. A run is invalid when the generator's own delay is more than 10% of the latency at p50, p95 or p99 and at least 0.5 ms (1.5 ms for the probe), or its workers used 90% of their cores; a busy host alone never invalidates a run (docs/results.md, \"Is the measurement valid?\").".to_string());
    m
}

/// [`measurement_methods`] of a run; for one imported from another tool, what loadlab did
/// with its file instead (its generator's health was not measured).
pub fn run_measurement_methods(r: &RunResult) -> Vec<String> {
    let Some(tool) = imported_tool(r) else {
        return measurement_methods(r.load.model);
    };
    vec![
        format!("Latency: each request's duration as {tool} wrote it in its results file, recorded into one HDR histogram (1 µs – 1 h, 3 significant digits) per interval, so that percentiles come from every request, never from averaged percentiles (docs/import-results.md, \"Exactness\")."),
        format!("How {tool} timed its requests (from the send, or from an intended time) is its own; a closed-model tool's latency is not compensated for coordinated omission here."),
        format!("Generator health: not measured. {tool}'s CPU use and timing are not in the file, so whether its generator kept up cannot be told, and the run's validity is not judged."),
    ]
}

pub(super) fn method(r: &RunResult, plan: Option<&PlannedLoad>) -> Section {
    let mut s = Section::new("method", "Method");
    let mut facts = vec![(
        "Scenario".to_string(),
        scenario_words(&r.name, r.scenario_file.as_deref()),
    )];
    facts.push(("Load".to_string(), run_load_words(r)));
    facts.push((
        if r.imported.is_some() {
            "Measured duration"
        } else {
            "Planned duration"
        }
        .to_string(),
        format_secs(r.load.planned_duration_s),
    ));
    facts.push((
        "Warm-up".to_string(),
        if r.warmup_s > 0.0 {
            format!(
                "{} (excluded; {} requests)",
                format_secs(r.warmup_s),
                r.requests.warmup
            )
        } else {
            "none".to_string()
        },
    ));
    facts.push((
        "Repetitions".to_string(),
        "1 run (no run-to-run variation can be estimated; a study repeats runs)".to_string(),
    ));
    facts.push(("Started".to_string(), r.started_at.clone()));
    facts.push((
        "Tool".to_string(),
        match imported_tool(r) {
            Some(tool) => format!("{tool} (imported by loadlab {})", r.tool_version),
            None => format!("loadlab {}", r.tool_version),
        },
    ));
    s.push(Block::Facts(facts));
    // Another tool's plan is not in its results file: no planned load to draw.
    if let Some(p) = plan.filter(|_| r.imported.is_none()) {
        let mut c = plan_chart(p, r.warmup_s);
        // On the time axis of the run's other charts.
        c.x = Axis::time(super::charts::run_end_s(r));
        if let Some(d) = r.load.driven.as_ref().filter(|d| d.vus == p.vus) {
            c.title = "Planned and driven load".to_string();
            c.description
                .push_str(" Solid: the load as it was steered while the run went.");
            c = c.series(super::charts::driven_series(d));
        }
        s.push(Block::chart(c));
    }
    s.push(Block::Heading("Measurement".to_string()));
    s.push(Block::List(run_measurement_methods(r)));
    s
}

/// The small chart of the planned load.
pub fn plan_chart(p: &PlannedLoad, warmup_s: f64) -> Chart {
    let (label, unit, what) = if p.vus {
        ("virtual users", Unit::Count, "virtual users")
    } else {
        ("arrivals/s", Unit::PerSecond, "arrival rate")
    };
    let mut c = Chart::new(
        "planned-load",
        "Planned load",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear(label, unit),
    )
    .describe(format!(
        "The {what} the scenario asks for over time; the shaded part is the warm-up."
    ))
    .series(Series::new(
        if p.vus {
            "planned VUs"
        } else {
            "planned arrivals/s"
        },
        SeriesKind::Line,
        0,
        p.points.clone(),
    ))
    .height(200);
    if warmup_s > 0.0 {
        c.bands.push(Band {
            from: 0.0,
            to: warmup_s,
            label: "warm-up".to_string(),
        });
    }
    c
}
