//! The real transport: HTTP/1.1 or HTTP/2 (as the origin's version and ALPN decide) over TCP
//! or TLS, connections spread over source addresses, held by VUs or shared and multiplexed.

use super::connect::{open, TlsConnectors};
use super::deferred::DeferredIo;
use super::h1::{self, HttpConn};
use super::h2 as http2;
use super::http2::Http2Conn;
use super::pool::{Established, Lease, Pool, Ready};
use super::resolve::Resolver;
use super::wire::{self, WireHead};
use crate::origin::Origin;
use crate::request::RenderedRequest;
use crate::transport::{ConnectTiming, Failure, Response, ResponseData, Transport};
use bytes::Bytes;
use loadlab_metrics::{ErrorKind, Protocol};
use loadlab_scenario::Http2Client;
use std::cell::{Cell, OnceCell, RefCell};
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;

/// A connection a VU holds, or a stream slot lent from a shared one.
pub enum Conn {
    Http1(HttpConn),
    Http2(Http2Conn),
    Lent(Lease),
}

pub struct HttpTransport {
    origins: Vec<Origin>,
    authorities: Vec<Option<http::uri::Authority>>,
    sources: Vec<IpAddr>,
    next_source: Cell<usize>,
    tls: Option<TlsConnectors>,
    resolver: Resolver,
    /// Per step: the HTTP/1.1 bytes of a request without templates, encoded at first use
    /// (sized once, so a request borrows its bytes across the exchange without a refcount).
    http1_wire: Vec<OnceCell<Box<[u8]>>>,
    /// Per step: the HTTP/2 head of a request without templates.
    http2_heads: RefCell<Vec<Option<http2::Head>>>,
    /// The same, encoded for the purpose-built client.
    wire_heads: RefCell<Vec<Option<WireHead>>>,
    /// The HTTP/2 client its connections use.
    http2_client: Http2Client,
    /// Per origin: its shared connections (`http.connections`), if any.
    pools: Vec<Option<Rc<Pool>>>,
    /// Connections opened per origin and protocol since the last `take_opened`.
    opened: RefCell<Vec<[u64; Protocol::COUNT]>>,
    /// Where plain HTTP/1.1 connections are read at the worker's wake-ups, if they are.
    deferred: Option<Arc<DeferredIo>>,
}

impl HttpTransport {
    /// `origins[i].shared` holds this worker's share of the shared connections; `steps`: how
    /// many request steps the scenario has (their fixed encodings are kept). HTTP/2 speaks
    /// through the default client (`Http2Client::default()`); see
    /// [`HttpTransport::with_http2_client`].
    pub fn new(
        origins: Vec<Origin>,
        steps: usize,
        sources: Vec<IpAddr>,
        insecure: bool,
        offset: usize,
    ) -> Self {
        let tls = origins
            .iter()
            .any(|o| o.tls)
            .then(|| TlsConnectors::new(insecure));
        Self {
            authorities: origins
                .iter()
                .map(|o| http::uri::Authority::try_from(o.host_header.as_str()).ok())
                .collect(),
            pools: origins
                .iter()
                .map(|o| {
                    o.shared
                        .map(|s| Pool::new(s.connections as usize, s.max_streams as usize))
                })
                .collect(),
            opened: RefCell::new(vec![[0; Protocol::COUNT]; origins.len()]),
            origins,
            next_source: Cell::new(offset),
            sources,
            tls,
            resolver: Resolver::default(),
            http1_wire: (0..steps).map(|_| OnceCell::new()).collect(),
            http2_heads: RefCell::default(),
            wire_heads: RefCell::default(),
            http2_client: Http2Client::default(),
            deferred: None,
        }
    }

    /// HTTP/2 connections opened from now on use `client` (`--http2-client`; the worker
    /// chooses `h2` for a scenario that streams responses: `http2::client_for`).
    pub fn with_http2_client(mut self, client: Http2Client) -> Self {
        self.http2_client = client;
        self
    }

    /// Plain HTTP/1.1 connections opened from now on are read at the worker's wake-ups.
    pub fn with_deferred_reads(mut self, io: Arc<DeferredIo>) -> Self {
        self.deferred = Some(io);
        self
    }

    /// The source address the next connection binds to (round robin), if any are set.
    fn next_source(&self) -> Option<IpAddr> {
        if self.sources.is_empty() {
            return None;
        }
        let n = self.next_source.get();
        self.next_source.set(n.wrapping_add(1));
        Some(self.sources[n % self.sources.len()])
    }

    /// Opens a connection to `origin` and says what it speaks; `settle`: an HTTP/2 one waits
    /// for the server's SETTINGS first (shared connections, which open many streams at once).
    async fn open(&self, index: u16, settle: bool) -> Result<Established, Failure> {
        let i = index as usize;
        let origin = &self.origins[i];
        let addr = self.resolver.addr(i, origin).await?;
        let source = self.next_source();
        let deferred = self
            .deferred
            .as_ref()
            .filter(|_| origin.reads_at_wakeups(self.http2_client));
        let (stream, protocol, timing) =
            open(origin, addr, source, self.tls.as_ref(), deferred).await?;
        let conn = if protocol.is_http2() {
            let mut conn =
                Http2Conn::handshake(stream, protocol, settle, self.http2_client).await?;
            *conn.opened() = Some(timing);
            Established::Http2(conn)
        } else {
            let mut conn = HttpConn::new(stream);
            conn.opened = Some(timing);
            Established::Http1(conn)
        };
        self.opened.borrow_mut()[i][protocol.index()] += 1;
        Ok(conn)
    }

    async fn send_http1(
        &self,
        conn: &mut HttpConn,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        let authority = self.origins[req.origin as usize].host_header.as_bytes();
        let cached = self.http1_wire.get(req.step as usize).filter(|_| req.fixed);
        if let Some(cell) = cached {
            let wire = cell.get_or_init(|| {
                let mut out = Vec::new();
                h1::encode(req, authority, &mut out);
                out.into()
            });
            return conn
                .exchange(wire, req.is_head(), req.max_body, req.server, keep)
                .await;
        }
        let mut wire = std::mem::take(&mut conn.wbuf);
        wire.clear();
        h1::encode(req, authority, &mut wire);
        let result = conn
            .exchange(&wire, req.is_head(), req.max_body, req.server, keep)
            .await;
        conn.wbuf = wire;
        result
    }

    async fn send_http2(
        &self,
        conn: &mut Http2Conn,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        match conn {
            Http2Conn::Crate(conn) => {
                let (head, body) = self.http2_head(req)?;
                conn.exchange(req, head, body, keep).await
            }
            Http2Conn::Wire(conn) => {
                let head = self.wire_head(req)?;
                conn.exchange(req, &head, keep).await
            }
        }
    }

    /// The origin's `:authority` for HTTP/2 heads.
    fn http2_authority(&self, req: &RenderedRequest<'_>) -> Result<&http::uri::Authority, Failure> {
        self.authorities[req.origin as usize]
            .as_ref()
            .ok_or_else(|| {
                Failure::new(
                    ErrorKind::InvalidRequest,
                    format!(
                        "`{}` cannot be an HTTP/2 :authority",
                        self.origins[req.origin as usize].host_header
                    ),
                )
            })
    }

    /// The request's head for the purpose-built client: built once for a request without
    /// templates, by the `h2` heads' rules.
    fn wire_head(&self, req: &RenderedRequest<'_>) -> Result<WireHead, Failure> {
        let tls = self.origins[req.origin as usize].tls;
        let authority = self.http2_authority(req)?;
        if !req.fixed {
            return wire::build(req, tls, authority);
        }
        cached(
            &self.wire_heads,
            req.step as usize,
            || wire::build(req, tls, authority),
            WireHead::clone,
        )
    }

    /// The request's HTTP/2 head and body: built once for a request without templates.
    fn http2_head(
        &self,
        req: &RenderedRequest<'_>,
    ) -> Result<(http::Request<()>, Option<Bytes>), Failure> {
        let tls = self.origins[req.origin as usize].tls;
        let authority = self.http2_authority(req)?;
        if !req.fixed {
            let head = http2::build(req, tls, authority)?;
            return Ok((head.request(), head.body()));
        }
        cached(
            &self.http2_heads,
            req.step as usize,
            || http2::build(req, tls, authority),
            |head| (head.request(), head.body()),
        )
    }

    /// A request on a lent stream slot: opens the slot's connection if it has none (and
    /// reports its opening: the connection is the slot's, and every later stream's).
    async fn send_lent(
        &self,
        lease: &mut Lease,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        let mut opened = None;
        let result = self.send_on_slot(lease, req, keep, &mut opened).await;
        result.map(|mut r| {
            r.timing.opened = r.timing.opened.or(opened);
            r
        })
    }

    async fn send_on_slot(
        &self,
        lease: &mut Lease,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
        opened: &mut Option<ConnectTiming>,
    ) -> Result<Response, Failure> {
        loop {
            match lease.ready().await {
                Ready::Connect => match self.open(req.origin, true).await {
                    Ok(mut conn) => {
                        *opened = conn.take_opened();
                        lease.connected(conn);
                    }
                    Err(f) => {
                        lease.connect_failed();
                        return Err(f);
                    }
                },
                Ready::Http2(mut conn) => {
                    let result = self.send_http2(&mut conn, req, keep).await;
                    let broken = match &result {
                        Err(f) => {
                            f.stale
                                || matches!(
                                    f.kind,
                                    ErrorKind::GoAway | ErrorKind::Reset | ErrorKind::Io
                                )
                        }
                        Ok(_) => false,
                    };
                    if broken || conn.is_closed() {
                        lease.broke();
                    }
                    return result;
                }
                Ready::Http1(mut conn) => {
                    let result = self.send_http1(&mut conn, req, keep).await;
                    let reusable = matches!(&result, Ok(r) if !r.close);
                    lease.put_back(conn, reusable);
                    return result;
                }
            }
        }
    }
}

impl Transport for HttpTransport {
    type Conn = Conn;

    async fn connect(&self, origin: u16) -> Result<Conn, Failure> {
        Ok(match self.open(origin, false).await? {
            Established::Http1(c) => Conn::Http1(c),
            Established::Http2(c) => Conn::Http2(c),
        })
    }

    fn connect_time(&self, conn: &Conn) -> Option<std::time::Duration> {
        let opened = match conn {
            Conn::Http1(c) => c.opened,
            Conn::Http2(Http2Conn::Crate(c)) => c.opened,
            Conn::Http2(Http2Conn::Wire(c)) => c.opened,
            Conn::Lent(_) => None,
        };
        opened.map(|t| std::time::Duration::from_micros(t.connect_us))
    }

    async fn send(
        &self,
        conn: &mut Conn,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        match conn {
            Conn::Http1(c) => self.send_http1(c, req, keep).await,
            Conn::Http2(c) => self.send_http2(c, req, keep).await,
            Conn::Lent(lease) => self.send_lent(lease, req, keep).await,
        }
    }

    fn shared(&self, origin: u16) -> bool {
        self.pools[origin as usize].is_some()
    }

    async fn open_stream(
        &self,
        index: u16,
    ) -> Result<(Box<dyn crate::transport::ByteStream>, ConnectTiming), Failure> {
        let i = index as usize;
        let origin = &self.origins[i];
        let addr = self.resolver.addr(i, origin).await?;
        let source = self.next_source();
        // Never deferred: the session reads its own connection as messages come.
        let (stream, protocol, timing) =
            open(origin, addr, source, self.tls.as_ref(), None).await?;
        self.opened.borrow_mut()[i][protocol.index()] += 1;
        Ok((Box::new(stream), timing))
    }

    async fn lease(&self, origin: u16) -> (Conn, bool) {
        let pool = self.pools[origin as usize]
            .as_ref()
            .expect("only shared origins are leased");
        let (lease, waited) = pool.lease().await;
        (Conn::Lent(lease), waited)
    }

    fn take_opened(&self) -> Vec<(u16, Protocol, u64)> {
        let mut opened = self.opened.borrow_mut();
        let mut out = Vec::new();
        for (origin, counts) in opened.iter_mut().enumerate() {
            for p in Protocol::ALL {
                let n = std::mem::take(&mut counts[p.index()]);
                if n > 0 {
                    out.push((origin as u16, p, n));
                }
            }
        }
        out
    }
}

/// A step's head from `cache`, built at its first use; `view` makes what a request sends.
fn cached<T, R>(
    cache: &RefCell<Vec<Option<T>>>,
    step: usize,
    build: impl FnOnce() -> Result<T, Failure>,
    view: impl FnOnce(&T) -> R,
) -> Result<R, Failure> {
    let mut cache = cache.borrow_mut();
    if cache.len() <= step {
        cache.resize_with(step + 1, || None);
    }
    let head = match &mut cache[step] {
        Some(head) => head,
        empty => empty.insert(build()?),
    };
    Ok(view(head))
}
