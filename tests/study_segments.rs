//! End to end: `loadlab study FILE --segments 2` runs each repetition as a round of two
//! generator processes merged into one run, and reports the rounds, the segments, the
//! two-level bootstrap and the variance per level; `run --variant` runs one variant by hand.

mod common;

use common::{exclusive, text, validate, Target, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn loadlab(results: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("LOADLAB_RESULTS", results)
        .output()
        .expect("run loadlab")
}

/// Two variants, two rounds each: a paced open load small enough for two segment processes
/// and two targets on a 2-core machine.
fn study_file(dir: &Path, a: &str, b: &str) -> PathBuf {
    let path = dir.join("rounds.yaml");
    std::fs::write(
        &path,
        format!(
            "name: rounds\ntarget: {a}\nload: {{ model: open, stages: [ {{ duration: 1s, rate: 120/s }} ] }}\n\
             flows:\n  - name: api\n    steps: [ {{ name: ping, get: /api/ping }} ]\n\
             study:\n  repeat: 2\n  variants:\n    - {{ name: a }}\n    - {{ name: b, target: {b} }}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_study_of_rounds_of_segments_reports_rounds_segments_and_a_two_level_ci() {
    let _serial = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let fast = Target::start(&["--service-time", "2ms"]);
    let slow = Target::start(&["--service-time", "12ms"]);
    let file = study_file(dir.path(), &fast.url, &slow.url);
    let json = dir.path().join("study.json");
    // A host hiccup may make a segment, and so its round, invalid: the study re-runs it.
    let out = loadlab(
        &results,
        &[
            "study",
            file.to_str().unwrap(),
            "--segments",
            "2",
            "--retry-invalid",
            "4",
            "--no-progress",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let study: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate("docs/schema/study.v1.json", &study);
    let rounds = &study["rounds"];
    assert_eq!(rounds["segments"], 2, "{rounds}");
    for v in rounds["variants"].as_array().unwrap() {
        let made = v["rounds"].as_array().unwrap();
        assert_eq!(made.len(), 2, "{v}");
        for round in made {
            let segments = round["segments"].as_array().unwrap();
            assert_eq!(segments.len(), 2, "{round}");
            // Each segment sent its half of the plan (120 arrivals, 60 each, give or take
            // the one a stop may cut), and the round is exactly their sum.
            let counts: Vec<u64> = segments
                .iter()
                .map(|s| s["requests"].as_u64().unwrap())
                .collect();
            for c in &counts {
                assert!((55..=61).contains(c), "{round}");
            }
            assert_eq!(
                round["requests"].as_u64().unwrap(),
                counts.iter().sum::<u64>()
            );
            // The round's percentile is its merged histogram's: between its segments'.
            let p99: Vec<f64> = segments
                .iter()
                .map(|s| s["p99_ms"].as_f64().unwrap())
                .collect();
            let merged = round["p99_ms"].as_f64().unwrap();
            let (lo, hi) = (p99[0].min(p99[1]), p99[0].max(p99[1]));
            assert!(lo <= merged && merged <= hi, "{round}");
        }
        // Its own p50/p95/p99 over the rounds, each with a two-level CI around it.
        let percentiles = v["percentiles"].as_array().unwrap();
        assert_eq!(percentiles.len(), 3, "{v}");
        for p in percentiles {
            let (m, ci) = (p["median_ms"].as_f64().unwrap(), &p["ci_ms"]);
            assert!(
                ci[0].as_f64().unwrap() <= m && m <= ci[1].as_f64().unwrap(),
                "{p}"
            );
        }
        let levels = &v["levels"];
        assert_eq!(levels["rounds"], 2, "{v}");
        assert_eq!(levels["segments_per_round"], 2, "{v}");
        let next = levels["next"].as_str().unwrap();
        assert!(
            ["more_rounds", "more_segments", "either"].contains(&next),
            "{v}"
        );
    }
    // b is 10 ms slower in every request: its p50 ratio is far above 1, CI included.
    let p50 = rounds["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "latency_ms.p50")
        .unwrap_or_else(|| panic!("no p50 comparison: {rounds}"));
    assert_eq!(
        (p50["baseline"].as_str(), p50["variant"].as_str()),
        (Some("a"), Some("b"))
    );
    let ratio = p50["ratio"].as_f64().unwrap();
    let ci: Vec<f64> = p50["ci"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(ratio > 2.5, "{p50}");
    assert!(ci[0] > 2.0 && ci[0] <= ratio && ratio <= ci[1], "{p50}");
    // Each round is one stored run of the study, with its variant; each segment's own
    // record stays beside the study.
    let id = study["id"].as_str().unwrap();
    let listed = loadlab(&results, &["runs"]);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed));
    let listing = String::from_utf8_lossy(&listed.stdout);
    for (k, v) in study["variants"].as_array().unwrap().iter().enumerate() {
        let name = ["a", "b"][k];
        let valid = listing
            .lines()
            .filter(|l| l.contains(&format!(" {name} ")) && l.contains(" yes "))
            .count();
        assert_eq!(valid, 2, "{listing}");
        for run in v["runs"].as_array().unwrap() {
            let stored = results.join("runs").join(run.as_str().unwrap());
            let merged: Value =
                serde_json::from_str(&std::fs::read_to_string(stored.join("run.json")).unwrap())
                    .unwrap();
            assert_eq!(merged["segments"].as_array().unwrap().len(), 2, "{merged}");
        }
    }
    let study_dir = results.join("studies").join(id);
    assert!(
        study_dir.join("segments/round-001/segment-0").is_dir(),
        "{}",
        study_dir.display()
    );
    // The terminal and the report say it.
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("rounds of 2 segments"), "{printed}");
    assert!(printed.contains("latency_ms.p50"), "{printed}");
    let report = study_dir.join("report.md");
    let md =
        std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    assert!(md.contains("Rounds of segments"), "{md}");
    assert!(md.contains("two-level bootstrap"), "{md}");
    assert!(md.contains("Where the variance is"), "{md}");
    assert!(md.contains("median over rounds"), "{md}");
}

#[test]
fn run_variant_runs_one_variant_and_names_the_others_when_it_does_not_exist() {
    let _serial = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let fast = Target::start(&["--service-time", "1ms"]);
    let slow = Target::start(&["--service-time", "15ms"]);
    let file = study_file(dir.path(), &fast.url, &slow.url);
    let run_json = dir.path().join("run.json");
    let out = loadlab(
        &results,
        &[
            "run",
            file.to_str().unwrap(),
            "--variant",
            "b",
            "--no-progress",
            "--json",
            run_json.to_str().unwrap(),
        ],
    );
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    // Variant b's target (15 ms), not the file's own (1 ms).
    assert!(
        run["latency_ms"]["p50"].as_f64().unwrap() > 12.0,
        "{}",
        run["latency_ms"]
    );
    let out = loadlab(&results, &["run", file.to_str().unwrap(), "--variant", "c"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("--variant c") && said.contains("a, b"),
        "{said}"
    );
}

/// Ctrl-C in a terminal (SIGINT to the whole foreground group) during a round: the segments
/// stop once, keep their records, and the study stops with the round as an interrupted run
/// (exit 3), which `--resume` makes again in a round directory of its own.
#[test]
fn ctrl_c_during_a_round_stops_every_segment_once_and_keeps_the_study() {
    use std::os::unix::process::CommandExt;
    let _serial = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let target = Target::start(&["--service-time", "1ms"]);
    let file = dir.path().join("long.yaml");
    std::fs::write(
        &file,
        format!(
            "name: long\ntarget: {}\nload: {{ model: open, stages: [ {{ duration: 4s, rate: 50/s }} ] }}\n\
             flows:\n  - name: api\n    steps: [ {{ name: ping, get: /api/ping }} ]\n\
             study:\n  repeat: 2\n",
            target.url
        ),
    )
    .unwrap();
    let json = dir.path().join("study.json");
    let study = Command::new(BIN)
        .args([
            "study",
            file.to_str().unwrap(),
            "--segments",
            "2",
            "--no-progress",
        ])
        .args(["--retry-invalid", "4", "--json", json.to_str().unwrap()])
        .env("LOADLAB_RESULTS", &results)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The round's barrier is 1.5 s away; stop it a little after its load began.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let group = study.id() as i32;
    // SAFETY: kill(2) on the process group this test started.
    unsafe {
        libc::kill(-group, libc::SIGINT);
    }
    let started = std::time::Instant::now();
    let out = study.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 15,
        "the study did not stop promptly"
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(saved["interrupted"], true, "{saved}");
    let log = saved["run_log"].as_array().unwrap();
    assert_eq!(log.len(), 1, "{saved}");
    assert!(
        log[0]["invalid"].to_string().contains("interrupted"),
        "{saved}"
    );
    // Both segments wrote their summary (a second signal would have made them quit without).
    let round = results
        .join("studies")
        .join(saved["id"].as_str().unwrap())
        .join("segments/round-001");
    for i in 0..2 {
        let seg_log = std::fs::read_to_string(round.join(format!("segment-{i}.log"))).unwrap();
        assert!(
            !seg_log.contains("again: quitting now"),
            "segment {i}: {seg_log}"
        );
    }
    let run = results
        .join("runs")
        .join(log[0]["run"].as_str().unwrap())
        .join("run.json");
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(run).unwrap()).unwrap();
    let segments = merged["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 2, "{merged}");
    for s in segments {
        assert_eq!(s["interrupted"], true, "{s}");
        assert!(s["requests"].as_u64().unwrap() > 10, "{s}");
    }
    // Resumed: the interrupted round is made again, then the second one.
    let id = saved["id"].as_str().unwrap().to_string();
    let resume = [
        "study",
        file.to_str().unwrap(),
        "--segments",
        "2",
        "--no-progress",
        "--retry-invalid",
        "4",
        "--resume",
        &id,
        "--json",
        json.to_str().unwrap(),
    ];
    let out = loadlab(&results, &resume);
    let resumed: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(resumed["interrupted"], false, "{resumed}");
    // Every planned round was made (again) after the interrupted one; a round the host held
    // up is re-run as in any study, and only the host's reasons may leave one without a
    // valid round (exit 3).
    let log = resumed["run_log"].as_array().unwrap();
    assert!(log.len() >= 3, "{resumed}");
    let valid = resumed["variants"][0]["runs"].as_array().unwrap().len();
    let host_only = log[1..].iter().filter(|e| e["used"] == false).all(|e| {
        e["invalid"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| common::undisturbed::HOST_KINDS.contains(&k.as_str().unwrap()))
    });
    assert!(valid == 2 || host_only, "{resumed}");
    assert_eq!(
        out.status.code(),
        Some(if valid > 0 { 0 } else { 3 }),
        "{}",
        text(&out)
    );
    if valid > 0 {
        let rounds = resumed["rounds"]["variants"][0]["rounds"]
            .as_array()
            .unwrap();
        assert_eq!(rounds.len(), valid, "{resumed}");
    }
    assert!(
        round.is_dir() && round.with_file_name("round-003").is_dir(),
        "{}",
        round.display()
    );
    // A study of rounds is not resumed as one of single runs: that is another plan.
    let single = [
        "study",
        file.to_str().unwrap(),
        "--no-progress",
        "--resume",
        &id,
    ];
    let out = loadlab(&results, &single);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("must run the same plan"),
        "{}",
        text(&out)
    );
}
