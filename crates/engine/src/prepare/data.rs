//! The data sets a run reads, with the cursors its worker threads share, and which rows of
//! each this process may take when segments of one plan split a set between them.

use loadlab_metrics::data_use::DataUse;
use loadlab_scenario::{DataSet, Pick};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Data sets and their shared cursors (one per set, shared by every worker thread).
#[derive(Debug, Clone)]
pub struct PreparedData {
    pub sets: Arc<Vec<DataSet>>,
    pub cursors: Arc<Vec<AtomicU64>>,
    /// The rows of a set split by segment (`split: segments`, `unique`) this process may take
    /// are `offset + n · stride`: a segment of a plan takes every `stride`-th row, so no two
    /// segments use the same one.
    pub offset: u64,
    pub stride: u64,
}

/// The rows of one set this process may take: row `first + n · stride` for n < `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnRows {
    pub first: u64,
    pub stride: u64,
    pub count: u64,
}

impl OwnRows {
    pub fn row(self, nth: u64) -> u64 {
        self.first + nth * self.stride
    }
}

impl PreparedData {
    /// The rows of set `set` this process takes from: all of them, or its segment's share.
    pub fn own_rows(&self, set: usize) -> OwnRows {
        let rows = self.sets[set].rows.len() as u64;
        if !self.sets[set].split_by_segment() {
            return OwnRows {
                first: 0,
                stride: 1,
                count: rows,
            };
        }
        let count = if self.offset < rows {
            (rows - self.offset).div_ceil(self.stride)
        } else {
            0
        };
        OwnRows {
            first: self.offset,
            stride: self.stride,
            count,
        }
    }

    /// What each set handed out so far, from its cursor (the order of the sets).
    pub fn uses(&self) -> Vec<DataUse> {
        (0..self.sets.len())
            .map(|set| {
                let own = self.own_rows(set).count;
                let cursor = self.cursors[set].load(Ordering::Relaxed);
                match self.sets[set].pick {
                    Pick::Random => DataUse::default(),
                    // A refused take moved the cursor past the rows too.
                    Pick::Unique => DataUse {
                        taken: Some(cursor.min(own)),
                        distinct: Some(cursor.min(own)),
                        shared_rows: 0,
                    },
                    Pick::Sequential => DataUse {
                        taken: Some(cursor),
                        distinct: Some(cursor.min(own)),
                        shared_rows: 0,
                    },
                }
            })
            .collect()
    }

    /// The first set split by segment that gives this process no row at all.
    pub fn set_without_rows(&self) -> Option<&DataSet> {
        (0..self.sets.len())
            .find(|&set| self.own_rows(set).count == 0)
            .map(|set| &self.sets[set])
    }
}

impl Default for PreparedData {
    fn default() -> Self {
        Self {
            sets: Arc::default(),
            cursors: Arc::default(),
            offset: 0,
            stride: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(rows: usize, pick: Pick, split: bool, segment: (u64, u64)) -> PreparedData {
        PreparedData {
            sets: Arc::new(vec![DataSet {
                name: "users".into(),
                columns: vec!["id".into()],
                rows: (0..rows)
                    .map(|i| vec![serde_json::Value::from(i)])
                    .collect(),
                pick,
                split,
                csv: None,
            }]),
            cursors: Arc::new(vec![AtomicU64::new(0)]),
            offset: segment.0,
            stride: segment.1,
        }
    }

    #[test]
    fn a_split_set_gives_each_segment_every_nth_row() {
        let cases = [
            // (rows, pick, split, segment i/N, first, stride, count)
            (10, Pick::Sequential, false, (2, 4), 0, 1, 10),
            (10, Pick::Sequential, true, (0, 4), 0, 4, 3),
            (10, Pick::Sequential, true, (1, 4), 1, 4, 3),
            (10, Pick::Random, true, (2, 4), 2, 4, 2),
            (10, Pick::Unique, false, (3, 4), 3, 4, 2),
            (3, Pick::Sequential, true, (3, 4), 3, 4, 0),
            (8, Pick::Unique, false, (0, 1), 0, 1, 8),
        ];
        for (rows, pick, split, segment, first, stride, count) in cases {
            let own = data(rows, pick, split, segment).own_rows(0);
            assert_eq!(
                own,
                OwnRows {
                    first,
                    stride,
                    count
                },
                "{rows} rows, {pick:?}, split {split}, segment {segment:?}"
            );
        }
        // Four segments' shares of 10 rows cover each row once.
        let mut all: Vec<u64> = (0..4)
            .flat_map(|i| {
                let own = data(10, Pick::Sequential, true, (i, 4)).own_rows(0);
                (0..own.count).map(move |n| own.row(n))
            })
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn uses_count_takes_and_different_rows_from_the_cursor() {
        let d = data(10, Pick::Sequential, true, (1, 4));
        d.cursors[0].store(7, Ordering::Relaxed);
        assert_eq!(
            d.uses(),
            [DataUse {
                taken: Some(7),
                distinct: Some(3),
                shared_rows: 0
            }]
        );
        // A unique set's refused takes moved its cursor past its rows.
        let d = data(10, Pick::Unique, false, (1, 4));
        d.cursors[0].store(5, Ordering::Relaxed);
        assert_eq!(
            d.uses(),
            [DataUse {
                taken: Some(3),
                distinct: Some(3),
                shared_rows: 0
            }]
        );
        assert_eq!(
            data(3, Pick::Sequential, true, (3, 4))
                .set_without_rows()
                .map(|d| d.name.as_str()),
            Some("users")
        );
        assert!(data(3, Pick::Sequential, false, (3, 4))
            .set_without_rows()
            .is_none());
    }
}
