//! JMeter files whose timestamps jump: runs appended to one file are told apart in file order
//! (the CSV reader holds rows back for their sub-results, which must not move a row of an old
//! run into the newest), and a stray timestamp inside a run is refused by its line instead of
//! making millions of empty seconds.

use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, Options};

const HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success\n";

fn row(ts: i64, code: u16, thread: &str) -> String {
    let ok = code < 400;
    format!("{ts},100,GET /,{code},x,{thread},{ok}\n")
}

fn import(text: &str) -> Result<loadlab_metrics::RunResult, String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.jtl");
    std::fs::write(&file, text).unwrap();
    let run = dir.path().join("run");
    let options = Options {
        name: "plan".into(),
        ..Options::default()
    };
    import_file(Format::JmeterCsv, &file, &run, &options).map_err(|e| e.to_string())?;
    Ok(summarize(&StoredRecord::open(&run).unwrap()).unwrap())
}

/// As in a real file (SUPERCOMPTEAM/SCT_Jmeter's results.jtl): the old run's last row, a 404,
/// waits for its thread's next row while 100 rows of the new run come from other threads.
#[test]
fn a_row_of_an_old_run_held_back_stays_out_of_the_newest() {
    let old = 1_713_521_704_000;
    let new = old + 1450 * 3_600_000;
    let mut text = HEADER.to_string();
    text += &row(old, 200, "TG 1-2");
    text += &row(old + 10, 404, "TG 1-3");
    text += &row(old + 20, 404, "TG 1-1");
    for i in 0..100 {
        text += &row(new + i * 10, 200, &format!("TG 2-{i}"));
    }
    let r = import(&text).unwrap();
    assert_eq!((r.requests.total, r.requests.failed), (100, 0));
    assert!(r.duration_s < 2.0, "{}", r.duration_s);
    let notes = r.notes.join("\n");
    assert!(
        notes.contains("the newest, from line 5") && notes.contains("the 3 sample(s) before it"),
        "{notes}"
    );
}

/// One row an hour or more away from the others, before or after: refused by its line, at
/// once (it used to write an interval for every second between).
#[test]
fn a_stray_timestamp_in_a_run_is_refused_by_its_line() {
    let start = 1_718_743_953_000;
    for (what, stray, want) in [
        (
            "30 days early",
            start - 30 * 86_400_000,
            "before the run's earliest",
        ),
        ("at zero", 0, "started at 1970-01-01T00:00:00.000Z lies"),
        (
            "30 days late",
            start + 30 * 86_400_000,
            "after the run's latest",
        ),
    ] {
        let mut text = HEADER.to_string();
        for i in 0..10 {
            let ts = if i == 5 { stray } else { start + i * 100 };
            text += &row(ts, 200, "TG 1-1");
        }
        let err = import(&text).unwrap_err();
        assert!(
            err.contains("line 7: a sample that started at") && err.contains(want),
            "{what}: {err}"
        );
    }
}
