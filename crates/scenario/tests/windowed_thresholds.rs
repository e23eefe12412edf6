//! Thresholds over a window, with abort: the mapping form, the short form, and their errors
//! (file:line:column, the field, the fix).

use loadlab_scenario::threshold::{Op, Quantity, Scope, Stat};
use loadlab_scenario::Scenario;
use std::time::Duration;

fn scenario(thresholds: &str) -> String {
    format!("load: {{model: open, rate: 10, duration: 30s}}\nthresholds:\n{thresholds}steps: [ {{ name: signin, get: /a, group: auth }} ]\n")
}

#[test]
fn mapping_and_short_forms_agree() {
    let src = scenario(
        "  - { metric: latency.p95, over: 30s, below: 500ms, abort: true, grace: 10s }\n  - latency.p95 < 500ms over 30s, abort after 10s\n  - { metric: http.errors, above: 1% , over: 5s }\n  - step.signin.latency.p99 < 1s\n  - { metric: group.auth.latency.p95, below: 200, abort: true }\n",
    );
    let s = Scenario::parse(&src, "w.yaml").unwrap();
    let t = &s.thresholds;
    assert_eq!(t[0].expr, "latency.p95 < 500ms over 30s, abort after 10s");
    assert_eq!(t[0], t[1]);
    assert_eq!(
        t[0].metric.quantity,
        Quantity::Latency(Stat::Percentile(95.0))
    );
    assert_eq!(t[0].value, 500.0);
    assert_eq!(t[0].live.window, Some(Duration::from_secs(30)));
    assert!(t[0].live.abort);
    assert_eq!(t[0].live.grace, Duration::from_secs(10));
    assert_eq!(t[2].expr, "http.errors > 1% over 5s");
    assert_eq!(t[2].op, Op::Gt);
    assert!(!t[2].live.abort);
    assert!(!t[3].live.is_live(), "plain strings stay plain");
    assert_eq!(t[4].expr, "group.auth.latency.p95 < 200, abort");
    assert_eq!(t[4].metric.scope, Scope::Group("auth".into()));
    assert_eq!(t[4].live.window, None);
    assert!(t[4].live.abort);
}

#[test]
fn bad_windowed_thresholds_table() {
    let cases: &[(&str, &str)] = &[
        (
            "  - { metric: latency.p95, over: 0s, below: 500ms }\n",
            "w.yaml:3:34: thresholds[0].over: a window must be longer than zero",
        ),
        (
            "  - { metric: latency.p95, over: 30s, below: 500ms, abrot: true }\n",
            "w.yaml:3:60: thresholds[0].abrot: unknown key `abrot` in a threshold: its keys are metric, below, above, over, abort, grace\n  hint: did you mean `abort`?",
        ),
        (
            "  - { metric: latency.p95, over: 30s, below: 500ms, abort: yes }\n",
            "w.yaml:3:60: thresholds[0].abort: `abort` is true",
        ),
        (
            "  - { metric: latency.p95, below: 500ms, grace: 10s }\n",
            "w.yaml:3:49: thresholds[0].grace: a grace delays the judgement",
        ),
        (
            "  - { metric: latency.p95, over: 30s }\n",
            "w.yaml:3:7: thresholds[0]: a threshold mapping needs `below:` or `above:`",
        ),
        (
            "  - { metric: latency.p95, over: 30s, below: 1s, above: 2ms }\n",
            "thresholds[0].above: give `below` or `above`, not both",
        ),
        (
            "  - { metric: latncy.p95, below: 1s }\n",
            "w.yaml:3:15: thresholds[0].metric: unknown metric `latncy.p95`",
        ),
        (
            "  - { metric: latency.p95, below: fast }\n",
            "w.yaml:3:35: thresholds[0].below: invalid duration `fast`",
        ),
        (
            "  - { metric: latency.p95, below: 1s, over: 500ms }\n",
            "w.yaml:3:45: thresholds[0].over: `latency.p95 < 1s over 500ms`: the window (500ms) is shorter than the record's interval (1s, for a run planned for 30s)",
        ),
        (
            "  - latency.p95 < 1s over 30s, stop\n",
            "w.yaml:3:5: thresholds[0]: `latency.p95 < 1s over 30s, stop`: unknown clause `stop`",
        ),
        (
            "  - { metric: step.nope.latency.p95, below: 1s, over: 5s }\n",
            "thresholds[0]: no step is named `nope`",
        ),
        ("  - 42\n", "w.yaml:3:5: thresholds[0]: a threshold is a string"),
    ];
    let mut bad = 0;
    for (thresholds, want) in cases {
        let err = Scenario::parse(&scenario(thresholds), "w.yaml")
            .unwrap_err()
            .to_string();
        if !err.contains(want) {
            eprintln!("{thresholds}\n  got:  {err}\n  want: {want}\n");
            bad += 1;
        }
    }
    assert_eq!(bad, 0);
}
