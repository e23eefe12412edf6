//! Hostile scenario files found from outside, generated rather than committed (the largest is
//! 10 MB): they are part of the scenario corpus and each has a time-bounded test of its own.

use std::fmt::Write;

/// A study of `n` variants that override nothing (`- {name: v0}`, …). 20,000 of them kept
/// `loadlab validate` busy for more than 10 minutes: each variant re-parsed the whole file.
pub fn many_variants(n: usize) -> String {
    let mut text = String::from(
        "name: many variants\ntarget: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps: [ {get: /} ]\nstudy:\n  repeat: 2\n  variants:\n",
    );
    for i in 0..n {
        let _ = writeln!(text, "    - {{name: v{i}}}");
    }
    text
}

/// `n` flows of one step each: 200,000 of them are a 10 MB file that took 4.3 s and 466 MB
/// to reject for its number of steps.
pub fn many_flows(n: usize) -> String {
    let mut text = String::from(
        "name: many flows\ntarget: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nflows:\n",
    );
    for i in 0..n {
        let _ = writeln!(text, "  - {{name: f{i}, steps: [ {{get: /a{i}}} ]}}");
    }
    text
}
