//! What a run used of its data sets, in words the terminal and the report share: how many
//! rows, how many different ones, and whether two generators of one plan took the same row.

use loadlab_metrics::data_use::DataSetUse;
use loadlab_metrics::result::RunResult;

/// One (label, sentence) fact per data set: nothing for a run without data.
pub fn data_set_facts(r: &RunResult) -> Vec<(String, String)> {
    let segments = segments_of(r);
    r.data_sets
        .iter()
        .map(|d| (format!("Data `{}`", d.name), data_set_words(d, segments)))
        .collect()
}

/// How many segments the run is one of (a segment's own run) or was merged from.
fn segments_of(r: &RunResult) -> u32 {
    match (&r.segment, r.segments.len()) {
        (Some(s), _) => s.count,
        (None, n) => u32::try_from(n).unwrap_or(u32::MAX).max(1),
    }
}

fn data_set_words(d: &DataSetUse, segments: u32) -> String {
    let mut words = format!("{} rows, {}", d.rows, d.pick);
    if d.split && segments > 1 {
        words.push_str(&format!(", split over {segments} segments"));
    }
    let (Some(taken), Some(distinct)) = (d.used.taken, d.used.distinct) else {
        return words;
    };
    words.push_str(&format!(": {taken} taken, {distinct} different"));
    if taken > distinct {
        words.push_str(" (rows taken again after wrapping around)");
    }
    if segments > 1 {
        if d.used.shared_rows == 0 {
            words.push_str("; no row taken by two segments");
        } else {
            words.push_str(&format!(
                "; {} rows taken by more than one segment (`split: segments` gives each its own)",
                d.used.shared_rows
            ));
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::data_use::DataUse;

    fn set(pick: &str, split: bool, used: DataUse) -> DataSetUse {
        DataSetUse {
            name: "users".into(),
            rows: 40,
            pick: pick.into(),
            split,
            used,
        }
    }

    fn used(taken: u64, distinct: u64, shared_rows: u64) -> DataUse {
        DataUse {
            taken: Some(taken),
            distinct: Some(distinct),
            shared_rows,
        }
    }

    #[test]
    fn each_set_says_what_was_taken_and_by_whom() {
        let cases = [
            (set("unique", true, used(40, 40, 0)), 4, "40 rows, unique, split over 4 segments: 40 taken, 40 different; no row taken by two segments"),
            (set("sequential", true, used(48, 40, 0)), 4, "40 rows, sequential, split over 4 segments: 48 taken, 40 different (rows taken again after wrapping around); no row taken by two segments"),
            (set("sequential", false, used(40, 10, 10)), 4, "40 rows, sequential: 40 taken, 10 different (rows taken again after wrapping around); 10 rows taken by more than one segment (`split: segments` gives each its own)"),
            (set("sequential", false, used(12, 12, 0)), 1, "40 rows, sequential: 12 taken, 12 different"),
            (set("random", false, DataUse::default()), 1, "40 rows, random"),
        ];
        for (d, segments, want) in cases {
            assert_eq!(data_set_words(&d, segments), want);
        }
    }
}
