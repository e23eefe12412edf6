//! Metric names: round trips, aliases, resources, bad names, verdict words, serde.

use super::*;

#[test]
fn names_round_trip_and_aliases_read_the_same() {
    let table: &[(&str, &str)] = &[
        ("latency_ms.p95", "latency_ms.p95"),
        ("latency.p95", "latency_ms.p95"),
        ("latency.p99.9", "latency_ms.p999"),
        ("latency.avg", "latency_ms.mean"),
        ("http.errors", "errors.rate"),
        ("errors", "errors.rate"),
        ("throughput", "requests.rate"),
        ("p95", "latency_ms.p95"),
        ("p999", "latency_ms.p999"),
        ("step.signin.p99", "steps.signin.latency_ms.p99"),
        ("requests", "requests.total"),
        ("iterations", "iterations.completed"),
        ("step.signin.latency.p99", "steps.signin.latency_ms.p99"),
        ("stream.ttft.p95", "stream.ttft_ms.p95"),
        ("stream.itl_ms.p50", "stream.itl_ms.p50"),
        ("stream.goodput", "stream.goodput_per_s"),
        ("step.chat.stream.tpot.p99", "steps.chat.stream.tpot_ms.p99"),
        ("steps.signin.latency_ms.p99", "steps.signin.latency_ms.p99"),
        ("group.auth.errors", "groups.auth.errors.rate"),
        ("steps.x.errors.rate", "steps.x.errors.rate"),
        (
            "steps.GET /a.json.latency_ms.max",
            "steps.GET /a.json.latency_ms.max",
        ),
        (
            "steps.create application.errors.count",
            "steps.create application.errors.count",
        ),
    ];
    for (input, canonical) in table {
        let m: MetricId = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(m.to_string(), *canonical, "{input}");
        assert_eq!(canonical.parse::<MetricId>().unwrap(), m);
    }
    let m: MetricId = "steps.x.errors.rate".parse().unwrap();
    assert_eq!(m.scope, Scope::Step("x".into()));
    assert_eq!(m.quantity, Quantity::ErrorRate);
}

#[test]
fn resource_metrics() {
    let table: &[(&str, &str)] = &[
        (
            "process.target.cpu_percent",
            "resources.processes.target.cpu_percent",
        ),
        (
            "processes.target.cpu_percent",
            "resources.processes.target.cpu_percent",
        ),
        ("resources.host.cpu_percent", "resources.host.cpu_percent"),
        ("host.cpu_percent.mean", "resources.host.cpu_percent"),
        (
            "process.target.rss_bytes.max",
            "resources.processes.target.rss_bytes.max",
        ),
        ("cgroup.db.cpu_percent", "resources.cgroups.db.cpu_percent"),
        (
            "prometheus.app.http_requests_total{code=\"500\"}",
            "resources.prometheus.app.http_requests_total{code=\"500\"}",
        ),
    ];
    for (input, canonical) in table {
        let m: MetricId = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(m.to_string(), *canonical, "{input}");
        assert_eq!(canonical.parse::<MetricId>().unwrap(), m);
    }
    let cpu: MetricId = "process.target.cpu_percent".parse().unwrap();
    assert_eq!(cpu.resource_series(), Some("processes.target.cpu_percent"));
    assert_eq!(cpu.unit(), MetricUnit::Percent);
    assert_eq!(cpu.verdict_for(true), Verdict::Worse, "more CPU is worse");
    assert_eq!(
        "process.target.rss_bytes.max"
            .parse::<MetricId>()
            .unwrap()
            .unit(),
        MetricUnit::Bytes
    );
    assert!("process.".parse::<MetricId>().is_err());
}

#[test]
fn bad_names_are_errors() {
    for bad in [
        "latency.p97",
        "foo",
        "steps..latency_ms.p95",
        "steps.x",
        "group.a.iterations",
    ] {
        assert!(bad.parse::<MetricId>().is_err(), "{bad}");
    }
}

#[test]
fn verdict_words_follow_the_good_direction() {
    let p95 = MetricId::latency(LatencyStat::P95);
    assert_eq!(p95.verdict_for(true), Verdict::Slower);
    assert_eq!(p95.verdict_for(false), Verdict::Faster);
    let tput = MetricId::run(Quantity::Throughput);
    assert_eq!(tput.verdict_for(true), Verdict::Better);
    assert_eq!(tput.verdict_for(false), Verdict::Worse);
    let errors = MetricId::step("signin", Quantity::ErrorRate);
    assert_eq!(errors.verdict_for(true), Verdict::Worse);
}

#[test]
fn metric_ids_serialize_as_their_names() {
    let mut map = std::collections::BTreeMap::new();
    map.insert(MetricId::step("b", Quantity::Requests), 1);
    map.insert(MetricId::run(Quantity::Throughput), 2);
    let text = serde_json::to_string(&map).unwrap();
    assert_eq!(text, r#"{"requests.rate":2,"steps.b.requests.total":1}"#);
    let back: std::collections::BTreeMap<MetricId, i32> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, map);
}
