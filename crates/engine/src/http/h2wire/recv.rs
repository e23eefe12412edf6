//! Applies each frame the server sent to the connection state: the dispatch, the rule that
//! a header block split over CONTINUATION frames arrives uninterrupted, flow control both
//! ways, SETTINGS, GOAWAY, and response heads, bodies and trailers.

use super::error::H2Error;
use super::frame::{self, code, setting, Frame};
use super::response::{HeaderList, Keep, KeepHeaders};
use super::state::{conn_err, ConnError, Phase, State, CONN_WINDOW, STREAM_WINDOW};
use std::time::Instant;

impl State {
    pub fn on_frame(&mut self, f: Frame<'_>, now: Instant) -> Result<(), ConnError> {
        if let Some((stream, end_stream)) = self.continuation {
            let Frame::Continuation {
                stream: s,
                fragment,
                end_headers,
            } = f
            else {
                return Err(conn_err(
                    code::PROTOCOL_ERROR,
                    "a frame inside a header block",
                ));
            };
            if s != stream {
                return Err(conn_err(
                    code::PROTOCOL_ERROR,
                    "CONTINUATION on another stream",
                ));
            }
            self.hbuf.extend_from_slice(fragment);
            if end_headers {
                self.continuation = None;
                let block = std::mem::take(&mut self.hbuf);
                let r = self.header_block(stream, end_stream, &block, now);
                self.hbuf = block;
                self.hbuf.clear();
                r?;
            }
            return Ok(());
        }
        match f {
            Frame::Data {
                stream,
                data,
                end_stream,
                flow_len,
            } => self.data(stream, data, end_stream, flow_len, now)?,
            Frame::Headers {
                stream,
                fragment,
                end_stream,
                end_headers,
            } => {
                if end_headers {
                    self.header_block(stream, end_stream, fragment, now)?;
                } else {
                    self.hbuf.clear();
                    self.hbuf.extend_from_slice(fragment);
                    self.continuation = Some((stream, end_stream));
                }
            }
            Frame::Continuation { .. } => {
                return Err(conn_err(
                    code::PROTOCOL_ERROR,
                    "CONTINUATION without HEADERS",
                ));
            }
            Frame::Settings { ack: false, params } => self.settings(params)?,
            Frame::Settings { ack: true, .. } => {}
            Frame::Ping { ack: false, data } => super::frame::put_ping(&mut self.out, true, data),
            Frame::Ping { ack: true, .. } => {}
            Frame::GoAway {
                last_stream, code, ..
            } => self.goaway(last_stream, code),
            Frame::RstStream { stream, code } => {
                if let Some(&i) = self.streams.get(&stream) {
                    self.complete(i, Err(H2Error::Reset(code)));
                } else if self.is_idle(stream) {
                    return Err(conn_err(
                        code::PROTOCOL_ERROR,
                        "RST_STREAM on an idle stream",
                    ));
                }
            }
            Frame::WindowUpdate { stream, increment } => self.window_update(stream, increment)?,
            Frame::PushPromise { .. } => {
                return Err(conn_err(
                    code::PROTOCOL_ERROR,
                    "PUSH_PROMISE after SETTINGS_ENABLE_PUSH=0",
                ));
            }
            // PRIORITY is advisory and RFC 9113 deprecates it; unknown types are ignored.
            Frame::Priority { .. } | Frame::Unknown { .. } => {}
        }
        Ok(())
    }

    /// Counts received DATA against our windows and opens them again when half used.
    pub fn consume(
        &mut self,
        i: Option<usize>,
        flow_len: u32,
        end_stream: bool,
    ) -> Result<(), ConnError> {
        let len = flow_len as i64;
        if len > self.conn_recv_window {
            return Err(conn_err(
                code::FLOW_CONTROL_ERROR,
                "DATA beyond the connection window",
            ));
        }
        self.conn_recv_window -= len;
        let used = CONN_WINDOW as i64 - self.conn_recv_window;
        if used >= CONN_WINDOW as i64 / 2 {
            frame::put_window_update(&mut self.out, 0, used as u32);
            self.conn_recv_window = CONN_WINDOW as i64;
        }
        let Some(i) = i else { return Ok(()) };
        let s = &mut self.slots[i];
        if len > s.recv_window {
            self.stream_error(i, code::FLOW_CONTROL_ERROR, H2Error::FlowControl);
            return Ok(());
        }
        s.recv_window -= len;
        let used = STREAM_WINDOW as i64 - s.recv_window;
        if !end_stream && used >= STREAM_WINDOW as i64 / 2 {
            frame::put_window_update(&mut self.out, s.stream, used as u32);
            s.recv_window = STREAM_WINDOW as i64;
        }
        Ok(())
    }

    /// A WINDOW_UPDATE from the server.
    pub fn window_update(&mut self, stream: u32, increment: u32) -> Result<(), ConnError> {
        if stream == 0 {
            if increment == 0 {
                return Err(conn_err(
                    code::PROTOCOL_ERROR,
                    "WINDOW_UPDATE of 0 on the connection",
                ));
            }
            self.conn_send_window += increment as i64;
            if self.conn_send_window > frame::MAX_WINDOW {
                return Err(conn_err(
                    code::FLOW_CONTROL_ERROR,
                    "connection window past 2^31-1",
                ));
            }
        } else if let Some(&i) = self.streams.get(&stream) {
            if increment == 0 {
                self.stream_error(
                    i,
                    code::PROTOCOL_ERROR,
                    H2Error::Protocol("WINDOW_UPDATE of 0".into()),
                );
                return Ok(());
            }
            let s = &mut self.slots[i];
            s.send_window += increment as i64;
            if s.send_window > frame::MAX_WINDOW {
                self.stream_error(i, code::FLOW_CONTROL_ERROR, H2Error::FlowControl);
            }
        } else if self.is_idle(stream) {
            // A closed stream's window may still move (the frame crossed our RST_STREAM);
            // one we never opened may not (RFC 9113 §5.1; h2spec's client suite, 5.1/3).
            return Err(conn_err(
                code::PROTOCOL_ERROR,
                "WINDOW_UPDATE on an idle stream",
            ));
        }
        Ok(())
    }

    /// A stream this client never opened: past the last it opened, or server-initiated
    /// (even), which it never allows (SETTINGS_ENABLE_PUSH=0).
    fn is_idle(&self, stream: u32) -> bool {
        stream >= self.next_stream || stream.is_multiple_of(2)
    }

    /// The server's SETTINGS, applied and acknowledged.
    pub fn settings(&mut self, params: &[u8]) -> Result<(), ConnError> {
        for (id, value) in frame::settings(params) {
            match id {
                setting::ENABLE_PUSH if value != 0 => {
                    return Err(conn_err(
                        code::PROTOCOL_ERROR,
                        "a server sent SETTINGS_ENABLE_PUSH != 0",
                    ));
                }
                setting::MAX_CONCURRENT_STREAMS => self.peer_max_streams = value,
                setting::INITIAL_WINDOW_SIZE => {
                    if value as i64 > frame::MAX_WINDOW {
                        return Err(conn_err(
                            code::FLOW_CONTROL_ERROR,
                            "INITIAL_WINDOW_SIZE past 2^31-1",
                        ));
                    }
                    // RFC 9113 §6.9.2: the change applies to every open stream's window.
                    let delta = value as i64 - self.peer_initial_window;
                    self.peer_initial_window = value as i64;
                    for &i in self.streams.values() {
                        let s = &mut self.slots[i];
                        s.send_window += delta;
                        if s.send_window > frame::MAX_WINDOW {
                            return Err(conn_err(
                                code::FLOW_CONTROL_ERROR,
                                "a stream window past 2^31-1",
                            ));
                        }
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME_SIZE..=(1 << 24) - 1).contains(&value) {
                        return Err(conn_err(
                            code::PROTOCOL_ERROR,
                            "SETTINGS_MAX_FRAME_SIZE out of range",
                        ));
                    }
                    self.peer_max_frame = value;
                }
                // HEADER_TABLE_SIZE bounds an encoder table we never use; the header list
                // size is advisory; unknown settings are ignored.
                _ => {}
            }
        }
        frame::put_settings_ack(&mut self.out);
        self.got_settings = true;
        self.to_wake.append(&mut self.settle_waiters);
        Ok(())
    }

    /// The server's GOAWAY: streams above its last id (and those never sent) fail as not
    /// processed, the others may finish, nothing new starts.
    pub fn goaway(&mut self, last: u32, code: u32) {
        self.goaway = Some((last, code));
        let not_processed = H2Error::GoAway {
            code,
            retryable: true,
        };
        let above: Vec<usize> = self
            .streams
            .iter()
            .filter(|(id, _)| **id > last)
            .map(|(_, i)| *i)
            .collect();
        for i in above {
            self.complete(i, Err(not_processed.clone()));
        }
        self.draining.get_or_insert(not_processed);
    }

    /// Receives a header block of `stream` (decoded even for streams we forgot: HPACK's
    /// dynamic table must see every block).
    pub fn header_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        now: Instant,
    ) -> Result<(), ConnError> {
        if self.is_idle(stream) {
            return Err(conn_err(
                code::PROTOCOL_ERROR,
                "HEADERS on a stream we did not open",
            ));
        }
        let slot = self.streams.get(&stream).copied();
        let (keep, is_trailers) = match slot {
            Some(i) => (self.slots[i].keep, self.slots[i].got_head),
            None => (Keep::default(), false),
        };
        // Trailers are kept whole, and so is a gRPC trailers-only head (its `grpc-status`).
        let wanted = match slot {
            None => KeepHeaders::None,
            Some(_) if is_trailers || (keep.grpc && end_stream) => KeepHeaders::All,
            Some(_) => keep.headers,
        };
        let (status, list) = self.decode_head(block, wanted)?;
        let Some(i) = slot else { return Ok(()) };
        if is_trailers {
            if !end_stream {
                self.stream_error(
                    i,
                    code::PROTOCOL_ERROR,
                    H2Error::Protocol("trailers without END_STREAM".into()),
                );
                return Ok(());
            }
            self.slots[i].trailers = Some(list.unwrap_or_default());
            self.answered(i, now);
            return Ok(());
        }
        let status = match status {
            Some(s) => s,
            None => {
                self.stream_error(
                    i,
                    code::PROTOCOL_ERROR,
                    H2Error::Protocol("a response without a valid :status".into()),
                );
                return Ok(());
            }
        };
        if (100..200).contains(&status) {
            // An interim head (100 Continue, 103 Early Hints): the final one follows.
            if end_stream {
                self.stream_error(
                    i,
                    code::PROTOCOL_ERROR,
                    H2Error::Protocol("a 1xx head ended the stream".into()),
                );
            }
            return Ok(());
        }
        let s = &mut self.slots[i];
        s.got_head = true;
        s.status = status;
        s.head_at = now.max(s.written_at);
        if let Some(list) = list {
            s.headers = list;
        }
        if end_stream {
            self.answered(i, now);
        }
        Ok(())
    }

    /// Decodes a header block through the connection's HPACK state: its `:status` (`None`
    /// when absent or malformed) and the regular fields `wanted` keeps.
    fn decode_head(
        &mut self,
        block: &[u8],
        wanted: KeepHeaders,
    ) -> Result<(Option<u16>, Option<HeaderList>), ConnError> {
        let (mut status, mut bad_status) = (None, false);
        let mut list: Option<HeaderList> = None;
        let decoded = self.decoder.decode_some(
            block,
            |name| wanted.wants(name),
            |name, value| {
                if name == b":status" {
                    match value {
                        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
                            status = Some(
                                (*a - b'0') as u16 * 100
                                    + (*b - b'0') as u16 * 10
                                    + (*c - b'0') as u16,
                            )
                        }
                        _ => bad_status = true,
                    }
                } else if wanted.wants(name) {
                    list.get_or_insert_with(HeaderList::default)
                        .push(name, value);
                }
            },
        );
        decoded.map_err(|e| ConnError {
            code: code::COMPRESSION_ERROR,
            error: H2Error::Protocol(e.to_string()),
        })?;
        Ok((status.filter(|_| !bad_status), list))
    }

    /// DATA for `stream`.
    pub fn data(
        &mut self,
        stream: u32,
        data: &[u8],
        end_stream: bool,
        flow_len: u32,
        now: Instant,
    ) -> Result<(), ConnError> {
        if self.is_idle(stream) {
            return Err(conn_err(
                code::PROTOCOL_ERROR,
                "DATA on a stream we did not open",
            ));
        }
        let slot = self.streams.get(&stream).copied();
        self.consume(slot, flow_len, end_stream)?;
        let Some(i) = slot else { return Ok(()) };
        let s = &mut self.slots[i];
        if s.phase != Phase::Open {
            // consume() found a flow-control error and reset the stream.
            return Ok(());
        }
        if !s.got_head {
            self.stream_error(
                i,
                code::PROTOCOL_ERROR,
                H2Error::Protocol("DATA before the response head".into()),
            );
            return Ok(());
        }
        s.body_len += data.len() as u64;
        if s.body_len > s.keep.max_body {
            let limit = s.keep.max_body;
            self.stream_error(i, code::CANCEL, H2Error::BodyTooLarge(limit));
            return Ok(());
        }
        if let Some(buf) = &mut s.body_buf {
            buf.extend_from_slice(data);
        }
        if let Some(frames) = &mut s.frames {
            frames.feed(data, tokio::time::Instant::from_std(now));
        }
        if end_stream {
            self.answered(i, now);
        }
        Ok(())
    }
}
