//! `loadlab compare A B`: runs or studies against each other, benchstat style, and
//! `loadlab run --baseline` (one new run against a stored study).

use crate::cli::CompareArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::compare::{
    compare_samples, regressions, verdict_word, CompareOptions, CompareResult, CompareSide,
    Comparison, ALPHA, COMPARE_SCHEMA,
};
use loadlab_analysis::study::{
    summarize_variant, RunSample, StudyResult, VariantStats, DEFAULT_COMPARE_METRICS,
    MIN_RUNS_FOR_COMPARISON,
};
use loadlab_metrics::RunResult;
use loadlab_store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `5%` or `0.05` → 0.05.
pub fn parse_percent(flag: &str, text: &str) -> Result<f64, CliError> {
    loadlab_scenario::study::parse_fraction(&serde_yaml_ng::Value::String(text.to_string()))
        .map_err(|m| CliError::bad_input(format!("{flag}: {m} (write e.g. 5%)")))
}

/// A metric value with its unit: `612ms`, `27.6`, `0.50%`.
pub fn fmt_metric(metric: &str, v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if metric.contains("latency") || metric.contains("time") {
        loadlab_report::format_ms(v)
    } else if metric.starts_with("errors") {
        format!("{:.2}%", v * 100.0)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn signed_pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// The comparison table: `p95  612ms ± 8%  →  655ms ± 6%  +7.0% [+3.1, +11.8]  p=0.004 n=10+10  slower`.
pub fn print_comparisons(
    out: &mut impl Write,
    comps: &[Comparison],
    a: Option<&VariantStats>,
    b: Option<&VariantStats>,
) -> std::io::Result<()> {
    let side = |v: Option<&VariantStats>, metric: &str, median: f64| -> String {
        match v.and_then(|v| v.metrics.get(metric)) {
            Some(s) if s.n > 1 => {
                format!("{} ± {:.0}%", fmt_metric(metric, s.median), s.cv * 100.0)
            }
            _ => fmt_metric(metric, median),
        }
    };
    let w = comps.iter().map(|c| c.metric.len()).max().unwrap_or(6);
    for c in comps {
        let change = match (c.change, c.change_ci) {
            (Some(ch), Some([lo, hi])) => format!(
                "{} [{:+.1}, {:+.1}]",
                signed_pct(ch),
                lo * 100.0,
                hi * 100.0
            ),
            (Some(ch), None) => signed_pct(ch),
            _ => "n/a".into(),
        };
        let verdict = if c.verdict == "~" {
            "~".to_string()
        } else {
            c.verdict.clone()
        };
        writeln!(
            out,
            "  {:<w$}  {:>14}  →  {:<14}  {:<24}  p={:.3} n={}+{}  {}",
            c.metric,
            side(a, &c.metric, c.baseline_median),
            side(b, &c.metric, c.variant_median),
            if c.verdict == "~" && c.p_adjusted >= ALPHA {
                "~".to_string()
            } else {
                change
            },
            c.p_adjusted,
            c.n[0],
            c.n[1],
            verdict
        )?;
    }
    Ok(())
}

/// One side of a comparison: the per-run values of one variant (or one run).
struct Side {
    kind: &'static str,
    id: String,
    stats: VariantStats,
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

fn samples(
    a: &VariantStats,
    b: &VariantStats,
    metrics: &[String],
) -> Vec<(String, Vec<f64>, Vec<f64>)> {
    metrics
        .iter()
        .filter_map(|m| {
            Some((
                m.clone(),
                a.metrics.get(m)?.values.clone(),
                b.metrics.get(m)?.values.clone(),
            ))
        })
        .collect()
}

/// A single run against a study: the test cannot be significant with one run, so a metric is
/// called slower/worse (or faster/better) only when the run lies outside the study's range.
fn single_run_verdicts(
    comps: &mut [Comparison],
    base: &VariantStats,
    run: &VariantStats,
    band: f64,
) {
    for c in comps.iter_mut() {
        let (Some(s), Some(r)) = (base.metrics.get(&c.metric), run.metrics.get(&c.metric)) else {
            continue;
        };
        let v = r.values[0];
        let outside = v > s.max || v < s.min;
        c.verdict = match c.change {
            Some(ch) if outside && ch.abs() > band => verdict_word(&c.metric, ch).to_string(),
            None if outside => verdict_word(&c.metric, v - s.median).to_string(),
            _ => "~".into(),
        };
    }
}

pub fn execute(args: CompareArgs) -> Result<Outcome, CliError> {
    let bound = args
        .fail_on_regression
        .as_deref()
        .map(|t| parse_percent("--fail-on-regression", t))
        .transpose()?;
    let equivalence = args
        .equivalence
        .as_deref()
        .map(|t| parse_percent("--equivalence", t))
        .transpose()?
        .unwrap_or(0.0);
    let metrics: Vec<String> = if args.metrics.is_empty() {
        DEFAULT_COMPARE_METRICS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args.metrics.clone()
    };
    let mut store = None;
    let a_sides = resolve(&args.baseline, &mut store, args.results.as_deref())?;
    let b_sides = resolve(&args.candidate, &mut store, args.results.as_deref())?;
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
    let options = CompareOptions {
        alpha: ALPHA,
        equivalence,
    };
    let mut all = Vec::new();
    let mut warnings = Vec::new();
    let mut out = std::io::stdout().lock();
    for (a, b) in &pairs {
        let (na, nb) = (a.stats.runs.len().max(1), b.stats.runs.len().max(1));
        let mut comps = compare_samples(
            &a.stats.name,
            &b.stats.name,
            &samples(&a.stats, &b.stats, &metrics),
            &options,
        );
        if nb == 1 && na >= MIN_RUNS_FOR_COMPARISON {
            single_run_verdicts(&mut comps, &a.stats, &b.stats, equivalence);
            warnings.push(format!(
                "one run of `{}` against {na} of `{}` is weak evidence: a metric is flagged only when the run falls outside the baseline's range",
                b.stats.name, a.stats.name
            ));
        } else if na < MIN_RUNS_FOR_COMPARISON || nb < MIN_RUNS_FOR_COMPARISON {
            warnings.push(format!(
                "{na}+{nb} runs: a significant difference needs at least {MIN_RUNS_FOR_COMPARISON} runs per side (10 recommended); changes are shown for information"
            ));
        }
        if !args.quiet {
            let _ = writeln!(
                out,
                "{} ({} {}) → {} ({} {})",
                a.stats.name, a.kind, a.id, b.stats.name, b.kind, b.id
            );
            let _ = print_comparisons(&mut out, &comps, Some(&a.stats), Some(&b.stats));
        }
        all.extend(comps);
    }
    let regressed = bound.map(|b| regressions(&all, b)).unwrap_or_default();
    let result = CompareResult {
        schema: COMPARE_SCHEMA.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        baseline: CompareSide {
            kind: pairs[0].0.kind.into(),
            id: pairs[0].0.id.clone(),
            label: pairs[0].0.stats.name.clone(),
            runs: pairs[0].0.stats.runs.len(),
        },
        variant: CompareSide {
            kind: pairs[0].1.kind.into(),
            id: pairs[0].1.id.clone(),
            label: pairs[0].1.stats.name.clone(),
            runs: pairs[0].1.stats.runs.len(),
        },
        equivalence,
        alpha: ALPHA,
        fail_on_regression: bound,
        comparisons: all,
        regressions: regressed.clone(),
        warnings: warnings.clone(),
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
        super::output::write_json_copy(path, &text)?;
        if let Some(report) = super::output::report_for(path) {
            if !args.quiet {
                super::output::print_report_paths(&mut out, &report);
            }
        }
    }
    if !args.quiet {
        for w in &warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        if let Some(b) = bound {
            if regressed.is_empty() {
                let _ = writeln!(
                    out,
                    "no metric is significantly worse by more than {:.1}%",
                    b * 100.0
                );
            } else {
                let _ = writeln!(
                    out,
                    "REGRESSION: {} significantly worse by more than {:.1}%",
                    regressed.join(", "),
                    b * 100.0
                );
            }
        }
        if let Some(path) = &args.json {
            let _ = writeln!(out, "comparison written to {}", path.display());
        }
    }
    Ok(if regressed.is_empty() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}

/// `loadlab run --baseline last|ID`: the new run against a stored study. Returns whether a
/// metric regressed by more than `bound`.
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
    let metrics: Vec<String> = DEFAULT_COMPARE_METRICS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut comps = compare_samples(
        &base.stats.name,
        "this run",
        &samples(&base.stats, &run.stats, &metrics),
        &CompareOptions::default(),
    );
    single_run_verdicts(&mut comps, &base.stats, &run.stats, 0.0);
    let regressed = match bound {
        Some(b) => regressions(&comps, b),
        None => Vec::new(),
    };
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "\nagainst study {} variant `{}` ({} runs):",
            base.id,
            base.stats.name,
            base.stats.runs.len()
        );
        let _ = print_comparisons(&mut out, &comps, Some(&base.stats), Some(&run.stats));
        let _ = writeln!(
            out,
            "note: one run is weak evidence — a metric is flagged only when it falls outside the study's range; run a study for a real comparison"
        );
        if !regressed.is_empty() {
            let _ = writeln!(
                out,
                "REGRESSION: {} worse than the study by more than {:.1}%",
                regressed.join(", "),
                bound.unwrap_or(0.0) * 100.0
            );
        }
    }
    Ok(!regressed.is_empty())
}
