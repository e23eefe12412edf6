//! The `study:` and `capacity:` sections of a scenario file (read by `loadlab study` and
//! `loadlab capacity`; `loadlab run` ignores them).
//!
//! ```yaml
//! study:
//!   repeat: 10                  # runs per variant (default 10; ≥ 5 to compare)
//!   order: interleaved          # A B A B ... (default) or sequential
//!   cooldown: 5s                # pause between runs
//!   equivalence: 2%             # significant changes smaller than this are reported `~`
//!   metrics: [latency_ms.p95]   # compared metrics (default: throughput, errors, p50/p95/p99)
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

use crate::error::{ErrorLocation, ScenarioError};
use crate::locate::PathIndex;
use crate::model::{Load, Scenario};
use crate::units::{parse_duration, parse_rate};
use serde_yaml_ng::{Mapping, Value};
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
    /// Empty when the study has no variants (one variant: the scenario itself).
    pub variants: Vec<VariantSpec>,
    pub sweep: Option<SweepSpec>,
    /// Pairs (baseline, variant) to compare; empty: every variant against the first.
    pub compare: Vec<(String, String)>,
}

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

/// A scenario file with its `study:` / `capacity:` sections kept.
pub struct StudyDocument {
    src: String,
    file: String,
    doc: Value,
    index: PathIndex,
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
        Value::String(s) => {
            let t = s.trim();
            match t.strip_suffix('%') {
                Some(p) => {
                    p.trim()
                        .parse::<f64>()
                        .map_err(|_| format!("invalid percentage `{s}`"))?
                        / 100.0
                }
                None => t
                    .parse::<f64>()
                    .map_err(|_| format!("invalid fraction `{s}`: write e.g. 5% or 0.05"))?,
            }
        }
        _ => return Err("expected a percentage, e.g. 5%".into()),
    };
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

/// Deep merge: mappings key by key, anything else replaced. A `load` with a `model` replaces.
fn merge(base: &mut Value, over: &Value, top: bool) {
    match (base, over) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                let replace_whole = top
                    && k.as_str() == Some("load")
                    && v.as_mapping().is_some_and(|m| m.contains_key("model"));
                match b.get_mut(k) {
                    Some(existing) if !replace_whole => merge(existing, v, false),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

impl StudyDocument {
    pub fn read(path: &Path) -> Result<StudyDocument, ScenarioError> {
        let shown = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|e| {
            ScenarioError::at(
                ErrorLocation::Unknown,
                "",
                format!("cannot read scenario file {shown}: {e}"),
            )
        })?;
        StudyDocument::parse(&src, &shown)
    }

    pub fn parse(src: &str, file: &str) -> Result<StudyDocument, ScenarioError> {
        // Syntax and model errors are reported by the scenario parser, with positions.
        Scenario::parse(src, file)?;
        let doc: Value = serde_yaml_ng::from_str(src)
            .map_err(|e| located(&PathIndex::default(), file, "", e.to_string()))?;
        Ok(StudyDocument {
            src: src.to_string(),
            file: file.to_string(),
            doc,
            index: PathIndex::build(src),
        })
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// The scenario as written (without variants).
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        Scenario::parse(&self.src, &self.file)
    }

    fn section(&self, key: &str) -> Option<&Value> {
        self.doc.as_mapping()?.get(key).filter(|v| !v.is_null())
    }

    pub fn has_study(&self) -> bool {
        self.section("study").is_some()
    }

    fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        located(&self.index, &self.file, field, message)
    }

    /// The checked `study:` section; `None` when the file has none.
    pub fn study(&self) -> Result<Option<StudySpec>, ScenarioError> {
        let Some(section) = self.section("study") else {
            return Ok(None);
        };
        let Some(map) = section.as_mapping() else {
            return Err(self.err("study", "expected a mapping (repeat, variants, sweep, ...)"));
        };
        let mut spec = StudySpec {
            repeat: 10,
            order: Order::Interleaved,
            cooldown: Duration::ZERO,
            equivalence: 0.0,
            metrics: None,
            variants: Vec::new(),
            sweep: None,
            compare: Vec::new(),
        };
        const KEYS: &[&str] = &[
            "repeat",
            "order",
            "cooldown",
            "equivalence",
            "metrics",
            "variants",
            "sweep",
            "compare",
        ];
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            let field = format!("study.{key}");
            match key {
                "repeat" => {
                    spec.repeat = v
                        .as_u64()
                        .filter(|&n| (1..=10_000).contains(&n))
                        .ok_or_else(|| self.err(&field, "expected a whole number of runs ≥ 1"))?
                        as usize
                }
                "order" => {
                    spec.order = match v.as_str() {
                        Some("interleaved") => Order::Interleaved,
                        Some("sequential") => Order::Sequential,
                        _ => {
                            return Err(self.err(&field, "unknown order").with_hint(
                                "use interleaved (A B A B ..., the default) or sequential",
                            ))
                        }
                    }
                }
                "cooldown" => {
                    spec.cooldown = as_text(v)
                        .ok_or_else(|| "expected a duration".to_string())
                        .and_then(|t| parse_duration(&t))
                        .map_err(|m| self.err(&field, m))?
                }
                "equivalence" => {
                    spec.equivalence = parse_fraction(v).map_err(|m| self.err(&field, m))?
                }
                "metrics" => {
                    let list = v
                        .as_sequence()
                        .map(|s| s.iter().filter_map(|m| m.as_str().map(String::from)).collect::<Vec<_>>())
                        .filter(|l| !l.is_empty())
                        .ok_or_else(|| {
                            self.err(&field, "expected a list of metric names, e.g. [latency_ms.p95, requests.rate]")
                        })?;
                    spec.metrics = Some(list);
                }
                "variants" => spec.variants = self.variants(v)?,
                "sweep" => spec.sweep = Some(self.sweep(v)?),
                "compare" => {
                    let pairs = v.as_sequence().ok_or_else(|| {
                        self.err(
                            &field,
                            "expected a list of pairs, e.g. [[baseline, stress]]",
                        )
                    })?;
                    for (i, p) in pairs.iter().enumerate() {
                        let pair: Option<Vec<&str>> = p
                            .as_sequence()
                            .map(|s| s.iter().filter_map(Value::as_str).collect());
                        match pair.as_deref() {
                            Some([a, b]) => spec.compare.push((a.to_string(), b.to_string())),
                            _ => {
                                return Err(self.err(
                                    &format!("study.compare[{i}]"),
                                    "expected a pair [baseline, variant]",
                                ))
                            }
                        }
                    }
                }
                other => {
                    let hint = crate::suggest::closest(other, KEYS.iter().copied())
                        .map(|s| format!("did you mean `{s}`?"))
                        .unwrap_or_else(|| format!("expected one of: {}", KEYS.join(", ")));
                    return Err(self
                        .err(&field, format!("unknown field `{other}`"))
                        .with_hint(hint));
                }
            }
        }
        if spec.sweep.is_some() && !spec.variants.is_empty() {
            return Err(self
                .err(
                    "study.sweep",
                    "a study has either `variants` or a `sweep`, not both",
                )
                .with_hint("put the sweep in its own study file"));
        }
        for (i, (a, b)) in spec.compare.iter().enumerate() {
            for name in [a, b] {
                if !spec.variants.iter().any(|v| &v.name == name) {
                    return Err(self.err(
                        &format!("study.compare[{i}]"),
                        format!("no variant named `{name}`"),
                    ));
                }
            }
        }
        Ok(Some(spec))
    }

    fn variants(&self, v: &Value) -> Result<Vec<VariantSpec>, ScenarioError> {
        let mut out: Vec<VariantSpec> = Vec::new();
        match v {
            Value::Sequence(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("study.variants[{i}]");
                    let Some(m) = item.as_mapping() else {
                        return Err(
                            self.err(&path, "expected a mapping with a `name` and overrides")
                        );
                    };
                    let name = m
                        .get("name")
                        .and_then(as_text)
                        .ok_or_else(|| self.err(&path, "a variant needs a `name`"))?;
                    let mut overrides = m.clone();
                    overrides.remove("name");
                    out.push(VariantSpec {
                        name,
                        overrides: Value::Mapping(overrides),
                        path,
                    });
                }
            }
            Value::Mapping(m) => {
                for (k, item) in m {
                    let name = as_text(k).unwrap_or_default();
                    let path = format!("study.variants.{name}");
                    let overrides = match item {
                        Value::Null => Value::Mapping(Mapping::new()),
                        Value::Mapping(_) => item.clone(),
                        _ => return Err(self.err(&path, "expected a mapping of overrides")),
                    };
                    out.push(VariantSpec {
                        name,
                        overrides,
                        path,
                    });
                }
            }
            _ => return Err(self.err(
                "study.variants",
                "expected a list of variants, e.g. [{name: baseline}, {name: stress, load: {...}}]",
            )),
        }
        for (i, v) in out.iter().enumerate() {
            if v.name.is_empty() || out[..i].iter().any(|o| o.name == v.name) {
                return Err(self.err(
                    &v.path,
                    format!("variant names must be unique and non-empty (`{}`)", v.name),
                ));
            }
            for key in ["study", "capacity"] {
                if v.overrides
                    .as_mapping()
                    .is_some_and(|m| m.contains_key(key))
                {
                    return Err(self.err(&v.path, format!("a variant cannot override `{key}`")));
                }
            }
        }
        Ok(out)
    }

    fn sweep(&self, v: &Value) -> Result<SweepSpec, ScenarioError> {
        let hint = "write e.g. sweep: { vus: [10, 20, 50] } or sweep: { rate: [100/s, 200/s] }";
        let m = v.as_mapping().filter(|m| m.len() == 1).ok_or_else(|| {
            self.err("study.sweep", "expected one parameter")
                .with_hint(hint)
        })?;
        let (k, list) = m.iter().next().expect("one entry");
        let parameter = match k.as_str() {
            Some("vus") => SweepParameter::Vus,
            Some("rate") => SweepParameter::Rate,
            _ => {
                return Err(self
                    .err("study.sweep", "a sweep varies `vus` or `rate`")
                    .with_hint(hint))
            }
        };
        let field = format!("study.sweep.{}", parameter.as_str());
        let items = list.as_sequence().filter(|s| s.len() >= 2).ok_or_else(|| {
            self.err(&field, "expected a list of at least two values")
                .with_hint(hint)
        })?;
        let mut values = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let f = format!("{field}[{i}]");
            let value = match parameter {
                SweepParameter::Vus => item
                    .as_u64()
                    .filter(|&n| n >= 1)
                    .map(|n| n as f64)
                    .ok_or_else(|| self.err(&f, "expected a whole number of virtual users ≥ 1"))?,
                SweepParameter::Rate => as_text(item)
                    .ok_or_else(|| "expected a rate, e.g. 200/s".to_string())
                    .and_then(|t| parse_rate(&t))
                    .map_err(|m| self.err(&f, m))?,
            };
            if values.last().is_some_and(|&last| value <= last) {
                return Err(self.err(&f, "sweep values must be increasing"));
            }
            values.push(value);
        }
        Ok(SweepSpec { parameter, values })
    }

    /// The scenario with a variant's overrides merged in.
    pub fn variant_scenario(&self, variant: &VariantSpec) -> Result<Scenario, ScenarioError> {
        let mut doc = self.doc.clone();
        merge(&mut doc, &variant.overrides, true);
        let text =
            serde_yaml_ng::to_string(&doc).map_err(|e| self.err(&variant.path, e.to_string()))?;
        Scenario::parse(&text, &self.file)
            .map(|mut s| {
                s.source = Some(self.file.clone());
                s
            })
            .map_err(|e| {
                let top = e.field.split(['.', '[']).next().unwrap_or("");
                let overridden = variant
                    .overrides
                    .as_mapping()
                    .is_some_and(|m| m.contains_key(top));
                let path = if overridden {
                    format!("{}.{}", variant.path, e.field)
                } else {
                    e.field.clone()
                };
                let mut err = self.err(
                    &path,
                    format!("in variant `{}`: {}", variant.name, e.message),
                );
                err.field = e.field.clone();
                err.hint = e.hint;
                err
            })
    }

    /// The checked `capacity:` section; `Default` when the file has none.
    pub fn capacity(&self) -> Result<CapacitySpec, ScenarioError> {
        let mut spec = CapacitySpec::default();
        let Some(section) = self.section("capacity") else {
            return Ok(spec);
        };
        let Some(map) = section.as_mapping() else {
            return Err(self.err(
                "capacity",
                "expected a mapping (start, hold, warmup, precision, confirm)",
            ));
        };
        const KEYS: &[&str] = &[
            "start",
            "hold",
            "warmup",
            "precision",
            "confirm",
            "max",
            "max_errors",
        ];
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            let field = format!("capacity.{key}");
            let text = || as_text(v).ok_or_else(|| "expected a value".to_string());
            let e = |m: String| self.err(&field, m);
            match key {
                "start" => spec.start = Some(text().and_then(|t| parse_rate(&t)).map_err(e)?),
                "max" => spec.max = Some(text().and_then(|t| parse_rate(&t)).map_err(e)?),
                "hold" => spec.hold = Some(text().and_then(|t| parse_duration(&t)).map_err(e)?),
                "warmup" => spec.warmup = Some(text().and_then(|t| parse_duration(&t)).map_err(e)?),
                "precision" => spec.precision = Some(parse_fraction(v).map_err(e)?),
                "max_errors" => spec.max_errors = Some(parse_fraction(v).map_err(e)?),
                "confirm" => {
                    spec.confirm = Some(
                        v.as_u64()
                            .ok_or_else(|| self.err(&field, "expected a whole number of runs"))?
                            as usize,
                    )
                }
                other => {
                    let hint = crate::suggest::closest(other, KEYS.iter().copied())
                        .map(|s| format!("did you mean `{s}`?"))
                        .unwrap_or_else(|| format!("expected one of: {}", KEYS.join(", ")));
                    return Err(self
                        .err(&field, format!("unknown field `{other}`"))
                        .with_hint(hint));
                }
            }
        }
        Ok(spec)
    }
}

/// Sets a sweep point on a scenario: every stage's `vus` (closed model) or `rate` (open model,
/// ramps flattened) becomes `value`.
pub fn apply_sweep(
    scenario: &mut Scenario,
    parameter: SweepParameter,
    value: f64,
) -> Result<(), String> {
    match (&mut scenario.load, parameter) {
        (Load::Closed(c), SweepParameter::Vus) => {
            let vus = value.round() as u32;
            // A load that starts at its level stays flat; a ramp from 0 still ramps.
            if c.start_vus > 0 {
                c.start_vus = vus;
            }
            for s in &mut c.stages {
                s.vus = vus;
            }
            if c.stages.is_empty() {
                c.start_vus = vus;
            }
            Ok(())
        }
        (Load::Open(o), SweepParameter::Rate) => {
            for s in &mut o.stages {
                s.rate = value;
                s.ramp_to = None;
            }
            Ok(())
        }
        (_, SweepParameter::Vus) => {
            Err("a `vus` sweep needs a closed-model load (load.model: closed)".into())
        }
        (_, SweepParameter::Rate) => {
            Err("a `rate` sweep needs an open-model load (load.model: open)".into())
        }
    }
}

/// Replaces the load with one open-model stage at `rate` for `duration` (capacity steps).
pub fn constant_rate(scenario: &mut Scenario, rate: f64, duration: Duration) {
    let max_in_flight = match &scenario.load {
        Load::Open(o) => o.max_in_flight,
        _ => 10_000,
    };
    let poisson = match &scenario.load {
        Load::Open(o) => o.poisson,
        _ => false,
    };
    scenario.load = Load::Open(crate::model::OpenLoad {
        stages: vec![crate::model::RateStage {
            duration,
            rate,
            ramp_to: None,
        }],
        poisson,
        max_in_flight,
        max_arrivals: None,
    });
}
