//! The per-variant results section of a study: the run-wide metric table, per group and per
//! step tables (seed 000's per-domain and seed 002's per-operation tables), and the runs.

use super::metrics::{
    fmt, main_metrics, metric_note, metric_row, thin, thin_mark, too_few_for_ci, METRIC_COLUMNS,
    THIN_NOTE,
};
use super::{variant_runs, Runs};
use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::{format_ms, format_rate, format_secs};
use crate::words::error_share;
use loadlab_analysis::study::{StudyResult, VariantStats};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, Scope};

/// Quantities of a group or step, in table order.
fn scope_quantities() -> Vec<Quantity> {
    let mut q = vec![Quantity::Requests, Quantity::ErrorRate, Quantity::Errors];
    q.extend(LatencyStat::tabulated().map(Quantity::Latency));
    q
}

/// The one step of group `g`, if it holds exactly one.
fn only_step<'r>(runs: &[&'r loadlab_metrics::RunResult], g: &str) -> Option<&'r str> {
    let r = runs.first()?;
    let mut steps = r.steps.iter().filter(|s| s.group.as_deref() == Some(g));
    match (steps.next(), steps.next()) {
        (Some(s), None) => Some(s.name.as_str()),
        _ => None,
    }
}

/// The groups, then the steps, of a variant. A group of one step is that step: the step's
/// row and table would repeat the group's, so the group stands for both (its name is the
/// one thresholds and the seed's domains use) and says which step it is.
fn scopes(v: &VariantStats, runs: &[&loadlab_metrics::RunResult]) -> Vec<Scope> {
    let alone_in_its_group = |step: &str| {
        runs.first().is_some_and(|r| {
            r.steps
                .iter()
                .find(|s| s.name == step)
                .and_then(|s| s.group.as_deref())
                .is_some_and(|g| only_step(runs, g).is_some())
        })
    };
    let mut out: Vec<Scope> = v
        .metrics
        .keys()
        .filter(|m| match &m.scope {
            Scope::Group(_) => true,
            Scope::Step(s) => !alone_in_its_group(s),
            Scope::Run | Scope::Resource(_) => false,
        })
        .map(|m| m.scope.clone())
        .collect();
    out.dedup();
    out
}

/// `group `auth``, `group `auth` (step `signin`)` for a group of one step, `step `x``.
fn scope_label(scope: &Scope, runs: &[&loadlab_metrics::RunResult]) -> String {
    match scope {
        Scope::Group(g) => match only_step(runs, g) {
            Some(step) => format!("group `{g}` (step `{step}`)"),
            None => format!("group `{g}`"),
        },
        Scope::Step(s) => format!("step `{s}`"),
        Scope::Run | Scope::Resource(_) => "run".into(),
    }
}

/// One row per group and step: the median across runs of each per-run figure.
fn scope_overview(
    v: &VariantStats,
    scopes: &[Scope],
    runs: &[&loadlab_metrics::RunResult],
) -> Table {
    let mut cols = vec!["group / step"];
    let labels: Vec<String> = scope_quantities()
        .iter()
        .map(|q| match q {
            Quantity::Latency(stat) => format!(">{}", stat.label()),
            other => format!(">{}", other.label()),
        })
        .collect();
    cols.extend(labels.iter().map(|s| s.as_str()));
    let mut t = Table::new(&cols);
    let mut any_thin = false;
    for scope in scopes {
        let mut row: Vec<Cell> = vec![scope_label(scope, runs).into()];
        for q in scope_quantities() {
            let id = MetricId {
                scope: scope.clone(),
                quantity: q,
            };
            any_thin |= thin(v, &id);
            row.push(
                v.metrics
                    .get(&id)
                    .map(|m| fmt(&id, m.median) + thin_mark(v, &id))
                    .unwrap_or_default()
                    .into(),
            );
        }
        t.row(row);
    }
    t.with_note(with_thin_note(
        "Median across runs of each run's figure (a run's p95 is its own percentile; percentiles are not averaged).".to_string(),
        any_thin,
    ))
}

/// A table's note, with what `†` means when the table holds one.
fn with_thin_note(mut note: String, any_thin: bool) -> String {
    if any_thin {
        note.push(' ');
        note.push_str(THIN_NOTE);
    }
    note
}

pub(super) fn study_results(s: &StudyResult, runs: &Runs) -> Section {
    let mut sec = Section::new("results", "Results per variant");
    for v in &s.variants {
        sec.push(Block::Heading(format!(
            "`{}`{}",
            v.name,
            if v.unstable { " (unstable)" } else { "" }
        )));
        let rs = variant_runs(v, runs);
        let mut t = Table::new(&METRIC_COLUMNS);
        let mut short = false;
        let mut any_thin = false;
        for m in main_metrics().into_iter().chain(compensated_metrics(&rs)) {
            if let Some(st) = v.metrics.get(&m) {
                short |= too_few_for_ci(st);
                any_thin |= thin(v, &m);
                t.row(metric_row(&m, st, thin(v, &m)));
            }
        }
        let mut note = with_thin_note(metric_note(short), any_thin);
        if let Some(finding) = compensation_finding(&rs) {
            note.push(' ');
            note.push_str(&finding);
        }
        sec.push(Block::Table(t.with_note(note)));
        let scopes = scopes(v, &rs);
        if !scopes.is_empty() {
            sec.push(Block::Table(scope_overview(v, &scopes, &rs)));
            for scope in &scopes {
                let mut t = Table::new(&METRIC_COLUMNS);
                for q in scope_quantities() {
                    let id = MetricId {
                        scope: scope.clone(),
                        quantity: q,
                    };
                    if let Some(st) = v.metrics.get(&id) {
                        t.row(metric_row(&id, st, thin(v, &id)));
                    }
                }
                let any_thin = scope_quantities().into_iter().any(|q| {
                    thin(
                        v,
                        &MetricId {
                            scope: scope.clone(),
                            quantity: q,
                        },
                    )
                });
                sec.push(Block::Table(if any_thin {
                    t.with_note(THIN_NOTE)
                } else {
                    t
                }));
            }
        }
        if !rs.is_empty() {
            sec.push(Block::Table(runs_table(v, &rs)));
        }
    }
    sec
}

/// A closed model's compensated p95 and p99, beside the raw ones, when its runs were
/// compensated (an open model's latency needs no compensation: it is not repeated).
fn compensated_metrics(rs: &[&loadlab_metrics::RunResult]) -> Vec<MetricId> {
    if rs.iter().any(|r| r.compensation.is_some()) {
        [LatencyStat::P95, LatencyStat::P99]
            .map(|s| MetricId::run(Quantity::CompensatedLatency(s)))
            .to_vec()
    } else {
        Vec::new()
    }
}

/// The size of the compensation across a variant's runs, as a finding: the median over its
/// compensated runs of the correction of the percentile it moved the most.
fn compensation_finding(rs: &[&loadlab_metrics::RunResult]) -> Option<String> {
    let mut ratios: Vec<(f64, &str)> = rs
        .iter()
        .filter_map(|r| r.compensation.as_ref())
        .map(|c| (c.ratio, c.most_at.as_str()))
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = ratios.len();
    let (mut ratio, at) = ratios[n / 2];
    if n.is_multiple_of(2) && ratios[n / 2 - 1].1 == at {
        ratio = (ratio + ratios[n / 2 - 1].0) / 2.0;
    }
    let of = if ratios.len() == 1 {
        "its run".to_string()
    } else {
        format!("the median of its {} runs", ratios.len())
    };
    Some(if ratio > 1.05 {
        format!("Closed model, compensated for coordinated omission: under this load, users arriving on schedule would have seen a {at} {ratio:.1}× the measured one ({of}).")
    } else {
        format!("Closed model, compensated for coordinated omission: no response outlasted the virtual users' schedule enough to change a percentile ({of}).")
    })
}

/// The runs of a variant in run order; a run that is an outlier on a metric says so.
fn runs_table(v: &VariantStats, rs: &[&loadlab_metrics::RunResult]) -> Table {
    let mut t = Table::new(&[
        ">run",
        "started",
        ">duration",
        ">iterations",
        ">requests",
        ">throughput",
        ">failed",
        ">p50",
        ">p95",
        ">p99",
        "valid",
        "thresholds",
        "outlier on",
    ]);
    for (i, r) in rs.iter().enumerate() {
        let passed = r.thresholds.iter().filter(|t| t.ok).count();
        let id = v.runs.get(i).map(String::as_str);
        let outlier_on: Vec<String> = main_metrics()
            .iter()
            .filter(|m| {
                v.metrics.get(m).is_some_and(|s| {
                    s.outliers
                        .iter()
                        .any(|o| o.run.as_deref() == id && id.is_some())
                })
            })
            .map(|m| m.label())
            .collect();
        t.row(vec![
            (i + 1).to_string().into(),
            r.started_at.clone().into(),
            format_secs(r.duration_s).into(),
            r.iterations.completed.to_string().into(),
            r.requests.total.to_string().into(),
            format_rate(r.requests.rate).into(),
            error_share(r.requests.failed, r.requests.total).into(),
            format_ms(r.latency_ms.p50).into(),
            format_ms(r.latency_ms.p95).into(),
            format_ms(r.latency_ms.p99).into(),
            if r.imported.is_some() {
                Cell::level("not judged (imported)", Level::Warn)
            } else if r.valid {
                Cell::level("yes", Level::Pass)
            } else {
                Cell::level("no", Level::Fail)
            },
            if r.thresholds.is_empty() {
                "".into()
            } else {
                Cell::level(
                    format!("{passed}/{}", r.thresholds.len()),
                    if passed == r.thresholds.len() {
                        Level::Pass
                    } else {
                        Level::Fail
                    },
                )
            },
            if outlier_on.is_empty() {
                "".into()
            } else {
                Cell::level(outlier_on.join(", "), Level::Warn)
            },
        ]);
    }
    t.with_note("Duration: the measured time after the warm-up (a run that ends when its work is done — iterations, a burst — took this long: seed 002's \"total execution time\"). Outlier on: the metrics on which the run lies outside Tukey's fences of its variant (kept in the statistics).")
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::{Compensation, RunResult, ScheduleSource};

    fn run(ratio: Option<(f64, &str)>) -> RunResult {
        RunResult {
            compensation: ratio.map(|(ratio, at)| Compensation {
                interval_ms: 100.0,
                source: ScheduleSource::Pace,
                inferred_from: None,
                most_at: at.to_string(),
                ratio,
                multi_step: false,
            }),
            ..RunResult::default()
        }
    }

    /// The finding gives the median correction of a variant's compensated runs.
    #[test]
    fn the_compensation_finding_is_the_median_over_the_runs() {
        let finding = |rs: &[RunResult]| compensation_finding(&rs.iter().collect::<Vec<_>>());
        assert_eq!(finding(&[run(None), run(None)]), None);
        let odd = finding(&[
            run(Some((1.0, "p99"))),
            run(Some((4.2, "p99"))),
            run(Some((3.0, "p99"))),
        ])
        .unwrap();
        assert!(
            odd.contains("a p99 3.0× the measured one (the median of its 3 runs)"),
            "{odd}"
        );
        let even = finding(&[run(Some((2.0, "p95"))), run(Some((4.0, "p95")))]).unwrap();
        assert!(even.contains("a p95 3.0×"), "{even}");
        let none = finding(&[run(Some((1.0, "p50")))]).unwrap();
        assert!(
            none.contains("no response outlasted") && none.contains("(its run)"),
            "{none}"
        );
        // Compensated p95 and p99 rows only for compensated (closed-model) runs.
        assert!(compensated_metrics(&[&run(None)]).is_empty());
        assert_eq!(compensated_metrics(&[&run(Some((2.0, "p99")))]).len(), 2);
    }
}
