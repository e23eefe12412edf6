//! Threshold expressions: parse tables per scope and quantity, units of the actual values.

use super::*;

#[test]
fn actual_values_carry_their_unit() {
    assert_eq!(format_actual("latency.p95 < 2s", 16_007.167), "16.01s");
    assert_eq!(format_actual("step.a.latency.p99 < 2s", 2.5), "2.50ms");
    assert_eq!(format_actual("latency.p50 < 2s", 0.45), "450µs");
    assert_eq!(format_actual("http.errors < 1%", 0.012), "1.20%");
    assert_eq!(format_actual("requests.rate > 100", 412.0), "412.0/s");
    assert_eq!(format_actual("waiting.p95 < 200ms", 12.5), "12.50ms");
    assert_eq!(format_actual("stream.ttft.p95 < 1s", 250.0), "250.00ms");
    assert_eq!(format_actual("stream.goodput > 1", 3.26), "3.3/s");
    assert_eq!(format_actual("stream.good > 90%", 0.95), "95.00%");
}

#[test]
fn stream_thresholds_parse_for_the_run_and_a_step_only() {
    use loadlab_metrics::StreamTime;
    let t = Threshold::parse("stream.ttft.p95 < 500ms").unwrap();
    assert_eq!(t.metric.scope, Scope::All);
    assert_eq!(
        t.metric.quantity,
        Quantity::StreamTime(StreamTime::Ttft, Stat::Percentile(95.0))
    );
    assert_eq!(t.value, 500.0);
    let t = Threshold::parse("step.chat completion.stream.tpot.p99 < 0.05s").unwrap();
    assert_eq!(t.metric.scope, Scope::Step("chat completion".into()));
    assert_eq!(
        t.metric.quantity,
        Quantity::StreamTime(StreamTime::Tpot, Stat::Percentile(99.0))
    );
    assert_eq!(t.value, 50.0);
    let t = Threshold::parse("stream.goodput > 2/s").unwrap();
    assert_eq!(
        (t.metric.quantity, t.value),
        (Quantity::Stream(StreamFigure::Goodput), 2.0)
    );
    let t = Threshold::parse("stream.good >= 90%").unwrap();
    assert_eq!(t.value, 0.9);
    assert!(Threshold::parse("stream.ttfx.p95 < 1s").is_err());
    let e = Threshold::parse("group.llm.stream.ttft.p95 < 1s").unwrap_err();
    assert!(e.contains("not for a group"), "{e}");
}

/// Each threshold text parses to its scope, quantity, comparison and value (in ms for
/// times, a fraction for percentages).
fn assert_parses(cases: &[(&str, Scope, Quantity, Op, f64)]) {
    for (text, scope, quantity, op, value) in cases {
        let t = Threshold::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&t.metric.scope, scope, "{text}");
        assert_eq!(&t.metric.quantity, quantity, "{text}");
        assert_eq!(&t.op, op, "{text}");
        assert!((t.value - value).abs() < 1e-9, "{text}: {}", t.value);
    }
}

#[test]
fn parses_latency_error_and_rate_table() {
    assert_parses(&[
        (
            "latency.p95 < 2.8s",
            Scope::All,
            Quantity::Latency(Stat::Percentile(95.0)),
            Op::Lt,
            2800.0,
        ),
        (
            "latency.p99<5500",
            Scope::All,
            Quantity::Latency(Stat::Percentile(99.0)),
            Op::Lt,
            5500.0,
        ),
        (
            "latency_compensated.p95 < 1s",
            Scope::All,
            Quantity::CompensatedLatency(Stat::Percentile(95.0)),
            Op::Lt,
            1000.0,
        ),
        (
            "step.get home.latency_compensated.p99 <= 2s",
            Scope::Step("get home".into()),
            Quantity::CompensatedLatency(Stat::Percentile(99.0)),
            Op::Le,
            2000.0,
        ),
        (
            "http.errors < 5%",
            Scope::All,
            Quantity::ErrorRate,
            Op::Lt,
            0.05,
        ),
        (
            "errors.rate <= 0.01",
            Scope::All,
            Quantity::ErrorRate,
            Op::Le,
            0.01,
        ),
        (
            "requests.rate > 100",
            Scope::All,
            Quantity::RequestRate,
            Op::Gt,
            100.0,
        ),
        (
            "step.signin.latency.p99 < 1s",
            Scope::Step("signin".into()),
            Quantity::Latency(Stat::Percentile(99.0)),
            Op::Lt,
            1000.0,
        ),
        (
            "group.auth.latency.p95 < 1.2s",
            Scope::Group("auth".into()),
            Quantity::Latency(Stat::Percentile(95.0)),
            Op::Lt,
            1200.0,
        ),
        (
            "step.create application.latency.mean < 300ms",
            Scope::Step("create application".into()),
            Quantity::Latency(Stat::Mean),
            Op::Lt,
            300.0,
        ),
        (
            "latency.p999 < 1s",
            Scope::All,
            Quantity::Latency(Stat::Percentile(99.9)),
            Op::Lt,
            1000.0,
        ),
        (
            "service_time.max >= 1ms",
            Scope::All,
            Quantity::ServiceTime(Stat::Max),
            Op::Ge,
            1.0,
        ),
    ]);
}

#[test]
fn parses_phase_and_scoped_table() {
    assert_parses(&[
        (
            "waiting.p95 < 200ms",
            Scope::All,
            Quantity::Phase(Phase::Waiting, Stat::Percentile(95.0)),
            Op::Lt,
            200.0,
        ),
        (
            "http_req_tls_handshaking.max < 20ms",
            Scope::All,
            Quantity::Phase(Phase::TlsHandshake, Stat::Max),
            Op::Lt,
            20.0,
        ),
        (
            "step.sign in.connect.p99 <= 5",
            Scope::Step("sign in".into()),
            Quantity::Phase(Phase::Connect, Stat::Percentile(99.0)),
            Op::Le,
            5.0,
        ),
        (
            "step.s3.ttfb.mean < 1s",
            Scope::Step("s3".into()),
            Quantity::Phase(Phase::Waiting, Stat::Mean),
            Op::Lt,
            1000.0,
        ),
        (
            "receiving.p999 < 50ms",
            Scope::All,
            Quantity::Phase(Phase::Receiving, Stat::Percentile(99.9)),
            Op::Lt,
            50.0,
        ),
        (
            "group.api.errors < 1%",
            Scope::Group("api".into()),
            Quantity::ErrorRate,
            Op::Lt,
            0.01,
        ),
    ]);
}

#[test]
fn rejects_table() {
    for (text, needle) in [
        ("latency.p95 2s", "no comparison"),
        ("latncy.p95 < 2s", "unknown metric"),
        ("latency.p95 < fast", "invalid duration"),
        ("http.errors < lots", "invalid error rate"),
        ("step..latency.p95 < 1s", "empty step/group name"),
        ("latency.p95 < inf", "not a finite number"),
        ("latency.p\u{fffd}99 < 1s", "unknown metric"),
        ("latency.p-5 < 1s", "unknown metric"),
        ("http.errors < NaN%", "not a finite number"),
        ("requests > 1e999", "not a finite number"),
        ("group.auth.waiting.p95 < 1s", "not for a group"),
        ("waiting.p95 < soon", "invalid duration"),
        ("waitin.p95 < 1s", "unknown metric"),
        // Not p10.1 and p25.0: no percentile at all.
        ("latency.p101 < 500ms", "unknown metric"),
        ("latency.p250 < 500ms", "unknown metric"),
        ("http.errors < 150%", "outside 0% to 100%"),
        ("http.errors > -5%", "outside 0% to 100%"),
        ("http.errors < 2", "outside 0% to 100%"),
    ] {
        let err = Threshold::parse(text).unwrap_err();
        assert!(err.contains(needle), "{text}: {err}");
    }
}
