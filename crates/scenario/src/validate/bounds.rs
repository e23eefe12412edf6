//! The limits of `crate::limits` applied to a resolved scenario, and the checks that a run
//! would do something: the same for a file, for flags and for every study variant.

use super::Ctx;
use crate::error::ScenarioError;
use crate::limits::*;
use crate::model::*;
use crate::units::format_duration;
use std::time::Duration;

pub(super) fn scenario(s: &Scenario, shorthand: bool, ctx: &Ctx) -> Result<(), ScenarioError> {
    if s.defaults.timeout.is_zero() {
        return Err(ctx.err("defaults.timeout", "the timeout must be above zero"));
    }
    if s.defaults.max_body == 0 {
        return Err(ctx
            .err(
                "defaults.max_body",
                "0 bytes: every response with a body would fail as `body_too_large`",
            )
            .with_hint("give the largest body to read, e.g. `max_body: 10MB` (the default is 16MB), or leave it out"));
    }
    if s.defaults.max_body > MAX_BODY {
        return Err(ctx.err(
            "defaults.max_body",
            too_many("bytes", s.defaults.max_body, "1TiB"),
        ));
    }
    load(&s.load, ctx)?;
    if let Some(problem) = s.warmup_problem() {
        return Err(ctx
            .err("warmup", problem)
            .with_hint("shorten `warmup` or lengthen the load"));
    }
    steps(s, shorthand, ctx)?;
    if s.data.len() > MAX_NAMES {
        return Err(ctx.err("data", too_many("data sets", s.data.len(), MAX_NAMES)));
    }
    for d in &s.data {
        if d.columns.len() > MAX_NAMES {
            return Err(ctx.err(
                &format!("data.{}", d.name),
                too_many("columns", d.columns.len(), MAX_NAMES),
            ));
        }
    }
    let captures = s.capture_names().len();
    if captures > MAX_NAMES {
        return Err(ctx.err("flows", too_many("capture names", captures, MAX_NAMES)));
    }
    Ok(())
}

/// Stages, VUs, rates, arrivals and counts of the load; a load that would send nothing.
fn load(load: &Load, ctx: &Ctx) -> Result<(), ScenarioError> {
    match load {
        Load::Closed(c) => closed_load(c, ctx),
        Load::Open(o) => open_load(o, ctx),
        Load::Burst(b) => {
            if b.count == 0 || b.count > MAX_BURST {
                return Err(ctx.err("load.count", format!("must be between 1 and {MAX_BURST}")));
            }
            positive(b.max_duration, &["load.max_duration", "load.duration"], ctx)
        }
    }
}

/// A closed model: its VUs, its iteration counts and how long it may run.
fn closed_load(c: &ClosedLoad, ctx: &Ctx) -> Result<(), ScenarioError> {
    stage_count(c.stages.len(), ctx)?;
    if c.start_vus > MAX_VUS {
        return Err(ctx.err_at(
            &["load.start_vus", "load.vus"],
            too_many("VUs", c.start_vus, MAX_VUS),
        ));
    }
    for (i, stage) in c.stages.iter().enumerate() {
        if stage.vus > MAX_VUS {
            return Err(ctx.err_at(
                &[&format!("load.stages[{i}].vus"), "load.vus"],
                too_many("VUs", stage.vus, MAX_VUS),
            ));
        }
    }
    if c.max_vus() == 0 {
        return Err(ctx.err("load.stages", "no stage has a VU: nothing would be sent"));
    }
    let iterations = [
        ("load.iterations", c.iterations_per_vu),
        ("load.shared_iterations", c.shared_iterations),
    ];
    for (field, n) in iterations {
        match n {
            Some(0) => return Err(ctx.err(field, "must be at least 1")),
            Some(n) if n > MAX_ITERATIONS => {
                return Err(ctx.err(field, too_many("iterations", n, MAX_ITERATIONS)))
            }
            _ => {}
        }
    }
    if c.iterations_per_vu.is_some() || c.shared_iterations.is_some() {
        positive(c.max_duration, &["load.max_duration", "load.duration"], ctx)?;
    }
    run_length(
        c.stages.iter().map(|s| s.duration),
        &["load.duration", "load.stages"],
        ctx,
    )
}

/// An open model: its rates, its limits, and the arrivals they plan.
fn open_load(o: &OpenLoad, ctx: &Ctx) -> Result<(), ScenarioError> {
    stage_count(o.stages.len(), ctx)?;
    open_rates(o, ctx)?;
    if o.max_in_flight == 0 || o.max_in_flight > MAX_IN_FLIGHT {
        return Err(ctx.err(
            "load.max_in_flight",
            format!("must be between 1 and {MAX_IN_FLIGHT}"),
        ));
    }
    if o.batch_window > OpenLoad::MAX_BATCH_WINDOW {
        return Err(ctx
            .err(
                "load.batch_window",
                format!(
                    "{} is wider than the widest batch window, {}",
                    format_duration(o.batch_window),
                    format_duration(OpenLoad::MAX_BATCH_WINDOW)
                ),
            )
            .with_hint("give 0 to start each arrival at its own time, or a window of at most 10ms (the default is 800us)"));
    }
    match o.max_arrivals {
        Some(0) => return Err(ctx.err("load.requests", "must be at least 1")),
        Some(n) if n > MAX_ITERATIONS => {
            return Err(ctx.err("load.requests", too_many("requests", n, MAX_ITERATIONS)))
        }
        _ => {}
    }
    run_length(
        o.stages.iter().map(|s| s.duration),
        &["load.duration", "load.stages"],
        ctx,
    )?;
    planned_arrivals(o, ctx)
}

/// Every stage's rate and the rate it ramps to.
fn open_rates(o: &OpenLoad, ctx: &Ctx) -> Result<(), ScenarioError> {
    for (i, stage) in o.stages.iter().enumerate() {
        for (key, rate) in [("rate", Some(stage.rate)), ("ramp_to", stage.ramp_to)] {
            let Some(rate) = rate else { continue };
            if !rate.is_finite() || rate < 0.0 {
                return Err(ctx.err_at(
                    &[&format!("load.stages[{i}].{key}"), "load.rate"],
                    "a rate is a number of arrivals per second ≥ 0",
                ));
            }
            if rate > MAX_RATE {
                return Err(ctx.err_at(
                    &[&format!("load.stages[{i}].{key}"), "load.rate"],
                    format!("{rate}/s is above the limit of {MAX_RATE}/s (10 ns between arrivals)"),
                ));
            }
        }
    }
    Ok(())
}

/// The arrivals the rates plan over the run: some, and not more than one run may hold.
fn planned_arrivals(o: &OpenLoad, ctx: &Ctx) -> Result<(), ScenarioError> {
    let planned = o.expected_arrivals();
    if planned > MAX_ARRIVALS {
        return Err(ctx
            .err_at(
                &["load.rate", "load.stages"],
                format!(
                    "{planned:.0} arrivals planned (rate × duration) is above the limit of {MAX_ARRIVALS:.0} per run"
                ),
            )
            .with_hint("lower the rate or shorten the run"));
    }
    if planned <= 0.0 {
        return Err(ctx.err_at(
            &["load.rate", "load.stages"],
            "every rate is 0: nothing would be sent",
        ));
    }
    if planned < 1.0 {
        return Err(ctx
            .err_at(
                &["load.rate", "load.stages"],
                format!("the rates plan {planned:.3} arrivals over the run (rate × duration), fewer than one: at most a request by chance would be sent"),
            )
            .with_hint("raise the rate or lengthen the run"));
    }
    Ok(())
}

fn stage_count(n: usize, ctx: &Ctx) -> Result<(), ScenarioError> {
    if n > MAX_STAGES {
        return Err(ctx.err("load.stages", too_many("stages", n, MAX_STAGES)));
    }
    Ok(())
}

fn positive(d: Duration, fields: &[&str], ctx: &Ctx) -> Result<(), ScenarioError> {
    if d.is_zero() {
        return Err(ctx.err_at(fields, "must be above zero"));
    }
    Ok(())
}

/// The stages together last more than zero and at most [`MAX_DURATION`].
fn run_length(
    stages: impl Iterator<Item = Duration>,
    fields: &[&str],
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    let mut stages = stages;
    let total = stages.try_fold(Duration::ZERO, |sum, d| sum.checked_add(d));
    match total {
        Some(t) if t.is_zero() => Err(ctx.err_at(
            fields,
            "the run would last 0s: nothing would be sent (give a duration above zero)",
        )),
        Some(t) if t < MIN_DURATION => Err(ctx.err_at(
            fields,
            format!(
                "the run would last {}: too short to measure anything (at least {}; e.g. `10s`)",
                if t < Duration::from_micros(1) {
                    "under 1µs".to_string()
                } else {
                    format_duration(t)
                },
                format_duration(MIN_DURATION)
            ),
        )),
        Some(t) if t <= MAX_DURATION => Ok(()),
        _ => Err(ctx.err_at(
            fields,
            "the stages together are longer than the limit of 720h (30 days) for a run",
        )),
    }
}

/// Request steps, `once` blocks, loops, per-step timeouts and checks.
fn steps(s: &Scenario, shorthand: bool, ctx: &Ctx) -> Result<(), ScenarioError> {
    let mut counts = Counts::default();
    for (i, flow) in s.flows.iter().enumerate() {
        let path = if shorthand {
            "steps".to_string()
        } else {
            format!("flows[{i}].steps")
        };
        walk(&flow.steps, &path, &mut counts, ctx)?;
        if matches!(s.load, Load::Closed(_)) && !waits_outside_once(&flow.steps) {
            return Err(ctx
                .err(
                    &path,
                    format!(
                        "every request of flow `{}` is inside `once:`: after the first iteration its VUs would loop doing nothing",
                        flow.name
                    ),
                )
                .with_hint("move a request (or a `think`) out of the `once:` block"));
        }
    }
    if counts.requests > MAX_REQUEST_STEPS {
        return Err(ctx.err(
            "flows",
            too_many("request steps", counts.requests, MAX_REQUEST_STEPS),
        ));
    }
    if counts.once > MAX_ONCE_BLOCKS {
        return Err(ctx.err(
            "flows",
            too_many("`once` blocks", counts.once, MAX_ONCE_BLOCKS),
        ));
    }
    Ok(())
}

#[derive(Default)]
struct Counts {
    requests: usize,
    once: usize,
}

fn walk(steps: &[Step], path: &str, counts: &mut Counts, ctx: &Ctx) -> Result<(), ScenarioError> {
    for (i, step) in steps.iter().enumerate() {
        let field = format!("{path}[{i}]");
        match step {
            Step::Request(r) => {
                counts.requests += 1;
                if r.timeout.is_some_and(|t| t.is_zero()) {
                    return Err(ctx.err(
                        &format!("{field}.timeout"),
                        "the timeout must be above zero",
                    ));
                }
                for c in &r.checks {
                    if matches!(c, Check::MaxLatency(d) if d.is_zero()) {
                        return Err(ctx.err(
                            &format!("{field}.check.max_latency"),
                            "must be above zero (a latency of 0 always fails)",
                        ));
                    }
                }
            }
            Step::Think(_) | Step::Ws(_) => {}
            Step::Loop { count, steps } => {
                if *count == 0 || *count > MAX_LOOP_COUNT {
                    return Err(ctx.err(
                        &format!("{field}.loop.count"),
                        format!("must be between 1 and {MAX_LOOP_COUNT}"),
                    ));
                }
                walk(steps, &format!("{field}.loop.steps"), counts, ctx)?;
            }
            Step::Once(steps) => {
                counts.once += 1;
                walk(steps, &format!("{field}.once"), counts, ctx)?;
            }
        }
    }
    Ok(())
}

/// True when the steps outside `once:` blocks include a request or a think time, so that a
/// VU's later iterations wait for something.
fn waits_outside_once(steps: &[Step]) -> bool {
    steps.iter().any(|s| match s {
        Step::Request(_) | Step::Ws(_) => true,
        Step::Think(t) => !t.max.is_zero(),
        Step::Loop { steps, .. } => waits_outside_once(steps),
        Step::Once(_) => false,
    })
}
