//! End to end: `loadlab study` against two `loadlab target`s, then `compare`, `runs` and
//! `run --baseline` on what the study stored.

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

/// A two-variant study file: 5 short open-model runs per target.
fn study_file(dir: &Path, a: &str, b: &str, extra: &str) -> PathBuf {
    let path = dir.join("ab.yaml");
    std::fs::write(
        &path,
        format!(
            // 200 requests a run: p95 stands on 10 beyond it (p99 does not, and is compared
            // with no verdict).
            "name: ab\ntarget: {a}\nload: {{ model: open, stages: [ {{ duration: 1s, rate: 200/s }} ] }}\n\
             thresholds: [ latency.p95 < 500ms ]\nflows:\n  - name: api\n    steps: [ {{ name: ping, group: api, get: /api/ping }} ]\n\
             study:\n  repeat: 5\n{extra}  variants:\n    - {{ name: a }}\n    - {{ name: b, target: {b} }}\n"
        ),
    )
    .unwrap();
    path
}

fn comparison<'a>(study: &'a Value, metric: &str) -> &'a Value {
    study["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no comparison of {metric}: {study}"))
}

/// Runs the two-target study (see `study_file`) to completion; returns study.json and what
/// the command printed.
fn run_study(dir: &Path, results: &Path, a: &str, b: &str, extra: &str) -> (Value, String) {
    let file = study_file(dir, a, b, extra);
    let json = dir.join("study.json");
    let out = loadlab(
        results,
        &[
            "study",
            file.to_str().unwrap(),
            "--no-progress",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let study = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (study, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn slower_target_is_reported_slower_and_compare_gates_on_it() {
    let _serial = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let fast = Target::start(&["--service-time", "2ms"]);
    let slow = Target::start(&["--service-time", "8ms"]);
    let (study, summary) = run_study(dir.path(), &results, &fast.url, &slow.url, "");
    b_is_slower(&study, &summary);
    let id = study["id"].as_str().unwrap();
    let a = format!("{id}:a");
    let b = format!("{id}:b");
    compare_gates_on_the_regression(&results, &dir.path().join("cmp.json"), &a, &b);
    the_index_lists_the_runs(&results, &study);
    compare_takes_any_step_percentile(&results, &a, &b);
    a_new_run_is_judged_against_the_study(&results, &slow.url, &a);
}

/// study.json: five runs a variant, each metric with its values, and b slower than a on p50
/// and p95 beyond doubt; the summary says so.
fn b_is_slower(study: &Value, summary: &str) {
    validate("docs/schema/study.v1.json", study);
    assert_eq!(study["schema"], "loadlab.study.v1");
    let variants = study["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    for v in variants {
        assert_eq!(v["runs"].as_array().unwrap().len(), 5, "{v}");
        let p95 = &v["metrics"]["latency_ms.p95"];
        assert_eq!(p95["n"], 5);
        assert_eq!(p95["values"].as_array().unwrap().len(), 5);
        assert!(p95["median_ci"].is_null(), "n < 6 has no median CI");
        assert!(v["metrics"]["groups.api.latency_ms.p95"].is_object());
    }
    for metric in ["latency_ms.p50", "latency_ms.p95"] {
        let c = comparison(study, metric);
        assert_eq!(c["baseline"], "a");
        assert_eq!(c["variant"], "b");
        assert_eq!(c["verdict"], "slower", "{c}");
        assert!(c["p_adjusted"].as_f64().unwrap() < 0.05, "{c}");
        assert!(c["change"].as_f64().unwrap() > 0.3, "{c}");
        let ci = c["change_ci"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(summary.contains("slower"), "{summary}");
    assert!(summary.contains("study.json"), "{summary}");
}

/// compare: the same two variants out of the store, as a CI gate (`a` then `b`: a
/// regression, exit 1; the other way round faster, exit 0).
fn compare_gates_on_the_regression(results: &Path, cmp_json: &Path, a: &str, b: &str) {
    let gate = loadlab(
        results,
        &[
            "compare",
            a,
            b,
            "--fail-on-regression",
            "5%",
            "--json",
            cmp_json.to_str().unwrap(),
        ],
    );
    assert_eq!(gate.status.code(), Some(1), "{}", text(&gate));
    let gate_out = String::from_utf8_lossy(&gate.stdout);
    assert!(gate_out.contains("REGRESSION"), "{gate_out}");
    assert!(gate_out.contains("5+5"), "{gate_out}");
    // The gate says what the CI shows: "p95 latency at least +x% slower (CI ...), bound 5%".
    assert!(gate_out.contains("p95 latency at least +"), "{gate_out}");
    assert!(gate_out.contains("bound 5%"), "{gate_out}");
    assert!(
        gate_out.contains("p raw") && gate_out.contains("p Holm"),
        "{gate_out}"
    );
    let cmp: Value = serde_json::from_str(&std::fs::read_to_string(cmp_json).unwrap()).unwrap();
    assert_eq!(cmp["schema"], "loadlab.compare.v1");
    assert!(cmp["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["metric"] == "latency_ms.p95" && r["at_least"].as_f64().unwrap() > 0.05));
    // The other way round it is faster: no regression, exit 0.
    let improved = loadlab(results, &["compare", b, a, "--fail-on-regression", "5%"]);
    assert_eq!(improved.status.code(), Some(0), "{}", text(&improved));
    assert!(String::from_utf8_lossy(&improved.stdout).contains("faster"));
}

/// The run index lists every run with its variant and validity (an invalid attempt the study
/// made again too); a stored run can be shown and has its record and its interval histograms.
fn the_index_lists_the_runs(results: &Path, study: &Value) {
    let runs = loadlab(results, &["runs"]);
    assert_eq!(runs.status.code(), Some(0), "{}", text(&runs));
    let listing = String::from_utf8_lossy(&runs.stdout);
    let listed_b: Vec<&str> = listing.lines().filter(|l| l.contains(" b ")).collect();
    let attempts_b = study["run_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["variant"] == "b")
        .count();
    assert_eq!(listed_b.len(), attempts_b, "{listing}");
    assert_eq!(
        listed_b.iter().filter(|l| l.contains(" yes ")).count(),
        5,
        "{listing}"
    );
    let run_id = study["variants"][1]["runs"][0].as_str().unwrap();
    let show = loadlab(results, &["runs", "show", run_id]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show));
    assert!(String::from_utf8_lossy(&show.stdout).contains("p95"));
    let stored = results.join("runs").join(run_id);
    assert!(stored.join("run.json").is_file());
    assert!(std::fs::read_to_string(stored.join("intervals.hlog"))
        .unwrap()
        .contains("#[StartTime: "));
}

/// An unknown metric is bad input, and the valid names are listed; any per-step percentile
/// can be compared, in the threshold spelling too.
fn compare_takes_any_step_percentile(results: &Path, a: &str, b: &str) {
    let unknown = loadlab(
        results,
        &["compare", a, b, "--metric", "step.nope.latency.p99"],
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("steps.ping.{") && err.contains("latency_ms.p99"),
        "{err}"
    );
    let step = loadlab(
        results,
        &["compare", a, b, "--metric", "step.ping.latency.p99"],
    );
    assert_eq!(step.status.code(), Some(0), "{}", text(&step));
    assert!(String::from_utf8_lossy(&step.stdout).contains("p99 latency of step ping"));
}

/// One new run of the slow target against the stored variant `a`: flagged, with the
/// weak-evidence note.
fn a_new_run_is_judged_against_the_study(results: &Path, slow_url: &str, a: &str) {
    let baseline = loadlab(
        results,
        &[
            "run",
            "--url",
            &format!("{slow_url}/api/ping"),
            "--rate",
            "40/s",
            "--duration",
            "1s",
            "--no-progress",
            "--retry-invalid",
            "2",
            "--baseline",
            a,
            "--fail-on-regression",
            "5%",
        ],
    );
    let said = String::from_utf8_lossy(&baseline.stdout);
    assert!(said.contains("is weak evidence"), "{}", text(&baseline));
    assert_eq!(baseline.status.code(), Some(1), "{}", text(&baseline));
}

#[test]
fn identical_targets_are_not_told_apart() {
    let _serial = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let one = Target::start(&["--service-time", "4ms"]);
    let two = Target::start(&["--service-time", "4ms"]);
    let (study, _) = run_study(
        dir.path(),
        &results,
        &one.url,
        &two.url,
        "  equivalence: 5%\n",
    );
    // Never a difference; inside the 5% band where the CI is narrow enough (throughput at a
    // fixed arrival rate), `~` where it is not.
    for c in study["comparisons"].as_array().unwrap() {
        let v = c["verdict"].as_str().unwrap();
        let thin = c["thin_runs"].is_u64();
        assert!(
            v == "~" || v == "equivalent" || (v == "insufficient" && thin),
            "{c}"
        );
    }
    assert_eq!(comparison(&study, "requests.rate")["verdict"], "equivalent");
    assert_eq!(study["comparisons"].as_array().unwrap().len(), 5);

    // `compare` of the same runs reads them with the study's band: the same words, and a
    // legend that says what they mean.
    let id = study["id"].as_str().unwrap();
    let cmp_json = dir.path().join("cmp.json");
    let cmp = loadlab(
        &results,
        &[
            "compare",
            &format!("{id}:a"),
            &format!("{id}:b"),
            "--json",
            cmp_json.to_str().unwrap(),
        ],
    );
    assert_eq!(cmp.status.code(), Some(0), "{}", text(&cmp));
    let said = String::from_utf8_lossy(&cmp.stdout);
    assert!(said.contains("verdicts: slower/faster"), "{said}");
    assert!(
        said.contains("equivalent: the whole 95% CI of the change lies inside ±5%"),
        "{said}"
    );
    let compared: Value =
        serde_json::from_str(&std::fs::read_to_string(&cmp_json).unwrap()).unwrap();
    assert_eq!(compared["equivalence"], 0.05);
    for c in compared["comparisons"].as_array().unwrap() {
        assert_eq!(
            c["verdict"],
            comparison(&study, c["metric"].as_str().unwrap())["verdict"],
            "{c}"
        );
    }
}

#[test]
fn too_few_runs_are_said_and_bad_sections_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "name: bad\ntarget: http://127.0.0.1:9\nload: { model: open, stages: [ { duration: 1s, rate: 10/s } ] }\n\
         flows:\n  - name: f\n    steps: [ { get: /x } ]\nstudy:\n  repeat: 3\n  oder: sequential\n",
    )
    .unwrap();
    let out = loadlab(dir.path(), &["study", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":9:"), "{err}");
    assert!(err.contains("did you mean `order`"), "{err}");
}
