//! WebSocket sessions (RFC 6455) as a step of a flow: an arrival opens its own connection,
//! upgrades it, runs the session's actions, stays open for `close_after`, and closes.
//!
//! Recorded like any step: the session's step takes the upgrade (latency from the intended
//! start in the open model, service time from when it was wanted, status 101, connect and
//! TLS phases), the session's duration, its messages, bytes and close code; each `expect`
//! is a step of its own whose latency is the round trip from the last send. The session's
//! own failures (abnormal close, protocol error) count on its step, an `expect`'s on the
//! expectation's.

mod classify;
mod session;
mod step;
mod upgrade;
