//! The k6 importer's `options` as the load k6 runs: its shortcuts (`iterations` with
//! `duration`, `stages` from `vus`, `vus` alone), its executors, durations and time units read
//! as k6 reads them (days, milliseconds as numbers), rates written exactly, and a duration k6
//! refuses refused with its line.

mod common;

use common::validate;
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::Scenario;

fn script(options: &str, body: &str) -> String {
    format!(
        "import http from 'k6/http';\nimport {{ check, sleep }} from 'k6';\nimport {{ randomIntBetween }} from 'https://jslib.k6.io/k6-utils/1.2.0/index.js';\nconst BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';\nexport const options = {options};\nexport default function () {{\n{body}\n}}\n"
    )
}

fn parsed(source: &str) -> (Scenario, loadlab_import::Imported) {
    let out = import(Kind::K6, source, "t.js", &Options::default())
        .unwrap_or_else(|e| panic!("{e}\n{source}"));
    let s = validate(&out.yaml, "t.yaml");
    (s, out)
}

#[test]
fn options_become_the_load() {
    let req = "http.get(`${BASE_URL}/api/ping`);";
    let wanted = |load: &str| {
        Scenario::parse(
            &format!("target: http://x\nload: {load}\nsteps: [{{ get: / }}]\n"),
            "w.yaml",
        )
        .unwrap()
        .load
    };
    let cases = [
        ("{ vus: 5, duration: '30s' }", "{ model: closed, vus: 5, duration: 30s }"),
        (
            "{ vus: 4, iterations: 20 }",
            "{ model: closed, vus: 4, shared_iterations: 20, max_duration: 10m }",
        ),
        ("{}", "{ model: closed, vus: 1, iterations: 1 }"),
        (
            "{ stages: [{ duration: '10s', target: 5 }, { duration: '1m', target: 0 }] }",
            "{ model: closed, start_vus: 1, stages: [ { duration: 10s, vus: 5 }, { duration: 1m, vus: 0 } ] }",
        ),
        // k6 starts the `stages` shortcut at `vus` (else 1), and ignores `vus` alone.
        (
            "{ vus: 10, stages: [{ duration: '1m', target: 20 }] }",
            "{ model: closed, start_vus: 10, stages: [ { duration: 1m, vus: 20 } ] }",
        ),
        ("{ vus: 10 }", "{ model: closed, vus: 1, iterations: 1 }"),
        // `iterations` with `duration` is shared-iterations, the duration its time limit.
        (
            "{ vus: 5, iterations: 50, duration: '2m' }",
            "{ model: closed, vus: 5, shared_iterations: 50, max_duration: 2m }",
        ),
        ("{ vus: 2, duration: '1d' }", "{ model: closed, vus: 2, duration: 24h }"),
        ("{ vus: 2, duration: 90000 }", "{ model: closed, vus: 2, duration: 1m30s }"),
        (
            "{ scenarios: { s: { executor: 'ramping-vus', stages: [{ duration: '5s', target: 8 }] } } }",
            "{ model: closed, start_vus: 1, stages: [ { duration: 5s, vus: 8 } ] }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: 10000, timeUnit: '1d', duration: '5m', preAllocatedVUs: 1 } } }",
            "{ model: open, rate: 6.94444/m, duration: 5m, max_in_flight: 1 }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: 3, timeUnit: 60, duration: 600, preAllocatedVUs: 1 } } }",
            "{ model: open, rate: 50/s, duration: 600ms, max_in_flight: 1 }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '60', duration: '1m', preAllocatedVUs: 1 } } }",
            "{ model: open, rate: 5000/m, duration: 1m, max_in_flight: 1 }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: parseInt(__ENV.RATE) || 50, timeUnit: '30s', duration: '1m', preAllocatedVUs: 1 } } }",
            "{ model: open, rate: 100/m, duration: 1m, max_in_flight: 1 }",
        ),
        (
            "{ scenarios: { s: { executor: 'ramping-arrival-rate', startRate: 6, timeUnit: 60000, preAllocatedVUs: 1, stages: [{ target: 60, duration: '1m' }] } } }",
            "{ model: open, max_in_flight: 1, stages: [ { duration: 1m, rate: 6/m, ramp_to: 60/m } ] }",
        ),
        (
            "{ scenarios: { s: { executor: 'ramping-vus', startVUs: 2, stages: [{ duration: '5s', target: 8 }] } } }",
            "{ model: closed, start_vus: 2, stages: [ { duration: 5s, vus: 8 } ] }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-vus', vus: 3, duration: '2m' } } }",
            "{ model: closed, vus: 3, duration: 2m }",
        ),
        (
            "{ scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 10, maxDuration: '1m' } } }",
            "{ model: closed, vus: 2, iterations: 10, max_duration: 1m }",
        ),
        (
            "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: 30, timeUnit: '1s', duration: '1m', preAllocatedVUs: 10, maxVUs: 40 } } }",
            "{ model: open, rate: 30/s, duration: 1m, max_in_flight: 40 }",
        ),
        (
            "{ scenarios: { s: { executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 50, stages: [{ target: 50, duration: '30s' }, { target: 50, duration: '1m' }] } } }",
            "{ model: open, max_in_flight: 50, stages: [ { duration: 30s, rate: 10/s, ramp_to: 50/s }, { duration: 1m, rate: 50/s } ] }",
        ),
    ];
    for (options, load) in cases {
        let (s, out) = parsed(&script(options, req));
        assert_eq!(s.load, wanted(load), "{options}\n{}", out.yaml);
    }
}

#[test]
fn a_duration_k6_refuses_is_refused_with_its_line() {
    let req = "http.get(`${BASE_URL}/api/ping`);";
    for options in [
        "{\n  scenarios: { s: { executor: 'constant-arrival-rate', rate: 60,\n    timeUnit: '1 m', duration: '1m', preAllocatedVUs: 1 } } }",
        "{\n  scenarios: { s: { executor: 'constant-arrival-rate', rate: 60,\n    timeUnit: '1M', duration: '1m', preAllocatedVUs: 1 } } }",
        "{ vus: 1,\n\n  duration: '1 m' }",
        "{ stages: [\n\n  { duration: '1min', target: 2 }] }",
    ] {
        let err = import(Kind::K6, &script(options, req), "t.js", &Options::default())
            .err()
            .unwrap_or_else(|| panic!("imported: {options}"))
            .to_string();
        assert!(err.starts_with("t.js: 7: `1"), "{options}: {err}");
        assert!(err.contains("not a duration k6 accepts"), "{err}");
    }
}

#[test]
fn a_start_level_read_from_the_environment_is_a_decision() {
    let options = "{ vus: __ENV.VUS, stages: [{ duration: '1m', target: 20 }] }";
    let (_, out) = parsed(&script(options, "http.get(`${BASE_URL}/api/ping`);"));
    assert!(
        out.yaml
            .contains("# decide: the script's `vus` is read from __ENV.VUS with no default"),
        "{}",
        out.yaml
    );
    assert!(out.yaml.contains("start_vus: 1\n"), "{}", out.yaml);
}

#[test]
fn scenarios_and_thresholds_held_in_constants_are_read() {
    let source = "import http from 'k6/http';\nconst workload = { executor: 'constant-vus', vus: 3, duration: '2m' };\nconst thresholds = { http_req_failed: ['rate<0.01'] };\nexport const options = {\n  scenarios: { s: workload },\n  thresholds,\n};\nexport default function () {\n  http.get('http://127.0.0.1:9/a');\n}\n";
    let (s, out) = parsed(source);
    let wanted =
        "target: http://x\nload: { model: closed, vus: 3, duration: 2m }\nsteps: [{ get: / }]\n";
    assert_eq!(
        s.load,
        Scenario::parse(wanted, "w.yaml").unwrap().load,
        "{}",
        out.yaml
    );
    assert_eq!(s.thresholds.len(), 1, "{}", out.yaml);
    // Imported from another module: said with its line, and the load is a decision.
    let source = "import http from 'k6/http';\nimport { workload } from './config.js';\nexport const options = {\n  scenarios: { s: workload },\n};\nexport default function () {\n  http.get('http://127.0.0.1:9/a');\n}\n";
    let (_, out) = parsed(source);
    let lines: Vec<Option<usize>> = out.report.unsupported.iter().map(|u| u.line).collect();
    assert!(lines.contains(&Some(4)), "{}", out.report);
    assert!(
        out.yaml
            .contains("# decide: the load (scenario `s`: its executor could not be read"),
        "{}",
        out.yaml
    );
}
