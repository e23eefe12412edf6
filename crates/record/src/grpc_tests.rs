//! gRPC figures through the record: a record written before gRPC (no `grpc` counters key, no
//! `first_message` series) still reads, and a step without calls shows no `grpc` figures.

use super::*;

#[test]
fn records_written_before_grpc_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let written = deltas(&outcomes(11, 3, 200), |_| true);
    write(dir.path(), &meta(2, None, 1e9), &written, true);
    let now = summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap();
    let grpc = now.steps[0].grpc.as_ref().expect("step 0 made gRPC calls");
    assert_eq!(grpc.calls(), now.steps[0].requests);
    assert!(grpc.first_message_ms.count > 0);
    // What an older loadlab wrote: no first_message series, no grpc key in the counters.
    let hlog = dir.path().join(HLOG_FILE);
    let old: String = std::fs::read_to_string(&hlog)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("Tag=first_message"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&hlog, old).unwrap();
    let counters = dir.path().join(COUNTERS_FILE);
    let old: String = std::fs::read_to_string(&counters)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            for step in v["steps"].as_array_mut().unwrap() {
                step.as_object_mut().unwrap().remove("grpc");
            }
            format!("{v}\n")
        })
        .collect();
    assert!(!old.contains("\"grpc\""));
    std::fs::write(&counters, old).unwrap();
    let before = summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap();
    assert!(before.steps.iter().all(|s| s.grpc.is_none()));
    assert!(before
        .steps
        .iter()
        .all(|s| s.histograms.first_message.is_empty()));
    assert_eq!(before.requests, now.requests);
    assert_eq!(before.latency_ms, now.latency_ms);
    assert_eq!(before.steps[1].ws, now.steps[1].ws);
}
