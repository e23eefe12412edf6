//! A run store that lost or damaged its files, read back by the real binary: a summary
//! (`run.json`) deleted beside a whole record is rebuilt, a damaged one says how to have it
//! rebuilt, and a deleted or overwritten index says where the runs are and how to read them.

mod common;

use common::{text, Target, BIN};
use std::path::Path;
use std::process::{Command, Output};

fn loadlab(args: &[&str], results: &Path) -> Output {
    common::loadlab_in(args, results)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_store_that_lost_files_is_read_back_or_says_how() {
    let target = Target::start(&[]);
    let tmp = common::scratch_dir("loadlab-store-repair-");
    let results = tmp.path();
    let url = format!("{}/api/ping", target.url);
    let run = loadlab(
        &[
            "run",
            "--url",
            &url,
            "--rate",
            "40/s",
            "--duration",
            "1s",
            "--quiet",
        ],
        results,
    );
    // The store is what is tested, not the measurement: a run the host disturbed (exit 3,
    // invalid) is stored all the same, and serves as well.
    assert!(matches!(run.status.code(), Some(0 | 3)), "{}", text(&run));
    let id = std::fs::read_dir(results.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let summary = results.join("runs").join(&id).join("run.json");
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();

    // Deleted: the next command rebuilds it from the record, and says so.
    std::fs::remove_file(&summary).unwrap();
    let shown = loadlab(&["runs", "show", &id], results);
    assert!(shown.status.success(), "{}", text(&shown));
    assert!(
        stderr(&shown).contains(&format!(
            "run {id}: its run.json was missing; its summary was rebuilt from its record"
        )),
        "{}",
        text(&shown)
    );
    assert!(stdout(&shown).contains("40 total"), "{}", text(&shown));
    let rebuilt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(rebuilt["requests"], original["requests"]);
    assert_eq!(rebuilt["latency_ms"], original["latency_ms"]);
    let again = loadlab(&["runs"], results);
    assert!(
        !stderr(&again).contains("rebuilt"),
        "once: {}",
        text(&again)
    );

    // Damaged: not replaced behind the user's back, but the message says how.
    std::fs::write(&summary, "{\"schema\": \"loadlab.run").unwrap();
    for args in [vec!["runs", "show", &id], vec!["report", &id]] {
        let o = loadlab(&args, results);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            stderr(&o).contains("delete this file and the next loadlab command rebuilds it"),
            "{args:?}: {}",
            text(&o)
        );
    }
    std::fs::remove_file(&summary).unwrap();
    assert!(loadlab(&["report", &id, "--quiet"], results)
        .status
        .success());

    // The index deleted (a cache that kept only runs/): the runs are named, and read by path.
    let index = results.join("loadlab.db");
    std::fs::rename(&index, results.join("kept.db")).unwrap();
    let listed = loadlab(&["runs"], results);
    assert!(listed.status.success(), "{}", text(&listed));
    assert!(
        stdout(&listed).contains("runs holds 1 run directory: the index (loadlab.db) was deleted"),
        "{}",
        text(&listed)
    );
    let by_dir = results.join("runs").join(&id);
    let report = Command::new(BIN)
        .args(["report", by_dir.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));

    // The index overwritten: its path and the fix, exit 2, no "file is not a database" alone.
    std::fs::write(
        &index,
        "not a database at all, but long enough to be read as one",
    )
    .unwrap();
    let o = loadlab(&["runs"], results);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{}: not a loadlab run index (an SQLite database)",
            index.display()
        )),
        "{}",
        text(&o)
    );
    assert!(stderr(&o).contains("move it away"), "{}", text(&o));
}
