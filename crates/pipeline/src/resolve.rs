//! One scenario from what `loadlab run` was given: a scenario file or a URL to test, with the
//! flags that override the file (its load, timeout, target, source addresses, connection
//! policy, warm-up, TLS checks, HTTP version). Errors name the flag.

use crate::PipelineError;
use loadlab_orchestrate::study::StudyPlan;
use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::{
    parse_addresses, ConnectionPolicy, Http2Client, HttpVersion, LoadFlags, Scenario,
    ScenarioError, UrlTest,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The request of a `--url` test.
#[derive(Debug, Clone, Default)]
pub struct UrlRequest {
    pub url: Option<String>,
    pub method: Option<String>,
    pub headers: Vec<String>,
    pub body: Option<String>,
}

/// What to run and the flags over it.
#[derive(Debug, Clone, Default)]
pub struct RunFlags {
    pub file: Option<PathBuf>,
    /// A variant (or sweep point) of the file's `study:` section, by name: its scenario is run.
    pub variant: Option<String>,
    pub request: UrlRequest,
    pub load: LoadFlags,
    pub timeout: Option<Duration>,
    pub target: Option<String>,
    pub source_addrs: Option<String>,
    pub connections: Option<String>,
    pub warmup: Option<Duration>,
    pub insecure: bool,
    pub http2: bool,
    /// `--http2-client`: which HTTP/2 client the engine uses.
    pub http2_client: Option<Http2Client>,
}

/// The scenario of one variant (or sweep point, e.g. `vus=50`) of a file's `study:` section:
/// what a segment of a study's round runs, and a way to run one variant by hand.
fn study_variant(file: &Path, name: &str) -> Result<Scenario, PipelineError> {
    let doc = StudyDocument::read(file)?;
    let plan = StudyPlan::from_document(&doc, None, None).map_err(PipelineError::bad_input)?;
    let names: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    plan.variants
        .into_iter()
        .find(|v| v.name == name)
        .map(|v| v.scenario)
        .ok_or_else(|| {
            PipelineError::bad_input(format!(
                "--variant {name}: {} has no such variant in its study; its variants are: {}",
                file.display(),
                names.join(", ")
            ))
        })
}

fn flag<T>(name: &str, r: Result<T, String>) -> Result<T, ScenarioError> {
    r.map_err(|m| ScenarioError::flag(name, m, None))
}

impl RunFlags {
    /// Flags and file become one scenario (flags override the file).
    pub fn resolve(&self) -> Result<Scenario, PipelineError> {
        let mut scenario = match (&self.file, &self.request.url) {
            (Some(file), None) => {
                let mut scenario = match &self.variant {
                    Some(name) => study_variant(file, name)?,
                    None => Scenario::from_file(file)?,
                };
                self.apply_to_file(&mut scenario)?;
                scenario
            }
            (None, Some(url)) => UrlTest {
                url: url.clone(),
                method: self.request.method.clone(),
                headers: self.request.headers.clone(),
                body: self.request.body.clone(),
                load: self.load.clone(),
                timeout: self.timeout,
            }
            .into_scenario()?,
            (None, None) => {
                return Err(PipelineError::bad_input(
                    "nothing to run: give a scenario file (`loadlab run scenario.yaml`) or a URL (`loadlab run --url http://127.0.0.1:8080/ --vus 10 --duration 30s`)",
                ))
            }
            (Some(_), Some(_)) => {
                return Err(PipelineError::bad_input(
                    "give either a scenario file or --url, not both",
                ))
            }
        };
        self.apply_overrides(&mut scenario)?;
        Ok(scenario)
    }

    /// The flags that override a scenario file: its load (`--vus`, `--rate`, `--duration`,
    /// `--requests`, `--max-in-flight`) and its default `--timeout`. The request flags
    /// describe a `--url` test only and are refused with a file rather than ignored.
    fn apply_to_file(&self, scenario: &mut Scenario) -> Result<(), ScenarioError> {
        let url_only = [
            ("--method", self.request.method.is_some()),
            ("--header", !self.request.headers.is_empty()),
            ("--body", self.request.body.is_some()),
        ];
        if let Some((name, _)) = url_only.iter().find(|(_, given)| *given) {
            return Err(ScenarioError::flag(
                name,
                "describes the request of a `--url` test; a scenario file says its own requests",
                Some("edit the step in the file, or leave the flag out".into()),
            ));
        }
        if let Some(t) = self.timeout {
            scenario.defaults.timeout = t;
        }
        self.load.apply_to(scenario)
    }

    /// The flags that apply to a file and a URL test alike.
    fn apply_overrides(&self, scenario: &mut Scenario) -> Result<(), ScenarioError> {
        if let Some(t) = &self.target {
            flag("--target", scenario.set_target(t))?;
        }
        if let Some(s) = &self.source_addrs {
            scenario.source_addresses =
                flag("--source-addrs", parse_addresses(std::slice::from_ref(s)))?;
        }
        if let Some(c) = &self.connections {
            scenario.connections = connection_policy(c)?;
        }
        if let Some(w) = self.warmup {
            scenario.warmup = w;
            if let Some(problem) = scenario.warmup_problem() {
                return Err(ScenarioError::flag(
                    "--warmup",
                    problem,
                    Some("use a shorter --warmup or a longer --duration".into()),
                ));
            }
        }
        scenario.insecure |= self.insecure;
        if self.http2 {
            scenario.http.version = HttpVersion::Http2;
        }
        if let Some(client) = self.http2_client {
            // A plain-text URL test without --http2 speaks HTTP/1.1 (no ALPN to offer h2). A
            // file may still speak HTTP/2 in a step of its own or a gRPC step: not refused.
            let plain_url = self
                .request
                .url
                .as_deref()
                .is_some_and(|u| u.starts_with("http://"));
            if plain_url && scenario.http.version != HttpVersion::Http2 {
                return Err(ScenarioError::flag(
                    "--http2-client",
                    "chooses the HTTP/2 client, and this run speaks HTTP/1.1",
                    Some("give --http2 as well (or `http.version: \"2\"` in the file), or leave the flag out".into()),
                ));
            }
            scenario.http.client = client;
        }
        Ok(())
    }
}

fn connection_policy(text: &str) -> Result<ConnectionPolicy, ScenarioError> {
    match text {
        "per_vu" | "per-vu" => Ok(ConnectionPolicy::PerVu),
        "shared" => Ok(ConnectionPolicy::Shared),
        "none" => Ok(ConnectionPolicy::None),
        other => Err(ScenarioError::flag(
            "--connections",
            format!("unknown policy `{other}`"),
            Some("use per_vu, shared or none".into()),
        )),
    }
}

/// `2026-11-23T10:00:00Z` or `+10s` (from now).
pub fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Some(rel) = text.strip_prefix('+') {
        return parse_duration(rel).map(|d| SystemTime::now() + d);
    }
    loadlab_metrics::result::parse_rfc3339(text).ok_or_else(|| {
        format!("invalid start time `{text}`: expected an RFC 3339 UTC time like 2026-11-23T10:00:00Z, or +10s from now")
    })
}
