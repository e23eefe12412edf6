//! A study's runs as rounds of segments (`loadlab study FILE --segments N`): each run the
//! study asks for is N `loadlab run FILE --variant V --segment i/N` processes that meet at a
//! start barrier, merged exactly into one stored run of the study. A process per segment, as
//! `examples/seed-003-full-size.sh` does by hand: each has its own open-file limit, CPU
//! accounting and validity judgement, as a generator machine would; a round is valid only
//! when every segment is. The segments' own records stay beside the study (`segments/`), so
//! a round can be merged again or looked at segment by segment.

use crate::merge::{merge_into_run, open_records};
use crate::PipelineError;
use loadlab_engine::Cancel;
use loadlab_orchestrate::{ExecutedRun, Executor, RunRequest};
use loadlab_store::{Labels, NewRun, Store};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, SystemTime};

/// How long before the plan starts the segments are started: long enough for a process to
/// start and read its scenario on a busy 2-core machine, short beside a run.
const BARRIER_LEAD: Duration = Duration::from_millis(1500);

/// `loadlab run`'s exit code for bad input: a segment that cannot start stops the study.
const EXIT_BAD_INPUT: i32 = 2;

/// What every segment process is given.
#[derive(Debug, Clone)]
pub struct SegmentCommand {
    /// The loadlab binary (this one).
    pub program: PathBuf,
    /// The study's scenario file.
    pub file: PathBuf,
    /// `--target` of the study.
    pub target: Option<String>,
    /// Worker threads per segment (`--threads`).
    pub threads: Option<usize>,
    pub segments: u32,
}

impl SegmentCommand {
    fn command(&self, variant: &str, index: u32, start_at: &str, results: &Path) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.arg("run")
            .arg(&self.file)
            .args(["--variant", variant])
            .args(["--segment", &format!("{index}/{}", self.segments)])
            .args(["--start-at", start_at])
            .arg("--results")
            .arg(results)
            .args(["--quiet", "--no-progress"]);
        if let Some(t) = &self.target {
            cmd.args(["--target", t]);
        }
        if let Some(n) = self.threads {
            cmd.args(["--threads", &n.to_string()]);
        }
        cmd
    }
}

/// Makes each of the study's runs as a round of segment processes and stores the merged run.
pub struct SegmentedExecutor<'a> {
    store: &'a Store,
    cancel: &'a Cancel,
    command: SegmentCommand,
    study: String,
    labels: Labels,
    /// Where the rounds' segment records go (`<study dir>/segments`).
    scratch: PathBuf,
    rounds_made: usize,
}

impl<'a> SegmentedExecutor<'a> {
    pub fn new(
        store: &'a Store,
        cancel: &'a Cancel,
        command: SegmentCommand,
        study: &str,
        study_dir: &Path,
        labels: Labels,
    ) -> Self {
        Self {
            store,
            cancel,
            command,
            study: study.to_string(),
            labels,
            scratch: study_dir.join("segments"),
            rounds_made: 0,
        }
    }

    /// Starts every segment, waits for all (passing a stop on to them), and says which
    /// could not start.
    fn run_round(&mut self, variant: &str, dir: &Path) -> Result<(), PipelineError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            PipelineError::aborted(format!("{}: cannot create: {e}", dir.display()))
        })?;
        let start_at = barrier_time(SystemTime::now() + BARRIER_LEAD);
        let mut children = Vec::new();
        for i in 0..self.command.segments {
            let log = dir.join(format!("segment-{i}.log"));
            let stderr = std::fs::File::create(&log).map_err(|e| {
                PipelineError::aborted(format!("{}: cannot create: {e}", log.display()))
            })?;
            // A group of its own: a terminal's Ctrl-C reaches this process only, which passes
            // one SIGINT on (a second one would make a segment quit without its summary).
            let child = self
                .command
                .command(variant, i, &start_at, &segment_dir(dir, i))
                .process_group(0)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn();
            match child {
                Ok(c) => children.push((i, c)),
                Err(e) => {
                    stop_all(&mut children);
                    return Err(PipelineError::aborted(format!(
                        "cannot start segment {i}/{} ({}): {e}",
                        self.command.segments,
                        self.command.program.display()
                    )));
                }
            }
        }
        let statuses = wait_all(&mut children, self.cancel);
        for (i, status) in statuses {
            if status.code() == Some(EXIT_BAD_INPUT) {
                let log = dir.join(format!("segment-{i}.log"));
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(PipelineError::bad_input(format!(
                    "segment {i}/{} could not run: {}",
                    self.command.segments,
                    said.trim()
                )));
            }
        }
        Ok(())
    }
}

impl Executor for SegmentedExecutor<'_> {
    type Error = PipelineError;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, PipelineError> {
        let variant = request.variant.ok_or_else(|| {
            PipelineError::bad_input("--segments runs the variants of a study, not capacity steps")
        })?;
        // A resumed study keeps the rounds it made: the next one gets a directory of its own.
        let dir = loop {
            self.rounds_made += 1;
            let dir = self.scratch.join(format!("round-{:03}", self.rounds_made));
            if !dir.exists() {
                break dir;
            }
        };
        self.run_round(variant, &dir)?;
        let inputs: Vec<String> = (0..self.command.segments)
            .map(|i| segment_dir(&dir, i).to_string_lossy().into_owned())
            .collect();
        let records = open_records(&inputs, self.store).map_err(|e| {
            PipelineError::aborted(format!(
                "a segment of the round left no record ({e}); its log is in {}",
                dir.display()
            ))
        })?;
        let meta = NewRun {
            variant: Some(request.label.clone()),
            study: Some(self.study.clone()),
            labels: self.labels.clone(),
            ..Default::default()
        };
        let merged = merge_into_run(&records, &dir.to_string_lossy(), meta, self.store)?;
        if let Some(e) = merged.errors.first() {
            return Err(PipelineError::aborted(e.clone()));
        }
        Ok(ExecutedRun {
            id: merged.id,
            result: merged.result,
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn pause(&mut self, duration: Duration) {
        crate::measure::pause_unless_cancelled(self.cancel, duration);
    }
}

fn segment_dir(round: &Path, index: u32) -> PathBuf {
    round.join(format!("segment-{index}"))
}

/// `--start-at` with milliseconds: `2026-11-28T21:50:01.250Z`.
fn barrier_time(at: SystemTime) -> String {
    let whole = loadlab_metrics::result::rfc3339(at);
    let ms = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_millis())
        .unwrap_or(0);
    format!("{}.{ms:03}Z", whole.trim_end_matches('Z'))
}

/// Waits for every segment; a stop (a signal to this process) is passed on to them as
/// SIGINT, so each ends its run and keeps its record.
fn wait_all(children: &mut [(u32, Child)], cancel: &Cancel) -> Vec<(u32, ExitStatus)> {
    let mut done: Vec<(u32, ExitStatus)> = Vec::new();
    let mut told = false;
    while done.len() < children.len() {
        if cancel.is_cancelled() && !told {
            interrupt_all(children);
            told = true;
        }
        for (i, child) in children.iter_mut() {
            if done.iter().any(|(d, _)| d == i) {
                continue;
            }
            match child.try_wait() {
                Ok(Some(status)) => done.push((*i, status)),
                Ok(None) => {}
                Err(_) => {
                    if let Ok(status) = child.wait() {
                        done.push((*i, status));
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done
}

fn interrupt_all(children: &[(u32, Child)]) {
    for (_, child) in children {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a child's pid (not yet reaped) and a plain signal number.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
    }
}

fn stop_all(children: &mut [(u32, Child)]) {
    interrupt_all(children);
    for (_, child) in children.iter_mut() {
        let _ = child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_time_is_one_that_run_reads_back_to_the_millisecond() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_900_201_250);
        let text = barrier_time(at);
        assert_eq!(text, "2026-11-28T21:10:01.250Z");
        assert_eq!(crate::resolve::parse_start_at(&text), Ok(at));
    }
}
