//! The `study:` section: repetitions, order, variants, sweep and the pairs to compare.

use super::{
    as_text, parse_fraction, Order, StudyDocument, StudySpec, SweepParameter, SweepSpec,
    VariantSpec, DEFAULT_RETRY_INVALID,
};
use crate::error::ScenarioError;
use crate::limits::{too_many, MAX_RATE, MAX_REPEAT, MAX_SWEEP_POINTS, MAX_VARIANTS, MAX_VUS};
use crate::units::{parse_duration, parse_rate};
use loadlab_metrics::LatencyBasis;
use serde_yaml_ng::{Mapping, Value};
use std::time::Duration;

/// The keys `study:` takes, for "did you mean" hints.
const STUDY_KEYS: &[&str] = &[
    "repeat",
    "retry_invalid",
    "warmup_runs",
    "order",
    "cooldown",
    "equivalence",
    "metrics",
    "compare_on",
    "variants",
    "sweep",
    "compare",
];

impl StudyDocument {
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
            compare_on: LatencyBasis::Raw,
            variants: Vec::new(),
            sweep: None,
            compare: Vec::new(),
            retry_invalid: DEFAULT_RETRY_INVALID,
            warmup_runs: 0,
        };
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            self.study_key(&mut spec, key, v, &format!("study.{key}"))?;
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

    /// Reads one key of `study:` into `spec`; an unknown key is an error naming the closest.
    fn study_key(
        &self,
        spec: &mut StudySpec,
        key: &str,
        v: &Value,
        field: &str,
    ) -> Result<(), ScenarioError> {
        match key {
            "repeat" => {
                spec.repeat = v
                    .as_u64()
                    .filter(|&n| (1..=MAX_REPEAT).contains(&n))
                    .ok_or_else(|| {
                        self.err(
                            field,
                            format!("expected a whole number of runs from 1 to {MAX_REPEAT}"),
                        )
                    })? as usize
            }
            "retry_invalid" => {
                spec.retry_invalid = v
                    .as_u64()
                    .filter(|&n| n <= 100)
                    .ok_or_else(|| {
                        self.err(field, "expected a whole number of re-runs, 0 to 100")
                            .with_hint("an invalid run (generator saturated, host disturbed, a data set run out...) is re-run up to this many times so each variant keeps its planned number of valid runs")
                    })? as usize
            }
            "warmup_runs" => {
                spec.warmup_runs = v
                    .as_u64()
                    .filter(|&n| n <= 100)
                    .ok_or_else(|| {
                        self.err(field, "expected a whole number of warm-up runs, 0 to 100")
                            .with_hint("each variant is run this many times before its measured runs, and those runs are left out of the statistics")
                    })? as usize
            }
            "order" => {
                spec.order = match v.as_str() {
                    Some("interleaved") => Order::Interleaved,
                    Some("sequential") => Order::Sequential,
                    _ => {
                        return Err(self.err(field, "unknown order").with_hint(
                            "use interleaved (A B A B ..., the default) or sequential",
                        ))
                    }
                }
            }
            "cooldown" => {
                spec.cooldown = as_text(v)
                    .ok_or_else(|| "expected a duration".to_string())
                    .and_then(|t| parse_duration(&t))
                    .map_err(|m| self.err(field, m))?
            }
            "equivalence" => {
                spec.equivalence = parse_fraction(v).map_err(|m| self.err(field, m))?
            }
            "compare_on" => {
                spec.compare_on = v.as_str().and_then(LatencyBasis::parse).ok_or_else(|| {
                    self.err(field, "expected `raw` or `compensated`").with_hint(
                        "compensated compares every latency metric on its figure compensated for coordinated omission (a closed model's; an open model's latency already is)",
                    )
                })?
            }
            "metrics" => {
                let list = v
                    .as_sequence()
                    .map(|s| s.iter().filter_map(|m| m.as_str().map(String::from)).collect::<Vec<_>>())
                    .filter(|l| !l.is_empty())
                    .ok_or_else(|| {
                        self.err(field, "expected a list of metric names, e.g. [latency_ms.p95, requests.rate]")
                    })?;
                spec.metrics = Some(list);
            }
            "variants" => spec.variants = self.variants(v)?,
            "sweep" => spec.sweep = Some(self.sweep(v)?),
            "compare" => spec.compare.extend(self.compare(v, field)?),
            other => return Err(self.unknown_field(field, other, STUDY_KEYS)),
        }
        Ok(())
    }

    /// `compare:`: pairs of variant names, `[baseline, variant]`.
    fn compare(&self, v: &Value, field: &str) -> Result<Vec<(String, String)>, ScenarioError> {
        let pairs = v.as_sequence().ok_or_else(|| {
            self.err(field, "expected a list of pairs, e.g. [[baseline, stress]]")
        })?;
        let mut out = Vec::new();
        for (i, p) in pairs.iter().enumerate() {
            let pair: Option<Vec<&str>> = p
                .as_sequence()
                .map(|s| s.iter().filter_map(Value::as_str).collect());
            match pair.as_deref() {
                Some([a, b]) => out.push((a.to_string(), b.to_string())),
                _ => {
                    return Err(self.err(
                        &format!("study.compare[{i}]"),
                        "expected a pair [baseline, variant]",
                    ))
                }
            }
        }
        Ok(out)
    }

    fn variants(&self, v: &Value) -> Result<Vec<VariantSpec>, ScenarioError> {
        let count = match v {
            Value::Sequence(items) => items.len(),
            Value::Mapping(m) => m.len(),
            _ => 0,
        };
        if count > MAX_VARIANTS {
            return Err(self
                .err("study.variants", too_many("variants", count, MAX_VARIANTS))
                .with_hint("each variant is a scenario run `repeat` times; split the study"));
        }
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
        let mut seen = std::collections::HashSet::new();
        for v in &out {
            if v.name.is_empty() || !seen.insert(v.name.as_str()) {
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
        let items = list
            .as_sequence()
            .filter(|s| (2..=MAX_SWEEP_POINTS).contains(&s.len()))
            .ok_or_else(|| {
                self.err(
                    &field,
                    format!("expected a list of 2 to {MAX_SWEEP_POINTS} values"),
                )
                .with_hint(hint)
            })?;
        let mut values = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let f = format!("{field}[{i}]");
            let value = match parameter {
                SweepParameter::Vus => item
                    .as_u64()
                    .filter(|&n| (1..=u64::from(MAX_VUS)).contains(&n))
                    .map(|n| n as f64)
                    .ok_or_else(|| {
                        self.err(
                            &f,
                            format!("expected a whole number of virtual users from 1 to {MAX_VUS}"),
                        )
                    })?,
                SweepParameter::Rate => as_text(item)
                    .ok_or_else(|| "expected a rate, e.g. 200/s".to_string())
                    .and_then(|t| parse_rate(&t))
                    .and_then(|r| {
                        if r > 0.0 && r <= MAX_RATE {
                            Ok(r)
                        } else {
                            Err(format!("a sweep rate is above 0 and at most {MAX_RATE}/s"))
                        }
                    })
                    .map_err(|m| self.err(&f, m))?,
            };
            if values.last().is_some_and(|&last| value <= last) {
                return Err(self.err(&f, "sweep values must be increasing"));
            }
            values.push(value);
        }
        Ok(SweepSpec { parameter, values })
    }
}
