//! The hub between the run and the browsers: it keeps the current run's events (bounded, for
//! late joiners) and hands every new event to each connected client's bounded queue. Sending
//! never waits: a client whose queue is full is dropped (its browser reconnects and gets the
//! history again), so a slow or gone browser never holds up the engine's coordinator.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};

/// Frames of the current run kept for a browser that connects late (10 minutes of 1 s
/// intervals; a short run's 100 ms slices fit many times).
pub const HISTORY: usize = 600;
/// Events waiting for one client before it is dropped.
pub const CLIENT_QUEUE: usize = 256;

/// One serialized SSE message (`id:`/`data:` lines and the blank line).
pub type Message = Arc<str>;

/// A client's end of its queue, and how many messages wait in it.
pub struct Subscription {
    pub messages: Receiver<Message>,
    pub pending: Arc<AtomicUsize>,
}

struct Client {
    queue: SyncSender<Message>,
    pending: Arc<AtomicUsize>,
}

#[derive(Default)]
struct State {
    /// The current run's start, its frames (at most [`HISTORY`]) and its end.
    run_start: Option<Message>,
    frames: VecDeque<Message>,
    run_end: Option<Message>,
    context: Option<Message>,
    end: Option<Message>,
    /// The latest events as plain JSON, for `/api/state`.
    last_frame_json: Option<Arc<str>>,
    run_start_json: Option<Arc<str>>,
    context_json: Option<Arc<str>>,
    end_json: Option<Arc<str>>,
    clients: Vec<Client>,
    next_id: u64,
}

/// Which part of the state an event replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    RunStart,
    Frame,
    RunEnd,
    Context,
    End,
}

#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
    /// Clients dropped because their queue was full.
    dropped_clients: AtomicU64,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking client thread must not take the dashboard down with it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `json` (one event) and sends it to every client.
    pub fn publish(&self, kind: Kind, json: String) {
        let mut s = self.lock();
        s.next_id += 1;
        let message: Message = format!("id: {}\ndata: {json}\n\n", s.next_id).into();
        let json: Arc<str> = json.into();
        match kind {
            Kind::RunStart => {
                s.run_start = Some(message.clone());
                s.run_start_json = Some(json);
                s.frames.clear();
                s.run_end = None;
                s.last_frame_json = None;
            }
            Kind::Frame => {
                if s.frames.len() == HISTORY {
                    s.frames.pop_front();
                }
                s.frames.push_back(message.clone());
                s.last_frame_json = Some(json);
            }
            Kind::RunEnd => s.run_end = Some(message.clone()),
            Kind::Context => {
                s.context = Some(message.clone());
                s.context_json = Some(json);
            }
            Kind::End => {
                s.end = Some(message.clone());
                s.end_json = Some(json);
            }
        }
        let before = s.clients.len();
        s.clients
            .retain(|c| match c.queue.try_send(message.clone()) {
                Ok(()) => {
                    c.pending.fetch_add(1, Ordering::Relaxed);
                    true
                }
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
            });
        let gone = (before - s.clients.len()) as u64;
        self.dropped_clients.fetch_add(gone, Ordering::Relaxed);
    }

    /// A new client: its queue, already holding what happened so far (the context, the
    /// current run's start, its last [`HISTORY`] frames, its end, the command's end).
    pub fn subscribe(&self) -> Subscription {
        let mut s = self.lock();
        let backlog: Vec<Message> = s
            .context
            .iter()
            .chain(s.run_start.iter())
            .chain(s.frames.iter())
            .chain(s.run_end.iter())
            .chain(s.end.iter())
            .cloned()
            .collect();
        let (queue, messages) = sync_channel(CLIENT_QUEUE + backlog.len());
        let pending = Arc::new(AtomicUsize::new(backlog.len()));
        for m in backlog {
            // Cannot fail: the queue was made large enough.
            let _ = queue.try_send(m);
        }
        s.clients.push(Client {
            queue,
            pending: pending.clone(),
        });
        Subscription { messages, pending }
    }

    /// `/api/state`: the current run's start, its latest frame, the context and the end.
    pub fn state_json(&self) -> String {
        let s = self.lock();
        let or_null = |v: &Option<Arc<str>>| v.as_deref().unwrap_or("null").to_string();
        format!(
            "{{\"run_start\":{},\"last_frame\":{},\"frames_kept\":{},\"context\":{},\"end\":{},\"clients\":{}}}",
            or_null(&s.run_start_json),
            or_null(&s.last_frame_json),
            s.frames.len(),
            or_null(&s.context_json),
            or_null(&s.end_json),
            s.clients.len()
        )
    }

    /// Messages still queued for the connected clients.
    pub fn pending(&self) -> usize {
        self.lock()
            .clients
            .iter()
            .map(|c| c.pending.load(Ordering::Relaxed))
            .sum()
    }

    pub fn dropped_clients(&self) -> u64 {
        self.dropped_clients.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_joiners_get_the_current_run_and_full_queues_are_dropped() {
        let hub = Hub::default();
        hub.publish(Kind::RunStart, "{\"type\":\"run_start\",\"seq\":1}".into());
        for i in 0..(HISTORY + 5) {
            hub.publish(Kind::Frame, format!("{{\"i\":{i}}}"));
        }
        let late = hub.subscribe();
        let got: Vec<Message> = late.messages.try_iter().collect();
        assert_eq!(got.len(), 1 + HISTORY);
        assert!(got[0].contains("run_start"));
        assert!(got[1].contains("{\"i\":5}"), "{}", got[1]);
        assert!(got[HISTORY].contains(&format!("{{\"i\":{}}}", HISTORY + 4)));
        // A new run replaces the history.
        hub.publish(Kind::RunStart, "{\"type\":\"run_start\",\"seq\":2}".into());
        let next = hub.subscribe();
        assert_eq!(next.messages.try_iter().count(), 1);
        // `late` read nothing since: its queue fills and it is dropped, never waited for.
        let stalled = hub.subscribe();
        for i in 0..(CLIENT_QUEUE + 2) {
            hub.publish(Kind::Frame, format!("{{\"i\":{i}}}"));
        }
        assert!(hub.dropped_clients() >= 1);
        drop(stalled);
        drop(next);
        drop(late);
        hub.publish(Kind::End, "{}".into());
        assert_eq!(hub.pending(), 0);
    }
}
