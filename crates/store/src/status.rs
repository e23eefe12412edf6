//! What the index says about a run: one type, stored as a word in SQLite and shown by `runs`,
//! so that no caller compares status strings.

use std::fmt;

/// Where a run stands in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Its process is still measuring.
    Running,
    /// Ended (as planned or interrupted, see `partial`) and its summary is stored.
    Done,
    /// Stopped early (a signal, or its process died); a summary may have been derived from
    /// its record since.
    Interrupted,
    /// Could not be made (the target unreachable, the plan refused before any load).
    Failed,
    /// Measured, but its record or summary could not be written (a full disk): the numbers
    /// were printed, not kept. `partial` tells whether it ran to its end.
    NotStored,
}

impl RunStatus {
    /// The word kept in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::NotStored => "not_stored",
        }
    }

    /// The word read back from the index; an unknown word (a newer loadlab's) reads as
    /// `Failed`, never as a result that exists.
    pub fn from_index(word: &str) -> RunStatus {
        match word {
            "running" => RunStatus::Running,
            "done" => RunStatus::Done,
            "interrupted" => RunStatus::Interrupted,
            "not_stored" => RunStatus::NotStored,
            _ => RunStatus::Failed,
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunStatus::NotStored => "not stored",
            other => other.as_str(),
        })
    }
}

impl rusqlite::ToSql for RunStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus::{self, *};

    #[test]
    fn every_status_reads_back_as_itself() {
        for s in [Running, Done, Interrupted, Failed, NotStored] {
            assert_eq!(RunStatus::from_index(s.as_str()), s);
        }
        assert_eq!(RunStatus::from_index("exploded"), Failed);
        assert_eq!(NotStored.to_string(), "not stored");
    }
}
