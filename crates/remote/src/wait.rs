//! Waiting for a distributed run to end before merging it (the merge Job starts with the
//! segments). It ends when every segment has written its end; or when the plan's end plus a
//! grace has passed by the agreed start (a pod that died never writes its end: what it left is
//! merged and the run marked invalid); or when the barrier failed; or at the timeout.

use crate::barrier::StartTime;
use crate::error::RemoteError;
use crate::fetch::{find_runs, RunListing};
use crate::layout::START;
use crate::store::{now_unix_s, Remote};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    pub timeout: Duration,
    pub poll: Duration,
    /// After the planned end: time for the last requests, their timeouts and uploads.
    pub grace: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(3600),
            poll: Duration::from_secs(5),
            grace: Duration::from_secs(90),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum WaitOutcome {
    /// Every segment wrote its end.
    AllEnded,
    /// The plan's end and the grace passed; these segments never ended.
    PlannedEndPassed {
        unended: Vec<u32>,
    },
    /// The start barrier timed out: the run never started.
    BarrierFailed(String),
    TimedOut {
        unended: Vec<u32>,
    },
}

/// Segments of `listing` (of `count`) that have not written their end.
fn unended(listing: Option<&RunListing>, count: u32) -> Vec<u32> {
    (0..count)
        .filter(|i| {
            !listing.is_some_and(|l| l.segments.iter().any(|s| s.index == Some(*i) && s.ended))
        })
        .collect()
}

/// Polls the run at `run` until it ends (see the module docs).
pub fn wait_for_segments(
    run: &Remote,
    options: WaitOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<WaitOutcome, RemoteError> {
    let began = Instant::now();
    let mut last_said = String::new();
    loop {
        let runs = find_runs(run)?;
        let listing = runs.iter().find(|r| r.prefix.is_empty());
        if listing.is_some_and(|l| l.barrier_failed) {
            let reason = run
                .get(crate::layout::FAILED)?
                .map(|b| String::from_utf8_lossy(&b).trim().to_string())
                .unwrap_or_default();
            return Ok(WaitOutcome::BarrierFailed(reason));
        }
        let start: Option<StartTime> = run
            .get(START)?
            .and_then(|b| serde_json::from_slice(&b).ok());
        let count = listing
            .and_then(|l| l.count)
            .or(start.as_ref().map(|s| s.count));
        if let Some(count) = count {
            let left = unended(listing, count);
            if left.is_empty() {
                return Ok(WaitOutcome::AllEnded);
            }
            let planned = listing.and_then(|l| l.planned_duration_s);
            if let (Some(s), Some(planned)) = (&start, planned) {
                let over = s.start_unix_s + planned + options.grace.as_secs_f64();
                if now_unix_s() > over {
                    return Ok(WaitOutcome::PlannedEndPassed { unended: left });
                }
            }
            let said = format!(
                "waiting for {} of {count} segments to end: {}",
                left.len(),
                left.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if said != last_said {
                progress(&said);
                last_said = said;
            }
            if began.elapsed() >= options.timeout {
                return Ok(WaitOutcome::TimedOut { unended: left });
            }
        } else {
            if last_said.is_empty() {
                last_said = "waiting for the first segment to arrive".into();
                progress(&last_said);
            }
            if began.elapsed() >= options.timeout {
                return Ok(WaitOutcome::TimedOut {
                    unended: Vec::new(),
                });
            }
        }
        std::thread::sleep(options.poll);
    }
}
