//! gRPC calls as HTTP/2 requests: the message written as JSON is encoded to protobuf with the
//! method's descriptor and framed (a 5-byte length prefix), the response's frames are counted
//! as they arrive and decoded for checks and captures, and the call's status is read from
//! `grpc-status` (the trailers, or the headers of a trailers-only answer).
//!
//! The transport stays HTTP/2 (`http::h2`): a call is one stream, so connection sharing,
//! timing and the record are the same as for any request. `prost-reflect` does the dynamic
//! (descriptor-driven) encoding and the protobuf JSON mapping; `prost` the reflection
//! service's messages.

mod codec;
mod frames;
pub mod outcome;
mod prepared;
pub mod reflect;
mod status;

pub use codec::{decode_json, encode_json, encode_rendered, frame_message};
pub use frames::FrameCounter;
pub use prepared::PreparedGrpc;
pub use status::{grpc_status, GrpcReply};
