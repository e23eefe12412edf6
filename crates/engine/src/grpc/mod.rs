//! gRPC calls as HTTP/2 requests: the message written as JSON is encoded to protobuf with the
//! method's descriptor and framed (a 5-byte length prefix), the response's frames are counted
//! as they arrive and its status read (`grpc_reply`, which the HTTP/2 client fills in), and
//! the messages decoded for checks and captures. The reflection client that finds descriptors
//! before a run is `prepare::reflect`.
//!
//! The transport stays HTTP/2 (`http::h2`): a call is one stream, so connection sharing,
//! timing and the record are the same as for any request. `prost-reflect` does the dynamic
//! (descriptor-driven) encoding and the protobuf JSON mapping.

mod codec;
pub mod outcome;
mod prepared;

pub use crate::grpc_reply::{grpc_status, FrameCounter, GrpcReply, PREFIX};
pub use codec::{decode_json, encode_json, encode_rendered, frame_message};
pub use prepared::PreparedGrpc;
