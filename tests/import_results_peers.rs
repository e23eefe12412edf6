//! vegeta and oha outputs as users have them, made with the real tools (vegeta 12.13.0,
//! oha 1.16.0) against `loadlab target` and a closed port, kept in tests/fixtures/results:
//! failures of every kind give the tools' own counts, and their other outputs (reports,
//! summaries) are refused saying what to import instead.

mod common;

use common::imported::{fixture, import, only_run};
use common::text;
use serde_json::Value;

/// HDR histograms keep 3 significant digits.
fn assert_close(got: &Value, want: f64, what: &str) {
    let got = got.as_f64().unwrap_or(f64::NAN);
    let tolerance = want.abs() * 1e-3 + 1e-3;
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} against {want}"
    );
}

/// `vegeta attack` of three targets (200, 500 from `--error-rate`, 404, 401), a closed port
/// and a 150 ms timeout, encoded both ways from the same results: `vegeta report` says 40
/// requests, success 22.50%, codes 0:10 200:9 401:6 404:10 500:5.
#[test]
fn vegeta_results_with_every_kind_of_failure_give_vegetas_counts() {
    for (format, file) in [
        ("vegeta-json", "vegeta-12.13-errors.json"),
        ("vegeta-csv", "vegeta-12.13-errors.csv"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = import(dir.path(), &[format, &fixture(file)]);
        assert!(out.status.success(), "{file}: {}", text(&out));
        let run = only_run(dir.path());
        assert_eq!(run["requests"]["total"], 40, "{file}");
        assert_eq!(run["requests"]["failed"], 31, "{file}");
        let errors = &run["errors"];
        for (kind, n) in [
            ("connect_refused", 5),
            ("timeout", 5),
            ("http_4xx", 16),
            ("http_5xx", 5),
        ] {
            assert_eq!(errors[kind], n, "{file}: {kind} in {errors}");
        }
        let codes = &run["status_codes"];
        for (code, n) in [("200", 9), ("401", 6), ("404", 10), ("500", 5)] {
            assert_eq!(codes[code], n, "{file}: {code} in {codes}");
        }
        // The samples at rank ⌈p·n⌉ of the file's 40 latencies (vegeta's own are t-digest
        // estimates: p50 0.833 ms, p95 150.673 ms).
        let latency = &run["latency_ms"];
        assert_close(&latency["min"], 0.283, file);
        assert_close(&latency["p50"], 0.798, file);
        assert_close(&latency["p95"], 150.588, file);
        assert_close(&latency["max"], 150.960, file);
        assert_close(&latency["mean"], 20.218, file);
        assert_close(&run["duration_s"], 2.144, file);
    }
}

/// `oha --db-url` twice into one file: 8 GETs of a slow endpoint, then 30 POSTs with
/// `--latency-correction` (oha: [201] 1, [409] 23, [500] 6). The newest run is imported, and
/// its step is not called GET: oha's database does not store the method.
#[test]
fn an_oha_database_of_two_runs_gives_the_newest_named_by_its_url() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(
        dir.path(),
        &["oha-sqlite", &fixture("oha-1.16-two-runs.db")],
    );
    assert!(out.status.success(), "{}", text(&out));
    let run = only_run(dir.path());
    assert_eq!(run["requests"]["total"], 30);
    assert_eq!(run["requests"]["failed"], 29);
    let codes = &run["status_codes"];
    for (code, n) in [("201", 1), ("409", 23), ("500", 6)] {
        assert_eq!(codes[code], n, "{code} in {codes}");
    }
    assert_eq!(run["steps"][0]["name"], "/api/signups");
    // oha: fastest 0.4371 ms, slowest 6.5534 ms, average 2.1968 ms.
    let latency = &run["latency_ms"];
    assert_close(&latency["min"], 0.437, "min");
    assert_close(&latency["p50"], 1.440, "p50");
    assert_close(&latency["max"], 6.553, "max");
    assert_close(&latency["mean"], 2.197, "mean");
    let notes = run["notes"].to_string();
    assert!(notes.contains("2 oha runs"), "{notes}");
    assert!(notes.contains("does not store the HTTP method"), "{notes}");
}

/// oha's and vegeta's other outputs hold no request (or no start time): each is exit 2
/// naming what it is and what to import instead.
#[test]
fn summaries_of_oha_and_vegeta_say_what_to_import_instead() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    std::fs::write(
        &report,
        "{\"latencies\":{\"total\":565678268,\"mean\":1885594,\"50th\":1065279},\"requests\":300}\n",
    )
    .unwrap();
    let report = report.to_str().unwrap().to_string();
    let cases = [
        (
            "oha-sqlite",
            fixture("oha-1.16-summary.json"),
            "oha's JSON summary",
        ),
        ("oha-sqlite", fixture("oha-1.16-output.csv"), "oha's CSV"),
        (
            "oha-sqlite",
            fixture("vegeta-12.13-errors.json"),
            "not an SQLite database",
        ),
        ("vegeta-json", report, "it is a vegeta report"),
    ];
    for (format, file, want) in cases {
        let out = import(dir.path(), &[format, &file]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(want), "{file}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A file recognised as another output gets its hint and the count of lines it could not
/// read, not each line quoted (a k6 summary of 239 lines printed 20 of them).
#[test]
fn a_recognised_other_output_is_not_quoted_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.json");
    std::fs::write(
        &summary,
        "{\n  \"metrics\": {\n    \"http_reqs\": {\"count\": 3}\n  }\n}\n",
    )
    .unwrap();
    let out = import(dir.path(), &["k6-json", summary.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("end-of-test summary")
            && stderr.contains("(5 line(s) could not be read; the first, line 1: "),
        "{stderr}"
    );
    assert!(!stderr.contains("summary.json:2:"), "{stderr}");
}
