//! Formats that hold only aggregates (Locust's `--csv` stats, k6's `--summary-export` and
//! `handleSummary` JSON): refused, with why, because a run record needs each request.

/// Why an aggregates-only format cannot become a run.
pub fn why(format: &str) -> String {
    format!(
        "{format} holds only aggregates (counts, means and a few percentiles per endpoint), not each request's time: percentiles cannot be rebuilt from other percentiles, nor merged across intervals or runs, so no exact histogram (and no study, comparison or threshold on it) can be made from it. Import the per-request output instead: k6 `--out json=FILE` or `--out csv=FILE`; Locust has no per-request file (add an event hook that writes each request, or export with `--csv-full-history` only for a chart)"
    )
}
