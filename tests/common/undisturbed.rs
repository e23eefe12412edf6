//! Runs the host may spoil, made again: an end-to-end test is about what the binary does,
//! and a run the binary honestly calls invalid because the host held it up (a vCPU
//! descheduled for 30 ms on a shared VM) says nothing about that. Such a run is made again
//! from scratch, at most [`ATTEMPTS`] times in all, the host given a few seconds to settle
//! first, as `loadlab run --retry-invalid 2` and a study do for a user; every attempt's reasons go to the test's stderr. A run invalid for
//! any of the generator's own reasons is never made again.

#![allow(dead_code)] // each test binary uses its own subset

use serde_json::Value;
use std::time::Duration;

/// Attempts of one run while the host disturbs it: a shared VM (CI's) can hold the generator up
/// for minutes at a time, so a test tries longer than a study's default of two retries.
pub const ATTEMPTS: usize = 5;

/// The invalidity kinds a run is made again for: the host's, never the generator's own.
pub const HOST_KINDS: [&str; 3] = ["host_contended", "cpu_stolen", "host_disturbed"];

/// The reasons (`kind: message`) of a run that exited 3 with every invalidity reason the
/// host's, from its run.json; empty for any other run.
pub fn host_reasons(code: Option<i32>, run: &Value) -> Vec<String> {
    if code != Some(3) {
        return Vec::new();
    }
    let reasons = run["validity"]["reasons"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let of_host = |r: &Value| HOST_KINDS.contains(&r["kind"].as_str().unwrap_or(""));
    if reasons.is_empty() || !reasons.iter().all(of_host) {
        return Vec::new();
    }
    reasons
        .iter()
        .map(|r| format!("{}: {}", r["kind"], r["message"]))
        .collect()
}

/// `attempt` (one run made from scratch: its own output files, its servers' counts taken
/// afresh; it returns the exit code, run.json and anything else the test reads), made again
/// while the host disturbed it. The last attempt is returned.
pub fn until_undisturbed<T>(
    what: &str,
    mut attempt: impl FnMut() -> (Option<i32>, Value, T),
) -> (Option<i32>, Value, T) {
    for n in 1.. {
        let made = attempt();
        let reasons = host_reasons(made.0, &made.1);
        if reasons.is_empty() || n == ATTEMPTS {
            return made;
        }
        // As `--retry-invalid` does: a shared VM's disturbance lasts seconds, so the host is
        // given 1, 2, 4, 8 s to settle before each attempt again.
        let settle = Duration::from_secs(1 << (n - 1).min(3));
        eprintln!(
            "{what}: attempt {n} invalid for the host's reasons, made again in {settle:?}: {reasons:?}"
        );
        std::thread::sleep(settle);
    }
    unreachable!("the attempts end at ATTEMPTS")
}
