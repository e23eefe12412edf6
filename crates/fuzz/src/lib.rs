//! A fuzz harness that runs on stable Rust, in `cargo test`: every input loadlab reads from a
//! user or a server — scenario files and every section of them, templates, thresholds,
//! durations, rates, HTTP/1.1 responses and chunked bodies, run and study JSON — is mutated from
//! a corpus of real examples and fed to the real code, which must not panic, hang or take
//! unbounded memory.
//!
//! Crate chosen: `proptest`, the maintained property-testing library: it drives the cases,
//! catches panics, and shrinks a failing input to a minimal one. Mutations are structure-aware
//! text edits (splices between corpus entries, a dictionary of hostile tokens: `1e20`, `{{`,
//! CR/LF, a byte-order mark, deep brackets...) rather than coverage-guided fuzzing, which needs
//! nightly-only tooling. A counting global allocator (see [`PeakAlloc`]) measures each case's
//! peak memory; a watchdog turns a hang into a failure.
//!
//! `cargo test -p loadlab-fuzz` runs a short, deterministic pass (256 cases per target).
//! `FUZZ_CASES=1000000 cargo test --release -p loadlab-fuzz -- --nocapture --test-threads 1`
//! is the long run (random seeds; `FUZZ_SEED=n` replays one); each target prints its figures.

mod alloc;
pub mod hostile;
mod mutate;
mod stream;

pub use alloc::PeakAlloc;
pub use mutate::{mutated, Mutation, DICTIONARY};
pub use stream::ScriptedStream;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::time::{Duration, Instant};

/// Cases per target: `FUZZ_CASES`, or a short pass for the test suite.
pub fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Longest a single case may take (parsing a few KiB of input).
pub const CASE_BUDGET: Duration = Duration::from_secs(2);
/// Most memory a single case may allocate at once.
pub const MEMORY_BUDGET: usize = 256 * 1024 * 1024;

/// What a target run found, printed as one line.
#[derive(Debug)]
pub struct Figures {
    pub target: &'static str,
    pub cases: u32,
    pub seconds: f64,
    pub slowest_case_ms: f64,
    pub peak_bytes: usize,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: {} cases in {:.1} s, 0 failures, slowest case {:.1} ms, peak case memory {:.1} MiB",
            self.target,
            self.cases,
            self.seconds,
            self.slowest_case_ms,
            self.peak_bytes as f64 / (1024.0 * 1024.0)
        )
    }
}

/// Runs `check` on [`cases`] values of `strategy` (deterministic unless `FUZZ_CASES` or
/// `FUZZ_SEED` is set); each case must finish within [`CASE_BUDGET`] and allocate at most
/// [`MEMORY_BUDGET`]. Panics with the minimal failing input; a hang fails by the watchdog.
pub fn run_target<S>(
    target: &'static str,
    memory: &'static PeakAlloc,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
) -> Figures
where
    S: Strategy + Send + 'static,
{
    let cases = cases();
    let limit = CASE_BUDGET * 4 + Duration::from_millis(u64::from(cases) * 20);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(format!("fuzz-{target}"))
        .spawn(move || {
            let _ = done_tx.send(drive(target, memory, strategy, check, cases));
        })
        .expect("spawn the fuzz thread");
    match done_rx.recv_timeout(limit) {
        Ok(Ok(figures)) => {
            println!("{figures}");
            figures
        }
        Ok(Err(failure)) => panic!("fuzz {target}: {failure}"),
        Err(_) => panic!("fuzz {target}: no result within {limit:?}: a case hangs"),
    }
}

fn drive<S: Strategy>(
    target: &'static str,
    memory: &'static PeakAlloc,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
    cases: u32,
) -> Result<Figures, String> {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    let random = seed.is_none() && std::env::var("FUZZ_CASES").is_ok();
    let mut runner = if random {
        TestRunner::new(config)
    } else {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.unwrap_or(0x010A_D1AB).to_le_bytes());
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
    };
    let started = Instant::now();
    let slowest = std::cell::Cell::new(Duration::ZERO);
    let peak = std::cell::Cell::new(0usize);
    runner
        .run(&strategy, |value| {
            let case_started = Instant::now();
            memory.reset_peak();
            check(value)?;
            let took = case_started.elapsed();
            let used = memory.peak_since_reset();
            slowest.set(slowest.get().max(took));
            peak.set(peak.get().max(used));
            if took > CASE_BUDGET {
                return Err(TestCaseError::fail(format!("a case took {took:?}")));
            }
            if used > MEMORY_BUDGET {
                return Err(TestCaseError::fail(format!(
                    "a case allocated {used} bytes"
                )));
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    Ok(Figures {
        target,
        cases,
        seconds: started.elapsed().as_secs_f64(),
        slowest_case_ms: slowest.get().as_secs_f64() * 1e3,
        peak_bytes: peak.get(),
    })
}
