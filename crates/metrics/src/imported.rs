//! Where an imported run came from: a record rebuilt from another tool's result file (k6,
//! vegeta, oha, JMeter, Gatling) says which tool and file made it, because the generator's
//! own timing is not in such a file and its validity cannot be judged.

use serde::{Deserialize, Serialize};

/// The tool, its version and the file an imported run was rebuilt from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ImportedFrom {
    /// The tool that made the measurements (`k6`, `vegeta`, `oha`, `jmeter`, `gatling`).
    pub tool: String,
    /// Its version, when the file or the user says it (`--tool-version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The file format read (`k6-json`, `vegeta-json`, `oha-sqlite`, ...).
    pub format: String,
    /// The file, as given on the command line.
    pub file: String,
    /// Lines (or rows) that could not be read: counted, never silently skipped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub malformed: u64,
    /// What the reader must know about the import (lines not read, requests out of order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ImportedFrom {
    /// `vegeta 12.12.0` or `k6` when its version is unknown.
    pub fn tool_words(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.tool),
            None => self.tool.clone(),
        }
    }

    /// The sentence reports print where a native run's validity goes.
    pub fn validity_words(&self) -> String {
        format!(
            "not judged (imported): measured by {} ({}), whose own timing is not in the file, so whether its generator kept up cannot be told",
            self.tool_words(),
            self.file
        )
    }
}
