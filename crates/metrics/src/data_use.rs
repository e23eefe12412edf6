//! What each data set handed out: counted by a process at its run's end, added up by a merge,
//! so that a report can say how many rows a run used and whether two generators of one plan
//! used the same row (sign-ups with one e-mail each, seats reserved once).

use serde::{Deserialize, Serialize};

/// One data set's use by a run (a process, or the segments of a merge added up).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DataUse {
    /// Rows taken, a row taken again after wrapping around counted again (absent: a `random`
    /// set, whose takes are not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken: Option<u64>,
    /// Different rows taken (absent: a `random` set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct: Option<u64>,
    /// Rows that more than one segment took: sets not split by segment all start at the first
    /// row, so every generator but the furthest repeats the others' rows.
    #[serde(default)]
    pub shared_rows: u64,
}

impl DataUse {
    /// The segments' uses of one set, added up. Split sets (`split: segments`, `unique`) give
    /// each segment rows of its own, so their different rows add up; other sets all count
    /// from the first row, so the merged set's different rows are the furthest segment's, and
    /// the rows the second-furthest reached were taken by two segments at least.
    pub fn merged(uses: &[DataUse], split: bool) -> DataUse {
        let sum = |f: fn(&DataUse) -> Option<u64>| -> Option<u64> { uses.iter().map(f).sum() };
        let taken = sum(|u| u.taken);
        let own_shared: u64 = uses.iter().map(|u| u.shared_rows).sum();
        if split {
            return DataUse {
                taken,
                distinct: sum(|u| u.distinct),
                shared_rows: own_shared,
            };
        }
        let mut reached: Vec<u64> = uses.iter().filter_map(|u| u.distinct).collect();
        reached.sort_unstable_by(|a, b| b.cmp(a));
        DataUse {
            taken,
            distinct: uses
                .iter()
                .map(|u| u.distinct)
                .try_fold(0, |most, d| d.map(|d| most.max(d))),
            shared_rows: own_shared.max(reached.get(1).copied().unwrap_or(0)),
        }
    }
}

/// A data set as a run's result shows it: what it held and what the run used of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DataSetUse {
    pub name: String,
    pub rows: u64,
    /// `sequential`, `random` or `unique`.
    pub pick: String,
    /// Segments of the plan take disjoint rows (`split: segments`, or `unique`).
    #[serde(default)]
    pub split: bool,
    #[serde(flatten)]
    pub used: DataUse,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(taken: u64, distinct: u64) -> DataUse {
        DataUse {
            taken: Some(taken),
            distinct: Some(distinct),
            shared_rows: 0,
        }
    }

    #[test]
    fn segments_add_up_by_whether_their_rows_are_their_own() {
        let cases: &[(&str, &[DataUse], bool, DataUse)] = &[
            (
                "split: four segments' own rows add up, none shared",
                &[used(10, 10), used(10, 10), used(12, 10), used(9, 9)],
                true,
                DataUse {
                    taken: Some(41),
                    distinct: Some(39),
                    shared_rows: 0,
                },
            ),
            (
                "not split: all count from row 0; the second-furthest's rows were taken twice",
                &[used(10, 10), used(30, 24), used(5, 5)],
                false,
                DataUse {
                    taken: Some(45),
                    distinct: Some(24),
                    shared_rows: 10,
                },
            ),
            (
                "one segment shares nothing",
                &[used(7, 7)],
                false,
                DataUse {
                    taken: Some(7),
                    distinct: Some(7),
                    shared_rows: 0,
                },
            ),
            (
                "random: nothing counted stays uncounted",
                &[DataUse::default(), DataUse::default()],
                false,
                DataUse::default(),
            ),
        ];
        for (what, uses, split, want) in cases {
            assert_eq!(DataUse::merged(uses, *split), *want, "{what}");
        }
    }
}
