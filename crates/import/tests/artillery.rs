//! The Artillery importer: seed study 001's script converts to the scenario written by hand in
//! examples/ (same flows, weights, requests, captures, checks and load), and every construct
//! without an equivalent is reported with its line.

mod common;

use common::{import_ok, validate, validate_in_dir};
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::{Check, Load, Scenario, Step};

const SEED: &str = include_str!("fixtures/seed-001.artillery.yml");
const FEATURES: &str = include_str!("fixtures/features.artillery.yml");

fn example() -> Scenario {
    common::example("seed-001-monolith-vs-micro.yaml")
}

#[test]
fn seed_001_converts_to_the_example_scenario() {
    let out = import_ok(
        Kind::Artillery,
        SEED,
        "seed-001.artillery.yml",
        &Options::default(),
    );
    // The script's literal password is read from the environment (never written out).
    assert!(out.yaml.contains("{{ env.PASSWORD }}"), "{}", out.yaml);
    std::env::set_var("PASSWORD", "password");
    let got = validate(&out.yaml, "seed-001.yaml");
    let want = example();
    assert_eq!(got.target, want.target);
    assert_eq!(got.load, want.load);
    assert!(matches!(got.load, Load::Open(_)));
    assert_eq!(got.warmup, want.warmup);
    assert_eq!(got.defaults.timeout, want.defaults.timeout);
    assert_eq!(got.defaults.headers, want.defaults.headers);
    let flows = |s: &Scenario| {
        s.flows
            .iter()
            .map(|f| (f.name.clone(), f.weight, f.steps.len()))
            .collect::<Vec<_>>()
    };
    assert_eq!(flows(&got), flows(&want));
    for (g, w) in got.flows.iter().zip(&want.flows) {
        for (gs, ws) in g.steps.iter().zip(&w.steps) {
            let (Step::Request(gr), Step::Request(wr)) = (gs, ws) else {
                panic!("flow {}: {gs:?} vs {ws:?}", g.name);
            };
            let what = format!("flow `{}` step `{}`", g.name, wr.name);
            assert_eq!(gr.method, wr.method, "{what}");
            assert_eq!(gr.url, wr.url, "{what}");
            assert_eq!(gr.headers, wr.headers, "{what}");
            assert_eq!(gr.query, wr.query, "{what}");
            // The example's literal password is the environment's in an import.
            let mut want_body = wr.body.clone();
            if let Some(loadlab_scenario::Body::Json(j)) = &mut want_body {
                if j.get("password").is_some() {
                    j["password"] = "{{ env.PASSWORD }}".into();
                }
            }
            assert_eq!(gr.body, want_body, "{what}");
            assert_eq!(gr.captures, wr.captures, "{what}");
            assert_eq!(gr.checks, wr.checks, "{what}");
        }
    }
    let thresholds: Vec<_> = got.thresholds.clone();
    assert_eq!(thresholds.len(), 1);
    assert!(
        want.thresholds.iter().any(|t| *t == thresholds[0]),
        "{thresholds:?}"
    );
    assert_eq!(out.report.unsupported, [], "{}", out.report);
}

#[test]
fn unsupported_constructs_are_reported_with_their_line() {
    let out = import_ok(
        Kind::Artillery,
        FEATURES,
        "features.artillery.yml",
        &Options::default(),
    );
    let r = &out.report;
    let lines: Vec<(Option<usize>, &str)> = r
        .unsupported
        .iter()
        .map(|u| (u.line, u.what.as_str()))
        .collect();
    let has = |line: usize, text: &str| {
        assert!(
            lines
                .iter()
                .any(|(l, w)| *l == Some(line) && w.contains(text)),
            "no `{text}` at line {line} in {lines:#?}"
        )
    };
    has(19, "config.processor");
    has(25, "scenario 1: `beforeScenario`");
    has(40, "flow item `log`");
    has(61, "`afterResponse`");
    has(64, "flow item `function`");
    has(54, "expect equals");
    assert_eq!(r.variables.len(), 1);
    assert_eq!(r.variables[0].name, "API_KEY");
    assert!(
        out.yaml
            .contains("# not converted (line 40): flow item `log`"),
        "{}",
        out.yaml
    );

    std::env::set_var("API_KEY", "k");
    let s = validate_in_dir(
        &out.yaml,
        "loadlab-import-art",
        "features.yaml",
        &[("users.csv", "username,password\nann,x\n")],
    );
    let Load::Open(open) = &s.load else {
        panic!("{:?}", s.load)
    };
    let stages: Vec<(u64, f64)> = open
        .stages
        .iter()
        .map(|st| (st.duration.as_secs(), st.rate))
        .collect();
    assert_eq!(
        stages,
        [(60, 0.5), (5, 0.0), (120, 10.0)],
        "a pause is a stage without arrivals"
    );
    let reqs: Vec<_> = s.request_steps().collect();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[0].body,
        Some(loadlab_scenario::Body::Json(serde_json::json!({
            "user": "{{ users.username }}", "pass": "{{ users.password }}"
        })))
    );
    let capture_names: Vec<&str> = reqs[0].captures.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(capture_names, ["csrf", "order", "sid"]);
    assert!(matches!(&s.flows[0].steps[1], Step::Loop { count: 3, steps } if steps.len() == 2));
    let items = reqs[1];
    assert_eq!(
        items.query,
        [
            ("category".into(), "{{ category }}".into()),
            ("page".into(), "2".into())
        ]
    );
    // `equals` on a value captured by an earlier step has no loadlab check (reported above).
    assert_eq!(
        items.checks,
        [
            Check::Status(vec![200, 304]),
            Check::BodyContains("\"items\"".into()),
            Check::Header {
                name: "Content-Type".into(),
                value: "application/json".into()
            },
        ]
    );
    assert_eq!(
        reqs[2].headers,
        [("Cookie".to_string(), "sid={{ sid }}".to_string())]
    );
    let t: Vec<&str> = s.thresholds.iter().map(|t| t.expr.as_str()).collect();
    assert_eq!(t, ["latency.p95 < 250ms", "http.errors < 1%"]);
}

#[test]
fn a_file_of_another_kind_is_refused_with_the_fix() {
    let err = import(
        Kind::Artillery,
        "openapi: 3.0.0\ninfo: {}\n",
        "api.yaml",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("api.yaml is not an Artillery script"), "{err}");
    assert!(err.contains("loadlab import openapi"), "{err}");
    let err = import(
        Kind::Artillery,
        "config: [unclosed\n",
        "x.yml",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("x.yml: not valid YAML"), "{err}");
}

/// Every Artillery phase form gives the arrivals Artillery would send: `(phase YAML, expected
/// arrivals, expected seconds)`. `arrivalCount` is a count over the phase whatever the unit of
/// its duration (it was once read as a rate: 300 over `5min` gave 300/s, 300x the load).
#[test]
fn every_phase_form_carries_its_arrivals_over_exactly() {
    let cases: &[(&str, f64, f64)] = &[
        ("{duration: 60, arrivalRate: 5}", 300.0, 60.0),
        ("{duration: '2m', arrivalRate: 5}", 600.0, 120.0),
        ("{duration: 10, arrivalRate: 0.5}", 5.0, 10.0),
        ("{duration: 300, arrivalCount: 300}", 300.0, 300.0),
        ("{duration: '300s', arrivalCount: 300}", 300.0, 300.0),
        ("{duration: '5min', arrivalCount: 300}", 300.0, 300.0),
        ("{duration: '2m', arrivalCount: 300}", 300.0, 120.0),
        ("{duration: '1 hour', arrivalCount: 7}", 7.0, 3600.0),
        ("{duration: 7, arrivalCount: 300}", 300.0, 7.0),
        ("{duration: 60, arrivalRate: 1, rampTo: 11}", 360.0, 60.0),
        ("{duration: '1m', rampTo: 10}", 300.0, 60.0),
        ("{pause: 5}", 0.0, 5.0),
        ("{pause: '1min'}", 0.0, 60.0),
        ("{duration: 30, arrivalRate: 2, maxVusers: 10}", 60.0, 30.0),
        ("{duration: '1500ms', arrivalRate: 10}", 15.0, 1.5),
    ];
    for (phase, arrivals, seconds) in cases {
        // A second phase so that a pause alone is not a plan that sends nothing.
        let script = format!(
            "config:\n  target: http://127.0.0.1:8080\n  phases:\n    - {phase}\n    - {{duration: 1, arrivalRate: 1}}\nscenarios:\n  - flow:\n      - get:\n          url: /\n"
        );
        let out = import_ok(Kind::Artillery, &script, "phase.yml", &Options::default());
        let s = validate(&out.yaml, "phase.yaml");
        let Load::Open(open) = &s.load else {
            panic!("{phase}: {:?}", s.load)
        };
        let [stage, _] = open.stages.as_slice() else {
            panic!("{phase}: {:?}", open.stages)
        };
        let secs = stage.duration.as_secs_f64();
        let got = (stage.rate + stage.ramp_to.unwrap_or(stage.rate)) / 2.0 * secs;
        assert!(
            (got - arrivals).abs() < 1e-6 * arrivals.max(1.0),
            "{phase}: {got} arrivals planned, Artillery sends {arrivals}\n{}",
            out.yaml
        );
        assert!((secs - seconds).abs() < 1e-9, "{phase}: {secs} s");
        if phase.contains("maxVusers") {
            assert_eq!(open.max_in_flight, 10, "{phase}");
        }
    }
    // A count with no usable duration is refused by name, not guessed.
    let script = "config:\n  target: http://127.0.0.1:8080\n  phases:\n    - {duration: 'soon', arrivalCount: 3}\n    - {duration: 1, arrivalRate: 1}\nscenarios:\n  - flow:\n      - get:\n          url: /\n";
    let out = import_ok(Kind::Artillery, script, "phase.yml", &Options::default());
    assert!(
        out.report
            .unsupported
            .iter()
            .any(|u| u.what.contains("phase 1") && u.what.contains("soon")),
        "{:?}",
        out.report.unsupported
    );
}

/// What imported from real scripts did not validate: `defaults.headers` templates left in
/// Artillery's words, variables a processor sets left as unknown templates, and
/// `tls.rejectUnauthorized: false` dropped.
#[test]
fn default_headers_processor_variables_and_tls_carry_over() {
    let script = "config:\n  target: https://127.0.0.1:8443\n  processor: ./helpers.js\n  tls:\n    rejectUnauthorized: false\n  defaults:\n    headers:\n      x-api-version: '{{ $processEnvironment.API_VERSION }}'\n  phases:\n    - {duration: 1, arrivalRate: 1}\nscenarios:\n  - flow:\n      - function: setSession\n      - get:\n          url: /orders/{{ sessionId }}\n          capture: {json: $.id, as: orderId}\n      - get:\n          url: /orders/{{ orderId }}/items\n";
    let out = import_ok(Kind::Artillery, script, "proc.yml", &Options::default());
    assert!(out.yaml.contains("insecure: true"), "{}", out.yaml);
    assert!(out.yaml.contains("{{ env.API_VERSION }}"), "{}", out.yaml);
    assert!(
        out.yaml.contains("/orders/{{ env.sessionId }}"),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains("/orders/{{ orderId }}/items"),
        "{}",
        out.yaml
    );
    let vars: Vec<&str> = out
        .report
        .variables
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    assert!(
        vars.contains(&"API_VERSION") && vars.contains(&"sessionId"),
        "{vars:?}"
    );
    std::env::set_var("API_VERSION", "2");
    std::env::set_var("sessionId", "s1");
    let s = validate(&out.yaml, "proc.yaml");
    assert!(s.insecure, "{:?}", s.insecure);
}

/// What real scripts leave to the command line or to run time gives a scenario that loads,
/// each gap named: no `config.target` (Artillery's `--target`) a target to decide, a phase
/// whose rate is a template left out by name and the load to decide, a request using
/// `$loopElement` left out (sent as written it would be refused), a loop over a literal list
/// repeated once per element, and a scenario of thinks alone left out.
#[test]
fn gaps_of_real_scripts_are_named_and_the_scenario_loads() {
    let script = r#"
config:
  phases:
    - duration: 60
      arrivalRate: "{{ $env.ARRIVAL_RATE }}"
scenarios:
  - name: pages
    flow:
      - get:
          url: "/"
      - loop:
          - get:
              url: "/items/{{ $loopElement }}"
          - get:
              url: "/health"
        over:
          - a
          - b
          - c
  - name: Just think
    flow:
      - think: 1
"#;
    let out = import_ok(Kind::Artillery, script, "gaps.yml", &Options::default());
    let s = validate(&out.yaml, "gaps.yml");
    assert_eq!(s.flows.len(), 1, "{}", out.yaml);
    for said in [
        "# decide: the script names no config.target",
        "# decide: no phase of config.phases could be converted",
        "count: 3",
    ] {
        assert!(out.yaml.contains(said), "{said}\n{}", out.yaml);
    }
    assert!(!out.yaml.contains("$loopElement }}\""), "{}", out.yaml);
    let unsupported: Vec<&str> = out
        .report
        .unsupported
        .iter()
        .map(|u| u.what.as_str())
        .collect();
    for said in [
        "phase 1: arrivalRate `{{ $env.ARRIVAL_RATE }}` is not a number",
        "get: uses an Artillery variable with no loadlab equivalent",
        "scenario `Just think`: no request step converted",
    ] {
        assert!(
            unsupported.iter().any(|u| u.contains(said)),
            "{said}: {unsupported:#?}"
        );
    }
    // A script of nothing convertible says why in its error, not "see the report above".
    let ws = "config: { target: ws://h }\nscenarios:\n  - engine: ws\n    flow: [ { send: hi } ]\n";
    let err = import(Kind::Artillery, ws, "ws.yml", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("engine `ws` (only HTTP converts)"), "{err}");
}

/// Artillery's think `jitter` (a percentage, per think or for all in `config.defaults.think`)
/// is a uniform range around the think; another jitter is reported, never dropped silently.
#[test]
fn think_jitter_becomes_a_range() {
    let script = r#"
config:
  target: http://127.0.0.1:8080
  defaults:
    think:
      jitter: "20%"
  phases: [ { duration: 10, arrivalRate: 1 } ]
scenarios:
  - flow:
      - get: { url: "/" }
      - think: 2
      - think: "2s"
        jitter: "10%"
      - think: 1
        jitter: 2
"#;
    let out = import_ok(Kind::Artillery, script, "jitter.yml", &Options::default());
    let s = validate(&out.yaml, "jitter.yml");
    let thinks: Vec<String> = s.flows[0]
        .steps
        .iter()
        .filter_map(|st| match st {
            Step::Think(t) => Some(format!("{t:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(thinks.len(), 2, "{}", out.yaml);
    assert!(out.yaml.contains("think: 1600ms..2400ms"), "{}", out.yaml);
    assert!(out.yaml.contains("think: 1800ms..2200ms"), "{}", out.yaml);
    assert!(
        out.report.unsupported.iter().any(|u| u
            .what
            .contains("think jitter `2`: only a percentage converts")),
        "{:?}",
        out.report.unsupported
    );
}

/// `config.variables` whose value reads the environment (`apiKey: "{{ $env.API_KEY }}"`, as
/// Artillery's docs show for secrets) is read from the environment where it is used, not sent
/// as the literal text `{{ $env.API_KEY }}` from a one-row data set.
#[test]
fn a_variable_that_reads_the_environment_is_read_where_it_is_used() {
    let script = "config:\n  target: https://127.0.0.1:8443\n  phases:\n    - {duration: 1, arrivalRate: 1}\n  variables:\n    apiKey: \"{{ $env.API_KEY }}\"\n    auth: \"Bearer {{ $processEnvironment.TOKEN }}\"\n    color: [red, blue]\nscenarios:\n  - flow:\n      - get:\n          url: /items?c={{ color }}\n          headers:\n            x-api-key: \"{{ apiKey }}\"\n            authorization: \"{{ auth }}\"\n";
    let out = import_ok(Kind::Artillery, script, "env.yml", &Options::default());
    assert!(
        !out.yaml.contains("$env") && !out.yaml.contains("$processEnvironment"),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains("x-api-key: \"{{ env.API_KEY }}\""),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml
            .contains("authorization: \"Bearer {{ env.TOKEN }}\""),
        "{}",
        out.yaml
    );
    let vars: Vec<&str> = out
        .report
        .variables
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(vars, ["API_KEY", "TOKEN"]);
    std::env::set_var("API_KEY", "k");
    std::env::set_var("TOKEN", "t");
    let s = validate(&out.yaml, "env.yaml");
    // The list stays a data set; the two templates are no data set at all.
    let sets: Vec<&str> = s.data.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(sets, ["color"]);
}

/// `config.http.defaults` is where Artillery's docs put default headers and think jitter now
/// (`config.defaults` "may be deprecated"): both are read, the newer winning for a header set
/// in both, and what has no equivalent (a default cookie) is named.
#[test]
fn http_defaults_carry_over_like_defaults() {
    let script = "config:\n  target: http://127.0.0.1:8080\n  phases:\n    - {duration: 1, arrivalRate: 1}\n  defaults:\n    headers:\n      x-old: '1'\n      x-both: old\n  http:\n    timeout: 5\n    defaults:\n      headers:\n        x-both: new\n        x-key: '{{ $env.KEY }}'\n      cookie:\n        session: abc\n      think:\n        jitter: 50%\nscenarios:\n  - flow:\n      - get: {url: /a}\n      - think: 2\n";
    let out = import_ok(Kind::Artillery, script, "http.yml", &Options::default());
    for want in [
        "x-old: \"1\"",
        "x-both: new",
        "x-key: \"{{ env.KEY }}\"",
        "timeout: 5",
    ] {
        assert!(out.yaml.contains(want), "{want}:\n{}", out.yaml);
    }
    assert!(!out.yaml.contains("x-both: old"), "{}", out.yaml);
    // 2 s ± 50%.
    assert!(out.yaml.contains("1s"), "think jitter: {}", out.yaml);
    let unsupported: Vec<&str> = out
        .report
        .unsupported
        .iter()
        .map(|u| u.what.as_str())
        .collect();
    assert!(
        unsupported.iter().any(|u| u.starts_with("defaults.cookie"))
            && !unsupported
                .iter()
                .any(|u| u.contains("config.http.defaults")),
        "{unsupported:?}"
    );
    std::env::set_var("KEY", "k");
    validate(&out.yaml, "http.yaml");
}
