//! What the live thresholds read, kept as a running sum: per window length, only the scopes
//! and histograms its thresholds need, the newest interval added and the oldest subtracted
//! (HDR histograms subtract exactly). Judging an interval then costs a few histogram
//! additions and subtractions, where folding the window's intervals into a fresh summary and
//! finishing it (every step, group, percentile and encoding) cost tens of milliseconds.

use super::histogram_stat;
use loadlab_metrics::{
    LazyHistogram, Phase, StepDelta, StreamCounts, StreamResult, StreamSeries, StreamTime,
};
use loadlab_record::{IntervalRecord, RecordMeta};
use loadlab_scenario::threshold::{Quantity, Scope};
use loadlab_scenario::Threshold;
use std::collections::VecDeque;

/// Slack for comparing interval boundaries (they are sums of f64 lengths).
const EPS: f64 = 1e-6;

/// The histogram a threshold reads, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Series {
    Latency,
    Service,
    Phase(Phase),
    Stream(StreamTime),
}

impl Series {
    fn of(step: &StepDelta, series: Series) -> &LazyHistogram {
        match series {
            Series::Latency => &step.latency,
            Series::Service => &step.service,
            Series::Phase(p) => step.phases.get(p),
            Series::Stream(t) => step.stream_series.get(t),
        }
    }
}

/// The steps a threshold's scope adds up.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cover {
    /// Every step (the run).
    All,
    /// These steps (one step, or a group's).
    Steps(Vec<usize>),
    /// Nothing the record has (a step or group it does not name, a group's phase): no value.
    Nothing,
}

/// One scope and histogram that some threshold reads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Need {
    cover: Cover,
    series: Option<Series>,
    /// `latency_compensated`: the schedule's interval (µs). Live, only a declared `pace` is
    /// known (an inferred schedule comes from the run's first interval, at the end).
    compensate_us: Option<u64>,
}

impl Need {
    fn of(t: &Threshold, meta: &RecordMeta) -> Need {
        let series = match t.metric.quantity {
            Quantity::Latency(_) | Quantity::CompensatedLatency(_) => Some(Series::Latency),
            Quantity::ServiceTime(_) => Some(Series::Service),
            Quantity::Phase(p, _) => Some(Series::Phase(p)),
            Quantity::StreamTime(t, _) => Some(Series::Stream(t)),
            _ => None,
        };
        let streams = matches!(
            t.metric.quantity,
            Quantity::StreamTime(..) | Quantity::Stream(_)
        );
        let cover = match &t.metric.scope {
            Scope::All => Cover::All,
            Scope::Step(name) => match meta.steps.iter().position(|s| &s.name == name) {
                Some(i) => Cover::Steps(vec![i]),
                None => Cover::Nothing,
            },
            // Groups have no phases and no stream figures (as in run.json).
            Scope::Group(_) if streams || matches!(series, Some(Series::Phase(_))) => {
                Cover::Nothing
            }
            Scope::Group(name) => {
                let steps: Vec<usize> = meta
                    .steps
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.group.as_ref() == Some(name))
                    .map(|(i, _)| i)
                    .collect();
                if steps.is_empty() {
                    Cover::Nothing
                } else {
                    Cover::Steps(steps)
                }
            }
        };
        let compensate_us = match t.metric.quantity {
            Quantity::CompensatedLatency(_) => meta
                .load
                .pace_ms
                .map(loadlab_metrics::compensation::interval_us),
            _ => None,
        };
        Need {
            cover,
            series,
            compensate_us,
        }
    }
}

/// One need's figures over an interval, or summed over a window.
#[derive(Debug, Clone, Default)]
struct Figures {
    requests: u64,
    failed: u64,
    histogram: LazyHistogram,
    stream: StreamCounts,
}

impl Figures {
    /// `need`'s share of the steps of one interval.
    fn of(need: &Need, steps: &[StepDelta]) -> Figures {
        let mut f = Figures::default();
        f.add_steps(need, steps);
        f
    }

    fn add_steps(&mut self, need: &Need, steps: &[StepDelta]) {
        let mut add = |s: &StepDelta| {
            self.requests += s.requests;
            self.failed += s.failed;
            self.stream.add(&s.stream);
            if let Some(series) = need.series {
                self.histogram.add(Series::of(s, series));
            }
        };
        match &need.cover {
            Cover::All => steps.iter().for_each(&mut add),
            Cover::Steps(ids) => ids.iter().filter_map(|&i| steps.get(i)).for_each(add),
            Cover::Nothing => {}
        }
    }

    fn add(&mut self, other: &Figures) {
        self.requests += other.requests;
        self.failed += other.failed;
        self.stream.add(&other.stream);
        self.histogram.add(&other.histogram);
    }

    /// False when `other` was not all in it (never, unless a bug): the caller re-adds.
    fn subtract(&mut self, other: &Figures) -> bool {
        let (s, o) = (&mut self.stream, &other.stream);
        let counted = self.requests >= other.requests
            && self.failed >= other.failed
            && s.streams >= o.streams
            && s.events >= o.events
            && s.input_tokens >= o.input_tokens
            && s.output_tokens >= o.output_tokens
            && s.good >= o.good;
        s.streams = s.streams.saturating_sub(o.streams);
        s.events = s.events.saturating_sub(o.events);
        s.input_tokens = s.input_tokens.saturating_sub(o.input_tokens);
        s.output_tokens = s.output_tokens.saturating_sub(o.output_tokens);
        s.good = s.good.saturating_sub(o.good);
        self.requests = self.requests.saturating_sub(other.requests);
        self.failed = self.failed.saturating_sub(other.failed);
        counted && self.histogram.subtract(&other.histogram).is_ok()
    }
}

/// One measured interval's figures, per need.
struct Slice {
    start_s: f64,
    length_s: f64,
    needs: Vec<Figures>,
}

/// The figures of one window length (or of everything measured so far), per need.
pub(super) struct RunningWindow {
    /// `None`: the whole measured run (nothing is ever dropped, no slice is kept).
    window_s: Option<f64>,
    needs: Vec<Need>,
    totals: Vec<Figures>,
    /// The measured intervals inside the window (windowed only), oldest first.
    slices: VecDeque<Slice>,
    /// Measured time of the whole run (summed in the order the summary sums it).
    measured_s: f64,
}

impl RunningWindow {
    pub fn new(window_s: Option<f64>) -> Self {
        RunningWindow {
            window_s,
            needs: Vec::new(),
            totals: Vec::new(),
            slices: VecDeque::new(),
            measured_s: 0.0,
        }
    }

    /// Where `t`'s figures are kept (a need shared by thresholds reading the same thing is
    /// kept once). Call before the first interval.
    pub fn need(&mut self, t: &Threshold, meta: &RecordMeta) -> usize {
        let need = Need::of(t, meta);
        match self.needs.iter().position(|n| *n == need) {
            Some(i) => i,
            None => {
                self.needs.push(need);
                self.totals.push(Figures::default());
                self.needs.len() - 1
            }
        }
    }

    /// Adds a measured interval, and drops those that left the window.
    pub fn add(&mut self, r: &IntervalRecord) {
        let steps = &r.delta.steps;
        let Some(window_s) = self.window_s else {
            for (total, need) in self.totals.iter_mut().zip(&self.needs) {
                total.add_steps(need, steps);
            }
            self.measured_s += r.length_s;
            return;
        };
        let slice = Slice {
            start_s: r.start_s,
            length_s: r.length_s,
            needs: self.needs.iter().map(|n| Figures::of(n, steps)).collect(),
        };
        for (total, f) in self.totals.iter_mut().zip(&slice.needs) {
            total.add(f);
        }
        self.slices.push_back(slice);
        let end_s = r.start_s + r.length_s;
        let mut whole = true;
        while self
            .slices
            .front()
            .is_some_and(|s| s.start_s < end_s - window_s - EPS)
        {
            let old = self.slices.pop_front().expect("checked");
            for (total, f) in self.totals.iter_mut().zip(&old.needs) {
                whole &= total.subtract(f);
            }
        }
        if !whole {
            self.recount();
        }
    }

    /// Sums the kept slices again (after a subtraction that should not have failed).
    fn recount(&mut self) {
        for total in &mut self.totals {
            *total = Figures::default();
        }
        for slice in &self.slices {
            for (total, f) in self.totals.iter_mut().zip(&slice.needs) {
                total.add(f);
            }
        }
    }

    /// Measured seconds in the window.
    fn duration_s(&self) -> f64 {
        match self.window_s {
            None => self.measured_s,
            Some(_) => self.slices.iter().map(|s| s.length_s).sum(),
        }
    }

    /// `t`'s value over the window from need `need` (as `super::actual_value` reads it from
    /// a summary); `None` without data.
    pub fn value(&self, t: &Threshold, need: usize) -> Option<f64> {
        if self.needs[need].cover == Cover::Nothing {
            return None;
        }
        let f = &self.totals[need];
        match t.metric.quantity {
            Quantity::ErrorRate => (f.requests > 0).then(|| f.failed as f64 / f.requests as f64),
            Quantity::Requests => Some(f.requests as f64),
            Quantity::Failed => Some(f.failed as f64),
            Quantity::RequestRate => {
                let d = self.duration_s();
                (d > 0.0).then(|| f.requests as f64 / d)
            }
            Quantity::Latency(stat)
            | Quantity::ServiceTime(stat)
            | Quantity::Phase(_, stat)
            | Quantity::StreamTime(_, stat) => histogram_stat(stat, f.histogram.get()?),
            Quantity::CompensatedLatency(stat) => {
                let interval_us = self.needs[need].compensate_us?;
                let raw = f.histogram.get()?;
                histogram_stat(
                    stat,
                    &loadlab_metrics::compensation::compensate(raw, interval_us),
                )
            }
            Quantity::Stream(figure) => {
                if f.stream.is_empty() {
                    return None;
                }
                let result =
                    StreamResult::of(&f.stream, &StreamSeries::default(), self.duration_s());
                super::stream_figure(figure, &result)
            }
        }
    }
}
