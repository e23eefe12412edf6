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
