//! What every importer writes the same way: the header line naming the source file, the note
//! on `decide:` comments, the one-user-once load left for a person to choose, and numbers as
//! people write them. Kept in one place so that the imported files of every format agree.

use crate::yaml::{Entry, Node};

/// The header line that explains the `decide:` comments.
pub(crate) const DECIDE_NOTE: &str = "Comments starting with \"decide:\" need a person's choice.";

/// `Imported from <file name> by `loadlab import <kind>`<detail>.`: the file's name only, not
/// the path it was read from.
pub(crate) fn imported_from(file: &str, kind: &str, detail: &str) -> String {
    let file_name = std::path::Path::new(file)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    format!("Imported from {file_name} by `loadlab import {kind}`{detail}.")
}

/// `load: {model: closed, vus: 1, iterations: 1}`: the source set no load, so the scenario
/// runs one user once; `decide` says why, as a `decide:` comment.
pub(crate) fn one_user_once(decide: &str) -> Entry {
    Entry::new(
        "load",
        Node::map([
            ("model", Node::raw("closed")),
            ("vus", Node::raw("1")),
            ("iterations", Node::raw("1")),
        ]),
    )
    .commented(decide)
}

/// A number as people write it: `3`, `2.5`, `0.125` (at most three decimals).
pub(crate) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
