//! What a study will run: its variants (or sweep points) as resolved scenarios, how often,
//! in what order — and the fingerprint that tells whether a resumed study is still the same.

use loadlab_metrics::{LatencyBasis, MetricId};
use loadlab_scenario::study::{apply_sweep, Order, StudyDocument, SweepSpec};
use loadlab_scenario::{Scenario, ScenarioError};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A variant of the study with the scenario it runs.
#[derive(Debug, Clone)]
pub struct PlannedVariant {
    pub name: String,
    pub scenario: Scenario,
    /// The sweep parameter's value, for a sweep point.
    pub sweep_value: Option<f64>,
}

/// A resolved study: everything needed to run it and to analyse it.
#[derive(Debug, Clone)]
pub struct StudyPlan {
    pub name: String,
    pub scenario_file: Option<String>,
    pub variants: Vec<PlannedVariant>,
    pub repeat: usize,
    pub order: Order,
    pub cooldown: Duration,
    pub retry_invalid: usize,
    /// Unmeasured warm-up runs of every variant before the measured runs.
    pub warmup_runs: usize,
    pub equivalence: f64,
    /// Compared metrics; `None`: the default set.
    pub metrics: Option<Vec<MetricId>>,
    /// The latency every compared latency metric is read on (`study.compare_on`).
    pub compare_on: LatencyBasis,
    pub compare: Vec<(String, String)>,
    pub sweep: Option<SweepSpec>,
    /// Each repetition a round of this many segment processes (`study --segments N`).
    pub segments: Option<u32>,
}

/// One planned run: repetition `rep` of variant `variant` (index into `variants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub variant: usize,
    pub rep: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("{file}: no `study:` section\n  hint: add e.g.\n    study:\n      repeat: 10\n      variants:\n        - {{ name: baseline }}\n        - {{ name: stress, load: {{ model: closed, vus: 75, duration: 1m }} }}")]
    NoStudy { file: String },
    #[error("{file}: study.sweep: {message}")]
    Sweep { file: String, message: String },
    #[error("{file}: study.metrics: {message}\n  hint: write e.g. latency_ms.p95, errors.rate, requests.rate, step.NAME.latency.p99 (docs/studies.md lists them)")]
    Metric { file: String, message: String },
}

impl StudyPlan {
    /// Resolves a scenario file's `study:` section; `target` overrides every variant's
    /// target and `repeat` the section's repetitions.
    pub fn from_document(
        doc: &StudyDocument,
        target: Option<&str>,
        repeat: Option<usize>,
    ) -> Result<StudyPlan, PlanError> {
        let spec = doc.study()?.ok_or_else(|| PlanError::NoStudy {
            file: doc.file().to_string(),
        })?;
        let base = doc.scenario()?;
        // Metric names are checked before any run; whether the runs measured them, after.
        let metrics = spec
            .metrics
            .as_ref()
            .map(|names| {
                names
                    .iter()
                    .map(|n| {
                        n.parse::<MetricId>().map_err(|e| PlanError::Metric {
                            file: doc.file().to_string(),
                            message: e.to_string(),
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let mut variants = Vec::new();
        if let Some(sweep) = &spec.sweep {
            for &value in &sweep.values {
                let mut scenario = base.clone();
                apply_sweep(&mut scenario, sweep.parameter, value).map_err(|message| {
                    PlanError::Sweep {
                        file: doc.file().to_string(),
                        message,
                    }
                })?;
                variants.push(PlannedVariant {
                    name: format!("{}={}", sweep.parameter.as_str(), fmt_value(value)),
                    scenario,
                    sweep_value: Some(value),
                });
            }
        } else if spec.variants.is_empty() {
            variants.push(PlannedVariant {
                name: base.name.clone(),
                scenario: base.clone(),
                sweep_value: None,
            });
        } else {
            for v in &spec.variants {
                variants.push(PlannedVariant {
                    name: v.name.clone(),
                    scenario: doc.variant_scenario(v)?,
                    sweep_value: None,
                });
            }
        }
        if let Some(t) = target {
            for v in &mut variants {
                v.scenario
                    .set_target(t)
                    .map_err(|m| ScenarioError::flag("--target", m, None))?;
            }
        }
        Ok(StudyPlan {
            name: base.name.clone(),
            scenario_file: Some(doc.file().to_string()),
            variants,
            repeat: repeat.unwrap_or(spec.repeat).max(1),
            order: spec.order,
            cooldown: spec.cooldown,
            retry_invalid: spec.retry_invalid,
            warmup_runs: spec.warmup_runs,
            equivalence: spec.equivalence,
            metrics,
            compare_on: spec.compare_on,
            compare: spec.compare.clone(),
            sweep: spec.sweep.clone(),
            segments: None,
        })
    }

    /// The planned runs in order: interleaved A B A B ... or sequential A A ... B B ...
    pub fn slots(&self) -> Vec<Slot> {
        let mut slots = Vec::new();
        match self.order {
            Order::Interleaved => {
                for rep in 0..self.repeat {
                    for variant in 0..self.variants.len() {
                        slots.push(Slot { variant, rep });
                    }
                }
            }
            Order::Sequential => {
                for variant in 0..self.variants.len() {
                    for rep in 0..self.repeat {
                        slots.push(Slot { variant, rep });
                    }
                }
            }
        }
        slots
    }

    /// Fingerprint of everything that decides what the study runs (each variant's resolved
    /// scenario, repetitions, order, re-runs, segments per round): a resumed study must have
    /// the same.
    pub fn fingerprint(&self) -> String {
        let mut h = Sha256::new();
        for v in &self.variants {
            h.update(v.name.as_bytes());
            h.update([0]);
            h.update(v.scenario.fingerprint().as_bytes());
            h.update(format!("{:?}", v.sweep_value).as_bytes());
        }
        h.update(
            format!(
                "{}|{}|{}|{:?}",
                self.repeat,
                self.order.as_str(),
                self.retry_invalid,
                self.cooldown
            )
            .as_bytes(),
        );
        // Only when given: the fingerprints of studies in one process stay what they were.
        if let Some(n) = self.segments {
            h.update(format!("|segments={n}").as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `35`, `12.5`.
pub fn fmt_value(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
