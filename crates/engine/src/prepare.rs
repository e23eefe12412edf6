//! Compiles a scenario once before the run: origins resolved, requests serialized to bytes.
//!
//! Static requests are written as pre-built byte strings, so sending costs one `write` and no
//! formatting — the main reason the generator's CPU per request can match wrk's.

use crate::origin::{host_header, resolve, split_url, Origin};
use crate::render::{Esc, Piece, Pieces, Program};
pub use crate::server_header::ServerHeader;
use bytes::Bytes;
use loadlab_metrics::StepInfo;
use loadlab_scenario::template::{Names, Var};
#[cfg(test)]
use loadlab_scenario::Body;
use loadlab_scenario::{
    CaptureSource, Check, ConnectionPolicy, DataSet, Method, RequestStep, Scenario, Step, ThinkTime,
};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub step: u16,
    pub origin: u16,
    /// The whole request when it has no templates (the fast path: one write, no formatting).
    pub bytes: Bytes,
    /// The request as a program when it has templates; `bytes` is then unused.
    pub program: Option<Program>,
    /// HEAD responses have no body whatever their headers say.
    pub head: bool,
    pub timeout: Duration,
    pub max_body: u64,
    pub captures: Vec<PreparedCapture>,
    pub checks: Vec<Check>,
    /// A `check: {status: ...}` replaces the 4xx/5xx-is-an-error rule.
    pub status_checked: bool,
    pub keep_head: bool,
    pub keep_body: bool,
    /// The body is parsed as JSON (a JSONPath capture or check).
    pub parse_json: bool,
    /// Data sets whose row this request reads (a row is taken at the first such request of
    /// an iteration).
    pub data_sets: Vec<u16>,
    /// Which response header carries the server's own time.
    pub server_header: ServerHeader,
    /// Send a W3C `traceparent` header (a new trace per request).
    pub trace: bool,
}

impl PreparedRequest {
    /// A static request with no captures or checks.
    pub fn simple(step: u16, origin: u16, bytes: Bytes, timeout: Duration, max_body: u64) -> Self {
        Self {
            step,
            origin,
            bytes,
            program: None,
            head: false,
            timeout,
            max_body,
            captures: Vec::new(),
            checks: Vec::new(),
            status_checked: false,
            keep_head: false,
            keep_body: false,
            parse_json: false,
            data_sets: Vec::new(),
            server_header: ServerHeader::ServerTiming,
            trace: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct PreparedCapture {
    pub name: String,
    /// Index into the VU's captured values.
    pub var: u16,
    pub source: CaptureKind,
}

#[derive(Debug, Clone)]
pub enum CaptureKind {
    JsonPath(loadlab_scenario::jsonpath::JsonPath),
    Header(String),
    Regex(regex::Regex, usize),
}

#[derive(Debug, Clone)]
pub enum FlowStep {
    Request(u16),
    Think(ThinkTime),
    /// Start of a loop: run the steps up to `LoopEnd` `count` times.
    Loop {
        count: u64,
    },
    /// End of a loop whose `Loop` op is at `start`.
    LoopEnd {
        start: u32,
    },
    /// Start of `once` block `id`; `end` is the index of its `OnceEnd`.
    Once {
        id: u8,
        end: u32,
    },
    OnceEnd {
        id: u8,
    },
}

#[derive(Debug, Clone)]
pub struct PreparedFlow {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<FlowStep>,
}

/// Data sets and their shared cursors (one per set, shared by every worker thread).
#[derive(Debug, Clone)]
pub struct PreparedData {
    pub sets: Arc<Vec<DataSet>>,
    pub cursors: Arc<Vec<AtomicU64>>,
    /// `unique` rows of this process are `offset + n · stride` (a segment of a plan takes
    /// every `stride`-th row, so no two segments use the same one).
    pub offset: u64,
    pub stride: u64,
}

impl Default for PreparedData {
    fn default() -> Self {
        Self {
            sets: Arc::default(),
            cursors: Arc::default(),
            offset: 0,
            stride: 1,
        }
    }
}

#[derive(Debug, Clone)]
pub struct PreparedScenario {
    pub origins: Vec<Origin>,
    pub requests: Vec<PreparedRequest>,
    pub flows: Vec<PreparedFlow>,
    pub steps: Vec<StepInfo>,
    pub connections: ConnectionPolicy,
    pub data: PreparedData,
}

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("step `{step}` uses a relative path `{path}` but the scenario has no target: set `target:` in the file or pass --target URL")]
    NoTarget { step: String, path: String },
    #[error("{0}")]
    BadUrl(String),
    #[error("cannot resolve host `{host}`: {source} (check the spelling of the target URL)")]
    Dns {
        host: String,
        source: std::io::Error,
    },
    #[error("the scenario has more than 65535 request steps")]
    TooManySteps,
    #[error("the scenario has more than 64 `once` blocks")]
    TooManyOnce,
    #[error("step `{step}`: {message}")]
    Template { step: String, message: String },
    #[error("source address {addr} {reason}\n  hint: {hint}")]
    SourceAddress {
        addr: IpAddr,
        reason: String,
        hint: &'static str,
    },
}

struct Builder<'a> {
    scenario: &'a Scenario,
    names: Names<'a>,
    origins: Vec<Origin>,
    requests: Vec<PreparedRequest>,
    steps: Vec<StepInfo>,
    once_blocks: u8,
    capture_names: &'a [String],
}

impl PreparedScenario {
    pub fn new(scenario: &Scenario) -> Result<Self, PrepareError> {
        let capture_names = scenario.capture_names();
        let mut b = Builder {
            scenario,
            names: Names {
                data: &scenario.data,
                captures: &capture_names,
                available: None,
            },
            origins: Vec::new(),
            requests: Vec::new(),
            steps: Vec::new(),
            once_blocks: 0,
            capture_names: &capture_names,
        };
        let mut flows = Vec::new();
        for flow in &scenario.flows {
            let mut ops = Vec::new();
            b.steps_into(&flow.steps, &mut ops)?;
            flows.push(PreparedFlow {
                name: flow.name.clone(),
                weight: flow.weight,
                steps: ops,
            });
        }
        let targets: Vec<SocketAddr> = b.origins.iter().map(|o| o.addr).collect();
        check_source_addresses(&scenario.source_addresses, &targets)?;
        let n = scenario.data.len();
        Ok(Self {
            origins: b.origins,
            requests: b.requests,
            flows,
            steps: b.steps,
            connections: scenario.connections,
            data: PreparedData {
                sets: Arc::new(scenario.data.clone()),
                cursors: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
                offset: 0,
                stride: 1,
            },
        })
    }
}

impl PreparedScenario {
    /// The bytes request `index` sends for VU `vu` on its first iteration, before anything is
    /// captured (data sets at their first row): what a run would write on the wire. Fails as
    /// the request would (`invalid_request`) when a value cannot go where it stands.
    pub fn render_first(&self, index: usize, vu: u64) -> Result<Vec<u8>, String> {
        let req = self
            .requests
            .get(index)
            .ok_or_else(|| format!("no request {index}"))?;
        let Some(program) = &req.program else {
            return Ok(req.bytes.to_vec());
        };
        let mut out = Vec::new();
        let state = crate::vu::VuState::new(vu);
        program
            .render(
                &mut out,
                &mut crate::render::RenderCx {
                    vu: &state,
                    data: &self.data.sets,
                    rng: &mut fastrand::Rng::with_seed(vu),
                },
            )
            .map_err(|e| e.describe())?;
        Ok(out)
    }
}

impl Builder<'_> {
    fn steps_into(&mut self, steps: &[Step], ops: &mut Vec<FlowStep>) -> Result<(), PrepareError> {
        for step in steps {
            match step {
                Step::Think(t) => ops.push(FlowStep::Think(*t)),
                Step::Loop { count, steps } => {
                    let start = ops.len() as u32;
                    ops.push(FlowStep::Loop { count: *count });
                    self.steps_into(steps, ops)?;
                    ops.push(FlowStep::LoopEnd { start });
                }
                Step::Once(steps) => {
                    if self.once_blocks >= 64 {
                        return Err(PrepareError::TooManyOnce);
                    }
                    let id = self.once_blocks;
                    self.once_blocks += 1;
                    let at = ops.len();
                    ops.push(FlowStep::Once { id, end: 0 });
                    self.steps_into(steps, ops)?;
                    let end = ops.len() as u32;
                    ops.push(FlowStep::OnceEnd { id });
                    ops[at] = FlowStep::Once { id, end };
                }
                Step::Request(r) => {
                    let index = self.request(r)?;
                    ops.push(FlowStep::Request(index));
                }
            }
        }
        Ok(())
    }

    fn request(&mut self, r: &RequestStep) -> Result<u16, PrepareError> {
        let scenario = self.scenario;
        let template_err = |message: String| PrepareError::Template {
            step: r.name.clone(),
            message,
        };
        let url = if r.url.starts_with('/') {
            let base = scenario
                .target
                .as_ref()
                .ok_or_else(|| PrepareError::NoTarget {
                    step: r.name.clone(),
                    path: r.url.clone(),
                })?;
            format!("{}{}", base.trim_end_matches('/'), r.url)
        } else {
            r.url.clone()
        };
        let (tls, host, port, target) = split_templated_url(&url)?;
        let origin = match self
            .origins
            .iter()
            .position(|o| o.key() == (tls, host.as_str(), port))
        {
            Some(i) => i,
            None => {
                let addr = resolve(&host, port).map_err(|source| PrepareError::Dns {
                    host: host.clone(),
                    source,
                })?;
                self.origins.push(Origin {
                    tls,
                    host_header: host_header(&host, port, tls),
                    host,
                    port,
                    addr,
                });
                self.origins.len() - 1
            }
        };
        let index = u16::try_from(self.requests.len()).map_err(|_| PrepareError::TooManySteps)?;
        let mut headers = scenario.defaults.headers.clone();
        for (k, v) in &r.headers {
            headers.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
            headers.push((k.clone(), v.clone()));
        }
        // Credentials from the URL, for the origin they were written for only (as curl: an
        // explicit `Authorization` header wins).
        if let Some(auth) = &r.auth {
            let for_here =
                loadlab_scenario::credentials::origin_of(&url).as_deref() == Some(auth.origin());
            if for_here
                && !headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            {
                headers.push(("Authorization".into(), auth.authorization()));
            }
        }
        let close = scenario.connections == ConnectionPolicy::None;
        let program = build_program(
            r,
            &target,
            &self.origins[origin].host_header,
            &headers,
            close,
            &self.names,
        )
        .map_err(template_err)?;
        let (bytes, program) = if program.has_vars() {
            (Bytes::new(), Some(program))
        } else {
            let mut out = Vec::new();
            let vu = crate::vu::VuState::new(0);
            let mut rng = fastrand::Rng::with_seed(0);
            program
                .render(
                    &mut out,
                    &mut crate::render::RenderCx {
                        vu: &vu,
                        data: &scenario.data,
                        rng: &mut rng,
                    },
                )
                .map_err(|e| template_err(e.describe()))?;
            (Bytes::from(out), None)
        };
        let mut data_sets: Vec<u16> = Vec::new();
        if let Some(p) = &program {
            for piece in p.head.iter().chain(p.body.iter().flatten()) {
                if let Piece::Var(Var::Data { set, .. }, _) = piece {
                    if !data_sets.contains(set) {
                        data_sets.push(*set);
                    }
                }
            }
        }
        let mut captures = Vec::new();
        for c in &r.captures {
            let var = self
                .capture_names
                .iter()
                .position(|n| *n == c.name)
                .unwrap_or(0) as u16;
            let source = match &c.source {
                CaptureSource::JsonPath(p) => CaptureKind::JsonPath(p.clone()),
                CaptureSource::Header(h) => CaptureKind::Header(h.clone()),
                CaptureSource::Regex { pattern, group } => CaptureKind::Regex(
                    regex::Regex::new(pattern).map_err(|e| template_err(e.to_string()))?,
                    *group,
                ),
            };
            captures.push(PreparedCapture {
                name: c.name.clone(),
                var,
                source,
            });
        }
        let keep_head = r.captures.iter().any(|c| !c.source.needs_body())
            || r.checks.iter().any(|c| matches!(c, Check::Header { .. }));
        let keep_body = r.captures.iter().any(|c| c.source.needs_body())
            || r.checks.iter().any(Check::needs_body);
        let parse_json = r
            .captures
            .iter()
            .any(|c| matches!(c.source, CaptureSource::JsonPath(_)))
            || r.checks.iter().any(|c| matches!(c, Check::Json { .. }));
        self.requests.push(PreparedRequest {
            step: index,
            origin: origin as u16,
            bytes,
            program,
            head: r.method == Method::Head,
            timeout: r.timeout.unwrap_or(scenario.defaults.timeout),
            max_body: scenario.defaults.max_body,
            captures,
            status_checked: r.checks.iter().any(|c| matches!(c, Check::Status(_))),
            checks: r.checks.clone(),
            keep_head,
            keep_body,
            parse_json,
            data_sets,
            server_header: ServerHeader::of(&scenario.defaults.server_latency),
            trace: scenario.defaults.trace,
        });
        self.steps.push(StepInfo {
            name: r.name.clone(),
            group: r.group.clone(),
            tags: r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            checks: r.checks.iter().map(Check::describe).collect(),
        });
        Ok(index)
    }
}

/// Every source address must be an address of this machine, of the family of every target:
/// otherwise each connection would fail to bind at once, all run long. Checked by binding it.
pub fn check_source_addresses(
    sources: &[IpAddr],
    targets: &[SocketAddr],
) -> Result<(), PrepareError> {
    const NOT_LOCAL: &str = "give addresses of this machine's interfaces (`ip addr` lists them; on Linux all of 127.0.0.0/8 is local: --source-addrs 127.0.0.1-127.0.0.16)";
    for &addr in sources {
        if let Some(t) = targets.iter().find(|t| t.is_ipv4() != addr.is_ipv4()) {
            return Err(PrepareError::SourceAddress {
                addr,
                reason: format!(
                    "is {} but the target {t} is {}: a connection cannot go from one to the other",
                    family(addr.is_ipv4()),
                    family(t.is_ipv4())
                ),
                hint: "give source addresses of the target's family",
            });
        }
        if addr.is_unspecified() || addr.is_multicast() {
            return Err(PrepareError::SourceAddress {
                addr,
                reason: "is not the address of one interface".into(),
                hint: NOT_LOCAL,
            });
        }
        if let Err(e) = std::net::UdpSocket::bind(SocketAddr::new(addr, 0)) {
            let reason = if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) {
                "is not an address of this machine".to_string()
            } else {
                format!("cannot be bound: {e}")
            };
            return Err(PrepareError::SourceAddress {
                addr,
                reason,
                hint: NOT_LOCAL,
            });
        }
    }
    Ok(())
}

fn family(v4: bool) -> &'static str {
    if v4 {
        "IPv4"
    } else {
        "IPv6"
    }
}

/// Splits a URL whose path may hold templates (the host may not: checked at load time).
fn split_templated_url(url: &str) -> Result<(bool, String, u16, String), PrepareError> {
    let scheme_end = url.find("://").map(|i| i + 3).unwrap_or(0);
    let path_at = url[scheme_end..]
        .find(['/', '?'])
        .map(|i| i + scheme_end)
        .unwrap_or(url.len());
    let (tls, host, port, _) = split_url(&url[..path_at]).map_err(PrepareError::BadUrl)?;
    let target = if path_at == url.len() {
        "/".to_string()
    } else if url[path_at..].starts_with('?') {
        format!("/{}", &url[path_at..])
    } else {
        url[path_at..].to_string()
    };
    Ok((tls, host, port, target))
}

/// The request as a program: request line, headers and body, templates compiled.
fn build_program(
    r: &RequestStep,
    target: &str,
    host: &str,
    headers: &[(String, String)],
    close: bool,
    names: &Names,
) -> Result<Program, String> {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut p = Pieces::default();
    p.lit(r.method.as_str().as_bytes());
    p.lit(b" ");
    p.target(&crate::render::template(target, names)?);
    let mut sep = if target.contains('?') { b'&' } else { b'?' };
    for (k, v) in &r.query {
        p.lit(&[sep]);
        sep = b'&';
        let mut key = Vec::new();
        crate::render::escape_into(&mut key, k.as_bytes(), Esc::Component);
        p.lit(&key);
        p.lit(b"=");
        p.template(&crate::render::template(v, names)?, Esc::Component);
    }
    p.lit(b" HTTP/1.1\r\n");
    if !has("host") {
        p.lit(b"Host: ");
        p.lit(host.as_bytes());
        p.lit(b"\r\n");
    }
    if !has("user-agent") {
        p.lit(concat!("User-Agent: loadlab/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes());
    }
    for (k, v) in headers {
        p.lit(k.as_bytes());
        p.lit(b": ");
        p.template(&crate::render::template(v, names)?, Esc::Header);
        p.lit(b"\r\n");
    }
    if close {
        p.lit(b"Connection: close\r\n");
    }
    let body = match &r.body {
        Some(b) => {
            let (pieces, content_type) = crate::render::body(b, names)?;
            if !has("content-type") {
                p.lit(b"Content-Type: ");
                p.lit(content_type.as_bytes());
                p.lit(b"\r\n");
            }
            Some(pieces)
        }
        None => None,
    };
    let tail: &'static [u8] = if matches!(r.method, Method::Post | Method::Put | Method::Patch) {
        b"Content-Length: 0\r\n\r\n"
    } else {
        b"\r\n"
    };
    Ok(Program {
        head: p.finish(),
        body,
        tail,
    })
}

/// The complete HTTP/1.1 request as bytes (a request without templates).
#[cfg(test)]
pub fn serialize_request(
    method: Method,
    target: &str,
    host: &str,
    headers: &[(String, String)],
    body: Option<&Body>,
    close: bool,
) -> Bytes {
    let body_bytes: Option<(Vec<u8>, &str)> = body.map(|b| match b {
        Body::Json(v) => (
            serde_json::to_vec(v).unwrap_or_default(),
            "application/json",
        ),
        Body::Text(t) => (t.clone().into_bytes(), "text/plain; charset=utf-8"),
        Body::Form(f) => {
            let mut out = Vec::new();
            for (i, (k, v)) in f.iter().enumerate() {
                if i > 0 {
                    out.push(b'&');
                }
                crate::render::escape_into(&mut out, k.as_bytes(), Esc::Component);
                out.push(b'=');
                crate::render::escape_into(&mut out, v.as_bytes(), Esc::Component);
            }
            (out, "application/x-www-form-urlencoded")
        }
    });
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !has("host") {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !has("user-agent") {
        out.extend_from_slice(
            concat!("User-Agent: loadlab/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes(),
        );
    }
    for (k, v) in headers {
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    if let Some((bytes, content_type)) = &body_bytes {
        if !has("content-type") {
            out.extend_from_slice(b"Content-Type: ");
            out.extend_from_slice(content_type.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", bytes.len()).as_bytes());
        out.extend_from_slice(bytes);
    } else {
        if matches!(method, Method::Post | Method::Put | Method::Patch) {
            out.extend_from_slice(b"Content-Length: 0\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_requests() {
        let get = serialize_request(Method::Get, "/a?b=1", "127.0.0.1:8080", &[], None, false);
        assert_eq!(
            std::str::from_utf8(&get).unwrap(),
            concat!(
                "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadlab/",
                env!("CARGO_PKG_VERSION"),
                "\r\n\r\n"
            )
        );
        let post = serialize_request(
            Method::Post,
            "/api/users",
            "h",
            &[("Authorization".into(), "Bearer x".into())],
            Some(&Body::Json(serde_json::json!({"a": 1}))),
            true,
        );
        let text = std::str::from_utf8(&post).unwrap();
        assert!(text.contains("Authorization: Bearer x\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(text.ends_with("Content-Length: 7\r\n\r\n{\"a\":1}"));
    }
}
