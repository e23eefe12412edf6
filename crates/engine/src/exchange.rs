//! One request on a held (or lent) connection: connect if needed, retry once when the server
//! never processed it (a stale keep-alive connection, a stream refused by a graceful GOAWAY),
//! enforce the timeout.

use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_metrics::ErrorKind;
use std::time::Duration;

/// Sends `req`, reusing `slot`'s connection when there is one and leaving a reusable one
/// there. Gives up at `req.deadline` (`timeout` after the request was wanted).
pub async fn exchange<T: Transport>(
    transport: &T,
    slot: &mut Option<T::Conn>,
    req: &RenderedRequest<'_>,
    keep_alive: bool,
    timeout: Duration,
    mut keep: Option<&mut ResponseData>,
) -> Result<Response, Failure> {
    let shared = transport.shared(req.origin);
    let attempt = async {
        for attempt in 0..2 {
            let mut conn = match slot.take() {
                Some(c) => c,
                // A retry on a shared connection takes another slot (the next connection).
                None if shared => transport.lease(req.origin).await.0,
                None => transport.connect(req.origin).await?,
            };
            if let Some(k) = keep.as_deref_mut() {
                k.clear();
            }
            match transport.send(&mut conn, req, keep.as_deref_mut()).await {
                Ok(response) => {
                    if keep_alive && !response.close {
                        *slot = Some(conn);
                    }
                    return Ok(response);
                }
                // The server closed an idle keep-alive connection before we wrote, or went
                // away before it took the stream: that is not the target failing, so retry
                // once on a fresh connection.
                Err(f) if f.stale && attempt == 0 => continue,
                Err(f) => return Err(f),
            }
        }
        Err(Failure::new(
            ErrorKind::Reset,
            "connection closed twice before a response",
        ))
    };
    match tokio::time::timeout_at(req.deadline, attempt).await {
        Ok(result) => result,
        Err(_) => Err(Failure::new(
            ErrorKind::Timeout,
            format!(
                "no complete response within {}",
                loadlab_scenario::units::format_duration(timeout)
            ),
        )),
    }
}
