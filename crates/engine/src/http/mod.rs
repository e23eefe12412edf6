//! The HTTP client of the engine: HTTP/1.1 (purpose-built on `httparse`) and HTTP/2 (the `h2`
//! crate, or the purpose-built `h2wire` with `--http2-client wire`) over plain TCP or rustls, per-VU or shared multiplexed connections, and the check
//! of each origin before the load.

mod classify;
pub(crate) mod connect;
pub mod deferred;
pub mod h1;
pub mod h2;
pub mod h2wire;
mod http2;
mod pool;
mod probe;
mod receive_stamp;
pub(crate) mod resolve;
pub(crate) mod stream;
mod transport;
mod wire;

pub use classify::classify_io;
pub use connect::TlsConnectors;
pub use deferred::{DeferredIo, DeferredStream};
pub use h1::{ChunkedSkipper, HttpConn, MAX_HEAD};
pub use h2::H2Conn;
pub use http2::{client_for, Http2Conn};
pub use probe::{probe, ProbeError, Probed};
pub use stream::{ReadStamp, Stream};
pub use transport::{Conn, HttpTransport};
