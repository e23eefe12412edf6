//! Kubernetes manifests for a distributed run (`loadlab k8s`): a ConfigMap carrying the
//! scenario and its CSV files, an Indexed Job whose pod i runs segment i of N
//! (`loadlab run … --segment $(JOB_COMPLETION_INDEX)/N --results URL`), and optionally a merge
//! Job that waits for the segments and merges them next to their records.
//!
//! Built from the typed API structs of `k8s-openapi` (the bindings kube-rs uses, generated
//! from the Kubernetes OpenAPI spec), pinned to API version 1.33: every field set here exists
//! there (Indexed Jobs, `backoffLimitPerIndex`, `podFailurePolicy` with `FailIndex`; all of
//! them on by default since 1.29), so a typo is a compile error, not a manifest the API server
//! rejects. Serialized with `serde_yaml_ng`, as the rest of loadlab reads YAML.

mod config_map;
mod error;
mod job;
mod object_meta;
mod options;

pub use error::K8sError;
pub use job::segment_args;
pub use options::{default_name, EnvVarSpec, K8sOptions, SecretKeyRef, DEFAULT_IMAGE};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use loadlab_scenario::Scenario;

/// The manifests of one distributed run.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    pub config_map: ConfigMap,
    pub job: Job,
    pub merge_job: Option<Job>,
    /// The run's own prefix (`--results` URL + `/` + name): what to merge.
    pub run_url: String,
    /// Comment lines printed before the manifests (how to apply, watch and merge).
    pub header: Vec<String>,
    /// What is likely a mistake, for the terminal (a comment in the YAML goes unread on its
    /// way to `kubectl apply`).
    pub warnings: Vec<String>,
}

/// Builds the manifests for `scenario` (read from `options.scenario_path`).
pub fn render(scenario: &Scenario, options: &K8sOptions) -> Result<Manifests, K8sError> {
    options.check()?;
    let (files, notes) = config_map::scenario_files(scenario, &options.scenario_path)?;
    let run_url = options.run_url();
    let config_map = config_map::config_map(options, &files)?;
    let job = job::segment_job(scenario, options, &files, &run_url);
    let merge_job = options
        .merge_job
        .then(|| job::merge_job(scenario, options, &run_url));
    let mut header = header(scenario, options, &run_url);
    header.extend(notes);
    let target = options.target.as_deref().or(scenario.target.as_deref());
    Ok(Manifests {
        config_map,
        job,
        merge_job,
        run_url,
        header,
        warnings: target.and_then(loopback_target).into_iter().collect(),
    })
}

/// A target on a loopback address: in each pod that is the pod itself, not the machine the
/// manifests were made on (nor the service under test).
fn loopback_target(target: &str) -> Option<String> {
    let url = url::Url::parse(target).ok()?;
    loadlab_scenario::is_loopback(&url).then(|| {
        format!(
            "the target {target} is a loopback address: in each pod it is the pod itself, not this machine or your service; give the address the pods reach it at (--target http://SERVICE.NAMESPACE.svc:PORT)"
        )
    })
}

fn header(scenario: &Scenario, o: &K8sOptions, run_url: &str) -> Vec<String> {
    let ns = o
        .namespace
        .as_deref()
        .map(|n| format!(" -n {n}"))
        .unwrap_or_default();
    let mut lines = vec![
        format!(
            "loadlab k8s: `{}` as {} segments (Indexed Job {}), results in {run_url}",
            scenario.name,
            o.parallelism,
            o.job_name()
        ),
        format!(
            "image {} (placeholder unless you built and pushed it; --image overrides)",
            o.image
        ),
        "apply:  loadlab k8s … | kubectl apply -f -".to_string(),
        format!(
            "watch:  kubectl{ns} get pods -l app.kubernetes.io/instance={} -w",
            o.name
        ),
    ];
    if o.merge_job {
        lines.push(format!(
            "merged: kubectl{ns} logs -f job/{}   (stored in {run_url}/merged/)",
            o.merge_job_name()
        ));
    } else {
        lines.push(format!("merge:  loadlab merge {run_url}"));
    }
    lines
}

impl Manifests {
    /// The manifests as one YAML stream, ready for `kubectl apply -f -`.
    pub fn to_yaml(&self) -> String {
        let mut out: String = self.header.iter().map(|l| format!("# {l}\n")).collect();
        let mut docs = vec![
            serde_yaml_ng::to_string(&self.config_map).expect("a ConfigMap serializes"),
            serde_yaml_ng::to_string(&self.job).expect("a Job serializes"),
        ];
        if let Some(m) = &self.merge_job {
            docs.push(serde_yaml_ng::to_string(m).expect("a Job serializes"));
        }
        for d in docs {
            out.push_str("---\n");
            out.push_str(&d);
        }
        out
    }
}
