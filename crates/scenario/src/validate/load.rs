//! The `load:` section: the model (closed, open, burst), its stages and their limits.

use super::{Ctx, DEFAULT_MAX_DURATION, DEFAULT_MAX_IN_FLIGHT};
use crate::error::ScenarioError;
use crate::model::*;
use crate::raw::*;

pub(super) fn load(raw: RawLoad, ctx: &Ctx) -> Result<Load, ScenarioError> {
    match raw.model {
        ModelKind::Closed => closed(raw, ctx),
        ModelKind::Open => open(raw, ctx),
        ModelKind::Burst => burst(raw, ctx),
    }
}

/// The error for a key of `load:` that another model takes.
fn misplaced(ctx: &Ctx, field: &str, model: &str) -> ScenarioError {
    ctx.err(
        &format!("load.{field}"),
        format!("`{field}` does not apply to the {model} model"),
    )
}

/// `model: closed`: VUs, constant (`vus`) or staged (`stages`), for a duration or a number
/// of iterations.
fn closed(mut raw: RawLoad, ctx: &Ctx) -> Result<Load, ScenarioError> {
    for (f, set) in [
        ("rate", raw.rate.is_some()),
        ("max_in_flight", raw.max_in_flight.is_some()),
        ("arrivals", raw.arrivals.is_some()),
        ("batch_window", raw.batch_window.is_some()),
        ("count", raw.count.is_some()),
    ] {
        if set {
            return Err(misplaced(ctx, f, "closed").with_hint(
                "the closed model takes `vus` with `duration`, `iterations` or `stages`",
            ));
        }
    }
    let stages = match (raw.stages.take(), raw.vus) {
        (Some(_), Some(_)) => {
            return Err(ctx.err("load.vus", "give either `stages` or `vus`, not both"))
        }
        (Some(stages), None) => {
            let stages = vu_stages(stages, ctx)?;
            for (field, set) in [
                ("iterations", raw.iterations.is_some()),
                ("shared_iterations", raw.shared_iterations.is_some()),
            ] {
                if set {
                    return Err(ctx.err(
                        &format!("load.{field}"),
                        format!("`{field}` goes with `vus`, not with `stages`"),
                    ));
                }
            }
            stages
        }
        (None, Some(vus)) => constant_vus(&raw, vus, ctx)?,
        (None, None) => {
            return Err(ctx
                .err("load", "the closed model needs `vus` or `stages`")
                .with_hint("e.g. `load: {model: closed, vus: 10, duration: 30s}`"))
        }
    };
    let start_vus = if raw.vus.is_some() {
        stages[0].vus
    } else {
        raw.start_vus.unwrap_or(0)
    };
    if raw.pace.is_some_and(|p| p.is_zero()) {
        return Err(ctx
            .err("load.pace", "`pace` must be above zero")
            .with_hint("e.g. `pace: 1s`: each VU starts an iteration at most once a second"));
    }
    Ok(Load::Closed(ClosedLoad {
        start_vus,
        stages,
        iterations_per_vu: raw.iterations,
        shared_iterations: raw.shared_iterations,
        max_duration: raw.max_duration.unwrap_or(DEFAULT_MAX_DURATION),
        pace: raw.pace,
    }))
}

/// Closed-model `stages:`, each a `duration` and the VU count reached at its end.
fn vu_stages(stages: Vec<RawStage>, ctx: &Ctx) -> Result<Vec<VuStage>, ScenarioError> {
    let mut out = Vec::new();
    for (i, s) in stages.into_iter().enumerate() {
        let field = format!("load.stages[{i}]");
        if s.rate.is_some() || s.ramp_to.is_some() {
            return Err(ctx
                .err(&field, "a closed-model stage takes `vus`, not `rate`")
                .with_hint("use `model: open` for arrival rates"));
        }
        let duration = s
            .duration
            .ok_or_else(|| ctx.err(&field, "stage needs a `duration`"))?;
        let vus = s.vus.ok_or_else(|| {
            ctx.err(
                &field,
                "stage needs `vus` (the VU count reached at its end)",
            )
        })?;
        out.push(VuStage { duration, vus });
    }
    if out.is_empty() {
        return Err(ctx.err("load.stages", "at least one stage is needed"));
    }
    Ok(out)
}

/// Closed-model `vus:`: one stage, as long as `duration`, or bounded by `max_duration` when
/// iterations end the run.
fn constant_vus(raw: &RawLoad, vus: u32, ctx: &Ctx) -> Result<Vec<VuStage>, ScenarioError> {
    if vus == 0 {
        return Err(ctx.err("load.vus", "need at least 1 VU"));
    }
    if raw.iterations.is_some() && raw.shared_iterations.is_some() {
        return Err(ctx.err(
            "load.shared_iterations",
            "give either `iterations` (per VU) or `shared_iterations` (all VUs together), not both",
        ));
    }
    let work = raw.iterations.or(raw.shared_iterations);
    match (raw.duration, work) {
        (Some(d), _) => Ok(vec![VuStage { duration: d, vus }]),
        (None, Some(_)) => Ok(vec![VuStage {
            duration: raw.max_duration.unwrap_or(DEFAULT_MAX_DURATION),
            vus,
        }]),
        (None, None) => Err(ctx
            .err(
                "load",
                "the closed model with `vus` needs `duration` or `iterations`",
            )
            .with_hint("e.g. `load: {model: closed, vus: 10, duration: 30s}`")),
    }
}

/// `model: open`: arrivals at a constant (`rate`) or staged (`stages`) rate.
fn open(raw: RawLoad, ctx: &Ctx) -> Result<Load, ScenarioError> {
    for (f, set) in [
        ("vus", raw.vus.is_some()),
        ("start_vus", raw.start_vus.is_some()),
        ("iterations", raw.iterations.is_some()),
        ("shared_iterations", raw.shared_iterations.is_some()),
        ("count", raw.count.is_some()),
        ("pace", raw.pace.is_some()),
    ] {
        if set {
            return Err(misplaced(ctx, f, "open").with_hint("the open model takes `rate` with `duration`, or `stages` of `{duration, rate}`; concurrency is bounded by `max_in_flight`"));
        }
    }
    let stages = match (raw.stages, raw.rate) {
        (Some(_), Some(_)) => {
            return Err(ctx.err("load.rate", "give either `stages` or `rate`, not both"))
        }
        (Some(stages), None) => rate_stages(stages, ctx)?,
        (None, Some(rate)) => {
            let duration = raw
                .duration
                .ok_or_else(|| ctx.err("load", "the open model with `rate` needs a `duration`"))?;
            vec![RateStage {
                duration,
                rate,
                ramp_to: None,
            }]
        }
        (None, None) => {
            return Err(ctx
                .err("load", "the open model needs `rate` or `stages`")
                .with_hint("e.g. `load: {model: open, rate: 100/s, duration: 30s}`"))
        }
    };
    let max_in_flight = raw.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT);
    Ok(Load::Open(OpenLoad {
        stages,
        poisson: raw.arrivals == Some(Arrivals::Poisson),
        max_in_flight,
        max_in_flight_given: raw.max_in_flight.is_some(),
        max_arrivals: None,
        batch_window: raw.batch_window.unwrap_or(OpenLoad::DEFAULT_BATCH_WINDOW),
    }))
}

/// Open-model `stages:`, each a `duration` and a `rate` (ramping to `ramp_to` if given).
fn rate_stages(stages: Vec<RawStage>, ctx: &Ctx) -> Result<Vec<RateStage>, ScenarioError> {
    let mut out = Vec::new();
    for (i, s) in stages.into_iter().enumerate() {
        let field = format!("load.stages[{i}]");
        if s.vus.is_some() {
            return Err(ctx
                .err(&field, "an open-model stage takes `rate`, not `vus`")
                .with_hint("use `model: closed` for virtual users"));
        }
        let duration = s
            .duration
            .ok_or_else(|| ctx.err(&field, "stage needs a `duration`"))?;
        let rate = s
            .rate
            .ok_or_else(|| ctx.err(&field, "stage needs a `rate`, e.g. 100/s"))?;
        out.push(RateStage {
            duration,
            rate,
            ramp_to: s.ramp_to,
        });
    }
    if out.is_empty() {
        return Err(ctx.err("load.stages", "at least one stage is needed"));
    }
    Ok(out)
}

/// `model: burst`: `count` iterations at once.
fn burst(raw: RawLoad, ctx: &Ctx) -> Result<Load, ScenarioError> {
    for (f, set) in [
        ("vus", raw.vus.is_some()),
        ("rate", raw.rate.is_some()),
        ("stages", raw.stages.is_some()),
        ("iterations", raw.iterations.is_some()),
        ("shared_iterations", raw.shared_iterations.is_some()),
        ("pace", raw.pace.is_some()),
        ("batch_window", raw.batch_window.is_some()),
    ] {
        if set {
            return Err(misplaced(ctx, f, "burst")
                .with_hint("the burst model takes `count` (requests released at once)"));
        }
    }
    let count = raw.count.ok_or_else(|| {
        ctx.err("load", "the burst model needs `count`")
            .with_hint("e.g. `load: {model: burst, count: 1000}`")
    })?;
    Ok(Load::Burst(BurstLoad {
        count,
        max_duration: raw
            .max_duration
            .or(raw.duration)
            .unwrap_or(DEFAULT_MAX_DURATION),
    }))
}
