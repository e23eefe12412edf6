//! A scenario as the run record keeps it: a JSON description of what was executed (secrets
//! left out), and a fingerprint that tells whether two processes run the same plan.
//!
//! The description is for people and reports: header values (but for a few harmless ones),
//! request bodies and URL credentials are never written, so a record can be shared. The
//! fingerprint covers everything that changes what is sent (secrets included, hashed), and
//! leaves out only where the file was read from and what the process monitors.

use crate::model::{Body, Load, Scenario, Step};
use crate::units::format_duration;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Header names whose values are shown; every other value is written as `***`.
const HARMLESS_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "connection",
    "content-type",
    "user-agent",
];

impl Scenario {
    /// Hex SHA-256 of everything that decides what this scenario sends and when.
    pub fn fingerprint(&self) -> String {
        let mut whole = self.clone();
        whole.source = None;
        // What each process watches is its own business: segments on different machines
        // monitor different things and still run one plan.
        whole.monitor = Default::default();
        // Where the rows came from is not part of the plan (the rows are).
        for d in &mut whole.data {
            d.csv = None;
        }
        let digest = Sha256::digest(format!("{whole:?}").as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The resolved scenario as JSON, with secrets left out.
    pub fn describe(&self) -> Value {
        json!({
            "name": self.name,
            "target": self.target.as_deref().map(redact_url),
            "defaults": {
                "timeout": format_duration(self.defaults.timeout),
                "max_body": self.defaults.max_body,
                "server_latency_header": self.defaults.server_latency.as_str(),
                "trace": self.defaults.trace,
                "headers": headers(&self.defaults.headers),
            },
            "load": load(&self.load),
            "warmup": format_duration(self.warmup),
            "thresholds": self.thresholds.iter().map(|t| t.expr.clone()).collect::<Vec<_>>(),
            "connections": format!("{:?}", self.connections).to_lowercase(),
            "http": {
                "version": self.http.version.as_str(),
                "connections": self.http.connections,
                "max_streams": self.http.max_streams,
            },
            "source_addresses": self.source_addresses.len(),
            "insecure": self.insecure,
            "monitor": serde_json::to_value(&self.monitor).unwrap_or_default(),
            "data": self.data.iter().map(|d| json!({
                "name": d.name,
                "columns": d.columns,
                "rows": d.rows.len(),
                "pick": d.pick.as_str(),
                "split": d.split_by_segment().then_some("segments"),
            })).collect::<Vec<_>>(),
            "flows": self.flows.iter().map(|f| json!({
                "name": f.name,
                "weight": f.weight,
                "steps": steps(&f.steps),
            })).collect::<Vec<_>>(),
        })
    }
}

/// `http://admin:***@host/` for a URL with a password; other URLs as they are.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let authority_end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| i + scheme_end);
    let authority = &url[scheme_end..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let user = authority[..at].split(':').next().unwrap_or("");
            format!(
                "{}{user}:***@{}{}",
                &url[..scheme_end],
                &authority[at + 1..],
                &url[authority_end..]
            )
        }
        None => url.to_string(),
    }
}

fn headers(list: &[(String, String)]) -> Value {
    let mut map = serde_json::Map::new();
    for (k, v) in list {
        let shown = if HARMLESS_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
            v.clone()
        } else {
            "***".to_string()
        };
        map.insert(k.clone(), Value::String(shown));
    }
    Value::Object(map)
}

fn load(load: &Load) -> Value {
    match load {
        Load::Closed(c) => json!({
            "model": "closed",
            "start_vus": c.start_vus,
            "stages": c.stages.iter().map(|s| json!({
                "duration": format_duration(s.duration), "vus": s.vus,
            })).collect::<Vec<_>>(),
            "iterations_per_vu": c.iterations_per_vu,
            "shared_iterations": c.shared_iterations,
            "max_duration": format_duration(c.max_duration),
            "pace": c.pace.map(format_duration),
        }),
        Load::Open(o) => json!({
            "model": "open",
            "stages": o.stages.iter().map(|s| json!({
                "duration": format_duration(s.duration), "rate": s.rate, "ramp_to": s.ramp_to,
            })).collect::<Vec<_>>(),
            "poisson": o.poisson,
            "max_in_flight": o.max_in_flight,
            "max_arrivals": o.max_arrivals,
            "batch_window": format_duration(o.batch_window),
        }),
        Load::Burst(b) => json!({
            "model": "burst",
            "count": b.count,
            "max_duration": format_duration(b.max_duration),
        }),
    }
}

fn steps(list: &[Step]) -> Vec<Value> {
    list.iter()
        .map(|s| match s {
            Step::Request(r) => json!({
                "name": r.name,
                "method": r.method.as_str(),
                "url": redact_url(&r.url),
                "group": r.group,
                "tags": r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                "headers": headers(&r.headers),
                "query": r.query.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
                "body": r.body.as_ref().map(|b| match b {
                    Body::Json(_) => "json",
                    Body::Text(_) => "text",
                    Body::Form(_) => "form",
                }),
                "timeout": r.timeout.map(format_duration),
                "checks": r.checks.iter().map(|c| c.describe()).collect::<Vec<_>>(),
                "captures": r.captures.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "http_version": r.http_version.map(|v| v.as_str()),
                "grpc": r.grpc.as_ref().map(|g| json!({
                    "call": g.full_name(),
                    "proto": g.proto,
                    "types": if g.descriptor.is_some() { "proto" } else { "reflection" },
                    "server_streaming": g.server_streaming(),
                })),
                "stream": r.stream.as_ref().map(|s| s.describe()),
            }),
            Step::Think(t) => json!({
                "think": if t.max > t.min {
                    format!("{}..{}", format_duration(t.min), format_duration(t.max))
                } else {
                    format_duration(t.min)
                },
            }),
            Step::Loop {
                count,
                steps: inner,
            } => json!({ "loop": { "count": count, "steps": steps(inner) } }),
            Step::Once(inner) => json!({ "once": steps(inner) }),
            Step::Ws(w) => json!({
                "name": w.name,
                "ws": redact_url(&w.url),
                "group": w.group,
                "headers": headers(&w.headers),
                "actions": w.actions.len(),
                "expects": w.expects().map(|e| e.name.clone()).collect::<Vec<_>>(),
                "captures": w.captures().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "close_after": w.close_after.map(format_duration),
                "timeout": w.timeout.map(format_duration),
                "max_message": w.max_message,
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted() {
        for (url, want) in [
            ("http://admin:pw@h:8080/a?b", "http://admin:***@h:8080/a?b"),
            ("https://tok@h/", "https://tok:***@h/"),
            ("http://h/a@b", "http://h/a@b"),
            ("/api/x", "/api/x"),
        ] {
            assert_eq!(redact_url(url), want);
        }
    }

    #[test]
    fn descriptions_keep_secrets_out_and_fingerprints_tell_plans_apart() {
        let text = r#"
name: t
target: http://user:secret@127.0.0.1:8080
defaults: { headers: { Authorization: "Bearer abc123", Accept: application/json } }
load: { model: open, rate: 10/s, duration: 2s }
flows:
  - steps:
      - { post: /login, json: { password: hunter2 } }
"#;
        let a = Scenario::parse(text, "t.yaml").unwrap();
        let shown = a.describe().to_string();
        for secret in ["secret", "abc123", "hunter2"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("application/json"));
        let b = Scenario::parse(&text.replace("hunter2", "hunter3"), "elsewhere.yaml").unwrap();
        assert_ne!(
            a.fingerprint(),
            b.fingerprint(),
            "a different body is a different plan"
        );
        let c = Scenario::parse(text, "elsewhere.yaml").unwrap();
        assert_eq!(
            a.fingerprint(),
            c.fingerprint(),
            "where the file lives does not matter"
        );
        assert_eq!(a.fingerprint().len(), 64);
    }
}
