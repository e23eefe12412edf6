//! The `csv` output: a fixed header, then one line per interval and step
//! ([`super::rows::Row`]); statuses and errors as `200:95;503:5` (so the columns never change
//! with what a run met), durations in milliseconds.

use super::rows::{rows, Row};
use super::snapshot::Snapshot;
use super::{SendError, Sink};
use crate::frame::Quantiles;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};

/// The columns, in order.
pub const HEADER: &str = "testid,run,index,t_s,length_s,unix_ms,warmup,step,requests,failed,rate,\
statuses,errors,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_max_ms,\
service_p50_ms,service_p95_ms,service_p99_ms,lag_p50_ms,lag_p95_ms,lag_p99_ms,\
active,in_flight,planned";

pub(crate) struct CsvSink {
    out: BufWriter<File>,
}

impl CsvSink {
    pub fn create(path: &str) -> std::io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "{HEADER}")?;
        out.flush()?;
        Ok(Self { out })
    }
}

impl Sink for CsvSink {
    fn send(&mut self, snapshot: &Snapshot) -> Result<(), SendError> {
        for row in rows(snapshot) {
            writeln!(self.out, "{}", line(&row))?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// One CSV line (fields quoted when they hold a comma, a quote or a newline).
pub fn line(r: &Row) -> String {
    let q3 = |q: &Quantiles| format!("{},{},{}", q.p50, q.p95, q.p99);
    [
        quote(r.testid),
        quote(r.run),
        r.index.to_string(),
        r.t_s.to_string(),
        r.length_s.to_string(),
        r.unix_ms.to_string(),
        r.warmup.to_string(),
        quote(r.step),
        r.requests.to_string(),
        r.failed.to_string(),
        format!("{:.3}", r.rate),
        quote(&pairs(r.statuses)),
        quote(&pairs(r.errors)),
        format!("{},{}", q3(r.latency_ms), r.latency_ms.max),
        q3(r.service_time_ms),
        q3(r.lag_ms),
        r.active.to_string(),
        r.in_flight.to_string(),
        r.planned.map(|p| p.to_string()).unwrap_or_default(),
    ]
    .join(",")
}

fn pairs(map: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    parts.join(";")
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
