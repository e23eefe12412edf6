//! Every example validates (with `loadlab validate` and against the committed JSON Schema)
//! and runs for about a second against `loadlab target` with no error.

mod common;

use common::{exclusive, Target, BIN};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> Vec<PathBuf> {
    examples_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"))
}

/// The examples and their short variants (examples/short/).
fn all_examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out = examples_in(&dir);
    out.extend(examples_in(&dir.join("short")));
    out
}

fn examples_in(dir: &Path) -> Vec<PathBuf> {
    let out = common::yaml_files(dir);
    assert!(out.len() >= 5, "{}: the seed examples", dir.display());
    out
}

fn loadlab(args: &[&str]) -> Output {
    // Stored runs go to a scratch directory, removed once loadlab exits.
    let results = common::scratch_dir("loadlab-examples-results-");
    Command::new(BIN)
        .args(args)
        .env("LOADLAB_RESULTS", results.path())
        .output()
        .expect("run loadlab")
}

fn yaml_to_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    serde_json::to_value(v).unwrap()
}

#[test]
fn every_example_validates() {
    for path in all_examples() {
        let out = loadlab(&["validate", path.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_example_matches_the_json_schema() {
    let schema_text = include_str!("../docs/schema/scenario.json");
    let schema: Value = serde_json::from_str(schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    for path in all_examples() {
        let doc = yaml_to_json(&path);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
    // The schema rejects what `validate` rejects at the top level (a misspelt key).
    let bad = serde_json::json!({"load": {"model": "closed", "vus": 1, "duration": "1s"}, "therholds": []});
    assert!(!validator.is_valid(&bad));
    // `loadlab schema` prints exactly the committed file.
    let out = loadlab(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), schema_text);
}

/// The example with a one-second load of the same model (an open one at its own rate, up to
/// 60/s: an example written for a rate its target holds stays within it), think times cut to
/// 10 ms.
fn shortened(path: &Path, dir: &tempfile::TempDir) -> PathBuf {
    let text = std::fs::read_to_string(path).unwrap();
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let model = doc["load"]["model"].as_str().unwrap().to_string();
    let rate = doc["load"]["rate"]
        .as_str()
        .and_then(|r| r.strip_suffix("/s")?.parse::<f64>().ok())
        .map_or(60.0, |r| r.min(60.0));
    let open = format!("{{model: open, rate: {rate}/s, duration: 1s}}");
    let load = match model.as_str() {
        "closed" => "{model: closed, vus: 4, duration: 1s}",
        "open" => open.as_str(),
        _ => "{model: burst, count: 200}",
    };
    let map = doc.as_mapping_mut().unwrap();
    map.insert("load".into(), serde_yaml_ng::from_str(load).unwrap());
    map.remove("warmup");
    map.remove("study");
    map.remove("capacity");
    fn cut_think(v: &mut serde_yaml_ng::Value) {
        match v {
            serde_yaml_ng::Value::Mapping(m) => {
                if m.contains_key("think") {
                    m.insert("think".into(), "10ms".into());
                }
                for (_, x) in m.iter_mut() {
                    cut_think(x);
                }
            }
            serde_yaml_ng::Value::Sequence(s) => s.iter_mut().for_each(cut_think),
            _ => {}
        }
    }
    cut_think(&mut doc);
    // In a stand-in for examples/, so that relative data paths still resolve.
    let out = dir.path().join(path.file_name().unwrap());
    std::fs::write(&out, serde_yaml_ng::to_string(&doc).unwrap()).unwrap();
    out
}

#[test]
fn every_example_runs_against_the_target_without_errors() {
    let _serial = exclusive();
    // The target the examples are written for (README: 8 workers of 5 ms).
    let target = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let dir = common::examples_scratch("loadlab-example-");
    for path in examples() {
        let short = shortened(&path, &dir);
        let json = dir.path().join(format!(
            "loadlab-example-{}.json",
            path.file_stem().unwrap().to_string_lossy()
        ));
        let out = loadlab(&[
            "run",
            short.to_str().unwrap(),
            "--target",
            &target.url,
            "--json",
            json.to_str().unwrap(),
            "--no-progress",
            "--retry-invalid",
            "2",
        ]);
        let _ = std::fs::remove_file(&short);
        let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
            panic!(
                "{}: no result ({e}): {}{}",
                path.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let _ = std::fs::remove_file(&json);
        let result: Value = serde_json::from_str(&text).unwrap();
        let name = path.display();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(result["requests"]["total"].as_u64().unwrap() > 0, "{name}");
        assert_eq!(
            result["requests"]["failed"], 0,
            "{name}: errors {}",
            result["errors"]
        );
        for step in result["steps"].as_array().unwrap() {
            assert!(
                step["requests"].as_u64().unwrap() > 0,
                "{name}: step {} never ran",
                step["name"]
            );
        }
    }
}
