//! Server reflection (`grpc.reflection.v1` and `v1alpha`, one wire format): lists the
//! services and answers permits.proto's `FileDescriptorProto` by file name or by any symbol
//! it declares. The file is compiled at start with `protox` from the copy embedded in the
//! binary, so what reflection tells is exactly the file in examples/proto.
//!
//! The call is bidirectional streaming: each request message is answered as soon as it has
//! arrived (a client that waits for each answer before its next request works, as one that
//! sends all and half-closes), then OK once the client has half-closed.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::{self, StreamExt};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use prost::Message;
use protox::prost_reflect::prost_types::{DescriptorProto, EnumDescriptorProto};

use super::reflection_messages::{
    ErrorResponse, ExtensionNumberResponse, FileDescriptorResponse, ListServiceResponse,
    MessageRequest, MessageResponse, ServerReflectionRequest, ServerReflectionResponse,
    ServiceResponse,
};
use super::wire::{self, Code, Status};
use super::{streaming, Body, CallEnd};
use crate::error::TargetError;

/// The name reflection gives the file (as `protoc -I examples/proto` would).
pub const FILE_NAME: &str = "permits.proto";
const SOURCE: &str = include_str!("../../../../examples/proto/permits.proto");

/// The services `list_services` names.
pub const SERVICES: [&str; 3] = [
    "permits.v1.Permits",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// permits.proto compiled: its encoded `FileDescriptorProto` and the symbols it declares.
#[derive(Debug)]
pub struct Descriptor {
    file: Vec<u8>,
    /// Fully-qualified names of its messages (nested too), enums, enum values, services and
    /// methods.
    symbols: HashSet<String>,
    messages: HashSet<String>,
}

/// Resolves the one embedded file.
struct Embedded;

impl protox::file::FileResolver for Embedded {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == FILE_NAME {
            protox::file::File::from_source(name, SOURCE)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

impl Descriptor {
    pub fn compile() -> Result<Self, TargetError> {
        let bug = |e: &dyn std::fmt::Display| {
            TargetError::Proto(format!("the embedded {FILE_NAME} does not compile: {e}"))
        };
        let mut compiler = protox::Compiler::with_file_resolver(Embedded);
        compiler.open_file(FILE_NAME).map_err(|e| bug(&e))?;
        let set = compiler.file_descriptor_set();
        let file = set
            .file
            .into_iter()
            .find(|f| f.name() == FILE_NAME)
            .ok_or_else(|| bug(&"no file in the compiled set"))?;
        let package = file.package().to_string();
        let mut symbols = HashSet::new();
        let mut messages = HashSet::new();
        let mut pending: Vec<(String, &DescriptorProto)> = Vec::new();
        for m in &file.message_type {
            pending.push((package.clone(), m));
        }
        while let Some((scope, m)) = pending.pop() {
            let name = format!("{scope}.{}", m.name());
            for nested in &m.nested_type {
                pending.push((name.clone(), nested));
            }
            for e in &m.enum_type {
                add_enum(&mut symbols, &name, e);
            }
            messages.insert(name.clone());
            symbols.insert(name);
        }
        for e in &file.enum_type {
            add_enum(&mut symbols, &package, e);
        }
        for s in &file.service {
            let name = format!("{package}.{}", s.name());
            for m in &s.method {
                symbols.insert(format!("{name}.{}", m.name()));
            }
            symbols.insert(name);
        }
        Ok(Descriptor {
            file: file.encode_to_vec(),
            symbols,
            messages,
        })
    }

    /// The answer to one reflection request.
    fn answer(&self, req: ServerReflectionRequest) -> ServerReflectionResponse {
        let not_found = |what: String| {
            MessageResponse::ErrorResponse(ErrorResponse {
                error_code: Code::NotFound.as_u8() as i32,
                error_message: what,
            })
        };
        let file = || {
            MessageResponse::FileDescriptorResponse(FileDescriptorResponse {
                file_descriptor_proto: vec![self.file.clone()],
            })
        };
        let response = match &req.message_request {
            Some(MessageRequest::ListServices(_)) => {
                MessageResponse::ListServicesResponse(ListServiceResponse {
                    service: SERVICES
                        .iter()
                        .map(|s| ServiceResponse {
                            name: s.to_string(),
                        })
                        .collect(),
                })
            }
            Some(MessageRequest::FileByFilename(name)) if name == FILE_NAME => file(),
            Some(MessageRequest::FileByFilename(name)) => {
                not_found(format!("no file {name} (the target has {FILE_NAME})"))
            }
            Some(MessageRequest::FileContainingSymbol(symbol))
                if self.symbols.contains(symbol.trim_start_matches('.')) =>
            {
                file()
            }
            Some(MessageRequest::FileContainingSymbol(symbol)) => {
                not_found(format!("no symbol {symbol}"))
            }
            Some(MessageRequest::AllExtensionNumbersOfType(t)) if self.messages.contains(t) => {
                MessageResponse::AllExtensionNumbersResponse(ExtensionNumberResponse {
                    base_type_name: t.clone(),
                    extension_number: Vec::new(),
                })
            }
            Some(MessageRequest::AllExtensionNumbersOfType(t)) => {
                not_found(format!("no message type {t}"))
            }
            Some(MessageRequest::FileContainingExtension(e)) => not_found(format!(
                "no extension {} of {}",
                e.extension_number, e.containing_type
            )),
            None => MessageResponse::ErrorResponse(ErrorResponse {
                error_code: Code::InvalidArgument.as_u8() as i32,
                error_message: "the request sets no message_request".into(),
            }),
        };
        ServerReflectionResponse {
            valid_host: req.host.clone(),
            original_request: Some(req),
            message_response: Some(response),
        }
    }
}

fn add_enum(symbols: &mut HashSet<String>, scope: &str, e: &EnumDescriptorProto) {
    let name = format!("{scope}.{}", e.name());
    for v in &e.value {
        // Enum values are scoped beside their enum, as in C++.
        symbols.insert(format!("{scope}.{}", v.name()));
    }
    symbols.insert(name);
}

struct CallState {
    end: CallEnd,
    descriptor: Arc<Descriptor>,
    body: Incoming,
    buf: BytesMut,
    pending: VecDeque<Bytes>,
    half_closed: bool,
    done: bool,
}

/// Answers each request message as it arrives, then OK when the client half-closes.
pub fn serve(end: CallEnd, descriptor: Arc<Descriptor>, body: Incoming) -> hyper::Response<Body> {
    let state = CallState {
        end,
        descriptor,
        body,
        buf: BytesMut::new(),
        pending: VecDeque::new(),
        half_closed: false,
        done: false,
    };
    streaming(stream::unfold(state, next).boxed())
}

type Item = (Result<Frame<Bytes>, Infallible>, CallState);

async fn next(mut s: CallState) -> Option<Item> {
    loop {
        if let Some(message) = s.pending.pop_front() {
            let frame = s.end.send(message);
            return Some((Ok(frame), s));
        }
        if s.done {
            return None;
        }
        if s.half_closed {
            let status = if s.buf.is_empty() {
                Status::ok()
            } else {
                let left = wire::FrameError::Truncated(s.buf.len());
                Status::new(Code::Internal, left.to_string())
            };
            return Some(finish(s, &status));
        }
        match s.body.frame().await {
            None => s.half_closed = true,
            Some(Err(_)) => {
                // The client reset the stream: nobody reads an answer (CANCELLED is counted).
                s.done = true;
                return None;
            }
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                s.buf.extend_from_slice(&data);
                if let Err(status) = answer_complete(&mut s) {
                    return Some(finish(s, &status));
                }
            }
        }
    }
}

/// Decodes every complete request in the buffer and queues its answer.
fn answer_complete(s: &mut CallState) -> Result<(), Status> {
    let messages = wire::split_messages(&mut s.buf)?;
    s.end.counters.received(s.end.method, messages.len());
    for m in messages {
        let req = ServerReflectionRequest::decode(m).map_err(|e| {
            Status::new(
                Code::Internal,
                format!("not a ServerReflectionRequest: {e}"),
            )
        })?;
        s.pending.push_back(wire::frame(&s.descriptor.answer(req)));
    }
    Ok(())
}

fn finish(mut s: CallState, status: &Status) -> Item {
    s.done = true;
    s.pending.clear();
    let frame = s.end.finish(status);
    (Ok(frame), s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protox::prost_reflect::prost_types::FileDescriptorProto;

    #[test]
    fn compiles_the_embedded_file_and_knows_its_symbols() {
        let d = Descriptor::compile().unwrap();
        for symbol in [
            "permits.v1.Permits",
            "permits.v1.Permits.Create",
            "permits.v1.Permits.Watch",
            "permits.v1.CreateRequest",
            "permits.v1.PermitEvent",
            "permits.v1.Status",
            "permits.v1.APPROVED",
        ] {
            assert!(d.symbols.contains(symbol), "{symbol}");
        }
        let ask = |r| {
            d.answer(ServerReflectionRequest {
                host: String::new(),
                message_request: Some(r),
            })
            .message_response
        };
        let Some(MessageResponse::FileDescriptorResponse(f)) = ask(
            MessageRequest::FileContainingSymbol(".permits.v1.Permits".into()),
        ) else {
            panic!("no file for the service");
        };
        let file = FileDescriptorProto::decode(&f.file_descriptor_proto[0][..]).unwrap();
        assert_eq!(file.package(), "permits.v1");
        assert_eq!(file.service[0].method.len(), 3);
        assert!(matches!(
            ask(MessageRequest::FileContainingSymbol("x.Y".into())),
            Some(MessageResponse::ErrorResponse(ErrorResponse {
                error_code: 5,
                ..
            }))
        ));
        assert!(matches!(
            ask(MessageRequest::FileByFilename(FILE_NAME.into())),
            Some(MessageResponse::FileDescriptorResponse(_))
        ));
    }
}
