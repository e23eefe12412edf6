//! The messages of `permits.v1` (examples/proto/permits.proto), declared by hand with prost's
//! derive: same field numbers and types as the file, so no build step compiles it.

use bytes::Bytes;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PermitStatus {
    Unspecified = 0,
    Received = 1,
    InReview = 2,
    Approved = 3,
    Rejected = 4,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CreateRequest {
    #[prost(string, tag = "1")]
    pub applicant: String,
    #[prost(string, tag = "2")]
    pub kind: String,
    #[prost(string, repeated, tag = "3")]
    pub documents: Vec<String>,
    #[prost(uint32, tag = "4")]
    pub pad_bytes: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetRequest {
    #[prost(string, tag = "1")]
    pub id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Permit {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(string, tag = "2")]
    pub applicant: String,
    #[prost(string, tag = "3")]
    pub kind: String,
    #[prost(enumeration = "PermitStatus", tag = "4")]
    pub status: i32,
    #[prost(int64, tag = "5")]
    pub created_unix_ms: i64,
    #[prost(bytes = "bytes", tag = "6")]
    pub padding: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct WatchRequest {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(uint32, tag = "2")]
    pub events: u32,
    #[prost(uint32, tag = "3")]
    pub every_ms: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PermitEvent {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(enumeration = "PermitStatus", tag = "2")]
    pub status: i32,
    #[prost(uint32, tag = "3")]
    pub seq: u32,
}
