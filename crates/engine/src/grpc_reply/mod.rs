//! A gRPC call's reply as the HTTP/2 connection reads it: its messages counted as their frames
//! arrive, and its status from `grpc-status` (the trailers, or the headers of a
//! trailers-only answer). Apart from the rest of `grpc` (encoding, checks, outcomes), so that
//! the HTTP/2 client and the transport's response types can hold a reply without depending on
//! them.

mod frames;
mod status;

pub use frames::FrameCounter;
pub use status::{grpc_status, grpc_status_of, GrpcReply};

/// The length of a gRPC message's prefix: a compressed flag and a 4-byte length.
pub const PREFIX: usize = 5;
