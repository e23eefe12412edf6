//! The WebSocket upgrade: the session's request rendered for its VU, sent over a connection
//! of its own (TCP, TLS for `wss://`), answered `101 Switching Protocols` within the timeout.

use super::classify::upgrade_error;
use crate::flow::Worker;
use crate::prepare::PreparedWs;
use crate::render::RenderCx;
use crate::transport::{ByteStream, ConnectTiming, Failure, Transport};
use crate::vu::VuState;
use loadlab_metrics::ErrorKind;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::WebSocketStream;

pub type Socket = WebSocketStream<Box<dyn ByteStream>>;

/// tungstenite's read buffer. Its reads zero the buffer's spare capacity before each read
/// (tungstenite#547), and a message still held keeps its buffer, so the next read allocates
/// a fresh one of this size: at the default 128 KiB that memset was 39% of a session's CPU
/// (perf, `bench/ws-roundtrip.sh`). A larger frame still grows the buffer to fit it.
const READ_BUFFER: usize = 4096;

/// An upgraded session: its socket, how its connection was opened, the upgrade's bytes.
pub struct Upgraded {
    pub socket: Socket,
    pub opened: ConnectTiming,
    pub bytes_sent: u64,
}

/// A failed upgrade and the HTTP status the server answered (0: none).
pub struct UpgradeFailed {
    pub failure: Failure,
    pub status: u16,
}

impl From<Failure> for UpgradeFailed {
    fn from(failure: Failure) -> Self {
        Self { failure, status: 0 }
    }
}

impl<T: Transport> Worker<T> {
    /// Opens `ws`'s connection and upgrades it, giving up `ws.timeout` after `wanted`.
    pub(super) async fn ws_upgrade(
        &self,
        ws: &PreparedWs,
        vu: &mut VuState,
        wanted: Instant,
    ) -> Result<Upgraded, UpgradeFailed> {
        let request = self.upgrade_request(ws, vu)?;
        let bytes_sent = request
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().len() + v.len() + 4) as u64)
            .sum::<u64>()
            + request.uri().path().len() as u64
            + 16;
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER)
            .max_message_size(Some(ws.max_message))
            .max_frame_size(Some(ws.max_message));
        let attempt = async {
            let (stream, opened) = self.transport.open_stream(ws.origin).await?;
            match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
                Ok((socket, _)) => Ok(Upgraded {
                    socket,
                    opened,
                    bytes_sent,
                }),
                Err(e) => {
                    let (failure, status) = upgrade_error(e);
                    Err(UpgradeFailed { failure, status })
                }
            }
        };
        match tokio::time::timeout_at(wanted + ws.timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(Failure::new(
                ErrorKind::WsHandshake,
                format!(
                    "no WebSocket upgrade within {}",
                    loadlab_scenario::units::format_duration(ws.timeout)
                ),
            )
            .into()),
        }
    }

    /// The upgrade request for `vu`: target and header fields rendered, the handshake's own
    /// fields (key, version, `Upgrade`) added by tungstenite.
    fn upgrade_request(
        &self,
        ws: &PreparedWs,
        vu: &mut VuState,
    ) -> Result<tokio_tungstenite::tungstenite::handshake::client::Request, Failure> {
        let invalid = |m: String| Failure::new(ErrorKind::InvalidRequest, m);
        let mut parts = std::mem::take(&mut vu.parts);
        let rendered = ws.upgrade.render(
            &mut parts,
            &mut RenderCx {
                vu,
                data: &self.scenario.data.sets,
                rng: &mut self.rng.borrow_mut(),
            },
        );
        let result = (|| {
            rendered.map_err(|e| invalid(e.describe()))?;
            let origin = &self.scenario.origins[ws.origin as usize];
            let target = String::from_utf8_lossy(parts.target());
            let mut request = format!("ws://{}{}", origin.host_header, target)
                .into_client_request()
                .map_err(|e| invalid(format!("the upgrade request is not valid: {e}")))?;
            for (name, value) in parts.headers() {
                let name = HeaderName::from_bytes(name)
                    .map_err(|e| invalid(format!("header name: {e}")))?;
                let value = HeaderValue::from_bytes(value)
                    .map_err(|e| invalid(format!("header {name}: {e}")))?;
                request.headers_mut().insert(name, value);
            }
            Ok(request)
        })();
        vu.parts = parts;
        result
    }
}
