//! `loadlab k8s FILE --parallelism N --results URL`: prints the manifests of a distributed
//! run (ConfigMap, Indexed Job, optional merge Job) for `kubectl apply -f -`. The scenario is
//! checked first, as `loadlab run` would check it.

use crate::cli::K8sArgs;
use crate::exit::{CliError, Outcome};
use loadlab_k8s::{default_name, render, EnvVarSpec, K8sOptions, SecretKeyRef, DEFAULT_IMAGE};
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::{check_target, Scenario, ScenarioError};
use std::io::Write;

pub fn execute(args: K8sArgs) -> Result<Outcome, CliError> {
    let scenario = Scenario::from_file(&args.file)?;
    if let Some(t) = &args.target {
        check_target(t).map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    let env = args
        .env
        .iter()
        .map(|e| match e.split_once('=') {
            Some((name, value)) => Ok(EnvVarSpec {
                name: name.trim().to_string(),
                value: value.to_string(),
            }),
            None => Err(CliError::bad_input(format!(
                "--env `{e}`: give NAME=VALUE, e.g. AWS_ENDPOINT_URL=http://minio.storage:9000"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let secret_env = args
        .secret_env
        .iter()
        .map(|e| {
            let parsed = e.split_once('=').and_then(|(env, r)| {
                let (secret, key) = r.split_once(':')?;
                Some(SecretKeyRef {
                    env: env.trim().to_string(),
                    secret: secret.trim().to_string(),
                    key: key.trim().to_string(),
                })
            });
            parsed.ok_or_else(|| {
                CliError::bad_input(format!(
                    "--secret-env `{e}`: give ENV=SECRET:KEY, e.g. AWS_SECRET_ACCESS_KEY=loadlab-s3:secret-key"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let barrier_timeout = parse_duration(&args.barrier_timeout)
        .map_err(|m| ScenarioError::flag("--barrier-timeout", m, None))?;
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
    };
    let manifests = render(&scenario, &options).map_err(CliError::bad_input)?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(manifests.to_yaml().as_bytes());
    let _ = out.flush();
    Ok(Outcome::Ok)
}
