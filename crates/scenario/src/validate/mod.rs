//! Turns the file as written into a runnable [`Scenario`], checking what serde cannot.
//!
//! This file assembles the scenario (errors are located by [`Ctx`], in `crate::locate`);
//! each section has its own checks: `load`, `steps` (flows and their steps), `thresholds`,
//! `http` (version and shared connections), `grpc` (a `grpc:` step, with its `.proto` in
//! `grpc_proto` and its message in `grpc_message`); the target URL and source addresses are checked
//! by `crate::addresses`, which the model uses too. [`resolved`] is the one check every
//! scenario passes, whether it came from a file or from flags: the bounds of `crate::limits`
//! (`bounds`), headers and templates (`check_templates`).

mod bounds;
mod grpc;
mod grpc_message;
mod grpc_proto;
mod http;
mod load;
pub(crate) mod monitor;
mod outputs;
mod steps;
mod stream;
mod threshold_map;
mod thresholds;
mod ws;

pub(crate) use crate::locate::Ctx;

use self::thresholds::thresholds;
use crate::addresses::{check_target_credentials, parse_addresses};
use crate::error::ScenarioError;
use crate::model::*;
use crate::raw::*;
use load::load;
use std::time::Duration;
use steps::flows;

pub const DEFAULT_MAX_IN_FLIGHT: u32 = 10_000;
pub const DEFAULT_MAX_DURATION: Duration = Duration::from_secs(600);

/// `defaults.server_latency_header`: a header name, `Server-Timing`, or `none`.
fn server_latency(text: &str) -> Result<crate::ServerLatency, String> {
    let name = text.trim();
    if name.eq_ignore_ascii_case("none") || name.eq_ignore_ascii_case("off") {
        return Ok(crate::ServerLatency::Off);
    }
    if name.eq_ignore_ascii_case("server-timing") {
        return Ok(crate::ServerLatency::ServerTiming);
    }
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || name.len() > 64 || !name.bytes().all(token) {
        return Err(format!(
            "`{text}` is not a header name: write the response header that carries the server's time, e.g. `X-Response-Time` (values like `12ms`, `0.012s`, or a bare number of ms), `Server-Timing` (the default) or `none`"
        ));
    }
    Ok(crate::ServerLatency::Header(name.to_string()))
}

pub fn scenario(
    raw: RawScenario,
    ctx: &Ctx,
    default_name: &str,
) -> Result<Scenario, ScenarioError> {
    let (target, target_auth) = match raw.target {
        Some(t) => {
            let (url, auth) = check_target_credentials(&t).map_err(|m| ctx.err("target", m))?;
            (Some(url), auth)
        }
        None => (None, None),
    };
    let defaults = Defaults {
        timeout: raw.defaults.timeout.unwrap_or(DEFAULT_TIMEOUT),
        headers: raw.defaults.headers.into_iter().collect(),
        max_body: match raw.defaults.max_body {
            None => DEFAULT_MAX_BODY,
            Some(ByteSize::Bytes(n)) => {
                parse_size(&n.to_string()).map_err(|m| ctx.err("defaults.max_body", m))?
            }
            Some(ByteSize::Text(t)) => {
                parse_size(&t).map_err(|m| ctx.err("defaults.max_body", m))?
            }
        },
        server_latency: match raw.defaults.server_latency_header {
            None => crate::ServerLatency::ServerTiming,
            Some(h) => {
                server_latency(&h).map_err(|m| ctx.err("defaults.server_latency_header", m))?
            }
        },
        trace: raw.defaults.trace.unwrap_or(false),
    };
    let load = match raw.load {
        Some(l) => load(l, ctx)?,
        None => {
            return Err(ctx.err("load", "missing `load:` section").with_hint(
                "add e.g. `load: {model: closed, vus: 10, duration: 30s}` or `load: {model: open, rate: 100/s, duration: 30s}`",
            ))
        }
    };
    let base_dir = std::path::Path::new(ctx.file)
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let mut data = Vec::new();
    for (name, d) in raw.data {
        data.push(
            crate::data::load(&name, d, &base_dir)
                .map_err(|m| ctx.err(&format!("data.{name}"), m))?,
        );
    }
    let shorthand = raw.flows.is_empty();
    let flows = flows(raw.flows, raw.steps, target_auth.as_ref(), ctx)?;
    let thresholds = thresholds(&raw.thresholds, &flows, ctx)?;
    let source_addresses = match raw.source_addresses {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => {
            parse_addresses(&[s]).map_err(|m| ctx.err("source_addresses", m))?
        }
        Some(OneOrMany::Many(v)) => {
            parse_addresses(&v).map_err(|m| ctx.err("source_addresses", m))?
        }
    };
    let monitor = monitor::monitor(raw.monitor, ctx)?;
    let outputs = outputs::outputs(raw.outputs, ctx)?;
    let http = http::http(raw.http, raw.connections, ctx)?;
    let scenario = Scenario {
        name: raw.name.unwrap_or_else(|| default_name.to_string()),
        source: Some(ctx.file.to_string()),
        target,
        defaults,
        load,
        warmup: raw.warmup.unwrap_or(Duration::ZERO),
        thresholds,
        flows,
        connections: raw.connections.unwrap_or_default(),
        http,
        source_addresses,
        insecure: raw.insecure.unwrap_or(false),
        data,
        monitor,
        outputs,
    };
    resolved(&scenario, shorthand, ctx)?;
    Ok(scenario)
}

/// The checks every runnable scenario passes, from a file or from flags: bounds, headers,
/// templates. `shorthand`: the flows were written as top-level `steps:` (for error paths).
pub fn resolved(scenario: &Scenario, shorthand: bool, ctx: &Ctx) -> Result<(), ScenarioError> {
    bounds::scenario(scenario, shorthand, ctx)?;
    thresholds::windows(scenario, ctx)?;
    crate::check_templates::flows(
        &scenario.flows,
        shorthand,
        &scenario.defaults,
        &scenario.data,
        ctx,
    )
}

/// Parses `64KiB`, `1MiB`, `1MB`, `500` (bytes), at most [`MAX_BODY`](crate::limits::MAX_BODY).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let too_big = || format!("`{text}` is above the limit of 1TiB");
    let n: u64 = t[..split].parse().map_err(|e: std::num::ParseIntError| {
        if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
            too_big()
        } else {
            format!("invalid size `{text}`: expected e.g. 64KiB, 1MiB")
        }
    })?;
    let mult = match t[split..].trim() {
        "" | "B" => 1,
        "KiB" | "K" => 1024,
        "KB" | "kB" => 1000,
        "MiB" | "M" => 1024 * 1024,
        "MB" => 1_000_000,
        "GiB" | "G" => 1024 * 1024 * 1024,
        _ => return Err(format!("invalid size `{text}`: expected e.g. 64KiB, 1MiB")),
    };
    n.checked_mul(mult)
        .filter(|&bytes| bytes <= crate::limits::MAX_BODY)
        .ok_or_else(too_big)
}
