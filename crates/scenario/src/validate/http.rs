//! `http:`: which HTTP version requests speak, and whether VUs share multiplexed connections.

use super::Ctx;
use crate::error::ScenarioError;
use crate::limits::{MAX_SHARED_CONNECTIONS, MAX_STREAMS};
use crate::model::{ConnectionPolicy, HttpConfig, HttpVersion, DEFAULT_MAX_STREAMS};
use crate::raw::{RawHttp, Scalar};

/// The scenario's `http:` section, checked against its `connections:` policy.
pub(super) fn http(
    raw: Option<RawHttp>,
    policy: Option<ConnectionPolicy>,
    ctx: &Ctx,
) -> Result<HttpConfig, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(HttpConfig::default());
    };
    let version = match raw.version {
        Some(v) => version(v, "http.version", ctx)?,
        None => HttpVersion::Auto,
    };
    if let Some(n) = raw.connections {
        if !(1..=MAX_SHARED_CONNECTIONS).contains(&n) {
            return Err(ctx
                .err(
                    "http.connections",
                    format!("`{n}` shared connections: give 1 to {MAX_SHARED_CONNECTIONS}"),
                )
                .with_hint("leave `http.connections` out to give each VU its own connection"));
        }
        if let Some(p @ (ConnectionPolicy::None | ConnectionPolicy::PerVu)) = policy {
            let what = if p == ConnectionPolicy::None {
                "a new connection for every request"
            } else {
                "a connection per VU"
            };
            return Err(ctx
                .err(
                    "http.connections",
                    format!("`http.connections` shares connections between VUs, but `connections` asks for {what}"),
                )
                .with_hint("remove one of the two: `http.connections: N` multiplexes every request over N connections per origin"));
        }
    }
    let max_streams = raw.max_streams.unwrap_or(DEFAULT_MAX_STREAMS);
    if !(1..=MAX_STREAMS).contains(&max_streams) {
        return Err(ctx.err(
            "http.max_streams",
            format!("`{max_streams}` streams per connection: give 1 to {MAX_STREAMS}"),
        ));
    }
    if raw.max_streams.is_some() && raw.connections.is_none() {
        return Err(ctx
            .err(
                "http.max_streams",
                "`max_streams` limits the streams of shared connections, but `http.connections` is not set (a VU's own connection carries one request at a time)",
            )
            .with_hint("add e.g. `connections: 4` to `http:`"));
    }
    Ok(HttpConfig {
        version,
        connections: raw.connections,
        max_streams,
        client: Default::default(),
    })
}

/// A step's `http:`: only its version (connections belong to the whole scenario).
pub(super) fn step_version(
    raw: Option<RawHttp>,
    field: &str,
    ctx: &Ctx,
) -> Result<Option<HttpVersion>, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if raw.connections.is_some() || raw.max_streams.is_some() {
        let key = if raw.connections.is_some() {
            "connections"
        } else {
            "max_streams"
        };
        return Err(ctx
            .err(
                &format!("{field}.http.{key}"),
                format!("a step's `http:` can only choose `version`; `{key}` is set for the whole scenario"),
            )
            .with_hint(format!("move `{key}` to the top-level `http:` section")));
    }
    raw.version
        .map(|v| version(v, &format!("{field}.http.version"), ctx))
        .transpose()
}

fn version(raw: Scalar, field: &str, ctx: &Ctx) -> Result<HttpVersion, ScenarioError> {
    let text = raw.into_text();
    HttpVersion::parse(&text).ok_or_else(|| {
        ctx.err(field, format!("unknown HTTP version `{text}`"))
            .with_hint("use \"1.1\", \"2\" or auto (ALPN over TLS, HTTP/1.1 over plain text)")
    })
}
