//! Reading remote runs back: what runs a prefix holds (`loadlab runs --results URL`), and a
//! run's segment records downloaded into a temporary directory as the record files
//! `loadlab_record` reads, so a remote run merges exactly as local segments do.
//! Batches are taken in order up to the first gap or uncommitted batch (a `.hlog` without its
//! `.jsonl`): what a dead pod left is read as far as it is whole.

use crate::error::RemoteError;
use crate::layout::{
    parse_batch_key, segment_dir, ANNOUNCE, FAILED, MERGED, SEGMENTS, START, SUMMARY, WHOLE_RUN,
};
use crate::store::{Entry, Remote};
use loadlab_record::{
    hlog_header, RecordMeta, StoredRecord, COUNTERS_FILE, END_FILE, HLOG_FILE, META_FILE,
};
use std::collections::BTreeMap;
use std::path::Path;

/// One segment (or the whole run) as the store holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SegmentState {
    /// `None`: the record of a run that was not split.
    pub index: Option<u32>,
    pub announced: bool,
    pub has_record: bool,
    pub ended: bool,
    pub has_summary: bool,
    /// Committed interval batches.
    pub batches: u32,
    /// Last-Modified of its newest object (the store's clock).
    pub last_upload_unix_s: f64,
}

/// A run found under a prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct RunListing {
    /// The run's prefix relative to the listed URL (`""`: the URL itself).
    pub prefix: String,
    pub url: String,
    pub name: Option<String>,
    /// Segments the plan was split into (`None`: a whole run).
    pub count: Option<u32>,
    pub started_at: Option<String>,
    pub planned_duration_s: Option<f64>,
    pub segments: Vec<SegmentState>,
    pub barrier_failed: bool,
    pub start_agreed: bool,
    pub merged: bool,
}

/// Where under a listed prefix a key belongs: its run's prefix and the rest. The last
/// marker in the key wins, so a run may itself be named `run` or `segments`.
fn split_run_key(key: &str) -> Option<(&str, &str)> {
    let mut at = None;
    for marker in [SEGMENTS, WHOLE_RUN, "barrier", MERGED, "clock"] {
        let needle = format!("{marker}/");
        for (p, _) in key.match_indices(&needle) {
            if (p == 0 || key.as_bytes()[p - 1] == b'/') && at.is_none_or(|a| p > a) {
                at = Some(p);
            }
        }
    }
    let p = at?;
    Some((key[..p].trim_end_matches('/'), &key[p..]))
}

/// Every run under `remote` (the URL may be one run's prefix or hold many).
pub fn find_runs(remote: &Remote) -> Result<Vec<RunListing>, RemoteError> {
    let mut by_run: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for e in remote.list("")? {
        if let Some((prefix, rest)) = split_run_key(&e.key) {
            let entry = Entry {
                key: rest.to_string(),
                ..e.clone()
            };
            by_run.entry(prefix.to_string()).or_default().push(entry);
        }
    }
    let mut runs = Vec::new();
    for (prefix, entries) in by_run {
        let run = if prefix.is_empty() {
            remote.at("")
        } else {
            remote.at(&prefix)
        };
        runs.push(describe(&run, &prefix, &entries)?);
    }
    Ok(runs)
}

fn describe(run: &Remote, prefix: &str, entries: &[Entry]) -> Result<RunListing, RemoteError> {
    let mut states: BTreeMap<Option<u32>, SegmentState> = BTreeMap::new();
    for e in entries {
        let (index, rest) = if let Some(rest) = e.key.strip_prefix(&format!("{SEGMENTS}/")) {
            let Some((i, rest)) = rest.split_once('/') else {
                continue;
            };
            let Ok(i) = i.parse::<u32>() else { continue };
            (Some(i), rest)
        } else if let Some(rest) = e.key.strip_prefix(&format!("{WHOLE_RUN}/")) {
            (None, rest)
        } else if let Some(name) = e.key.strip_prefix(&format!("{ANNOUNCE}/")) {
            if let Some(i) = name.strip_suffix(".json").and_then(|i| i.parse().ok()) {
                let s = states.entry(Some(i)).or_default();
                s.index = Some(i);
                s.announced = true;
            }
            continue;
        } else {
            continue;
        };
        let s = states.entry(index).or_default();
        s.index = index;
        s.last_upload_unix_s = s.last_upload_unix_s.max(e.modified_unix_s);
        match rest {
            META_FILE => s.has_record = true,
            END_FILE => s.ended = true,
            SUMMARY => s.has_summary = true,
            other => {
                if matches!(parse_batch_key(other), Some((_, "jsonl"))) {
                    s.batches += 1;
                }
            }
        }
    }
    let meta = states
        .values()
        .find(|s| s.has_record)
        .map(|s| read_meta(run, s.index))
        .transpose()?;
    let start: Option<crate::barrier::StartTime> = run
        .get(START)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    let count = meta
        .as_ref()
        .and_then(|m| m.segment.map(|s| s.count))
        .or(start.as_ref().map(|s| s.count));
    Ok(RunListing {
        prefix: prefix.to_string(),
        url: run.url().to_string(),
        name: meta.as_ref().map(|m| m.name.clone()),
        count,
        started_at: meta.as_ref().map(|m| {
            loadlab_metrics::result::rfc3339(loadlab_metrics::result::from_unix_seconds(
                m.start_unix_s,
            ))
        }),
        planned_duration_s: meta.as_ref().map(|m| m.load.planned_duration_s),
        segments: states.into_values().collect(),
        barrier_failed: entries.iter().any(|e| e.key == FAILED),
        start_agreed: start.is_some(),
        merged: entries
            .iter()
            .any(|e| e.key == format!("{MERGED}/{SUMMARY}")),
    })
}

fn record_dir(index: Option<u32>) -> String {
    index.map_or_else(|| WHOLE_RUN.to_string(), segment_dir)
}

fn read_meta(run: &Remote, index: Option<u32>) -> Result<RecordMeta, RemoteError> {
    let key = format!("{}/{META_FILE}", record_dir(index));
    let bytes = run
        .get(&key)?
        .ok_or_else(|| RemoteError::invalid(run.url(), format!("{key} vanished")))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        RemoteError::invalid(run.url(), format!("{key}: not a loadlab run record: {e}"))
    })
}

/// A run's records, downloaded. The directory is removed when this is dropped.
pub struct Downloaded {
    pub dir: tempfile::TempDir,
    pub records: Vec<StoredRecord>,
    /// Segments the plan was split into, as the records and the barrier say.
    pub count: Option<u32>,
    /// Records that could not be read (they count as missing).
    pub unreadable: Vec<String>,
}

/// Downloads every segment record of the run at `run` (its prefix).
pub fn download_run(run: &Remote) -> Result<Downloaded, RemoteError> {
    let runs = find_runs(run)?;
    let Some(listing) = runs.iter().find(|r| r.prefix.is_empty()) else {
        let found: Vec<&str> = runs.iter().map(|r| r.url.as_str()).collect();
        return Err(if found.is_empty() {
            RemoteError::invalid(
                run.url(),
                "no loadlab run here (no segments/, run/ or barrier/)",
            )
        } else {
            RemoteError::invalid(
                run.url(),
                format!(
                    "this prefix holds {} runs, not one; give one of them:\n  {}",
                    found.len(),
                    found.join("\n  ")
                ),
            )
        });
    };
    let dir = tempfile::Builder::new()
        .prefix("loadlab-remote-")
        .tempdir()?;
    let mut records = Vec::new();
    let mut unreadable = Vec::new();
    for s in listing.segments.iter().filter(|s| s.has_record) {
        let rel = record_dir(s.index);
        let local = dir.path().join(rel.replace('/', "-"));
        std::fs::create_dir_all(&local)?;
        let opened = fetch_record(&run.at(&rel), &local)
            .and_then(|()| StoredRecord::open(&local).map_err(RemoteError::from));
        match opened {
            Ok(mut r) => {
                r.dir = local;
                records.push(r);
            }
            Err(e) => unreadable.push(format!("{}/{rel}: {e}", run.url())),
        }
    }
    Ok(Downloaded {
        dir,
        records,
        count: listing.count,
        unreadable,
    })
}

/// One record directory: header, end, and the committed batches joined into the two files.
fn fetch_record(remote: &Remote, local: &Path) -> Result<(), RemoteError> {
    let meta_bytes = remote
        .get(META_FILE)?
        .ok_or_else(|| RemoteError::invalid(remote.url(), "no record.json"))?;
    let meta: RecordMeta = serde_json::from_slice(&meta_bytes)
        .map_err(|e| RemoteError::invalid(remote.url(), format!("record.json: {e}")))?;
    std::fs::write(local.join(META_FILE), &meta_bytes)?;
    if let Some(end) = remote.get(END_FILE)? {
        std::fs::write(local.join(END_FILE), end)?;
    }
    let mut batches: BTreeMap<u32, (bool, bool)> = BTreeMap::new();
    for e in remote.list(crate::layout::INTERVALS)? {
        if let Some((n, ext)) = parse_batch_key(&e.key) {
            let b = batches.entry(n).or_default();
            match ext {
                "hlog" => b.0 = true,
                "jsonl" => b.1 = true,
                _ => {}
            }
        }
    }
    let mut hlog = hlog_header(meta.start_unix_s, &meta.legend());
    let mut counters = String::new();
    for (expected, (n, (has_hlog, has_counters))) in batches.into_iter().enumerate() {
        if n != expected as u32 || !has_hlog || !has_counters {
            break;
        }
        let (hk, ck) = crate::layout::batch_keys(n);
        let (Some(h), Some(c)) = (remote.get(&hk)?, remote.get(&ck)?) else {
            break;
        };
        hlog.push_str(&String::from_utf8_lossy(&h));
        counters.push_str(&String::from_utf8_lossy(&c));
    }
    std::fs::write(local.join(HLOG_FILE), hlog)?;
    std::fs::write(local.join(COUNTERS_FILE), counters)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split_run_key;

    #[test]
    fn keys_belong_to_their_run() {
        let cases = [
            (
                "segments/0/record.json",
                Some(("", "segments/0/record.json")),
            ),
            (
                "a/b/segments/1/end.json",
                Some(("a/b", "segments/1/end.json")),
            ),
            (
                "spike/barrier/start.json",
                Some(("spike", "barrier/start.json")),
            ),
            ("spike/merged/run.json", Some(("spike", "merged/run.json"))),
            ("x/run/record.json", Some(("x", "run/record.json"))),
            (
                "run/barrier/start.json",
                Some(("run", "barrier/start.json")),
            ),
            ("notes.txt", None),
        ];
        for (key, want) in cases {
            assert_eq!(split_run_key(key), want, "{key}");
        }
    }
}
