//! The flags of `loadlab run` (and of the commands that make runs: study, capacity, the
//! dashboard): the load, the monitor, the live dashboard and the live outputs.

use super::values;
use clap::Args;
use loadlab_scenario::MonitorFlag;
use std::path::PathBuf;
use std::time::Duration;

/// Processes and cgroups sampled beside the run (added to the scenario's `monitor:`).
#[derive(Args, Clone, Default)]
pub struct MonitorArgs {
    /// Sample a process or cgroup every interval, e.g. target=port:8080, db=1234,
    /// jvm=match:java, db=cgroup:/sys/fs/cgroup/..., db=container:ID (repeatable; replaces
    /// the file's entry of the same name).
    #[arg(long = "monitor", value_name = "NAME=WHAT", value_parser = parse_monitor)]
    pub monitor: Vec<MonitorFlag>,
}

fn parse_monitor(text: &str) -> Result<MonitorFlag, String> {
    loadlab_scenario::parse_monitor_flag(text).map_err(|e| {
        let mut m = e.message.clone();
        if let Some(h) = &e.hint {
            m.push_str(&format!("\n  hint: {h}"));
        }
        m
    })
}

impl MonitorArgs {
    /// Adds the flags to a scenario's monitor section (flags win over the file).
    pub fn apply(&self, scenario: &mut loadlab_scenario::Scenario) {
        for flag in &self.monitor {
            scenario.monitor.apply_flag(flag.clone());
        }
    }
}

/// Where the dashboard (`--dashboard`) and the controls (`--control`) listen when given no
/// address.
pub const DEFAULT_LIVE_ADDR: &str = "127.0.0.1:5665";

/// The live web dashboard (`--dashboard [ADDR]`).
#[derive(Args, Clone, Default)]
pub struct DashboardArgs {
    /// Watch the run in a browser: serve a live dashboard on ADDR (default 127.0.0.1:5665;
    /// a port alone means loopback). Give it after the scenario file, or as --dashboard=ADDR.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_LIVE_ADDR)]
    pub dashboard: Option<String>,
    /// Keep the dashboard up this long after the command ends, e.g. 30s (default: stop at
    /// once, after the page was told the command ended).
    #[arg(long, value_name = "DURATION", requires = "dashboard", value_parser = values::duration, allow_hyphen_values = true)]
    pub dashboard_linger: Option<Duration>,
    /// Take commands while the run goes (pause, resume, stop, a new rate or VU count) on ADDR
    /// (default 127.0.0.1:5665), without the page: `loadlab control ADDR pause`. The
    /// dashboard (--dashboard) takes them too, from its page and the same API.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_LIVE_ADDR, conflicts_with = "dashboard")]
    pub control: Option<String>,
    /// The token every command must carry (`Authorization: Bearer TOKEN`). Required, and made
    /// up and printed when not given, when the controls listen beyond loopback.
    #[arg(long, value_name = "TOKEN")]
    pub control_token: Option<String>,
}

#[derive(Args, Clone)]
pub struct OutputArgs {
    /// Also write the result to this file: a run's (schema loadlab.run.v2), a study's
    /// (loadlab.study.v1) or a capacity search's (loadlab.capacity.v1).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors (the exit code tells the outcome).
    #[arg(long, short)]
    pub quiet: bool,
    /// No live progress line.
    #[arg(long)]
    pub no_progress: bool,
    /// Do not fail (exit 3) when the load generator or its host was saturated (its CPU, its
    /// scheduler, or other processes taking the host's CPU): the result still says so.
    #[arg(long)]
    pub allow_saturated: bool,
    /// Worker threads (default: enough for the load, at most one per core; 1 to 1024).
    #[arg(long, value_name = "N", value_parser = values::threads)]
    pub threads: Option<usize>,
    /// Where the runs are stored: a run store directory (default: $LOADLAB_RESULTS, else
    /// ./loadlab-results); `loadlab run` also takes an object-storage prefix (s3://bucket/prefix,
    /// gs://…, az://…, file:///dir) its run is uploaded to, `study` and `capacity` do not.
    #[arg(long, value_name = "DIR|URL")]
    pub results: Option<PathBuf>,
    /// Label the run, study or capacity search (repeatable): commit=SHA, branch=main… Stored
    /// and filterable (`loadlab history --label`). LOADLAB_LABELS adds comma-separated ones
    /// (a flag wins for the same key).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label_flag)]
    pub labels: Vec<(String, String)>,
    /// Also send each interval while the run goes (repeatable): json=PATH, csv=PATH,
    /// prometheus-rw=URL, otlp=URL. Adds to the scenario's `outputs:` (see docs/live.md).
    #[arg(long = "out", value_name = "KIND=DEST", value_parser = parse_out_flag)]
    pub outputs: Vec<loadlab_scenario::OutputSpec>,
}

fn parse_out_flag(text: &str) -> Result<loadlab_scenario::OutputSpec, String> {
    loadlab_scenario::OutputSpec::parse(text)
}

pub(crate) fn parse_label_flag(text: &str) -> Result<(String, String), String> {
    loadlab_store::parse_label(text).map_err(|e| e.to_string())
}

/// `LOADLAB_LABELS` is not a list of labels (the message names the variable).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LabelsEnvError(String);

impl OutputArgs {
    /// The labels to store: `LOADLAB_LABELS`, then the `--label` flags over it.
    pub fn resolved_labels(&self) -> Result<loadlab_store::Labels, LabelsEnvError> {
        loadlab_store::labels_from_env(&self.labels).map_err(LabelsEnvError)
    }
}

#[derive(Args, Clone)]
pub struct RunArgs {
    /// Scenario file (YAML). Omit it to test one URL given by --url.
    pub file: Option<PathBuf>,
    /// Run one variant (or sweep point, e.g. `vus=50`) of the file's `study:` section: its
    /// overrides applied, as the study runs it (each segment of `study --segments` does).
    #[arg(long, value_name = "NAME", requires = "file")]
    pub variant: Option<String>,
    /// Base URL for the scenario's relative paths (overrides `target:` in the file).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// The URL to test (flag mode).
    #[arg(long, value_name = "URL", conflicts_with = "file")]
    pub url: Option<String>,
    /// HTTP method (flag mode).
    #[arg(long, short = 'X', value_name = "METHOD", requires = "url")]
    pub method: Option<String>,
    /// Request header `Name: value`, repeatable (flag mode).
    #[arg(long = "header", short = 'H', value_name = "HEADER", requires = "url")]
    pub headers: Vec<String>,
    /// Request body (flag mode).
    #[arg(long, value_name = "TEXT", requires = "url")]
    pub body: Option<String>,
    /// Closed model: this many virtual users, each sending requests back to back. With a
    /// scenario file: replaces its load with this many VUs (for --duration, else as long).
    #[arg(long, value_name = "N", value_parser = values::count::<u32>)]
    pub vus: Option<u32>,
    /// Open model: arrivals per second, e.g. 200/s or 12000/m. With a scenario file:
    /// replaces its load with this constant rate (for --duration, else as long).
    #[arg(long, value_name = "RATE", value_parser = values::rate)]
    pub rate: Option<f64>,
    /// How long to run, e.g. 30s, 1m30s. With a scenario file: the length of its one
    /// constant stage (a staged load needs --vus or --rate as well).
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// Stop after this many requests (instead of, or as well as, --duration); with a
    /// scenario file, after this many iterations (closed) or arrivals (open).
    #[arg(long, short = 'n', value_name = "N", value_parser = values::count::<u64>)]
    pub requests: Option<u64>,
    /// Per-request timeout (default 30s; with a scenario file, overrides `defaults.timeout`).
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,
    /// Open model: most requests open at once (default 10000, or the file's).
    #[arg(long, value_name = "N", value_parser = values::count::<u32>)]
    pub max_in_flight: Option<u32>,
    /// Open model: arrivals closer together than this start together, when the first is this
    /// late (default 800us, or the file's `load.batch_window`; at most 10ms). 0 starts each at
    /// its own time: sub-millisecond send lag, for about 2.5x the CPU per request.
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub batch_window: Option<Duration>,
    /// Closed model: each VU starts an iteration at most once per this long, e.g. 100ms (its
    /// intended schedule, `load.pace`): latency is then also compensated for coordinated
    /// omission against it.
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub pace: Option<Duration>,
    /// The first part of the run, recorded but left out of statistics and thresholds, e.g. 5s
    /// (overrides `warmup:` in the file).
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub warmup: Option<Duration>,
    /// Local source addresses to spread connections over, e.g. 127.0.0.1-127.0.0.16.
    #[arg(long, value_name = "ADDRS")]
    pub source_addrs: Option<String>,
    /// Connection reuse: per_vu (default), shared, or none.
    #[arg(long, value_name = "POLICY")]
    pub connections: Option<String>,
    /// Skip TLS certificate verification.
    #[arg(long)]
    pub insecure: bool,
    /// Speak HTTP/2: ALPN `h2` over TLS, prior knowledge (h2c) over plain http:// (overrides
    /// `http.version`; steps that set their own version keep it).
    #[arg(long)]
    pub http2: bool,
    /// The HTTP/2 client: wire (loadlab's own, the default) or h2 (the `h2` crate: the way
    /// out if a server does not get on with the default). Streamed responses always use h2.
    #[arg(long, value_name = "h2|wire", value_parser = values::http2_client, hide_short_help = true)]
    pub http2_client: Option<loadlab_scenario::Http2Client>,
    /// Run only this share of the plan: segment i of N (0-based), e.g. 0/4. Segments of one
    /// plan, run by N processes or machines, merge exactly with `loadlab merge`.
    #[arg(long, value_name = "i/N")]
    pub segment: Option<String>,
    /// Start the plan at this wall-clock time (RFC 3339 UTC, e.g. 2026-11-23T10:00:00Z) or
    /// this long from now (+10s), so that segments line up.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// With --segment and --results URL: how long to wait at the start barrier for the other
    /// segments (default 300s).
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub barrier_timeout: Option<Duration>,
    /// With --results URL: how often the record is uploaded while the run goes (default 5s).
    #[arg(long, value_name = "DURATION", value_parser = values::duration, allow_hyphen_values = true)]
    pub upload_every: Option<Duration>,
    /// Compare this run against a stored study: `last` or a study id (one run is weak evidence).
    #[arg(long, value_name = "last|ID")]
    pub baseline: Option<String>,
    /// With --baseline: exit 1 when a metric is worse than the study by more than this, e.g. 5%.
    #[arg(long, value_name = "PERCENT", requires = "baseline", value_parser = values::fraction)]
    pub fail_on_regression: Option<f64>,
    /// Run again, up to N times, when the run is invalid for a reason a re-run may not have
    /// (the host held the generator up, other processes took its CPU, a shortfall), as a
    /// study does (`study.retry_invalid`); every attempt is stored, the last is the result.
    /// A run the host disturbed is made again after 1, 2, 4, at most 8 s.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retry_invalid: usize,
    /// Write a JUnit XML report here (for CI test reporters): one test case per threshold, a failure carrying the actual value.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary of the run here (its figures and thresholds; for a CI step
    /// summary).
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub monitor: MonitorArgs,
    #[command(flatten)]
    pub live: DashboardArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
