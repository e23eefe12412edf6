//! The inference server the target models: one decode loop (a "GPU") that runs at most
//! `batch` sequences at once (continuous batching: a sequence joins at the next step and
//! leaves when done); the rest wait in a queue. A step takes `step_time + step_per_seq ×
//! sequences`, plus the prefill of the sequences that joined (`prefill_per_token × prompt
//! tokens`), and gives each running sequence one token. So time to first token grows with
//! the queue and the prompt, and time per token with the batch — as a vLLM server's do.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How the modelled inference server behaves (`loadlab target --batch 8`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmConfig {
    /// Sequences decoded together at most; more wait in the queue.
    pub batch: usize,
    /// Prefill time per prompt token, spent in the step a sequence joins.
    pub prefill_per_token: Duration,
    /// A decode step with one sequence.
    pub step_time: Duration,
    /// Added to a step per sequence in the batch.
    pub step_per_seq: Duration,
    /// Tokens generated when a request asks for no `max_tokens`.
    pub default_max_tokens: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            batch: 8,
            prefill_per_token: Duration::from_micros(100),
            step_time: Duration::from_millis(8),
            step_per_seq: Duration::from_micros(500),
            default_max_tokens: 16,
        }
    }
}

/// What a sequence's stream receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// Token number `n` (1-based).
    Token(u32),
    /// All tokens were generated.
    Done,
}

/// A request to generate.
#[derive(Debug)]
pub struct Seq {
    pub prompt_tokens: u32,
    pub max_tokens: u32,
    pub tx: mpsc::UnboundedSender<Out>,
}

/// Counts for `/metrics`.
#[derive(Debug, Default)]
pub struct LlmCounters {
    pub requests: AtomicU64,
    pub tokens: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub waiting: AtomicU64,
    pub running: AtomicU64,
    /// Streams whose client went away before the end.
    pub cancelled: AtomicU64,
}

/// Runs the decode loop until every sender of `rx` is gone.
pub async fn run(
    config: LlmConfig,
    mut rx: mpsc::UnboundedReceiver<Seq>,
    counters: Arc<LlmCounters>,
) {
    let mut waiting: VecDeque<Seq> = VecDeque::new();
    let mut running: Vec<(Seq, u32)> = Vec::new();
    loop {
        if running.is_empty() && waiting.is_empty() {
            match rx.recv().await {
                Some(s) => waiting.push_back(s),
                None => return,
            }
        }
        while let Ok(s) = rx.try_recv() {
            waiting.push_back(s);
        }
        let mut step = config.step_time;
        while running.len() < config.batch.max(1) {
            let Some(s) = waiting.pop_front() else { break };
            step += config.prefill_per_token * s.prompt_tokens;
            running.push((s, 0));
        }
        step += config.step_per_seq * running.len() as u32;
        counters.waiting.store(waiting.len() as u64, Relaxed);
        counters.running.store(running.len() as u64, Relaxed);
        tokio::time::sleep(step).await;
        running.retain_mut(|(s, generated)| {
            *generated += 1;
            if s.tx.send(Out::Token(*generated)).is_err() {
                counters.cancelled.fetch_add(1, Relaxed);
                return false;
            }
            counters.tokens.fetch_add(1, Relaxed);
            if *generated >= s.max_tokens {
                let _ = s.tx.send(Out::Done);
                return false;
            }
            true
        });
        counters.running.store(running.len() as u64, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `n` sequences at once; returns each one's token arrival times (ms from start).
    async fn arrivals(config: LlmConfig, n: usize, max_tokens: u32) -> Vec<Vec<u64>> {
        let counters = Arc::new(LlmCounters::default());
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(config, rx, counters));
        let start = tokio::time::Instant::now();
        let mut streams = Vec::new();
        for _ in 0..n {
            let (stx, srx) = mpsc::unbounded_channel();
            tx.send(Seq {
                prompt_tokens: 10,
                max_tokens,
                tx: stx,
            })
            .unwrap();
            streams.push(srx);
        }
        // Each stream is read by a task of its own, as a connection's is: a test body that
        // awaited the streams in turn ran only once the engine had finished (current-thread
        // runtime, paused clock), and read every token at the batch's last step.
        let readers: Vec<_> = streams
            .into_iter()
            .map(|mut s| {
                tokio::spawn(async move {
                    let mut times = Vec::new();
                    while let Some(o) = s.recv().await {
                        if let Out::Token(_) = o {
                            times.push(start.elapsed().as_millis() as u64);
                        }
                    }
                    times
                })
            })
            .collect();
        let mut out = Vec::new();
        for r in readers {
            out.push(r.await.unwrap());
        }
        out
    }

    #[tokio::test(start_paused = true)]
    async fn batching_queues_beyond_the_batch_and_slows_steps_with_more_sequences() {
        let config = LlmConfig {
            batch: 2,
            prefill_per_token: Duration::from_millis(1),
            step_time: Duration::from_millis(10),
            step_per_seq: Duration::from_millis(5),
            default_max_tokens: 3,
        };
        let t = arrivals(config, 3, 3).await;
        // Two join at once: prefill 2 × 10 ms, step 10 + 2 × 5 ms → first tokens at 40 ms,
        // then a token every 20 ms.
        assert_eq!(t[0], [40, 60, 80]);
        assert_eq!(t[1], [40, 60, 80]);
        // The third waits for a free slot: it joins after 80 ms, alone (prefill 10 + step 15).
        assert_eq!(t[2], [105, 120, 135]);
        // Alone, a sequence decodes faster than in a batch of two.
        let alone = arrivals(config, 1, 3).await;
        assert_eq!(alone[0], [25, 40, 55]);
    }
}
