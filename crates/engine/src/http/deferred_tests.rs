//! The deferred set against real loopback sockets: reads wait for a poll and keep the time
//! their bytes arrived; hang-ups are never lost; a wait on the whole set ends with bytes.

use super::*;
use std::io::Write;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs `test` on a current-thread runtime inside a `LocalSet`, as a worker runs (the streams'
/// tasks are spawned locally).
fn on_one_thread(test: impl std::future::Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, test);
}

/// A deferred connection to a plain std listener on loopback (the server side blocking).
async fn pair(io: &Arc<DeferredIo>) -> (DeferredStream, std::net::TcpStream) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let client = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().unwrap();
    (io.adopt(client).unwrap(), server)
}

#[test]
fn a_read_waits_for_a_poll_and_ends_when_the_bytes_arrived() {
    on_one_thread(async {
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
    });
}

#[test]
fn a_wait_on_the_whole_set_ends_when_bytes_come() {
    on_one_thread(async {
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
    });
}

/// An idle connection's read (an HTTP/2 driver with no stream open) parks with no deadline,
/// so a worker with nothing else to do sleeps on; it is still read at the next poll, and once
/// a response is awaited again its read gets the deadline back.
#[test]
fn an_idle_read_has_no_deadline_and_is_read_at_the_next_poll() {
    on_one_thread(async {
        let io = Arc::new(DeferredIo::new().unwrap());
        let (mut stream, mut server) = pair(&io).await;
        stream.set_idle(true);
        let reading = tokio::task::spawn_local(async move {
            let mut buf = [0u8; 16];
            let n = stream.read(&mut buf).await.unwrap();
            stream.set_idle(false);
            let again = stream.read(&mut buf).await.unwrap();
            (n, again)
        });
        tokio::task::yield_now().await;
        assert_eq!(io.due(), None, "an idle read has no deadline");
        let parked = tokio::time::timeout(Duration::from_millis(20), io.parked()).await;
        assert!(parked.is_err(), "nor does it tell the scheduler to wake");
        server.write_all(b"GOAWAY").unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!reading.is_finished(), "read at the next poll only");
        assert_eq!(io.poll(), 1);
        tokio::task::yield_now().await;
        // The second read, awaiting a response, parked with a deadline.
        assert!(io.due().is_some());
        server.write_all(b"ok").unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(io.poll(), 1);
        assert_eq!(reading.await.unwrap(), (6, 2));
        assert_eq!(io.due(), None);
    });
}

/// A server that answers and closes at once: one event brings the bytes and the end of
/// stream. The read that takes the bytes comes back short, yet the next one must not wait
/// for an event that will never come.
#[test]
fn the_end_of_stream_that_came_with_the_last_bytes_is_read() {
    on_one_thread(async {
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
    });
}

#[test]
fn a_closed_connection_wakes_its_reader_with_end_of_stream_and_frees_its_slot() {
    on_one_thread(async {
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
        assert!(state.slots.is_empty(), "the dropped stream's slot is free");
        assert_eq!((state.parked, state.due), (0, None));
    });
}
