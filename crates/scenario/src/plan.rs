//! The load plan as pure functions of time: how many VUs at t, when arrival n is intended.
//!
//! No clock lives here. The engine asks "when is my next arrival?" and sleeps until then, so
//! the schedule is table-tested without running anything.

use crate::model::{BurstLoad, ClosedLoad, Load, OpenLoad, RateStage, Scenario};
pub use crate::segment::Segment;
use std::borrow::Cow;
use std::time::Duration;

/// What happens when: the load shape plus the warm-up that statistics exclude.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub load: Load,
    pub warmup: Duration,
}

impl Scenario {
    pub fn plan(&self) -> Plan {
        Plan {
            load: self.load.clone(),
            warmup: self.warmup,
        }
    }
}

impl Plan {
    /// Planned length of the run; for iteration- or burst-bound runs, the upper bound.
    pub fn duration(&self) -> Duration {
        match &self.load {
            Load::Closed(c) => c.duration(),
            Load::Open(o) => o.duration(),
            Load::Burst(b) => b.max_duration,
        }
    }

    /// The planned load over time as chart points: `(true, (t, VUs))` for a closed model,
    /// `(false, (t, arrivals/s))` for an open one; `None` for a burst.
    pub fn planned_points(&self) -> Option<(bool, Vec<(f64, f64)>)> {
        match &self.load {
            Load::Closed(c) => {
                let mut t = 0.0;
                let mut points = vec![(0.0, f64::from(c.start_vus))];
                for s in &c.stages {
                    t += s.duration.as_secs_f64();
                    points.push((t, f64::from(s.vus)));
                }
                Some((true, points))
            }
            Load::Open(o) => {
                let mut t = 0.0;
                let mut points = Vec::new();
                for s in &o.stages {
                    points.push((t, s.rate));
                    t += s.duration.as_secs_f64();
                    points.push((t, s.ramp_to.unwrap_or(s.rate)));
                }
                Some((false, points))
            }
            Load::Burst(_) => None,
        }
    }

    /// True when the run ends as soon as its work is done rather than at a fixed time.
    pub fn ends_when_done(&self) -> bool {
        match &self.load {
            Load::Closed(c) => c.iterations_per_vu.is_some() || c.shared_iterations.is_some(),
            Load::Open(o) => o.max_arrivals.is_some(),
            Load::Burst(_) => true,
        }
    }
}

impl ClosedLoad {
    pub fn duration(&self) -> Duration {
        if self.iterations_per_vu.is_some() || self.shared_iterations.is_some() {
            return self.max_duration.min(self.stages_duration());
        }
        self.stages_duration()
    }

    pub fn stages_duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    pub fn max_vus(&self) -> u32 {
        self.stages
            .iter()
            .map(|s| s.vus)
            .max()
            .unwrap_or(0)
            .max(self.start_vus)
    }

    /// The stage running at `t`, as a line of VU levels from its start to its end; `None`
    /// once every stage has ended.
    fn ramp_at(&self, t: Duration) -> Option<VuRamp> {
        let mut from = self.start_vus as f64;
        let mut start = Duration::ZERO;
        for stage in &self.stages {
            let end = start + stage.duration;
            let to = stage.vus as f64;
            if t < end {
                return Some(VuRamp {
                    start,
                    end,
                    from,
                    to,
                });
            }
            from = to;
            start = end;
        }
        None
    }

    /// VUs that should be active at `t` (k6 `ramping-vus`: linear between stage targets;
    /// a VU is added when the line reaches it and removed when the line falls below it).
    pub fn vus_at(&self, t: Duration) -> u32 {
        let Some(VuRamp {
            start,
            end,
            from,
            to,
        }) = self.ramp_at(t)
        else {
            return 0;
        };
        let progress = (t - start).as_secs_f64() / (end - start).as_secs_f64();
        let level = from + (to - from) * progress;
        if to >= from {
            (level + 1e-9).floor() as u32
        } else {
            (level - 1e-9).ceil() as u32
        }
    }

    /// The earliest time after `t` at which `vus_at` may change (for a controller to sleep until).
    pub fn next_change_after(&self, t: Duration) -> Option<Duration> {
        let VuRamp {
            start,
            end,
            from,
            to,
        } = self.ramp_at(t)?;
        if from == to {
            return Some(end);
        }
        // Next integer crossing of the line from `from` to `to`.
        let secs = (end - start).as_secs_f64();
        let now = (t - start).as_secs_f64();
        let level = from + (to - from) * now / secs;
        let next_level = if to > from {
            level.floor() + 1.0
        } else {
            level.ceil() - 1.0
        };
        let at = (next_level - from) / (to - from) * secs;
        let at = start + Duration::from_secs_f64(at.max(0.0));
        Some(if at <= t {
            t + Duration::from_millis(1)
        } else {
            at.min(end)
        })
    }
}

/// One closed-model stage in time: VU level `from` at `start`, rising or falling linearly
/// to `to` at `end`.
struct VuRamp {
    start: Duration,
    end: Duration,
    from: f64,
    to: f64,
}

impl RateStage {
    fn end_rate(&self) -> f64 {
        self.ramp_to.unwrap_or(self.rate)
    }

    /// Arrivals expected during the whole stage.
    fn count(&self) -> f64 {
        (self.rate + self.end_rate()) / 2.0 * self.duration.as_secs_f64()
    }
}

impl OpenLoad {
    /// The highest arrival rate of the plan, per second (a ramp's larger end).
    pub fn peak_rate(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| s.rate.max(s.ramp_to.unwrap_or(0.0)))
            .fold(0.0, f64::max)
    }

    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// Arrivals per second at `t`.
    pub fn rate_at(&self, t: Duration) -> f64 {
        let mut start = Duration::ZERO;
        for stage in &self.stages {
            let end = start + stage.duration;
            if t < end {
                let progress = (t - start).as_secs_f64() / stage.duration.as_secs_f64();
                return stage.rate + (stage.end_rate() - stage.rate) * progress;
            }
            start = end;
        }
        0.0
    }

    /// Arrivals the plan intends over the whole run (capped by `max_arrivals`).
    pub fn expected_arrivals(&self) -> f64 {
        let total: f64 = self.stages.iter().map(RateStage::count).sum();
        match self.max_arrivals {
            Some(n) => total.min(n as f64),
            None => total,
        }
    }

    /// The number of evenly spaced arrivals the plan holds: the `n` for which [`time_of`]
    /// answers, capped by `max_arrivals`.
    ///
    /// [`time_of`]: OpenLoad::time_of
    pub fn arrival_count(&self) -> u64 {
        let total: f64 = self.stages.iter().map(RateStage::count).sum();
        let mut n = total.max(0.0).ceil().min(u64::MAX as f64) as u64;
        // The float sum may sit a hair off an integer: settle it on what time_of says.
        while n > 0 && self.time_of((n - 1) as f64).is_none() {
            n -= 1;
        }
        while self.time_of(n as f64).is_some() {
            n += 1;
        }
        match self.max_arrivals {
            Some(max) => n.min(max),
            None => n,
        }
    }

    /// The time at which the cumulative arrival count reaches `count`: Λ⁻¹(count).
    /// `None` if the plan ends first.
    pub fn time_of(&self, count: f64) -> Option<Duration> {
        let mut remaining = count;
        let mut start = Duration::ZERO;
        for stage in &self.stages {
            let in_stage = stage.count();
            if remaining < in_stage {
                let (a, b) = (stage.rate, stage.end_rate());
                let secs = stage.duration.as_secs_f64();
                // Solve a·t + (b−a)·t²/(2D) = remaining, in the form that is stable for b ≈ a.
                if remaining <= 0.0 {
                    return Some(start);
                }
                let disc = a * a + 2.0 * (b - a) * remaining / secs;
                let t = 2.0 * remaining / (a + disc.max(0.0).sqrt());
                return Some(start + Duration::from_secs_f64(t.clamp(0.0, secs)));
            }
            remaining -= in_stage;
            start += stage.duration;
        }
        None
    }

    /// Intended arrival times of segment `index` of `count` (arrivals n ≡ index mod count).
    pub fn arrivals(&self, segment: Segment, seed: u64) -> ArrivalTimes<'_> {
        ArrivalTimes {
            load: Cow::Borrowed(self),
            segment,
            next: segment.index as u64,
            poisson_position: 0.0,
            rng: fastrand::Rng::with_seed(
                seed ^ (segment.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }

    /// The arrivals of `segment` intended at or after `from`, of a plan the iterator owns:
    /// what a steered run follows from the moment it was steered. Arrivals keep their numbers
    /// (the `n`-th of the whole run), so the workers and segments still share them out
    /// exactly as before the change.
    pub fn into_arrivals_from(
        self,
        segment: Segment,
        seed: u64,
        from: Duration,
    ) -> ArrivalTimes<'static> {
        let before = self.count_before(from);
        let count = u64::from(segment.count);
        let index = u64::from(segment.index);
        let first = (before - 1e-9).max(0.0).ceil() as u64;
        let next = first + (index + count - first % count) % count;
        ArrivalTimes {
            load: Cow::Owned(self),
            segment,
            next,
            poisson_position: before,
            rng: fastrand::Rng::with_seed(
                seed ^ (segment.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    ^ from.as_nanos() as u64,
            ),
        }
    }
}

/// Iterator over intended arrival times (offsets from the run's start).
pub struct ArrivalTimes<'a> {
    load: Cow<'a, OpenLoad>,
    segment: Segment,
    next: u64,
    poisson_position: f64,
    rng: fastrand::Rng,
}

impl ArrivalTimes<'_> {
    /// How many arrivals the iterator has still to give, computed rather than counted one by
    /// one (a run that falls behind 10⁹ arrivals must not spend seconds counting them). For
    /// Poisson arrivals it is the expected number, rounded.
    pub fn remaining(&self) -> u64 {
        let count = u64::from(self.segment.count);
        let left_of = |total: u64| {
            if self.next >= total {
                0
            } else {
                (total - self.next - 1) / count + 1
            }
        };
        if self.load.poisson {
            let total: f64 = self.load.stages.iter().map(RateStage::count).sum();
            let expected = ((total - self.poisson_position).max(0.0) / count as f64).round() as u64;
            match self.load.max_arrivals {
                Some(max) => expected.min(left_of(max)),
                None => expected,
            }
        } else {
            left_of(self.load.arrival_count())
        }
    }
}

impl Iterator for ArrivalTimes<'_> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.load.poisson {
            // A segment of a Poisson process is a Poisson process at 1/count the rate.
            let exp = -(1.0 - self.rng.f64()).ln();
            self.poisson_position += exp * self.segment.count as f64;
            if let Some(max) = self.load.max_arrivals {
                if self.next >= max {
                    return None;
                }
            }
            self.next += self.segment.count as u64;
            return self.load.time_of(self.poisson_position);
        }
        let n = self.next;
        if let Some(max) = self.load.max_arrivals {
            if n >= max {
                return None;
            }
        }
        self.next += self.segment.count as u64;
        self.load.time_of(n as f64)
    }
}

impl BurstLoad {
    /// How many of the burst's requests belong to `segment`.
    pub fn share(&self, segment: Segment) -> u64 {
        segment.share(self.count)
    }
}

#[cfg(test)]
mod tests;
