//! The `monitor:` section: what loadlab samples besides its own requests, once per interval —
//! the host, processes and cgroups of the system under test, and Prometheus endpoints.
//!
//! ```yaml
//! monitor:
//!   interval: 1s
//!   host: true                                     # default on
//!   processes:
//!     - { name: target, port: 8080 }               # or pid: 1234, or match: "java .*ticket"
//!   cgroups:
//!     - { name: db, path: /sys/fs/cgroup/system.slice/mysql.service }   # or container: ID
//!   prometheus:
//!     - { name: app, url: http://127.0.0.1:8080/metrics, series: [process_cpu_seconds_total, "http_requests_total{code=\"500\"}"] }
//! ```
//!
//! These are plain data types shared with the `loadlab-monitor` crate, which depends on this
//! crate (never the other way round): the scenario language stays free of sampling code.
//! They serialize back to the YAML shape (`{name: target, port: 8080}`), so a resolved
//! scenario can be stored with a run.
//! `flag` parses the `--monitor NAME=...` form; `selector` the Prometheus series selectors.

pub(crate) mod flag;
mod selector;

pub use flag::{parse_monitor_flag, MonitorFlag};
pub use selector::{parse_series_selector, LabelMatcher, MatchOp, SeriesSelector};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Sampling interval when none is given.
pub const DEFAULT_MONITOR_INTERVAL: Duration = Duration::from_secs(1);
/// Shortest interval accepted: below it CPU shares (counted in 10 ms ticks) get coarse and
/// the monitor's own cost grows.
pub const MIN_MONITOR_INTERVAL: Duration = Duration::from_millis(100);

/// What to sample, once per `interval`. The default samples the host only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MonitorConfig {
    #[serde(with = "duration_text")]
    pub interval: Duration,
    /// Host CPU (total and per core), pressure, memory, load, network, TCP sockets, ports,
    /// and the generator's own CPU and open files.
    pub host: bool,
    pub processes: Vec<ProcessWatch>,
    pub cgroups: Vec<CgroupWatch>,
    pub prometheus: Vec<PrometheusWatch>,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            interval: DEFAULT_MONITOR_INTERVAL,
            host: true,
            processes: Vec::new(),
            cgroups: Vec::new(),
            prometheus: Vec::new(),
        }
    }
}

impl MonitorConfig {
    /// Whether anything at all is sampled.
    pub fn is_empty(&self) -> bool {
        !self.host
            && self.processes.is_empty()
            && self.cgroups.is_empty()
            && self.prometheus.is_empty()
    }

    /// Adds what a `--monitor` flag names; an entry of the same kind and name (from the
    /// scenario file) is replaced, as other flags override the file.
    pub fn apply_flag(&mut self, flag: MonitorFlag) {
        match flag {
            MonitorFlag::Process(p) => {
                self.processes.retain(|q| q.name != p.name);
                self.processes.push(p);
            }
            MonitorFlag::Cgroup(c) => {
                self.cgroups.retain(|q| q.name != c.name);
                self.cgroups.push(c);
            }
        }
    }
}

/// Processes of the system under test, with all their descendants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessWatch {
    /// Names the series: `processes.<name>.cpu_percent`.
    pub name: String,
    #[serde(flatten)]
    pub selector: ProcessSelector,
}

/// How the processes are found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessSelector {
    /// One process id.
    Pid(u32),
    /// Every process whose command line (arguments joined by spaces) matches this regex.
    Match(String),
    /// The process listening on this TCP port (IPv4 or IPv6).
    Port(u16),
}

impl ProcessSelector {
    /// As written in the flag form: `1234`, `port:8080`, `match:java .*ticket`.
    pub fn describe(&self) -> String {
        match self {
            ProcessSelector::Pid(pid) => format!("pid {pid}"),
            ProcessSelector::Match(re) => format!("command line matching `{re}`"),
            ProcessSelector::Port(port) => format!("listening on port {port}"),
        }
    }
}

/// A cgroup v2 (a container, a systemd service).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupWatch {
    /// Names the series: `cgroups.<name>.cpu_percent`.
    pub name: String,
    #[serde(flatten)]
    pub location: CgroupLocation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupLocation {
    /// The cgroup directory, e.g. `/sys/fs/cgroup/system.slice/mysql.service`.
    Path(PathBuf),
    /// A container id (full or at least 12 hex digits): the cgroup directory whose name
    /// contains it is looked up under the cgroup v2 mount.
    Container(String),
}

/// A Prometheus text-format endpoint and the series to record from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrometheusWatch {
    /// Names the series: `prometheus.<name>.<selector>`.
    pub name: String,
    pub url: String,
    pub series: Vec<SeriesSelector>,
}

/// Whether `name` can name a monitored source: it becomes one segment of series names
/// (`processes.<name>.cpu_percent`) and the left side of `--monitor NAME=...`.
pub fn is_valid_source_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Serde for the interval as people write it (`1s`, `500ms`).
mod duration_text {
    use serde::{Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::units::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        crate::units::de_duration(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_to_the_yaml_shape_and_back() {
        let config = MonitorConfig {
            interval: Duration::from_millis(500),
            host: true,
            processes: vec![
                ProcessWatch {
                    name: "target".into(),
                    selector: ProcessSelector::Port(8080),
                },
                ProcessWatch {
                    name: "jvm".into(),
                    selector: ProcessSelector::Match("java .*ticket".into()),
                },
            ],
            cgroups: vec![CgroupWatch {
                name: "db".into(),
                location: CgroupLocation::Path("/sys/fs/cgroup/system.slice/mysql.service".into()),
            }],
            prometheus: vec![PrometheusWatch {
                name: "app".into(),
                url: "http://127.0.0.1:8080/metrics".into(),
                series: vec![parse_series_selector("http_requests_total{code=\"500\"}").unwrap()],
            }],
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["interval"], "500ms");
        assert_eq!(
            json["processes"][0],
            serde_json::json!({"name": "target", "port": 8080})
        );
        assert_eq!(json["processes"][1]["match"], "java .*ticket");
        assert_eq!(
            json["cgroups"][0]["path"],
            "/sys/fs/cgroup/system.slice/mysql.service"
        );
        assert_eq!(
            json["prometheus"][0]["series"][0],
            "http_requests_total{code=\"500\"}"
        );
        let back: MonitorConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn flags_replace_entries_of_the_same_name() {
        let mut config = MonitorConfig::default();
        config.apply_flag(parse_monitor_flag("target=port:8080").unwrap());
        config.apply_flag(parse_monitor_flag("db=4321").unwrap());
        config.apply_flag(parse_monitor_flag("target=1234").unwrap());
        assert_eq!(config.processes.len(), 2);
        assert_eq!(config.processes[1].selector, ProcessSelector::Pid(1234));
        assert!(!config.is_empty());
        assert!(MonitorConfig {
            host: false,
            ..MonitorConfig::default()
        }
        .is_empty());
    }

    #[test]
    fn source_names() {
        for ok in ["target", "db-1", "app_2"] {
            assert!(is_valid_source_name(ok), "{ok}");
        }
        for bad in ["", "a.b", "a b", "x{y}", &"n".repeat(65)] {
            assert!(!is_valid_source_name(bad), "{bad}");
        }
    }
}
