//! An HTTP/2 connection of the client the run chose (`--http2-client`): the `h2` crate, or
//! the purpose-built one (issue 42). The transport and the shared-connection pool hold this,
//! so either client sits behind the same calls.

use super::h2::H2Conn;
use super::wire::WireConn;
use crate::transport::{ConnectTiming, Failure};
use loadlab_metrics::Protocol;
use loadlab_scenario::Http2Client;
use tokio::io::{AsyncRead, AsyncWrite};

/// A handle on an HTTP/2 connection; clones share it (one per concurrent stream).
#[derive(Clone)]
pub enum Http2Conn {
    Crate(H2Conn),
    Wire(WireConn),
}

impl Http2Conn {
    /// Starts HTTP/2 on `io` with `client`; `settle`: the server's SETTINGS are known before
    /// it returns (shared connections, which open many streams at once).
    pub async fn handshake<S>(
        io: S,
        protocol: Protocol,
        settle: bool,
        client: Http2Client,
    ) -> Result<Http2Conn, Failure>
    where
        S: AsyncRead + AsyncWrite + crate::http::ReadStamp + Unpin + Send + 'static,
    {
        Ok(match client {
            Http2Client::H2 => Http2Conn::Crate(H2Conn::handshake(io, protocol, settle).await?),
            Http2Client::Wire => Http2Conn::Wire(WireConn::handshake(io, protocol, settle).await?),
        })
    }

    /// The connection takes no more streams.
    pub fn is_closed(&self) -> bool {
        match self {
            Http2Conn::Crate(c) => c.is_closed(),
            Http2Conn::Wire(c) => c.is_closed(),
        }
    }

    /// Streams the server allows at once (its SETTINGS_MAX_CONCURRENT_STREAMS, once known).
    pub fn max_streams(&self) -> usize {
        match self {
            Http2Conn::Crate(c) => c.max_streams(),
            Http2Conn::Wire(c) => c.max_streams(),
        }
    }

    /// How it was opened, until an exchange (or the pool) takes it.
    pub fn opened(&mut self) -> &mut Option<ConnectTiming> {
        match self {
            Http2Conn::Crate(c) => &mut c.opened,
            Http2Conn::Wire(c) => &mut c.opened,
        }
    }
}

/// The client a transport uses: the one chosen, except that a scenario with a streamed
/// response (`stream:`) over HTTP/2 keeps the `h2` crate for all its connections — the
/// purpose-built client reads no streams, and one client per transport keeps the pool and
/// the heads simple.
pub fn client_for(chosen: Http2Client, streams: bool) -> Http2Client {
    if streams {
        Http2Client::H2
    } else {
        chosen
    }
}
