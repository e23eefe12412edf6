//! vegeta's results, as `vegeta encode --to json` (one JSON object a line: `timestamp` RFC
//! 3339 with ns, `latency` ns, `code`, `bytes_out`, `bytes_in`, `error`, `method`, `url`,
//! `attack`) or `--to csv` (no header: unix ns, code, latency ns, bytes out, bytes in, error,
//! body base64, attack, seq, method, url, headers). A request's step is its method and URL
//! (vegeta has no labels); its attack name, when given, is a tag. vegeta paces requests at a
//! rate: the run is an open model, its rate the one the requests were started at.

use crate::builder::RecordBuilder;
use crate::lines::Lines;
use crate::problems::Malformed;
use crate::sample::{status_error, Request, StepKey};
use crate::time::rfc3339_us;
use crate::ReadError;
use loadlab_metrics::{ErrorKind, LoadModel};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

#[derive(Deserialize)]
struct JsonResult<'a> {
    #[serde(borrow)]
    timestamp: Cow<'a, str>,
    latency: i64,
    #[serde(default)]
    code: u16,
    #[serde(default)]
    bytes_out: u64,
    #[serde(default)]
    bytes_in: u64,
    #[serde(borrow, default)]
    error: Cow<'a, str>,
    #[serde(borrow, default)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    url: Cow<'a, str>,
    #[serde(borrow, default)]
    attack: Cow<'a, str>,
}

/// One result, whichever encoding it came in.
struct Hit<'a> {
    start_us: i64,
    latency_ns: i64,
    code: u16,
    bytes_out: u64,
    bytes_in: u64,
    error: &'a str,
    method: &'a str,
    url: &'a str,
    attack: &'a str,
}

/// The error kind of vegeta's error text (Go's net errors, as vegeta stores them).
fn error_kind(code: u16, error: &str) -> ErrorKind {
    if let Some(kind) = status_error(code) {
        return kind;
    }
    let e = error.to_ascii_lowercase();
    if e.contains("connection refused") {
        ErrorKind::ConnectRefused
    } else if e.contains("timeout") || e.contains("deadline exceeded") {
        ErrorKind::Timeout
    } else if e.contains("reset by peer") || e.contains("broken pipe") || e.contains("eof") {
        ErrorKind::Reset
    } else if e.contains("no such host") {
        ErrorKind::Dns
    } else if e.contains("tls") || e.contains("x509") {
        ErrorKind::Tls
    } else if code != 0 {
        ErrorKind::Protocol
    } else {
        ErrorKind::Io
    }
}

struct Steps {
    index: HashMap<String, usize>,
    key: String,
}

impl Steps {
    fn of(&mut self, hit: &Hit, builder: &mut RecordBuilder) -> usize {
        self.key.clear();
        for part in [hit.method, hit.url, hit.attack] {
            self.key.push_str(part);
            self.key.push('\u{1f}');
        }
        if let Some(&i) = self.index.get(self.key.as_str()) {
            return i;
        }
        let i = builder.step(&StepKey {
            name: format!("{} {}", hit.method, hit.url).trim().to_string(),
            group: None,
            tags: (!hit.attack.is_empty())
                .then(|| format!("attack={}", hit.attack))
                .into_iter()
                .collect(),
        });
        self.index.insert(self.key.clone(), i);
        i
    }
}

fn add(hit: &Hit, steps: &mut Steps, builder: &mut RecordBuilder) -> Result<(), ReadError> {
    let step = steps.of(hit, builder);
    // vegeta counts a result as a success when its code is 2xx or 3xx.
    let failed = !hit.error.is_empty() || !(200..400).contains(&hit.code);
    let latency_us = (hit.latency_ns.max(0) as u64 + 500) / 1000;
    let request = Request {
        end_us: hit.start_us + latency_us as i64,
        duration_us: latency_us,
        status: hit.code,
        error: failed.then(|| error_kind(hit.code, hit.error)),
        bytes_sent: hit.bytes_out,
        bytes_received: hit.bytes_in,
        ..Request::default()
    };
    // The request first: the run's time grid starts at the first one's start.
    builder.request(step, &request)?;
    if let Some(kind) = request.error.filter(|_| !hit.error.is_empty()) {
        builder.error_example(request.end_us, kind, hit.error)?;
    }
    Ok(())
}

fn new_steps() -> Steps {
    Steps {
        index: HashMap::new(),
        key: String::new(),
    }
}

/// Reads `vegeta encode --to json` output.
pub fn read_json(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    builder.load.model = LoadModel::Open;
    let mut steps = new_steps();
    let mut lines = Lines::new(input);
    while let Some((n, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let r: JsonResult = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                malformed.add(n, || format!("not a vegeta JSON result: {e}"));
                continue;
            }
        };
        let Some(start_us) = rfc3339_us(&r.timestamp) else {
            malformed.add(n, || {
                format!("`timestamp` {:?} is not RFC 3339", r.timestamp)
            });
            continue;
        };
        let hit = Hit {
            start_us,
            latency_ns: r.latency,
            code: r.code,
            bytes_out: r.bytes_out,
            bytes_in: r.bytes_in,
            error: &r.error,
            method: &r.method,
            url: &r.url,
            attack: &r.attack,
        };
        builder.at_line(n);
        add(&hit, &mut steps, builder)?;
    }
    Ok(())
}

/// Reads `vegeta encode --to csv` output.
pub fn read_csv(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    builder.load.model = LoadModel::Open;
    let mut steps = new_steps();
    let mut lines = Lines::new(input);
    let mut fields: Vec<String> = Vec::new();
    while let Some((n, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        crate::csv::split(line, ',', &mut fields);
        let num = |i: usize| fields.get(i).and_then(|f| f.parse::<i64>().ok());
        let (Some(ts_ns), Some(code), Some(latency_ns)) = (num(0), num(1), num(2)) else {
            malformed.add(n, || {
                "not a vegeta CSV result (unix ns, code, latency ns, ...)".to_string()
            });
            continue;
        };
        let field = |i: usize| fields.get(i).map(String::as_str).unwrap_or("");
        let hit = Hit {
            start_us: ts_ns.div_euclid(1000),
            latency_ns,
            code: code.clamp(0, 999) as u16,
            bytes_out: num(3).unwrap_or(0).max(0) as u64,
            bytes_in: num(4).unwrap_or(0).max(0) as u64,
            error: field(5),
            method: field(9),
            url: field(10),
            attack: field(7),
        };
        builder.at_line(n);
        add(&hit, &mut steps, builder)?;
    }
    Ok(())
}
