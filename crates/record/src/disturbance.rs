//! Whether the generator's own timing was disturbed enough to change the numbers it reports,
//! judged from what its threads went through — not from how busy the host was. A load
//! generator on a busy host (a VM with steal, a laptop, the target beside it) measures well
//! as long as it gets a CPU when it needs one; one that waits for a CPU adds that wait to the
//! latencies it reports. What it went through is measured where it matters for each model:
//!
//! - closed model and bursts: latency runs from the actual send to the response being read,
//!   so what distorts it is the worker reading late. The pause probe measures exactly that: a
//!   timer on each worker's own thread fires every 1.7 ms while requests are in flight, and how late the worker
//!   handles it is what a response arriving then would wait (jHiccup, inside the worker);
//! - open model: latency runs from the intended start, responses are timed by the kernel, so
//!   what distorts it is requests sent late. At each percentile that is each request's own
//!   send delay (sent − intended; records without it: latency minus service time), step by
//!   step — request-weighted, where a time-sampled probe misses the
//!   stops that fall on the sends, and inclusive of the waits for a connection that a worker
//!   kept from its CPU (returning connections late) causes — less what the batch window adds
//!   by design. The scheduler's own lag counts too (the larger decides); when arrivals were
//!   held back by `max_in_flight`, the connection limit or a stream slot (the target's doing),
//!   only the scheduler's lag is the generator's.
//!
//! A percentile is judged only when at least [`loadlab_metrics::MIN_SAMPLES_BEYOND`] samples lie beyond
//! it. The run
//! is disturbed when, at p50, p95 or p99, the generator's delay is both more than
//! [`DISTORTION_SHARE`] of the latency reported there and above this host's timing resolution
//! at that percentile ([`Floors`]: the timer's lateness measured beside the run — before it, in
//! older records — with [`DELAY_FLOOR_MS`] and [`PROBE_FLOOR_MS`] as the least). The cause is then attributed: the generator's own CPU
//! used up, the hypervisor's steal on its cores, other processes (named), or — when none of
//! those explains it — the host itself (`host_disturbed`, retried by studies). A generator
//! below its CPU limit is never called saturated. Host-wide busy %, steal or pressure alone
//! never make a run invalid. docs/results.md explains the rule with its measured error rates
//! (bench/validity.sh).

use loadlab_metrics::host_timer::{HostTimer, PROBE_TIMER_MARGIN, TIMER_MARGIN};
use loadlab_metrics::resources::HostLoad;
use loadlab_metrics::validity::{InvalidKind, InvalidReason};
use loadlab_metrics::LatencyHistogram;

/// The generator's delay may add at most this share to a reported latency percentile.
pub const DISTORTION_SHARE: f64 = 0.10;
/// Delays below these never make a run invalid, whatever the host's timer: on a quiet 2-core
/// machine with a fast timer an open run's latency exceeds its service time by up to 0.46 ms at
/// p99, and the pause probe reads p99 up to 0.95 ms — up to 1.34 ms with a CPU hog on the
/// *other* core, which does not distort the numbers (its ticks meet the generator's own
/// bookkeeping threads and the target, which share its cores; bench/validity.sh). A host whose
/// timer wakes later raises them ([`Floors::for_host`]).
pub const DELAY_FLOOR_MS: f64 = 0.5;
pub const PROBE_FLOOR_MS: f64 = 1.5;
/// The host's timer raises the floors up to this and no further: a host that wakes even an
/// idle thread later than this is stalling, not imprecise. Stopped for 8 ms in every 40 (what a
/// hypervisor does to a vCPU), a generator's watch read p95 4.4 ms and its sends were 5.3 ms
/// late at p95 against a 0.25 ms target: without a cap that run was "valid" at a floor of
/// 8.7 ms. On the quiet 2-core VM the watch reads 0.07–0.5 ms at p95 (floors 0.5–1.5 ms).
pub const FLOOR_CAP_MS: f64 = 2.0;
pub const PROBE_FLOOR_CAP_MS: f64 = 3.0;

/// The least delay that counts, for this host: its timing resolution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floors {
    timer: Option<HostTimer>,
}

impl Floors {
    /// The fixed least floors, raised to the host's measured timer resolution at the same
    /// percentile (a timer that wakes 0.3 ms late at p95 makes 0.9 ms the least send delay
    /// that counts at p95).
    pub fn for_host(timer: Option<&HostTimer>) -> Self {
        Self {
            timer: timer.copied(),
        }
    }

    /// The floor of requests sent late (and the scheduler's lag) at p95: what reports print.
    pub fn delay_ms(&self) -> f64 {
        self.at(DelayMeasure::SendDelay, 0.95)
    }

    /// The floor at quantile `q` for what measured the delay.
    pub fn at(&self, by: DelayMeasure, q: f64) -> f64 {
        let late = self.timer.map_or(0.0, |t| t.at(q));
        match by {
            DelayMeasure::Probe => {
                PROBE_FLOOR_MS.max((PROBE_TIMER_MARGIN * late).min(PROBE_FLOOR_CAP_MS))
            }
            _ => DELAY_FLOOR_MS.max((TIMER_MARGIN * late).min(FLOOR_CAP_MS)),
        }
    }
}

impl Default for Floors {
    fn default() -> Self {
        Self::for_host(None)
    }
}
/// Steal on the generator's cores at or above this is named as the cause (when other
/// processes do not explain the delay better), whatever the percentile judged; below it, see
/// [`steal_explains`].
pub const STEAL_CAUSE_PERCENT: f64 = 10.0;
/// Fewest probe samples judged: a fifth of a second of ticks (a run of a few milliseconds
/// spends them starting up).
pub const MIN_PROBE_SAMPLES: u64 = 200;
/// Other processes below this share of the host (and no steal) cannot have taken the CPU the
/// generator needed: its own work delayed it.
pub const OTHERS_MIN_PERCENT: f64 = 10.0;
/// The percentiles judged (the ones every summary and report prints).
pub const JUDGED: [(f64, &str); 3] = [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")];

/// What the generator's threads went through over the measured window.
#[derive(Debug, Clone, Copy)]
pub enum GeneratorEvidence<'a> {
    /// Closed model, bursts: the pause probe's lateness (µs).
    Probe(&'a LatencyHistogram),
    /// Open model: service time (sent to done, µs) beside the latency — at a percentile,
    /// latency minus service time is how late requests were sent — and what the batch window
    /// adds by design (ms).
    SendDelay {
        service: &'a LatencyHistogram,
        allowance_ms: f64,
    },
    /// Open model: each request's own send delay (sent − intended, µs), where the record has
    /// it. Latency minus service time at a percentile reads a delay where both have tails of
    /// their own near it (a host that now and then wakes the target late and the generator
    /// late: 5% of each, independent, put latency p95 1.35 ms above service p95 while 95% of
    /// the sends were 0.1 ms late); the sends' own delays are not mixed with the target's.
    SentLate {
        lag: &'a LatencyHistogram,
        allowance_ms: f64,
    },
    /// Open model with arrivals held back by the target: the scheduler's own lag (µs).
    SchedulerLag {
        lag: &'a LatencyHistogram,
        allowance_ms: f64,
    },
}

/// How much the generator's own delays could have added to the latency it reports, at the
/// percentile where that is the largest share.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorDelay {
    /// `p50`, `p95` or `p99`.
    pub at: &'static str,
    pub delay_ms: f64,
    pub latency_ms: f64,
    /// What measured it.
    pub by: DelayMeasure,
}

/// Which measurement gave a [`GeneratorDelay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayMeasure {
    Probe,
    SendDelay,
    SentLate,
    SchedulerLag,
}

impl GeneratorDelay {
    /// The delay as a share of the latency at that percentile.
    pub fn share(&self) -> f64 {
        self.delay_ms / self.latency_ms.max(1e-9)
    }

    /// What measured the delay, against which latency, in words.
    pub fn words(&self) -> String {
        let measured_by = match self.by {
            DelayMeasure::Probe => format!("its workers' pause probe read {} of", self.at),
            DelayMeasure::SendDelay => format!(
                "requests were sent late: latency exceeded service time at {} by",
                self.at
            ),
            DelayMeasure::SentLate => format!("requests were sent late: at {} by", self.at),
            DelayMeasure::SchedulerLag => {
                format!("its scheduler started arrivals late: lag {} of", self.at)
            }
        };
        format!(
            "{measured_by} {} against a latency {} of {} ({:.0}% of it; the limit is {:.0}%)",
            ms(self.delay_ms),
            self.at,
            ms(self.latency_ms),
            100.0 * self.share(),
            100.0 * DISTORTION_SHARE
        )
    }
}

/// The delay that distorts the reported latency the most, when it is beyond the rule (above
/// `floors`, this host's timing resolution). `latency` is the latency the run reports (µs).
pub fn generator_delay(
    evidence: GeneratorEvidence<'_>,
    latency: &LatencyHistogram,
    floors: Floors,
) -> Option<GeneratorDelay> {
    if latency.is_empty() {
        return None;
    }
    let ms = |h: &LatencyHistogram, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let delay_at = |q: f64| -> Option<(f64, DelayMeasure)> {
        match evidence {
            GeneratorEvidence::Probe(p) if p.len() >= MIN_PROBE_SAMPLES => {
                Some((ms(p, q), DelayMeasure::Probe))
            }
            GeneratorEvidence::SendDelay {
                service,
                allowance_ms,
            } if !service.is_empty() => Some((
                ms(latency, q) - ms(service, q) - allowance_ms,
                DelayMeasure::SendDelay,
            )),
            GeneratorEvidence::SentLate { lag, allowance_ms } if !lag.is_empty() => {
                Some((ms(lag, q) - allowance_ms, DelayMeasure::SentLate))
            }
            GeneratorEvidence::SchedulerLag { lag, allowance_ms } if !lag.is_empty() => {
                Some((ms(lag, q) - allowance_ms, DelayMeasure::SchedulerLag))
            }
            _ => None,
        }
    };
    // A percentile resting on fewer than 10 samples beyond it is too fragile to call
    // distorted, as the reports say of it.
    let enough = |h: &LatencyHistogram, q: f64| !loadlab_metrics::thin_percentile(h.len(), q);
    let measure_len_ok = |q: f64| match evidence {
        GeneratorEvidence::Probe(p) => enough(p, q),
        GeneratorEvidence::SendDelay { service, .. } => enough(service, q),
        GeneratorEvidence::SentLate { lag, .. } | GeneratorEvidence::SchedulerLag { lag, .. } => {
            enough(lag, q)
        }
    };
    JUDGED
        .iter()
        .filter(|&&(q, _)| enough(latency, q) && measure_len_ok(q))
        .filter_map(|&(q, at)| {
            let (delay_ms, by) = delay_at(q)?;
            Some(GeneratorDelay {
                at,
                delay_ms: delay_ms.max(0.0),
                latency_ms: ms(latency, q),
                by,
            })
            .filter(|d| d.delay_ms >= floors.at(by, q))
        })
        .filter(|d| d.share() > DISTORTION_SHARE)
        .max_by(|a, b| a.share().total_cmp(&b.share()))
}

/// What the generator itself went through while it was delayed, for the attribution.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneratorLoad {
    /// Its workers used their cores up (already reported as `generator_saturated`).
    pub own_cpu_used_up: bool,
    /// Its workers' CPU, % of the cores they may use.
    pub cpu_percent: f64,
    /// Share of its workers' time they waited for a CPU (schedstat), when measured.
    pub run_delay_share: Option<f64>,
    /// How late the host woke an idle thread of the generator's meanwhile (or before the run).
    pub host_timer: Option<HostTimer>,
}

/// Why a disturbed generator was disturbed: the reason the run is invalid (`None` when its own
/// CPU used up already says so).
pub fn attribute(
    delay: &GeneratorDelay,
    generator: GeneratorLoad,
    host: Option<&HostLoad>,
) -> Option<InvalidReason> {
    if generator.own_cpu_used_up {
        return None;
    }
    let steal = host.and_then(|h| h.steal_on_generator_cores).unwrap_or(0.0);
    let others = host.map_or(0.0, |h| h.other_percent_of_host);
    let stolen = steal_explains(steal, delay);
    if host.is_some() && !stolen && others < OTHERS_MIN_PERCENT {
        // Below its CPU limit the generator had the time it needed: what delayed it was the
        // host (a vCPU descheduled, an interrupt storm, a timer that woke late), not its work.
        let waited = generator
            .run_delay_share
            .map(|s| format!(", waited for a CPU {:.1}% of the time", 100.0 * s))
            .unwrap_or_default();
        let timer = generator
            .host_timer
            .filter(|t| t.samples > 0)
            .map(|t| {
                format!(
                    "; an idle thread of the generator's woke {} late at p95 ({} at p99) meanwhile",
                    ms(t.p95_ms),
                    ms(t.at(0.99))
                )
            })
            .unwrap_or_default();
        return Some(InvalidReason::new(
            InvalidKind::HostDisturbed,
            format!(
                "the host held the generator up: {} — yet the generator used only {:.0}% of its cores{waited}, other processes {others:.0}% of the host and the hypervisor's steal {steal:.1}%, so neither its own work nor other processes explain it (a vCPU descheduled, the kernel, a timer waking late){timer}; retry the run — a study retries it by itself, `loadlab run --retry-invalid 2` too — and if it recurs, pin the generator to cores of its own (taskset) or use a machine with dedicated cores",
                delay.words(),
                generator.cpu_percent
            ),
        ));
    }
    if stolen && (steal >= others || others < OTHERS_MIN_PERCENT) {
        return Some(InvalidReason::new(
            InvalidKind::CpuStolen,
            format!(
                "the hypervisor stole {steal:.1}% of the time of the generator's cores, and the generator's timing was disturbed: {} — the latencies include time the generator could not run; retry the run when the host is quieter (a study retries it by itself, `loadlab run --retry-invalid 2` too), or run on a machine with dedicated cores",
                delay.words()
            ),
        ));
    }
    let named = host.map(HostLoad::busiest_others).unwrap_or_default();
    let on_cores = host.and_then(|h| h.other_percent_of_generator_cores);
    Some(InvalidReason::new(
        InvalidKind::HostContended,
        crate::contended_words::contended_sentence(
            &delay.words(),
            others,
            on_cores,
            &named,
            OTHERS_MIN_PERCENT,
        ),
    ))
}

/// Whether the hypervisor's steal explains a delay seen at a percentile: a vCPU taken away in
/// slices of milliseconds delays about that share of the sends (or probe ticks), so steal of
/// at least the share of the tail judged (1% at p99, 5% at p95) is enough to name it, and
/// [`STEAL_CAUSE_PERCENT`] always is. On a quiet virtual machine steal is a fraction of a
/// percent; runs measured invalid at 400/s on one came with 4.5–5.8% (bench/README.md).
pub fn steal_explains(steal_percent: f64, delay: &GeneratorDelay) -> bool {
    let tail = JUDGED
        .iter()
        .find(|(_, at)| *at == delay.at)
        .map_or(0.0, |(q, _)| 100.0 * (1.0 - q));
    steal_percent >= tail.clamp(1.0, STEAL_CAUSE_PERCENT)
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::{new_histogram, record_us};

    fn histogram(values_us: &[(u64, u64)]) -> LatencyHistogram {
        let mut h = new_histogram();
        for &(v, n) in values_us {
            for _ in 0..n {
                record_us(&mut h, v);
            }
        }
        h
    }

    fn probe(pauses: &[(u64, u64)], latency: &[(u64, u64)]) -> Option<GeneratorDelay> {
        let (p, l) = (histogram(pauses), histogram(latency));
        generator_delay(GeneratorEvidence::Probe(&p), &l, Floors::default())
    }

    #[test]
    fn probe_delays_are_judged_against_the_latency_at_the_same_percentile() {
        // (pauses, latency) → disturbed at
        let quiet = [(60, 985), (300, 10), (3000, 5)];
        let one_ms = [(1000, 1000)];
        type Values<'a> = &'a [(u64, u64)];
        let cases: &[(Values, Values, Option<&str>)] = &[
            // An idle machine: 60 µs late, a 1 ms target.
            (&quiet, &one_ms, None),
            // The same pauses against a 0.2 ms target: below the floor, never invalid.
            (&quiet, &[(200, 1000)], None),
            // A hog on the generator's core: 4 ms pauses 20% of the time.
            (
                &[(60, 800), (4000, 200)],
                &[(1000, 985), (2000, 15)],
                Some("p95"),
            ),
            // Rare 8 ms pauses (2% of the time) move p99, not p50.
            (&[(60, 980), (8000, 20)], &one_ms, Some("p99")),
            // The same pauses against a 2 s latency: a distortion of 0.4%, valid.
            (&[(60, 980), (8000, 20)], &[(2_000_000, 1000)], None),
        ];
        for (i, (pauses, latency, want)) in cases.iter().enumerate() {
            let got = probe(pauses, latency);
            assert_eq!(got.as_ref().map(|d| d.at), *want, "case {i}: {got:?}");
        }
    }

    #[test]
    fn open_model_arrivals_sent_late_show_between_latency_and_service_time() {
        let service = histogram(&[(1200, 990), (1400, 10)]);
        let send = |allowance_ms| GeneratorEvidence::SendDelay {
            service: &service,
            allowance_ms,
        };
        // Quiet: latency p99 0.3 ms above service p99.
        let quiet = histogram(&[(1250, 990), (1700, 10)]);
        assert_eq!(generator_delay(send(0.0), &quiet, Floors::default()), None);
        // A hog on the generator's core: 1.5% of the arrivals sent 2.2 ms late.
        let late = histogram(&[(1250, 985), (3400, 15)]);
        let d = generator_delay(send(0.0), &late, Floors::default()).unwrap();
        assert_eq!((d.at, d.by), ("p99", DelayMeasure::SendDelay));
        assert!((d.delay_ms - 2.2).abs() < 0.01, "{d:?}");
        // What the batch window adds by design is not a disturbance.
        assert_eq!(generator_delay(send(2.0), &late, Floors::default()), None);
    }

    #[test]
    fn the_cause_is_steal_or_other_processes_never_the_host_being_busy() {
        let delay = GeneratorDelay {
            at: "p99",
            delay_ms: 4.0,
            latency_ms: 2.0,
            by: DelayMeasure::Probe,
        };
        let host = |steal: f64, others: f64| HostLoad {
            host_cpu_percent: others + 10.0,
            host_cpus: 2.0,
            generator_percent_of_host: 10.0,
            other_percent_of_host: others,
            steal_on_generator_cores: Some(steal),
            other_percent_of_generator_cores: None,
            top_others: vec![loadlab_metrics::resources::ProcessCpu {
                name: "stress-ng".into(),
                processes: 1,
                cpu_percent: 98.0,
            }],
        };
        let below_limit = GeneratorLoad {
            own_cpu_used_up: false,
            cpu_percent: 11.0,
            run_delay_share: Some(0.008),
            host_timer: Some(HostTimer {
                samples: 300,
                p50_ms: 0.1,
                p95_ms: 0.2,
                p99_ms: Some(1.2),
                max_ms: 3.0,
            }),
        };
        let stolen = attribute(&delay, below_limit, Some(&host(25.0, 5.0))).unwrap();
        assert_eq!(stolen.kind, InvalidKind::CpuStolen);
        let others = attribute(&delay, below_limit, Some(&host(2.0, 50.0))).unwrap();
        assert_eq!(others.kind, InvalidKind::HostContended);
        assert!(
            others.message.contains("stress-ng 98% of a core"),
            "{}",
            others.message
        );
        assert!(
            others
                .message
                .contains("pause probe read p99 of 4.00 ms against a latency p99 of 2.00 ms"),
            "{}",
            others.message
        );
        let used_up = GeneratorLoad {
            own_cpu_used_up: true,
            cpu_percent: 97.0,
            ..GeneratorLoad::default()
        };
        assert!(attribute(&delay, used_up, Some(&host(2.0, 50.0))).is_none());
        // Steal of 2% explains a p99 (a 1% tail), not a p95.
        let stolen_p99 = attribute(&delay, below_limit, Some(&host(2.0, 5.0))).unwrap();
        assert_eq!(stolen_p99.kind, InvalidKind::CpuStolen);
        assert!(
            stolen_p99.message.contains("stole 2.0%"),
            "{}",
            stolen_p99.message
        );
        let at_p95 = GeneratorDelay {
            at: "p95",
            ..delay.clone()
        };
        let not_p95 = attribute(&at_p95, below_limit, Some(&host(2.0, 5.0))).unwrap();
        assert_eq!(not_p95.kind, InvalidKind::HostDisturbed);
        // Nothing explains it: the host's, never "saturated" at 11% of its cores.
        let host_held = attribute(&delay, below_limit, Some(&host(0.5, 5.0))).unwrap();
        assert_eq!(host_held.kind, InvalidKind::HostDisturbed);
        assert!(
            host_held.message.contains("used only 11% of its cores")
                && host_held.message.contains("waited for a CPU 0.8%")
                && host_held.message.contains("retry the run")
                && host_held.message.contains("the hypervisor's steal 0.5%")
                && host_held
                    .message
                    .contains("woke 0.20 ms late at p95 (1.20 ms at p99) meanwhile"),
            "{}",
            host_held.message
        );
    }

    #[test]
    fn a_host_whose_timer_wakes_late_raises_the_floor_to_its_resolution() {
        // Sends 0.56 ms late at p99 against a 0.86 ms latency (issue 35's quiet VM): beyond the
        // fixed 0.5 ms floor, within a host whose timer wakes 0.35 ms late at p95.
        let service = histogram(&[(250, 990), (300, 10)]);
        let latency = histogram(&[(300, 985), (860, 15)]);
        let send = GeneratorEvidence::SendDelay {
            service: &service,
            allowance_ms: 0.0,
        };
        assert!(generator_delay(send, &latency, Floors::default()).is_some());
        let slow_timer = HostTimer {
            samples: 40,
            p50_ms: 0.1,
            p95_ms: 0.35,
            p99_ms: None,
            max_ms: 0.9,
        };
        let floors = Floors::for_host(Some(&slow_timer));
        assert!((floors.delay_ms() - 1.05).abs() < 1e-12, "{floors:?}");
        assert_eq!(generator_delay(send, &latency, floors), None);
        // A fast timer keeps the least floors.
        let fast = HostTimer {
            p95_ms: 0.05,
            ..slow_timer
        };
        let fast = Floors::for_host(Some(&fast));
        for by in [DelayMeasure::SendDelay, DelayMeasure::Probe] {
            assert_eq!(fast.at(by, 0.95), Floors::default().at(by, 0.95));
        }
    }

    #[test]
    fn the_sends_own_delays_are_judged_not_the_gap_between_two_tails() {
        // A host that wakes the target 1.25 ms late for 5% of requests and the generator late
        // for 0.5% of them: latency p95 falls in the target's tail, 1.35 ms above service p95,
        // yet 99.5% of the sends were 0.1 ms late.
        let service = histogram(&[(250, 950), (1500, 50)]);
        let latency = histogram(&[(350, 945), (1600, 50), (1750, 5)]);
        let gap = GeneratorEvidence::SendDelay {
            service: &service,
            allowance_ms: 0.0,
        };
        let d = generator_delay(gap, &latency, Floors::default()).unwrap();
        assert_eq!(d.at, "p95", "{d:?}");
        let sent = histogram(&[(100, 995), (1500, 5)]);
        let own = GeneratorEvidence::SentLate {
            lag: &sent,
            allowance_ms: 0.0,
        };
        assert_eq!(generator_delay(own, &latency, Floors::default()), None);
        // Sent 1.5 ms late for 10% of requests: that is the generator's.
        let late = histogram(&[(100, 900), (1500, 100)]);
        let own = GeneratorEvidence::SentLate {
            lag: &late,
            allowance_ms: 0.0,
        };
        let d = generator_delay(own, &latency, Floors::default()).unwrap();
        assert_eq!(d.by, DelayMeasure::SentLate, "{d:?}");
        assert!(
            d.words().starts_with("requests were sent late: at p9")
                && d.words().contains("by 1.50 ms"),
            "{}",
            d.words()
        );
    }

    #[test]
    fn each_percentile_is_judged_against_the_timers_lateness_at_that_percentile() {
        // A host whose timer, beside the run, woke 0.2 ms late at p95 and 2 ms at p99: sends
        // 1.5 ms late at p99 only are its doing; 1.5 ms late at p95 are not.
        let timer = HostTimer {
            samples: 600,
            p50_ms: 0.06,
            p95_ms: 0.2,
            p99_ms: Some(2.0),
            max_ms: 4.0,
        };
        let floors = Floors::for_host(Some(&timer));
        let service = histogram(&[(250, 1000)]);
        let send = GeneratorEvidence::SendDelay {
            service: &service,
            allowance_ms: 0.0,
        };
        let late_at_p99 = histogram(&[(300, 985), (1750, 15)]);
        assert_eq!(generator_delay(send, &late_at_p99, floors), None);
        let late_at_p95 = histogram(&[(300, 930), (1750, 70)]);
        let d = generator_delay(send, &late_at_p95, floors).unwrap();
        assert_eq!(d.at, "p95", "{d:?}");
        // A host stalling every thread 5 ms at p99 raises the floor only to its cap.
        let stalling = HostTimer {
            p99_ms: Some(5.0),
            ..timer
        };
        let floors = Floors::for_host(Some(&stalling));
        assert_eq!(floors.at(DelayMeasure::SentLate, 0.99), FLOOR_CAP_MS);
        assert_eq!(floors.at(DelayMeasure::Probe, 0.99), PROBE_FLOOR_CAP_MS);
        let late_by_3ms = histogram(&[(300, 985), (3250, 15)]);
        assert_eq!(
            generator_delay(send, &late_by_3ms, floors).unwrap().at,
            "p99"
        );
    }
}
