//! `loadlab k8s FILE --parallelism N --results URL`: prints the manifests of a distributed
//! run (ConfigMap, Indexed Job, optional merge Job) for `kubectl apply -f -`. The scenario is
//! checked first, as `loadlab run` would check it.

use crate::cli::K8sArgs;
use crate::exit::{CliError, Outcome};
use loadlab_k8s::{default_name, render, EnvVarSpec, K8sOptions, SecretKeyRef, DEFAULT_IMAGE};
use loadlab_scenario::{check_target, Scenario, ScenarioError};

pub fn execute(args: K8sArgs) -> Result<Outcome, CliError> {
    let scenario = Scenario::from_file(&args.file)?;
    if let Some(t) = &args.target {
        check_target(t).map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    let env = args
        .env
        .iter()
        .map(|e| EnvVarSpec::parse(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::bad_input)?;
    let secret_env = args
        .secret_env
        .iter()
        .map(|e| SecretKeyRef::parse(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::bad_input)?;
    let barrier_timeout = args.barrier_timeout;
    let stamp = loadlab_metrics::result::rfc3339(std::time::SystemTime::now());
    let options = K8sOptions {
        scenario_path: args.file.clone(),
        parallelism: args.parallelism,
        image: args.image.unwrap_or_else(|| DEFAULT_IMAGE.to_string()),
        results: args.results,
        name: args
            .name
            .unwrap_or_else(|| default_name(&scenario.name, &stamp)),
        namespace: args.namespace,
        cpu: args.cpu,
        memory: args.memory,
        spread: args.spread,
        merge_job: args.merge_job,
        target: args.target,
        secrets: args.secrets,
        secret_env,
        env,
        barrier_timeout,
        run_flags: run_flags(args.http2, args.http2_client.as_deref(), args.insecure),
    };
    let manifests = render(&scenario, &options).map_err(CliError::bad_input)?;
    for warning in &manifests.warnings {
        super::output::warn(warning);
    }
    super::output::to_stdout(&manifests.to_yaml(), "the manifests")?;
    Ok(Outcome::Ok)
}

/// The `loadlab run` flags the pods take from `loadlab k8s`: they change what a segment sends
/// or how it measures, and a pod given only `--target` measured something else than asked.
fn run_flags(http2: bool, http2_client: Option<&str>, insecure: bool) -> Vec<String> {
    let mut flags = Vec::new();
    if http2 {
        flags.push("--http2".to_string());
    }
    if let Some(client) = http2_client {
        flags.extend(["--http2-client".to_string(), client.to_string()]);
    }
    if insecure {
        flags.push("--insecure".to_string());
    }
    flags
}
