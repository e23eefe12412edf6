//! One request on a held (or lent) connection: connect if needed, retry once when the server
//! never processed it (a stale keep-alive connection, a stream refused by a graceful GOAWAY),
//! enforce the timeout.

use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_metrics::ErrorKind;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// A VU's request timeout: one tokio timer moved from deadline to deadline. A timer made
/// and dropped per request costs two locked trips through tokio's timer wheel (register,
/// clear: ~2% of a closed-model HTTP/1.1 run's CPU); moving a registered timer to a later
/// deadline is one atomic store, and tokio re-files it only when the old deadline comes due.
#[derive(Default)]
pub struct RequestTimer(Option<Pin<Box<Sleep>>>);

impl std::fmt::Debug for RequestTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestTimer")
    }
}

impl RequestTimer {
    /// The timer, set to fire at `deadline` (made at first use: a VU that never sends
    /// a request has none).
    fn set(&mut self, deadline: Instant) -> Pin<&mut Sleep> {
        match &mut self.0 {
            Some(sleep) => {
                sleep.as_mut().reset(deadline);
                sleep.as_mut()
            }
            empty => empty
                .insert(Box::pin(tokio::time::sleep_until(deadline)))
                .as_mut(),
        }
    }
}

/// Sends `req`, reusing `slot`'s connection when there is one and leaving a reusable one
/// there. Gives up at `req.deadline` (`timeout` after the request was wanted), timed by the
/// VU's `timer`.
pub async fn exchange<T: Transport>(
    transport: &T,
    slot: &mut Option<T::Conn>,
    req: &RenderedRequest<'_>,
    (timeout, timer): (Duration, &mut RequestTimer),
    keep_alive: bool,
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
    // As `tokio::time::timeout_at`: the exchange is polled first, so one that is ready
    // when the deadline is too still counts.
    let mut attempt = pin!(attempt);
    let mut timer = timer.set(req.deadline);
    let finished = poll_fn(|cx| match attempt.as_mut().poll(cx) {
        Poll::Ready(result) => Poll::Ready(Some(result)),
        Poll::Pending => timer.as_mut().poll(cx).map(|()| None),
    });
    match finished.await {
        Some(result) => result,
        None => Err(Failure::new(
            ErrorKind::Timeout,
            format!(
                "no complete response within {}",
                loadlab_scenario::units::format_duration(timeout)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RequestParts;
    use crate::server_header::ServerHeader;
    use std::cell::Cell;

    /// Answers the n-th request after `service[n]`.
    struct Answers {
        service: Vec<Duration>,
        calls: Cell<usize>,
    }

    impl Transport for Answers {
        type Conn = ();

        async fn connect(&self, _origin: u16) -> Result<(), Failure> {
            Ok(())
        }

        async fn send(
            &self,
            _conn: &mut (),
            _req: &RenderedRequest<'_>,
            _keep: Option<&mut ResponseData>,
        ) -> Result<Response, Failure> {
            let n = self.calls.replace(self.calls.get() + 1);
            tokio::time::sleep(self.service[n]).await;
            Ok(Response::default())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn one_timer_times_out_each_request_at_its_own_deadline() {
        let ms = Duration::from_millis;
        // (service, timeout, answered?, when it ended): later deadlines, an earlier one (a
        // step with a shorter timeout), an answer on its deadline (answered, as
        // `timeout_at` would have it), and a timer that fired being set again.
        let cases = [
            (ms(50), ms(100), true, ms(50)),
            (ms(500), ms(100), false, ms(100)),
            (ms(40), ms(30), false, ms(30)),
            (ms(10), ms(1000), true, ms(10)),
            (ms(70), ms(70), true, ms(70)),
            (ms(5), ms(20), true, ms(5)),
        ];
        let transport = Answers {
            service: cases.iter().map(|c| c.0).collect(),
            calls: Cell::new(0),
        };
        let parts = RequestParts::default();
        let mut timer = RequestTimer::default();
        let mut slot = None;
        for (i, (_, timeout, answered, took)) in cases.into_iter().enumerate() {
            let start = Instant::now();
            let req = RenderedRequest {
                step: 0,
                origin: 0,
                method: loadlab_scenario::Method::Get,
                parts: &parts,
                fixed: true,
                close: false,
                max_body: 1,
                server: &ServerHeader::Off,
                deadline: start + timeout,
                grpc: false,
            };
            let result = exchange(
                &transport,
                &mut slot,
                &req,
                (timeout, &mut timer),
                true,
                None,
            )
            .await;
            assert_eq!(result.is_ok(), answered, "request {i}: {result:?}");
            if let Err(f) = result {
                assert_eq!(f.kind, ErrorKind::Timeout, "request {i}");
            }
            assert_eq!(start.elapsed(), took, "request {i}");
        }
    }
}
