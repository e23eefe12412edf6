//! The load model of a run, one word shared by the scenario, the engine, the record and the
//! reports: what the load generator held constant, which decides how latency is read.

use serde::{Deserialize, Serialize};

/// What a run's load held constant (its `load.model`, in records as `closed`/`open`/`burst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LoadModel {
    /// Virtual users loop their flow: the target's speed sets the rate (k6 `ramping-vus`).
    #[default]
    Closed,
    /// Arrivals at a planned rate whatever the target does; latency from the intended start.
    Open,
    /// A number of arrivals at once (or in a short window): an open model of one instant.
    Burst,
}

impl LoadModel {
    /// The word in scenario files and records.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadModel::Closed => "closed",
            LoadModel::Open => "open",
            LoadModel::Burst => "burst",
        }
    }

    /// Arrivals are scheduled, not looped: latency runs from the intended start.
    pub fn schedules_arrivals(self) -> bool {
        matches!(self, LoadModel::Open | LoadModel::Burst)
    }
}

impl std::fmt::Display for LoadModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_the_words_they_always_had() {
        for (m, word) in [
            (LoadModel::Closed, "\"closed\""),
            (LoadModel::Open, "\"open\""),
            (LoadModel::Burst, "\"burst\""),
        ] {
            assert_eq!(serde_json::to_string(&m).unwrap(), word);
            assert_eq!(serde_json::from_str::<LoadModel>(word).unwrap(), m);
            assert_eq!(format!("\"{m}\""), word);
        }
        assert!(serde_json::from_str::<LoadModel>("\"ramp\"").is_err());
    }
}
