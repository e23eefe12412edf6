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
        (format!("load: {{model: closed, vus: 1, duration: 1s}}\n{base_flows}load: {{model: open, rate: 5/s, duration: 1s}}\n"),
         "bad.yaml:3:1: `load` is given twice (first at line 1)\n  hint: keep one of them (a later one does not add to the first)"),
        (format!("load:\n  model: closed\n\tvus: 2\n{base_flows}"),
         "hint: this line is indented with a tab: YAML indents with spaces only"),
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
        ("load: {model: closed, vus: 2, iterations: 3, shared_iterations: 6}\nsteps: [ { get: /a } ]\n".into(),
         "load.shared_iterations: give either `iterations` (per VU) or `shared_iterations` (all VUs together), not both"),
        ("load: {model: closed, stages: [{duration: 1s, vus: 2}], shared_iterations: 6}\nsteps: [ { get: /a } ]\n".into(),
         "load.shared_iterations: `shared_iterations` goes with `vus`, not with `stages`"),
        ("load: {model: open, rate: 5, duration: 1s, shared_iterations: 6}\nsteps: [ { get: /a } ]\n".into(),
         "load.shared_iterations: `shared_iterations` does not apply to the open model"),
        ("load: {model: closed, vus: 2, shared_iterations: 0}\nsteps: [ { get: /a } ]\n".into(),
         "load.shared_iterations: must be at least 1"),
        ("load: {model: closed, vus: 2, duration: 1s, batch_window: 0}\nsteps: [ { get: /a } ]\n".into(),
         "bad.yaml:1:59: load.batch_window: `batch_window` does not apply to the closed model"),
        ("load: {model: burst, count: 5, batch_window: 1ms}\nsteps: [ { get: /a } ]\n".into(),
         "load.batch_window: `batch_window` does not apply to the burst model"),
        ("load: {model: open, rate: 5, duration: 1s, batch_window: 1x}\nsteps: [ { get: /a } ]\n".into(),
         "load.batch_window: invalid duration `1x`"),
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

const LOAD: &str = "load: {model: closed, vus: 1, duration: 1s}\n";

#[test]
fn scenario_language_errors_table() {
    let cases: Vec<(String, &str)> = vec![
        (format!("{LOAD}steps:\n  - get: /a\n    captur: {{t: $.t}}\n"),
         "bad.yaml:4:5: steps[0]: unknown field `captur`\n  hint: did you mean `capture`?"),
        (format!("{LOAD}steps:\n  - post: /signin\n    capture: {{ token: $.token }}\n  - get: /a\n    headers: {{ Authorization: 'Bearer {{{{ tokn }}}}' }}\n"),
         "bad.yaml:6:31: steps[1].headers.Authorization: unknown variable `tokn`\n  hint: did you mean `token`?"),
        (format!("{LOAD}steps:\n  - get: '/a/{{{{ id }}}}'\n  - post: /b\n    capture: {{ id: $.id }}\n"),
         "bad.yaml:3:10: steps[0].get: `id` is used before any earlier step of this flow captures it: move the capturing step first (or into a `once:` block before this step)"),
        (format!("{LOAD}steps:\n  - post: /a\n    json: {{ n: '{{{{ random_int(5) }}}}' }}\n"),
         "bad.yaml:4:16: steps[0].json.n: `random_int` takes 2 argument(s), got 1: write `random_int(1, 100)`"),
        (format!("{LOAD}steps:\n  - get: /a\n    capture: {{ t: token }}\n"),
         "bad.yaml:4:19: steps[0].capture.t: invalid JSONPath `token`: it must start with `$`; expected e.g. `$.token`, `$.items[0].id` or `$['a key']`"),
        (format!("{LOAD}steps:\n  - get: /a\n    capture: {{ t: {{ regex: 'a(', group: 1 }} }}\n"),
         "bad.yaml:4:21: steps[0].capture.t: invalid regex"),
        (format!("{LOAD}steps:\n  - get: /a\n    capture: {{ t: {{ regex: 'a(b)', group: 2 }} }}\n"),
         "steps[0].capture.t: the regex has 1 group(s); group 2 does not exist"),
        (format!("{LOAD}steps:\n  - get: /a\n    check: {{ status: 999 }}\n"),
         "bad.yaml:4:22: steps[0].check.status: `999` is not an HTTP status (100..599)"),
        (format!("{LOAD}steps:\n  - get: /a\n    check: {{ statuz: 200 }}\n"),
         "unknown field `statuz`\n  hint: did you mean `status`?"),
        (format!("{LOAD}steps:\n  - loop: {{ count: 0, steps: [ {{ get: /a }} ] }}\n"),
         "bad.yaml:3:20: steps[0].loop.count: must be between 1 and 1000000000"),
        (format!("{LOAD}steps:\n  - get: /a\n    loop: {{ count: 2, steps: [ {{ get: /b }} ] }}\n"),
         "bad.yaml:3:5: steps[0]: a `loop` step cannot also send a request, think or hold `once`"),
        (format!("{LOAD}steps:\n  - once: []\n  - get: /a\n"),
         "bad.yaml:3:11: steps[0].once: no steps"),
        (format!("{LOAD}data:\n  users: {{ csv: no-such-file.csv }}\nsteps: [ {{ get: /a }} ]\n"),
         "bad.yaml:3:12: data.users: cannot read CSV file `no-such-file.csv`"),
        (format!("{LOAD}data:\n  ids: {{ values: [1, 2], pick: uniqe }}\nsteps: [ {{ get: /a }} ]\n"),
         "unknown value `uniqe`\n  hint: did you mean `unique`?"),
        (format!("{LOAD}data:\n  users: {{ values: [{{name: a}}] }}\nsteps: [ {{ get: '/u/{{{{ users.nmae }}}}' }} ]\n"),
         "bad.yaml:4:17: steps[0].get: data set `users` has no column `nmae`\n  hint: did you mean `users.name`?"),
        (format!("{LOAD}steps: [ {{ get: 'http://{{{{ host }}}}/a' }} ]\n"),
         "bad.yaml:2:17: steps[0].get: templates are not allowed in the host of a URL"),
        (format!("{LOAD}steps: [ {{ get: '/a/{{{{ vu ' }} ]\n"),
         "steps[0].get: unclosed `{{` in `/a/{{ vu `: close it with `}}`"),
        (format!("{LOAD}steps: [ {{ get: '/a/{{{{ env.LOADLAB_TEST_SURELY_UNSET }}}}' }} ]\n"),
         "steps[0].get: environment variable `LOADLAB_TEST_SURELY_UNSET` is not set"),
        (format!("{LOAD}steps: [ {{ post: /a, json: {{a: 1}}, form: {{b: 2}} }} ]\n"),
         "give only one of `json`, `body` or `form`"),
    ];
    let mut wrong = Vec::new();
    for (src, expected) in cases {
        let got = Scenario::parse(&src, "bad.yaml").unwrap_err().to_string();
        let ok = got.starts_with(expected)
            || (!expected.starts_with("bad.yaml") && got.contains(expected));
        if !ok {
            wrong.push(format!("expected: {expected}\ngot:      {got}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n\n"));
}

#[test]
fn shared_iterations_are_the_same_work_at_any_vu_count() {
    let s = Scenario::parse(
        "load: {model: closed, vus: 30, shared_iterations: 100, max_duration: 2m}\nsteps: [ { get: /a } ]\n",
        "shared.yaml",
    )
    .unwrap();
    let Load::Closed(c) = &s.load else {
        panic!("closed")
    };
    assert_eq!(c.shared_iterations, Some(100));
    assert_eq!(c.iterations_per_vu, None);
    assert_eq!(c.max_vus(), 30);
    assert_eq!(c.duration().as_secs(), 120);
    assert!(s.plan().ends_when_done());
}

#[test]
fn the_full_language_parses() {
    let src = "
target: http://127.0.0.1:8080
load: {model: closed, vus: 2, iterations: 3}
data:
  ids: { values: [1, 2, 3], pick: random }
  users: { values: [{username: a, password: p}], pick: unique }
flows:
  - name: main
    weight: 3
    steps:
      - once:
          - name: signin
            post: /api/auth/signin
            json: { username: '{{ users.username }}', password: '{{ users.password }}' }
            capture: { token: $.token, sid: { header: Set-Cookie }, n: { regex: 'id=(\\d+)' } }
            check: { status: [200, 201], json: { $.ok: true }, body_contains: token, header: { Content-Type: application/json }, max_latency: 500ms }
      - loop:
          count: 10
          steps:
            - name: tx
              post: /api/transactions
              query: { page: 2, q: '{{ ids }}' }
              headers: { Authorization: 'Bearer {{ token }}' }
              tags: { kind: write }
              json: { id: '{{ ids }}', at: '{{ now_ms() }}', r: '{{ uuid() }}', s: '{{ random_string(8) }}' }
              timeout: 2s
            - think: 10ms..20ms
  - { name: other, weight: 1, steps: [ { post: /f, form: { a: '{{ vu }}', b: x } }, { put: /p, body: 'it {{ iteration }}' } ] }
";
    let s = Scenario::parse(src, "full.yaml").unwrap();
    assert_eq!(s.data.len(), 2);
    assert_eq!(s.capture_names(), ["n", "sid", "token"]);
    assert_eq!(s.request_steps().count(), 4);
    let Step::Once(once) = &s.flows[0].steps[0] else {
        panic!("once")
    };
    let Step::Request(signin) = &once[0] else {
        panic!("request")
    };
    assert_eq!(signin.checks.len(), 5);
    assert_eq!(signin.checks[0].describe(), "status in [200, 201]");
    assert!(matches!(&s.flows[0].steps[1], Step::Loop { count: 10, steps } if steps.len() == 2));
}
