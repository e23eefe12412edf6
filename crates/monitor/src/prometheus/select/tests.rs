//! Selection on a small exposition with every metric type.

use super::*;
use loadlab_scenario::monitor::parse_series_selector;

const PAGE: &str = r#"# HELP http_requests_total Requests.
# TYPE http_requests_total counter
http_requests_total{route="/api/ping",code="200"} 1000
http_requests_total{route="/api/ping",code="500"} 7
http_requests_total{route="/api/users",code="500"} 3
http_requests_total{route="/api/users",code="201"} 50
# TYPE in_flight gauge
in_flight 12
# TYPE svc_seconds histogram
svc_seconds_bucket{le="0.005"} 10
svc_seconds_bucket{le="0.01"} 40
svc_seconds_bucket{le="+Inf"} 50
svc_seconds_sum 0.4
svc_seconds_count 50
queue_length 3
legacy_events_total 99
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100.5
node_cpu_seconds_total{cpu="1",mode="idle"} 200.5
node_cpu_seconds_total{cpu="0",mode="user"} 10
"#;

/// Kind, sum and number of the matched series.
type Picked = Option<(MetricKind, f64, usize)>;

fn pick(selector: &str) -> Picked {
    let sel = Selection::new(&parse_series_selector(selector).unwrap());
    let lines = relevant_lines(PAGE, std::slice::from_ref(&sel));
    let types = declared_types(&lines);
    let scrape = Scrape::parse(lines.iter().map(|l| Ok(l.to_string()))).unwrap();
    select(&scrape, &types, &sel)
        .map(|m| (m.kind, m.series.iter().map(|s| s.1).sum(), m.series.len()))
}

#[test]
fn selectors_table() {
    use MetricKind::*;
    let cases: &[(&str, Picked)] = &[
        ("http_requests_total", Some((Counter, 1060.0, 4))),
        (
            r#"http_requests_total{code="500"}"#,
            Some((Counter, 10.0, 2)),
        ),
        (
            r#"http_requests_total{code!="500"}"#,
            Some((Counter, 1050.0, 2)),
        ),
        (
            r#"http_requests_total{code=~"5..",route="/api/users"}"#,
            Some((Counter, 3.0, 1)),
        ),
        (
            r#"http_requests_total{code!~"2.*"}"#,
            Some((Counter, 10.0, 2)),
        ),
        (
            r#"http_requests_total{missing=""}"#,
            Some((Counter, 1060.0, 4)),
        ),
        (r#"http_requests_total{code="404"}"#, None),
        ("in_flight", Some((Gauge, 12.0, 1))),
        ("queue_length", Some((Gauge, 3.0, 1))),
        ("legacy_events_total", Some((Counter, 99.0, 1))),
        ("svc_seconds_count", Some((Counter, 50.0, 1))),
        ("svc_seconds_sum", Some((Counter, 0.4, 1))),
        (r#"svc_seconds_bucket{le="0.01"}"#, Some((Counter, 40.0, 1))),
        (r#"svc_seconds_bucket{le="+Inf"}"#, Some((Counter, 50.0, 1))),
        (r#"svc_seconds_bucket{le="0.02"}"#, None),
        ("svc_seconds", None),
        (
            r#"node_cpu_seconds_total{mode="idle"}"#,
            Some((Counter, 301.0, 2)),
        ),
        ("nothing_here", None),
    ];
    for (selector, want) in cases {
        assert_eq!(pick(selector), *want, "{selector}");
    }
}

#[test]
fn keeps_only_relevant_lines() {
    let sel = Selection::new(&parse_series_selector("in_flight").unwrap());
    assert_eq!(
        relevant_lines(PAGE, &[sel]),
        vec!["# TYPE in_flight gauge", "in_flight 12"]
    );
}

#[test]
fn counter_rates_handle_resets_and_new_series() {
    let prev: HashMap<String, f64> = [("a".to_string(), 100.0), ("b".to_string(), 50.0)].into();
    let now = vec![
        ("a".to_string(), 130.0), // +30
        ("b".to_string(), 5.0),   // reset: +5
        ("c".to_string(), 2.0),   // new since the previous scrape: +2
    ];
    assert_eq!(counter_rate(Some(&prev), &now, 2.0), Some(18.5));
    assert_eq!(counter_rate(None, &now, 2.0), None);
    assert_eq!(counter_rate(Some(&prev), &now, 0.0), None);
}
