//! File descriptors and local ports, checked before anything is sent: a plan that needs more
//! concurrent connections than the process may open would otherwise fail thousands of
//! requests with `too many open files` and blame the target. The soft open-file limit is
//! raised to the hard one first (what `ulimit -n` would allow anyway).

use crate::prepare::PreparedScenario;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{ConnectionPolicy, Load};

/// Files beyond the connections: the runtime, timers, the record, the monitor, stdio.
const OVERHEAD_FILES: u64 = 64;

/// What the plan needs against what the process may open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBudget {
    /// Concurrent connections the plan can hold (this process's share).
    pub connections: u64,
    /// What they are: "a burst of 66,666", "10,000 VUs", "max_in_flight 5,000".
    pub because: String,
    pub needed: u64,
    pub soft: u64,
    pub hard: u64,
}

/// Raises the soft limit of open files to the hard limit; returns `(soft, hard)` after.
pub fn raise_open_files_limit() -> (u64, u64) {
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return (u64::MAX, u64::MAX);
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
        (lim.rlim_cur, lim.rlim_max)
    }
}

/// Concurrent connections the plan may hold in this process, and why.
pub fn connections_needed(
    load: &Load,
    prepared: &PreparedScenario,
    segment: Segment,
) -> (u64, String) {
    let (units, because) = match load {
        Load::Closed(c) => {
            let vus = segment.share(u64::from(c.max_vus()));
            (vus, format!("{} VUs", thousands(vus)))
        }
        Load::Open(o) => {
            let n = segment.share(u64::from(o.max_in_flight)).max(1);
            (n, format!("max_in_flight {}", thousands(n)))
        }
        Load::Burst(b) => {
            let n = b.share(segment);
            (n, format!("a burst of {}", thousands(n)))
        }
    };
    let (per_unit, shared) = per_unit_connections(prepared);
    let because = if per_unit > 1 {
        format!(
            "{because} × {per_unit} origins: each keeps a connection to every origin it talks to"
        )
    } else {
        because
    };
    (
        units.saturating_mul(per_unit).saturating_add(shared),
        because,
    )
}

/// The most VUs this process may run within `soft` open files (what a steered closed run may
/// be raised to): each keeps a connection to every origin it talks to.
pub fn most_vus_within(soft: u64, prepared: &PreparedScenario, segment: Segment) -> u64 {
    let (per_unit, shared) = per_unit_connections(prepared);
    let room = soft.saturating_sub(OVERHEAD_FILES + shared) / per_unit.max(1);
    // This process runs its share of the VUs: the whole run may have `count` times as many.
    room.saturating_mul(u64::from(segment.count))
}

/// Lowers a default `max_in_flight` (one the scenario did not give) to what `soft` open files
/// allow: an open load holds up to one connection per origin for each iteration in flight,
/// so two origins at the default of 10,000 would need 20,000 and be refused on a common
/// limit of 20,000. `max_in_flight` stays one bound for the run; only its default is fitted.
/// Returns the default it replaced, when it did.
pub fn fit_default_in_flight(
    load: &mut Load,
    prepared: &PreparedScenario,
    segment: Segment,
    soft: u64,
) -> Option<u32> {
    let Load::Open(o) = load else {
        return None;
    };
    if o.max_in_flight_given {
        return None;
    }
    let (unit, shared) = per_unit_connections(prepared);
    let room = soft.saturating_sub(OVERHEAD_FILES).saturating_sub(shared) / unit.max(1);
    // This process's share of the run's bound must fit: the run's bound is its share times
    // the number of segments (each `share` is then exactly `room`).
    let fitted = room.saturating_mul(u64::from(segment.count)).max(1);
    (unit > 0 && fitted < u64::from(o.max_in_flight)).then(|| {
        let default = o.max_in_flight;
        o.max_in_flight = fitted as u32;
        default
    })
}

/// Connections one unit of concurrency (a VU, an iteration in flight) may hold, and those
/// the shared, multiplexed origins hold whatever the load.
fn per_unit_connections(prepared: &PreparedScenario) -> (u64, u64) {
    // Shared multiplexed origins (`http.connections`) hold their own few connections, the
    // same whatever the load; on the others a VU keeps one connection per origin it talks to,
    // or one per request in flight.
    let shared: u64 = prepared
        .origins
        .iter()
        .filter_map(|o| o.shared.as_ref())
        .map(|s| u64::from(s.connections))
        .sum();
    let unshared = prepared
        .origins
        .iter()
        .filter(|o| o.shared.is_none())
        .count() as u64;
    let per_unit = match prepared.connections {
        ConnectionPolicy::PerVu => unshared,
        ConnectionPolicy::Shared | ConnectionPolicy::None => unshared.min(1),
    };
    if prepared.origins.is_empty() {
        (1, shared)
    } else {
        (per_unit, shared)
    }
}

/// `None` when the plan fits in `soft` open files.
pub fn check_files(connections: u64, because: String, soft: u64, hard: u64) -> Option<FileBudget> {
    let needed = connections.saturating_add(OVERHEAD_FILES);
    (needed > soft).then_some(FileBudget {
        connections,
        because,
        needed,
        soft,
        hard,
    })
}

impl std::fmt::Display for FileBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the plan needs ~{} open files ({} concurrent connections for {}), but this process may open {}{}: raise the hard limit (`ulimit -Hn {}` as root, `LimitNOFILE=` in a systemd unit, `nofile` in /etc/security/limits.conf, or `--ulimit nofile=` for a container), or split the load with segments (`--segment i/N` in several processes or machines, each needing its share)",
            thousands(round_up(self.needed)),
            thousands(self.connections),
            self.because,
            thousands(self.soft),
            if self.hard > self.soft {
                format!(" (hard limit {})", thousands(self.hard))
            } else {
                " (the hard limit)".to_string()
            },
            round_up(self.needed),
        )
    }
}

/// Local ports one destination can be reached from: the ephemeral range, times the source
/// addresses the connections are spread over.
pub fn check_ports(connections_per_origin: u64, sources: usize) -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut parts = text
        .split_whitespace()
        .filter_map(|p| p.parse::<u64>().ok());
    let (lo, hi) = (parts.next()?, parts.next()?);
    let range = hi.checked_sub(lo)? + 1;
    let available = range.saturating_mul(sources.max(1) as u64);
    (connections_per_origin > available).then(|| {
        format!(
            "the plan holds up to {} concurrent connections to one address, but only {} local ports can reach it ({} in net.ipv4.ip_local_port_range {lo}-{hi}{}): widen the range (`sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"`), spread connections over more source addresses (`source_addresses:` / --source-addrs, e.g. 127.0.0.1-127.0.0.16 on loopback), or split the load with segments on several machines",
            thousands(connections_per_origin),
            thousands(available),
            thousands(range),
            if sources > 1 {
                format!(", × {sources} source addresses")
            } else {
                String::new()
            }
        )
    })
}

/// 66,730 → 66,800: the figure to give `ulimit`.
fn round_up(n: u64) -> u64 {
    n.div_ceil(100) * 100
}

fn thousands(v: u64) -> String {
    loadlab_metrics::resources::thousands(v as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        assert_eq!(check_files(1000, "x".into(), 20_000, 20_000), None);
        let over = check_files(66_666, "a burst of 66,666".into(), 20_000, 20_000).unwrap();
        assert_eq!(over.needed, 66_730);
        let text = over.to_string();
        assert!(text.contains("~66,800 open files"), "{text}");
        assert!(text.contains("66,666 concurrent connections for a burst of 66,666"));
        assert!(text.contains("may open 20,000 (the hard limit)"), "{text}");
        assert!(text.contains("--segment"), "{text}");
    }

    #[test]
    fn ports() {
        assert_eq!(check_ports(100, 1), None);
        let text = check_ports(10_000_000, 2).expect("more than any port range");
        assert!(text.contains("10,000,000 concurrent connections"), "{text}");
        assert!(text.contains("× 2 source addresses"), "{text}");
    }

    fn needed(yaml: &str) -> u64 {
        let scenario = loadlab_scenario::Scenario::parse(yaml, "t.yaml").unwrap();
        let prepared = PreparedScenario::new(&scenario).unwrap();
        connections_needed(&scenario.plan().load, &prepared, Segment::WHOLE).0
    }

    #[test]
    fn shared_multiplexed_origins_need_their_own_connections_only() {
        let open = "load: { model: open, max_in_flight: 5000, stages: [ { duration: 1s, rate: 10/s } ] }\n";
        let target = "target: http://127.0.0.1:1\n";
        // Per arrival, one connection per origin (two versions are two origins).
        assert_eq!(
            needed(&format!(
                "{target}{open}steps: [ {{get: /a}}, {{get: /b, http: {{version: \"2\"}}}} ]\n"
            )),
            10_000
        );
        // Shared: 4 connections per origin whatever max_in_flight (an HTTP/1.1 step's origin
        // shares its 4 too, one request at a time on each).
        assert_eq!(
            needed(&format!("{target}{open}http: {{version: \"2\", connections: 4}}\nsteps: [ {{get: /a}}, {{get: /b, http: {{version: \"1.1\"}}}} ]\n")),
            8
        );
        assert_eq!(
            needed(&format!(
                "{target}{open}http: {{version: \"2\", connections: 4}}\nsteps: [ {{get: /a}} ]\n"
            )),
            4
        );
    }

    fn prepared_load(yaml: &str) -> (Load, PreparedScenario) {
        let scenario = loadlab_scenario::Scenario::parse(yaml, "t.yaml").unwrap();
        let prepared = PreparedScenario::new(&scenario).unwrap();
        (scenario.plan().load, prepared)
    }

    #[test]
    fn a_default_max_in_flight_fits_two_origins_in_the_open_files_limit() {
        // An HTTP/1.1 step and an HTTP/2 one: two origins, one connection to each per
        // iteration in flight. At the default 10,000 that needed 20,064 files of 20,000.
        let two = "target: http://127.0.0.1:1\nload: { model: open, rate: 10/s, duration: 1s }\nsteps: [ {get: /a}, {get: /b, http: {version: \"2\"}} ]\n";
        let (mut load, prepared) = prepared_load(two);
        let (connections, because) = connections_needed(&load, &prepared, Segment::WHOLE);
        assert!(check_files(connections, because, 20_000, 20_000).is_some());
        assert_eq!(
            fit_default_in_flight(&mut load, &prepared, Segment::WHOLE, 20_000),
            Some(10_000)
        );
        assert!(matches!(&load, Load::Open(o) if o.max_in_flight == 9_968));
        let (connections, because) = connections_needed(&load, &prepared, Segment::WHOLE);
        assert_eq!(connections, 19_936);
        assert_eq!(check_files(connections, because, 20_000, 20_000), None);
        // A segment's share fits its own process: 2 of 4 segments, 1,000 files each.
        let (mut load, prepared) = prepared_load(two);
        let segment = Segment { index: 1, count: 4 };
        fit_default_in_flight(&mut load, &prepared, segment, 1_000);
        let (connections, _) = connections_needed(&load, &prepared, segment);
        assert!(connections + OVERHEAD_FILES <= 1_000, "{connections}");
        // One origin fits at the default: left as it is.
        let (mut load, prepared) = prepared_load(
            "target: http://127.0.0.1:1\nload: { model: open, rate: 10/s, duration: 1s }\nsteps: [ {get: /a} ]\n",
        );
        assert_eq!(
            fit_default_in_flight(&mut load, &prepared, Segment::WHOLE, 20_000),
            None
        );
        assert!(matches!(&load, Load::Open(o) if o.max_in_flight == 10_000));
    }

    #[test]
    fn a_max_in_flight_given_is_kept_and_an_overflow_refused_naming_the_origins() {
        let (mut load, prepared) = prepared_load(
            "target: http://127.0.0.1:1\nload: { model: open, rate: 10/s, duration: 1s, max_in_flight: 10000 }\nsteps: [ {get: /a}, {get: /b, http: {version: \"2\"}} ]\n",
        );
        assert_eq!(
            fit_default_in_flight(&mut load, &prepared, Segment::WHOLE, 20_000),
            None
        );
        let (connections, because) = connections_needed(&load, &prepared, Segment::WHOLE);
        let text = check_files(connections, because, 20_000, 20_000)
            .expect("20,064 files of 20,000")
            .to_string();
        assert!(
            text.contains("20,000 concurrent connections for max_in_flight 10,000 × 2 origins"),
            "{text}"
        );
        assert!(text.contains("~20,100 open files"), "{text}");
    }

    #[test]
    fn raising_keeps_the_hard_limit() {
        let (soft, hard) = raise_open_files_limit();
        assert!(soft <= hard);
        assert_eq!(raise_open_files_limit(), (soft, hard));
    }
}
