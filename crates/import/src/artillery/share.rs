//! Every Artillery arrival picks one scenario by weight. When a scenario is left out (another
//! engine, nothing converted), its arrivals must not go to the others: the kept flows' rates
//! are scaled by their share of the total weight, so each endpoint gets the load it had.

use super::config::rate_text;
use crate::report::Report;
use crate::scaffold::fmt_num;
use crate::yaml::{Entry, Node};

/// Scales the rates of `load:` in `entries` by `kept / total` (weights), noted on `load:` and
/// in the report; nothing when every scenario was kept or none was.
pub fn scale_load(entries: &mut [Entry], kept: u64, total: u64, report: &mut Report) {
    if kept == 0 || kept >= total {
        return;
    }
    let Some(load) = entries.iter_mut().find(|e| e.key == "load") else {
        return;
    };
    let share = kept as f64 / total as f64;
    let Node::Map(fields) = &mut load.value else {
        return;
    };
    // A load with no stages (no phase converted) has no rate to scale.
    let Some(stages) = fields.iter_mut().find(|f| f.key == "stages") else {
        return;
    };
    let Node::Seq(items) = &mut stages.value else {
        return;
    };
    for item in items.iter_mut() {
        if let Node::Map(stage) = &mut item.value {
            for e in stage
                .iter_mut()
                .filter(|e| e.key == "rate" || e.key == "ramp_to")
            {
                if let Node::Raw(text) = &mut e.value {
                    if let Some(scaled) = scaled(text, share) {
                        *text = scaled;
                    }
                }
            }
        }
    }
    let what = format!(
        "rates scaled by {kept}/{total}: the scenarios left out had weight {} of {total}, and their share of Artillery's arrivals is not sent to the flows kept",
        total - kept
    );
    load.comments.push(what.clone());
    report.did(format!("load: {what} (share {})", fmt_num(share)));
}

/// `3/s` × 0.5 → `1.5/s`; `None` for text that is not a rate.
fn scaled(rate: &str, share: f64) -> Option<String> {
    let (n, unit) = rate.split_once('/')?;
    let per = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    let n: f64 = n.parse().ok()?;
    Some(rate_text(n * share / per))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_take_the_kept_share() {
        let cases = [
            ("1/s", 0.5, "0.5/s"),
            ("10/s", 0.25, "2.5/s"),
            ("0/s", 0.5, "0/s"),
            ("3/m", 0.5, "0.025/s"),
            ("1/s", 1.0 / 3.0, "20/m"),
        ];
        for (rate, share, want) in cases {
            assert_eq!(
                scaled(rate, share).as_deref(),
                Some(want),
                "{rate} × {share}"
            );
        }
    }
}
