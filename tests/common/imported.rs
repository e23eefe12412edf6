//! Shared by the `import-results` end-to-end tests: the committed result files, the command,
//! and the runs it stored.

use super::BIN;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results");

/// The path of a committed result file.
pub fn fixture(name: &str) -> String {
    format!("{FIXTURES}/{name}")
}

/// `loadlab import-results ARGS --results DIR`.
pub fn import(results: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("import-results")
        .args(args)
        .arg("--results")
        .arg(results)
        .env_remove("LOADLAB_LABELS")
        .output()
        .expect("run loadlab")
}

/// The run.json of every run in the store, oldest directory first.
pub fn runs(results: &Path) -> Vec<Value> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(results.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| {
            serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap()
        })
        .collect()
}

/// The store's one run.
pub fn only_run(results: &Path) -> Value {
    let mut all = runs(results);
    assert_eq!(all.len(), 1, "one run expected");
    all.remove(0)
}
