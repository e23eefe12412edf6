//! The resource monitor beside a run: started before the load (aligned to the run's interval
//! boundaries), its samples handed to the coordinator interval by interval on the run's time
//! axis, stopped with the last interval. A monitor that cannot start is a warning, never a
//! reason not to run.

use loadlab_monitor::{Monitor, MonitorHandle, Sample};
use loadlab_record::RecordedSample;
use loadlab_scenario::monitor::MonitorConfig;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Where the coordinator gets the samples of each interval from.
pub trait ResourceFeed: Send {
    /// The samples that end no later than `end` (time since the plan's start), waiting up to
    /// `wait` for one that is due by then.
    fn until(&mut self, end: Duration, wait: Duration) -> Vec<RecordedSample>;
    /// Stops sampling: every sample not handed out yet (the last covers the partial
    /// interval at the end), and the monitor's own CPU (% of one core).
    fn finish(&mut self) -> (Vec<RecordedSample>, Option<f64>);
}

/// A running monitor, its samples moved onto the plan's time axis.
pub struct MonitorFeed {
    handle: Option<MonitorHandle>,
    /// Plan start − monitor start.
    offset: Duration,
    interval: Duration,
    /// Received but not handed out yet.
    buffer: VecDeque<Sample>,
    /// End (plan time) of the last sample received.
    last_end: Option<Duration>,
    /// Samples that end this close after an interval's end still belong to it.
    tolerance: Duration,
}

/// Samples that end this close after an interval's end still belong to it (timer jitter),
/// unless the intervals are so short that this would reach into the next one.
const TOLERANCE: Duration = Duration::from_millis(150);

impl MonitorFeed {
    /// Starts the monitor so that its samples end on `plan_start + k × interval`; `Err` is
    /// the warning to print when it cannot start. `slice`: the record's interval length.
    pub fn start(
        config: &MonitorConfig,
        plan_start: Instant,
        slice: Duration,
    ) -> Result<MonitorFeed, String> {
        let handle = Monitor::start_aligned(config, Some(plan_start))
            .map_err(|e| format!("resources are not monitored in this run: {e}"))?;
        let offset = plan_start.saturating_duration_since(handle.started());
        Ok(MonitorFeed {
            handle: Some(handle),
            offset,
            interval: config.interval,
            buffer: VecDeque::new(),
            last_end: None,
            tolerance: TOLERANCE.min(slice * 2 / 5),
        })
    }

    /// The sample on the plan's axis; `None` when it ended before the plan started.
    fn on_plan_axis(&self, mut s: Sample) -> Option<Sample> {
        let end = Duration::from_millis(s.elapsed_ms).checked_sub(self.offset)?;
        if end.is_zero() {
            return None;
        }
        s.elapsed_ms = end.as_millis() as u64;
        Some(s)
    }

    fn receive(&mut self, s: Sample) {
        if let Some(s) = self.on_plan_axis(s) {
            self.last_end = Some(Duration::from_millis(s.elapsed_ms));
            self.buffer.push_back(s);
        }
    }

    fn take_until(&mut self, end: Duration) -> Vec<RecordedSample> {
        let mut out = Vec::new();
        while let Some(s) = self.buffer.front() {
            if Duration::from_millis(s.elapsed_ms) > end + self.tolerance {
                break;
            }
            let sample = self.buffer.pop_front().expect("peeked");
            out.push(RecordedSample {
                segment: None,
                sample,
            });
        }
        out
    }
}

impl ResourceFeed for MonitorFeed {
    fn until(&mut self, end: Duration, wait: Duration) -> Vec<RecordedSample> {
        let Some(handle) = self.handle.as_mut() else {
            return self.take_until(end);
        };
        let drained = handle.drain();
        for s in drained {
            self.receive(s);
        }
        // A sample is due by `end` when the next boundary is no later than it.
        let next_due = self.last_end.map_or(self.interval, |t| t + self.interval);
        if next_due <= end + self.tolerance {
            let deadline = Instant::now() + wait;
            while self.last_end.is_none_or(|t| t + self.tolerance < end) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let Some(handle) = self.handle.as_mut() else {
                    break;
                };
                match handle.recv_timeout(left) {
                    Some(s) => self.receive(s),
                    None => break,
                }
            }
        }
        self.take_until(end)
    }

    fn finish(&mut self) -> (Vec<RecordedSample>, Option<f64>) {
        let Some(handle) = self.handle.take() else {
            return (self.take_until(Duration::MAX / 2), None);
        };
        let report = handle.stop();
        for s in report.samples {
            self.receive(s);
        }
        (
            self.take_until(Duration::MAX / 2),
            Some(report.cost.cpu_percent),
        )
    }
}
