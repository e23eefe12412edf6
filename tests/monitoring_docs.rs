//! Every `monitor:` block of docs/monitoring.md and docs/scenario.md is accepted by
//! `loadlab validate` and by the committed JSON Schema, and mistakes in the section are
//! reported by `validate` with file:line (exit 2) and rejected by the schema.

mod common;

use common::BIN;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BASE: &str = "load: {model: closed, vus: 1, duration: 1s}\nsteps: [ { get: /a } ]\n";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn monitor_blocks(doc: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + 8..];
        let end = body.find("```").unwrap();
        if body.starts_with("monitor:") {
            out.push(body[..end].to_string());
        }
        rest = &body[end + 3..];
    }
    out
}

fn schema() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(include_str!("../docs/schema/scenario.json")).unwrap();
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

fn as_json(yaml: &str) -> Value {
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).unwrap();
    serde_json::to_value(v).unwrap()
}

fn temp_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(format!("loadlab-monitor-doc-{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn documented_sections_validate() {
    let mut blocks = monitor_blocks("docs/monitoring.md");
    assert!(blocks.len() >= 3, "found {}", blocks.len());
    blocks.extend(monitor_blocks("docs/scenario.md"));
    let validator = schema();
    let dir = common::scratch_dir("loadlab-monitor-doc-");
    for (i, block) in blocks.iter().enumerate() {
        let text = format!("{BASE}{block}");
        let errors: Vec<String> = validator
            .iter_errors(&as_json(&text))
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{block}\n{errors:#?}");
        let path = temp_file(dir.path(), &format!("ok{i}"), &text);
        let out = Command::new(BIN)
            .args(["validate", path.to_str().unwrap()])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{block}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn mistakes_are_reported_and_rejected() {
    let validator = schema();
    let cases = [
        (
            "monitor:\n  processes:\n    - { name: target, port: 8080, pid: 12 }\n",
            "5:9: monitor.processes[0]: give exactly one of `pid`, `port` or `match`",
        ),
        (
            "monitor:\n  prometheus:\n    - { name: app, url: http://127.0.0.1:9100/metrics, series: [\"x{code=500}\"] }\n",
            "monitor.prometheus[0].series[0]: `x{code=500}`: the value of label `code` must be in double quotes",
        ),
        ("monitor:\n  hots: false\n", "monitor: unknown field `hots`"),
    ];
    let dir = common::scratch_dir("loadlab-monitor-doc-");
    for (i, (block, says)) in cases.iter().enumerate() {
        let text = format!("{BASE}{block}");
        let path = temp_file(dir.path(), &format!("bad{i}"), &text);
        let out = Command::new(BIN)
            .args(["validate", path.to_str().unwrap()])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{block}\n{stderr}");
        assert!(stderr.contains(says), "{block}\n{stderr}");
        if i != 1 {
            // The schema cannot parse selectors, but it knows the shape.
            assert!(!validator.is_valid(&as_json(&text)), "{block}");
        }
    }
}
