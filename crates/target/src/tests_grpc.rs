//! End-to-end tests of the gRPC service over real loopback sockets, with the `h2` crate as
//! the client (another HTTP/2 implementation than the server's hyper), checking statuses,
//! decoded messages, deadlines, reflection and the counts in `/metrics`. Multi-threaded, so
//! the clients' connections close while the target shuts down (no 2 s grace to wait).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use h2::client::SendRequest;
use prost::Message;
use tokio::net::TcpStream;

use crate::grpc::{
    CreateRequest, GetRequest, MessageRequest, MessageResponse, Permit, PermitEvent,
    ServerReflectionRequest, ServerReflectionResponse, WatchRequest,
};
use crate::{spawn, TargetConfig, TargetHandle};

fn start(config: TargetConfig) -> TargetHandle {
    spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("address"),
        ..config
    })
    .expect("target starts")
}

async fn connect(addr: SocketAddr) -> SendRequest<Bytes> {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let (client, conn) = h2::client::handshake(tcp).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

fn framed(message: &impl Message) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_u8(0);
    buf.put_u32(message.encoded_len() as u32);
    message.encode(&mut buf).expect("encodes");
    buf.freeze()
}

/// What a call answered.
#[derive(Debug)]
struct Reply {
    /// The status came in the headers (a trailers-only answer).
    trailers_only: bool,
    status: u32,
    message: String,
    messages: Vec<Bytes>,
}

impl Reply {
    fn one<M: Message + Default>(&self) -> M {
        assert_eq!(self.messages.len(), 1, "{self:?}");
        M::decode(&self.messages[0][..]).expect("decodes")
    }
}

fn grpc_status(headers: &hyper::HeaderMap) -> Option<(u32, String)> {
    let status = headers.get("grpc-status")?.to_str().ok()?.parse().ok()?;
    let message = headers
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    Some((status, message.to_string()))
}

fn request(path: &str, timeout: Option<&str>) -> hyper::Request<()> {
    let mut b = hyper::Request::builder()
        .method("POST")
        .uri(format!("http://127.0.0.1{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(t) = timeout {
        b = b.header("grpc-timeout", t);
    }
    b.body(()).expect("request")
}

/// Sends `body` (already framed) as one call and reads the whole answer.
async fn call_raw(addr: SocketAddr, path: &str, body: Bytes, timeout: Option<&str>) -> Reply {
    let client = connect(addr).await;
    let mut client = client.ready().await.expect("ready");
    let (resp, mut send) = client
        .send_request(request(path, timeout), false)
        .expect("send");
    send.send_data(body, true).expect("body");
    let resp = resp.await.expect("response");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/grpc");
    if let Some((status, message)) = grpc_status(resp.headers()) {
        assert!(
            resp.body().is_end_stream(),
            "trailers-only answer with a body"
        );
        return Reply {
            trailers_only: true,
            status,
            message,
            messages: Vec::new(),
        };
    }
    let mut body = resp.into_body();
    let mut data = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("data");
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.expect("trailers").expect("some");
    let (status, message) = grpc_status(&trailers).expect("grpc-status trailer");
    Reply {
        trailers_only: false,
        status,
        message,
        messages: crate::grpc::decode_all(&data).expect("framing"),
    }
}

async fn call(addr: SocketAddr, path: &str, message: &impl Message) -> Reply {
    call_raw(addr, path, framed(message), None).await
}

async fn metrics(addr: SocketAddr) -> String {
    let mut client = connect(addr).await.ready().await.expect("ready");
    let req = hyper::Request::get("http://127.0.0.1/metrics")
        .body(())
        .expect("request");
    let (resp, _) = client.send_request(req, true).expect("send");
    let mut body = resp.await.expect("response").into_body();
    let mut text = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("data");
        let _ = body.flow_control().release_capacity(chunk.len());
        text.extend_from_slice(&chunk);
    }
    String::from_utf8(text).expect("utf-8")
}

const CREATE: &str = "/permits.v1.Permits/Create";
const GET: &str = "/permits.v1.Permits/Get";
const WATCH: &str = "/permits.v1.Permits/Watch";

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
    let t = start(TargetConfig {
        service_time: Duration::from_millis(300),
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
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "{:?}",
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

fn reflection_request(r: MessageRequest) -> ServerReflectionRequest {
    ServerReflectionRequest {
        host: "localhost".into(),
        message_request: Some(r),
    }
}

fn reflection_answer(m: &Bytes) -> MessageResponse {
    let r = ServerReflectionResponse::decode(&m[..]).expect("response");
    assert_eq!(r.valid_host, "localhost");
    assert!(r.original_request.is_some());
    r.message_response.expect("an answer")
}

/// The package and service names of a FileDescriptorProto answer.
fn file_services(answer: MessageResponse) -> (String, Vec<String>) {
    use protox::prost_reflect::prost_types::FileDescriptorProto;
    let MessageResponse::FileDescriptorResponse(f) = answer else {
        panic!("not a file: {answer:?}");
    };
    let file = FileDescriptorProto::decode(&f.file_descriptor_proto[0][..]).expect("file");
    let services = file.service.iter().map(|s| s.name().to_string()).collect();
    (file.package().to_string(), services)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_services_and_answers_files() {
    let t = start(TargetConfig::default());
    let path = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
    let mut body = BytesMut::new();
    for r in [
        MessageRequest::ListServices(String::new()),
        MessageRequest::FileContainingSymbol("permits.v1.Permits".into()),
        MessageRequest::FileContainingSymbol("permits.v1.Nope".into()),
        MessageRequest::FileByFilename("permits.proto".into()),
    ] {
        body.extend_from_slice(&framed(&reflection_request(r)));
    }
    let r = call_raw(t.addr, path, body.freeze(), None).await;
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(r.messages.len(), 4, "one answer per request, in order");
    let MessageResponse::ListServicesResponse(list) = reflection_answer(&r.messages[0]) else {
        panic!("not a list");
    };
    let names: Vec<&str> = list.service.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "permits.v1.Permits",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"
        ]
    );
    let (package, services) = file_services(reflection_answer(&r.messages[1]));
    assert_eq!(
        (package.as_str(), services),
        ("permits.v1", vec!["Permits".to_string()])
    );
    assert!(matches!(
        reflection_answer(&r.messages[2]),
        MessageResponse::ErrorResponse(e) if e.error_code == 5
    ));
    let (package, _) = file_services(reflection_answer(&r.messages[3]));
    assert_eq!(package, "permits.v1");
    let text = metrics(t.addr).await;
    for line in [
        "loadlab_target_grpc_calls_total{method=\"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo\",code=\"OK\"} 1\n",
        "loadlab_target_grpc_messages_received_total{method=\"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo\"} 4\n",
        "loadlab_target_grpc_messages_sent_total{method=\"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo\"} 4\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

/// A client that waits for each answer before its next request (as grpcurl does) is
/// answered as it goes (v1alpha).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_answers_each_request_as_it_arrives() {
    let t = start(TargetConfig::default());
    let mut client = connect(t.addr).await.ready().await.expect("ready");
    let path = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
    let (resp, mut send) = client
        .send_request(request(path, None), false)
        .expect("send");
    let ask = MessageRequest::FileContainingSymbol("permits.v1.Permits.Watch".into());
    send.send_data(framed(&reflection_request(ask)), false)
        .expect("data");
    let resp = tokio::time::timeout(Duration::from_secs(5), resp)
        .await
        .expect("headers before the client half-closes")
        .expect("response");
    let mut body = resp.into_body();
    let mut buf = BytesMut::new();
    let mut answers = Vec::new();
    for (i, next) in [Some(MessageRequest::ListServices(String::new())), None]
        .into_iter()
        .enumerate()
    {
        while answers.len() <= i {
            let chunk = tokio::time::timeout(Duration::from_secs(5), body.data())
                .await
                .expect("an answer before the next request")
                .expect("data")
                .expect("data");
            let _ = body.flow_control().release_capacity(chunk.len());
            buf.extend_from_slice(&chunk);
            answers.extend(crate::grpc::split_messages(&mut buf).expect("framing"));
        }
        match next {
            Some(r) => send
                .send_data(framed(&reflection_request(r)), false)
                .expect("data"),
            None => send.send_data(Bytes::new(), true).expect("end"),
        }
    }
    let (package, _) = file_services(reflection_answer(&answers[0]));
    assert_eq!(package, "permits.v1");
    assert!(matches!(
        reflection_answer(&answers[1]),
        MessageResponse::ListServicesResponse(l) if l.service.len() == 3
    ));
    assert!(body.data().await.is_none());
    let trailers = body.trailers().await.expect("trailers").expect("some");
    assert_eq!(grpc_status(&trailers).map(|s| s.0), Some(0));
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
