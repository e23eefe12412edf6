//! What the engine keeps of a `grpc:` step for the run: the method's message types, whether
//! it streams, and the statuses that pass.

use loadlab_metrics::GrpcCode;
use prost_reflect::MessageDescriptor;

#[derive(Debug, Clone)]
pub struct PreparedGrpc {
    pub input: MessageDescriptor,
    pub output: MessageDescriptor,
    pub server_streaming: bool,
    /// Statuses the call must end with (`check: {grpc_status: ...}`, else `OK`).
    pub expected: Vec<GrpcCode>,
    /// Payload bytes of the message when it is the same every time (rendered once).
    pub fixed_payload: Option<u64>,
}
