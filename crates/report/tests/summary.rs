//! The terminal summary and the JSON renderer, checked line by line on hand-built results.

mod common;

use loadlab_report::{render_json, render_summary, RunResult, Style};

fn render(r: &RunResult, style: Style) -> String {
    let mut out = Vec::new();
    render_summary(r, &mut out, style).unwrap();
    String::from_utf8(out).unwrap()
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line contains {needle:?} in:\n{text}"))
}

#[test]
fn closed_summary() {
    let text = render(&common::sample(), Style::PLAIN);
    println!("{text}");
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "checkout · closed model (50 VUs) · 1m0s measured · 10s warm-up excluded · target http://localhost:8080"
    );
    assert!(!text.contains("INVALID"));
    assert!(!text.contains("interrupted"));
    assert_eq!(
        line_with(&text, "requests ."),
        "  requests ..........: 12000 total, 11880 ok, 120 failed (1.00%), 200.0/s (after warm-up; 1500 during it)"
    );
    assert_eq!(
        line_with(&text, "iterations ."),
        "  iterations ........: 4000 completed, 0 dropped"
    );
    assert_eq!(
        line_with(&text, "iteration duration"),
        "  iteration duration : p50=9.80ms p90=15.20ms p95=19.90ms p99=31.00ms max=92.00ms"
    );
    assert_eq!(line_with(&text, "vus max"), "  vus max ...........: 50");
    assert_eq!(
        line_with(&text, "data ."),
        "  data ..............: 1.5 MiB sent (25.4 KiB/s), 35.2 MiB received (601.6 KiB/s)"
    );
    // The k6-like breakdown of service time, below latency.
    assert_eq!(
        line_with(&text, "connect ."),
        "  connect ...........: p50=80µs p90=120µs p95=150µs p99=300µs max=310µs (50 connections opened)"
    );
    assert!(line_with(&text, "tls handshake .").contains("p95=2.40ms"));
    assert_eq!(
        line_with(&text, "waiting (ttfb) ."),
        "  waiting (ttfb) ....: p50=2.70ms p90=4.90ms p95=6.80ms p99=11.60ms max=44.00ms"
    );
    assert!(line_with(&text, "receiving .").contains("p99=400µs"));
    assert!(text.find("latency .").unwrap() < text.find("connect .").unwrap());
    assert_eq!(
        line_with(&text, "warm-up requests"),
        "  warm-up requests ..: 1500 (excluded from every statistic)"
    );
    assert_eq!(
        line_with(&text, "latency ."),
        "  latency ...........: min=1.02ms mean=3.40ms p50=2.90ms p90=5.10ms p95=7.00ms p99=12.00ms p99.9=30.00ms max=45.00ms"
    );
    assert!(
        !text.contains("service time ."),
        "in the closed model service time repeats latency"
    );
    assert!(line_with(&text, "closed model .").contains("understates what users would see"));
    assert!(!text.contains("send lag"));
    assert_eq!(
        line_with(&text, "status codes"),
        "  status codes ......: 200=11880 503=100"
    );
    assert_eq!(
        line_with(&text, "errors ."),
        "  errors ............: 120 (1.00% of requests)"
    );
    // Sorted by count, with the hint and, when there is one, an example message.
    let http = line_with(&text, "    http_5xx");
    assert!(http.contains("100"), "{http}");
    assert!(http.contains("0.83%"), "{http}");
    assert!(
        http.ends_with("the target answered 5xx: it failed or shed load"),
        "{http}"
    );
    assert!(line_with(&text, "e.g. 503 Service Unavailable").starts_with("    "));
    let timeout = line_with(&text, "    timeout");
    assert!(
        timeout.contains("0.17%") && timeout.contains("no complete response within the timeout")
    );
    assert!(text.find("    http_5xx").unwrap() < text.find("    timeout").unwrap());
}

/// The connect line and the protocol line count connections the same way, and say which.
#[test]
fn connections_opened_during_warm_up_are_named_on_the_connect_line() {
    let mut r = common::sample();
    r.origins = vec![loadlab_metrics::OriginResult {
        url: "http://localhost:8080".into(),
        version: "auto".into(),
        protocol: Some(loadlab_metrics::Protocol::Http1),
        connections: [("http/1.1".to_string(), 53)].into(),
        shared_connections: None,
    }];
    let text = render(&r, Style::PLAIN);
    assert!(
        line_with(&text, "protocol .").contains("per-VU connections, 53 opened"),
        "{text}"
    );
    assert!(
        line_with(&text, "connect .")
            .ends_with("(50 connections opened in the measured window, of 53 in all)"),
        "{text}"
    );
}

#[test]
fn step_and_group_tables() {
    let text = render(&common::sample(), Style::PLAIN);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines.iter().position(|l| l.starts_with("  step ")).unwrap();
    assert_eq!(
        &lines[head..head + 4],
        &[
            "  step                              group   requests       failed     p50     p95      p99      max",
            "  GET /                             browse      4000            0  1.90ms  3.20ms   4.40ms  12.50ms",
            "  GET /api/v1/products/…rsonalised  browse      4000   20 (0.50%)  3.50ms  8.10ms  14.00ms  45.00ms",
            "  POST /cart                        buy         4000  100 (2.50%)  3.60ms  8.00ms  12.30ms  40.00ms",
        ][..]
    );
    let group_head = lines
        .iter()
        .position(|l| l.starts_with("  group "))
        .unwrap();
    assert_eq!(
        &lines[group_head..group_head + 3],
        &[
            "  group   requests       failed     p50     p95      p99      max",
            "  browse      8000   20 (0.25%)  2.60ms  6.80ms  11.00ms  45.00ms",
            "  buy         4000  100 (2.50%)  3.60ms  8.00ms  12.30ms  40.00ms",
        ][..]
    );
    // Errors, then steps, then groups, then thresholds.
    let threshold_line = lines
        .iter()
        .position(|l| l.starts_with("  thresholds ."))
        .unwrap();
    let errors_line = lines
        .iter()
        .position(|l| l.starts_with("  errors ."))
        .unwrap();
    assert!(errors_line < head && head < group_head && group_head < threshold_line);

    // Groups of one step each: the group table would repeat the step table, and is left out.
    let mut one_each = common::sample();
    one_each.steps.remove(1);
    let text = render(&one_each, Style::PLAIN);
    assert!(text.contains("  step "), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("  group ")), "{text}");
}

#[test]
fn thresholds_use_the_metric_unit() {
    let text = render(&common::sample(), Style::PLAIN);
    assert_eq!(
        line_with(&text, "thresholds ."),
        "  thresholds ........: 2 passed, 2 failed"
    );
    assert_eq!(
        line_with(&text, "latency.p95 < 200ms"),
        "    ✓ latency.p95 < 200ms          7.00ms"
    );
    assert_eq!(
        line_with(&text, "http.errors"),
        "    ✗ http.errors < 0.5%           1.00%"
    );
    assert_eq!(
        line_with(&text, "requests.rate"),
        "    ✓ requests.rate > 100          200.0/s"
    );
    assert_eq!(
        line_with(&text, "step.login"),
        "    ✗ step.login.latency.p99 < 1s  no data"
    );
}

#[test]
fn generator_line() {
    let text = render(&common::sample(), Style::PLAIN);
    assert_eq!(
        line_with(&text, "generator ."),
        "  generator .........: cpu 42.5% of 2 worker threads (2 cores available), saturated: no, scheduler lag p99=450µs, max rss 48.0 MiB"
    );
    assert!(!text.contains("was saturated"));
}

#[test]
fn open_invalid_interrupted_saturated() {
    let text = render(&common::sample_open_invalid(), Style::PLAIN);
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("open model (peak 200.0/s)"),
        "{}",
        lines[0]
    );
    // The banner comes before any number.
    assert_eq!(
        lines[2],
        "  INVALID RUN: these numbers must not be used as a result"
    );
    assert_eq!(
        lines[3],
        "    - the load generator was saturated (cpu 97% of 2 cores)"
    );
    assert_eq!(lines[4], "    - send lag p99 1.50ms exceeds 1ms");
    assert!(lines[5].starts_with("  interrupted: ") && lines[5].contains("partial result"));
    assert!(text.find("INVALID").unwrap() < text.find("requests .").unwrap());
    assert_eq!(
        line_with(&text, "iterations ."),
        "  iterations ........: 4000 completed, 12 dropped, 42 delayed by max_in_flight"
    );
    assert_eq!(
        line_with(&text, "open model ."),
        "  open model ........: latency is measured from the intended send time; send lag p50=120µs p99=1.50ms max=4.00ms"
    );
    assert!(!text.contains("closed model"));
    assert!(line_with(&text, "generator .")
        .contains("cpu 97.0% of 2 worker threads (2 cores available), saturated: yes"));
    assert_eq!(
        line_with(&text, "was saturated:"),
        "  ! the load generator was saturated: results understate the target's capacity and overstate its latency"
    );
    assert_eq!(
        lines.last().unwrap(),
        &"  INVALID RUN (see the reasons at the top)"
    );
}

#[test]
fn burst_counts_as_open_and_empty_runs_say_no_data() {
    let mut r = common::sample();
    r.load.model = loadlab_metrics::LoadModel::Burst;
    r.load.count = Some(1000);
    r.requests = Default::default();
    r.latency_ms = Default::default();
    r.service_time_ms = Default::default();
    r.errors.clear();
    r.status_codes.clear();
    r.steps.clear();
    r.groups.clear();
    r.thresholds.clear();
    r.warmup_s = 0.0;
    r.target = None;
    let text = render(&r, Style::PLAIN);
    assert_eq!(
        text.lines().next().unwrap(),
        "checkout · burst model (1000 requests) · 1m0s measured"
    );
    assert!(line_with(&text, "open model .").contains("intended send time"));
    assert_eq!(
        line_with(&text, "latency ."),
        "  latency ...........: no data (no request completed)"
    );
    assert_eq!(
        line_with(&text, "requests ."),
        "  requests ..........: 0 total, 0 ok, 0 failed (0.00%), 0.0/s"
    );
    assert_eq!(line_with(&text, "errors ."), "  errors ............: none");
    assert_eq!(
        line_with(&text, "status codes"),
        "  status codes ......: none"
    );
    assert!(!text.contains("warm-up"));
    assert!(!text.contains("thresholds"));
    assert!(!text.contains("  step "));
}

#[test]
fn colour_only_when_asked() {
    for r in [common::sample(), common::sample_open_invalid()] {
        assert!(!render(&r, Style::PLAIN).contains('\x1b'));
        let coloured = render(&r, Style::COLOR);
        assert!(coloured.contains("\x1b[32m✓\x1b[0m"));
        assert!(coloured.contains("\x1b[31m✗\x1b[0m"));
    }
    let coloured = render(&common::sample_open_invalid(), Style::COLOR);
    assert!(coloured.contains("\x1b[1;31mINVALID RUN"));
}

#[test]
fn json_round_trips_with_trailing_newline() {
    let r = common::sample();
    let mut out = Vec::new();
    render_json(&r, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("{\n  \"schema\": \"loadlab.run.v2\","));
    assert!(text.ends_with("}\n"));
    let back: RunResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}
