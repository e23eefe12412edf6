//! The names of things under a run's prefix (see the crate docs for the whole layout).

use loadlab_metrics::Segment;

/// Where a run that was not split into segments writes its record.
pub const WHOLE_RUN: &str = "run";
pub const SEGMENTS: &str = "segments";
pub const MERGED: &str = "merged";
pub const ANNOUNCE: &str = "barrier/announce";
pub const START: &str = "barrier/start.json";
pub const FAILED: &str = "barrier/failed.json";
pub const CLOCK: &str = "clock";
pub const INTERVALS: &str = "intervals";
pub const SUMMARY: &str = "run.json";
/// A run's labels beside its record (object storage has no index to keep them in).
pub const LABELS: &str = "labels.json";

/// Where one process's record goes under a run's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLayout {
    pub segment: Option<Segment>,
}

impl RunLayout {
    /// `segments/<i>` for a segment, `run` for a whole plan.
    pub fn record_dir(&self) -> String {
        match self.segment {
            Some(s) => segment_dir(s.index),
            None => WHOLE_RUN.to_string(),
        }
    }
}

pub fn segment_dir(index: u32) -> String {
    format!("{SEGMENTS}/{index}")
}

/// Batch `n` of a record's intervals: `(histograms, counters)`.
pub fn batch_keys(n: u32) -> (String, String) {
    (
        format!("{INTERVALS}/{n:08}.hlog"),
        format!("{INTERVALS}/{n:08}.jsonl"),
    )
}

/// The batch number and kind of an `intervals/…` key.
pub fn parse_batch_key(key: &str) -> Option<(u32, &str)> {
    let name = key.strip_prefix(INTERVALS)?.strip_prefix('/')?;
    let (n, ext) = name.split_once('.')?;
    Some((n.parse().ok()?, ext))
}

pub fn announce_key(index: u32) -> String {
    format!("{ANNOUNCE}/{index}.json")
}

pub fn clock_key(index: u32) -> String {
    format!("{CLOCK}/{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_keys_sort_in_order_and_parse_back() {
        let mut keys: Vec<String> = [10u32, 2, 100_000]
            .iter()
            .map(|n| batch_keys(*n).0)
            .collect();
        keys.sort();
        let numbers: Vec<u32> = keys.iter().map(|k| parse_batch_key(k).unwrap().0).collect();
        assert_eq!(numbers, [2, 10, 100_000]);
        assert_eq!(
            parse_batch_key("intervals/00000003.jsonl"),
            Some((3, "jsonl"))
        );
        assert_eq!(parse_batch_key("record.json"), None);
        let seg = RunLayout {
            segment: Some(Segment { index: 3, count: 4 }),
        };
        assert_eq!(seg.record_dir(), "segments/3");
        assert_eq!(RunLayout { segment: None }.record_dir(), "run");
    }
}
