//! The HTTP client of the engine: HTTP/1.1 (purpose-built on `httparse`) and HTTP/2 (the `h2`
//! crate) over plain TCP or rustls, per-VU or shared multiplexed connections, and the check
//! of each origin before the load.

mod classify;
pub(crate) mod connect;
pub mod deferred;
pub mod h1;
pub mod h2;
pub mod h2wire;
mod pool;
mod probe;
mod receive_stamp;
pub(crate) mod resolve;
pub(crate) mod stream;
mod transport;

pub use classify::classify_io;
pub use connect::TlsConnectors;
pub use deferred::{DeferredIo, DeferredStream};
pub use h1::{ChunkedSkipper, HttpConn, MAX_HEAD};
pub use h2::H2Conn;
pub use probe::{probe, ProbeError, Probed};
pub use stream::{ReadStamp, Stream};
pub use transport::{Conn, HttpTransport};
