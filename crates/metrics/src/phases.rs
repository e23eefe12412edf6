//! The k6-like breakdown of a request's service time (connect, TLS handshake, waiting for
//! the first byte, receiving), one HDR histogram per phase, and its summary in `run.json`.
//! Connect and TLS histograms hold only the requests that opened a connection, so their
//! counts are connections, not requests.

use crate::histogram::LazyHistogram;
use crate::outcome::Phases;
use crate::result::{encode_nonempty, LatencySummary};
use serde::{Deserialize, Serialize};

/// A phase of a request, as the record tags it (`waiting.s3`) and `run.json` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Connect,
    TlsHandshake,
    Waiting,
    Receiving,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::Connect,
        Phase::TlsHandshake,
        Phase::Waiting,
        Phase::Receiving,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Connect => "connect",
            Phase::TlsHandshake => "tls_handshake",
            Phase::Waiting => "waiting",
            Phase::Receiving => "receiving",
        }
    }
}

/// One histogram per phase (each allocated at its first value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseHistograms {
    pub connect: LazyHistogram,
    pub tls_handshake: LazyHistogram,
    pub waiting: LazyHistogram,
    pub receiving: LazyHistogram,
}

impl PhaseHistograms {
    #[inline]
    pub fn record(&mut self, p: &Phases) {
        if let Some(us) = p.waiting_us {
            self.waiting.record(us);
        }
        if let Some(us) = p.receiving_us {
            self.receiving.record(us);
        }
        // Rare: only requests that opened a connection.
        if let Some(us) = p.connect_us {
            self.connect.record(us);
        }
        if let Some(us) = p.tls_us {
            self.tls_handshake.record(us);
        }
    }

    pub fn get(&self, phase: Phase) -> &LazyHistogram {
        match phase {
            Phase::Connect => &self.connect,
            Phase::TlsHandshake => &self.tls_handshake,
            Phase::Waiting => &self.waiting,
            Phase::Receiving => &self.receiving,
        }
    }

    pub fn get_mut(&mut self, phase: Phase) -> &mut LazyHistogram {
        match phase {
            Phase::Connect => &mut self.connect,
            Phase::TlsHandshake => &mut self.tls_handshake,
            Phase::Waiting => &mut self.waiting,
            Phase::Receiving => &mut self.receiving,
        }
    }

    /// Adds every value of `other` (exact).
    pub fn add(&mut self, other: &PhaseHistograms) {
        for phase in Phase::ALL {
            self.get_mut(phase).add(other.get(phase));
        }
    }

    /// Empties them, keeping their memory.
    pub fn clear(&mut self) {
        for phase in Phase::ALL {
            self.get_mut(phase).clear();
        }
    }

    /// The summary, `None` when no phase was measured (fake transports, old records).
    pub fn summary(&self) -> Option<PhaseSummary> {
        let of = |phase| self.get(phase).get().map(LatencySummary::of);
        let s = PhaseSummary {
            connect: of(Phase::Connect),
            tls_handshake: of(Phase::TlsHandshake),
            waiting: of(Phase::Waiting),
            receiving: of(Phase::Receiving),
        };
        (s != PhaseSummary::default()).then_some(s)
    }

    /// Base64 encodings, empty for a phase without data.
    pub fn encoded(&self, phase: Phase) -> String {
        self.get(phase)
            .get()
            .map(encode_nonempty)
            .unwrap_or_default()
    }
}

/// `phases_ms` of a run or a step: where service time went, k6's `http_req_connecting`,
/// `http_req_tls_handshaking`, `http_req_waiting` and `http_req_receiving`. A phase with no
/// data is left out. `connect` and `tls_handshake` count only the requests that opened a
/// connection (with keep-alive, few do).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct PhaseSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_handshake: Option<LatencySummary>,
    /// Time to first byte, after the request was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<LatencySummary>,
    /// First byte to complete response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiving: Option<LatencySummary>,
}

impl PhaseSummary {
    pub fn get(&self, phase: Phase) -> Option<&LatencySummary> {
        match phase {
            Phase::Connect => self.connect.as_ref(),
            Phase::TlsHandshake => self.tls_handshake.as_ref(),
            Phase::Waiting => self.waiting.as_ref(),
            Phase::Receiving => self.receiving.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_record_only_what_happened_and_add_exactly() {
        let mut a = PhaseHistograms::default();
        let mut b = PhaseHistograms::default();
        a.record(&Phases {
            connect_us: Some(120),
            tls_us: None,
            waiting_us: Some(900),
            receiving_us: Some(30),
        });
        b.record(&Phases {
            waiting_us: Some(1_100),
            receiving_us: Some(50),
            ..Phases::default()
        });
        b.record(&Phases::default());
        a.add(&b);
        let s = a.summary().unwrap();
        assert_eq!(s.connect.unwrap().count, 1, "connections, not requests");
        assert_eq!(s.tls_handshake, None);
        assert_eq!(s.waiting.unwrap().count, 2);
        assert_eq!(s.waiting.unwrap().max, 1.1);
        assert_eq!(s.receiving.unwrap().p50, 0.03);
        assert!(a.encoded(Phase::TlsHandshake).is_empty());
        assert!(!a.encoded(Phase::Waiting).is_empty());
        a.clear();
        assert_eq!(a.summary(), None);
        assert!(a.waiting.is_reserved(), "its memory kept");
    }
}
