//! End-to-end tests of the gRPC service over real loopback sockets, with the `h2` crate as
//! the client (another HTTP/2 implementation than the server's hyper), checking statuses,
//! decoded messages, deadlines, reflection and the counts in `/metrics`. Multi-threaded, so
//! the clients' connections close while the target shuts down (no 2 s grace to wait).

use std::net::SocketAddr;

use bytes::{BufMut, Bytes, BytesMut};
use h2::client::SendRequest;
use prost::Message;
use tokio::net::TcpStream;

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

mod permits;
mod reflection;
