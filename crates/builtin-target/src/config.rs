//! Settings of the built-in target, kept apart so the binary can map its flags onto them.
//!
//! The defaults describe an idealised, infinitely fast service (no delay, no worker limit,
//! no errors); each knob then makes it behave like a real, capacity-limited one.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use crate::error::TargetError;

/// Default address: loopback only, so a demo never exposes a port to the network.
pub const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8080);

/// Default number of tokio worker threads.
///
/// One thread is plenty: the target serves `/api/ping` at well over 50k req/s on one
/// core, and on a small machine the load generator (which usually runs beside it) gets
/// the remaining cores instead of fighting the target for them. Raise it with `threads`
/// when the generator runs elsewhere.
pub const DEFAULT_THREADS: usize = 1;

/// How the built-in service behaves. Build it with `TargetConfig::default()` and change
/// the fields you need.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetConfig {
    /// Address to listen on; port 0 picks a free port (see `TargetHandle::addr`).
    pub listen: SocketAddr,
    /// Requests on `/api/*` that are served at once; `None` = unlimited.
    pub workers: Option<usize>,
    /// Artificial service time each `/api/*` request spends holding a worker slot
    /// (the mean when `service_dist` is `Exp`). Zero = no delay.
    pub service_time: Duration,
    /// Distribution of the service time.
    pub service_dist: ServiceDist,
    /// Maximum requests waiting for a worker; one more is answered 503 at once.
    /// `None` = unbounded queue. Only meaningful together with `workers`.
    pub queue_limit: Option<usize>,
    /// Probability (0.0..=1.0) that an `/api/*` request fails with 500 after its service time.
    pub error_rate: f64,
    /// Tokio worker threads. 1 runs a single-threaded runtime (see [`DEFAULT_THREADS`]).
    pub threads: usize,
    /// Serve HTTPS (ALPN `h2` and `http/1.1`) instead of plain HTTP/1.1 and h2c.
    pub tls: Option<crate::tls::TargetTls>,
    /// Share the port with other target processes (SO_REUSEPORT): the kernel spreads the
    /// connections, so together they hold more than one process's open-files limit allows.
    pub reuse_port: bool,
    /// A service that degrades mid-run: after a while, another service time.
    pub degrade: Option<Degrade>,
    /// A service that freezes now and then (a GC pause, a lock): see [`Stall`].
    pub stall: Option<Stall>,
    /// The inference server behind `/v1/chat/completions` and `/v1/completions`.
    pub llm: crate::llm::LlmConfig,
}

/// `--degrade-after 1s --degraded-service-time 300ms`: from `after` past the first `/api/*`
/// request on, each `/api/*` request's service time is `service_time` instead (same
/// distribution). For trying what watches a run while it goes (thresholds over a window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Degrade {
    pub after: Duration,
    pub service_time: Duration,
}

/// `--stall-every 5s --stall-for 1s`: counted from the first `/api/*` request, the last
/// `length` of every `every` is a stall. An `/api/*` request that comes during one waits for
/// its end before its service time starts: what a closed model's VUs hide (they stop sending)
/// and its compensated latency shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub every: Duration,
    pub length: Duration,
}

impl Stall {
    /// How long a request arriving `since_first` after the first one waits for the stall to
    /// end (zero outside a stall).
    pub fn wait_at(&self, since_first: Duration) -> Duration {
        let every = self.every.as_nanos().max(1);
        let into = Duration::from_nanos((since_first.as_nanos() % every) as u64);
        let stall_from = self.every.saturating_sub(self.length);
        if into >= stall_from {
            self.every - into
        } else {
            Duration::ZERO
        }
    }
}

impl TargetConfig {
    /// The capacity model in a line: `4 workers, service time 10ms (exp), queue limit 50,
    /// 1% errors, 1 thread`.
    pub fn describe(&self) -> String {
        let workers = match self.workers {
            Some(1) => "1 worker".to_string(),
            Some(n) => format!("{n} workers"),
            None => "unlimited workers".to_string(),
        };
        let service = if self.service_time.is_zero() {
            "no service time".to_string()
        } else {
            format!(
                "service time {:?} ({})",
                self.service_time,
                match self.service_dist {
                    ServiceDist::Fixed => "fixed",
                    ServiceDist::Exp => "exponential",
                }
            )
        };
        let queue = match self.queue_limit {
            Some(n) => format!("queue limit {n} (then 503)"),
            None => "unbounded queue".to_string(),
        };
        let degrade = self
            .degrade
            .map(|d| {
                format!(
                    ", service time {:?} from {:?} after the first request",
                    d.service_time, d.after
                )
            })
            .unwrap_or_default();
        let stall = self
            .stall
            .map(|s| format!(", a {:?} stall every {:?}", s.length, s.every))
            .unwrap_or_default();
        format!(
            "{workers}, {service}{degrade}{stall}, {queue}, {}% errors, {} thread{}",
            self.error_rate * 100.0,
            self.threads,
            if self.threads == 1 { "" } else { "s" }
        )
    }
}

impl Default for TargetConfig {
    fn default() -> Self {
        TargetConfig {
            listen: DEFAULT_LISTEN,
            workers: None,
            service_time: Duration::ZERO,
            service_dist: ServiceDist::Fixed,
            queue_limit: None,
            error_rate: 0.0,
            threads: DEFAULT_THREADS,
            reuse_port: false,
            tls: None,
            degrade: None,
            stall: None,
            llm: crate::llm::LlmConfig::default(),
        }
    }
}

impl TargetConfig {
    /// Checks the values a user can get wrong and explains what is expected.
    pub fn validate(&self) -> Result<(), TargetError> {
        let invalid = |msg: String| Err(TargetError::InvalidConfig(msg));
        if self.workers == Some(0) {
            return invalid(
                "workers must be at least 1 (leave it unset for unlimited workers)".into(),
            );
        }
        if self.llm.batch == 0 {
            return invalid("batch must be at least 1 (sequences decoded together)".into());
        }
        if self.threads == 0 {
            return invalid("threads must be at least 1".into());
        }
        if !self.error_rate.is_finite() || !(0.0..=1.0).contains(&self.error_rate) {
            return invalid(format!(
                "error rate must be between 0.0 and 1.0, got {}",
                self.error_rate
            ));
        }
        Ok(())
    }
}

/// Distribution of the artificial service time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceDist {
    /// Every request takes exactly `service_time`.
    #[default]
    Fixed,
    /// Exponentially distributed with mean `service_time` (an M/M/c-like service).
    Exp,
}

impl fmt::Display for ServiceDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServiceDist::Fixed => "fixed",
            ServiceDist::Exp => "exp",
        })
    }
}

/// Error for a service distribution name that is neither `fixed` nor `exp`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown service time distribution '{0}' (expected 'fixed' or 'exp')")]
pub struct ParseServiceDistError(pub String);

impl FromStr for ServiceDist {
    type Err = ParseServiceDistError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fixed" => Ok(ServiceDist::Fixed),
            "exp" | "exponential" => Ok(ServiceDist::Exp),
            _ => Err(ParseServiceDistError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_the_last_part_of_every_period() {
        let stall = Stall {
            every: Duration::from_secs(5),
            length: Duration::from_secs(1),
        };
        let ms = Duration::from_millis;
        // (time since the first request, wait)
        for (at, wait) in [
            (ms(0), ms(0)),
            (ms(3_999), ms(0)),
            (ms(4_000), ms(1_000)),
            (ms(4_750), ms(250)),
            (ms(5_000), ms(0)),
            (ms(9_900), ms(100)),
        ] {
            assert_eq!(stall.wait_at(at), wait, "at {at:?}");
        }
    }

    #[test]
    fn parses_distributions() {
        assert_eq!("fixed".parse::<ServiceDist>(), Ok(ServiceDist::Fixed));
        assert_eq!("EXP".parse::<ServiceDist>(), Ok(ServiceDist::Exp));
        let err = "normal".parse::<ServiceDist>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown service time distribution 'normal' (expected 'fixed' or 'exp')"
        );
        assert_eq!(ServiceDist::Exp.to_string().parse(), Ok(ServiceDist::Exp));
    }

    #[test]
    fn defaults_and_validation() {
        let c = TargetConfig::default();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.threads, DEFAULT_THREADS);
        assert!(c.validate().is_ok());
        for bad in [
            TargetConfig {
                workers: Some(0),
                ..TargetConfig::default()
            },
            TargetConfig {
                threads: 0,
                ..TargetConfig::default()
            },
            TargetConfig {
                error_rate: 1.5,
                ..TargetConfig::default()
            },
            TargetConfig {
                error_rate: f64::NAN,
                ..TargetConfig::default()
            },
        ] {
            let err = bad.validate().unwrap_err();
            assert!(matches!(err, TargetError::InvalidConfig(_)), "{err}");
        }
    }
}
