//! What the importer tests share: reading fixtures and the hand-written examples they are
//! compared with, importing (a failed import fails the test with its error), and loading the
//! written YAML as a scenario the way `loadlab run` would (a scenario that does not validate
//! fails the test showing the YAML, so the failure shows what was written).

// Each test file uses some of these helpers, none uses all.
#![allow(dead_code)]

use loadlab_import::{import, Imported, Kind, Options, Report};
use loadlab_scenario::Scenario;
use std::path::{Path, PathBuf};

/// The repository's root, where `examples/` is.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scenario written by hand in `examples/`.
pub fn example(name: &str) -> Scenario {
    Scenario::from_file(&repo_root().join("examples").join(name)).unwrap()
}

/// The text of a file in `tests/fixtures/`.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// Imports `source`, read from `file`; an error fails the test with its message.
pub fn import_ok(kind: Kind, source: &str, file: &str, options: &Options) -> Imported {
    import(kind, source, file, options).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The written YAML parsed and validated as the file `file`.
pub fn validate(yaml: &str, file: &str) -> Scenario {
    // As `loadlab validate` reads it first (a duplicate key is refused there).
    loadlab_scenario::study::StudyDocument::parse(yaml, file)
        .and_then(|doc| doc.check())
        .unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    Scenario::parse(yaml, file).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The written YAML loaded as `file` from a directory of its own (`dir-XXXXXX` under the
/// temporary directory, removed once the scenario is loaded) that also holds `data_files`
/// (`(path, text)`): data sets are read from beside the scenario.
pub fn validate_in_dir(yaml: &str, dir: &str, file: &str, data_files: &[(&str, &str)]) -> Scenario {
    let scratch = tempfile::Builder::new()
        .prefix(&format!("{dir}-"))
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    for (path, text) in data_files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let file = dir.join(file);
    std::fs::write(&file, yaml).unwrap();
    Scenario::from_file(&file).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The environment variables the report asks for, in order.
pub fn variable_names(report: &Report) -> Vec<&str> {
    report.variables.iter().map(|v| v.name.as_str()).collect()
}
