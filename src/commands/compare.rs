//! `loadlab compare A B`: runs or studies against each other, benchstat style, and
//! `loadlab run --baseline` (one new run against a stored study).

use crate::cli::CompareArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::compare::{
    power_warnings, regressions, CompareOptions, CompareResult, CompareSide, OneRun, ALPHA,
    COMPARE_SCHEMA, MIN_RUNS_FOR_COMPARISON,
};
use loadlab_analysis::study::{
    compare_variant_pairs, default_compare_metrics, parse_metrics, summarize_variant, RunSample,
    StudyResult, UnknownMetric, VariantStats,
};
use loadlab_metrics::{MetricId, RunResult, Scope};
use loadlab_report::study_terminal::{print_comparisons, print_gate, print_legend};
use loadlab_report::verdict_words::format_value;
use loadlab_store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `5%` or `0.05` → 0.05.
pub fn parse_percent(flag: &str, text: &str) -> Result<f64, CliError> {
    loadlab_scenario::study::parse_fraction(&serde_yaml_ng::Value::String(text.to_string()))
        .map_err(|m| CliError::bad_input(format!("{flag}: {m} (write e.g. 5%)")))
}

/// A value of a metric named as in the run JSON (`requests.rate`, `latency_ms.p95`) with its
/// unit: `612.00ms`, `27.6/s`, `0.50%`.
pub fn fmt_metric(metric: &str, v: f64) -> String {
    match metric.parse::<MetricId>() {
        Ok(m) => format_value(m.unit(), v),
        Err(_) => format!("{v:.2}"),
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
pub fn unknown_metric(flag: &str, e: &UnknownMetric) -> CliError {
    CliError::bad_input(format!(
        "{flag} {}: unknown metric{}\n  valid metrics (`step.NAME.latency.p99` is read as `steps.NAME.latency_ms.p99`):\n{}",
        e.name,
        e.reason,
        valid_metric_names(&e.valid)
    ))
}

/// One side of a comparison: the per-run values of one variant (or one run).
pub(super) struct Side {
    pub kind: &'static str,
    pub id: String,
    pub stats: VariantStats,
    /// The study's equivalence band (0 for a run or a study without one): a comparison
    /// against a study reads its verdicts with the band the study set.
    pub equivalence: f64,
}

fn open_store(dir: Option<&Path>) -> Result<Store, CliError> {
    super::store::open(&loadlab_store::resolve_dir(dir))
}

fn run_side(id: &str, label: &str, result: &RunResult) -> Side {
    let samples = [RunSample {
        id: id.to_string(),
        result,
        excluded: false,
    }];
    Side {
        kind: "run",
        id: id.to_string(),
        stats: summarize_variant(label, &samples),
        equivalence: 0.0,
    }
}

fn study_sides(study: &StudyResult, variant: Option<&str>) -> Result<Vec<Side>, CliError> {
    let chosen: Vec<&VariantStats> = match variant {
        Some(name) => vec![study
            .variants
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                CliError::bad_input(format!(
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
            kind: "study",
            id: study.id.clone(),
            stats: v.clone(),
            equivalence: study.equivalence,
        })
        .collect())
}

fn read_study(path: &Path) -> Result<StudyResult, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::bad_input(format!("{}: not a loadlab study: {e}", path.display())))
}

/// Resolves `ID`, `ID:variant`, `last`, or a JSON file to the variants it holds.
fn resolve(
    spec: &str,
    store: &mut Option<Store>,
    dir: Option<&Path>,
) -> Result<Vec<Side>, CliError> {
    let path = PathBuf::from(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::bad_input(format!("cannot read {spec}: {e}")))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::bad_input(format!("{spec}: not JSON: {e}")))?;
        return match value.get("schema").and_then(|s| s.as_str()) {
            Some(s) if s.starts_with("loadlab.study.") => study_sides(&read_study(&path)?, None),
            Some(s) if s.starts_with("loadlab.run.") => {
                let r: RunResult = serde_json::from_value(value)
                    .map_err(|e| CliError::bad_input(format!("{spec}: not a loadlab run: {e}")))?;
                Ok(vec![run_side(spec, &r.name.clone(), &r)])
            }
            _ => Err(CliError::bad_input(format!(
                "{spec}: neither a run result nor a study.json"
            ))),
        };
    }
    if store.is_none() {
        *store = Some(open_store(dir)?);
    }
    let st = store.as_ref().expect("opened");
    let (id, variant) = match spec.split_once(':') {
        Some((i, v)) => (i, Some(v)),
        None => (spec, None),
    };
    if let Ok(rec) = st.study(id) {
        let p = rec.path.ok_or_else(|| {
            CliError::bad_input(format!(
                "study {} has no result yet ({})",
                rec.id, rec.status
            ))
        })?;
        if rec.kind != "study" {
            return Err(CliError::bad_input(format!(
                "{} is a capacity search, not a study",
                rec.id
            )));
        }
        return study_sides(&read_study(&p)?, variant);
    }
    match st.load_run(id) {
        Ok((rec, result)) => Ok(vec![run_side(&rec.id, rec.variant.as_deref().unwrap_or(&result.name), &result)]),
        Err(e) => Err(CliError::bad_input(format!(
            "`{spec}` is neither a file, a study nor a run: {e}\n  hint: `loadlab runs` lists runs, `loadlab runs studies` lists studies"
        ))),
    }
}

/// `b (study s2026...)`, `this run (run)`.
fn side_words(s: &Side) -> String {
    if s.id == s.stats.name {
        format!("{} ({})", s.stats.name, s.kind)
    } else {
        format!("{} ({} {})", s.stats.name, s.kind, s.id)
    }
}

/// The metrics to compare: `--metric` names (checked against what the runs measured) or the
/// default set.
fn chosen_metrics(names: &[String], sides: &[&VariantStats]) -> Result<Vec<MetricId>, CliError> {
    if names.is_empty() {
        return Ok(default_compare_metrics());
    }
    parse_metrics(names, sides).map_err(|e| unknown_metric("--metric", &e))
}

/// Compares the pairs, prints them, and builds the `loadlab.compare.v1` record.
pub(super) struct Compared {
    pub result: CompareResult,
}

pub(super) fn compare_sides(
    pairs: &[(&Side, &Side)],
    metrics: &[MetricId],
    options: &CompareOptions,
    bound: Option<f64>,
    out: Option<&mut dyn Write>,
) -> Compared {
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
    if let Some(out) = out {
        for (a, b) in pairs {
            let _ = writeln!(out, "{} → {}", side_words(a), side_words(b));
            let these: Vec<_> = comps
                .iter()
                .filter(|c| c.baseline == a.stats.name && c.variant == b.stats.name)
                .cloned()
                .collect();
            let _ = print_comparisons(
                out,
                &these,
                Some(&a.stats),
                Some(&b.stats),
                options.equivalence,
                options.min_runs,
            );
        }
        let _ = print_legend(
            out,
            &comps,
            options.alpha,
            options.equivalence,
            options.min_runs,
        );
    }
    let regressed = bound.map(|b| regressions(&comps, b)).unwrap_or_default();
    let side = |s: &Side| CompareSide {
        kind: s.kind.into(),
        id: s.id.clone(),
        label: s.stats.name.clone(),
        runs: s.stats.runs.len(),
    };
    Compared {
        result: CompareResult {
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
        },
    }
}

pub fn execute(args: CompareArgs) -> Result<Outcome, CliError> {
    let bound = args
        .fail_on_regression
        .as_deref()
        .map(|t| parse_percent("--fail-on-regression", t))
        .transpose()?;
    let band = args
        .equivalence
        .as_deref()
        .map(|t| parse_percent("--equivalence", t))
        .transpose()?;
    let mut store = None;
    let a_sides = resolve(&args.baseline, &mut store, args.results.as_deref())?;
    let b_sides = resolve(&args.candidate, &mut store, args.results.as_deref())?;
    // Without --equivalence, the baseline study's band: the same runs get the same verdict
    // words here as in the study's own summary and report.
    let equivalence = band.unwrap_or(a_sides[0].equivalence);
    // Pairs: matching variant names when both are multi-variant studies, else first × first.
    let mut pairs: Vec<(&Side, &Side)> = Vec::new();
    if a_sides.len() > 1 || b_sides.len() > 1 {
        for a in &a_sides {
            if let Some(b) = b_sides.iter().find(|b| b.stats.name == a.stats.name) {
                pairs.push((a, b));
            }
        }
    }
    if pairs.is_empty() {
        pairs.push((&a_sides[0], &b_sides[0]));
        if a_sides.len() > 1 || b_sides.len() > 1 {
            eprintln!(
                "note: comparing variant `{}` with `{}`; choose others with ID:variant",
                a_sides[0].stats.name, b_sides[0].stats.name
            );
        }
    }
    let all: Vec<&VariantStats> = pairs
        .iter()
        .flat_map(|(a, b)| [&a.stats, &b.stats])
        .collect();
    let metrics = chosen_metrics(&args.metrics, &all)?;
    let options = CompareOptions {
        alpha: ALPHA,
        equivalence,
        min_runs: MIN_RUNS_FOR_COMPARISON,
    };
    let mut stdout = std::io::stdout().lock();
    let out: Option<&mut dyn Write> = if args.quiet { None } else { Some(&mut stdout) };
    let result = compare_sides(&pairs, &metrics, &options, bound, out).result;
    let mut out = std::io::stdout().lock();
    let text = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
    if let Some(path) = &args.json {
        super::output::write_json_copy(path, &text)?;
    }
    if let Some(path) = &args.junit {
        let cases = loadlab_report::junit::comparison_cases(&result);
        let suite = format!("compare {} {}", args.baseline, args.candidate);
        super::output::write_junit(
            path,
            &loadlab_report::junit::junit_xml(&suite, "loadlab.compare", &cases),
        )?;
    }
    if let Some(path) = &args.summary {
        let md = loadlab_report::gate_summary::comparison_markdown(
            &format!("loadlab compare {} {}", args.baseline, args.candidate),
            &format!(
                "`{}` (candidate) against `{}` (baseline).",
                args.candidate, args.baseline
            ),
            &result,
        );
        super::output::write_summary(Some(path), false, &md)?;
    }
    // The comparison and its report are kept in the store, like a study's.
    let stored = store_comparison(args.results.as_deref(), &text);
    if !args.quiet {
        for w in &result.warnings {
            let _ = writeln!(out, "warning: {}", w.replace('`', ""));
        }
        let _ = print_gate(&mut out, &result);
        if let Some(path) = &args.json {
            let _ = writeln!(out, "comparison written to {}", path.display());
        }
        if let Some(report) = stored.as_deref().and_then(super::output::report_for) {
            super::output::print_report_paths(&mut out, &report);
        }
    }
    Ok(if result.regressions.is_empty() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}

/// Writes `compare.json` under `<results>/comparisons/<id>/` (the report goes beside it);
/// a store that cannot be written is a warning: the comparison was printed.
fn store_comparison(results: Option<&Path>, text: &str) -> Option<PathBuf> {
    let dir = loadlab_store::resolve_dir(results)
        .join("comparisons")
        .join(loadlab_store::new_id("m"));
    let path = dir.join("compare.json");
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| loadlab_store::write_atomic(&path, text.as_bytes()));
    match written {
        Ok(()) => Some(path),
        Err(e) => {
            eprintln!("warning: comparison not stored in {}: {e}", dir.display());
            None
        }
    }
}

/// `loadlab run --baseline last|ID`: the new run against a stored study (the prediction test
/// of one run, Holm over the default metrics). Returns whether a metric failed the gate.
pub fn run_against_study(
    result: &RunResult,
    baseline: &str,
    dir: Option<&Path>,
    bound: Option<f64>,
    quiet: bool,
) -> Result<bool, CliError> {
    let mut store = None;
    let sides = resolve(baseline, &mut store, dir)?;
    let base = sides
        .iter()
        .find(|s| s.stats.name == result.name)
        .unwrap_or(&sides[0]);
    let run = run_side("this run", "this run", result);
    let options = CompareOptions {
        equivalence: base.equivalence,
        ..CompareOptions::default()
    };
    let mut stdout = std::io::stdout().lock();
    if !quiet {
        let _ = writeln!(
            stdout,
            "\nagainst study {} variant `{}` ({} runs):",
            base.id,
            base.stats.name,
            base.stats.runs.len()
        );
    }
    let out: Option<&mut dyn Write> = if quiet { None } else { Some(&mut stdout) };
    let compared = compare_sides(
        &[(base, &run)],
        &default_compare_metrics(),
        &options,
        bound,
        out,
    );
    if !quiet {
        let mut out = std::io::stdout().lock();
        for w in &compared.result.warnings {
            let _ = writeln!(out, "warning: {}", w.replace('`', ""));
        }
        let _ = print_gate(&mut out, &compared.result);
    }
    Ok(!compared.result.regressions.is_empty())
}
