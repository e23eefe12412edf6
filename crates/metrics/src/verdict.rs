//! What a comparison of a variant against a baseline concluded about one metric, as a type
//! shared by analysis, store and report ([`Verdict`]): nothing downstream decides by matching
//! a verdict's word. Which metric it is about, and which direction is good for it, is
//! [`crate::metric_id`]'s.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a comparison of a variant against a baseline concluded about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Latency went up: significant after correction and the change's CI excludes 0.
    #[serde(rename = "slower")]
    Slower,
    /// Latency went down (significant, CI excludes 0).
    #[serde(rename = "faster")]
    Faster,
    /// Throughput down or errors up (significant, CI excludes 0).
    #[serde(rename = "worse")]
    Worse,
    /// Throughput up or errors down (significant, CI excludes 0).
    #[serde(rename = "better")]
    Better,
    /// Throughput up, between variants offered different loads: a difference, but more
    /// throughput from more load is not an improvement (judge it against what was offered).
    #[serde(rename = "higher")]
    Higher,
    /// Throughput down, between variants offered different loads.
    #[serde(rename = "lower")]
    Lower,
    /// The whole CI of the change lies inside the equivalence band (two one-sided tests).
    #[serde(rename = "equivalent")]
    Equivalent,
    /// Neither a difference nor equivalence shown: no difference detected at this n.
    #[serde(rename = "~")]
    Inconclusive,
    /// Too few runs on a side to reach significance at all: no verdict, never a gate failure.
    #[serde(rename = "insufficient")]
    Insufficient,
}

impl Verdict {
    pub const ALL: [Verdict; 9] = [
        Verdict::Slower,
        Verdict::Faster,
        Verdict::Worse,
        Verdict::Better,
        Verdict::Higher,
        Verdict::Lower,
        Verdict::Equivalent,
        Verdict::Inconclusive,
        Verdict::Insufficient,
    ];

    /// The word printed in tables, the same in the terminal and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Worse => "worse",
            Verdict::Better => "better",
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "~",
            Verdict::Insufficient => "insufficient",
        }
    }

    /// The variant is shown to be worse than the baseline (`slower` or `worse`).
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Slower | Verdict::Worse)
    }

    /// The variant is shown to be better than the baseline (`faster` or `better`).
    pub fn is_improvement(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Better)
    }

    /// A significant difference in either direction.
    pub fn is_difference(self) -> bool {
        self.is_regression() || self.is_improvement() || self.is_neutral_difference()
    }

    /// A significant difference with no good or bad direction (`higher`, `lower`).
    pub fn is_neutral_difference(self) -> bool {
        matches!(self, Verdict::Higher | Verdict::Lower)
    }

    /// A direction word for a throughput verdict between variants offered different loads:
    /// `better`/`worse` become `higher`/`lower`; anything else is kept.
    pub fn without_direction(self) -> Verdict {
        match self {
            Verdict::Better => Verdict::Higher,
            Verdict::Worse => Verdict::Lower,
            other => other,
        }
    }

    /// What the word means, for legends under tables.
    pub fn meaning(self) -> &'static str {
        match self {
            Verdict::Slower | Verdict::Faster => {
                "latency differs: significant after Holm's correction and the 95% CI of the change excludes 0"
            }
            Verdict::Worse | Verdict::Better => {
                "throughput or errors differ: significant after Holm's correction and the 95% CI of the change excludes 0"
            }
            Verdict::Higher | Verdict::Lower => {
                "throughput differs (significant, CI excludes 0), but the variants were offered different loads: more throughput from more load is neither better nor worse"
            }
            Verdict::Equivalent => "the whole 95% CI of the change lies inside the equivalence band",
            Verdict::Inconclusive => {
                "no difference detected at this number of runs, and equivalence not shown either"
            }
            Verdict::Insufficient => "too few runs to reach significance: no verdict",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_kinds() {
        assert!(Verdict::Worse.is_regression() && !Verdict::Inconclusive.is_difference());
        assert!(Verdict::Faster.is_improvement() && Verdict::Faster.is_difference());
        assert_eq!(
            serde_json::to_string(&Verdict::Inconclusive).unwrap(),
            "\"~\""
        );
        let back: Verdict = serde_json::from_str("\"insufficient\"").unwrap();
        assert_eq!(back, Verdict::Insufficient);
        for v in Verdict::ALL {
            assert_eq!(v.to_string(), v.as_str());
            assert!(!v.meaning().is_empty());
        }
    }
}
