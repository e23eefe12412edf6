//! A session as a step of its flow: its rows taken, its upgrade, its run, and what it did
//! recorded on its step (the upgrade's latency and status, counters, duration, close code).

use super::session::Session;
use super::upgrade::Upgraded;
use crate::flow::{Next, Span, Worker};
use crate::prepare::{PreparedWs, PreparedWsAction};
use crate::transport::Transport;
use crate::vu::VuState;
use loadlab_metrics::micros;
use loadlab_metrics::{Outcome, Phases, WsCounts, CLOSE_ABNORMAL};
use tokio::time::Instant;

impl<T: Transport> Worker<T> {
    /// Runs session `ws` for `vu` and records it. `first`: the iteration's first step, whose
    /// latency runs from `intended`.
    pub(crate) async fn ws_session(
        &self,
        ws: &PreparedWs,
        vu: &mut VuState,
        intended: Option<Instant>,
        first: bool,
        timing: &mut Span,
    ) -> Next {
        if !ws.data_sets.is_empty() && !self.take_rows(&ws.data_sets, vu) {
            return Next::StopVu;
        }
        self.begin(ws.step);
        let wanted = Instant::now();
        timing.start.get_or_insert(wanted);
        let measured_from = match intended {
            Some(at) if first => at.min(wanted),
            _ => wanted,
        };
        let upgraded = self.ws_upgrade(ws, vu, wanted).await;
        let upgraded_at = Instant::now();
        let mut outcome = Outcome {
            step: ws.step,
            latency_us: micros(upgraded_at - measured_from),
            service_us: micros(upgraded_at - wanted),
            lag_us: first
                .then(|| intended.map(|at| micros(wanted.saturating_duration_since(at))))
                .flatten(),
            server_us: None,
            trace_id: None,
            status: 0,
            error: None,
            bytes_sent: 0,
            bytes_received: 0,
            phases: Phases::default(),
        };
        let has_captures = ws
            .actions
            .iter()
            .any(|a| matches!(a, PreparedWsAction::Capture(_)));
        let upgraded = match upgraded {
            Ok(u) => u,
            Err(failed) => {
                timing.end = Some(upgraded_at);
                outcome.status = failed.status;
                outcome.error = Some(failed.failure.kind);
                let mut rec = self.recorder.borrow_mut();
                rec.record(&outcome);
                rec.note_error(failed.failure.kind, || {
                    format!("step `{}`: {}", self.ws_name(ws), failed.failure.message)
                });
                return if has_captures {
                    Next::StopIteration
                } else {
                    Next::Continue
                };
            }
        };
        let failed = self.ws_run(ws, vu, upgraded, upgraded_at, outcome).await;
        timing.end = Some(Instant::now());
        if failed && has_captures {
            Next::StopIteration
        } else {
            Next::Continue
        }
    }

    /// Runs an upgraded session to its close and records it on its step with `outcome` (the
    /// upgrade's). True when the session or one of its expectations failed.
    async fn ws_run(
        &self,
        ws: &PreparedWs,
        vu: &mut VuState,
        upgraded: Upgraded,
        upgraded_at: Instant,
        mut outcome: Outcome,
    ) -> bool {
        let Upgraded {
            socket,
            opened,
            bytes_sent,
        } = upgraded;
        outcome.status = 101;
        outcome.phases = Phases {
            connect_us: Some(opened.connect_us),
            tls_us: opened.tls_us,
            ..Phases::default()
        };
        let close_at = ws.close_after.map(|d| upgraded_at + d);
        let mut session = Session {
            worker: self,
            ws,
            socket,
            counts: WsCounts::default(),
            last_send: upgraded_at,
            end: close_at.map_or(self.end, |at| at.min(self.end)),
            close_at,
            last: None,
            timer: Box::pin(tokio::time::sleep_until(upgraded_at)),
            pending: None,
            close: None,
            error: None,
            failed_step: false,
        };
        session.run(vu).await;
        let Session {
            mut counts,
            close,
            error,
            failed_step,
            ..
        } = session;
        counts.add_ending(close.unwrap_or(CLOSE_ABNORMAL), 1);
        outcome.bytes_sent = bytes_sent + counts.bytes_sent;
        outcome.bytes_received = counts.bytes_received;
        outcome.error = error.as_ref().map(|(k, _)| *k);
        let mut rec = self.recorder.borrow_mut();
        rec.record_ws(ws.step, &counts, Some(micros(upgraded_at.elapsed())));
        rec.record(&outcome);
        if let Some((kind, message)) = error {
            rec.note_error(kind, || format!("step `{}`: {message}", self.ws_name(ws)));
        }
        failed_step || outcome.error.is_some()
    }

    fn ws_name(&self, ws: &PreparedWs) -> &str {
        &self.scenario.steps[ws.step as usize].name
    }
}
