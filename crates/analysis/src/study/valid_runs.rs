//! How many valid runs each variant of a study has against its plan, and why the others are
//! missing: the first thing a reader of a study needs to know about its statistics.

use super::{RunEntry, StudyResult};
use loadlab_metrics::InvalidKind;

/// One variant's valid runs against the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidRuns {
    pub variant: String,
    pub valid: usize,
    pub planned: usize,
    /// The repetitions without a valid run, in order.
    pub missing: Vec<MissingRun>,
}

/// A repetition that has no valid run.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingRun {
    pub rep: usize,
    /// Attempts made (0: never made, the study was interrupted).
    pub attempts: usize,
    /// Why its last attempt was invalid.
    pub kinds: Vec<InvalidKind>,
    pub reason: Option<String>,
}

impl ValidRuns {
    pub fn is_short(&self) -> bool {
        self.valid < self.planned
    }

    /// `stress: 7 valid runs of 8 planned — run 5 invalid in 3 attempts (host_contended: …)`.
    pub fn sentence(&self) -> String {
        format!("{}: {}", self.variant, self.counts_and_why())
    }

    /// `7 valid runs of 8 planned — run 5 invalid in 3 attempts (host_contended: …)`.
    pub fn counts_and_why(&self) -> String {
        let mut s = format!(
            "{} valid run{} of {} planned",
            self.valid,
            if self.valid == 1 { "" } else { "s" },
            self.planned
        );
        let why: Vec<String> = self
            .missing
            .iter()
            .map(|m| {
                if m.attempts == 0 {
                    return format!("run {} not made (the study was interrupted)", m.rep + 1);
                }
                let kinds: Vec<&str> = m.kinds.iter().map(|k| k.as_str()).collect();
                format!(
                    "run {} invalid in {} attempt{} ({}{})",
                    m.rep + 1,
                    m.attempts,
                    if m.attempts == 1 { "" } else { "s" },
                    if kinds.is_empty() {
                        "invalid".to_string()
                    } else {
                        kinds.join(", ")
                    },
                    m.reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        if !why.is_empty() {
            s.push_str(" — ");
            s.push_str(&why.join("; "));
        }
        s
    }
}

impl StudyResult {
    /// Each variant's valid runs against the plan (`repeat` per variant), and why any are
    /// missing, from the run log (a study saved before the log existed: counts only).
    pub fn valid_runs(&self) -> Vec<ValidRuns> {
        self.variants
            .iter()
            .map(|v| {
                let entries: Vec<&RunEntry> = self
                    .run_log
                    .iter()
                    .filter(|e| e.variant == v.name)
                    .collect();
                let missing = if self.run_log.is_empty() {
                    Vec::new()
                } else {
                    (0..self.repeat)
                        .filter(|rep| !entries.iter().any(|e| e.rep == *rep && e.used))
                        .map(|rep| {
                            let attempts: Vec<&&RunEntry> =
                                entries.iter().filter(|e| e.rep == rep).collect();
                            let last = attempts.last();
                            MissingRun {
                                rep,
                                attempts: attempts.len(),
                                kinds: last.map(|e| e.invalid.clone()).unwrap_or_default(),
                                reason: last.and_then(|e| e.reasons.first().cloned()),
                            }
                        })
                        .collect()
                };
                ValidRuns {
                    variant: v.name.clone(),
                    valid: v.runs.len(),
                    planned: self.repeat,
                    missing,
                }
            })
            .collect()
    }
}
