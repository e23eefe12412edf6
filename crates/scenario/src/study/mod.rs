//! The `study:` and `capacity:` sections of a scenario file (read by `loadlab study` and
//! `loadlab capacity`; `loadlab run` ignores them).
//!
//! ```yaml
//! study:
//!   repeat: 10                  # runs per variant (default 10; ≥ 5 to compare)
//!   retry_invalid: 2            # re-runs of an invalid run (default 2)
//!   order: interleaved          # A B A B ... (default) or sequential
//!   cooldown: 5s                # pause between runs
//!   equivalence: 2%             # significant changes smaller than this are reported `~`
//!   metrics: [latency_ms.p95]   # compared metrics (default: throughput, errors, p50/p95/p99)
//!   compare_on: compensated     # latency as measured (raw, default) or compensated
//!   variants:                   # named overrides of any part of the scenario
//!     - { name: baseline, load: { model: closed, vus: 35, duration: 10m } }
//!     - { name: stress,   load: { model: closed, vus: 75, duration: 8m } }
//!   compare: [[baseline, stress]]   # pairs (default: every variant against the first)
//!   # or instead of variants:
//!   sweep: { vus: [10, 20, 25, 30, 50, 75] }   # or { rate: [100/s, 200/s] }
//! capacity: { start: 50/s, hold: 30s, warmup: 5s, precision: 5%, confirm: 3 }
//! ```
//!
//! A variant is merged over the scenario document (mappings merge key by key, anything
//! else is replaced; a `load:` with a `model:` replaces the whole load) and the result is
//! parsed like any scenario file; its errors point at the variant's lines.
//!
//! This file holds the specs and the document; `spec` checks the `study:` section,
//! `capacity` the `capacity:` section, and `overrides` merges variants and sweep points
//! into the scenario.

mod capacity;
mod overrides;
mod spec;

pub use overrides::{apply_sweep, constant_rate};

use crate::error::{ErrorLocation, ScenarioError};
use crate::locate::PathIndex;
use crate::model::Scenario;
use crate::parse::read_scenario_file;
use serde_yaml_ng::Value;
use std::path::Path;
use std::time::Duration;

/// Run order of a study's variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A B A B ...: drift over time hits every variant alike.
    Interleaved,
    /// A A ... B B ...
    Sequential,
}

impl Order {
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }
}

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepParameter {
    Vus,
    Rate,
}

impl SweepParameter {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepParameter::Vus => "vus",
            SweepParameter::Rate => "rate",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    pub parameter: SweepParameter,
    pub values: Vec<f64>,
}

/// A named override of the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantSpec {
    pub name: String,
    /// Mapping merged over the scenario document.
    pub overrides: Value,
    /// Path of the variant in the file, for error locations.
    path: String,
}

/// The `study:` section, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct StudySpec {
    pub repeat: usize,
    pub order: Order,
    pub cooldown: Duration,
    pub equivalence: f64,
    /// Compared metrics; `None`: the default set.
    pub metrics: Option<Vec<String>>,
    /// The latency the compared latency metrics are read on (`compare_on`, default raw).
    pub compare_on: loadlab_metrics::LatencyBasis,
    /// Empty when the study has no variants (one variant: the scenario itself).
    pub variants: Vec<VariantSpec>,
    pub sweep: Option<SweepSpec>,
    /// Pairs (baseline, variant) to compare; empty: every variant against the first.
    pub compare: Vec<(String, String)>,
    /// An invalid run is re-run up to this many times (default 2).
    pub retry_invalid: usize,
    /// Unmeasured runs of every variant before the measured ones (the target warmed up:
    /// JIT, caches, connection pools), stored but never in the statistics (default 0).
    pub warmup_runs: usize,
}

/// Re-runs of an invalid run, unless `study.retry_invalid` says otherwise.
pub const DEFAULT_RETRY_INVALID: usize = 2;

/// The `capacity:` section, checked (every field optional: flags and defaults fill in).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapacitySpec {
    pub start: Option<f64>,
    pub hold: Option<Duration>,
    pub warmup: Option<Duration>,
    pub precision: Option<f64>,
    pub confirm: Option<usize>,
    pub max: Option<f64>,
    pub max_errors: Option<f64>,
}

/// A scenario file with every section checked (see [`StudyDocument::check`]).
#[derive(Debug, Clone)]
pub struct CheckedFile {
    pub scenario: Scenario,
    pub study: Option<StudySpec>,
    /// Every variant or sweep point of the study, resolved: (name, scenario).
    pub variants: Vec<(String, Scenario)>,
    /// The `capacity:` section, when the file has one.
    pub capacity: Option<CapacitySpec>,
}

/// A scenario file with its `study:` / `capacity:` sections kept.
pub struct StudyDocument {
    src: String,
    file: String,
    /// The scenario as written, parsed once.
    scenario: Scenario,
    doc: Value,
    /// Positions for error messages: built only when an error needs one.
    index: std::sync::OnceLock<PathIndex>,
}

fn located(
    index: &PathIndex,
    file: &str,
    field: &str,
    message: impl Into<String>,
) -> ScenarioError {
    let (line, column) = index.find(field).unwrap_or((1, 1));
    ScenarioError::at(
        ErrorLocation::File {
            path: file.to_string(),
            line,
            column,
        },
        field,
        message,
    )
}

/// Parses `5%`, `0.05` or `5 %` into a fraction.
pub fn parse_fraction(v: &Value) -> Result<f64, String> {
    let f = match v {
        Value::Number(n) => n.as_f64().ok_or("not a number")?,
        Value::String(s) => return parse_fraction_text(s),
        _ => return Err("expected a percentage, e.g. 5%".into()),
    };
    in_fraction_range(f)
}

/// `5%` or `0.05` → 0.05, as a flag gives it.
pub fn parse_fraction_text(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let f = match t.strip_suffix('%') {
        Some(p) => {
            p.trim()
                .parse::<f64>()
                .map_err(|_| format!("invalid percentage `{s}`"))?
                / 100.0
        }
        None => t
            .parse::<f64>()
            .map_err(|_| format!("invalid fraction `{s}`: write e.g. 5% or 0.05"))?,
    };
    in_fraction_range(f)
}

/// An error rate: a fraction of requests, `0%` to `100%` (a change may be 200%, an error
/// rate may not).
pub fn parse_error_rate_text(s: &str) -> Result<f64, String> {
    let f = parse_fraction_text(s)?;
    if f > 1.0 {
        return Err(format!(
            "`{s}` is more than every request: an error rate is 0% to 100%"
        ));
    }
    Ok(f)
}

fn in_fraction_range(f: f64) -> Result<f64, String> {
    if !(0.0..=10.0).contains(&f) || !f.is_finite() {
        return Err(format!("{f} is out of range"));
    }
    Ok(f)
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl StudyDocument {
    pub fn read(path: &Path) -> Result<StudyDocument, ScenarioError> {
        let (src, shown) = read_scenario_file(path)?;
        StudyDocument::parse(&src, &shown)
    }

    pub fn parse(src: &str, file: &str) -> Result<StudyDocument, ScenarioError> {
        // Syntax and model errors are reported by the scenario parser, with positions.
        let scenario = Scenario::parse(src, file)?;
        let src = crate::prescan::prescan(src, file)?;
        let doc: Value = serde_yaml_ng::from_str(src)
            .map_err(|e| located(&PathIndex::default(), file, "", e.to_string()))?;
        Ok(StudyDocument {
            src: src.to_string(),
            file: file.to_string(),
            scenario,
            doc,
            index: std::sync::OnceLock::new(),
        })
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// The scenario as written (without variants).
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        Ok(self.scenario.clone())
    }

    fn index(&self) -> &PathIndex {
        self.index.get_or_init(|| PathIndex::build(&self.src))
    }

    /// Every section of the file checked, as `study` and `capacity` would before running:
    /// the scenario, the `study:` section with every variant and sweep point resolved, and
    /// the `capacity:` section. This is what `loadlab validate` runs.
    pub fn check(&self) -> Result<CheckedFile, ScenarioError> {
        let scenario = self.scenario()?;
        let study = self.study()?;
        let mut variants = Vec::new();
        if let Some(spec) = &study {
            for v in &spec.variants {
                variants.push((v.name.clone(), self.variant_scenario(v)?));
            }
            if let Some(sweep) = &spec.sweep {
                for (i, &value) in sweep.values.iter().enumerate() {
                    let mut point = scenario.clone();
                    let field = format!("study.sweep.{}[{i}]", sweep.parameter.as_str());
                    apply_sweep(&mut point, sweep.parameter, value)
                        .map_err(|m| self.err(&field, m))?;
                    crate::validate::resolved(
                        &point,
                        false,
                        &crate::locate::Ctx::file(&self.file, self.index()),
                    )
                    .map_err(|e| self.err(&field, format!("at this sweep point: {}", e.message)))?;
                    variants.push((format!("{}={value}", sweep.parameter.as_str()), point));
                }
            }
        }
        let capacity = self.capacity()?;
        Ok(CheckedFile {
            scenario,
            study,
            variants,
            capacity: self.section("capacity").map(|_| capacity),
        })
    }

    fn section(&self, key: &str) -> Option<&Value> {
        self.doc.as_mapping()?.get(key).filter(|v| !v.is_null())
    }

    pub fn has_study(&self) -> bool {
        self.section("study").is_some()
    }

    fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        located(self.index(), &self.file, field, message)
    }

    /// `unknown field` at `field`, with the closest of `keys` (or all of them) as the hint.
    fn unknown_field(&self, field: &str, key: &str, keys: &[&str]) -> ScenarioError {
        let hint = crate::suggest::closest(key, keys.iter().copied())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| format!("expected one of: {}", keys.join(", ")));
        self.err(field, format!("unknown field `{key}`"))
            .with_hint(hint)
    }
}
