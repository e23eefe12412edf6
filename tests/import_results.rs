//! End-to-end: other tools' result files become runs (`loadlab import-results`), and
//! everything downstream reads them as it reads a native run. Real excerpts of k6, JMeter
//! and Gatling outputs (tests/fixtures/results, sources in SOURCES.md); vegeta and oha run
//! for real against `loadlab target` in tests/import_results_tools.rs.

mod common;

use common::imported::{fixture, import, only_run, runs};
use common::{assert_matches_run_schema, text, BIN};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// HDR histograms keep 3 significant digits: values agree within 0.1% (plus rounding to 1 µs).
fn assert_close(got: f64, want: f64, what: &str) {
    let tolerance = want.abs() * 1e-3 + 1e-3;
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} against {want} (±{tolerance})"
    );
}

#[test]
fn the_k6_documentation_example_is_one_request_with_its_group_and_vus() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &[
            "k6-json",
            &fixture("k6-docs-example.json"),
            "--name",
            "docs",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("validity: not judged (imported)"),
        "{stdout}"
    );
    let run = only_run(dir.path());
    assert_matches_run_schema(&run);
    assert_eq!(run["requests"]["total"], 1);
    assert_eq!(run["valid"], false, "an imported run is never called valid");
    assert_eq!(run["validity"]["reasons"], serde_json::json!([]));
    assert_eq!(run["imported"]["tool"], "k6");
    assert_eq!(run["imported"]["format"], "k6-json");
    assert_close(
        run["latency_ms"]["p50"].as_f64().unwrap(),
        459.865729,
        "p50",
    );
    assert_eq!(
        run["steps"][0]["name"],
        "GET https://httpbin.test.k6.io/get"
    );
    assert_eq!(run["groups"][0]["name"], "my group / json");
    assert_eq!(run["vus_max"], 5);
    assert_eq!(run["status_codes"]["200"], 1);
    // 14:34:45.2395 +02:00 ends the request: the run starts when it was sent.
    assert!(
        run["started_at"]
            .as_str()
            .unwrap()
            .starts_with("2017-05-09T12:34:44"),
        "{}",
        run["started_at"]
    );

    // The terminal report of the stored run says who measured it, and never "valid run".
    let report = Command::new(BIN)
        .args(["runs", "show"])
        .arg(runs_ids(dir.path())[0].clone())
        .arg("--results")
        .arg(dir.path())
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&report.stdout);
    assert!(
        shown.contains("not judged (imported)") && shown.contains("k6"),
        "{}",
        text(&report)
    );
    assert!(
        !shown.contains("valid run:") && !shown.contains("INVALID RUN"),
        "{shown}"
    );
    // k6's requests are not loadlab's iterations: no "0 completed" line.
    assert!(!shown.contains("iterations ........"), "{shown}");
}

/// The ids of the store's runs, oldest directory first.
fn runs_ids(results: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(results.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn the_k6_csv_output_keeps_its_phases() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &[
            "k6-csv",
            &fixture("k6-workshop.csv"),
            "--tool-version",
            "0.35.0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    assert_matches_run_schema(&run);
    assert_eq!(run["requests"]["total"], 1);
    assert_eq!(run["imported"]["version"], "0.35.0");
    assert_close(
        run["latency_ms"]["max"].as_f64().unwrap(),
        114.365,
        "duration",
    );
    let phases = &run["phases_ms"];
    assert_close(
        phases["connect"]["max"].as_f64().unwrap(),
        117.517,
        "connect",
    );
    assert_close(
        phases["tls_handshake"]["max"].as_f64().unwrap(),
        415.043,
        "tls",
    );
    assert_close(
        phases["waiting"]["max"].as_f64().unwrap(),
        114.010,
        "waiting",
    );
    assert_close(
        phases["receiving"]["max"].as_f64().unwrap(),
        0.104,
        "receiving",
    );
    assert_eq!(
        run["steps"][0]["name"],
        "POST https://httpbin.test.k6.io/post"
    );
}

#[test]
fn a_jmeter_csv_counts_its_labels_statuses_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["jmeter-csv", &fixture("jmeter-example-results.csv")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    assert_matches_run_schema(&run);
    assert_eq!(run["requests"]["total"], 12);
    // The 404s passed their assertion (`success` true): JMeter did not count them failed.
    assert_eq!(run["requests"]["failed"], 0);
    assert_eq!(run["status_codes"]["404"], 5);
    assert_eq!(run["status_codes"]["200"], 7);
    let home = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Home Page")
        .unwrap();
    assert_eq!(home["requests"], 7);
    assert_eq!(home["group"], "Scenario 1");
    assert_close(
        run["latency_ms"]["max"].as_f64().unwrap(),
        1710.0,
        "max elapsed",
    );
    assert_close(
        run["latency_ms"]["min"].as_f64().unwrap(),
        232.0,
        "min elapsed",
    );
    assert_eq!(run["vus_max"], 5, "allThreads");
    assert_eq!(run["load"]["max_vus"], 5);
}

/// Real JMeter XML and CSV files (tests/fixtures/results/SOURCES.md): the requests counted
/// are the samples holding none, as an independent reading of the XML (Python's
/// ElementTree) counts them; transactions and pages are no requests.
#[test]
fn jmeter_files_from_public_repositories_import_their_requests() {
    let cases: &[(&str, &str, u64, u64, &str)] = &[
        (
            "jmeter-xml",
            "jmeter-taurus-error-302.jtl",
            24,
            2,
            "2 sample(s) held samples of their own",
        ),
        (
            "jmeter-xml",
            "jmeter-taurus-non-http-error.jtl",
            10,
            8,
            "1 sample(s) held samples of their own",
        ),
        (
            "jmeter-xml",
            "jmeter-tailspin-two-runs.jtl",
            400,
            0,
            "the 100 sample(s) before it were left out",
        ),
        (
            "jmeter-csv",
            "jmeter-transactions-crlf.csv",
            10,
            2,
            "10 Transaction Controller sample(s) are not requests",
        ),
        // Transaction Controller rows whose samplers the file does not hold are the requests
        // there are of them: counted (one of them failed), and said.
        (
            "jmeter-csv",
            "jmeter-taurus-kpi-pair1.csv",
            8,
            6,
            "2 Transaction Controller sample(s) timed samplers that are not in the file",
        ),
        (
            "jmeter-csv",
            "jmeter-taurus-tranctl.csv",
            2,
            1,
            "2 Transaction Controller sample(s) timed samplers that are not in the file",
        ),
        // The CSV twin of the XML above: each page's redirect hops (`-0` 307, `-1` 200) are
        // rows after it; the same rule, the same 200 requests as its XML run.
        (
            "jmeter-csv",
            "jmeter-tailspin-subresults.csv",
            200,
            0,
            "100 sample(s) held samples of their own",
        ),
    ];
    for (format, file, total, failed, note) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = import(dir.path(), &[format, &fixture(file)]);
        assert!(out.status.success(), "{file}: {}", text(&out));
        let run = only_run(dir.path());
        assert_matches_run_schema(&run);
        assert_eq!(run["requests"]["total"], *total, "{file}");
        assert_eq!(run["requests"]["failed"], *failed, "{file}");
        let notes = run["notes"].to_string();
        assert!(notes.contains(note), "{file}: {notes}");
    }
    let dir = tempfile::tempdir().unwrap();
    import(
        dir.path(),
        &["jmeter-xml", &fixture("jmeter-taurus-non-http-error.jtl")],
    );
    let run = only_run(dir.path());
    // Three unknown hosts (`Non HTTP response code: java.net.UnknownHostException`), three
    // 4xx, two failed assertions on a 200.
    let errors = &run["errors"];
    assert_eq!(
        (&errors["dns"], &errors["http_4xx"], &errors["check_failed"]),
        (&Value::from(3), &Value::from(3), &Value::from(2)),
        "{errors}"
    );
}

#[test]
fn a_gatling_log_gives_its_requests_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["gatling-log", &fixture("gatling-3.9.5-simulation.log")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    assert_matches_run_schema(&run);
    assert_eq!(run["requests"]["total"], 14);
    assert_eq!(run["imported"]["version"], "3.9.5");
    // Every Gatling log is `simulation.log`: the run is named by its simulation's id.
    assert_eq!(run["name"], "curiustrex-bash");
    let css = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "styles.css")
        .unwrap();
    assert_eq!(css["requests"], 4);
    assert_close(
        run["latency_ms"]["max"].as_f64().unwrap(),
        36.0,
        "request_0 took 36 ms",
    );
    assert_eq!(run["vus_max"], 2);
}

/// Gatling 3.0-3.3 wrote a user id in every REQUEST and USER record. Gatling's own report
/// of this run (its `js/global_stats.json`) says 388 requests, 1 KO, min 27 ms, max 31,323 ms,
/// mean 3,785 ms; the import must give the same.
#[test]
fn a_gatling_3_1_log_with_user_ids_gives_gatlings_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["gatling-log", &fixture("gatling-3.1.2-simulation.log")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    assert_matches_run_schema(&run);
    assert_eq!(run["imported"]["version"], "3.1.2");
    assert_eq!(run["requests"]["total"], 388, "{}", text(&out));
    assert_eq!(run["requests"]["failed"], 1);
    let latency = &run["latency_ms"];
    assert_close(latency["min"].as_f64().unwrap(), 27.0, "Gatling's min");
    assert_close(latency["max"].as_f64().unwrap(), 31_323.0, "Gatling's max");
    assert_close(latency["mean"].as_f64().unwrap(), 3_785.1, "Gatling's mean");
    assert!(run["vus_max"].as_u64().unwrap() >= 1, "{}", run["vus_max"]);

    // The written report says Gatling measured it, and claims nothing of a loadlab generator
    // or plan the file does not hold.
    let md = dir.path().join("report.md");
    let report = Command::new(BIN)
        .args(["report", "--format", "md", "-o"])
        .arg(&md)
        .arg(runs_ids(dir.path())[0].clone())
        .arg("--results")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let md = std::fs::read_to_string(md).unwrap();
    for said in [
        "| **Tool** | gatling 3.1.2 (imported by loadlab",
        "| **Load** | up to 10 virtual users at once, as the gatling 3.1.2 results file shows |",
        "| **Measured duration** |",
        "| **Load generator** | not measured: gatling 3.1.2 sent the requests",
    ] {
        assert!(md.contains(said), "{said}\n{md}");
    }
    for never in [
        "worker thread",
        "looping their flow",
        "Planned duration",
        "older loadlab",
        "Planned load",
    ] {
        assert!(!md.contains(never), "{never}\n{md}");
    }
}

/// Gatling 2.x wrote a scenario and a user id before a request's times: its `USER` records
/// parse as 3.x's, its requests do not. It used to be "imported" as a run of 0 requests dated
/// 1970, exit 0.
#[test]
fn a_gatling_2_log_is_refused_naming_its_layout() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["gatling-log", &fixture("gatling-2.3.1-simulation.log")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3: this is a Gatling 2.x simulation.log")
            && err.contains("re-run the simulation with Gatling 3.0-3.11"),
        "{err}"
    );
    let left = dir.path().join("runs").exists() && !runs(dir.path()).is_empty();
    assert!(!left, "no run is left in the store");
}

/// A plugin's result class written by XStream holds its fields as child elements: refused,
/// naming the element, not "is it a jmeter-xml file?".
#[test]
fn a_jmeter_xml_of_unknown_elements_names_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &[
            "jmeter-xml",
            &fixture("jmeter-taurus-webdriver-xstream.jtl"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3: <com.googlecode.jmeter.plugins.webdriver.sampler.SampleResultWithSubs> is no sample loadlab reads"),
        "{err}"
    );
}

#[test]
fn aggregates_only_formats_are_refused_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.json");
    std::fs::write(&summary, "{}").unwrap();
    for format in ["locust-csv", "k6-summary"] {
        let out = import(dir.path(), &[format, summary.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("percentiles cannot be rebuilt"), "{err}");
    }
}

#[test]
fn malformed_lines_are_counted_and_named_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    let good = std::fs::read_to_string(fixture("k6-docs-example.json")).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(2, "{\"type\":\"Point\",\"metric\":\"http_req_dur");
    lines.push("not json at all");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = import(dir.path(), &["k6-json", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 line(s) could not be read"), "{err}");
    assert!(
        err.contains("broken.json:3:") && err.contains("broken.json:6:"),
        "{err}"
    );
    let run = only_run(dir.path());
    assert_eq!(run["imported"]["malformed"], 2);
    assert_eq!(run["requests"]["total"], 1);
    assert!(
        run["notes"][0].as_str().unwrap().contains("line 3"),
        "{}",
        run["notes"]
    );
}

#[test]
fn thresholds_are_judged_on_an_imported_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("k6-docs-example.json");
    let out = import(
        dir.path(),
        &["k6-json", &file, "--threshold", "latency.p95 < 100ms"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = import(
        dir.path(),
        &["k6-json", &file, "--threshold", "latency.p95 < 1s"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// JMeter writes a sample when it ends: a long one that started first comes after shorter
/// ones. The run begins at its earliest start and ends at its last end.
#[test]
fn an_imported_run_begins_with_its_earliest_start() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("late.jtl");
    std::fs::write(
        &csv,
        "timeStamp,elapsed,label,responseCode,success,threadName\n\
         1600000005000,200,short,200,true,TG 1-1\n\
         1600000006000,200,short,200,true,TG 1-1\n\
         1600000001500,6000,long,200,true,TG 1-2\n\
         1600000008000,200,short,200,true,TG 1-1\n",
    )
    .unwrap();
    let out = import(dir.path(), &["jmeter-csv", csv.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    // At the long sample's start, to the ms; to the last end, 8.2 s after 1.5 (it used to
    // start a whole slice early, on the second, and last up to a second longer).
    assert_eq!(run["started_at"], "2020-09-13T12:26:41.500Z");
    assert_close(run["duration_s"].as_f64().unwrap(), 6.7, "duration");
}

/// A study of imported runs says what it is made of: runs another tool ran (per variant, as
/// many as files were given), whose validity nobody judged; it claims no valid runs, no
/// planned repetitions, no order and no loadlab tool, and one run has no stability to show.
#[test]
fn a_study_of_imported_runs_claims_nothing_loadlab_did_not_do() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("store");
    let one = fixture("jmeter-example-results.csv");
    let other = fixture("jmeter-transactions-crlf.csv");
    let (a1, a2, b) = (format!("A={one}"), format!("A={other}"), format!("B={one}"));
    let out = import(&results, &["jmeter-csv", &a1, &a2, &b, "--study"]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("2 variant(s) of runs imported from jmeter result files")
            && shown.contains("runs: A 2, B 1; validity not judged"),
        "{shown}"
    );
    assert!(!shown.contains("valid runs:"), "{shown}");
    assert!(
        shown.contains("p raw, p Holm: no test was made") && !shown.contains("over the 0 tests"),
        "{shown}"
    );
    let (study_dir, study) = common::only_study(&results);
    assert_eq!(study["imported_from"], serde_json::json!(["jmeter"]));
    common::validate("docs/schema/study.v1.json", &study);
    // It finished when the latest run did, not when it was imported.
    let latest_start = runs(&results)
        .iter()
        .map(|r| r["started_at"].as_str().unwrap().to_string())
        .max()
        .unwrap();
    let finished = study["finished_at"].as_str().unwrap();
    assert_eq!(&finished[..10], &latest_start[..10], "{finished}");
    let report = std::fs::read_to_string(study_dir.join("report.md")).unwrap();
    for claim in [
        "are valid measurements",
        "sequential",
        "planned",
        "cool-down",
        "| **Tool** | loadlab",
        "over 0 tests",
    ] {
        assert!(
            !report.contains(claim),
            "the report says `{claim}`:\n{report}"
        );
    }
    for fact in [
        "with runs imported from jmeter result files (A 2, B 1)",
        "| **Runs** | A 2, B 1, one per result file",
        "| **Tool** | jmeter (imported by loadlab",
        "| `B` | 5 VUs | 1 |",
        "n/a (1 run)",
        "validity was not judged",
    ] {
        assert!(
            report.contains(fact),
            "the report lacks `{fact}`:\n{report}"
        );
    }
}
