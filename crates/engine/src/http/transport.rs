//! The real transport: HTTP/1.1 over TCP or TLS, connections spread over source addresses.

use super::conn::HttpConn;
use super::connect::{open, tls_connector};
use crate::origin::Origin;
use crate::prepare::PreparedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use std::cell::Cell;
use std::net::IpAddr;
use tokio_rustls::TlsConnector;

pub struct HttpTransport {
    origins: Vec<Origin>,
    sources: Vec<IpAddr>,
    next_source: Cell<usize>,
    tls: Option<TlsConnector>,
}

impl HttpTransport {
    pub fn new(origins: Vec<Origin>, sources: Vec<IpAddr>, insecure: bool, offset: usize) -> Self {
        let tls = origins
            .iter()
            .any(|o| o.tls)
            .then(|| tls_connector(insecure));
        Self {
            origins,
            next_source: Cell::new(offset),
            sources,
            tls,
        }
    }
}

impl Transport for HttpTransport {
    type Conn = HttpConn;

    async fn connect(&self, origin: u16) -> Result<HttpConn, Failure> {
        let source = if self.sources.is_empty() {
            None
        } else {
            let i = self.next_source.get();
            self.next_source.set(i.wrapping_add(1));
            Some(self.sources[i % self.sources.len()])
        };
        let stream = open(&self.origins[origin as usize], source, self.tls.as_ref()).await?;
        Ok(HttpConn::new(stream))
    }

    async fn send(
        &self,
        conn: &mut HttpConn,
        req: &PreparedRequest,
        bytes: &[u8],
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        conn.exchange(bytes, req.head, req.max_body, &req.server_header, keep)
            .await
    }
}
