//! Compiles a scenario once before the run: origins found (resolved later, when connecting),
//! requests compiled into programs and, when they hold no template, rendered once.
//!
//! A static request is rendered before the run, so a transport can keep its wire encoding
//! and send it with one `write` and no formatting — the main reason the generator's CPU per
//! request can match wrk's.

mod build;
mod data;
mod grpc;
pub(crate) mod reflect;
mod source_addresses;
mod ws;

pub use data::PreparedData;
pub use ws::{PreparedWs, PreparedWsAction};

use crate::inspect::CaptureKind;
use crate::origin::{host_header, split_url, Origin, SharedConnections};
use crate::render::{Esc, Piece, Pieces, Program};
use crate::request::RequestParts;
use crate::server_header::ServerHeader;
use loadlab_metrics::StepInfo;
pub use source_addresses::check_source_addresses;

use loadlab_scenario::template::{Names, Var};
use loadlab_scenario::{
    Capture, CaptureSource, Check, ConnectionPolicy, HttpVersion, Method, RequestStep, Scenario,
    Step, ThinkTime,
};
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub step: u16,
    pub origin: u16,
    pub method: Method,
    /// The request, rendered once, when it has no templates (the fast path).
    pub fixed: Option<RequestParts>,
    /// Bytes of `fixed`'s content (see `RequestParts::wire_size`).
    pub fixed_size: u64,
    /// The request as a program when it has templates; rendered for each request.
    pub program: Option<Program>,
    /// Ask the server to close the connection after each response (`connections: none`).
    pub close: bool,
    pub timeout: Duration,
    pub max_body: u64,
    pub captures: Vec<PreparedCapture>,
    pub checks: Vec<Check>,
    /// A `check: {status: ...}` replaces the 4xx/5xx-is-an-error rule.
    pub status_checked: bool,
    pub keep_headers: bool,
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
    /// A gRPC call (`grpc:` step): its body is encoded to protobuf after rendering.
    pub grpc: Option<Arc<crate::grpc::PreparedGrpc>>,
    /// A streamed response (`stream:`): read event by event, measured token by token.
    pub stream: Option<Arc<crate::stream::PreparedStream>>,
}

impl PreparedRequest {
    /// A static GET with no captures or checks.
    pub fn simple(
        step: u16,
        origin: u16,
        parts: RequestParts,
        timeout: Duration,
        max_body: u64,
    ) -> Self {
        Self {
            step,
            origin,
            method: Method::Get,
            fixed_size: parts.wire_size(),
            fixed: Some(parts),
            program: None,
            close: false,
            timeout,
            max_body,
            captures: Vec::new(),
            checks: Vec::new(),
            status_checked: false,
            keep_headers: false,
            keep_body: false,
            parse_json: false,
            data_sets: Vec::new(),
            server_header: ServerHeader::ServerTiming,
            trace: false,
            grpc: None,
            stream: None,
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
    /// A WebSocket session (an index into `PreparedScenario::sessions`).
    Ws(u16),
}

#[derive(Debug, Clone)]
pub struct PreparedFlow {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<FlowStep>,
}

#[derive(Debug, Clone)]
pub struct PreparedScenario {
    pub origins: Vec<Origin>,
    pub requests: Vec<PreparedRequest>,
    /// WebSocket sessions (`ws:` steps).
    pub sessions: Vec<PreparedWs>,
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

impl PreparedScenario {
    /// Some step reads its response as a stream (SSE and the like).
    pub fn streams(&self) -> bool {
        self.requests.iter().any(|r| r.stream.is_some())
    }
}

impl PreparedScenario {
    /// The HTTP/1.1 bytes request `index` sends for VU `vu` on its first iteration, before
    /// anything is captured (data sets at their first row): what a run would write on an
    /// HTTP/1.1 connection. Fails as the request would (`invalid_request`) when a value cannot
    /// go where it stands.
    pub fn render_first(&self, index: usize, vu: u64) -> Result<Vec<u8>, String> {
        let req = self
            .requests
            .get(index)
            .ok_or_else(|| format!("no request {index}"))?;
        let rendered;
        let parts = match (&req.fixed, &req.program) {
            (Some(parts), _) => parts,
            (None, Some(program)) => {
                rendered = program
                    .render_first_iteration(vu, &self.data.sets)
                    .map_err(|e| e.describe())?;
                &rendered
            }
            (None, None) => return Err(format!("request {index} has no content")),
        };
        let origin = &self.origins[req.origin as usize];
        let mut out = Vec::new();
        crate::http::h1::encode(
            &req.rendered(parts, tokio::time::Instant::now()),
            origin.host_header.as_bytes(),
            &mut out,
        );
        Ok(out)
    }
}

impl PreparedRequest {
    /// This request with `parts` rendered for it, timing out at `deadline`.
    pub fn rendered<'a>(
        &'a self,
        parts: &'a RequestParts,
        deadline: tokio::time::Instant,
    ) -> crate::request::RenderedRequest<'a> {
        crate::request::RenderedRequest {
            step: self.step,
            origin: self.origin,
            method: self.method,
            parts,
            // A traced request differs every time (its `traceparent`): never cached.
            fixed: self.fixed.is_some() && !self.trace,
            close: self.close,
            server: &self.server_header,
            max_body: self.max_body,
            deadline,
            grpc: self.grpc.is_some(),
        }
    }
}
