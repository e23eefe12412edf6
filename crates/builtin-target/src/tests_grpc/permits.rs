//! Create, Get and Watch: statuses, decoded messages, deadlines, resets and their counts.

use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;

use super::*;
use crate::grpc::{CreateRequest, GetRequest, Permit, PermitEvent, WatchRequest};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unary_calls_statuses_and_metrics() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let create = |applicant: &str, pad_bytes| CreateRequest {
        applicant: applicant.into(),
        kind: "building".into(),
        documents: vec!["plan.pdf".into()],
        pad_bytes,
    };
    let r = call(a, CREATE, &create("ann", 100)).await;
    assert_eq!((r.status, r.trailers_only), (0, false), "{r:?}");
    let p: Permit = r.one();
    assert!(p.id.starts_with("permit-"), "{p:?}");
    assert_eq!((p.applicant.as_str(), p.kind.as_str()), ("ann", "building"));
    assert_eq!(p.status, 1, "RECEIVED");
    assert_eq!(p.padding.len(), 100);
    assert!(p.created_unix_ms > 1_700_000_000_000);
    let second: Permit = call(a, CREATE, &create("bob", 0)).await.one();
    assert_ne!(second.id, p.id, "a new id per permit");

    let r = call(a, CREATE, &create("", 0)).await;
    assert_eq!(
        (r.status, r.trailers_only),
        (3, true),
        "INVALID_ARGUMENT: {r:?}"
    );
    assert!(r.message.contains("applicant"), "{r:?}");
    let got: Permit = call(a, GET, &GetRequest { id: "p-9".into() }).await.one();
    assert_eq!((got.id.as_str(), got.status), ("p-9", 2));
    let r = call(
        a,
        GET,
        &GetRequest {
            id: "missing".into(),
        },
    )
    .await;
    assert_eq!(r.status, 5, "NOT_FOUND: {r:?}");
    let r = call(a, GET, &GetRequest { id: String::new() }).await;
    assert_eq!(r.status, 3, "{r:?}");
    let r = call(a, "/permits.v1.Permits/Delete", &GetRequest::default()).await;
    assert_eq!(
        (r.status, r.trailers_only),
        (12, true),
        "UNIMPLEMENTED: {r:?}"
    );
    // A compressed flag without grpc-encoding, and a truncated frame.
    for bad in [&[1u8, 0, 0, 0, 0][..], &[0, 0, 0, 0, 9, 1]] {
        let r = call_raw(a, GET, Bytes::copy_from_slice(bad), None).await;
        assert_eq!(r.status, 13, "INTERNAL: {r:?}");
    }
    // A prefix announcing 2 MiB.
    let r = call_raw(a, GET, Bytes::from_static(&[0, 0, 0x20, 0, 0]), None).await;
    assert_eq!(r.status, 8, "RESOURCE_EXHAUSTED: {r:?}");

    let text = metrics(a).await;
    for line in [
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"OK\"} 2\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"INVALID_ARGUMENT\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Get\",code=\"OK\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Get\",code=\"NOT_FOUND\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Get\",code=\"INVALID_ARGUMENT\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Get\",code=\"INTERNAL\"} 2\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Get\",code=\"RESOURCE_EXHAUSTED\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"other\",code=\"UNIMPLEMENTED\"} 1\n",
        "loadlab_target_grpc_messages_received_total{method=\"/permits.v1.Permits/Create\"} 3\n",
        "loadlab_target_grpc_messages_received_total{method=\"/permits.v1.Permits/Get\"} 3\n",
        "loadlab_target_grpc_messages_sent_total{method=\"/permits.v1.Permits/Create\"} 2\n",
        "loadlab_target_grpc_messages_sent_total{method=\"/permits.v1.Permits/Get\"} 1\n",
        // Create and Get held a worker of the capacity model (6 calls got that far).
        "loadlab_target_service_time_seconds_count 6\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_events_then_ok() {
    let t = start(TargetConfig::default());
    let started = Instant::now();
    let watch = WatchRequest {
        id: "p-1".into(),
        events: 5,
        every_ms: 10,
    };
    let r = call(t.addr, WATCH, &watch).await;
    let spent = started.elapsed();
    assert_eq!((r.status, r.trailers_only), (0, false), "{r:?}");
    let events: Vec<PermitEvent> = r
        .messages
        .iter()
        .map(|m| PermitEvent::decode(&m[..]).expect("event"))
        .collect();
    let seqs: Vec<u32> = events.iter().map(|e| e.seq).collect();
    let statuses: Vec<i32> = events.iter().map(|e| e.status).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    assert_eq!(
        statuses,
        [1, 2, 3, 1, 2],
        "RECEIVED, IN_REVIEW, APPROVED, ..."
    );
    assert!(events.iter().all(|e| e.id == "p-1"));
    // The first at once, then one every 10 ms.
    assert!(spent >= Duration::from_millis(40), "{spent:?}");
    // Defaults: 3 events.
    let r = call(
        t.addr,
        WATCH,
        &WatchRequest {
            id: "p".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!((r.status, r.messages.len()), (0, 3), "{r:?}");
    let r = call(
        t.addr,
        WATCH,
        &WatchRequest {
            id: "p".into(),
            events: 1001,
            every_ms: 1,
        },
    )
    .await;
    assert_eq!((r.status, r.trailers_only), (3, true), "{r:?}");

    let text = metrics(t.addr).await;
    for line in [
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Watch\",code=\"OK\"} 2\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Watch\",code=\"INVALID_ARGUMENT\"} 1\n",
        "loadlab_target_grpc_messages_received_total{method=\"/permits.v1.Permits/Watch\"} 3\n",
        "loadlab_target_grpc_messages_sent_total{method=\"/permits.v1.Permits/Watch\"} 8\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_timeout_ends_calls_deadline_exceeded() {
    let service_time = Duration::from_millis(300);
    let t = start(TargetConfig {
        service_time,
        ..Default::default()
    });
    let started = Instant::now();
    let create = CreateRequest {
        applicant: "ann".into(),
        ..Default::default()
    };
    let r = call_raw(t.addr, CREATE, framed(&create), Some("50m")).await;
    assert_eq!(
        (r.status, r.trailers_only),
        (4, true),
        "DEADLINE_EXCEEDED: {r:?}"
    );
    // Ended at its 50 ms deadline, not after the service: before the service time is over.
    assert!(
        started.elapsed() < service_time,
        "{:?}: as late as the service time ({service_time:?})",
        started.elapsed()
    );
    // Time enough: OK after the service time.
    let r = call_raw(t.addr, CREATE, framed(&create), Some("5S")).await;
    assert_eq!(r.status, 0, "{r:?}");

    // A stream whose next event would come after the deadline ends there.
    let watch = WatchRequest {
        id: "p".into(),
        events: 100,
        every_ms: 20,
    };
    let r = call_raw(t.addr, WATCH, framed(&watch), Some("70m")).await;
    assert_eq!((r.status, r.trailers_only), (4, false), "{r:?}");
    assert_eq!(r.messages.len(), 4, "events at 0, 20, 40 and 60 ms: {r:?}");
    let text = metrics(t.addr).await;
    for line in [
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"DEADLINE_EXCEEDED\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"OK\"} 1\n",
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Watch\",code=\"DEADLINE_EXCEEDED\"} 1\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

/// A client that resets a stream mid-way is counted CANCELLED, and the stream stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_stream_is_counted_cancelled() {
    let t = start(TargetConfig::default());
    let mut client = connect(t.addr).await.ready().await.expect("ready");
    let (resp, mut send) = client
        .send_request(request(WATCH, None), false)
        .expect("send");
    let watch = WatchRequest {
        id: "p".into(),
        events: 1000,
        every_ms: 10,
    };
    send.send_data(framed(&watch), true).expect("data");
    let mut body = resp.await.expect("response").into_body();
    let first = body.data().await.expect("a message").expect("data");
    assert!(first.len() > 5);
    send.send_reset(h2::Reason::CANCEL);
    drop((body, send));
    let counted = "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Watch\",code=\"CANCELLED\"} 1\n";
    let mut text = String::new();
    for _ in 0..100 {
        text = metrics(t.addr).await;
        if text.contains(counted) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(text.contains(counted), "{text}");
    // The stream stopped: far fewer than the 1000 events were sent.
    let sent = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "loadlab_target_grpc_messages_sent_total{method=\"/permits.v1.Permits/Watch\"} ",
            )
        })
        .and_then(|n| n.parse::<u64>().ok())
        .expect("sent count");
    assert!((1..50).contains(&sent), "{sent}");
}
