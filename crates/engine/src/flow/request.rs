//! One request step of a virtual user's iteration: rendered, sent on a connection or stream
//! slot, its response checked and captured, and everything recorded with the time points
//! its latency is measured between (see docs/results.md).

use super::{ConnSet, Next, Span, Worker};
use crate::exchange::{exchange, RequestTimer};
use crate::inspect::{capture_at, check_passes};
use crate::prepare::PreparedRequest;
use crate::render::RenderCx;
use crate::request::RequestParts;
use crate::transport::{Failure, Response, ResponseData, ResponseTiming, Transport};
use crate::vu::VuState;
use loadlab_metrics::{micros, ErrorKind, Outcome, Phases, Recorder};
use tokio::time::Instant;

impl<T: Transport> Worker<T> {
    /// Sends one request of `vu`'s iteration and records its outcome: rendered, sent on a
    /// connection or stream slot, its checks and captures applied. `first` marks the
    /// iteration's first request, whose latency runs from `intended`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn request(
        &self,
        req: &PreparedRequest,
        conns: &mut ConnSet<T::Conn>,
        vu: &mut VuState,
        intended: Option<Instant>,
        first: bool,
        keep_alive: bool,
        pooled: bool,
        timing: &mut Span,
    ) -> Next {
        if !req.data_sets.is_empty() && !self.take_rows(&req.data_sets, vu) {
            return Next::StopVu;
        }
        let traced = self.trace_ids(req);
        let mut parts = std::mem::take(&mut vu.parts);
        let rendered = self.render(req, vu, traced, &mut parts);
        let mut keep = response_kept(req);
        self.begin(req.step);
        // A request that could not be rendered is counted but never written.
        let bytes_sent = rendered.as_ref().map_or(0, |r| r.size);
        let grpc_payload = rendered.as_ref().ok().and_then(|r| r.grpc_payload);
        let wanted = Instant::now();
        timing.start.get_or_insert(wanted);
        let Sent { sent, done, result } = self
            .send(
                req,
                rendered.map(|r| r.parts),
                (conns, &mut vu.request_timer),
                pooled,
                keep_alive,
                wanted,
                keep.as_mut(),
            )
            .await;
        timing.end = Some(done);
        vu.parts = parts;
        let result = as_grpc_failure(req, result);
        let times = Times::new(intended.filter(|_| first), wanted, sent, done);
        let (status, status_error) = self.status_verdict(req, &result, keep.as_ref());
        let found = match &result {
            Ok(resp) => self.inspect(
                req,
                resp,
                keep.as_ref(),
                times.latency_us,
                vu,
                status_error.is_some(),
            ),
            Err(_) => None,
        };
        let error = status_error.or(found.as_ref().map(|(kind, _)| *kind));
        let next = if error.is_some() && !req.captures.is_empty() {
            // Later steps would send what this one failed to capture.
            Next::StopIteration
        } else {
            Next::Continue
        };
        let trace_id = traced.map(|(trace, _)| trace);
        let outcome = outcome(req, &times, &result, status, error, trace_id, bytes_sent);
        let mut rec = self.recorder.borrow_mut();
        rec.record(&outcome);
        record_stream(&mut rec, req, keep.as_ref(), times.measured_from, error);
        record_grpc(&mut rec, req, &result, grpc_payload, times.measured_from);
        note_failure(&mut rec, result, found);
        next
    }

    /// A new W3C trace per request (`defaults.trace`): ids never zero, as the spec asks.
    #[inline]
    fn trace_ids(&self, req: &PreparedRequest) -> Option<(u128, u64)> {
        req.trace.then(|| {
            let mut rng = self.rng.borrow_mut();
            (rng.u128(1..), rng.u64(1..))
        })
    }

    /// The response's status and the error it makes by itself, before any check: a gRPC
    /// call is judged by its own status, a step whose checks look at the status by those.
    #[inline]
    fn status_verdict(
        &self,
        req: &PreparedRequest,
        result: &Result<Response, Failure>,
        keep: Option<&ResponseData>,
    ) -> (u16, Option<ErrorKind>) {
        match result {
            Ok(r) if req.grpc.is_some() => (r.status, self.judge_grpc(req, r, keep)),
            Ok(r) if req.status_checked => (r.status, None),
            Ok(r) => (r.status, ErrorKind::from_status(r.status)),
            Err(f) => (0, Some(f.kind)),
        }
    }

    /// The request `req` sends for `vu`: the fixed one prepared before the run, or this VU's
    /// own rendering into `parts` (a template, or a fixed request with a trace header added).
    /// A value that cannot go where it stands fails the request (`invalid_request`).
    fn render<'a>(
        &self,
        req: &'a PreparedRequest,
        vu: &VuState,
        traced: Option<(u128, u64)>,
        parts: &'a mut RequestParts,
    ) -> Result<Rendered<'a>, Failure> {
        match (&req.fixed, &req.program) {
            (Some(fixed), _) if traced.is_none() => {
                return Ok(Rendered {
                    parts: fixed,
                    size: req.fixed_size,
                    grpc_payload: req.grpc.as_ref().and_then(|g| g.fixed_payload),
                })
            }
            (Some(fixed), _) => parts.copy_from(fixed),
            (None, Some(program)) => {
                let data = &self.scenario.data.sets;
                let cx = &mut RenderCx {
                    vu,
                    data,
                    rng: &mut self.rng.borrow_mut(),
                };
                program.render(parts, cx).map_err(|e| {
                    Failure::new(
                        ErrorKind::InvalidRequest,
                        format!("step `{}`: {}", self.step_name(req), e.describe()),
                    )
                })?;
            }
            (None, None) => unreachable!("a prepared request is fixed or a program"),
        }
        if let Some((trace, span)) = traced {
            crate::trace::add_traceparent(parts, trace, span);
        }
        let grpc_payload = match &req.grpc {
            Some(call) if req.program.is_some() => {
                Some(crate::grpc::encode_rendered(call, parts).map_err(|e| {
                    Failure::new(
                        ErrorKind::InvalidRequest,
                        format!("step `{}`: {e}", self.step_name(req)),
                    )
                })?)
            }
            Some(call) => call.fixed_payload,
            None => None,
        };
        Ok(Rendered {
            size: parts.wire_size(),
            parts,
            grpc_payload,
        })
    }

    /// Counts a request as begun, waking the pause probe when the worker was idle.
    pub(crate) fn begin(&self, step: u16) {
        let mut recorder = self.recorder.borrow_mut();
        let idle = recorder.in_flight() == 0;
        recorder.begin(step);
        if idle {
            self.requests_begun.notify_one();
        }
    }

    /// Sends `rendered` (wanted at `wanted`) on the VU's connection to its origin, a pooled
    /// one, or a stream slot of the shared connections, and gives back what was lent.
    #[allow(clippy::too_many_arguments)]
    async fn send(
        &self,
        req: &PreparedRequest,
        rendered: Result<&RequestParts, Failure>,
        (conns, timer): (&mut ConnSet<T::Conn>, &mut RequestTimer),
        pooled: bool,
        keep_alive: bool,
        wanted: Instant,
        keep: Option<&mut ResponseData>,
    ) -> Sent {
        let origin = req.origin as usize;
        let shared = self.transport.shared(req.origin);
        let mut lent = None;
        let slot = if shared {
            &mut lent
        } else {
            &mut conns[origin]
        };
        let deadline = wanted + req.timeout;
        let (sent, result) = match rendered {
            Ok(parts) => {
                // On a shared connection a request first waits for a free stream slot, like
                // an arrival waiting for `max_in_flight`; a pooled one may wait for a
                // connection (see idle_pool.rs). Its latency includes the wait, its service
                // time (from `sent`) does not.
                let leased = if shared {
                    self.stream_for(slot, req.origin, deadline, req.timeout)
                        .await
                } else if pooled && slot.is_none() {
                    if let Some(conn) = self.pool.take(origin) {
                        *slot = Some(conn);
                        Ok(None)
                    } else {
                        self.connection_for(slot, req.origin, deadline, req.timeout)
                            .await
                    }
                } else {
                    Ok(None)
                };
                // Service time starts when the stream (or connection) is ours.
                let sent = match &leased {
                    Ok(Some(ours_at)) => *ours_at,
                    _ => wanted,
                };
                let result = match leased {
                    Ok(_) => {
                        exchange(
                            &self.transport,
                            slot,
                            &req.rendered(parts, deadline),
                            (req.timeout, timer),
                            keep_alive,
                            keep,
                        )
                        .await
                    }
                    Err(f) => Err(f),
                };
                (sent, result)
            }
            Err(f) => (wanted, Err(f)),
        };
        // A deferred read knows when the response's bytes arrived, before it was read.
        let done = match &result {
            Ok(r) => r.timing.received.unwrap_or_else(Instant::now),
            Err(_) => Instant::now(),
        };
        if shared {
            // Gives the stream slot back.
            lent = None;
        } else if pooled {
            if let Some(c) = slot.take() {
                self.return_pooled(origin, c);
            }
        }
        drop(lent);
        Sent { sent, done, result }
    }

    /// Applies the step's checks to a response (each failure counted) and, when nothing has
    /// failed (`failed`: its status already did), its captures into `vu`. Returns the first
    /// check or capture that failed, with the message the run's errors show.
    fn inspect(
        &self,
        req: &PreparedRequest,
        resp: &Response,
        data: Option<&ResponseData>,
        latency_us: u64,
        vu: &mut VuState,
        mut failed: bool,
    ) -> Option<(ErrorKind, String)> {
        let json = if let (true, Some(call)) = (req.parse_json, &req.grpc) {
            data.and_then(|d| {
                crate::grpc::decode_json(&call.output, &d.body, call.server_streaming).ok()
            })
        } else if req.parse_json {
            data.and_then(|d| serde_json::from_slice::<serde_json::Value>(&d.body).ok())
        } else if req.stream.is_some() {
            data.and_then(|d| d.stream.as_ref()?.last_json.clone())
        } else {
            None
        };
        let mut found = None;
        for (i, check) in req.checks.iter().enumerate() {
            if !check_passes(check, resp.status, latency_us, data, json.as_ref()) {
                self.recorder.borrow_mut().record_check_failure(req.step, i);
                if !failed {
                    failed = true;
                    found = Some((
                        ErrorKind::CheckFailed,
                        format!(
                            "step `{}`: check `{}` failed (status {})",
                            self.step_name(req),
                            check.describe(),
                            resp.status
                        ),
                    ));
                }
            }
        }
        if failed {
            return found;
        }
        for (i, c) in req.captures.iter().enumerate() {
            match capture_at(i, &c.source, data, json.as_ref()) {
                Some(value) => vu.set_var(c.var as usize, value),
                None => {
                    return Some((
                        ErrorKind::CaptureFailed,
                        format!(
                            "step `{}`: capture `{}` found nothing in the response (status {}); the rest of the iteration was skipped",
                            self.step_name(req),
                            c.name,
                            resp.status
                        ),
                    ))
                }
            }
        }
        None
    }

    /// A gRPC call's status judged (see `grpc::outcome::judge`), its failure explained once.
    fn judge_grpc(
        &self,
        req: &PreparedRequest,
        response: &Response,
        data: Option<&ResponseData>,
    ) -> Option<ErrorKind> {
        let call = req.grpc.as_deref()?;
        let kind = crate::grpc::outcome::judge(call, response)?;
        self.recorder.borrow_mut().note_error(kind, || {
            crate::grpc::outcome::explain(self.step_name(req), call, response, data)
        });
        Some(kind)
    }

    fn step_name(&self, req: &PreparedRequest) -> &str {
        &self.scenario.steps[req.step as usize].name
    }
}

/// A request ready to send and the bytes of its content.
struct Rendered<'a> {
    parts: &'a RequestParts,
    size: u64,
    /// A gRPC call's message size (the payload of its frame).
    grpc_payload: Option<u64>,
}

/// What sending a request came to: when the request had its connection or stream (service
/// time starts there), when its response was in (or it failed), and the response.
struct Sent {
    sent: Instant,
    done: Instant,
    result: Result<Response, Failure>,
}

/// What of the response the step needs kept. A gRPC call keeps its `grpc-message`, to say
/// why it failed.
#[inline]
fn response_kept(req: &PreparedRequest) -> Option<ResponseData> {
    let mut keep = (req.keep_headers || req.keep_body || req.grpc.is_some())
        .then(|| ResponseData::new(req.keep_headers, req.keep_body));
    if let Some(k) = keep.as_mut() {
        k.stream = crate::stream::reader(req.stream.as_ref());
    }
    keep
}

/// A gRPC call's transport failure, told in gRPC's terms.
#[inline]
fn as_grpc_failure(
    req: &PreparedRequest,
    result: Result<Response, Failure>,
) -> Result<Response, Failure> {
    match (result, &req.grpc) {
        (Err(f), Some(_)) => Err(crate::grpc::outcome::failed(f)),
        (result, _) => result,
    }
}

/// The time points a request's outcome is measured between (see docs/results.md), worked
/// out once from the clock reads the request made.
struct Times {
    /// When its service time starts: its connection or stream was ours.
    sent: Instant,
    /// When its response was in (or it failed).
    done: Instant,
    /// Where its latency runs from: the intended start for an iteration's first request
    /// (so a late start is not hidden), else when it was wanted.
    measured_from: Instant,
    latency_us: u64,
    /// How late an iteration's first request was wanted after its intended start.
    lag_us: Option<u64>,
}

impl Times {
    /// `intended`: the iteration's planned start, given for its first request only.
    #[inline]
    fn new(intended: Option<Instant>, wanted: Instant, sent: Instant, done: Instant) -> Self {
        let measured_from = intended.map_or(wanted, |at| at.min(wanted));
        Times {
            sent,
            done,
            measured_from,
            latency_us: micros(done - measured_from),
            lag_us: intended.map(|at| micros(wanted.saturating_duration_since(at))),
        }
    }
}

/// The outcome recorded for a request: its times, status, error and bytes (the wire's
/// count when the transport knows it, else the rendered size).
#[inline]
fn outcome(
    req: &PreparedRequest,
    times: &Times,
    result: &Result<Response, Failure>,
    status: u16,
    error: Option<ErrorKind>,
    trace_id: Option<u128>,
    bytes_sent: u64,
) -> Outcome {
    Outcome {
        step: req.step,
        latency_us: times.latency_us,
        service_us: micros(times.done - times.sent),
        lag_us: times.lag_us,
        server_us: result.as_ref().ok().and_then(|r| r.server_us),
        trace_id,
        status,
        error,
        bytes_sent: match result {
            Ok(r) => r.bytes_sent.unwrap_or(bytes_sent),
            Err(f) => f.wire.map_or(bytes_sent, |w| w.sent),
        },
        bytes_received: match result {
            Ok(r) => r.bytes_received,
            Err(f) => f.wire.map_or(0, |w| w.received),
        },
        phases: result
            .as_ref()
            .map_or_else(|_| Phases::default(), |r| phases(&r.timing, times.done)),
    }
}

/// Records a gRPC call's message counts and status, and when a server-streaming call's
/// first message came (measured like its latency, from `from`).
#[inline]
fn record_grpc(
    rec: &mut Recorder,
    req: &PreparedRequest,
    result: &Result<Response, Failure>,
    grpc_payload: Option<u64>,
    from: Instant,
) {
    let Some(call) = &req.grpc else {
        return;
    };
    let (counts, status) = crate::grpc::outcome::counts(result, grpc_payload);
    let first = result
        .as_ref()
        .ok()
        .and_then(|r| r.grpc?.first_message)
        .filter(|_| call.server_streaming)
        .map(|at| micros(at.saturating_duration_since(from)));
    rec.record_grpc(req.step, &counts, status, first);
}

/// Keeps the message of a request's failure, or of its first failed check or capture
/// (`found`), for the run's errors.
#[inline]
fn note_failure(
    rec: &mut Recorder,
    result: Result<Response, Failure>,
    found: Option<(ErrorKind, String)>,
) {
    match (result, found) {
        (Err(f), _) => rec.note_error(f.kind, || f.message.clone()),
        (Ok(_), Some((kind, message))) => rec.note_error(kind, || message),
        _ => {}
    }
}

/// The phases of a request that completed at `done`: waiting and receiving add up to
/// `done − written`, never more than its service time.
fn phases(t: &ResponseTiming, done: Instant) -> Phases {
    Phases {
        connect_us: t.opened.map(|o| o.connect_us),
        tls_us: t.opened.and_then(|o| o.tls_us),
        waiting_us: match (t.written, t.first_byte) {
            (Some(w), Some(f)) => Some(micros(f.saturating_duration_since(w))),
            _ => None,
        },
        receiving_us: t
            .first_byte
            .map(|f| micros(done.saturating_duration_since(f))),
    }
}

/// Records a request's stream, when it streamed and did not fail (`error`).
fn record_stream(
    rec: &mut loadlab_metrics::Recorder,
    req: &crate::prepare::PreparedRequest,
    data: Option<&crate::transport::ResponseData>,
    from: Instant,
    error: Option<ErrorKind>,
) {
    let (Some(s), Some(reader), None) =
        (&req.stream, data.and_then(|d| d.stream.as_deref()), error)
    else {
        return;
    };
    rec.record_stream(
        req.step,
        &crate::stream::measure(reader, from, false, &s.objectives),
    );
}
