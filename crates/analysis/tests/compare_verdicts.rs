//! Every case of the verdict taxonomy, against `verdicts.json` (exact enumeration, SciPy's
//! Student t and statsmodels' Holm in `scripts/stats_reference.py`): p, Holm-adjusted p,
//! the 95% CI and the verdict; then the gates built on them.

mod common;

use common::{assert_close, cases, fixture, num, nums};
use loadlab_analysis::compare::{
    compare_pairs, family_size, regressions, CompareOptions, MetricSamples, OneRun, PairSamples,
};
use loadlab_metrics::{MetricId, Verdict};
use serde_json::Value;

fn opt_pair(v: &Value) -> Option<[f64; 2]> {
    (!v.is_null()).then(|| {
        let a = nums(v);
        [a[0], a[1]]
    })
}

fn pair_of(case: &Value) -> PairSamples {
    PairSamples {
        baseline: "a".into(),
        variant: "b".into(),
        offered_differs: false,
        metrics: case["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| MetricSamples {
                metric: m["metric"].as_str().unwrap().parse().unwrap(),
                baseline: nums(&m["baseline"]),
                variant: nums(&m["variant"]),
            })
            .collect(),
    }
}

#[test]
fn every_taxonomy_case_matches_the_reference() {
    let fx = fixture("verdicts.json");
    let all = cases(&fx, "cases");
    assert!(all.len() >= 15);
    for case in all {
        let name = case["name"].as_str().unwrap();
        let options = CompareOptions {
            equivalence: num(&case["equivalence"]),
            ..CompareOptions::default()
        };
        let got = compare_pairs(&[pair_of(case)], &options);
        let want = case["metrics"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        for (c, w) in got.iter().zip(want) {
            let what = format!("{name} {}", c.metric);
            let verdict: Verdict = serde_json::from_value(w["verdict"].clone()).unwrap();
            assert_eq!(c.verdict, verdict, "{what}: {c:?}");
            match (c.p_value, w["p"].as_f64()) {
                (Some(p), Some(e)) => assert_close(p, e, 1e-9, &format!("{what}: p")),
                (None, None) => {}
                (g, e) => panic!("{what}: p {g:?} vs {e:?}"),
            }
            match (c.p_adjusted, w["p_adjusted"].as_f64()) {
                (Some(p), Some(e)) => assert_close(p, e, 1e-9, &format!("{what}: Holm")),
                (None, None) => {}
                (g, e) => panic!("{what}: Holm {g:?} vs {e:?}"),
            }
            if let Some([lo, hi]) = opt_pair(&w["change_ci"]) {
                let [glo, ghi] = c.change_ci.unwrap_or_else(|| panic!("{what}: no CI"));
                assert_close(glo, lo, 1e-9, &format!("{what}: ci lo"));
                assert_close(ghi, hi, 1e-9, &format!("{what}: ci hi"));
            }
            if let Some([lo, hi]) = opt_pair(&w["difference_ci"]) {
                let [glo, ghi] = c.difference_ci.unwrap();
                assert_close(glo, lo, 1e-9, &format!("{what}: shift lo"));
                assert_close(ghi, hi, 1e-9, &format!("{what}: shift hi"));
            }
        }
    }
}

fn case(name: &str) -> Value {
    let fx = fixture("verdicts.json");
    cases(&fx, "cases")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
        .clone()
}

#[test]
fn degenerate_metrics_spend_no_alpha() {
    let c = compare_pairs(
        &[pair_of(&case("holm_degenerate_do_not_count"))],
        &CompareOptions::default(),
    );
    assert_eq!(family_size(&c), 1);
    assert_eq!(c[0].p_adjusted, c[0].p_value, "alone in the family");
    assert!(c[1..]
        .iter()
        .all(|x| x.p_adjusted.is_none() && x.is_degenerate()));
    let c = compare_pairs(
        &[pair_of(&case("holm_five_separated"))],
        &CompareOptions::default(),
    );
    assert_eq!(family_size(&c), 5);
    // 5 × 2/252 = 0.0397 < 0.05: complete separation of 5 + 5 runs survives Holm over five.
    assert!(c.iter().all(|x| x.verdict == Verdict::Slower));
}

#[test]
fn the_family_spans_every_pair_of_a_study() {
    let one = pair_of(&case("holm_five_separated"));
    let mut two = one.clone();
    two.variant = "c".into();
    let c = compare_pairs(&[one, two], &CompareOptions::default());
    assert_eq!(family_size(&c), 10);
    // 10 × 0.0079 > 0.05: with two pairs, 5 + 5 runs are no longer enough.
    assert!(
        c.iter().all(|x| x.verdict == Verdict::Inconclusive),
        "{c:?}"
    );
}

#[test]
fn too_few_runs_never_fail_a_gate() {
    let c = compare_pairs(
        &[pair_of(&case("insufficient_4x4"))],
        &CompareOptions::default(),
    );
    assert_eq!(c[0].verdict, Verdict::Insufficient);
    assert!(c[0].change_ci.unwrap()[0] > 0.0, "the CI is still shown");
    assert!(regressions(&c, 0.0).is_empty());
}

#[test]
fn one_run_against_a_study_says_how_weak_it_is() {
    let pair = pair_of(&case("one_run_far_slower"));
    let c = compare_pairs(std::slice::from_ref(&pair), &CompareOptions::default());
    assert_eq!(c[0].verdict, Verdict::Slower);
    let r = regressions(&c, 0.2);
    assert_eq!(r.len(), 1, "CI lower end ≈ +46% clears a 20% bound");
    assert!(regressions(&c, 0.5).is_empty(), "but not a 50% one");
    let note = OneRun::of(&pair, &c, 0.05).unwrap();
    assert_eq!(note.baseline_runs, 10);
    let [lo, hi] = note.detectable[&"latency_ms.p95".parse::<MetricId>().unwrap()];
    assert!(lo < -0.05 && hi > 0.05, "{lo} {hi}");
    // The same run as the baseline side: the change is turned round.
    let swapped = PairSamples {
        baseline: "run".into(),
        variant: "study".into(),
        offered_differs: false,
        metrics: vec![MetricSamples {
            metric: pair.metrics[0].metric.clone(),
            baseline: pair.metrics[0].variant.clone(),
            variant: pair.metrics[0].baseline.clone(),
        }],
    };
    let s = compare_pairs(&[swapped], &CompareOptions::default());
    assert_eq!(s[0].verdict, Verdict::Faster);
    assert_close(
        1.0 / (1.0 + s[0].change.unwrap()),
        1.0 + c[0].change.unwrap(),
        1e-12,
        "inverse",
    );
}
