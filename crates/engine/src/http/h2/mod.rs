//! HTTP/2 through the `h2` crate: request heads, the connection and its streams, and its
//! errors as error kinds.

mod conn;
pub(crate) mod counted;
mod errors;
mod request;

pub use conn::{exchange_head, grpc_reply, window_stalled, H2Conn};
pub use errors::failure;
#[cfg(test)]
pub(crate) use request::tests::{parts, rendered};
pub use request::{build, content_length, fields, target, Head};
