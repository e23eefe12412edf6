//! A study re-runs an invalid run (here: a `unique` data set that runs out, which makes every
//! attempt of one variant invalid) up to `study.retry_invalid` times, lists every attempt and
//! why, and never counts an invalid run in the statistics.

mod common;

use common::{exclusive, only_study, study_command, Target};
use serde_json::Value;

#[test]
fn an_invalid_run_is_run_again_and_every_attempt_is_listed() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let tmp = common::scratch_dir("loadlab-study-retry-");
    let dir = tmp.path();
    let file = dir.join("retry.yaml");
    std::fs::write(
        &file,
        "name: retry\n\
         load: { model: closed, vus: 1, iterations: 3 }\n\
         data:\n\
         \x20 users: { values: [{ id: 1 }, { id: 2 }, { id: 3 }], pick: unique }\n\
         steps:\n\
         \x20 - { name: user, get: '/api/ping?u={{ users.id }}' }\n\
         study:\n\
         \x20 repeat: 2\n\
         \x20 retry_invalid: 1\n\
         \x20 variants:\n\
         \x20   - { name: enough }\n\
         \x20   - { name: short, load: { model: closed, vus: 1, iterations: 4 } }\n",
    )
    .unwrap();
    let out = study_command(&file, &target.url, &dir.join("results"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `short` wants 4 rows of 3 in every attempt: it never gets a valid run.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr.matches("running it again").count(),
        2,
        "one re-run per repetition of short:\n{stderr}"
    );
    assert!(stderr.contains("(re-run 1 of an invalid run)"), "{stderr}");
    let (study_dir, study) = only_study(&dir.join("results"));
    let log = study["run_log"].as_array().unwrap();
    let short: Vec<&Value> = log.iter().filter(|e| e["variant"] == "short").collect();
    assert_eq!(short.len(), 4, "2 repetitions × (1 + 1 re-run): {log:?}");
    assert!(short
        .iter()
        .all(|e| e["used"] == false && e["invalid"][0] == "data_exhausted"));
    assert_eq!(
        short
            .iter()
            .map(|e| e["attempt"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 0, 1]
    );
    let enough: Vec<&Value> = log.iter().filter(|e| e["variant"] == "enough").collect();
    assert_eq!(enough.len(), 2);
    assert!(enough.iter().all(|e| e["used"] == true));
    let variants = study["variants"].as_array().unwrap();
    assert_eq!(
        variants[1]["runs"].as_array().unwrap().len(),
        0,
        "no invalid run is in the statistics"
    );
    assert_eq!(variants[1]["excluded_runs"].as_array().unwrap().len(), 4);
    // The report lists every run left out, why, and whether it was made again.
    let report = std::fs::read_to_string(study_dir.join("report.md")).unwrap();
    assert!(report.contains("Runs left out and re-runs"), "{report}");
    assert!(
        report.matches("ran out after its 3 rows").count() >= 4,
        "{report}"
    );
    assert_eq!(report.matches("no: re-runs used up").count(), 2);

    // `--retry-invalid` on the command line overrides the file's `retry_invalid`.
    let results = dir.join("results-no-retry");
    let out = study_command(&file, &target.url, &results)
        .args(["--retry-invalid", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(stderr.matches("running it again").count(), 0, "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `loadlab run --retry-invalid N` does what a study does for one run: an invalid attempt is
/// stored, said (also with --quiet) and made again, and the last attempt is the result.
#[test]
fn a_single_run_is_made_again_while_invalid_with_retry_invalid() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("short.yaml");
    std::fs::write(
        &file,
        "name: short\n\
         load: { model: closed, vus: 1, iterations: 4 }\n\
         data:\n\
         \x20 users: { values: [{ id: 1 }, { id: 2 }, { id: 3 }], pick: unique }\n\
         steps:\n\
         \x20 - { name: user, get: '/api/ping?u={{ users.id }}' }\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loadlab"))
        .arg("run")
        .arg(&file)
        .args(["--target", &target.url, "--retry-invalid", "2", "--quiet"])
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr.matches("running it again").count(),
        2,
        "two re-runs of a run that is invalid every time:\n{stderr}"
    );
    // Each attempt's reason with its figures; no wait first, as the generator's data ran
    // out, not the host's time.
    assert!(
        stderr.contains("the run was invalid (data_exhausted: data set `users`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("; running it again (2 of 2, --retry-invalid)"),
        "{stderr}"
    );
    // Quiet, the exit code still comes with its reason.
    assert!(
        stderr.contains("loadlab: invalid run (data_exhausted): data set `users`"),
        "{stderr}"
    );
    let stored = std::fs::read_dir(results.join("runs")).unwrap().count();
    assert_eq!(stored, 3, "every attempt is kept");
}
