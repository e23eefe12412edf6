//! Server reflection (v1 and v1alpha): services, files by symbol and by name, answers in
//! order, and a client that waits for each answer.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use prost::Message;

use super::*;
use crate::grpc::{
    MessageRequest, MessageResponse, ServerReflectionRequest, ServerReflectionResponse,
};

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
