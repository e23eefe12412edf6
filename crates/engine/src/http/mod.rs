//! A purpose-built HTTP/1.1 client for load generation (plain TCP or rustls), on `httparse`.

mod chunked;
mod classify;
mod conn;
mod connect;
mod stream;
mod transport;

pub use classify::classify_io;
pub use conn::HttpConn;
pub use transport::HttpTransport;
