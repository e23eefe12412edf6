//! The Jobs: an Indexed Job whose pod i runs segment i of N and meets the others at the start
//! barrier in object storage, and the optional merge Job. Both run the same image as a
//! non-root user on a read-only root file system with a scratch `/tmp`.

use crate::config_map::{config_map_name, items, ScenarioFile, MOUNT};
use crate::object_meta::{labels, metadata};
use crate::options::K8sOptions;
use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvFromSource,
    EnvVar, EnvVarSource, ObjectFieldSelector, PodAffinityTerm, PodAntiAffinity,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile,
    SecretEnvSource, SecretKeySelector, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use loadlab_scenario::Scenario;
use std::collections::BTreeMap;

const CONTAINER: &str = "loadlab";
/// The distroless `nonroot` user the image runs as.
const USER: i64 = 65532;
/// loadlab's own verdicts (1 thresholds, 2 bad input, 3 invalid or aborted): a retry would
/// not change them, so they fail the index at once.
const DECIDED_EXIT_CODES: [i32; 3] = [1, 2, 3];

fn field_env(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn plain_env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        ..Default::default()
    }
}

/// The pods' environment: where they run (for the per-segment table), scratch space, the
/// user's plain variables and Secret references.
fn env(o: &K8sOptions) -> (Vec<EnvVar>, Option<Vec<EnvFromSource>>) {
    let mut env = vec![
        field_env("NODE_NAME", "spec.nodeName"),
        field_env("POD_NAME", "metadata.name"),
        plain_env("TMPDIR", "/tmp"),
        plain_env("LOADLAB_RESULTS", "/tmp/loadlab-results"),
    ];
    env.extend(o.env.iter().map(|e| plain_env(&e.name, &e.value)));
    env.extend(o.secret_env.iter().map(|s| EnvVar {
        name: s.env.clone(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: s.secret.clone(),
                key: s.key.clone(),
                optional: Some(false),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }));
    let env_from = (!o.secrets.is_empty()).then(|| {
        o.secrets
            .iter()
            .map(|s| EnvFromSource {
                secret_ref: Some(SecretEnvSource {
                    name: s.clone(),
                    optional: Some(false),
                }),
                ..Default::default()
            })
            .collect()
    });
    (env, env_from)
}

fn quantity(text: &str) -> Quantity {
    Quantity(text.to_string())
}

fn container(
    o: &K8sOptions,
    args: Vec<String>,
    resources: ResourceRequirements,
    scenario: bool,
) -> Container {
    let (env, env_from) = env(o);
    let mut mounts = vec![VolumeMount {
        name: "tmp".into(),
        mount_path: "/tmp".into(),
        ..Default::default()
    }];
    if scenario {
        mounts.push(VolumeMount {
            name: "scenario".into(),
            mount_path: MOUNT.into(),
            read_only: Some(true),
            ..Default::default()
        });
    }
    Container {
        name: CONTAINER.into(),
        image: Some(o.image.clone()),
        args: Some(args),
        env: Some(env),
        env_from,
        resources: Some(resources),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".into()]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        volume_mounts: Some(mounts),
        working_dir: Some("/tmp".into()),
        ..Default::default()
    }
}

fn pod_spec(container: Container, volumes: Vec<Volume>, affinity: Option<Affinity>) -> PodSpec {
    PodSpec {
        restart_policy: Some("Never".into()),
        containers: vec![container],
        volumes: Some(volumes),
        affinity,
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(USER),
            run_as_group: Some(USER),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        // SIGTERM stops a segment cleanly: its partial record is uploaded and ended.
        termination_grace_period_seconds: Some(60),
        ..Default::default()
    }
}

fn tmp_volume() -> Volume {
    Volume {
        name: "tmp".into(),
        empty_dir: Some(EmptyDirVolumeSource {
            size_limit: Some(quantity("1Gi")),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One generator per node: no two segment pods of this run on one host.
fn spread(o: &K8sOptions) -> Affinity {
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector {
                    match_labels: Some(labels(o, "segment")),
                    ..Default::default()
                }),
                topology_key: "kubernetes.io/hostname".into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Seconds from the first pod's start to the plan's end, with room for the slowest pod to
/// arrive (the barrier timeout), the last requests' timeouts and the uploads.
fn run_seconds(scenario: &Scenario, o: &K8sOptions) -> i64 {
    let plan = scenario.plan().duration().as_secs_f64();
    let timeout = scenario.defaults.timeout.as_secs_f64().min(30.0);
    (o.barrier_timeout.as_secs_f64() + plan + timeout + 120.0).ceil() as i64
}

/// The pods' command: segment `$(JOB_COMPLETION_INDEX)` of N (kubelet expands the variable,
/// which the Job controller sets on every pod of an Indexed Job).
pub fn segment_args(o: &K8sOptions, scenario_file: &str, run_url: &str) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        format!("{MOUNT}/{scenario_file}"),
        "--segment".into(),
        format!("$(JOB_COMPLETION_INDEX)/{}", o.parallelism),
        "--results".into(),
        run_url.to_string(),
        "--barrier-timeout".into(),
        format!("{}s", o.barrier_timeout.as_secs()),
        "--no-progress".into(),
    ];
    if let Some(t) = &o.target {
        args.push("--target".into());
        args.push(t.clone());
    }
    args.extend(o.run_flags.iter().cloned());
    args
}

pub fn segment_job(
    scenario: &Scenario,
    o: &K8sOptions,
    files: &[ScenarioFile],
    run_url: &str,
) -> Job {
    let resources = ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), quantity(&o.cpu)),
            ("memory".to_string(), quantity(&o.memory)),
        ])),
        // Limits equal to requests: Guaranteed QoS, so a generator gets whole, steady CPUs.
        limits: Some(BTreeMap::from([
            ("cpu".to_string(), quantity(&o.cpu)),
            ("memory".to_string(), quantity(&o.memory)),
        ])),
        ..Default::default()
    };
    let args = segment_args(o, &files[0].path, run_url);
    let volumes = vec![
        Volume {
            name: "scenario".into(),
            config_map: Some(ConfigMapVolumeSource {
                name: config_map_name(o),
                items: Some(items(files)),
                ..Default::default()
            }),
            ..Default::default()
        },
        tmp_volume(),
    ];
    let n = o.parallelism as i32;
    Job {
        metadata: metadata(o, &o.job_name(), "segment"),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(n),
            parallelism: Some(n),
            // A pod lost before the start (a node drained, an OOM at start-up) is retried
            // once; after the start a retry cannot join and fails its index with exit 3.
            backoff_limit_per_index: Some(1),
            // At most two attempts an index, so at most 2n failures in all. Said explicitly:
            // a server without per-index backoff (Kubernetes before 1.29, or the feature off)
            // drops the fields above without a word and would otherwise retry a failing
            // segment until the deadline (seen on a v1.30 server, bench/k8s-apiserver.sh).
            backoff_limit: Some(2 * n),
            // One failed index must not stop the others: the merge marks it missing.
            max_failed_indexes: Some(n),
            pod_failure_policy: Some(PodFailurePolicy {
                rules: vec![
                    PodFailurePolicyRule {
                        action: "FailIndex".into(),
                        on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                            container_name: Some(CONTAINER.into()),
                            operator: "In".into(),
                            values: DECIDED_EXIT_CODES.to_vec(),
                        }),
                        ..Default::default()
                    },
                    PodFailurePolicyRule {
                        action: "Ignore".into(),
                        on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                            type_: "DisruptionTarget".into(),
                            status: "True".into(),
                        }]),
                        ..Default::default()
                    },
                ],
            }),
            active_deadline_seconds: Some(run_seconds(scenario, o)),
            ttl_seconds_after_finished: Some(86_400),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(o, "segment")),
                    ..Default::default()
                }),
                spec: Some(pod_spec(
                    container(o, args, resources, true),
                    volumes,
                    o.spread.then(|| spread(o)),
                )),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Waits for every segment to end (or the plan's end to pass), merges, and stores the
/// merged record, summary and report under `<run>/merged/`.
pub fn merge_job(scenario: &Scenario, o: &K8sOptions, run_url: &str) -> Job {
    let wait = run_seconds(scenario, o);
    let args = vec![
        "merge".to_string(),
        "--results".into(),
        run_url.to_string(),
        "--wait".into(),
        format!("{wait}s"),
    ];
    let resources = ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), quantity("250m")),
            ("memory".to_string(), quantity("256Mi")),
        ])),
        limits: Some(BTreeMap::from([(
            "memory".to_string(),
            quantity(&o.memory),
        )])),
        ..Default::default()
    };
    Job {
        metadata: metadata(o, &o.merge_job_name(), "merge"),
        spec: Some(JobSpec {
            completions: Some(1),
            parallelism: Some(1),
            backoff_limit: Some(2),
            active_deadline_seconds: Some(wait + 600),
            ttl_seconds_after_finished: Some(86_400),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(o, "merge")),
                    ..Default::default()
                }),
                spec: Some(pod_spec(
                    container(o, args, resources, false),
                    vec![tmp_volume()],
                    None,
                )),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}
