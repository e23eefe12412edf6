//! Bad scenario files give one message naming file:line:column, the field and a fix.

use loadlab_scenario::{Load, Scenario, Step};

const GOOD: &str = "\
name: permit baseline
target: http://127.0.0.1:8080
defaults: { timeout: 10s, headers: { Accept: application/json } }
load:
  model: closed
  stages: [ {duration: 30s, vus: 10}, {duration: 8m30s, vus: 35}, {duration: 30s, vus: 0} ]
warmup: 30s
thresholds:
  - http.errors < 5%
  - latency.p95 < 2.8s
  - group.auth.latency.p95 < 1.2s
flows:
  - name: applicant
    weight: 70
    steps:
      - name: signin
        group: auth
        post: /api/auth/signin
        json: { username: user1, password: password }
      - think: 1s..3s
  - { name: health, weight: 10, steps: [ { get: /health } ] }
";

#[test]
fn parses_the_design_sketch() {
    let s = Scenario::parse(GOOD, "permit.yaml").unwrap();
    assert_eq!(s.name, "permit baseline");
    assert_eq!(s.flows.len(), 2);
    assert_eq!(s.flows[0].weight, 70);
    assert_eq!(s.thresholds.len(), 3);
    assert_eq!(s.warmup.as_secs(), 30);
    assert_eq!(s.defaults.timeout.as_secs(), 10);
    let Load::Closed(c) = &s.load else {
        panic!("closed")
    };
    assert_eq!(c.stages.len(), 3);
    assert_eq!(c.duration().as_secs(), 570);
    assert!(
        matches!(&s.flows[0].steps[1], Step::Think(t) if t.min.as_secs() == 1 && t.max.as_secs() == 3)
    );
}

fn error_of(src: &str) -> String {
    Scenario::parse(src, "bad.yaml").unwrap_err().to_string()
}

#[test]
fn bad_files_table() {
    let base_flows = "flows: [ { steps: [ { get: /a } ] } ]\n";
    let cases: Vec<(String, &str)> = vec![
        (format!("therholds: []\nload: {{model: closed, vus: 1, duration: 1s}}\n{base_flows}"),
         "bad.yaml:1:1: unknown field `therholds`\n  hint: did you mean `thresholds`?"),
        (format!("load:\n  model: closed\n  vus: 2\n  duration: 10x\n{base_flows}"),
         "bad.yaml:4:13: load.duration: invalid duration `10x`: expected a number with a unit, e.g. 500ms, 30s, 1m30s, 2h"),
        (format!("load:\n  model: closd\n  vus: 2\n{base_flows}"),
         "bad.yaml:2:10: load.model: unknown value `closd`\n  hint: did you mean `closed`?"),
        (format!("load: {{model: open, vus: 5, duration: 1s}}\n{base_flows}"),
         "bad.yaml:1:26: load.vus: `vus` does not apply to the open model"),
        ("load: {model: closed, vus: 1, duration: 1s}\nflows:\n  - steps:\n      - get: /a\n      - name: x\n        post: /b\n        get: /c\n".into(),
         "bad.yaml:5:9: flows[0].steps[1]: a step sends one request: give only one of get, post, put, patch, delete, head, options"),
        ("load: {model: closed, vus: 1, duration: 1s}\nflows:\n  - steps:\n      - get: api/a\n".into(),
         "bad.yaml:4:14: flows[0].steps[0].get: `api/a` is neither a path starting with / nor an http(s) URL\n  hint: write `/api/a`"),
        (format!("load: {{model: closed, vus: 1, duration: 1s}}\nthresholds:\n  - latency.p95 < 2s\n  - latncy.p99 < 1s\n{base_flows}"),
         "bad.yaml:4:5: thresholds[1]: unknown metric `latncy.p99`"),
        ("load: {model: closed, vus: 1, duration: 1s}\nthresholds: [group.auht.latency.p95 < 1s]\nflows: [ { steps: [ { get: /a, group: auth } ] } ]\n".into(),
         "bad.yaml:2:14: thresholds[0]: no group is named `auht`\n  hint: did you mean `auth`?"),
        (base_flows.to_string(), "load: missing `load:` section"),
        ("load: {model: closed, vus: 1, duration: 1s}\ntarget: ftp://x\nflows: [ { steps: [ { get: /a } ] } ]\n".into(),
         "bad.yaml:2:9: target: unsupported scheme `ftp` in `ftp://x`: use http:// or https://"),
        ("load: [\n".into(), "bad.yaml:1:7: load: invalid type: sequence, expected a mapping of `key: value` fields"),
        ("name: x\n  bad: indent\n".into(), "bad.yaml:2:"),
        ("load: {model: burst}\nsteps: [ { get: /a } ]\n".into(), "load: the burst model needs `count`"),
        ("load: {model: closed, stages: [{duration: 1s, rate: 5}]}\nsteps: [ { get: /a } ]\n".into(),
         "load.stages[0]: a closed-model stage takes `vus`, not `rate`"),
    ];
    let mut bad = 0;
    for (src, want) in cases {
        let got = error_of(&src);
        if !(got.starts_with(want) || got.contains(want)) {
            eprintln!("\nsource:\n{src}\nwant: {want}\ngot:  {got}");
            bad += 1;
        }
        assert!(!got.contains("panicked"));
    }
    assert_eq!(bad, 0, "mismatched error messages");
}
