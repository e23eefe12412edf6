//! What a message protocol adds to a step's counters: messages and their payload bytes each
//! way, and how each call or session ended (a gRPC call's `grpc-status`, a WebSocket session's
//! close code). One type for both protocols; they add exactly, so merges stay exact.

/// A step's message counters in one interval (or summed over many); `C` is how a call or
/// session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageCounts<C> {
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Payload bytes of the messages (frame headers and prefixes not counted).
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// (how it ended, calls or sessions), sorted by the first.
    pub endings: Vec<(C, u64)>,
}

impl<C> Default for MessageCounts<C> {
    fn default() -> Self {
        Self {
            messages_sent: 0,
            messages_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            endings: Vec::new(),
        }
    }
}

impl<C: Ord + Copy> MessageCounts<C> {
    pub fn is_empty(&self) -> bool {
        self.endings.is_empty() && self.messages_sent == 0 && self.messages_received == 0
    }

    pub fn add(&mut self, other: &MessageCounts<C>) {
        self.messages_sent += other.messages_sent;
        self.messages_received += other.messages_received;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        for &(ending, n) in &other.endings {
            self.add_ending(ending, n);
        }
    }

    /// Counts `n` calls or sessions that ended with `ending` (kept sorted, so equal counts
    /// compare equal).
    pub fn add_ending(&mut self, ending: C, n: u64) {
        crate::delta::add_sorted(&mut self.endings, ending, n);
    }
}
