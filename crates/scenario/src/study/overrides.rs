//! Variants and sweep points applied to a scenario: YAML overrides merged over the document,
//! a sweep value set on every stage, a constant rate for capacity steps.

use super::{StudyDocument, SweepParameter, VariantSpec};
use crate::error::ScenarioError;
use crate::model::{Load, Scenario};
use serde_yaml_ng::Value;
use std::time::Duration;

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
    /// The scenario with a variant's overrides merged in.
    pub fn variant_scenario(&self, variant: &VariantSpec) -> Result<Scenario, ScenarioError> {
        if variant.overrides.as_mapping().is_some_and(|m| m.is_empty()) {
            return Ok(self.scenario.clone());
        }
        // Only the scenario's own sections: the `study:` section (with every variant) would
        // make each variant's parse as long as the study, and validation quadratic in it.
        let mut doc = self.doc.clone();
        if let Value::Mapping(m) = &mut doc {
            m.remove("study");
            m.remove("capacity");
        }
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
    let (max_in_flight, max_in_flight_given) = match &scenario.load {
        Load::Open(o) => (o.max_in_flight, o.max_in_flight_given),
        _ => (crate::validate::DEFAULT_MAX_IN_FLIGHT, false),
    };
    let (poisson, batch_window) = match &scenario.load {
        Load::Open(o) => (o.poisson, o.batch_window),
        _ => (false, crate::model::OpenLoad::DEFAULT_BATCH_WINDOW),
    };
    scenario.load = Load::Open(crate::model::OpenLoad {
        stages: vec![crate::model::RateStage {
            duration,
            rate,
            ramp_to: None,
        }],
        poisson,
        max_in_flight,
        max_in_flight_given,
        max_arrivals: None,
        batch_window,
    });
}
