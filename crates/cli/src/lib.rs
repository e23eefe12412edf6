//! The command line's shape: every `loadlab` subcommand's flags, declared with clap's derive
//! API and parsed into typed values (a `Duration`, a rate, a fraction, never the text); the
//! one source of the help text.
//!
//! A crate of its own, apart from the binary that acts on the flags, so that the parsing
//! tables are tested without spawning the binary, and help or man text can be generated from
//! this one place. It depends on plain libraries only (the scenario's value syntax, the
//! store's labels): no engine, pipeline or async runtime.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

mod control_args;
mod run_args;
mod values;

pub use control_args::ControlArgs;
use run_args::parse_label_flag;
pub use run_args::{
    DashboardArgs, LabelsEnvError, MonitorArgs, OutputArgs, RunArgs, DEFAULT_LIVE_ADDR,
};

#[derive(Parser)]
#[command(
    name = "loadlab",
    version,
    about = "Load testing that runs the whole performance study",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a scenario file, or a single URL given by flags.
    Run(Box<RunArgs>),
    /// Steer a run while it goes (started with --control or --dashboard): pause, resume,
    /// stop, a new rate or VU count; every command is kept in the run's record.
    Control(ControlArgs),
    /// Start the built-in system under test (for demos and tests).
    Target(TargetArgs),
    /// The main job on the built-in target, nothing to set up: an A/B study (2 variants × 6
    /// runs, about a minute) against two targets started in-process, ending in a report.
    Demo(DemoArgs),
    /// Check a scenario file without sending any request.
    Validate {
        /// The scenario file.
        file: PathBuf,
    },
    /// Print the JSON Schema of scenario files (for editors with a YAML language server).
    Schema,
    /// Write a scenario from a HAR recording, an Artillery script, an OpenAPI spec or a k6 script.
    Import(ImportArgs),
    /// Run a scenario's `study:` section: repetitions, variants or a sweep, with statistics.
    Study(StudyArgs),
    /// Compare two runs, two studies, or a run against a study (benchstat style).
    Compare(CompareArgs),
    /// Find the largest arrival rate that meets the scenario's SLO.
    Capacity(CapacityArgs),
    /// List stored runs (`loadlab runs`), or show one (`loadlab runs show ID`).
    Runs(RunsArgs),
    /// Write the HTML/Markdown report of a run, study, capacity search or comparison.
    Report(ReportArgs),
    /// Merge the records of the segments of one plan (`run --segment i/N`) into one run.
    Merge(MergeArgs),
    /// Print Kubernetes manifests that run a scenario as N pods (an Indexed Job) and merge them.
    K8s(Box<K8sArgs>),
    /// A scenario's runs (or a study's repetitions) over time, with change points marked.
    History(HistoryArgs),
    /// For CI: the newest run or study against the last stable segment of its history
    /// (compare's statistics); exit 1 on a significant regression beyond the margin.
    Gate(GateArgs),
    /// Store other load testers' result files (k6, vegeta, oha, JMeter, Gatling) as runs, each
    /// rebuilt exactly from its requests; `--study` makes a study of them.
    ImportResults(ImportResultsArgs),
}

#[derive(Args)]
pub struct ImportResultsArgs {
    /// What the files are: k6-json (--out json), k6-csv (--out csv), vegeta-json and
    /// vegeta-csv (vegeta encode --to json|csv), oha-sqlite (--db-url), jmeter-csv and
    /// jmeter-xml (.jtl), gatling-log (simulation.log, Gatling 3.0-3.11). locust-csv and k6-summary are refused
    /// (aggregates only).
    #[arg(value_name = "FORMAT")]
    pub format: String,
    /// The result files, one run each; `VARIANT=FILE` puts a file in a variant of the study.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
    /// The runs' name (their scenario in the store: runs of one name form a history;
    /// default: a Gatling log's simulation id, else the first file's name without extension).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The variant the runs belong to (their `variant` in the store and the study).
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// The tool's version, when the file does not say it (stored with each run).
    #[arg(long, value_name = "VERSION")]
    pub tool_version: Option<String>,
    /// Judge the runs by this threshold (repeatable), e.g. "latency.p95 < 200ms".
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<String>,
    /// Also make a study of the imported runs (per variant: median, 95% CI, CV, outliers;
    /// variants compared), stored and reported like `loadlab study`.
    #[arg(long)]
    pub study: bool,
    /// Label the runs (repeatable): commit=SHA, branch=main… LOADLAB_LABELS adds more.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label_flag)]
    pub labels: Vec<(String, String)>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print only the run ids (and errors).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct ImportArgs {
    /// What FILE is: har (a browser recording), artillery (a script), openapi (a 3.x spec) or
    /// k6 (a script).
    #[arg(value_name = "KIND", value_parser = ["har", "artillery", "openapi", "k6"])]
    pub kind: String,
    /// The file to import.
    pub file: PathBuf,
    /// Where to write the scenario (default: standard output).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// HAR: keep only requests to this host (repeatable; subdomains included).
    #[arg(long = "include-host", value_name = "HOST")]
    pub include_hosts: Vec<String>,
    /// HAR: drop requests to this host (repeatable; subdomains included).
    #[arg(long = "exclude-host", value_name = "HOST")]
    pub exclude_hosts: Vec<String>,
    /// HAR: keep only paths starting with this prefix (repeatable).
    #[arg(long = "include-path", value_name = "PREFIX")]
    pub include_paths: Vec<String>,
    /// HAR: drop paths starting with this prefix (repeatable).
    #[arg(long = "exclude-path", value_name = "PREFIX")]
    pub exclude_paths: Vec<String>,
    /// OpenAPI: one flow per operation (default: one flow per tag).
    #[arg(long)]
    pub per_operation: bool,
    /// HAR: the origin a recording's relative URLs are read against (default: the page's URL
    /// when the recording names it), e.g. https://shop.example.com.
    #[arg(long = "base-url", value_name = "URL")]
    pub base_url: Option<String>,
}

#[derive(Args, Clone)]
pub struct TargetArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: String,
    /// Requests served at once on /api/* (others queue). Default: unlimited.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Artificial service time per /api/* request, e.g. 2ms.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = values::duration)]
    pub service_time: Duration,
    /// Service time distribution: fixed or exp.
    #[arg(long, value_name = "DIST", default_value = "fixed")]
    pub service_dist: String,
    /// Degrade mid-run: this long after the first /api/* request, serve with
    /// --degraded-service-time instead (e.g. to try a threshold over a window that aborts).
    #[arg(long, value_name = "DURATION", requires = "degraded_service_time", value_parser = values::duration)]
    pub degrade_after: Option<Duration>,
    /// The service time once --degrade-after has passed, e.g. 300ms.
    #[arg(long, value_name = "DURATION", requires = "degrade_after", value_parser = values::duration)]
    pub degraded_service_time: Option<Duration>,
    /// Freeze now and then: counted from the first /api/* request, the last --stall-for of
    /// every --stall-every is a stall, and a request that comes during one waits for its end
    /// (e.g. --stall-every 5s --stall-for 1s: what a closed model's compensated latency shows).
    #[arg(long, value_name = "DURATION", requires = "stall_for", value_parser = values::duration)]
    pub stall_every: Option<Duration>,
    /// How long each stall of --stall-every lasts.
    #[arg(long, value_name = "DURATION", requires = "stall_every", value_parser = values::duration)]
    pub stall_for: Option<Duration>,
    /// Requests allowed to wait for a worker; beyond it: 503.
    #[arg(long, value_name = "N")]
    pub queue_limit: Option<usize>,
    /// Fraction of /api/* requests answered 500, e.g. 0.01.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub error_rate: f64,
    /// Server threads (1 to 1024).
    #[arg(long, value_name = "N", value_parser = values::threads)]
    pub threads: Option<usize>,
    /// Share the --listen port with other `loadlab target` processes (SO_REUSEPORT): the
    /// kernel spreads connections over them, beyond one process's open-files limit.
    #[arg(long)]
    pub reuse_port: bool,
    /// Serve HTTPS, ALPN `h2` and `http/1.1` (without --cert/--key: a self-signed
    /// certificate made at start; clients need --insecure). Plain HTTP also speaks h2c.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: the certificate chain (PEM).
    #[arg(long, value_name = "PATH", requires = "key")]
    pub cert: Option<PathBuf>,
    /// With --tls: the certificate's private key (PEM).
    #[arg(long, value_name = "PATH", requires = "cert")]
    pub key: Option<PathBuf>,
    /// /v1/chat/completions: sequences decoded together (continuous batching); more wait.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub batch: usize,
    /// /v1/chat/completions: a decode step with one sequence, e.g. 8ms.
    #[arg(long, value_name = "DURATION", default_value = "8ms", value_parser = values::duration)]
    pub step_time: Duration,
    /// /v1/chat/completions: added to a decode step per sequence in the batch.
    #[arg(long, value_name = "DURATION", default_value = "500us", value_parser = values::duration)]
    pub step_per_seq: Duration,
    /// /v1/chat/completions: prefill time per prompt token (word).
    #[arg(long, value_name = "DURATION", default_value = "100us", value_parser = values::duration)]
    pub prefill_per_token: Duration,
}

#[derive(Args, Clone)]
pub struct DemoArgs {
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Clone)]
pub struct StudyArgs {
    /// Scenario file with a `study:` section.
    pub file: PathBuf,
    /// Base URL for the scenario's relative paths (overrides `target:` in the file and variants).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Runs per variant (overrides `study.repeat`; at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub repeat: Option<u16>,
    /// Run an invalid run again, up to N times, when a re-run may not share its reason (the
    /// host held the generator up, other processes took its CPU); overrides
    /// `study.retry_invalid`. Every attempt is stored; the study keeps the valid one.
    #[arg(long, value_name = "N")]
    pub retry_invalid: Option<usize>,
    /// Run each repetition as a round of N generator processes (`run --variant V --segment
    /// i/N`, started together at a barrier, merged exactly into one run): the round is the
    /// study's unit, valid when every segment is. The report adds per-round and per-segment
    /// tables, a two-level bootstrap CI and the variance per level.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=64))]
    pub segments: Option<u32>,
    /// Continue an interrupted study (its id from `loadlab runs studies`): runs only what is
    /// missing, in the planned order; the scenario file must not have changed.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Write a JUnit XML report here (for CI test reporters): one test case per threshold and
    /// variant, failed when a run failed it, with each failing run's actual value.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary of the study here (for a CI step summary).
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub monitor: MonitorArgs,
    #[command(flatten)]
    pub live: DashboardArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Clone)]
pub struct CompareArgs {
    /// Baseline: a run id, a study id (`ID` or `ID:variant`), `last`, or a run/study JSON file.
    pub baseline: String,
    /// Candidate: same forms as the baseline.
    pub candidate: String,
    /// Exit 1 when a compared metric is significantly worse by more than this, e.g. 5%.
    #[arg(long, value_name = "PERCENT", value_parser = values::fraction)]
    pub fail_on_regression: Option<f64>,
    /// Equivalence band, e.g. 2%: a change whose whole 95% CI lies within ±band reads
    /// `equivalent` (default: the band of the baseline study, none for a run).
    #[arg(long, value_name = "PERCENT", value_parser = values::fraction)]
    pub equivalence: Option<f64>,
    /// Metric to compare, repeatable (default: throughput, errors, p50, p95, p99).
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Write the comparison (JSON, schema loadlab.compare.v1) to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here (for CI test reporters): one test case per compared
    /// metric, failed when it is a regression beyond --fail-on-regression.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary of the comparison here (for a CI step summary).
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    /// Print nothing but errors (the exit code tells the outcome).
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Clone)]
pub struct CapacityArgs {
    /// Scenario file (its flows, thresholds and optional `capacity:` section).
    pub file: PathBuf,
    /// Base URL for the scenario's relative paths (overrides `target:` in the file).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// First rate tried, e.g. 50/s.
    #[arg(long, value_name = "RATE", value_parser = values::rate)]
    pub start: Option<f64>,
    /// Measured length of each step, e.g. 30s.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub hold: Option<Duration>,
    /// Warm-up before each step's measurement, e.g. 5s.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub warmup: Option<Duration>,
    /// Bisection stops when the bracket is this narrow, e.g. 5%.
    #[arg(long, value_name = "PERCENT", value_parser = values::fraction)]
    pub precision: Option<f64>,
    /// Confirmation runs at the answer (all must pass).
    #[arg(long, value_name = "N")]
    pub confirm: Option<usize>,
    /// Highest rate tried, e.g. 100000/s.
    #[arg(long, value_name = "RATE", value_parser = values::rate)]
    pub max: Option<f64>,
    /// Highest error rate a passing step may have (default 1%; at most 100%).
    #[arg(long, value_name = "PERCENT", value_parser = values::error_rate)]
    pub max_errors: Option<f64>,
    /// Pause between steps, e.g. 2s.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub cooldown: Option<Duration>,
    /// Continue an interrupted capacity search (its id from `loadlab runs studies`).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub monitor: MonitorArgs,
    #[command(flatten)]
    pub live: DashboardArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Which points a history holds (`loadlab history`, `loadlab gate`).
#[derive(Args, Clone)]
pub struct SeriesArgs {
    /// The scenario's name (its runs) or a study's name (its studies' medians).
    #[arg(value_name = "SCENARIO|NAME")]
    pub name: String,
    /// Metrics to follow (repeatable; default: throughput, error rate, p50, p95, p99).
    #[arg(long = "metric", value_name = "ID")]
    pub metrics: Vec<String>,
    /// Only points started on or after this date or time (2026-11-01, 2026-11-01T12:00:00Z).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only points with this label (repeatable; all must match), e.g. branch=main.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label_flag)]
    pub labels: Vec<(String, String)>,
    /// Use the scenario's single runs even when studies of that name exist.
    #[arg(long)]
    pub runs: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The change-point detector's settings (Apache Otava's defaults).
#[derive(Args, Clone)]
pub struct DetectorArgs {
    /// A change point's t-test p-value must be below this (Otava's default 0.001).
    #[arg(long = "p-value", value_name = "P", default_value_t = 0.001)]
    pub p_value: f64,
    /// Points per detection window (Otava's default 50; windows overlap by half).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub window: usize,
    /// Smallest relative change kept as a change point, e.g. 5% (default for `history` 0:
    /// every significant one; for `gate`, its --fail-on-regression bound).
    #[arg(long = "min-magnitude", value_name = "PERCENT", value_parser = values::fraction)]
    pub min_magnitude: Option<f64>,
}

#[derive(Args, Clone)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    #[command(flatten)]
    pub detector: DetectorArgs,
    /// Also write the history as JSON (schema loadlab.history.v1) to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the trend report: this HTML file (self-contained), and beside it the Markdown
    /// (same name, .md) with its charts as SVG files.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
}

#[derive(Args, Clone)]
pub struct GateArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    #[command(flatten)]
    pub detector: DetectorArgs,
    /// Fail (exit 1) when a metric is significantly worse with its whole 95% CI beyond this
    /// change (default 5%).
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = values::fraction)]
    pub fail_on_regression: f64,
    /// Practical-equivalence band: a change whose whole CI lies within ±band reads
    /// `equivalent` (default: none).
    #[arg(long, value_name = "PERCENT", value_parser = values::fraction)]
    pub equivalence: Option<f64>,
    /// Also write the comparison as JSON (schema loadlab.compare.v1) to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a Markdown summary here (default: appended to $GITHUB_STEP_SUMMARY when set).
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    /// Write a JUnit XML report here (for CI test reporters): one test case per gated metric, a failure carrying the regression and the actual median.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
}

#[derive(Args, Clone)]
pub struct RunsArgs {
    /// `show ID` prints a stored run's summary.
    #[command(subcommand)]
    pub command: Option<RunsCommand>,
    /// How many runs to list (most recent first).
    #[arg(long, short = 'n', default_value_t = 30)]
    pub limit: usize,
    /// Where the runs are read from: a run store directory (default: $LOADLAB_RESULTS, else
    /// ./loadlab-results), or an object-storage prefix of distributed runs (s3://bucket/prefix,
    /// gs://…, az://…, file:///dir).
    #[arg(long, value_name = "DIR|URL", global = true)]
    pub results: Option<PathBuf>,
}

#[derive(Subcommand, Clone)]
pub enum RunsCommand {
    /// Print a stored run's summary.
    Show {
        /// Run id (or a unique prefix).
        id: String,
    },
    /// List stored studies and capacity searches.
    Studies,
}

#[derive(Args, Clone)]
pub struct ReportArgs {
    /// A run.json, study.json, capacity.json or comparison JSON file, or a study/run id
    /// in the run store (`last` = the latest study).
    pub input: String,
    /// html, md or json (the report model, on stdout). Default: HTML and Markdown beside the
    /// input — report.html/report.md for a stored run or study, else named after the input
    /// (result.json → result.html, result.md, result-charts/).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Write to this file (the format is taken from its extension unless --format is given),
    /// or into this directory (an existing one, or a path ending in / or without extension).
    #[arg(long, short = 'o', value_name = "PATH|DIR")]
    pub output: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Clone)]
pub struct MergeArgs {
    /// The segments' run directories (each holding a record.json) or their run ids, or the
    /// object-storage URL of a distributed run (s3://bucket/prefix/NAME).
    #[arg(value_name = "DIR|ID|URL")]
    pub inputs: Vec<String>,
    /// With a URL: first wait up to this long for the segments to end, e.g. 30m.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub wait: Option<Duration>,
    /// Also write the merged run result (JSON, schema loadlab.run.v2) to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors (the exit code tells the outcome).
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not fail (exit 3) when a segment's generator or host was saturated (its CPU, its
    /// scheduler, or other processes taking the host's CPU): the result still says so.
    #[arg(long)]
    pub allow_saturated: bool,
    /// Where the merged run is stored: a run store directory (default: $LOADLAB_RESULTS, else
    /// ./loadlab-results). A URL is not where it goes: it names the object-storage prefix of
    /// the distributed run to merge, as an input does.
    #[arg(long, value_name = "DIR|URL")]
    pub results: Option<PathBuf>,
}

#[derive(Args, Clone)]
pub struct K8sArgs {
    /// The scenario file (its CSV data files travel with it).
    pub file: PathBuf,
    /// Segments, one pod each (the Indexed Job's completions and parallelism).
    #[arg(long, value_name = "N")]
    pub parallelism: u32,
    /// Where the pods store the run: an object-storage prefix (s3://bucket/prefix, gs://…,
    /// az://…) they write their segments to, under URL/NAME; not a local run store directory.
    #[arg(long, value_name = "URL")]
    pub results: String,
    /// Container image (default: the placeholder ghcr.io/OWNER/loadlab:VERSION; build and push
    /// the repository's Dockerfile and give its name).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// The run's name: Job name and last part of its results prefix (default:
    /// loadlab-<scenario>-<time>).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// CPU per pod, requested and limited alike (Guaranteed QoS).
    #[arg(long, value_name = "QUANTITY", default_value = "2")]
    pub cpu: String,
    /// Memory per pod, requested and limited alike.
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi")]
    pub memory: String,
    /// At most one generator pod per node (required pod anti-affinity).
    #[arg(long)]
    pub spread: bool,
    /// Also a Job that waits for the segments, merges them and stores the merged run and its
    /// report under URL/NAME/merged/.
    #[arg(long)]
    pub merge_job: bool,
    /// Base URL for the scenario's relative paths, passed to the pods' `loadlab run`.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// A Secret whose keys become the pods' environment (object-store credentials), repeatable.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// One variable from a Secret's key: ENV=SECRET:KEY, repeatable.
    #[arg(long = "secret-env", value_name = "ENV=SECRET:KEY")]
    pub secret_env: Vec<String>,
    /// A plain variable for the pods (AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP…), repeatable;
    /// credentials are refused here (use --secret).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// How long a pod waits at the start barrier for the others (default 300s).
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = values::duration)]
    pub barrier_timeout: Duration,
    /// Every pod speaks HTTP/2 (`loadlab run --http2`: ALPN h2 over TLS, h2c over http://).
    #[arg(long)]
    pub http2: bool,
    /// The pods' HTTP/2 client, wire or h2 (`loadlab run --http2-client`).
    #[arg(long, value_name = "h2|wire", value_parser = |t: &str| values::http2_client(t).map(|_| t.to_string()))]
    pub http2_client: Option<String>,
    /// The pods accept any TLS certificate (`loadlab run --insecure`).
    #[arg(long)]
    pub insecure: bool,
}

/// The run store a command reads or adds to: one flag, one meaning, for every command that
/// only needs a local store.
#[derive(Args, Clone, Default)]
pub struct StoreArgs {
    /// The run store directory (default: $LOADLAB_RESULTS, else ./loadlab-results): a local
    /// directory, not object storage.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
}
