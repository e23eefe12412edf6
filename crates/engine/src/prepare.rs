//! Compiles a scenario once before the run: origins resolved, requests serialized to bytes.
//!
//! Static requests are written as pre-built byte strings, so sending costs one `write` and no
//! formatting — the main reason the generator's CPU per request can match wrk's.

use crate::origin::{host_header, resolve, split_url, Origin};
use bytes::Bytes;
use loadlab_metrics::StepInfo;
use loadlab_scenario::{Body, ConnectionPolicy, Method, Scenario, Step, ThinkTime};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub step: u16,
    pub origin: u16,
    pub bytes: Bytes,
    /// HEAD responses have no body whatever their headers say.
    pub head: bool,
    pub timeout: Duration,
    pub max_body: u64,
}

#[derive(Debug, Clone)]
pub enum FlowStep {
    Request(u16),
    Think(ThinkTime),
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
    pub flows: Vec<PreparedFlow>,
    pub steps: Vec<StepInfo>,
    pub connections: ConnectionPolicy,
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
}

impl PreparedScenario {
    pub fn new(scenario: &Scenario) -> Result<Self, PrepareError> {
        let mut origins: Vec<Origin> = Vec::new();
        let mut requests = Vec::new();
        let mut steps = Vec::new();
        let mut flows = Vec::new();
        for flow in &scenario.flows {
            let mut flow_steps = Vec::new();
            for step in &flow.steps {
                let r = match step {
                    Step::Think(t) => {
                        flow_steps.push(FlowStep::Think(*t));
                        continue;
                    }
                    Step::Request(r) => r,
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
                let (tls, host, port, target) = split_url(&url).map_err(PrepareError::BadUrl)?;
                let origin = match origins
                    .iter()
                    .position(|o| o.key() == (tls, host.as_str(), port))
                {
                    Some(i) => i,
                    None => {
                        let addr = resolve(&host, port).map_err(|source| PrepareError::Dns {
                            host: host.clone(),
                            source,
                        })?;
                        origins.push(Origin {
                            tls,
                            host_header: host_header(&host, port, tls),
                            host,
                            port,
                            addr,
                        });
                        origins.len() - 1
                    }
                };
                let index =
                    u16::try_from(requests.len()).map_err(|_| PrepareError::TooManySteps)?;
                let mut headers = scenario.defaults.headers.clone();
                for (k, v) in &r.headers {
                    headers.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
                    headers.push((k.clone(), v.clone()));
                }
                let bytes = serialize_request(
                    r.method,
                    &target,
                    &origins[origin].host_header,
                    &headers,
                    r.body.as_ref(),
                    scenario.connections == ConnectionPolicy::None,
                );
                requests.push(PreparedRequest {
                    step: index,
                    origin: origin as u16,
                    bytes,
                    head: r.method == Method::Head,
                    timeout: r.timeout.unwrap_or(scenario.defaults.timeout),
                    max_body: scenario.defaults.max_body,
                });
                steps.push(StepInfo {
                    name: r.name.clone(),
                    group: r.group.clone(),
                });
                flow_steps.push(FlowStep::Request(index));
            }
            flows.push(PreparedFlow {
                name: flow.name.clone(),
                weight: flow.weight,
                steps: flow_steps,
            });
        }
        Ok(Self {
            origins,
            requests,
            flows,
            steps,
            connections: scenario.connections,
        })
    }
}

/// The complete HTTP/1.1 request as bytes.
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
