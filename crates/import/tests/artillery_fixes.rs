//! Artillery scripts from artilleryio/artillery's own tests (tests/corpus/artillery, MPL-2.0)
//! and crafted ones that showed importer bugs: a secret copied, load changed silently, or a
//! scenario that imports but does not validate.

mod common;

use common::{import_ok, validate};
use loadlab_import::{Imported, Kind, Options};

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/artillery")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn imported(source: &str, file: &str) -> Imported {
    import_ok(Kind::Artillery, source, file, &Options::default())
}

fn variables(out: &Imported) -> Vec<String> {
    out.report
        .variables
        .iter()
        .map(|v| v.name.clone())
        .collect()
}

#[test]
fn basic_auth_and_a_password_variable_are_read_from_the_environment() {
    let out = imported(
        &corpus("artillery-hello_basic_auth.json"),
        "hello_basic_auth.json",
    );
    assert!(!out.yaml.contains("secret"), "{}", out.yaml);
    assert!(!out.report.to_string().contains("secret"));
    assert_eq!(
        out.yaml
            .matches("Authorization: \"Basic {{ env.BASIC_AUTH")
            .count(),
        2
    );
    assert_eq!(variables(&out), ["BASIC_AUTH", "BASIC_AUTH_2"]);
    // The templated password names where its value lives.
    assert!(out.report.variables[1].why.contains("leo:{{ password }}"));
    std::env::set_var("BASIC_AUTH", "bGVvOnNlY3JldA==");
    std::env::set_var("BASIC_AUTH_2", "bGVvOnNlY3JldA==");
    validate(&out.yaml, "hello_basic_auth.yaml");
}

#[test]
fn a_password_variable_used_in_a_body_becomes_an_environment_variable() {
    let src = "config:\n  target: http://127.0.0.1:8080\n  phases: [{duration: 1, arrivalRate: 1}]\n  variables:\n    password: [\"s3cr3t-literal\"]\nscenarios:\n  - flow:\n      - post:\n          url: /login\n          json: {user: a, pw: \"{{ password }}\"}\n";
    let out = imported(src, "login.yml");
    assert!(!out.yaml.contains("s3cr3t-literal"), "{}", out.yaml);
    assert!(
        out.yaml.contains("pw: \"{{ env.PASSWORD }}\""),
        "{}",
        out.yaml
    );
    assert_eq!(variables(&out), ["PASSWORD"]);
    assert!(out.report.variables[0]
        .why
        .contains("config.variables.password"));
}

#[test]
fn a_left_out_scenario_keeps_its_share_of_arrivals() {
    // An HTTP and a socketio scenario, weights 1:1, at 1/s: the HTTP flow had 0.5/s.
    let out = imported(
        &corpus("artillery-express_socketio.json"),
        "express_socketio.json",
    );
    let s = validate(&out.yaml, "express_socketio.yaml");
    let loadlab_scenario::Load::Open(open) = &s.load else {
        panic!("{:?}", s.load)
    };
    let rates: Vec<f64> = open.stages.iter().map(|st| st.rate).collect();
    assert_eq!(rates, [0.5], "{}", out.yaml);
    assert!(out.yaml.contains("# rates scaled by 1/2"), "{}", out.yaml);
    assert!(out
        .report
        .done
        .iter()
        .any(|d| d.contains("rates scaled by 1/2")));
}

#[test]
fn conditional_requests_are_left_out_not_always_sent() {
    let src = "config:\n  target: http://127.0.0.1:8080\n  phases: [{duration: 1, arrivalRate: 1}]\nscenarios:\n  - flow:\n      - get: {url: /always}\n      - loop:\n          - get: {url: /sometimes, probability: 10}\n          - get: {url: /certain, probability: 100}\n        count: 100\n      - get: {url: /maybe, ifTrue: \"id > 3\"}\n";
    let out = imported(src, "guarded.yml");
    assert!(!out.yaml.contains("/sometimes"), "{}", out.yaml);
    assert!(!out.yaml.contains("get: /maybe"), "{}", out.yaml);
    assert!(out.yaml.contains("get: /certain"), "{}", out.yaml);
    assert!(
        out.yaml
            .contains("# decide: line 8: get: sent with probability 10%"),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml
            .contains("# decide: line 11: get: sent only if `id > 3`"),
        "{}",
        out.yaml
    );
    validate(&out.yaml, "guarded.yaml");
    // All of a flow's requests conditional: the import is refused, saying why.
    let err = loadlab_import::import(
        Kind::Artillery,
        &corpus("artillery-probability.json"),
        "probability.json",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("probability 10%"), "{err}");
}

#[test]
fn per_phase_max_vusers_made_global_is_said() {
    let out = imported(
        &corpus("artillery-concurrent_requests_multiple_phases.json"),
        "concurrent_requests_multiple_phases.json",
    );
    assert!(
        out.yaml.contains(
            "# decide: maxVusers capped each phase in Artillery (phase 1: 1, phase 2: 500)"
        ),
        "{}",
        out.yaml
    );
    assert!(out.yaml.contains("max_in_flight: 500"));
    assert!(out
        .report
        .unsupported
        .iter()
        .any(|u| u.what.contains("max_in_flight caps the whole run")));
    // The same cap on every phase is Artillery's meaning exactly: nothing to say.
    let same = "config:\n  target: http://127.0.0.1:8080\n  phases:\n    - {duration: 1, arrivalRate: 5, maxVusers: 7}\n    - {duration: 1, arrivalRate: 9, maxVusers: 7}\nscenarios:\n  - flow: [{get: {url: /}}]\n";
    let out = imported(same, "same.yml");
    assert!(!out.yaml.contains("decide"), "{}", out.yaml);
    assert!(out.report.unsupported.is_empty());
}

#[test]
fn a_loop_whose_body_converts_to_nothing_is_left_out_and_json_lines_are_named() {
    let out = imported(&corpus("artillery-scripts-hello.json"), "hello.json");
    assert!(!out.yaml.contains("- loop"), "{}", out.yaml);
    assert!(!out.yaml.contains("steps: []"), "{}", out.yaml);
    assert!(!out.yaml.contains("line 0"), "{}", out.yaml);
    assert!(
        out.yaml
            .contains("# not converted (line 6): flow item `function`"),
        "{}",
        out.yaml
    );
    let lines: Vec<Option<usize>> = out
        .report
        .unsupported
        .iter()
        .filter(|u| u.what.starts_with("loop:"))
        .map(|u| u.line)
        .collect();
    assert_eq!(lines, [Some(17), Some(15)]);
    let s = validate(&out.yaml, "hello.yaml");
    assert_eq!(s.flows[0].steps.len(), 3);
}

#[test]
fn templates_in_a_target_and_triple_mustaches_are_translated() {
    let src = "config:\n  target: \"http://localhost:{{ $processEnvironment.TEST_PORT }}\"\n  phases: [{duration: 1, arrivalRate: 1}]\n  payload: {path: p.csv, fields: [id], skipHeader: true}\nscenarios:\n  - flow:\n      - get: {url: \"/pets/{{{ id }}}\"}\n";
    let out = imported(src, "port.yml");
    assert!(
        out.yaml
            .contains("target: \"http://localhost:{{ env.TEST_PORT }}\""),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains("get: \"/pets/{{ p.id }}\""),
        "{}",
        out.yaml
    );
    assert_eq!(variables(&out), ["TEST_PORT"]);
}

#[test]
fn a_url_without_its_slash_gets_one_and_a_url_from_data_is_left_out() {
    let out = imported(
        &corpus("artillery-sample_task_02.yaml"),
        "sample_task_02.yaml",
    );
    assert!(out.yaml.contains("post: /members/create"), "{}", out.yaml);
    assert!(
        out.yaml.contains("# decide: line 15: url `members/create`"),
        "{}",
        out.yaml
    );
    let err = loadlab_import::import(
        Kind::Artillery,
        &corpus("artillery-config_variables.json"),
        "config_variables.json",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("line 13: get `{{ url }}`: the whole URL is a variable's value"),
        "{err}"
    );
}

#[test]
fn a_templated_payload_path_and_timeout_are_reported() {
    let src = "config:\n  target: http://127.0.0.1:8080\n  phases: [{duration: 1, arrivalRate: 1}]\n  http:\n    timeout: \"{{ myVar }}\"\n  payload:\n    path: \"names-{{ $environment }}.csv\"\n    fields: [name]\n    skipHeader: true\nscenarios:\n  - flow: [{get: {url: \"/{{ name }}\"}}]\n";
    let out = imported(src, "bom.yml");
    assert!(
        out.yaml
            .contains("# decide: payload path `names-{{ $environment }}.csv` holds a template"),
        "{}",
        out.yaml
    );
    let lines: Vec<(Option<usize>, &str)> = out
        .report
        .unsupported
        .iter()
        .map(|u| (u.line, u.what.as_str()))
        .collect();
    assert!(
        lines
            .iter()
            .any(|(l, w)| *l == Some(5) && w.starts_with("config.http.timeout `{{ myVar }}`")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|(l, w)| *l == Some(6) && w.contains("names-{{ $environment }}.csv")),
        "{lines:?}"
    );
}

#[test]
fn phases_only_under_environments_are_named_not_silently_one_user() {
    let src = "config:\n  target: http://127.0.0.1:8080\n  environments:\n    smoke:\n      phases: [{duration: 30, arrivalRate: 1}]\n    load:\n      phases: [{duration: 60, arrivalRate: 20}]\nscenarios:\n  - flow: [{get: {url: /}}]\n";
    let out = imported(src, "envs.yml");
    assert!(
        out.yaml.contains(
            "# decide: the script's phases are only under config.environments (smoke, load)"
        ),
        "{}",
        out.yaml
    );
    let u = &out.report.unsupported;
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].line, Some(3));
    assert!(u[0].what.starts_with(
        "config.environments (smoke, load): Artillery applies one when run with --environment NAME"
    ));
    validate(&out.yaml, "envs.yaml");
}

#[test]
fn a_refusal_names_why_no_scenario_converted_first() {
    let mut src = String::from("config:\n  target: http://127.0.0.1:8080\n");
    for i in 0..9 {
        src.push_str(&format!("  unknown{i}: x\n"));
    }
    src.push_str("scenarios:\n  - flow:\n      - log: hi\n");
    let err = loadlab_import::import(Kind::Artillery, &src, "noisy.yml", &Options::default())
        .unwrap_err()
        .to_string();
    let reasons: Vec<&str> = err.lines().skip(1).map(str::trim).collect();
    assert!(reasons[0].starts_with("line 14: flow item `log`"), "{err}");
    assert!(reasons[1].contains("no request step converted"), "{err}");
    assert_eq!(reasons.last(), Some(&"(3 more not converted)"), "{err}");
}

#[test]
fn loop_counts_as_artillery_reads_them() {
    let cases = [
        ("5", "count: 5", None),
        ("\"5\"", "count: 5", None),
        (
            "\"9-12\"",
            "count: 3",
            Some("# Artillery's count `9-12` loops from 9 while below 12: 3 times"),
        ),
        (
            "\"{{ n }}\"",
            "count: 1",
            Some("# decide: loop count `{{ n }}` is not a number"),
        ),
    ];
    for (count, want, comment) in cases {
        let src = format!("config:\n  target: http://127.0.0.1:8080\nscenarios:\n  - flow:\n      - loop:\n          - get: {{url: /}}\n        count: {count}\n");
        let out = imported(&src, "loops.yml");
        assert!(out.yaml.contains(want), "{count}: {}", out.yaml);
        if let Some(c) = comment {
            assert!(out.yaml.contains(c), "{count}: {}", out.yaml);
        }
        validate(&out.yaml, "loops.yaml");
    }
}

#[test]
fn a_payload_without_path_keeps_its_columns() {
    let src = "config:\n  target: http://127.0.0.1:8080\n  payload:\n    fields: [species, name]\n    skipHeader: true\nscenarios:\n  - flow:\n      - post: {url: /pets, json: {name: \"{{ name }}\", species: \"{{ species }}\"}}\n";
    let out = imported(src, "nopath.yml");
    assert!(
        out.yaml
            .contains("json: { name: \"{{ payload.name }}\", species: \"{{ payload.species }}\" }"),
        "{}",
        out.yaml
    );
    assert!(out.yaml.contains(
        "# decide: a payload without `path` (Artillery is given the CSV with --payload)"
    ));
    assert!(
        variables(&out).is_empty(),
        "columns are no processor variables"
    );
}

#[test]
fn parallel_requests_are_sent_one_after_another_and_said_so() {
    // artilleryio/artillery's test/scripts/scenario-with-parallel: the whole script was refused.
    let source = "config:\n  target: http://127.0.0.1:9\n  phases:\n    - duration: 2\n      arrivalRate: 1\nscenarios:\n  - name: animals\n    flow:\n      - get:\n          url: /first\n      - parallel:\n          - get:\n              url: /dino\n          - get:\n              url: /pony\n      - get:\n          url: /last\n";
    let out = imported(source, "parallel.yml");
    let s = validate(&out.yaml, "parallel.yaml");
    let urls: Vec<&str> = s.request_steps().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, ["/first", "/dino", "/pony", "/last"], "{}", out.yaml);
    assert!(
        out.yaml.contains(
            "# decide: Artillery sends these 2 request(s) at once (`parallel` (line 11)); a loadlab VU sends them one after another"
        ),
        "{}",
        out.yaml
    );
}
