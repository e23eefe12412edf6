//! Plain TCP connections whose reads wait for the worker's next wake-up instead of waking it.
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

use std::io;
use std::mem::MaybeUninit;
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
}

impl Default for Parked {
    fn default() -> Self {
        Self {
            reader: None,
            writer: None,
            readable: true,
            hung_up: false,
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
    slots: Vec<Parked>,
    free: Vec<usize>,
    /// Readers and writers parked.
    parked: usize,
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
        let key = {
            let mut state = self.state();
            match state.free.pop() {
                Some(k) => k,
                None => {
                    state.slots.push(Parked::default());
                    state.slots.len() - 1
                }
            }
        };
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
            self.state().free.push(key);
            return Err(e);
        }
        Ok(DeferredStream {
            io: self.clone(),
            tcp,
            key,
            received: None,
        })
    }

    /// Wakes every parked task whose socket became ready; returns how many it woke. Costs
    /// nothing when no task is parked.
    pub fn poll(&self) -> usize {
        if self.state().parked == 0 {
            return 0;
        }
        self.take_events()
    }

    /// Takes every queued event (waking the parked tasks they concern); returns how many
    /// tasks it woke.
    fn take_events(&self) -> usize {
        let mut state = self.state();
        let mut ready = Vec::new();
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
                    ready.extend(parked.reader.take());
                }
                if failed || flags & libc::EPOLLOUT != 0 {
                    ready.extend(parked.writer.take());
                }
            }
            if (n as usize) < EVENTS {
                break;
            }
        }
        state.parked -= ready.len();
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

    fn park(&self, key: usize, write: bool, waker: &Waker) {
        let mut state = self.state();
        let parked = &mut state.slots[key];
        let place = if write {
            &mut parked.writer
        } else {
            &mut parked.reader
        };
        if place.replace(waker.clone()).is_none() {
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
        let parked = std::mem::take(&mut state.slots[key]);
        state.parked -= usize::from(parked.reader.is_some()) + usize::from(parked.writer.is_some());
        if state.parked == 0 {
            state.due = None;
        }
        state.free.push(key);
    }
}

/// Asks the kernel to stamp what `fd` receives (`SO_TIMESTAMPNS`).
fn want_timestamps(fd: std::os::fd::RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call and its size is passed.
    let done = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A plain TCP connection in a [`DeferredIo`] set.
pub struct DeferredStream {
    io: Arc<DeferredIo>,
    tcp: std::net::TcpStream,
    key: usize,
    /// When the bytes of the last read reached the socket (the kernel's timestamp).
    received: Option<Instant>,
}

impl DeferredStream {
    pub fn received_at(&self) -> Option<Instant> {
        self.received
    }

    /// One non-blocking `recvmsg` into `dst`, keeping the receive timestamp.
    fn receive(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let mut iov = libc::iovec {
            iov_base: dst.as_mut_ptr().cast(),
            iov_len: dst.len(),
        };
        // Room for one SCM_TIMESTAMPNS (a cmsghdr and a timespec), 8-aligned.
        let mut control = [MaybeUninit::<u64>::uninit(); 8];
        // SAFETY: msghdr is plain data; zeroed is a valid empty header.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `msg` points at `iov` (over `dst`) and `control`, all alive for the call.
        let n = unsafe { libc::recvmsg(self.tcp.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n > 0 {
            self.received = Some(received_stamp(&msg).unwrap_or_else(Instant::now));
        }
        Ok(n as usize)
    }
}

/// The SCM_TIMESTAMPNS in `msg`, as an instant of the monotonic clock.
fn received_stamp(msg: &libc::msghdr) -> Option<Instant> {
    // SAFETY: `msg` was filled by recvmsg; the CMSG_* walk stays within msg_controllen.
    let stamp = unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        let mut found = None;
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SO_TIMESTAMPNS {
                found = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(cmsg).cast::<libc::timespec>(),
                ));
                break;
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
        found?
    };
    let now = Instant::now();
    let mut wall = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `wall` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut wall) };
    let age_ns = (i128::from(wall.tv_sec) - i128::from(stamp.tv_sec)) * 1_000_000_000
        + (i128::from(wall.tv_nsec) - i128::from(stamp.tv_nsec));
    // A stamp from the future (the wall clock stepped back) is read as "now"; one older than
    // a second cannot be this read's and is not trusted.
    match u64::try_from(age_ns) {
        Ok(ns) if ns < 1_000_000_000 => now.checked_sub(Duration::from_nanos(ns)),
        Ok(_) => None,
        Err(_) => Some(now),
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
            this.io.park(this.key, false, cx.waker());
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
                    this.io.park(this.key, false, cx.waker());
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
                    this.io.park(this.key, true, cx.waker());
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
mod tests {
    use super::*;
    use std::io::Write;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A deferred connection to a plain std listener on loopback (the server side blocking).
    async fn pair(io: &Arc<DeferredIo>) -> (DeferredStream, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().unwrap();
        (io.adopt(client).unwrap(), server)
    }

    #[tokio::test]
    async fn a_read_waits_for_a_poll_and_ends_when_the_bytes_arrived() {
        tokio::task::LocalSet::new()
            .run_until(read_waits_for_a_poll())
            .await;
    }

    async fn read_waits_for_a_poll() {
        let io = Arc::new(DeferredIo::new().unwrap());
        // The kernel turns receive timestamps on from a work queue (see `_stamps_wanted`).
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (mut stream, mut server) = pair(&io).await;
        stream.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        let mut server_buf = [0u8; 4];
        std::io::Read::read_exact(&mut server, &mut server_buf).unwrap();
        assert_eq!(&server_buf, b"ping");

        let reading = tokio::task::spawn_local(async move {
            let mut buf = [0u8; 16];
            let n = stream.read(&mut buf).await.unwrap();
            (n, buf, stream.received_at())
        });
        tokio::task::yield_now().await;
        assert!(io.due().is_some(), "the read parked");
        let sent = Instant::now();
        server.write_all(b"pong").unwrap();
        // The bytes are there, but nobody looks until the poll, 20 ms later.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!reading.is_finished());
        let polled = Instant::now();
        assert_eq!(io.poll(), 1);
        let (n, buf, received) = reading.await.unwrap();
        got.copy_from_slice(&buf[..4]);
        assert_eq!((n, &got), (4, b"pong"));
        let received = received.expect("a receive timestamp");
        assert!(
            received >= sent - Duration::from_millis(1),
            "{received:?} {sent:?}"
        );
        assert!(
            received + Duration::from_millis(15) < polled,
            "the stamp is when the bytes arrived, not when they were read"
        );
        assert_eq!((io.poll(), io.due()), (0, None));
    }

    #[tokio::test]
    async fn a_wait_on_the_whole_set_ends_when_bytes_come() {
        tokio::task::LocalSet::new()
            .run_until(wait_on_the_whole_set())
            .await;
    }

    async fn wait_on_the_whole_set() {
        let io = Arc::new(DeferredIo::new().unwrap());
        let (mut stream, mut server) = pair(&io).await;
        let reading = tokio::task::spawn_local(async move {
            let mut buf = [0u8; 16];
            stream.read(&mut buf).await.unwrap()
        });
        tokio::task::yield_now().await;
        // Nothing came yet: the wait goes on.
        let quiet = tokio::time::timeout(Duration::from_millis(20), io.any_ready()).await;
        assert!(quiet.is_err(), "no event yet");
        let waiting = Instant::now();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            server.write_all(b"pong").unwrap();
            server
        });
        tokio::time::timeout(Duration::from_secs(2), io.any_ready())
            .await
            .expect("woken by the bytes")
            .unwrap();
        assert!(waiting.elapsed() >= Duration::from_millis(25));
        assert_eq!(io.poll(), 1);
        assert_eq!(reading.await.unwrap(), 4);
        drop(writer.join());
    }

    #[tokio::test]
    async fn the_end_of_stream_that_came_with_the_last_bytes_is_read() {
        tokio::task::LocalSet::new()
            .run_until(end_with_the_last_bytes())
            .await;
    }

    /// A server that answers and closes at once: one event brings the bytes and the end of
    /// stream. The read that takes the bytes comes back short, yet the next one must not wait
    /// for an event that will never come.
    async fn end_with_the_last_bytes() {
        let io = Arc::new(DeferredIo::new().unwrap());
        let (mut stream, mut server) = pair(&io).await;
        let reading = tokio::task::spawn_local(async move {
            let mut buf = [0u8; 16];
            let first = stream.read(&mut buf).await.unwrap();
            let second = stream.read(&mut buf).await.unwrap();
            (first, second)
        });
        tokio::task::yield_now().await;
        server.write_all(b"bye").unwrap();
        drop(server);
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(io.poll(), 1);
        let finished = tokio::time::timeout(Duration::from_secs(1), reading).await;
        assert_eq!(finished.expect("not stuck").unwrap(), (3, 0));
    }

    #[tokio::test]
    async fn a_closed_connection_wakes_its_reader_with_end_of_stream_and_frees_its_slot() {
        tokio::task::LocalSet::new()
            .run_until(closed_wakes_its_reader())
            .await;
    }

    async fn closed_wakes_its_reader() {
        let io = Arc::new(DeferredIo::new().unwrap());
        let (mut stream, server) = pair(&io).await;
        let reading = tokio::task::spawn_local(async move {
            let mut buf = [0u8; 16];
            stream.read(&mut buf).await.unwrap()
        });
        tokio::task::yield_now().await;
        drop(server);
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(io.poll(), 1);
        assert_eq!(reading.await.unwrap(), 0);
        let state = io.state();
        assert_eq!(state.free.len(), 1, "the dropped stream's slot is free");
        assert_eq!((state.parked, state.due), (0, None));
    }
}
