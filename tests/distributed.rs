//! Distributed runs without a cluster: the pod command of the Job `loadlab k8s` renders, run
//! here N times as kubelet would run it (the ConfigMap laid out at its mount, `$(VAR)` expanded,
//! the downward API's NODE_NAME/POD_NAME set), against a real S3-compatible server (moto);
//! records uploaded while the runs go; a segment killed mid-run leaving its part; a segment
//! that never arrives failing the start barrier; a missing segment making the merge invalid;
//! a burst split over four segments adding up exactly. `file://` stands in for a bucket where
//! S3 adds nothing.

mod common;
#[path = "common/s3.rs"]
mod s3;

use common::undisturbed::until_undisturbed;
use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A scratch directory removed when the returned guard is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    common::scratch_dir(&format!("loadlab-dist-{name}-"))
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// kubelet's expansion of `$(VAR)` in a container's args: defined variables are replaced,
/// `$$` escapes a `$`, anything else stays as written.
fn expand(arg: &str, env: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(close) = after.strip_prefix('(').and_then(|a| a.find(')')) {
            let name = &after[1..=close];
            match env.get(name) {
                Some(v) => out.push_str(v),
                None => out.push_str(&rest[i..i + close + 3]),
            }
            rest = &after[close + 2..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn kubelet_expansion_as_documented() {
    let env = HashMap::from([("JOB_COMPLETION_INDEX".to_string(), "2".to_string())]);
    for (arg, want) in [
        ("$(JOB_COMPLETION_INDEX)/4", "2/4"),
        ("$$(JOB_COMPLETION_INDEX)", "$(JOB_COMPLETION_INDEX)"),
        ("$(UNSET)/4", "$(UNSET)/4"),
        ("cost $5", "cost $5"),
    ] {
        assert_eq!(expand(arg, &env), want, "{arg}");
    }
}

/// A `loadlab` command with the given environment.
fn loadlab(env: &[(&str, String)]) -> Command {
    let mut c = Command::new(BIN);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn merged_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_default()).unwrap_or(Value::Null)
}

/// Schema errors of a run result against docs/schema/run.v2.json.
fn schema_errors(run: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/schema/run.v2.json"
    ))
    .unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    validator
        .iter_errors(run)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn all_requests(run: &Value) -> u64 {
    run["requests"]["total"].as_u64().unwrap_or(0) + run["requests"]["warmup"].as_u64().unwrap_or(0)
}

/// The pods of a rendered Job, started here: the ConfigMap's files at their mount path (moved
/// under `root`), each pod's args expanded with its index and the downward API's variables.
fn start_pods(yaml: &str, root: &Path, extra_env: &[(&str, String)]) -> Vec<Child> {
    let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let config_map = docs.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    let job = docs
        .iter()
        .find(|d| d["kind"] == "Job" && d["spec"]["completionMode"] == "Indexed")
        .unwrap();
    let pod = &job["spec"]["template"]["spec"];
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["configMap"].is_object())
        .unwrap();
    let container = &pod["containers"][0];
    let mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == volume["name"])
        .unwrap()["mountPath"]
        .as_str()
        .unwrap()
        .to_string();
    let local_mount = root.join(mount.trim_start_matches('/'));
    for item in volume["configMap"]["items"].as_array().unwrap() {
        let path = local_mount.join(item["path"].as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let key = item["key"].as_str().unwrap();
        std::fs::write(&path, config_map["data"][key].as_str().unwrap()).unwrap();
    }
    let completions = job["spec"]["completions"].as_u64().unwrap();
    let job_name = job["metadata"]["name"].as_str().unwrap();
    (0..completions)
        .map(|i| {
            let mut env: HashMap<String, String> = HashMap::new();
            for e in container["env"].as_array().unwrap() {
                let name = e["name"].as_str().unwrap().to_string();
                let value = match e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
                    Some("spec.nodeName") => format!("node-{i}"),
                    Some("metadata.name") => format!("{job_name}-{i}-x7k2p"),
                    Some(other) => panic!("unexpected field {other}"),
                    None => e["value"].as_str().unwrap_or_default().to_string(),
                };
                env.insert(name, value);
            }
            // Set by the Job controller on every pod of an Indexed Job.
            env.insert("JOB_COMPLETION_INDEX".into(), i.to_string());
            // The pod's scratch /tmp, and the Secret's variables.
            env.insert("TMPDIR".into(), root.join("tmp").display().to_string());
            env.insert(
                "LOADLAB_RESULTS".into(),
                root.join("tmp/loadlab-results").display().to_string(),
            );
            for (k, v) in extra_env {
                env.insert(k.to_string(), v.clone());
            }
            let args: Vec<String> = container["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| expand(a.as_str().unwrap(), &env))
                .map(|a| a.replace(&format!("{mount}/"), &format!("{}/", local_mount.display())))
                .collect();
            assert!(
                args.iter().any(|a| a == &format!("{i}/{completions}")),
                "{args:?}"
            );
            std::fs::create_dir_all(root.join("tmp")).unwrap();
            Command::new(BIN)
                .args(&args)
                .envs(&env)
                .current_dir(root.join("tmp"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect()
}

#[test]
fn the_rendered_job_run_as_pods_merges_into_the_whole_plan() {
    let _serial = exclusive();
    let moto = s3::Moto::start();
    moto.create_bucket("loadlab-k8s");
    let target = Target::start(&[]);
    let tmp = scratch("k8s");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("scenario/data")).unwrap();
    let ids: String = (0..90).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("scenario/data/ids.csv"), format!("id\n{ids}")).unwrap();
    let file = dir.join("scenario/spike.yaml");
    std::fs::write(
        &file,
        "name: k8s e2e\nload: { model: open, rate: 45/s, duration: 2s }\ndata:\n  ids: { csv: data/ids.csv, pick: unique }\nsteps:\n  - { name: ping, get: '/api/ping?id={{ ids.id }}' }\n",
    )
    .unwrap();
    let base = target.url.trim_end_matches("/api").to_string();
    // The pods share this one test machine, which a cluster's Guaranteed pods would not: a
    // set of pods the host held up (the merged run keeps the segment's reason) is run again
    // under a new name, as a user would.
    let mut attempt = 0;
    let (code, merged, (name, merge_out, pods)) = until_undisturbed("k8s pods", || {
        attempt += 1;
        let name = format!("e2e-{attempt}");
        let o = loadlab(&[])
            .args(["k8s", file.to_str().unwrap(), "--parallelism", "3"])
            .args(["--results", "s3://loadlab-k8s/runs", "--name", &name])
            .args(["--target", &base, "--secret", "loadlab-s3", "--merge-job"])
            .args(["--env", "AWS_REGION=us-east-1"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let yaml = String::from_utf8(o.stdout).unwrap();
        assert!(yaml.contains("$(JOB_COMPLETION_INDEX)/3"));
        assert!(
            !yaml.contains("AWS_SECRET_ACCESS_KEY"),
            "credentials stay in the Secret"
        );
        let pods: Vec<Output> = start_pods(&yaml, &dir.join(format!("pod{attempt}")), &moto.env())
            .into_iter()
            .map(|p| p.wait_with_output().unwrap())
            .collect();
        // As the merge Job does it: the run's URL as --results, waiting for the segments.
        let json = dir.join(format!("merged-{attempt}.json"));
        let o = loadlab(&moto.env())
            .env("LOADLAB_RESULTS", dir.join("local"))
            .args([
                "merge",
                "--results",
                &format!("s3://loadlab-k8s/runs/{name}"),
            ])
            .args(["--wait", "60s", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        let merged = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        (o.status.code(), merged, (name, o, pods))
    });
    for p in &pods {
        assert_eq!(p.status.code(), Some(0), "pod: {}", text(p));
    }
    let o = merge_out;
    assert_eq!(code, Some(0), "merge: {}", text(&o));
    assert_eq!(schema_errors(&merged), Vec::<String>::new());
    common::assert_valid(&merged, "merged");
    assert_eq!(merged["iterations"]["completed"], 90, "the plan's arrivals");
    assert_eq!(all_requests(&merged), 90);
    let segments = merged["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 3);
    for (i, s) in segments.iter().enumerate() {
        assert_eq!(s["pod"], format!("{name}-{i}-x7k2p"));
        assert_eq!(s["node"], format!("node-{i}"));
        assert!(s["clock"]["probes"].as_u64().unwrap() >= 2, "{s}");
        assert_eq!(s["requests"], 30);
    }
    let skew = &merged["clock_skew"];
    assert_eq!(skew["estimated"], 3);
    // One machine, one clock: the estimate must include zero skew.
    assert!(
        skew["spread_ms"].as_f64().unwrap() <= skew["uncertainty_ms"].as_f64().unwrap() + 1.0,
        "{skew}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("{name}-1-x7k2p @ node-1")),
        "{stdout}"
    );
    assert!(stdout.contains("clock skew between segments"), "{stdout}");
    // The merged run and its report are stored next to the segments, and listed.
    let o = loadlab(&moto.env())
        .args(["runs", "--results", "s3://loadlab-k8s/runs"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&o.stdout);
    assert!(
        listing.contains(&name) && listing.contains("merged"),
        "{listing}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Spawns segment `i` of `n` of `file` with its record going to `url`.
fn segment(
    file: &Path,
    i: u32,
    n: u32,
    url: &str,
    env: &[(&str, String)],
    extra: &[&str],
) -> Child {
    loadlab(env)
        .args(["run", file.to_str().unwrap(), "--quiet", "--no-progress"])
        .args(["--segment", &format!("{i}/{n}"), "--results", url])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn listing(url: &str, env: &[(&str, String)]) -> String {
    let o = loadlab(env)
        .args(["runs", "--results", url])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn records_upload_while_running_and_a_killed_segment_leaves_its_part() {
    let _serial = exclusive();
    let moto = s3::Moto::start();
    moto.create_bucket("loadlab-kill");
    let env = moto.env();
    let target = Target::start(&[]);
    let tmp = scratch("kill");
    let dir = tmp.path();
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "name: kill\ntarget: {}\nload: {{ model: open, rate: 60/s, duration: 5s }}\nsteps:\n  - {{ name: ping, get: /api/ping }}\n",
            target.url.trim_end_matches("/api")
        ),
    )
    .unwrap();
    let url = "s3://loadlab-kill/r1";
    let mut children: Vec<Child> = (0..3)
        .map(|i| segment(&file, i, 3, url, &env, &["--upload-every", "1s"]))
        .collect();
    // While the segments run, their batches are already in the bucket.
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen_running = loop {
        let l = listing(url, &env);
        if l.contains("segment 2: no end yet (2 batches")
            || l.contains("segment 2: no end yet (3 batches")
        {
            break l;
        }
        assert!(
            Instant::now() < deadline,
            "no upload seen while running:\n{l}"
        );
        assert!(
            children.iter_mut().all(|c| c.try_wait().unwrap().is_none()),
            "a segment ended before any upload was seen:\n{l}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(seen_running.contains("running"), "{seen_running}");
    // A pod that dies: SIGKILL, no chance to write its end.
    let killed = children.remove(2);
    let pid = killed.id() as i32;
    // SAFETY: sending a signal to a child process this test started.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    let _ = killed.wait_with_output();
    // The survivors end valid, or invalid for the host's reasons only (checked in the merged
    // record below): this test is about what a killed segment leaves, not about this host.
    // Quiet, an invalid one still says why.
    for c in children {
        let o = c.wait_with_output().unwrap();
        match o.status.code() {
            Some(0) => {}
            Some(3) => assert!(
                String::from_utf8_lossy(&o.stderr).contains("loadlab: "),
                "an exit 3 without its reason: {}",
                text(&o)
            ),
            _ => panic!("a surviving segment: {}", text(&o)),
        }
    }
    let l = listing(url, &env);
    assert!(l.contains("segment 2: no end yet"), "{l}");
    let json = dir.join("merged.json");
    let o = loadlab(&env)
        .args(["merge", url, "--json", json.to_str().unwrap()])
        .arg("--results")
        .arg(dir.join("local"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "an invalid merged run: {}",
        text(&o)
    );
    let merged = merged_json(&json);
    assert_eq!(merged["valid"], false);
    let reasons = merged["validity"]["reasons"].to_string();
    assert!(
        reasons.contains("segment_invalid") && reasons.contains("segment 2/3"),
        "{reasons}"
    );
    // Two whole segments (100 requests each) and the part the killed one uploaded.
    let n = all_requests(&merged);
    assert!((201..300).contains(&n), "requests {n}");
    let killed_row = &merged["segments"][2];
    assert_eq!(killed_row["interrupted"], true, "{killed_row}");
    assert!(
        killed_row["requests"].as_u64().unwrap() >= 20,
        "{killed_row}"
    );
    for seg in &merged["segments"].as_array().unwrap()[..2] {
        for kind in seg["invalid"].as_array().unwrap() {
            let kind = kind.as_str().unwrap();
            assert!(
                common::undisturbed::HOST_KINDS.contains(&kind),
                "surviving segment {}: {kind}",
                seg["index"]
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A run whose record goes to object storage, `--quiet`, that ends invalid: the exit code 3
/// comes with its reason on stderr, as a local run's does.
#[test]
fn a_quiet_remote_run_that_is_invalid_says_why() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let tmp = scratch("quiet-invalid");
    let dir = tmp.path();
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "name: quiet\ntarget: {}\nload: {{ model: closed, vus: 1, iterations: 3 }}\ndata:\n  users: {{ values: [{{ id: 1 }}], pick: unique }}\nsteps:\n  - {{ name: ping, get: '/api/ping?u={{{{ users.id }}}}' }}\n",
            target.url.trim_end_matches("/api")
        ),
    )
    .unwrap();
    let url = format!("file://{}/store/quiet", dir.display());
    let o = loadlab(&[])
        .args(["run", file.to_str().unwrap(), "--quiet", "--no-progress"])
        .args(["--results", &url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("loadlab: invalid run (data_exhausted): data set `users`"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_segment_that_never_arrives_fails_the_barrier_and_a_missing_one_the_merge() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let tmp = scratch("barrier");
    let dir = tmp.path();
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "name: barrier\ntarget: {}\nload: {{ model: open, rate: 60/s, duration: 1s }}\nsteps:\n  - {{ name: ping, get: /api/ping }}\n",
            target.url.trim_end_matches("/api")
        ),
    )
    .unwrap();
    // Two of three arrive: both give up after the timeout, saying who is missing.
    let url = format!("file://{}/store/never", dir.display());
    let children: Vec<Child> = [0u32, 2]
        .iter()
        .map(|i| segment(&file, *i, 3, &url, &[], &["--barrier-timeout", "2s"]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("only 2 of 3 segments arrived within 2 s") && err.contains("missing: 1"),
            "{err}"
        );
    }
    let o = loadlab(&[])
        .args(["merge", &url, "--wait", "10s", "--results"])
        .arg(dir.join("local"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("start barrier failed"),
        "{}",
        text(&o)
    );

    // Started at a fixed time without a barrier, one segment never runs: the merge says so.
    let url = format!("file://{}/store/missing", dir.display());
    let at =
        loadlab_metrics::result::rfc3339(std::time::SystemTime::now() + Duration::from_secs(2));
    let children: Vec<Child> = [0u32, 2]
        .iter()
        .map(|i| segment(&file, *i, 3, &url, &[], &["--start-at", &at]))
        .collect();
    for c in children {
        // A segment the host held up ends invalid (exit 3); its kinds are checked on the
        // merged run below. The test is about the missing one.
        let o = c.wait_with_output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o));
    }
    let json = dir.join("missing.json");
    let o = loadlab(&[])
        .args(["merge", &url, "--json", json.to_str().unwrap(), "--results"])
        .arg(dir.join("local"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let merged = merged_json(&json);
    let reasons = merged["validity"]["reasons"].to_string();
    assert!(
        reasons.contains("segment_missing") && reasons.contains("segment 1/3 missing"),
        "{reasons}"
    );
    // The segments that ran were valid, or invalid for the host's reasons only.
    for seg in merged["segments"].as_array().unwrap() {
        for kind in seg["invalid"].as_array().unwrap() {
            let kind = kind.as_str().unwrap();
            assert!(
                common::undisturbed::HOST_KINDS.contains(&kind),
                "segment {}: {kind}",
                seg["index"]
            );
        }
    }
    assert_eq!(
        all_requests(&merged),
        40,
        "two thirds of 60, not extrapolated"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_burst_split_over_four_segments_adds_up_to_the_whole_burst() {
    let _serial = exclusive();
    // 4 × 2,500 here; bench/distributed_burst.sh runs seed 003's 4 × 16,667 = 66,668.
    let target = Target::start(&[]);
    let tmp = scratch("burst");
    let dir = tmp.path();
    let file = dir.join("burst.yaml");
    std::fs::write(
        &file,
        format!(
            "name: burst split\ntarget: {}\ndefaults: {{ timeout: 20s }}\nload: {{ model: burst, count: 10000 }}\nsteps:\n  - {{ name: ping, get: /api/ping }}\n",
            target.url.trim_end_matches("/api")
        ),
    )
    .unwrap();
    let url = format!("file://{}/store/burst", dir.display());
    let children: Vec<Child> = (0..4)
        .map(|i| segment(&file, i, 4, &url, &[], &[]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o));
    }
    let json = dir.join("merged.json");
    let o = loadlab(&[])
        .args(["merge", &url, "--json", json.to_str().unwrap(), "--results"])
        .arg(dir.join("local"))
        .output()
        .unwrap();
    let merged = merged_json(&json);
    assert_eq!(all_requests(&merged), 10_000, "{}", text(&o));
    assert_eq!(merged["load"]["count"], 10_000);
    let per_segment: Vec<u64> = merged["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(per_segment, [2500, 2500, 2500, 2500]);
    let _ = std::fs::remove_dir_all(dir);
}
