//! Comparisons of stored results, benchstat style: `loadlab compare A B` (runs, studies,
//! variants or result files) and `loadlab run --baseline` (one new run against a stored
//! study). Resolving what the user named, pairing variants, the statistics of
//! `loadlab_analysis::compare`, and keeping the comparison in the store.

use crate::PipelineError;
use loadlab_analysis::compare::{
    power_warnings, regressions, CompareOptions, CompareResult, CompareSide, OneRun, COMPARE_SCHEMA,
};
use loadlab_analysis::study::{
    compare_variant_pairs, default_metrics_for, parse_metrics, summarize_variant, RunSample,
    StudyResult, UnknownMetric, VariantStats,
};
use loadlab_metrics::{MetricId, RunResult, Scope};
use loadlab_report::study_terminal::PairSide;
use loadlab_store::{ResultFile, Store, StudyKind};
use std::path::{Path, PathBuf};

/// What one side of a comparison is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideKind {
    Run,
    Study,
    /// The last stable segment of a history (`loadlab gate`).
    History,
}

impl SideKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SideKind::Run => "run",
            SideKind::Study => "study",
            SideKind::History => "history",
        }
    }
}

/// One side of a comparison: the per-run values of one variant (or one run).
#[derive(Debug, Clone)]
pub struct Side {
    pub kind: SideKind,
    pub id: String,
    pub stats: VariantStats,
    /// The study's equivalence band (0 for a run or a study without one): a comparison
    /// against a study reads its verdicts with the band the study set.
    pub equivalence: f64,
    /// The tool that measured a run side (`loadlab 0.1.0`, `vegeta 12.13.0 (imported)`).
    pub made_by: Option<String>,
}

/// The tool that measured a run: loadlab, or the tool an imported run came from.
pub fn made_by(result: &RunResult) -> String {
    match &result.imported {
        Some(source) => format!("{} (imported)", source.tool_words()),
        None => format!("loadlab {}", result.tool_version),
    }
}

impl Side {
    /// This side as the terminal's tables name it
    /// (`loadlab_report::study_terminal::print_pairs`).
    pub fn terminal(&self) -> PairSide<'_> {
        PairSide {
            kind: self.kind.as_str(),
            id: &self.id,
            made_by: self.made_by.as_deref(),
            stats: &self.stats,
        }
    }

    fn of_run(id: &str, label: &str, result: &RunResult) -> Side {
        let samples = [RunSample {
            id: id.to_string(),
            result,
            excluded: false,
        }];
        Side {
            kind: SideKind::Run,
            id: id.to_string(),
            stats: summarize_variant(label, &samples),
            equivalence: 0.0,
            made_by: Some(made_by(result)),
        }
    }
}

fn study_sides(study: &StudyResult, variant: Option<&str>) -> Result<Vec<Side>, PipelineError> {
    let chosen: Vec<&VariantStats> = match variant {
        Some(name) => vec![study
            .variants
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                PipelineError::bad_input(format!(
                    "study {} has no variant `{name}` (it has: {})",
                    study.id,
                    study
                        .variants
                        .iter()
                        .map(|v| v.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?],
        None => study.variants.iter().collect(),
    };
    Ok(chosen
        .into_iter()
        .map(|v| Side {
            kind: SideKind::Study,
            id: study.id.clone(),
            stats: v.clone(),
            equivalence: study.equivalence,
            made_by: None,
        })
        .collect())
}

/// What the user named on one side: a result file (run or study JSON).
fn file_sides(spec: &str, path: &Path) -> Result<Vec<Side>, PipelineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PipelineError::bad_input(format!("cannot read {spec}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| PipelineError::bad_input(format!("{spec}: not JSON: {e}")))?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s.starts_with("loadlab.study.") => {
            study_sides(&crate::reports::read_study(path)?, None)
        }
        Some(s) if s.starts_with("loadlab.run.") => {
            let r: RunResult = serde_json::from_value(value)
                .map_err(|e| PipelineError::bad_input(format!("{spec}: not a loadlab run: {e}")))?;
            Ok(vec![Side::of_run(spec, &r.name.clone(), &r)])
        }
        _ => Err(PipelineError::bad_input(format!(
            "{spec}: neither a run result nor a {}",
            ResultFile::Study.file_name()
        ))),
    }
}

/// Resolves `ID`, `ID:variant`, `last`, or a JSON file to the variants it holds; the store
/// is opened (once) when the spec is not a file.
pub fn resolve(
    spec: &str,
    store: &mut Option<Store>,
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<Vec<Side>, PipelineError> {
    let path = PathBuf::from(spec);
    if path.is_file() {
        return file_sides(spec, &path);
    }
    if store.is_none() {
        *store = Some(crate::store::open_results(results, warn)?);
    }
    let st = store.as_ref().expect("opened");
    let (id, variant) = match spec.split_once(':') {
        Some((i, v)) => (i, Some(v)),
        None => (spec, None),
    };
    if let Ok(rec) = st.study(id) {
        let p = rec.path.ok_or_else(|| {
            PipelineError::bad_input(format!(
                "study {} has no result yet ({})",
                rec.id, rec.status
            ))
        })?;
        if rec.kind != StudyKind::Study {
            return Err(PipelineError::bad_input(format!(
                "{} is a capacity search, not a study",
                rec.id
            )));
        }
        return study_sides(&crate::reports::read_study(&p)?, variant);
    }
    match crate::store::load_run(st, id, warn) {
        Ok((rec, result)) => Ok(vec![Side::of_run(
            &rec.id,
            rec.variant.as_deref().unwrap_or(&result.name),
            &result,
        )]),
        Err(e) => Err(PipelineError::bad_input(format!(
            "`{spec}` is neither a file, a study nor a run: {e}\n  hint: `loadlab runs` lists runs, `loadlab runs studies` lists studies"
        ))),
    }
}

/// Every metric name the runs have, one line per scope:
/// `steps.signin.{requests.rate, requests.total, errors.rate, ...}`.
pub fn valid_metric_names(valid: &[MetricId]) -> String {
    let mut lines: Vec<(Scope, Vec<String>)> = Vec::new();
    for m in valid {
        match lines.last_mut() {
            Some((scope, names)) if *scope == m.scope => names.push(m.quantity.name()),
            _ => lines.push((m.scope.clone(), vec![m.quantity.name()])),
        }
    }
    lines
        .into_iter()
        .map(|(scope, names)| match scope {
            Scope::Run => format!("  {}", names.join(", ")),
            Scope::Group(g) => format!("  groups.{g}.{{{}}}", names.join(", ")),
            Scope::Step(st) => format!("  steps.{st}.{{{}}}", names.join(", ")),
            Scope::Resource(series) => format!("  resources.{series}[.max]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--metric NAME`: exit 2 naming the valid metrics when a name is unknown.
pub fn unknown_metric(flag: &str, e: &UnknownMetric) -> PipelineError {
    PipelineError::bad_input(format!(
        "{flag} {}: unknown metric{}\n  valid metrics (`step.NAME.latency.p99` is read as `steps.NAME.latency_ms.p99`):\n{}",
        e.name,
        e.reason,
        valid_metric_names(&e.valid)
    ))
}

/// The pairs to compare: matching variant names when either side is a multi-variant study,
/// else first × first (`chosen_first` then says which were taken).
pub fn pair_sides<'a>(a: &'a [Side], b: &'a [Side]) -> (Vec<(&'a Side, &'a Side)>, bool) {
    let mut pairs = Vec::new();
    let several = a.len() > 1 || b.len() > 1;
    if several {
        for x in a {
            if let Some(y) = b.iter().find(|y| y.stats.name == x.stats.name) {
                pairs.push((x, y));
            }
        }
    }
    if pairs.is_empty() {
        pairs.push((&a[0], &b[0]));
        return (pairs, several);
    }
    (pairs, false)
}

/// The variants of `sides` that are in no pair (no namesake on the other side).
pub fn unpaired<'a>(sides: &'a [Side], pairs: &[(&Side, &Side)]) -> Vec<&'a str> {
    sides
        .iter()
        .filter(|s| {
            !pairs
                .iter()
                .any(|(a, b)| std::ptr::eq(*a, *s) || std::ptr::eq(*b, *s))
        })
        .map(|s| s.stats.name.as_str())
        .collect()
}

/// The pairs as the terminal's tables name them.
pub fn terminal_pairs<'a>(pairs: &[(&'a Side, &'a Side)]) -> Vec<(PairSide<'a>, PairSide<'a>)> {
    pairs
        .iter()
        .map(|(a, b)| (a.terminal(), b.terminal()))
        .collect()
}

/// The metrics to compare: `--metric` names (checked against what the runs measured) or the
/// default set.
pub fn chosen_metrics(
    names: &[String],
    pairs: &[(&Side, &Side)],
) -> Result<Vec<MetricId>, PipelineError> {
    let sides: Vec<&VariantStats> = pairs
        .iter()
        .flat_map(|(a, b)| [&a.stats, &b.stats])
        .collect();
    if names.is_empty() {
        return Ok(default_metrics_for(&sides));
    }
    parse_metrics(names, &sides).map_err(|e| unknown_metric("--metric", &e))
}

/// Compares the pairs and builds the `loadlab.compare.v1` record; `bound` is the regression
/// gate (`--fail-on-regression`).
pub fn compare_pairs(
    pairs: &[(&Side, &Side)],
    metrics: &[MetricId],
    options: &CompareOptions,
    bound: Option<f64>,
) -> CompareResult {
    let stats: Vec<_> = pairs.iter().map(|(a, b)| (&a.stats, &b.stats)).collect();
    let (samples, comps) = compare_variant_pairs(&stats, metrics, options);
    let mut warnings = power_warnings(&comps, options.alpha);
    let single = pairs
        .iter()
        .any(|(a, b)| a.stats.runs.len() == 1 || b.stats.runs.len() == 1);
    let one_run = if single {
        samples
            .first()
            .and_then(|p| OneRun::of(p, &comps, options.alpha))
    } else {
        None
    };
    for (a, b) in pairs {
        let (na, nb) = (a.stats.runs.len(), b.stats.runs.len());
        let one_side = (na == 1) != (nb == 1) && na.max(nb) >= options.min_runs;
        if (na < options.min_runs || nb < options.min_runs) && !one_side {
            warnings.push(format!(
                "{na}+{nb} runs of `{}` and `{}`: a verdict needs at least {} runs per side (10 recommended), or one run against a study of {}; the changes are shown for information and no gate can fail on them",
                a.stats.name, b.stats.name, options.min_runs, options.min_runs
            ));
        }
    }
    let regressed = bound.map(|b| regressions(&comps, b)).unwrap_or_default();
    let side = |s: &Side| CompareSide {
        kind: s.kind.as_str().into(),
        id: s.id.clone(),
        label: s.stats.name.clone(),
        runs: s.stats.runs.len(),
        made_by: s.made_by.clone(),
    };
    CompareResult {
        schema: COMPARE_SCHEMA.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        baseline: side(pairs[0].0),
        variant: side(pairs[0].1),
        equivalence: options.equivalence,
        alpha: options.alpha,
        min_runs: options.min_runs,
        family_size: loadlab_analysis::compare::family_size(&comps),
        fail_on_regression: bound,
        comparisons: comps,
        regressions: regressed,
        one_run,
        warnings,
    }
}

/// Keeps a comparison in the store (`comparisons/<id>/compare.json`; its report goes beside
/// it). A store that cannot be written is returned as a warning: the comparison was made.
pub fn store_comparison(results: Option<&Path>, result: &CompareResult) -> Result<PathBuf, String> {
    let path = loadlab_store::new_comparison_file(&loadlab_store::resolve_dir(results));
    let text = serde_json::to_string_pretty(result).expect("serializes") + "\n";
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .and_then(|()| loadlab_store::write_atomic(&path, text.as_bytes()))
        .map_err(|e| format!("comparison not stored in {}: {e}", dir.display()))?;
    Ok(path)
}

/// `loadlab run --baseline last|ID`: the study side a new run is compared with (the
/// variant named as the run, else the first) and the run as the other side.
pub fn baseline_for_run(
    result: &RunResult,
    baseline: &str,
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<(Side, Side), PipelineError> {
    let mut store = None;
    let mut sides = resolve(baseline, &mut store, results, warn)?;
    let at = sides
        .iter()
        .position(|s| s.stats.name == result.name)
        .unwrap_or(0);
    let base = sides.swap_remove(at);
    Ok((base, Side::of_run("this run", "this run", result)))
}

/// Checks, before any load is sent, that `--baseline` names a study, run or file that can be
/// compared with: a typo must not cost the run.
pub fn check_baseline(
    baseline: &str,
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<(), PipelineError> {
    let mut store = None;
    resolve(baseline, &mut store, results, warn)
        .map(|_| ())
        .map_err(|e| PipelineError::bad_input(format!("--baseline {baseline}: {e}")))
}

/// A comparison's files for CI: its JSON, JUnit (a case per metric) and Markdown summary.
/// `names` are the baseline's and the candidate's as the user gave them.
pub fn write_comparison_outputs(
    result: &CompareResult,
    (baseline, candidate): (&str, &str),
    outputs: &crate::reports::CiOutputs<'_>,
) -> Result<(), PipelineError> {
    if let Some(path) = outputs.json {
        let text = serde_json::to_string_pretty(result).expect("serializes") + "\n";
        crate::reports::write_json_file(path, &text)?;
    }
    if let Some(path) = outputs.junit {
        let cases = loadlab_report::junit::comparison_cases(result);
        let suite = format!("compare {baseline} {candidate}");
        let xml = loadlab_report::junit::junit_xml(&suite, "loadlab.compare", &cases);
        crate::reports::write_junit(path, &xml)?;
    }
    if let Some(path) = outputs.summary {
        let md = loadlab_report::gate_summary::comparison_markdown(
            &format!("loadlab compare {baseline} {candidate}"),
            &format!("`{candidate}` (candidate) against `{baseline}` (baseline)."),
            result,
        );
        crate::reports::write_summary(Some(path), false, &md)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_paired_by_name_and_the_rest_named() {
        let run = RunResult::default();
        let side = |name: &str| Side::of_run("s", name, &run);
        let a = vec![side("vus=1"), side("vus=2"), side("vus=4")];
        let b = vec![side("vus=1"), side("vus=4"), side("vus=8")];
        let (pairs, took_first) = pair_sides(&a, &b);
        assert!(!took_first);
        let names: Vec<_> = pairs
            .iter()
            .map(|(x, y)| (x.stats.name.as_str(), y.stats.name.as_str()))
            .collect();
        assert_eq!(names, [("vus=1", "vus=1"), ("vus=4", "vus=4")]);
        assert_eq!(unpaired(&a, &pairs), ["vus=2"]);
        assert_eq!(unpaired(&b, &pairs), ["vus=8"]);
    }
}
