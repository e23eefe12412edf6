//! Plain TCP connections whose reads wait for the worker's next wake-up instead of waking it
//! (HTTP/1.1, and h2c with the own HTTP/2 client, whose driver applies each read's frames at
//! its receive timestamp).
//!
//! At a few thousand arrivals a second the open model's worker sleeps between batches, and
//! every batch's responses woke it again, once or twice, about 50 µs after the batch: on a
//! virtual machine a fifth of its CPU went to `epoll_wait`, most of it to being switched back
//! in (`finish_task_switch`, `perf record` at 5,000/s). These connections stay out of tokio's
//! reactor, in an epoll set of their own that nobody sleeps on: the open-model scheduler asks
//! it, without blocking, which sockets became ready each time it wakes for arrivals, and sleeps
//! for it only when no arrival comes within [`READ_WINDOW`] of a parked read. A wait that only
//! responses can end (every `max_in_flight` slot held) waits on the set's own descriptor
//! instead ([`DeferredIo::any_ready`]), so they are read as they come.
//!
//! Latency stays exact: every read takes the kernel's receive timestamp (`SO_TIMESTAMPNS`, the
//! instant the bytes reached the socket), so a response read a millisecond later still ends
//! when its last bytes arrived. What a deferred read does delay is the connection's return to
//! the pool and the next step of a flow. See docs/open-model.md.

use super::receive_stamp::{receive_stamped, want_timestamps};
use slab::Slab;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Duration, Instant};

/// A parked read or write is looked at no later than this after it parked. The scheduler wakes
/// for arrivals more often than that from about 1,000/s up, so reads ride those wake-ups; the
/// window only holds connections (and a flow's next step) a little longer, never latency.
pub const READ_WINDOW: Duration = Duration::from_millis(2);

/// Events taken from the epoll set per `epoll_wait` call.
const EVENTS: usize = 64;

struct Parked {
    reader: Option<Waker>,
    writer: Option<Waker>,
    /// Bytes may be waiting: no read has come back short since the last EPOLLIN. A read that
    /// would only say "nothing yet" (most, at moderate rates) parks without a syscall.
    readable: bool,
    /// The peer closed or reset the connection. Sticky: the end of stream (or the error) may
    /// have come in the same event as the last bytes, and a short read does not consume it.
    hung_up: bool,
    /// The parked reader waits for nothing in particular (an idle HTTP/2 connection's driver,
    /// which always reads): it rides the next wake-up, with no deadline of its own.
    idle_reader: bool,
}

impl Default for Parked {
    fn default() -> Self {
        Self {
            reader: None,
            writer: None,
            readable: true,
            hung_up: false,
            idle_reader: false,
        }
    }
}

/// One worker's epoll set of deferred connections and the tasks parked on them. Used by one
/// thread; the lock (never contended) only keeps its streams `Send`, as HTTP/2's must be.
pub struct DeferredIo {
    epoll: OwnedFd,
    /// A socket that asks for receive timestamps for as long as the set lives. The kernel
    /// turns timestamping on for the first such socket from a work queue, a moment later:
    /// asking when the set is made means the connections' first responses are stamped too.
    _stamps_wanted: Option<std::net::UdpSocket>,
    state: Mutex<State>,
    /// Signalled when an operation parks while none was: a waiter learns its deadline.
    first_parked: Notify,
}

#[derive(Default)]
struct State {
    slots: Slab<Parked>,
    /// Readers and writers parked, with a deadline.
    parked: usize,
    /// Idle readers parked (no deadline: looked at when the worker wakes anyway).
    idle: usize,
    /// When the oldest parked operation must be looked at.
    due: Option<Instant>,
}

impl DeferredIo {
    pub fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 has no memory arguments; a valid descriptor is owned below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let stamps_wanted = std::net::UdpSocket::bind("127.0.0.1:0")
            .ok()
            .filter(|socket| want_timestamps(socket.as_raw_fd()).is_ok());
        Ok(Self {
            // SAFETY: `fd` was just created and is owned by nothing else.
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
            _stamps_wanted: stamps_wanted,
            state: Mutex::default(),
            first_parked: Notify::new(),
        })
    }

    /// Takes a connected socket out of tokio's reactor into this set.
    pub fn adopt(self: &Arc<Self>, tcp: tokio::net::TcpStream) -> io::Result<DeferredStream> {
        let tcp = tcp.into_std()?;
        let fd = tcp.as_raw_fd();
        want_timestamps(fd)?;
        let key = self.state().slots.insert(Parked::default());
        // Edge-triggered: an event is queued when bytes arrive (or room appears), whether or
        // not anyone has parked yet, so nothing between a failed read and its park is lost.
        let mut event = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
            u64: key as u64,
        };
        // SAFETY: both descriptors are open and `event` outlives the call.
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) }
            < 0
        {
            let e = io::Error::last_os_error();
            self.state().slots.remove(key);
            return Err(e);
        }
        Ok(DeferredStream {
            io: self.clone(),
            tcp,
            key,
            received: None,
            idle: false,
        })
    }

    /// Wakes every parked task whose socket became ready; returns how many it woke. Costs
    /// nothing when no task is parked.
    pub fn poll(&self) -> usize {
        let state = self.state();
        if state.parked == 0 && state.idle == 0 {
            return 0;
        }
        drop(state);
        self.take_events()
    }

    /// Takes every queued event (waking the parked tasks they concern); returns how many
    /// tasks it woke.
    fn take_events(&self) -> usize {
        let mut state = self.state();
        let mut ready = Vec::new();
        let mut idle_woken = 0;
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        loop {
            // SAFETY: `events` holds EVENTS entries; a zero timeout never blocks.
            let n = unsafe {
                libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    events.as_mut_ptr(),
                    EVENTS as libc::c_int,
                    0,
                )
            };
            if n <= 0 {
                break;
            }
            for event in &events[..n as usize] {
                let Some(parked) = state.slots.get_mut(event.u64 as usize) else {
                    continue;
                };
                let flags = event.events as libc::c_int;
                let failed = flags & (libc::EPOLLERR | libc::EPOLLHUP) != 0;
                if failed || flags & libc::EPOLLRDHUP != 0 {
                    parked.hung_up = true;
                }
                if failed || flags & (libc::EPOLLIN | libc::EPOLLRDHUP) != 0 {
                    parked.readable = true;
                    if let Some(reader) = parked.reader.take() {
                        idle_woken += usize::from(parked.idle_reader);
                        ready.push(reader);
                    }
                }
                if failed || flags & libc::EPOLLOUT != 0 {
                    ready.extend(parked.writer.take());
                }
            }
            if (n as usize) < EVENTS {
                break;
            }
        }
        state.idle -= idle_woken;
        state.parked -= ready.len() - idle_woken;
        state.due = (state.parked > 0).then(|| Instant::now() + READ_WINDOW);
        drop(state);
        let woken = ready.len();
        for waker in ready {
            waker.wake();
        }
        woken
    }

    /// Resolves when a socket of the set has an event (bytes, room, a hang-up), by waiting on
    /// the set's own descriptor in tokio's reactor for as long as the future lives. For waits
    /// that only responses can end (every slot or connection held): there, waiting for the
    /// next wake-up would hold each of them up to [`READ_WINDOW`].
    pub async fn any_ready(&self) -> io::Result<()> {
        // Events nobody waited for (a connection's first room to write, an idle connection
        // closed) would end the wait at once, again and again: take them first.
        if self.take_events() > 0 {
            return Ok(());
        }
        /// The set's descriptor, registered without being owned (the set closes it).
        struct Borrowed(std::os::fd::RawFd);
        impl AsRawFd for Borrowed {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.0
            }
        }
        // SAFETY: the set's descriptor stays open while `fd` lives (it borrows `self`), and
        // dropping `fd` deregisters it before the set could close it.
        let fd = unsafe {
            AsyncFd::register_with_interest(Borrowed(self.epoll.as_raw_fd()), Interest::READABLE)
        }?;
        let _ready = fd.readable().await?;
        Ok(())
    }

    /// When the oldest parked operation must be looked at (`None`: nothing is parked).
    pub fn due(&self) -> Option<Instant> {
        self.state().due
    }

    /// Resolves when an operation parks while none was (its deadline is then [`Self::due`]).
    pub async fn parked(&self) {
        let notified = self.first_parked.notified();
        if self.due().is_none() {
            notified.await;
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Parks a reader or a writer; an `idle` reader gets no deadline.
    fn park(&self, key: usize, write: bool, idle: bool, waker: &Waker) {
        let mut state = self.state();
        let slot = &mut state.slots[key];
        if write {
            if slot.writer.replace(waker.clone()).is_none() {
                state.parked += 1;
            }
        } else {
            // Whether a reader was parked already, and how it was counted.
            let before = slot.reader.replace(waker.clone()).map(|_| slot.idle_reader);
            slot.idle_reader = idle;
            match before {
                Some(true) => state.idle -= 1,
                Some(false) => state.parked -= 1,
                None => {}
            }
            if idle {
                state.idle += 1;
                return;
            }
            state.parked += 1;
        }
        if state.due.is_none() {
            state.due = Some(Instant::now() + READ_WINDOW);
            drop(state);
            self.first_parked.notify_waiters();
        }
    }

    fn readable(&self, key: usize) -> bool {
        let state = self.state();
        let slot = &state.slots[key];
        slot.readable || slot.hung_up
    }

    /// A read came back short: the socket is drained until its next EPOLLIN (edge-triggered,
    /// so bytes that arrived since are reported by the next poll).
    fn drained(&self, key: usize) {
        self.state().slots[key].readable = false;
    }

    fn release(&self, key: usize) {
        let mut state = self.state();
        let parked = state.slots.remove(key);
        let reader = parked.reader.is_some();
        state.idle -= usize::from(reader && parked.idle_reader);
        state.parked -=
            usize::from(reader && !parked.idle_reader) + usize::from(parked.writer.is_some());
        if state.parked == 0 {
            state.due = None;
        }
    }
}

/// A plain TCP connection in a [`DeferredIo`] set.
pub struct DeferredStream {
    io: Arc<DeferredIo>,
    tcp: std::net::TcpStream,
    key: usize,
    /// When the bytes of the last read reached the socket (the kernel's timestamp).
    received: Option<Instant>,
    /// No response is awaited on it: a parked read has no deadline (see [`Self::set_idle`]).
    idle: bool,
}

impl DeferredStream {
    pub fn received_at(&self) -> Option<Instant> {
        self.received
    }

    /// Says whether a response is awaited on this connection. An HTTP/2 connection's driver
    /// always has a read parked, for the server's frames; while no stream is open that read
    /// waits for nothing in particular and is looked at when the worker next wakes, instead
    /// of making it wake within [`READ_WINDOW`] (every 2 ms, at 10 arrivals a second).
    pub fn set_idle(&mut self, idle: bool) {
        self.idle = idle;
    }

    /// One non-blocking read into `dst`, keeping the receive timestamp.
    fn receive(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let (n, stamp) = receive_stamped(self.tcp.as_raw_fd(), dst)?;
        if n > 0 {
            self.received = Some(stamp.unwrap_or_else(Instant::now));
        }
        Ok(n)
    }
}

impl Drop for DeferredStream {
    fn drop(&mut self) {
        // Closing the socket takes it out of the epoll set; the slot is freed for reuse.
        self.io.release(self.key);
    }
}

impl AsyncRead for DeferredStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.io.readable(this.key) {
            this.io.park(this.key, false, this.idle, cx.waker());
            return Poll::Pending;
        }
        loop {
            let room = buf.remaining();
            match this.receive(buf.initialize_unfilled()) {
                Ok(n) => {
                    if n > 0 && n < room {
                        this.io.drained(this.key);
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    this.io.drained(this.key);
                    this.io.park(this.key, false, this.idle, cx.waker());
                    return Poll::Pending;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for DeferredStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            // SAFETY: `data` is valid for its length during the call.
            let n = unsafe {
                libc::send(
                    this.tcp.as_raw_fd(),
                    data.as_ptr().cast(),
                    data.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
            if n >= 0 {
                return Poll::Ready(Ok(n as usize));
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    this.io.park(this.key, true, false, cx.waker());
                    return Poll::Pending;
                }
                _ => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.tcp.shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
#[path = "deferred_tests.rs"]
mod tests;
