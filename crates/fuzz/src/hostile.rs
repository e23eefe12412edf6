//! Hostile scenario files found from outside, generated rather than committed (the largest is
//! 10 MB): they are part of the scenario corpus and each has a time-bounded test of its own.

use std::fmt::Write;

/// A study of `n` variants that override nothing (`- {name: v0}`, …): validating it must
/// stay linear in `n`, no variant re-parsing the whole file (docs/limits.md).
pub fn many_variants(n: usize) -> String {
    let mut text = String::from(
        "name: many variants\ntarget: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps: [ {get: /} ]\nstudy:\n  repeat: 2\n  variants:\n",
    );
    for i in 0..n {
        let _ = writeln!(text, "    - {{name: v{i}}}");
    }
    text
}

/// `n` flows of one step each: 200,000 of them are a 10 MB file, above the file-size limit,
/// which must be refused before it is parsed (docs/limits.md).
pub fn many_flows(n: usize) -> String {
    let mut text = String::from(
        "name: many flows\ntarget: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nflows:\n",
    );
    for i in 0..n {
        let _ = writeln!(text, "  - {{name: f{i}, steps: [ {{get: /a{i}}} ]}}");
    }
    text
}
