//! JMeter's CSV results (`.jtl`, `jmeter -n -t plan.jmx -l results.jtl`): one sample a line,
//! with a header naming the columns (JMeter's default order is assumed without one):
//! `timeStamp` (ms since the epoch, the sample's start), `elapsed` (ms), `label`,
//! `responseCode`, `success`, `threadName`, `bytes`, `sentBytes`, `allThreads`, `Latency`
//! (ms to the first byte), `Connect` (ms). A sample's step is its label; its group the
//! thread group (`threadName` without the thread's numbers); `allThreads` gives the active
//! threads over time.

use crate::builder::RecordBuilder;
use crate::csv::split;
use crate::lines::Lines;
use crate::problems::Malformed;
use crate::sample::{status_error, Request, StepKey};
use crate::ReadError;
use loadlab_metrics::{ErrorKind, LoadModel, Phases};
use std::collections::HashMap;
use std::io::BufRead;

const DEFAULT_COLUMNS: &[&str] = &[
    "timeStamp",
    "elapsed",
    "label",
    "responseCode",
    "responseMessage",
    "threadName",
    "dataType",
    "success",
    "failureMessage",
    "bytes",
    "sentBytes",
    "grpThreads",
    "allThreads",
    "URL",
    "Latency",
    "IdleTime",
    "Connect",
];

/// Column positions by name.
struct Columns(HashMap<String, usize>);

impl Columns {
    fn get<'a>(&self, fields: &'a [String], name: &str) -> Option<&'a str> {
        self.0
            .get(name)
            .and_then(|&i| fields.get(i))
            .map(String::as_str)
    }

    fn num(&self, fields: &[String], name: &str) -> Option<i64> {
        self.get(fields, name)?.trim().parse().ok()
    }
}

/// `Thread Group 1-3` → `Thread Group`.
fn thread_group(thread: &str) -> &str {
    match thread.rsplit_once(' ') {
        Some((group, n)) if n.chars().all(|c| c.is_ascii_digit() || c == '-') => group,
        _ => thread,
    }
}

fn error_kind(code: u16, message: &str) -> ErrorKind {
    if let Some(k) = status_error(code) {
        return k;
    }
    let m = message.to_ascii_lowercase();
    if m.contains("connection refused") || m.contains("connectexception") {
        ErrorKind::ConnectRefused
    } else if m.contains("timed out") || m.contains("timeout") {
        ErrorKind::Timeout
    } else if m.contains("reset") || m.contains("nohttpresponse") {
        ErrorKind::Reset
    } else if m.contains("unknownhost") {
        ErrorKind::Dns
    } else if m.contains("ssl") {
        ErrorKind::Tls
    } else if code != 0 {
        ErrorKind::CheckFailed
    } else {
        ErrorKind::Io
    }
}

pub fn read(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    builder.load.model = LoadModel::Closed;
    let mut lines = Lines::new(input);
    let mut fields = Vec::new();
    let mut columns: Option<Columns> = None;
    let mut steps: HashMap<(String, String), usize> = HashMap::new();
    let mut last_threads: Option<u64> = None;
    while let Some((n, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        split(line, ',', &mut fields);
        if columns.is_none() {
            let header = fields.iter().any(|f| f == "timeStamp");
            let names: Vec<String> = if header {
                fields.clone()
            } else {
                DEFAULT_COLUMNS.iter().map(|s| s.to_string()).collect()
            };
            columns = Some(Columns(
                names.into_iter().enumerate().map(|(i, n)| (n, i)).collect(),
            ));
            if header {
                continue;
            }
        }
        let cols = columns.as_ref().expect("set above");
        let (Some(start_ms), Some(elapsed)) =
            (cols.num(&fields, "timeStamp"), cols.num(&fields, "elapsed"))
        else {
            malformed.add(n, || {
                "no numeric timeStamp (ms since the epoch) and elapsed (ms): save results as CSV with jmeter.save.saveservice.timestamp_format=ms".to_string()
            });
            continue;
        };
        let label = cols.get(&fields, "label").unwrap_or("");
        let group = thread_group(cols.get(&fields, "threadName").unwrap_or("")).to_string();
        let step = match steps.get(&(label.to_string(), group.clone())) {
            Some(&i) => i,
            None => {
                let i = builder.step(&StepKey {
                    name: label.to_string(),
                    group: (!group.is_empty()).then(|| group.clone()),
                    tags: Vec::new(),
                });
                steps.insert((label.to_string(), group), i);
                i
            }
        };
        let status: u16 = cols
            .get(&fields, "responseCode")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let success = cols.get(&fields, "success") != Some("false");
        let latency = cols
            .num(&fields, "Latency")
            .map(|ms| ms.max(0) as u64 * 1000);
        let connect = cols
            .num(&fields, "Connect")
            .map(|ms| ms.max(0) as u64 * 1000);
        let elapsed_us = elapsed.max(0) as u64 * 1000;
        let end_us = (start_ms + elapsed.max(0)) * 1000;
        let message = cols
            .get(&fields, "failureMessage")
            .filter(|m| !m.is_empty())
            .or(cols.get(&fields, "responseMessage"))
            .unwrap_or("");
        let request = Request {
            end_us,
            duration_us: elapsed_us,
            status,
            error: (!success).then(|| error_kind(status, message)),
            bytes_sent: cols.num(&fields, "sentBytes").unwrap_or(0).max(0) as u64,
            bytes_received: cols.num(&fields, "bytes").unwrap_or(0).max(0) as u64,
            phases: Phases {
                connect_us: connect.filter(|&c| c > 0),
                tls_us: None,
                // JMeter's Latency runs from the send to the first byte, connect included.
                waiting_us: latency.map(|l| l.saturating_sub(connect.unwrap_or(0))),
                receiving_us: latency.map(|l| elapsed_us.saturating_sub(l)),
            },
        };
        if let (Some(kind), false) = (request.error, message.is_empty()) {
            builder.error_example(end_us, kind, message)?;
        }
        builder.request(step, &request)?;
        if let Some(threads) = cols.num(&fields, "allThreads").map(|t| t.max(0) as u64) {
            if last_threads != Some(threads) {
                builder.active(end_us, threads)?;
                last_threads = Some(threads);
            }
        }
    }
    Ok(())
}
