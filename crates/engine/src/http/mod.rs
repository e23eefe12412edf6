//! A purpose-built HTTP/1.1 client for load generation (plain TCP or rustls), on `httparse`.

mod chunked;
mod classify;
mod conn;
mod connect;
mod head;
mod stream;
mod transport;

pub use chunked::ChunkedSkipper;
pub use classify::classify_io;
pub use conn::{HttpConn, MAX_HEAD};
pub(crate) use head::parse_head;
pub use stream::Stream;
pub use transport::HttpTransport;
