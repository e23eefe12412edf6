//! Why a run with an hour or more without a sample is refused: a run record has one interval
//! per second of the run, so a single stray timestamp (a clock jump, a row of another run, a
//! zero) would make a file of a few KB write millions of empty intervals (a 26 KB JMeter file
//! took 32 s, 3.6 GB of memory and 3.1 GB of disk). No load test pauses that long within a
//! run; the message names the two samples on either side of the hole, so the user can see
//! which one is wrong.

use crate::ReadError;

/// The longest stretch without a sample a run may hold.
pub const MAX_HOLE_US: i64 = 3_600_000_000;

/// A moment the file gave (µs since the epoch), with the start of the sample it ended (as
/// the file writes it, to be found there) and its line when the reader knows it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    at_us: i64,
    start_us: i64,
    line: Option<u64>,
}

/// The earliest and the latest moment seen so far.
#[derive(Debug, Default)]
pub struct Extent {
    earliest: Option<Seen>,
    latest: Option<Seen>,
}

impl Extent {
    /// Takes in a sample ending at `at_us` that started at `start_us` (on `line`); refuses it
    /// if it lies an hour or more after the latest sample, or (`before_ok` false: nothing
    /// written yet) before the earliest, or took that long itself.
    pub fn take(
        &mut self,
        at_us: i64,
        start_us: i64,
        line: Option<u64>,
        before_ok: bool,
    ) -> Result<(), ReadError> {
        let this = Seen {
            at_us,
            start_us,
            line,
        };
        if at_us - start_us >= MAX_HOLE_US {
            return Err(ReadError::Bad(format!(
                "{}a sample that took {} (from {} to {}): a wrong timestamp or elapsed time? loadlab does not import a run with an hour or more without a sample; remove the row",
                at(line),
                hours(at_us - start_us),
                rfc3339_ms(start_us),
                rfc3339_ms(at_us)
            )));
        }
        if let Some(latest) = self.latest.filter(|l| at_us - l.at_us >= MAX_HOLE_US) {
            return Err(hole(this, latest, "after"));
        }
        if let Some(earliest) = self.earliest.filter(|e| e.at_us - at_us >= MAX_HOLE_US) {
            if !before_ok {
                return Err(hole(this, earliest, "before"));
            }
        }
        if self.earliest.is_none_or(|e| at_us < e.at_us) {
            self.earliest = Some(this);
        }
        if self.latest.is_none_or(|l| at_us > l.at_us) {
            self.latest = Some(this);
        }
        Ok(())
    }
}

fn hole(this: Seen, other: Seen, side: &str) -> ReadError {
    let (from, to) = if side == "after" {
        (other.at_us, this.at_us)
    } else {
        (this.at_us, other.at_us)
    };
    ReadError::Bad(format!(
        "{}a sample that started at {} lies {} {side} the run's {} sample (started at {}{}) with no sample between: a clock jump, a stray row or a row of another run? loadlab writes a run second by second and does not import one with an hour or more without a sample; remove the stray row, or split the file and import each part",
        at(this.line),
        rfc3339_ms(this.start_us),
        hours(to - from),
        if side == "after" { "latest" } else { "earliest" },
        rfc3339_ms(other.start_us),
        other.line.map(|l| format!(", line {l}")).unwrap_or_default(),
    ))
}

fn at(line: Option<u64>) -> String {
    line.map(|l| format!("line {l}: ")).unwrap_or_default()
}

fn hours(us: i64) -> String {
    let h = us as f64 / 3.6e9;
    if h >= 48.0 {
        format!("{:.1} days", h / 24.0)
    } else {
        format!("{h:.1} h")
    }
}

/// `2024-04-19T10:00:00.123Z`.
pub fn rfc3339_ms(us: i64) -> String {
    let us = us.max(0) as u64;
    let whole = loadlab_metrics::result::rfc3339(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(us / 1_000_000),
    );
    let ms = us % 1_000_000 / 1000;
    match whole.strip_suffix('Z') {
        Some(s) => format!("{s}.{ms:03}Z"),
        None => whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (at, start, before_ok) of each sample in order.
    type Samples = &'static [(i64, i64, bool)];

    /// The index of the sample refused, if one is.
    #[test]
    fn an_hour_without_a_sample_is_refused_either_side() {
        const H: i64 = MAX_HOLE_US;
        let cases: [(&str, Samples, Option<usize>); 6] = [
            (
                "close together",
                &[(0, 0, false), (H - 1, H - 2, false)],
                None,
            ),
            ("an hour after", &[(0, 0, false), (H, H, false)], Some(1)),
            ("an hour before", &[(H, H, false), (0, 0, false)], Some(1)),
            (
                "before, once written: late",
                &[(H, H, false), (0, 0, true)],
                None,
            ),
            ("a sample an hour long", &[(H, 0, false)], Some(0)),
            (
                "a gap bridged",
                &[(0, 0, false), (H / 2, 0, false), (H, H, false)],
                None,
            ),
        ];
        for (what, samples, refused) in cases {
            let mut extent = Extent::default();
            let got = samples
                .iter()
                .position(|&(at, start, ok)| extent.take(at, start, Some(7), ok).is_err());
            assert_eq!(got, refused, "{what}");
        }
    }

    #[test]
    fn the_message_names_both_samples() {
        let mut extent = Extent::default();
        extent
            .take(1_718_700_000_000_000, 1_718_700_000_000_000, Some(4), false)
            .unwrap();
        let Err(ReadError::Bad(m)) =
            extent.take(1_713_520_800_123_000, 1_713_520_800_000_000, Some(3), false)
        else {
            panic!("refused")
        };
        assert!(
            m.starts_with("line 3: a sample that started at 2024-04-19T10:00:00.000Z lies 59.9 days before the run's earliest sample (started at 2024-06-18T08:40:00.000Z, line 4)"),
            "{m}"
        );
    }
}
