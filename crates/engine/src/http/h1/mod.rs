//! HTTP/1.1: a purpose-built client on `httparse` that writes encoded requests (a static one
//! encoded once) and discards bodies without allocation.

mod chunked;
mod conn;
mod encode;
mod head;

pub use chunked::ChunkedSkipper;
pub use conn::{HttpConn, MAX_HEAD};
pub use encode::encode;
