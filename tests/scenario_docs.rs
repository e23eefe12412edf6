//! Every runnable example of docs/scenario.md (a YAML block with `target:` and `load:`)
//! validates and runs against `loadlab target` with no failed request; plus the CLI side of
//! the scenario language: `validate` errors (exit 2, file:line:column) and `schema`.

mod common;

use common::{exclusive, Target, BIN};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn loadlab(args: &[&str]) -> Output {
    // Stored runs go to a scratch directory, removed once loadlab exits.
    let results = common::scratch_dir("loadlab-docs-results-");
    Command::new(BIN)
        .args(args)
        .env("LOADLAB_RESULTS", results.path())
        .output()
        .expect("run loadlab")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Writes `text` into `dir`, a stand-in for examples/ (so `data/users.csv` resolves).
fn temp_scenario(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(format!("{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn doc_examples() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/scenario.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + 8..];
        let end = body.find("```").unwrap();
        let block = &body[..end];
        if block.starts_with("target: http://127.0.0.1:8080") && block.contains("\nload:") {
            out.push(block.to_string());
        }
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn docs_examples_run_without_errors() {
    let examples = doc_examples();
    assert!(examples.len() >= 5, "found {}", examples.len());
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = common::examples_scratch("loadlab-doc-");
    for (i, text) in examples.iter().enumerate() {
        let path = temp_scenario(&dir, &format!("doc{i}"), text);
        let json = dir.path().join(format!("loadlab-doc-{i}.json"));
        let out = loadlab(&[
            "run",
            path.to_str().unwrap(),
            "--target",
            &target.url,
            "--json",
            json.to_str().unwrap(),
            "--no-progress",
            "--retry-invalid",
            "2",
        ]);
        let _ = std::fs::remove_file(&path);
        let summary = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_str(
            &std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}\n{text}\n{summary}")),
        )
        .unwrap();
        let _ = std::fs::remove_file(&json);
        assert_eq!(out.status.code(), Some(0), "{text}\n{summary}");
        assert_eq!(result["requests"]["failed"], 0, "{text}\n{summary}");
        assert!(result["requests"]["total"].as_u64().unwrap() > 0);
    }
}

#[test]
fn validate_reports_template_errors_with_their_position() {
    let dir = common::examples_scratch("loadlab-bad-template-");
    let path = temp_scenario(
        &dir,
        "bad-template",
        "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps:\n  - post: /api/auth/signin\n    capture: { token: $.token }\n  - get: /api/ping\n    headers: { Authorization: 'Bearer {{ tokne }}' }\n",
    );
    let out = loadlab(&["validate", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":7:31: steps[1].headers.Authorization: unknown variable `tokne`"),
        "{err}"
    );
    assert!(err.contains("did you mean `token`?"), "{err}");
}

#[test]
fn validate_prints_the_outline() {
    let out = loadlab(&[
        "validate",
        root()
            .join("examples/seed-002-users-transactions.yaml")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("once[signin] → create user → loop 1000×[create transaction]"),
        "{text}"
    );
}

#[test]
fn unique_data_running_out_invalidates_the_run() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = common::examples_scratch("loadlab-unique-");
    let path = temp_scenario(
        &dir,
        "unique",
        "load: {model: closed, vus: 3, iterations: 2}\ndata:\n  users: { values: [{u: user1}, {u: user2}], pick: unique }\nsteps:\n  - post: /api/auth/signin\n    json: { username: '{{ users.u }}', password: password }\n",
    );
    let json = dir.path().join("loadlab-unique.json");
    let out = loadlab(&[
        "run",
        path.to_str().unwrap(),
        "--target",
        &target.url,
        "--json",
        json.to_str().unwrap(),
        "--no-progress",
    ]);
    let _ = std::fs::remove_file(&path);
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(result["requests"]["total"], 2);
    assert_eq!(result["validity"]["reasons"][0]["kind"], "data_exhausted");
    let reasons = result["validity"]["reasons"].to_string();
    assert!(
        reasons.contains("data set `users` (pick: unique) ran out after its 2 rows"),
        "{reasons}"
    );
}
