//! The protocol state of one connection and the slots of its exchanges, all behind one short
//! lock: tasks put requests in, the driver turns them into frames (one output buffer per
//! wake-up) and completes slots as frames arrive. Slots and buffers are reused, so a
//! request in steady state allocates nothing.

use super::error::H2Error;
use super::frame::{self, code, setting};
use super::hdecode::HpackDecoder;
use super::response::{HeaderList, Keep};
use crate::grpc_reply::FrameCounter;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::task::Waker;
use std::time::Instant;

/// Our receive window per stream (SETTINGS_INITIAL_WINDOW_SIZE we send).
pub const STREAM_WINDOW: u32 = 4 << 20;
/// Our receive window for the connection (a WINDOW_UPDATE right after the preface).
pub const CONN_WINDOW: u32 = 16 << 20;
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Free,
    /// Submitted, waiting for a stream (MAX_CONCURRENT_STREAMS, the server's SETTINGS).
    Queued,
    Open,
    Done,
}

pub struct Slot {
    pub phase: Phase,
    /// The exchange's future was dropped: free the slot (and reset its stream) instead of
    /// completing it.
    pub cancelled: bool,
    pub stream: u32,
    pub block: Bytes,
    pub body: Option<Bytes>,
    pub body_sent: usize,
    pub keep: Keep,
    pub waker: Option<Waker>,
    pub send_window: i64,
    pub recv_window: i64,
    pub got_head: bool,
    pub status: u16,
    pub headers: HeaderList,
    pub trailers: Option<HeaderList>,
    pub body_len: u64,
    pub body_buf: Option<Vec<u8>>,
    pub frames: Option<FrameCounter>,
    pub written_at: Instant,
    pub head_at: Instant,
    /// When the response ended, from the kernel's receive timestamp (stamped reads only).
    pub done_at: Option<Instant>,
    pub result: Result<(), H2Error>,
}

impl Slot {
    fn new(now: Instant) -> Self {
        Slot {
            phase: Phase::Free,
            cancelled: false,
            stream: 0,
            block: Bytes::new(),
            body: None,
            body_sent: 0,
            keep: Keep::default(),
            waker: None,
            send_window: 0,
            recv_window: 0,
            got_head: false,
            status: 0,
            headers: HeaderList::default(),
            trailers: None,
            body_len: 0,
            body_buf: None,
            frames: None,
            written_at: now,
            head_at: now,
            done_at: None,
            result: Ok(()),
        }
    }
}

/// Stream ids are odd and dense: a Fibonacci multiply spreads them over the table.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | *b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A connection error: GOAWAY with `code` is sent, every stream fails with `error`.
#[derive(Debug)]
pub struct ConnError {
    pub code: u32,
    pub error: H2Error,
}

pub fn conn_err(code: u32, what: impl Into<String>) -> ConnError {
    let error = if code == frame::code::FLOW_CONTROL_ERROR {
        H2Error::FlowControl
    } else {
        H2Error::Protocol(what.into())
    };
    ConnError { code, error }
}

pub struct State {
    pub slots: Vec<Slot>,
    pub free: Vec<usize>,
    pub queued: VecDeque<usize>,
    /// Open streams with request body left to send: (slot, stream id).
    pub sending: VecDeque<(usize, u32)>,
    pub streams: HashMap<u32, usize, BuildHasherDefault<IdHasher>>,
    /// Slots whose futures were dropped while their stream was open.
    pub cancels: Vec<usize>,
    /// Wakes the driver; taken by the first submitter of a batch, so one wake per batch.
    pub driver: Option<Waker>,
    /// Frames to write; the driver swaps it out for its own empty buffer.
    pub out: Vec<u8>,
    /// Slots whose HEADERS are in the output not yet written: stamped when it is.
    pub unwritten: Vec<usize>,
    /// Tasks to wake once the lock is released.
    pub to_wake: Vec<Waker>,
    pub next_stream: u32,
    pub open: u32,
    pub peer_max_streams: u32,
    pub peer_initial_window: i64,
    pub peer_max_frame: u32,
    pub conn_send_window: i64,
    pub conn_recv_window: i64,
    pub got_settings: bool,
    /// The time frames are applied with is the kernel's receive timestamp of their read (the
    /// connection is read at the worker's wake-ups), not the moment they were read: a
    /// response's end is then that time too.
    pub reads_stamped: bool,
    /// Tasks waiting for the server's first SETTINGS (`H2Wire::settled`).
    pub settle_waiters: Vec<Waker>,
    /// The server's GOAWAY: (last stream id, code).
    pub goaway: Option<(u32, u32)>,
    /// No new streams on this connection (GOAWAY, ids exhausted, handles dropped): the
    /// error new exchanges get.
    pub draining: Option<H2Error>,
    /// The connection is over: the error every exchange gets.
    pub closed: Option<H2Error>,
    /// All handles are gone.
    pub handles_dropped: bool,
    pub sent_goaway: bool,
    /// A header block split over CONTINUATION: (stream, END_STREAM), fragments in `hbuf`.
    pub continuation: Option<(u32, bool)>,
    pub hbuf: Vec<u8>,
    pub decoder: HpackDecoder,
}

impl State {
    pub fn new(first_stream: u32) -> Self {
        let decoder = HpackDecoder::default();
        let mut out = Vec::with_capacity(16 << 10);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, STREAM_WINDOW),
            ],
        );
        frame::put_window_update(&mut out, 0, CONN_WINDOW - 65_535);
        State {
            slots: Vec::new(),
            free: Vec::new(),
            queued: VecDeque::new(),
            sending: VecDeque::new(),
            streams: HashMap::default(),
            cancels: Vec::new(),
            driver: None,
            out,
            unwritten: Vec::new(),
            to_wake: Vec::new(),
            next_stream: first_stream | 1,
            open: 0,
            peer_max_streams: u32::MAX,
            peer_initial_window: 65_535,
            peer_max_frame: frame::DEFAULT_MAX_FRAME_SIZE,
            conn_send_window: 65_535,
            conn_recv_window: CONN_WINDOW as i64,
            got_settings: false,
            reads_stamped: false,
            settle_waiters: Vec::new(),
            goaway: None,
            draining: None,
            closed: None,
            handles_dropped: false,
            sent_goaway: false,
            continuation: None,
            hbuf: Vec::new(),
            decoder,
        }
    }

    /// A slot for a new exchange, reused when one is free.
    pub fn alloc(&mut self) -> usize {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot::new(Instant::now()));
                self.slots.len() - 1
            }
        }
    }

    pub fn free_slot(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.phase = Phase::Free;
        s.cancelled = false;
        s.block = Bytes::new();
        s.body = None;
        s.waker = None;
        s.trailers = None;
        s.body_buf = None;
        s.result = Ok(());
        self.free.push(i);
    }

    /// Resets a slot for a new request.
    pub fn fill(&mut self, i: usize, block: Bytes, body: Option<Bytes>, keep: Keep, waker: Waker) {
        let s = &mut self.slots[i];
        s.phase = Phase::Queued;
        s.block = block;
        s.body = body.filter(|b| !b.is_empty());
        s.body_sent = 0;
        s.keep = keep;
        s.waker = Some(waker);
        s.got_head = false;
        s.done_at = None;
        s.status = 0;
        s.headers = HeaderList::default();
        s.body_len = 0;
        s.body_buf = keep.body.then(Vec::new);
        s.frames = keep.grpc.then(FrameCounter::default);
        s.result = Ok(());
    }

    /// Ends an exchange with its response, which arrived `at` (never before its request was
    /// written: a kernel stamp may precede the moment the write was seen to return).
    pub fn answered(&mut self, i: usize, at: Instant) {
        if self.reads_stamped {
            let s = &mut self.slots[i];
            s.done_at = Some(at.max(s.written_at));
        }
        self.complete(i, Ok(()));
    }

    /// Ends an exchange: its task is woken, or a cancelled slot is freed.
    pub fn complete(&mut self, i: usize, result: Result<(), H2Error>) {
        let s = &mut self.slots[i];
        if s.phase == Phase::Open {
            self.streams.remove(&s.stream);
            self.open -= 1;
            let unsent = s.body.as_ref().is_some_and(|b| s.body_sent < b.len());
            if unsent && result.is_ok() && !s.cancelled {
                // The server answered before the body was all sent (RFC 9113 §8.1): close
                // our side so its stream count drops.
                frame::put_rst_stream(&mut self.out, s.stream, code::NO_ERROR);
            }
        }
        if s.cancelled {
            self.free_slot(i);
            return;
        }
        s.phase = Phase::Done;
        s.result = result;
        if let Some(w) = s.waker.take() {
            self.to_wake.push(w);
        }
    }

    /// Ends a stream we found broken: RST_STREAM to the server, the error to the task.
    pub fn stream_error(&mut self, i: usize, rst: u32, error: H2Error) {
        frame::put_rst_stream(&mut self.out, self.slots[i].stream, rst);
        self.complete(i, Err(error));
    }

    /// A connection error: GOAWAY, every exchange fails, no more I/O but the flush.
    pub fn fail_connection(&mut self, e: ConnError) {
        if !self.sent_goaway {
            frame::put_goaway(&mut self.out, 0, e.code, b"");
            self.sent_goaway = true;
        }
        self.fail_all(e.error);
    }

    /// Fails every open and queued exchange and closes the connection to new ones.
    pub fn fail_all(&mut self, error: H2Error) {
        let open: Vec<usize> = self.streams.values().copied().collect();
        for i in open {
            self.complete(i, Err(error.clone()));
        }
        while let Some(i) = self.queued.pop_front() {
            self.complete(i, Err(error.clone()));
        }
        self.sending.clear();
        self.to_wake.append(&mut self.settle_waiters);
        self.closed.get_or_insert(error);
    }

    /// Turns what tasks submitted into frames in `out`: resets for dropped exchanges, new
    /// streams up to MAX_CONCURRENT_STREAMS, request bodies within the send windows.
    pub fn encode(&mut self) {
        for k in 0..self.cancels.len() {
            let i = self.cancels[k];
            let s = &self.slots[i];
            if s.phase == Phase::Open && s.cancelled {
                frame::put_rst_stream(&mut self.out, s.stream, code::CANCEL);
                self.complete(i, Ok(()));
            }
        }
        self.cancels.clear();
        if self.closed.is_some() {
            return;
        }
        if let Some(e) = self.draining.clone() {
            while let Some(i) = self.queued.pop_front() {
                self.complete(i, Err(e.clone()));
            }
        }
        while self.got_settings && self.open < self.peer_max_streams {
            let Some(i) = self.queued.pop_front() else {
                break;
            };
            if self.slots[i].cancelled {
                self.free_slot(i);
                continue;
            }
            if self.next_stream > MAX_STREAM_ID {
                // Ids exhausted: what is open finishes, then the driver closes the
                // connection; the rest go to a new one.
                self.queued.push_front(i);
                self.draining = Some(H2Error::GoAway {
                    code: code::NO_ERROR,
                    retryable: true,
                });
                return self.encode();
            }
            let id = self.next_stream;
            self.next_stream += 2;
            self.open += 1;
            let max_frame = self.peer_max_frame as usize;
            let window = self.peer_initial_window;
            let s = &mut self.slots[i];
            s.phase = Phase::Open;
            s.stream = id;
            s.send_window = window;
            s.recv_window = STREAM_WINDOW as i64;
            frame::put_headers(&mut self.out, id, &s.block, s.body.is_none(), max_frame);
            if s.body.is_some() {
                self.sending.push_back((i, id));
            }
            self.unwritten.push(i);
            self.streams.insert(id, i);
        }
        self.send_bodies();
    }

    /// DATA for streams with body left, as far as the connection and stream windows allow;
    /// the blocked stay queued until a WINDOW_UPDATE.
    fn send_bodies(&mut self) {
        let mut n = self.sending.len();
        while n > 0 && self.conn_send_window > 0 {
            n -= 1;
            let Some((i, id)) = self.sending.pop_front() else {
                break;
            };
            let max_frame = self.peer_max_frame as i64;
            let s = &mut self.slots[i];
            if s.phase != Phase::Open || s.stream != id {
                continue;
            }
            let Some(body) = &s.body else { continue };
            while s.body_sent < body.len() && s.send_window > 0 && self.conn_send_window > 0 {
                let left = (body.len() - s.body_sent) as i64;
                let len = left
                    .min(s.send_window)
                    .min(self.conn_send_window)
                    .min(max_frame) as usize;
                let end = s.body_sent + len == body.len();
                frame::put_data(
                    &mut self.out,
                    id,
                    &body[s.body_sent..s.body_sent + len],
                    end,
                );
                s.body_sent += len;
                s.send_window -= len as i64;
                self.conn_send_window -= len as i64;
            }
            if s.body_sent < body.len() {
                self.sending.push_back((i, id));
            }
        }
    }

    /// Nothing open, nothing queued, and no new streams may start: time to close.
    pub fn finished(&self) -> bool {
        self.closed.is_some()
            || ((self.draining.is_some() || self.handles_dropped)
                && self.open == 0
                && self.queued.is_empty())
    }

    /// The error for streams still open when the socket ends.
    pub fn eof_error(&self) -> H2Error {
        match self.goaway {
            Some((_, c)) if c != code::NO_ERROR => H2Error::GoAway {
                code: c,
                retryable: false,
            },
            _ => H2Error::Closed,
        }
    }
}
