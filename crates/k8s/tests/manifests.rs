//! The rendered manifests: the same bytes as the committed golden file (UPDATE_GOLDEN=1
//! rewrites it after a deliberate change), every document parsing back into the typed
//! Kubernetes structs unchanged, and the choices that matter asserted on those structs.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use loadlab_k8s::{render, EnvVarSpec, K8sOptions, Manifests, SecretKeyRef};
use loadlab_scenario::Scenario;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spike.yaml")
}

fn options(parallelism: u32) -> K8sOptions {
    K8sOptions {
        scenario_path: fixture(),
        parallelism,
        image: "ghcr.io/example/loadlab:0.1.0".into(),
        results: "s3://perf-results/loadlab".into(),
        name: "spike-1".into(),
        namespace: Some("perf".into()),
        cpu: "2".into(),
        memory: "1Gi".into(),
        spread: true,
        merge_job: true,
        target: None,
        secrets: vec!["loadlab-s3".into()],
        secret_env: vec![SecretKeyRef {
            env: "AWS_SESSION_TOKEN".into(),
            secret: "loadlab-sts".into(),
            key: "token".into(),
        }],
        env: vec![EnvVarSpec {
            name: "AWS_REGION".into(),
            value: "eu-west-1".into(),
        }],
        barrier_timeout: Duration::from_secs(300),
        run_flags: Vec::new(),
    }
}

fn rendered(parallelism: u32) -> Manifests {
    let scenario = Scenario::from_file(&fixture()).unwrap();
    render(&scenario, &options(parallelism)).unwrap()
}

#[test]
fn manifests_match_the_golden_file() {
    let yaml = rendered(4).to_yaml();
    // The fixture's path is absolute in no manifest: the golden file is machine-independent.
    assert!(!yaml.contains(env!("CARGO_MANIFEST_DIR")));
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/spike-4.yaml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &yaml).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        yaml,
        want,
        "rendered manifests differ from {}",
        golden.display()
    );
}

#[test]
fn every_document_round_trips_through_the_typed_structs() {
    let m = rendered(4);
    let yaml = m.to_yaml();
    let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&yaml)
        .map(|d| serde_yaml_ng::Value::deserialize(d).unwrap())
        .collect();
    assert_eq!(docs.len(), 3, "ConfigMap, Job, merge Job");
    let cm: ConfigMap = serde_yaml_ng::from_value(docs[0].clone()).unwrap();
    let job: Job = serde_yaml_ng::from_value(docs[1].clone()).unwrap();
    let merge: Job = serde_yaml_ng::from_value(docs[2].clone()).unwrap();
    assert_eq!(cm, m.config_map);
    assert_eq!(job, m.job);
    assert_eq!(Some(merge), m.merge_job);
    for (doc, kind, api) in [
        (&docs[0], "ConfigMap", "v1"),
        (&docs[1], "Job", "batch/v1"),
        (&docs[2], "Job", "batch/v1"),
    ] {
        assert_eq!(doc["kind"].as_str(), Some(kind));
        assert_eq!(doc["apiVersion"].as_str(), Some(api));
    }
}

#[test]
fn the_job_runs_one_segment_per_index_and_keeps_secrets_out() {
    let m = rendered(4);
    let spec = m.job.spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(4), Some(4)));
    assert_eq!(spec.backoff_limit_per_index, Some(1));
    let pod = spec.template.spec.as_ref().unwrap();
    let c = &pod.containers[0];
    let args = c.args.as_ref().unwrap();
    assert_eq!(
        args[..6],
        [
            "run",
            "/scenario/spike.yaml",
            "--segment",
            "$(JOB_COMPLETION_INDEX)/4",
            "--results",
            "s3://perf-results/loadlab/spike-1"
        ]
    );
    assert_eq!(m.run_url, "s3://perf-results/loadlab/spike-1");
    // Credentials only by reference.
    let env = c.env.as_ref().unwrap();
    assert!(env
        .iter()
        .all(|e| !e.name.contains("SECRET") || e.value.is_none()));
    let token = env.iter().find(|e| e.name == "AWS_SESSION_TOKEN").unwrap();
    assert!(token.value.is_none());
    assert_eq!(
        token
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap()
            .name,
        "loadlab-sts"
    );
    assert_eq!(
        c.env_from.as_ref().unwrap()[0]
            .secret_ref
            .as_ref()
            .unwrap()
            .name,
        "loadlab-s3"
    );
    // Where each pod runs is recorded through the downward API.
    for (name, path) in [
        ("NODE_NAME", "spec.nodeName"),
        ("POD_NAME", "metadata.name"),
    ] {
        let e = env.iter().find(|e| e.name == name).unwrap();
        let field = e.value_from.as_ref().unwrap().field_ref.as_ref().unwrap();
        assert_eq!(field.field_path, path);
    }
    // One generator per node, Guaranteed QoS, non-root.
    let anti = pod
        .affinity
        .as_ref()
        .unwrap()
        .pod_anti_affinity
        .as_ref()
        .unwrap();
    let term = &anti
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()[0];
    assert_eq!(term.topology_key, "kubernetes.io/hostname");
    let r = c.resources.as_ref().unwrap();
    assert_eq!(r.requests, r.limits);
    assert_eq!(
        pod.security_context.as_ref().unwrap().run_as_non_root,
        Some(true)
    );
    // The ConfigMap carries the scenario and its CSV, mounted back at their paths.
    let data = m.config_map.data.as_ref().unwrap();
    assert!(data["spike.yaml"].contains("model: burst"));
    assert!(data["data--users.csv"].starts_with("username,password\n"));
    let volume = pod
        .volumes
        .as_ref()
        .unwrap()
        .iter()
        .find(|v| v.name == "scenario")
        .unwrap();
    let items = volume.config_map.as_ref().unwrap().items.as_ref().unwrap();
    assert!(items
        .iter()
        .any(|i| i.key == "data--users.csv" && i.path == "data/users.csv"));
    // The merge Job merges the same prefix.
    let merge = m.merge_job.as_ref().unwrap();
    let margs = merge
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
        .args
        .clone()
        .unwrap();
    assert_eq!(
        margs[..3],
        ["merge", "--results", "s3://perf-results/loadlab/spike-1"]
    );
}

#[test]
fn bad_options_are_refused_with_the_fix() {
    let scenario = Scenario::from_file(&fixture()).unwrap();
    type Change = Box<dyn Fn(&mut K8sOptions)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|o| o.parallelism = 0), "--parallelism"),
        (Box::new(|o| o.name = "Spike_1".into()), "--name"),
        (Box::new(|o| o.cpu = "two".into()), "--cpu"),
        (Box::new(|o| o.memory = "1GB".into()), "--memory"),
        (Box::new(|o| o.results = "/tmp/results".into()), "--results"),
        (
            Box::new(|o| o.results = "file:///tmp/results".into()),
            "--results",
        ),
        (
            Box::new(|o| {
                o.env.push(EnvVarSpec {
                    name: "AWS_SECRET_ACCESS_KEY".into(),
                    value: "hunter2".into(),
                })
            }),
            "put it in a Secret",
        ),
    ];
    for (change, want) in cases {
        let mut o = options(2);
        change(&mut o);
        let e = render(&scenario, &o).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
        assert!(
            !e.contains("hunter2"),
            "a secret value must not be echoed: {e}"
        );
    }
}

#[test]
fn data_outside_the_scenario_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("users.csv"), "id\n1\n").unwrap();
    let sub = dir.path().join("scenarios");
    std::fs::create_dir(&sub).unwrap();
    let file = sub.join("s.yaml");
    std::fs::write(
        &file,
        "target: http://x.internal\nload: { model: burst, count: 2 }\ndata:\n  users: { csv: ../users.csv }\nsteps:\n  - { get: '/u/{{ users.id }}' }\n",
    )
    .unwrap();
    let scenario = Scenario::from_file(&file).unwrap();
    let mut o = options(2);
    o.scenario_path = file;
    let e = render(&scenario, &o).unwrap_err().to_string();
    assert!(e.contains("not inside the scenario's directory"), "{e}");
}

#[test]
fn data_too_large_for_a_config_map_is_refused_and_absolute_paths_stay_in_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..70_000)
        .map(|i| format!("user{i:06},pw{i:06}\n"))
        .collect();
    std::fs::write(
        dir.path().join("users.csv"),
        format!("username,password\n{rows}"),
    )
    .unwrap();
    let file = dir.path().join("s.yaml");
    let scenario_text = |csv: &str| {
        format!("target: http://x.internal\nload: {{ model: burst, count: 2 }}\ndata:\n  users: {{ csv: {csv} }}\nsteps:\n  - {{ get: '/u/{{{{ users.username }}}}' }}\n")
    };
    std::fs::write(&file, scenario_text("users.csv")).unwrap();
    let mut o = options(2);
    o.scenario_path = file.clone();
    let e = render(&Scenario::from_file(&file).unwrap(), &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than a ConfigMap holds"), "{e}");
    // Named by absolute path, the file is the image's business: not carried, said so.
    let abs = dir.path().join("users.csv");
    std::fs::write(&file, scenario_text(&abs.display().to_string())).unwrap();
    let m = render(&Scenario::from_file(&file).unwrap(), &o).unwrap();
    assert_eq!(m.config_map.data.as_ref().unwrap().len(), 1);
    assert!(m.to_yaml().contains("the image must contain it"));
}

#[test]
fn a_loopback_target_is_warned_of_and_a_cluster_address_is_not() {
    let scenario = Scenario::from_file(&fixture()).unwrap();
    assert!(
        rendered(2).warnings.is_empty(),
        "the fixture's target is a service"
    );
    for target in [
        "http://127.0.0.1:8080",
        "http://127.8.0.1",
        "http://[::1]:80",
        "http://localhost:3000",
    ] {
        let o = K8sOptions {
            target: Some(target.into()),
            ..options(2)
        };
        let warnings = render(&scenario, &o).unwrap().warnings;
        assert_eq!(warnings.len(), 1, "{target}");
        assert!(
            warnings[0].starts_with(&format!(
                "the target {target} is a loopback address: in each pod it is the pod itself"
            )),
            "{}",
            warnings[0]
        );
    }
    let o = K8sOptions {
        target: Some("http://api.perf.svc:8080".into()),
        ..options(2)
    };
    assert!(render(&scenario, &o).unwrap().warnings.is_empty());
}

/// A pod given only `--target` measured something else than the run asked for (HTTP/1.1
/// instead of HTTP/2, a refused self-signed certificate): the run flags reach every segment.
#[test]
fn the_run_flags_reach_every_segment() {
    let flags = ["--http2", "--http2-client", "h2", "--insecure"].map(String::from);
    let o = K8sOptions {
        target: Some("https://api.perf.svc:8443".into()),
        run_flags: flags.to_vec(),
        ..options(3)
    };
    let args = loadlab_k8s::segment_args(&o, "spike.yaml", "s3://perf-results/loadlab/spike-1");
    assert_eq!(
        args[args.len() - 6..],
        [
            "--target",
            "https://api.perf.svc:8443",
            "--http2",
            "--http2-client",
            "h2",
            "--insecure"
        ]
    );
    assert!(
        !loadlab_k8s::segment_args(&options(3), "spike.yaml", "s3://x/y")
            .iter()
            .any(|a| a == "--http2")
    );
}
