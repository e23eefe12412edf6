//! oha `--db-url FILE`: an SQLite table `oha` (oha 1.x) with one row per successful request:
//! `url`, `start`, `end`, `duration` (seconds since the test's start, `duration` from the
//! corrected start when `--latency-correction` is on), `status`, `len_bytes`, and `run` (the
//! test's start, whole Unix seconds). oha stores only the requests that got a response, so
//! its connection errors are not in the file. A file that holds several runs gives its
//! newest; the run notes how many others there were. oha's other outputs (`--output-format
//! json|csv|text`) given here are named, with what to run instead.

use crate::builder::RecordBuilder;
use crate::problems::Malformed;
use crate::sample::{status_error, Request, StepKey};
use crate::ReadError;
use loadlab_metrics::LoadModel;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::Path;

fn sql(e: rusqlite::Error) -> ReadError {
    ReadError::Bad(format!("not an oha database (table `oha`): {e}"))
}

/// What to do instead, when `path` is not an SQLite file: oha's other outputs are summaries
/// or lack the test's start time.
fn not_sqlite(path: &Path) -> Result<Option<String>, ReadError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(512);
    // An error reading the file is the input's, not the record's (`ReadError::Io`).
    std::fs::File::open(path)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .map_err(|e| ReadError::Bad(format!("cannot be read: {e}")))?;
    if head.starts_with(b"SQLite format 3\0") {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start();
    let what = if text.starts_with('{') && text.contains("\"summary\"") {
        "oha's JSON summary (`--output-format json`): counts and a few percentiles, no request"
    } else if text.starts_with("request-start,") {
        "oha's CSV (`--output-format csv`): its times are from the test's start, which it does not give"
    } else if text.starts_with("Summary:") {
        "oha's text summary: no request"
    } else {
        "not an SQLite database"
    };
    Ok(Some(format!(
        "{what}; loadlab reads the database oha writes with `--db-url results.db` (every request, and when the test started): run oha with it and import that"
    )))
}

/// Reads the newest run of an oha database; returns how many runs the file holds.
pub fn read(
    path: &Path,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<u64, ReadError> {
    if let Some(why) = not_sqlite(path)? {
        return Err(ReadError::Bad(why));
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sql)?;
    let (runs, newest): (u64, Option<i64>) = conn
        .query_row("SELECT COUNT(DISTINCT run), MAX(run) FROM oha", [], |r| {
            Ok((r.get::<_, i64>(0)? as u64, r.get(1)?))
        })
        .map_err(sql)?;
    let Some(run) = newest else {
        return Err(ReadError::Bad(
            "the oha database holds no request: oha stores only the requests that got a response, so a run whose every request failed (refused, timed out) leaves it empty".into(),
        ));
    };
    builder.load.model = LoadModel::Closed;
    builder.note(
        "oha stores only the requests that got a response: its connection errors and timeouts are not in the file, so failures here are responses that failed (4xx/5xx)"
            .to_string(),
    );
    builder.note(
        "oha's database does not store the HTTP method: each step is named by its URL alone"
            .to_string(),
    );
    let mut stmt = conn
        .prepare(
            "SELECT rowid, url, end, duration, status, len_bytes FROM oha WHERE run = ?1 ORDER BY end",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([run]).map_err(sql)?;
    let mut steps: HashMap<String, usize> = HashMap::new();
    let t0_us = run * 1_000_000;
    while let Some(row) = rows.next().map_err(sql)? {
        let rowid: i64 = row.get(0).map_err(sql)?;
        let values = (|| -> rusqlite::Result<(String, f64, f64, i64, i64)> {
            Ok((
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })();
        let (url, end, duration, status, len) = match values {
            Ok(v) if v.1.is_finite() && v.2.is_finite() && v.2 >= 0.0 => v,
            Ok(_) => {
                malformed.add(rowid as u64, || "end or duration is not a time".to_string());
                continue;
            }
            Err(e) => {
                malformed.add(rowid as u64, || format!("row {rowid}: {e}"));
                continue;
            }
        };
        let step = match steps.get(&url) {
            Some(&i) => i,
            None => {
                // Not "GET url": oha sends any method (`-m POST`), and the file does not say.
                let i = builder.step(&StepKey {
                    name: url.clone(),
                    ..StepKey::default()
                });
                steps.insert(url, i);
                i
            }
        };
        let status = status.clamp(0, 999) as u16;
        builder.request(
            step,
            &Request {
                end_us: t0_us + (end * 1e6).round() as i64,
                duration_us: (duration * 1e6).round() as u64,
                status,
                error: status_error(status),
                bytes_received: len.max(0) as u64,
                ..Request::default()
            },
        )?;
    }
    Ok(runs)
}
