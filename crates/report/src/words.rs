//! Plain-language pieces shared by the report builders: how a load, a threshold, a machine and
//! an error read in a sentence.

use crate::format::{format_fraction, format_ms, format_rate, format_secs, Unit};
use loadlab_metrics::result::{LoadInfo, RunResult, ThresholdResult};
use loadlab_metrics::{Environment, LoadModel};

/// `gatling 3.1.2`: the tool that measured an imported run.
pub fn imported_tool(r: &RunResult) -> Option<String> {
    let i = r.imported.as_ref()?;
    Some(match &i.version {
        Some(v) => format!("{} {v}", i.tool),
        None => i.tool.clone(),
    })
}

/// The load of a run: as planned ([`load_words`]), or, for an imported run, what its file
/// shows (another tool's plan is not in it: a Gatling user may run its scenario once).
pub fn run_load_words(r: &RunResult) -> String {
    let Some(tool) = imported_tool(r) else {
        return load_words(&r.load);
    };
    let l = &r.load;
    let seen = match (l.model, l.max_vus, l.peak_rate) {
        (LoadModel::Closed, Some(v), _) => format!("up to {v} virtual users at once"),
        (LoadModel::Open, _, Some(rate)) => {
            format!("requests started at up to {}", format_rate(rate))
        }
        _ => "the requests it holds".to_string(),
    };
    format!("{seen}, as the {tool} results file shows")
}

/// `open model, peak 300.0/s, at most 1000 in flight`.
pub fn load_words(l: &LoadInfo) -> String {
    match l.model {
        LoadModel::Closed => match l.max_vus {
            Some(v) => format!("closed model: up to {v} virtual users looping their flow"),
            None => "closed model".to_string(),
        },
        LoadModel::Open => {
            let mut s = match l.peak_rate {
                Some(r) => format!("open model: arrivals at up to {}", format_rate(r)),
                None => "open model".to_string(),
            };
            if let Some(n) = l.planned_arrivals {
                s.push_str(&format!(" ({n:.0} planned)"));
            }
            if let Some(m) = l.max_in_flight {
                s.push_str(&format!(", at most {m} requests in flight"));
            }
            s
        }
        LoadModel::Burst => match l.count {
            Some(n) => format!("burst: {n} requests released at once"),
            None => "burst".to_string(),
        },
    }
}

/// Requests that waited for a stream slot or a connection before they were sent, as
/// (label, sentence) facts: nothing when none waited.
pub fn request_wait_facts(r: &RunResult) -> Vec<(&'static str, String)> {
    let q = &r.requests;
    let mut facts = Vec::new();
    if q.delayed_by_stream_limit > 0 {
        facts.push((
            "Stream slots",
            format!(
                "{} requests waited for a free stream on the shared connections (counted in latency, not in service time)",
                q.delayed_by_stream_limit
            ),
        ));
    }
    if q.delayed_by_connect_limit > 0 {
        facts.push((
            "Connection waits",
            format!(
                "{} requests waited for a connection while others were being opened (counted in latency, not in service time)",
                q.delayed_by_connect_limit
            ),
        ));
    }
    facts
}

/// What each origin's connections spoke: `h2c (HTTP/2 asked; 2 shared connections, 2 opened)`,
/// prefixed by the origin when there are several; `None` for results without origins.
pub fn protocol_words(r: &RunResult) -> Option<String> {
    let one = |o: &loadlab_metrics::OriginResult| {
        let spoken = o
            .protocol
            .map_or("not known (no connection opened)".to_string(), |p| {
                p.as_str().to_string()
            });
        let asked = match (o.version.as_str(), o.url.starts_with("https://")) {
            ("1.1", _) => "HTTP/1.1 asked",
            ("2", _) => "HTTP/2 asked",
            (_, true) => "chosen by ALPN",
            (_, false) => "plain text",
        };
        let opened: u64 = o.connections.values().sum();
        let held = match o.shared_connections {
            Some(n) => format!("{n} shared connection{}", if n == 1 { "" } else { "s" }),
            None => "per-VU connections".to_string(),
        };
        let mixed = if o.connections.len() > 1 {
            let each: Vec<String> = o
                .connections
                .iter()
                .map(|(p, n)| format!("{n} {p}"))
                .collect();
            format!(" — mixed: {}", each.join(", "))
        } else {
            String::new()
        };
        format!("{spoken} ({asked}; {held}, {opened} opened){mixed}")
    };
    match r.origins.as_slice() {
        [] => None,
        [o] => Some(one(o)),
        many => Some(
            many.iter()
                .map(|o| format!("{}: {}", o.url, one(o)))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

/// `1 run of 8.00s (1.00s warm-up excluded)`.
pub fn duration_words(r: &RunResult) -> String {
    if r.warmup_s > 0.0 {
        format!(
            "{} measured after {} of warm-up",
            format_secs(r.duration_s),
            format_secs(r.warmup_s)
        )
    } else {
        format!("{} measured, no warm-up", format_secs(r.duration_s))
    }
}

/// `latency.p95 < 250ms` → (`p95 latency`, `< 250ms`).
fn split_threshold(expr: &str) -> (String, String) {
    let pos = expr.find(['<', '>', '=', '!']).unwrap_or(expr.len());
    let metric = expr[..pos].trim();
    let rest = expr[pos..].trim().to_string();
    let mut parts: Vec<&str> = metric.split('.').collect();
    let mut scope = String::new();
    if parts.len() >= 3 && (parts[0] == "group" || parts[0] == "step") {
        scope = format!(" of {} `{}`", parts[0], parts[1]);
        parts.drain(..2);
    }
    let words = match parts.as_slice() {
        ["latency", p] => format!("{p} latency"),
        ["service_time", p] => format!("{p} service time"),
        ["http", "errors"] | ["errors"] | ["errors", "rate"] | ["http", "error_rate"] => {
            "error rate".to_string()
        }
        ["requests", "rate"] | ["rate"] => "throughput".to_string(),
        ["requests"] => "request count".to_string(),
        _ => format!("`{metric}`"),
    };
    (format!("{words}{scope}"), rest)
}

/// Formats a threshold's actual value in its own unit.
pub fn threshold_actual(t: &ThresholdResult) -> String {
    match t.actual {
        Some(a) => Unit::of_threshold(&t.expr).format(a),
        None => "no data".to_string(),
    }
}

/// `p95 latency met its threshold (< 250ms): 4.20ms`; a windowed one says its value is
/// its worst window's (`…: 310ms, its worst 1s window`).
pub fn threshold_sentence(t: &ThresholdResult) -> String {
    let (metric, limit) = split_threshold(&t.expr);
    let verb = if t.ok { "met" } else { "missed" };
    let window = loadlab_scenario::Threshold::parse(&t.expr)
        .ok()
        .and_then(|p| p.live.window)
        .filter(|_| t.actual.is_some())
        .map(|w| {
            format!(
                ", its worst {} window",
                loadlab_scenario::units::format_duration(w)
            )
        })
        .unwrap_or_default();
    format!(
        "{} {verb} its threshold ({limit}): {}{window}",
        capitalize(&metric),
        threshold_actual(t)
    )
}

/// `stopped at 2.1 s of 4 s planned by threshold `latency.p95 < 100ms over 1s, abort`:
/// 300.00ms over the 1 s before`: which threshold stopped the run, when, and its value.
pub fn aborted_words(r: &RunResult, b: &loadlab_metrics::ThresholdBreach) -> String {
    let over = match b.window_s {
        Some(w) => format!("over the {} before", crate::format::format_secs(w)),
        None => "over the run until then".to_string(),
    };
    format!(
        "stopped at {} of {} planned by threshold `{}`: {} {over}",
        crate::format::format_secs(b.at_s),
        crate::format::format_secs(r.load.planned_duration_s),
        b.threshold,
        Unit::of_threshold(&b.threshold).format(b.value),
    )
}

/// `2.0 s rate 100/s → 400/s (api); 4.0 s pause; 6.0 s resume at 400/s (page)`: the commands
/// that steered the run, in order; `None` when it followed its plan.
pub fn steered_words(r: &RunResult) -> Option<String> {
    use loadlab_metrics::SteerAction;
    if r.steering.is_empty() {
        return None;
    }
    let level = |x: f64| crate::stretch_values::level_words(r, x);
    let each: Vec<String> = r
        .steering
        .iter()
        .map(|e| {
            let what = match e.action {
                SteerAction::Pause => "pause".to_string(),
                SteerAction::Resume => format!("resume at {}", level(e.after)),
                SteerAction::Stop => "stop".to_string(),
                SteerAction::Rate | SteerAction::Vus => {
                    let over = e
                        .over_s
                        .map(|s| format!(" over {}", crate::format::format_secs(s)))
                        .unwrap_or_default();
                    format!("{} → {}{over}", level(e.before), level(e.after))
                }
            };
            format!(
                "{} {what} ({})",
                crate::format::format_secs(e.at_s),
                e.source.as_str()
            )
        })
        .collect();
    Some(format!(
        "{} command{}: {}",
        r.steering.len(),
        if r.steering.len() == 1 { "" } else { "s" },
        each.join("; ")
    ))
}

/// A threshold met with less than this room to its bound is a near miss, listed on its own.
pub const NEAR_MISS: f64 = 0.10;

/// Whether `actual` met threshold `expr` with less than [`NEAR_MISS`] of room to its bound
/// (`latency.p95 < 50ms` at 46 ms). Unparseable expressions are never near misses.
pub fn near_miss(expr: &str, actual: f64) -> bool {
    use loadlab_scenario::threshold::{Op, Threshold};
    let Ok(t) = Threshold::parse(expr) else {
        return false;
    };
    if !t.op.holds(actual, t.value) || t.value == 0.0 {
        return false;
    }
    match t.op {
        Op::Lt | Op::Le => actual >= t.value * (1.0 - NEAR_MISS),
        Op::Gt | Op::Ge => actual <= t.value * (1.0 + NEAR_MISS),
    }
}

/// `` `checkout` (from `checkout.yaml`) ``: a scenario's name and, when known, its file.
pub fn scenario_words(name: &str, file: Option<&str>) -> String {
    match file {
        Some(f) => format!("`{name}` (from `{f}`)"),
        None => format!("`{name}`"),
    }
}

pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        // `p95 latency` stays lower-case, like a unit.
        Some('p') if c.as_str().starts_with(|d: char| d.is_ascii_digit()) => s.to_string(),
        Some(f) if f != '`' => f.to_uppercase().collect::<String>() + c.as_str(),
        Some(_) => s.to_string(),
        None => String::new(),
    }
}

pub fn bytes_words(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.0} MiB", b / (1024.0 * 1024.0))
    }
}

/// Label → value facts about the generator machine.
pub fn environment_facts(e: &Environment) -> Vec<(String, String)> {
    let mut f = Vec::new();
    if let Some(h) = &e.hostname {
        f.push(("Host".to_string(), h.clone()));
    }
    f.push((
        "CPU".to_string(),
        format!(
            "{} × {} ({})",
            e.cpus,
            e.cpu_model.as_deref().unwrap_or("unknown model"),
            e.arch
        ),
    ));
    if let Some(m) = e.memory_bytes {
        f.push(("Memory".to_string(), bytes_words(m)));
    }
    f.push(("Operating system".to_string(), e.os.clone()));
    f
}

/// The generator's CPU and health, in a sentence.
pub fn generator_words(r: &RunResult) -> String {
    if let Some(tool) = imported_tool(r) {
        return format!(
            "not measured: {tool} sent the requests, and its CPU use and timing are not in its results file"
        );
    }
    let g = &r.generator;
    let mut s = format!(
        "CPU {:.0}% of {} worker thread{} ({} core{} available), scheduler lag p99 {}, peak memory {}",
        g.cpu_percent,
        g.threads,
        if g.threads == 1 { "" } else { "s" },
        g.cores,
        if g.cores == 1 { "" } else { "s" },
        format_ms(g.scheduler_lag_ms_p99),
        bytes_words(g.max_rss_bytes)
    );
    if g.saturated {
        s.push_str(": **saturated**");
    } else {
        s.push_str(": not saturated");
    }
    let mut went_through = Vec::new();
    if let Some(p) = &g.pauses_ms {
        went_through.push(format!(
            "pause probe p99 {} (p99.9 {}, max {})",
            format_ms(p.p99),
            format_ms(p.p999),
            format_ms(p.max)
        ));
    }
    if let Some(w) = g.run_delay_share {
        went_through.push(format!(
            "workers waiting for a CPU {:.1}% of the time",
            100.0 * w
        ));
    }
    if let Some(steal) = g.steal_percent.filter(|s| *s >= 0.5) {
        went_through.push(format!(
            "{steal:.0}% of its cores' time stolen by the hypervisor"
        ));
    }
    if !went_through.is_empty() {
        s.push_str(&format!(
            "; what its threads went through: {}",
            went_through.join(", ")
        ));
    }
    s
}

/// Who else used the host's CPU over the measured window, whatever the verdict: `38% of the
/// host (busiest: sh 98% of a core, …)`.
pub fn other_processes_words(r: &RunResult) -> Option<String> {
    let load = r.resources.as_ref()?.host_load.as_ref()?;
    let mut s = format!(
        "{:.0}% of the host's {:.0} CPU{} (the generator {:.0}%)",
        load.other_percent_of_host,
        load.host_cpus,
        if load.host_cpus == 1.0 { "" } else { "s" },
        load.generator_percent_of_host
    );
    let busiest = load.busiest_others();
    if !busiest.is_empty() {
        s.push_str(&format!("; busiest: {busiest}"));
    }
    Some(s)
}

pub fn error_share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.00%".to_string()
    } else {
        format_fraction(part as f64 / whole as f64)
    }
}

/// A number without needless decimals, as flags and plans write it: `200`, `12.5`.
pub fn plain_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_waits_are_facts_only_when_some_waited() {
        let mut r = RunResult::default();
        assert!(request_wait_facts(&r).is_empty());
        r.requests.delayed_by_connect_limit = 7;
        let facts = request_wait_facts(&r);
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].0, "Connection waits");
        assert!(facts[0].1.starts_with("7 requests waited for a connection"));
        r.requests.delayed_by_stream_limit = 3;
        let labels: Vec<&str> = request_wait_facts(&r).iter().map(|f| f.0).collect();
        assert_eq!(labels, ["Stream slots", "Connection waits"]);
    }

    #[test]
    fn thresholds_read_as_sentences() {
        let t = ThresholdResult {
            expr: "latency.p95 < 2.8s".into(),
            actual: Some(611.0),
            ok: true,
        };
        assert_eq!(
            threshold_sentence(&t),
            "p95 latency met its threshold (< 2.8s): 611.00ms"
        );
        let t = ThresholdResult {
            expr: "group.auth.latency.p95 < 1.2s".into(),
            actual: Some(1500.0),
            ok: false,
        };
        assert_eq!(
            threshold_sentence(&t),
            "p95 latency of group `auth` missed its threshold (< 1.2s): 1.50s"
        );
        let t = ThresholdResult {
            expr: "http.errors < 1%".into(),
            actual: None,
            ok: false,
        };
        assert_eq!(
            threshold_sentence(&t),
            "Error rate missed its threshold (< 1%): no data"
        );
    }
}
