//! One request on a held connection: connect if needed, retry once on a stale keep-alive
//! connection, enforce the timeout.

use crate::prepare::PreparedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_metrics::ErrorKind;

/// Sends `req`, reusing `slot`'s connection when there is one and leaving a reusable one there.
pub async fn exchange<T: Transport>(
    transport: &T,
    slot: &mut Option<T::Conn>,
    req: &PreparedRequest,
    bytes: &[u8],
    keep_alive: bool,
    mut keep: Option<&mut ResponseData>,
) -> Result<Response, Failure> {
    let attempt = async {
        for attempt in 0..2 {
            let mut conn = match slot.take() {
                Some(c) => c,
                None => transport.connect(req.origin).await?,
            };
            if let Some(k) = keep.as_deref_mut() {
                k.clear();
            }
            match transport
                .send(&mut conn, req, bytes, keep.as_deref_mut())
                .await
            {
                Ok(response) => {
                    if keep_alive && !response.close {
                        *slot = Some(conn);
                    }
                    return Ok(response);
                }
                // The server closed an idle keep-alive connection before we wrote: that is
                // not the target failing, so retry once on a fresh connection.
                Err(f) if f.stale && attempt == 0 => continue,
                Err(f) => return Err(f),
            }
        }
        Err(Failure::new(
            ErrorKind::Reset,
            "connection closed twice before a response",
        ))
    };
    match tokio::time::timeout(req.timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(Failure::new(
            ErrorKind::Timeout,
            format!(
                "no complete response within {}",
                loadlab_scenario::units::format_duration(req.timeout)
            ),
        )),
    }
}
