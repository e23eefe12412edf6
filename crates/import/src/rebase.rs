//! A scenario names its data files relative to itself; written to another directory than the
//! source (`-o elsewhere/x.yaml`), the paths the source gave are rewritten to still name the
//! files the source read.

use crate::report::Report;
use crate::yaml::{Document, Node};
use std::path::{Component, Path, PathBuf};

/// Rewrites each `data:` set's `csv:` path, relative to `source_dir`, to be relative to `out_dir`.
pub fn data_paths(doc: &mut Document, source_dir: &Path, out_dir: &Path, report: &mut Report) {
    let from = absolute(out_dir);
    let base = absolute(source_dir);
    if from == base {
        return;
    }
    for e in doc.root.iter_mut().filter(|e| e.key == "data") {
        let Node::Map(sets) = &mut e.value else {
            continue;
        };
        for set in sets.iter_mut() {
            let Node::Map(fields) = &mut set.value else {
                continue;
            };
            for f in fields.iter_mut().filter(|f| f.key == "csv") {
                let Node::Str(path) = &mut f.value else {
                    continue;
                };
                if Path::new(path.as_str()).is_absolute() {
                    continue;
                }
                // `../src/data/users.csv` beside `tests/`: folded, so the path names no `..` twice.
                let target = absolute(&base.join(path.as_str()));
                let rebased = relative(&from, &target);
                let text = rebased.to_string_lossy().replace('\\', "/");
                report.did(format!(
                    "data file {path} is named {text} from the output's directory"
                ));
                *path = text;
            }
        }
    }
}

/// `path` made absolute against the current directory, `.` and `..` folded.
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path from directory `from` to `to`, both absolute.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Entry;

    #[test]
    fn data_paths_follow_the_output() {
        let mut doc = Document {
            header: vec![],
            root: vec![Entry::new(
                "data",
                Node::map([("users", Node::map([("csv", Node::str("data/users.csv"))]))]),
            )],
        };
        let mut report = Report::default();
        data_paths(
            &mut doc,
            Path::new("/work/tests/k6"),
            Path::new("/work/out/scenarios"),
            &mut report,
        );
        let text = crate::yaml::write_document(&doc);
        assert!(text.contains("../../tests/k6/data/users.csv"), "{text}");
    }

    #[test]
    fn a_path_up_from_the_source_is_folded() {
        let mut doc = Document {
            header: vec![],
            root: vec![Entry::new(
                "data",
                Node::map([("users", Node::map([("csv", Node::str("../src/users.csv"))]))]),
            )],
        };
        let mut report = Report::default();
        data_paths(
            &mut doc,
            Path::new("/work/p/tests"),
            Path::new("/work/out"),
            &mut report,
        );
        let text = crate::yaml::write_document(&doc);
        assert!(text.contains("csv: \"../p/src/users.csv\""), "{text}");
    }
}
