//! The runs test on residual signs (the USL fit's check for systematic misfit), checked
//! against a brute-force enumeration of every arrangement (scripts/stats_reference_verdicts.py).

mod common;

use common::{assert_close, cases, fixture, num, nums};
use loadlab_analysis::stats::sign_runs;

#[test]
fn sign_runs_match_every_arrangement_enumerated() {
    let fx = fixture("sign_runs.json");
    for (i, case) in cases(&fx, "cases").iter().enumerate() {
        let got = sign_runs(&nums(&case["values"])).unwrap();
        assert_eq!(got.runs, case["runs"].as_u64().unwrap(), "case {i}");
        assert_close(
            got.p_fewer,
            num(&case["p_fewer"]),
            1e-9,
            &format!("case {i}"),
        );
    }
}
