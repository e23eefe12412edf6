//! What a gRPC call came to, for the record: whether it failed (and as what), the counters it
//! adds to its step, and the message its failure is explained with.

use super::{GrpcReply, PreparedGrpc};
use crate::transport::{Failure, Response, ResponseData};
use loadlab_metrics::{ErrorKind, GrpcCode, GrpcCounts};

/// The error a call that got an HTTP response ends with, if any: a non-200 HTTP status as for
/// HTTP, no `grpc-status` or a body cut inside a message as a protocol error, and a status the
/// step does not expect as its `grpc_*` kind (`check_failed` for an unexpected `OK`).
pub fn judge(call: &PreparedGrpc, response: &Response) -> Option<ErrorKind> {
    if response.status != 200 {
        return ErrorKind::from_status(response.status).or(Some(ErrorKind::Protocol));
    }
    let reply = response.grpc.unwrap_or_default();
    match reply.status {
        None => Some(ErrorKind::Protocol),
        Some(GrpcCode::Ok) if reply.truncated => Some(ErrorKind::Protocol),
        Some(code) if call.expected.contains(&code) => None,
        Some(code) => code.error_kind().or(Some(ErrorKind::CheckFailed)),
    }
}

/// A call that failed before its status came: its deadline passing is what gRPC clients call
/// `DEADLINE_EXCEEDED` (the server was told the same deadline in `grpc-timeout`); any other
/// failure keeps its kind.
pub fn failed(mut failure: Failure) -> Failure {
    if failure.kind == ErrorKind::Timeout {
        failure.kind = ErrorKind::GrpcDeadlineExceeded;
        failure.message = format!(
            "DEADLINE_EXCEEDED (the step's timeout): {}",
            failure.message
        );
    }
    failure
}

/// Why `judge` failed the call, in words for the run's error list.
pub fn explain(
    step: &str,
    call: &PreparedGrpc,
    response: &Response,
    data: Option<&ResponseData>,
) -> String {
    let reply = response.grpc.unwrap_or_default();
    let said = data
        .map(|d| d.grpc_message.as_str())
        .filter(|m| !m.is_empty())
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    match reply.status {
        _ if response.status != 200 => format!(
            "step `{step}`: HTTP status {} instead of 200 (not a gRPC server there, or a proxy failed)",
            response.status
        ),
        None => format!("step `{step}`: the call ended without a grpc-status (not a gRPC server?)"),
        Some(GrpcCode::Ok) if reply.truncated => {
            format!("step `{step}`: the response ended inside a message")
        }
        Some(code) => format!(
            "step `{step}`: grpc-status {code}{said} (expected {})",
            call.expected
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// What the call adds to its step's gRPC counters: the message sent (when it was sent:
/// `payload` bytes) and the messages received; and the status it ended with, if any (the
/// client's own deadline counts as `DEADLINE_EXCEEDED`, as gRPC clients count it).
pub fn counts(
    result: &Result<Response, Failure>,
    payload: Option<u64>,
) -> (GrpcCounts, Option<GrpcCode>) {
    let reply: GrpcReply = result
        .as_ref()
        .ok()
        .and_then(|r| r.grpc)
        .unwrap_or_default();
    let sent = match result {
        Ok(_) => payload.is_some(),
        Err(f) => payload.is_some() && f.wire.is_some_and(|w| w.sent > 0),
    };
    let counts = GrpcCounts {
        endings: Vec::new(),
        messages_sent: u64::from(sent),
        messages_received: reply.messages,
        bytes_sent: if sent { payload.unwrap_or(0) } else { 0 },
        bytes_received: reply.payload_bytes,
    };
    let status = match result {
        Ok(_) => reply.status,
        Err(f) if f.kind == ErrorKind::GrpcDeadlineExceeded => Some(GrpcCode::DeadlineExceeded),
        Err(_) => None,
    };
    (counts, status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::WireBytes;

    fn call(expected: Vec<GrpcCode>) -> PreparedGrpc {
        let fds = protox::compile(
            ["permits.proto"],
            [concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/proto")],
        )
        .expect("the example proto compiles");
        let pool = prost_reflect::DescriptorPool::from_file_descriptor_set(fds).unwrap();
        let m = pool.get_message_by_name("permits.v1.Permit").unwrap();
        PreparedGrpc {
            input: m.clone(),
            output: m,
            server_streaming: false,
            expected,
            fixed_payload: Some(7),
        }
    }

    fn answer(http: u16, status: Option<GrpcCode>, truncated: bool) -> Response {
        Response {
            status: http,
            grpc: Some(GrpcReply {
                status,
                messages: 1,
                payload_bytes: 9,
                first_message: None,
                truncated,
            }),
            ..Response::default()
        }
    }

    #[test]
    fn judges_the_status_against_what_the_step_expects() {
        use GrpcCode::*;
        let table = [
            (vec![Ok], answer(200, Some(Ok), false), None),
            (
                vec![Ok],
                answer(200, Some(Unavailable), false),
                Some(ErrorKind::GrpcUnavailable),
            ),
            (
                vec![Ok],
                answer(200, Some(DeadlineExceeded), false),
                Some(ErrorKind::GrpcDeadlineExceeded),
            ),
            (vec![NotFound], answer(200, Some(NotFound), false), None),
            (
                vec![NotFound],
                answer(200, Some(Ok), false),
                Some(ErrorKind::CheckFailed),
            ),
            (
                vec![Ok],
                answer(200, None, false),
                Some(ErrorKind::Protocol),
            ),
            (
                vec![Ok],
                answer(200, Some(Ok), true),
                Some(ErrorKind::Protocol),
            ),
            (vec![Ok], answer(503, None, false), Some(ErrorKind::Http5xx)),
            (
                vec![Ok],
                answer(302, None, false),
                Some(ErrorKind::Protocol),
            ),
        ];
        for (expected, response, want) in table {
            assert_eq!(judge(&call(expected), &response), want, "{response:?}");
        }
    }

    #[test]
    fn counts_the_status_and_the_messages_each_way() {
        let (ok, status) = counts(
            &Result::Ok(answer(200, Some(GrpcCode::Unavailable), false)),
            Some(7),
        );
        assert_eq!(status, Some(GrpcCode::Unavailable));
        assert!(ok.endings.is_empty());
        assert_eq!((ok.messages_sent, ok.bytes_sent), (1, 7));
        assert_eq!((ok.messages_received, ok.bytes_received), (1, 9));
        let (_, late) = counts(
            &Err(failed(Failure::new(ErrorKind::Timeout, "late"))),
            Some(7),
        );
        assert_eq!(late, Some(GrpcCode::DeadlineExceeded));
        let (refused, status) =
            counts(&Err(Failure::new(ErrorKind::ConnectRefused, "no")), Some(7));
        assert_eq!((refused.messages_sent, status), (0, None));
        let mut reset = Failure::new(ErrorKind::StreamReset, "reset");
        reset.wire = Some(WireBytes {
            sent: 40,
            received: 0,
        });
        assert_eq!(counts(&Err(reset), Some(7)).0.messages_sent, 1);
    }
}
