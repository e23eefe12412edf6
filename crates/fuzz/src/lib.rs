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
//! Time budgets are this machine's own: they are stated for the machine the suite was written
//! on and scaled by a calibration run ([`Calibration`]), and the watchdog watches the case that
//! is running, not the whole run, so a slow machine (or a debug build) is told apart from a
//! hang, and every failure prints the figures it rests on.
//!
//! `cargo test -p loadlab-fuzz` runs a short, deterministic pass (256 cases per target).
//! `FUZZ_CASES=1000000 cargo test --release -p loadlab-fuzz -- --nocapture --test-threads 1`
//! is the long run (random seeds; `FUZZ_SEED=n` replays one); each target prints its figures.

mod alloc;
mod calibrate;
pub mod hostile;
mod mutate;
mod stream;

pub use alloc::PeakAlloc;
pub use calibrate::{Calibration, REFERENCE_UNIT};
pub use mutate::{mutated, Mutation, DICTIONARY};
pub use stream::ScriptedStream;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Cases per target: `FUZZ_CASES`, or a short pass for the test suite.
pub fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Longest a single case may take (parsing a few KiB of input) where the budgets were set:
/// scaled by this machine's [`Calibration`]. The slowest case of the suite's pass takes about
/// a tenth of it there.
pub const CASE_BUDGET: Duration = Duration::from_secs(2);
/// A case still running after this many case budgets hangs.
pub const HANG_AFTER_BUDGETS: u32 = 5;
/// Most memory a single case may allocate at once.
pub const MEMORY_BUDGET: usize = 256 * 1024 * 1024;

/// What a target run found, printed as one line.
#[derive(Debug)]
pub struct Figures {
    pub target: &'static str,
    pub cases: u32,
    pub seconds: f64,
    pub slowest_case_ms: f64,
    /// Size of the slowest case's input, when the target's inputs have one.
    pub slowest_case_bytes: Option<usize>,
    pub peak_bytes: usize,
    pub calibration: Calibration,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: {} cases in {:.1} s, 0 failures, slowest case {:.1} ms{}, peak case memory {:.1} MiB; case budget {:.1} s ({})",
            self.target,
            self.cases,
            self.seconds,
            self.slowest_case_ms,
            self.slowest_case_bytes
                .map(|b| format!(" ({b} bytes of input)"))
                .unwrap_or_default(),
            self.peak_bytes as f64 / (1024.0 * 1024.0),
            self.calibration.scale(CASE_BUDGET).as_secs_f64(),
            self.calibration.words()
        )
    }
}

/// The size of a fuzz input, for the figures (`None` for inputs without one).
pub trait InputSize {
    fn input_size(&self) -> Option<usize> {
        None
    }
}

impl InputSize for Vec<u8> {
    fn input_size(&self) -> Option<usize> {
        Some(self.len())
    }
}

/// Mutated bytes with the cuts (and flags) they are read with: the bytes' size.
impl<B> InputSize for (Vec<u8>, B) {
    fn input_size(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

impl<B, C> InputSize for (Vec<u8>, B, C) {
    fn input_size(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The case the fuzz thread is running, watched by the watchdog.
#[derive(Default)]
struct Progress {
    /// When the running case started (µs since the run started, +1), 0 between cases.
    case_started_us: AtomicU64,
    cases_done: AtomicU32,
}

/// Runs `check` on [`cases`] values of `strategy` (deterministic unless `FUZZ_CASES` or
/// `FUZZ_SEED` is set); each case must finish within [`CASE_BUDGET`] and allocate at most
/// [`MEMORY_BUDGET`], the time scaled by this machine's [`Calibration`]. Panics with the
/// minimal failing input; a case running for [`HANG_AFTER_BUDGETS`] budgets fails as a hang.
pub fn run_target<S>(
    target: &'static str,
    memory: &'static PeakAlloc,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
) -> Figures
where
    S: Strategy + Send + 'static,
    S::Value: InputSize,
{
    let cases = cases();
    let calibration = Calibration::measure();
    let budget = calibration.scale(CASE_BUDGET);
    let hang = budget * HANG_AFTER_BUDGETS;
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let watched = Arc::clone(&progress);
    std::thread::Builder::new()
        .name(format!("fuzz-{target}"))
        .spawn(move || {
            let run = Run {
                target,
                memory,
                cases,
                calibration,
                budget,
                progress: watched,
                started,
            };
            let _ = done_tx.send(run.drive(strategy, check));
        })
        .expect("spawn the fuzz thread");
    loop {
        match done_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(figures)) => {
                println!("{figures}");
                return figures;
            }
            Ok(Err(failure)) => panic!("fuzz {target}: {failure}"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("fuzz {target}: the fuzz thread died without a result")
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        let case_started = progress.case_started_us.load(Ordering::Acquire);
        if case_started == 0 {
            continue;
        }
        let running = started
            .elapsed()
            .saturating_sub(Duration::from_micros(case_started - 1));
        if running > hang {
            panic!(
                "fuzz {target}: a case hangs: it has run for {:.1} s, {HANG_AFTER_BUDGETS}× the case budget of {:.1} s on this machine ({}); {} case(s) finished in {:.1} s before it",
                running.as_secs_f64(),
                budget.as_secs_f64(),
                calibration.words(),
                progress.cases_done.load(Ordering::Acquire),
                started.elapsed().as_secs_f64() - running.as_secs_f64()
            );
        }
    }
}

/// One target's pass, on the fuzz thread.
struct Run {
    target: &'static str,
    memory: &'static PeakAlloc,
    cases: u32,
    calibration: Calibration,
    budget: Duration,
    progress: Arc<Progress>,
    started: Instant,
}

impl Run {
    fn drive<S: Strategy>(
        self,
        strategy: S,
        check: impl Fn(S::Value) -> Result<(), TestCaseError>,
    ) -> Result<Figures, String>
    where
        S::Value: InputSize,
    {
        let config = Config {
            cases: self.cases,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config.clone(), rng());
        if std::env::var("FUZZ_SEED").is_err() && std::env::var("FUZZ_CASES").is_ok() {
            runner = TestRunner::new(config);
        }
        let slowest = std::cell::Cell::new((Duration::ZERO, None));
        let peak = std::cell::Cell::new(0usize);
        let (budget, progress, started) = (self.budget, &self.progress, self.started);
        runner
            .run(&strategy, |value| {
                let size = value.input_size();
                let case_started = Instant::now();
                let since = case_started.duration_since(started).as_micros() as u64 + 1;
                progress.case_started_us.store(since, Ordering::Release);
                self.memory.reset_peak();
                let outcome = check(value);
                let took = case_started.elapsed();
                progress.case_started_us.store(0, Ordering::Release);
                progress.cases_done.fetch_add(1, Ordering::AcqRel);
                outcome?;
                let used = self.memory.peak_since_reset();
                if took > slowest.get().0 {
                    slowest.set((took, size));
                }
                peak.set(peak.get().max(used));
                if took > budget {
                    return Err(TestCaseError::fail(format!(
                        "a case{} took {took:?}, beyond the case budget of {budget:?} on this machine ({})",
                        size.map(|b| format!(" of {b} bytes")).unwrap_or_default(),
                        self.calibration.words()
                    )));
                }
                if used > MEMORY_BUDGET {
                    return Err(TestCaseError::fail(format!(
                        "a case allocated {used} bytes"
                    )));
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        let (slowest, slowest_case_bytes) = slowest.get();
        Ok(Figures {
            target: self.target,
            cases: self.cases,
            seconds: self.started.elapsed().as_secs_f64(),
            slowest_case_ms: slowest.as_secs_f64() * 1e3,
            slowest_case_bytes,
            peak_bytes: peak.get(),
            calibration: self.calibration,
        })
    }
}

/// The deterministic generator of the suite's pass, or `FUZZ_SEED`'s.
fn rng() -> TestRng {
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.unwrap_or(0x010A_D1AB).to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}
