//! How a request gets a connection: a stream slot on the shared connections, an idle pooled
//! connection, or a new one within the pool's opening bound. Each wait is bounded by the
//! request's deadline and counted, and the connection is ours from when the wait ended (the
//! request's service time starts there).

use crate::flow::Worker;
use crate::idle_pool::{Checkout, Opening};
use crate::transport::{Failure, Transport};
use loadlab_metrics::ErrorKind;
use std::future::Future;
use tokio::time::{Duration, Instant};

impl<T: Transport> Worker<T> {
    /// Waits (at most until `deadline`) for a free stream slot on the shared connections to
    /// `origin`; the request's service time starts when it has one (returned).
    pub(crate) async fn stream_for(
        &self,
        slot: &mut Option<T::Conn>,
        origin: u16,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Option<Instant>, Failure> {
        let lease = async { Ok(self.transport.lease(origin).await) };
        let what = "stream slot came free on the shared connections";
        let (conn, waited) = within(deadline, timeout, what, lease).await?;
        if waited {
            self.recorder.borrow_mut().delayed_by_stream_limit();
        }
        *slot = Some(conn);
        Ok(Some(Instant::now()))
    }

    /// Waits (at most until `deadline`) for an idle connection to `origin`, or opens one once
    /// fewer than [`crate::idle_pool::opening_bound`] are being opened there. `Some(when)`: it
    /// had to wait, and the connection was ours then (service time starts there).
    pub(crate) async fn connection_for(
        &self,
        slot: &mut Option<T::Conn>,
        origin: u16,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Option<Instant>, Failure> {
        let checkout = async {
            let (checkout, waited) = self.pool.checkout(origin as usize).await;
            let waited = waited.then(Instant::now);
            let conn = match checkout {
                Checkout::Idle(conn) => conn,
                Checkout::Open(opening) => self.open_counted(origin, opening).await?,
            };
            Ok((conn, waited))
        };
        let what = "connection came free or could be opened";
        let (conn, waited) = within(deadline, timeout, what, checkout).await?;
        if waited.is_some() {
            self.recorder.borrow_mut().delayed_by_connect_limit();
        }
        *slot = Some(conn);
        Ok(waited)
    }

    /// Opens a connection in the place `opening` holds, gives the place up if the connect
    /// outlasts [`Opening::counted_for`], and tells the pool how long the connect took.
    async fn open_counted(
        &self,
        origin: u16,
        mut opening: Opening<'_, T::Conn>,
    ) -> Result<T::Conn, Failure> {
        let started = Instant::now();
        let connect = self.transport.connect(origin);
        tokio::pin!(connect);
        let conn = tokio::select! {
            biased;
            conn = &mut connect => conn?,
            () = tokio::time::sleep(opening.counted_for()) => {
                opening.leave();
                connect.await?
            }
        };
        let took = self
            .transport
            .connect_time(&conn)
            .unwrap_or_else(|| started.elapsed());
        opening.opened(took);
        Ok(conn)
    }

    pub(crate) fn return_pooled(&self, origin: usize, conn: T::Conn) {
        let recent = self.recorder.borrow().recent_peak_in_flight() as usize;
        self.pool.give_back(origin, conn, recent);
    }
}

/// `wait` if it ends before `deadline`; otherwise a timeout naming `what` the request found
/// no free one of.
async fn within<X>(
    deadline: Instant,
    timeout: Duration,
    what: &str,
    wait: impl Future<Output = Result<X, Failure>>,
) -> Result<X, Failure> {
    tokio::time::timeout_at(deadline, wait).await.map_err(|_| {
        Failure::new(
            ErrorKind::Timeout,
            format!(
                "no {what} within {}",
                loadlab_scenario::units::format_duration(timeout)
            ),
        )
    })?
}
