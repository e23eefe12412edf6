//! When a threshold is judged while the run goes: its window (`over 30s`), whether it stops the
//! run (`abort`) and how long after the warm-up it waits (`after 10s`, `grace 10s`). The short
//! form's clauses are read here; `Threshold::parse` reads the comparison before them.

use crate::units::{format_duration, parse_duration};
use std::time::Duration;

/// How a threshold is judged while the run goes. The default (no window, no abort) is a plain
/// threshold, judged once on the whole run at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Live {
    /// `over 30s`: judged every interval over the last 30 s of measured intervals.
    pub window: Option<Duration>,
    /// `abort`: the run stops as soon as a judgement fails.
    pub abort: bool,
    /// `after 10s`: time after the warm-up's end before the first judgement.
    pub grace: Duration,
}

pub const LIVE_EXAMPLE: &str = "e.g. `latency.p95 < 500ms over 30s, abort after 10s`";

impl Live {
    /// True when the threshold is judged every interval (a window, or an abort).
    pub fn is_live(&self) -> bool {
        self.window.is_some() || self.abort
    }

    /// The clauses as the short form writes them: ` over 30s, abort after 10s`.
    pub fn suffix(&self) -> String {
        let mut out = String::new();
        if let Some(w) = self.window {
            out.push_str(&format!(" over {}", format_duration(w)));
        }
        match (self.abort, self.grace.is_zero()) {
            (true, true) => out.push_str(", abort"),
            (true, false) => {
                out.push_str(&format!(", abort after {}", format_duration(self.grace)))
            }
            (false, false) => out.push_str(&format!(", after {}", format_duration(self.grace))),
            (false, true) => {}
        }
        out
    }

    /// Checks what the clauses say together: a window longer than zero, and a grace only
    /// where there is something to judge while the run goes.
    pub fn check(&self) -> Result<(), String> {
        if self.window.is_some_and(|w| w.is_zero()) {
            return Err(format!(
                "a window must be longer than zero: write e.g. `over 30s` ({LIVE_EXAMPLE})"
            ));
        }
        if !self.grace.is_zero() && !self.is_live() {
            return Err(format!(
                "a grace delays the judgement made while the run goes, which only a threshold with a window (`over 30s`) or `abort` has: add one, or drop the grace ({LIVE_EXAMPLE})"
            ));
        }
        Ok(())
    }
}

/// Splits `500ms over 30s, abort after 10s` (what follows the comparison operator) into the
/// bound's text and the clauses.
pub(crate) fn split_clauses(rest: &str) -> Result<(&str, Live), String> {
    let (head, clauses) = match rest.split_once(',') {
        Some((h, c)) => (h, Some(c)),
        None => (rest, None),
    };
    let mut live = Live::default();
    let bound = match head.split_once(" over ") {
        Some((bound, window)) => {
            live.window = Some(duration_in(window, "over")?);
            bound
        }
        None => head,
    };
    for clause in clauses.into_iter().flat_map(|c| c.split(',')) {
        let words: Vec<&str> = clause.split_whitespace().collect();
        match words.as_slice() {
            ["abort"] => live.abort = true,
            ["abort", "after", d] => {
                live.abort = true;
                live.grace = duration_in(d, "after")?;
            }
            ["after" | "grace", d] => live.grace = duration_in(d, "after")?,
            _ => {
                return Err(format!(
                    "unknown clause `{}`: after the comparison and its window (`over 30s`), write `abort` (stop the run when it fails), `abort after 10s` or `after 10s` (wait that long after the warm-up before judging), {LIVE_EXAMPLE}",
                    clause.trim()
                ))
            }
        }
    }
    live.check()?;
    Ok((bound, live))
}

fn duration_in(text: &str, word: &str) -> Result<Duration, String> {
    parse_duration(text.trim()).map_err(|e| format!("`{word} {}`: {e}", text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn clauses_table() {
        let cases: &[(&str, &str, Option<f64>, bool, f64)] = &[
            ("500ms", "500ms", None, false, 0.0),
            ("500ms over 30s", "500ms", Some(30.0), false, 0.0),
            ("500ms over 30s, abort", "500ms", Some(30.0), true, 0.0),
            (
                "500ms over 1m, abort after 10s",
                "500ms",
                Some(60.0),
                true,
                10.0,
            ),
            ("5% over 10s, after 5s", "5%", Some(10.0), false, 5.0),
            ("5% over 10s, grace 5s, abort", "5%", Some(10.0), true, 5.0),
            ("100, abort", "100", None, true, 0.0),
        ];
        for (text, bound, window, abort, grace) in cases {
            let (b, live) = split_clauses(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(b.trim(), *bound, "{text}");
            assert_eq!(live.window, window.map(secs), "{text}");
            assert_eq!(live.abort, *abort, "{text}");
            assert_eq!(live.grace, secs(*grace), "{text}");
        }
    }

    #[test]
    fn bad_clauses_say_what_to_write() {
        let cases: &[(&str, &str)] = &[
            ("500ms over 0s", "longer than zero"),
            ("500ms over soon", "`over soon`"),
            ("500ms, after 10s", "only a threshold with a window"),
            ("500ms over 30s, stop", "unknown clause `stop`"),
            ("500ms over 30s, abort after", "unknown clause"),
        ];
        for (text, needle) in cases {
            let err = split_clauses(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn suffix_is_the_short_form() {
        let live = Live {
            window: Some(secs(30.0)),
            abort: true,
            grace: secs(10.0),
        };
        assert_eq!(live.suffix(), " over 30s, abort after 10s");
        let (_, back) = split_clauses(&format!("500ms{}", live.suffix())).unwrap();
        assert_eq!(back, live);
        let window_only = Live {
            window: Some(secs(1.5)),
            ..Live::default()
        };
        assert_eq!(window_only.suffix(), " over 1.5s");
    }
}
