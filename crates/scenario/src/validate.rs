//! Turns the file as written into a runnable [`Scenario`], checking what serde cannot.

use crate::error::{ErrorLocation, ScenarioError};
use crate::locate::PathIndex;
use crate::model::*;
use crate::raw::*;
use crate::suggest::closest;
use crate::threshold::{Scope, Threshold};
use crate::units::parse_duration;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

pub const DEFAULT_MAX_IN_FLIGHT: u32 = 10_000;
pub const DEFAULT_MAX_DURATION: Duration = Duration::from_secs(600);

/// Context for locating errors: the file name and the position index of its YAML.
pub struct Ctx<'a> {
    pub file: &'a str,
    pub index: &'a PathIndex,
}

impl Ctx<'_> {
    pub fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        let location = match self.index.find(field) {
            Some((line, column)) => ErrorLocation::File {
                path: self.file.to_string(),
                line,
                column,
            },
            None => ErrorLocation::File {
                path: self.file.to_string(),
                line: 1,
                column: 1,
            },
        };
        ScenarioError::at(location, field, message)
    }
}

pub fn scenario(
    raw: RawScenario,
    ctx: &Ctx,
    default_name: &str,
) -> Result<Scenario, ScenarioError> {
    let target = match raw.target {
        Some(t) => Some(check_target(&t).map_err(|m| ctx.err("target", m))?),
        None => None,
    };
    let defaults = Defaults {
        timeout: raw.defaults.timeout.unwrap_or(DEFAULT_TIMEOUT),
        headers: raw.defaults.headers.into_iter().collect(),
        max_body: match raw.defaults.max_body {
            None => DEFAULT_MAX_BODY,
            Some(ByteSize::Bytes(n)) => n,
            Some(ByteSize::Text(t)) => {
                parse_size(&t).map_err(|m| ctx.err("defaults.max_body", m))?
            }
        },
    };
    if defaults.timeout.is_zero() {
        return Err(ctx.err("defaults.timeout", "the timeout must be above zero"));
    }
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
    let flows = flows(raw.flows, raw.steps, ctx)?;
    crate::check_templates::flows(&flows, shorthand, &defaults, &data, ctx)?;
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
    Ok(Scenario {
        name: raw.name.unwrap_or_else(|| default_name.to_string()),
        source: Some(ctx.file.to_string()),
        target,
        defaults,
        load,
        warmup: raw.warmup.unwrap_or(Duration::ZERO),
        thresholds,
        flows,
        connections: raw.connections.unwrap_or_default(),
        source_addresses,
        insecure: raw.insecure.unwrap_or(false),
        data,
    })
}

/// Checks a base URL; returns it without a trailing slash.
pub fn check_target(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim())
        .map_err(|e| format!("invalid URL `{text}`: {e}; expected e.g. http://127.0.0.1:8080"))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(format!(
            "unsupported scheme `{}` in `{text}`: use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("URL `{text}` has no host"));
    }
    Ok(text.trim().trim_end_matches('/').to_string())
}

fn load(raw: RawLoad, ctx: &Ctx) -> Result<Load, ScenarioError> {
    let misplaced = |field: &str, model: &str| {
        ctx.err(
            &format!("load.{field}"),
            format!("`{field}` does not apply to the {model} model"),
        )
    };
    match raw.model {
        ModelKind::Closed => {
            for (f, set) in [
                ("rate", raw.rate.is_some()),
                ("max_in_flight", raw.max_in_flight.is_some()),
                ("arrivals", raw.arrivals.is_some()),
                ("count", raw.count.is_some()),
            ] {
                if set {
                    return Err(misplaced(f, "closed").with_hint(
                        "the closed model takes `vus` with `duration`, `iterations` or `stages`",
                    ));
                }
            }
            let stages = match (raw.stages, raw.vus) {
                (Some(_), Some(_)) => {
                    return Err(ctx.err("load.vus", "give either `stages` or `vus`, not both"))
                }
                (Some(stages), None) => {
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
                    if raw.iterations.is_some() {
                        return Err(ctx.err(
                            "load.iterations",
                            "`iterations` goes with `vus`, not with `stages`",
                        ));
                    }
                    out
                }
                (None, Some(vus)) => {
                    if vus == 0 {
                        return Err(ctx.err("load.vus", "need at least 1 VU"));
                    }
                    match (raw.duration, raw.iterations) {
                        (Some(d), _) => vec![VuStage { duration: d, vus }],
                        (None, Some(_)) => vec![VuStage {
                            duration: raw.max_duration.unwrap_or(DEFAULT_MAX_DURATION),
                            vus,
                        }],
                        (None, None) => {
                            return Err(ctx
                                .err(
                                    "load",
                                    "the closed model with `vus` needs `duration` or `iterations`",
                                )
                                .with_hint("e.g. `load: {model: closed, vus: 10, duration: 30s}`"))
                        }
                    }
                }
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
            Ok(Load::Closed(ClosedLoad {
                start_vus,
                stages,
                iterations_per_vu: raw.iterations,
                shared_iterations: None,
                max_duration: raw.max_duration.unwrap_or(DEFAULT_MAX_DURATION),
            }))
        }
        ModelKind::Open => {
            for (f, set) in [
                ("vus", raw.vus.is_some()),
                ("start_vus", raw.start_vus.is_some()),
                ("iterations", raw.iterations.is_some()),
                ("count", raw.count.is_some()),
            ] {
                if set {
                    return Err(misplaced(f, "open").with_hint("the open model takes `rate` with `duration`, or `stages` of `{duration, rate}`; concurrency is bounded by `max_in_flight`"));
                }
            }
            let stages = match (raw.stages, raw.rate) {
                (Some(_), Some(_)) => {
                    return Err(ctx.err("load.rate", "give either `stages` or `rate`, not both"))
                }
                (Some(stages), None) => {
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
                    out
                }
                (None, Some(rate)) => {
                    let duration = raw.duration.ok_or_else(|| {
                        ctx.err("load", "the open model with `rate` needs a `duration`")
                    })?;
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
            if max_in_flight == 0 {
                return Err(ctx.err("load.max_in_flight", "must be at least 1"));
            }
            Ok(Load::Open(OpenLoad {
                stages,
                poisson: raw.arrivals == Some(Arrivals::Poisson),
                max_in_flight,
                max_arrivals: None,
            }))
        }
        ModelKind::Burst => {
            for (f, set) in [
                ("vus", raw.vus.is_some()),
                ("rate", raw.rate.is_some()),
                ("stages", raw.stages.is_some()),
                ("iterations", raw.iterations.is_some()),
            ] {
                if set {
                    return Err(misplaced(f, "burst")
                        .with_hint("the burst model takes `count` (requests released at once)"));
                }
            }
            let count = raw.count.ok_or_else(|| {
                ctx.err("load", "the burst model needs `count`")
                    .with_hint("e.g. `load: {model: burst, count: 1000}`")
            })?;
            if count == 0 {
                return Err(ctx.err("load.count", "must be at least 1"));
            }
            Ok(Load::Burst(BurstLoad {
                count,
                max_duration: raw
                    .max_duration
                    .or(raw.duration)
                    .unwrap_or(DEFAULT_MAX_DURATION),
            }))
        }
    }
}

fn flows(
    raw_flows: Vec<RawFlow>,
    raw_steps: Vec<RawStep>,
    ctx: &Ctx,
) -> Result<Vec<Flow>, ScenarioError> {
    let raw_flows = match (raw_flows.is_empty(), raw_steps.is_empty()) {
        (false, false) => {
            return Err(ctx.err(
                "steps",
                "give either `flows` or top-level `steps`, not both",
            ))
        }
        (true, true) => {
            return Err(ctx
                .err("flows", "no flows: nothing to send")
                .with_hint("add e.g. `flows: [{name: main, steps: [{get: /health}]}]`"))
        }
        (false, true) => raw_flows
            .into_iter()
            .enumerate()
            .map(|(i, f)| (format!("flows[{i}]"), f))
            .collect::<Vec<_>>(),
        (true, false) => vec![(
            String::new(),
            RawFlow {
                name: Some("default".into()),
                weight: None,
                steps: raw_steps,
            },
        )],
    };
    let mut out: Vec<Flow> = Vec::new();
    for (path, raw) in raw_flows {
        let steps_path = if path.is_empty() {
            "steps".to_string()
        } else {
            format!("{path}.steps")
        };
        let name = raw.name.unwrap_or_else(|| format!("flow{}", out.len() + 1));
        if out.iter().any(|f| f.name == name) {
            return Err(ctx.err(
                &format!("{path}.name"),
                format!("duplicate flow name `{name}`"),
            ));
        }
        let mut steps = Vec::new();
        for (i, s) in raw.steps.into_iter().enumerate() {
            steps.push(step(s, &format!("{steps_path}[{i}]"), ctx)?);
        }
        let mut requests = Vec::new();
        crate::model::collect_requests(&steps, &mut requests);
        if requests.is_empty() {
            return Err(ctx.err(&steps_path, format!("flow `{name}` has no request step")));
        }
        out.push(Flow {
            name,
            weight: raw.weight.unwrap_or(1),
            steps,
        });
    }
    if out.iter().all(|f| f.weight == 0) {
        return Err(ctx.err("flows", "all flow weights are 0"));
    }
    Ok(out)
}

fn step(raw: RawStep, field: &str, ctx: &Ctx) -> Result<Step, ScenarioError> {
    let sends = [
        &raw.get,
        &raw.post,
        &raw.put,
        &raw.patch,
        &raw.delete,
        &raw.head,
        &raw.options,
    ]
    .iter()
    .any(|m| m.is_some());
    if let Some(l) = raw.loop_ {
        if sends || raw.think.is_some() || raw.once.is_some() {
            return Err(ctx
                .err(
                    field,
                    "a `loop` step cannot also send a request, think or hold `once`",
                )
                .with_hint("put the request inside `loop: {count: N, steps: [...]}`"));
        }
        if l.count == 0 {
            return Err(ctx.err(&format!("{field}.loop.count"), "must be at least 1"));
        }
        let steps = sub_steps(l.steps, &format!("{field}.loop.steps"), ctx)?;
        return Ok(Step::Loop {
            count: l.count,
            steps,
        });
    }
    if let Some(once) = raw.once {
        if sends || raw.think.is_some() {
            return Err(ctx
                .err(field, "a `once` step cannot also send a request or think")
                .with_hint("write `- once: [ {post: /api/auth/signin, ...} ]`"));
        }
        return Ok(Step::Once(sub_steps(once, &format!("{field}.once"), ctx)?));
    }
    let methods = [
        (Method::Get, raw.get),
        (Method::Post, raw.post),
        (Method::Put, raw.put),
        (Method::Patch, raw.patch),
        (Method::Delete, raw.delete),
        (Method::Head, raw.head),
        (Method::Options, raw.options),
    ];
    let mut chosen: Vec<(Method, String)> = methods
        .into_iter()
        .filter_map(|(m, u)| u.map(|u| (m, u)))
        .collect();
    if let Some(think) = raw.think {
        if !chosen.is_empty() || raw.json.is_some() || raw.body.is_some() || raw.form.is_some() {
            return Err(ctx
                .err(field, "a `think` step cannot also send a request")
                .with_hint("put `think` in a step of its own"));
        }
        return Ok(Step::Think(
            think_time(think).map_err(|m| ctx.err(&format!("{field}.think"), m))?,
        ));
    }
    if chosen.len() != 1 {
        let msg = if chosen.is_empty() {
            "a step needs one of get, post, put, patch, delete, head, options, think, loop or once"
        } else {
            "a step sends one request: give only one of get, post, put, patch, delete, head, options"
        };
        return Err(ctx
            .err(field, msg)
            .with_hint("e.g. `- get: /api/ping` or `- post: /api/users` with `json: {...}`"));
    }
    let (method, url) = chosen.remove(0);
    let url_field = format!("{field}.{}", method.as_str().to_ascii_lowercase());
    if url.starts_with("http://") || url.starts_with("https://") {
        let authority = url
            .split_once("://")
            .map_or("", |(_, r)| r.split(['/', '?']).next().unwrap_or(""));
        if crate::template::has_template(authority) {
            return Err(ctx
                .err(&url_field, "templates are not allowed in the host of a URL")
                .with_hint(
                    "connections are opened before the run: put variables in the path or query",
                ));
        }
        check_target(&url).map_err(|m| ctx.err(&url_field, m))?;
    } else if !url.starts_with('/') {
        return Err(ctx
            .err(
                &url_field,
                format!("`{url}` is neither a path starting with / nor an http(s) URL"),
            )
            .with_hint(format!("write `/{url}`")));
    }
    let body = match (raw.json, raw.body, raw.form) {
        (Some(j), None, None) => Some(Body::Json(j)),
        (None, Some(b), None) => Some(Body::Text(b)),
        (None, None, Some(f)) => Some(Body::Form(
            f.into_iter().map(|(k, v)| (k, v.into_text())).collect(),
        )),
        (None, None, None) => None,
        _ => {
            return Err(ctx.err(
                &format!("{field}.body"),
                "give only one of `json`, `body` or `form`",
            ))
        }
    };
    let mut captures = Vec::new();
    for (name, c) in raw.capture {
        let cfield = format!("{field}.capture.{name}");
        if !is_identifier(&name) {
            return Err(ctx
                .err(&cfield, format!("`{name}` is not a valid variable name"))
                .with_hint("use letters, digits and `_`, starting with a letter"));
        }
        let source = match c {
            RawCapture::JsonPath(p) => CaptureSource::JsonPath(
                crate::jsonpath::JsonPath::parse(&p).map_err(|m| ctx.err(&cfield, m))?,
            ),
            RawCapture::Header { header } => CaptureSource::Header(header),
            RawCapture::Regex { regex, group } => {
                let re = regex::Regex::new(&regex)
                    .map_err(|e| ctx.err(&cfield, format!("invalid regex: {e}")))?;
                let group = group.unwrap_or(if re.captures_len() > 1 { 1 } else { 0 });
                if group >= re.captures_len() {
                    return Err(ctx.err(
                        &cfield,
                        format!(
                            "the regex has {} group(s); group {group} does not exist",
                            re.captures_len() - 1
                        ),
                    ));
                }
                CaptureSource::Regex {
                    pattern: regex,
                    group,
                }
            }
        };
        captures.push(Capture { name, source });
    }
    let mut checks = Vec::new();
    if let Some(c) = raw.check {
        let cfield = format!("{field}.check");
        match c.status {
            Some(StatusSpec::One(s)) => checks.push(Check::Status(vec![s])),
            Some(StatusSpec::Many(v)) if !v.is_empty() => checks.push(Check::Status(v)),
            Some(StatusSpec::Many(_)) => {
                return Err(ctx.err(&format!("{cfield}.status"), "list at least one status"))
            }
            None => {}
        }
        if let Some(Check::Status(v)) = checks.first() {
            if let Some(bad) = v.iter().find(|s| !(100..=599).contains(*s)) {
                return Err(ctx.err(
                    &format!("{cfield}.status"),
                    format!("`{bad}` is not an HTTP status (100..599)"),
                ));
            }
        }
        for (path, expected) in c.json {
            let path = crate::jsonpath::JsonPath::parse(&path)
                .map_err(|m| ctx.err(&format!("{cfield}.json"), m))?;
            checks.push(Check::Json { path, expected });
        }
        if let Some(t) = c.body_contains {
            checks.push(Check::BodyContains(t));
        }
        for (name, value) in c.header {
            checks.push(Check::Header { name, value });
        }
        if let Some(d) = c.max_latency {
            checks.push(Check::MaxLatency(d));
        }
    }
    let name = raw
        .name
        .unwrap_or_else(|| format!("{} {}", method.as_str(), url));
    Ok(Step::Request(Box::new(RequestStep {
        name,
        group: raw.group,
        method,
        url,
        headers: raw.headers.into_iter().collect(),
        body,
        timeout: raw.timeout,
        query: raw
            .query
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
        tags: raw
            .tags
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
        captures,
        checks,
    })))
}

fn sub_steps(raw: Vec<RawStep>, field: &str, ctx: &Ctx) -> Result<Vec<Step>, ScenarioError> {
    if raw.is_empty() {
        return Err(ctx.err(field, "no steps"));
    }
    raw.into_iter()
        .enumerate()
        .map(|(i, s)| step(s, &format!("{field}[{i}]"), ctx))
        .collect()
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn think_time(spec: ThinkSpec) -> Result<ThinkTime, String> {
    match spec {
        ThinkSpec::Seconds(s) if s.is_finite() && s >= 0.0 => {
            let d = Duration::from_secs_f64(s);
            Ok(ThinkTime { min: d, max: d })
        }
        ThinkSpec::Seconds(_) => Err("think time must be a positive duration".into()),
        ThinkSpec::Text(t) => {
            if let Some((a, b)) = t.split_once("..") {
                let (min, max) = (parse_duration(a)?, parse_duration(b)?);
                if min > max {
                    return Err(format!(
                        "think range `{t}` runs backwards: write the shorter time first"
                    ));
                }
                Ok(ThinkTime { min, max })
            } else {
                let d = parse_duration(&t)?;
                Ok(ThinkTime { min: d, max: d })
            }
        }
    }
}

fn thresholds(raw: &[String], flows: &[Flow], ctx: &Ctx) -> Result<Vec<Threshold>, ScenarioError> {
    let mut requests = Vec::new();
    for f in flows {
        crate::model::collect_requests(&f.steps, &mut requests);
    }
    let steps: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    let groups: Vec<&str> = requests.iter().filter_map(|r| r.group.as_deref()).collect();
    let mut out = Vec::new();
    for (i, text) in raw.iter().enumerate() {
        let field = format!("thresholds[{i}]");
        let t = Threshold::parse(text).map_err(|m| ctx.err(&field, m))?;
        let (kind, name, known) = match &t.metric.scope {
            Scope::All => {
                out.push(t);
                continue;
            }
            Scope::Step(n) => ("step", n, &steps),
            Scope::Group(n) => ("group", n, &groups),
        };
        if !known.contains(&name.as_str()) {
            let mut err = ctx.err(&field, format!("no {kind} is named `{name}`"));
            if let Some(s) = closest(name, known.iter().copied()) {
                err = err.with_hint(format!("did you mean `{s}`?"));
            } else if !known.is_empty() {
                err = err.with_hint(format!("known {kind}s: {}", known.join(", ")));
            }
            return Err(err);
        }
        out.push(t);
    }
    Ok(out)
}

/// Parses `64KiB`, `1MiB`, `1MB`, `500` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..split]
        .parse()
        .map_err(|_| format!("invalid size `{text}`: expected e.g. 64KiB, 1MiB"))?;
    let mult = match t[split..].trim() {
        "" | "B" => 1,
        "KiB" | "K" => 1024,
        "KB" | "kB" => 1000,
        "MiB" | "M" => 1024 * 1024,
        "MB" => 1_000_000,
        "GiB" | "G" => 1024 * 1024 * 1024,
        _ => return Err(format!("invalid size `{text}`: expected e.g. 64KiB, 1MiB")),
    };
    Ok(n * mult)
}

/// Expands `127.0.0.1-127.0.0.16` ranges and single addresses.
pub fn parse_addresses(items: &[String]) -> Result<Vec<IpAddr>, String> {
    let mut out = Vec::new();
    for item in items.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        if let Some((a, b)) = item.split_once('-') {
            let bad =
                || format!("invalid address range `{item}`: expected e.g. 127.0.0.1-127.0.0.16");
            let a: Ipv4Addr = a.trim().parse().map_err(|_| bad())?;
            let b: Ipv4Addr = b.trim().parse().map_err(|_| bad())?;
            let (a, b) = (u32::from(a), u32::from(b));
            if b < a || b - a > 65_535 {
                return Err(bad());
            }
            out.extend((a..=b).map(|x| IpAddr::V4(Ipv4Addr::from(x))));
        } else {
            out.push(item.parse().map_err(|_| {
                format!("invalid address `{item}`: expected an IP such as 127.0.0.2")
            })?);
        }
    }
    Ok(out)
}
