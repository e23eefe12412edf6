//! The terminal summary of a study and of a comparison: spread as `CV x%` (never a bare `±`),
//! p-values labelled raw and Holm, every `~` explained, the same verdict words as reports.

mod common;
mod samples;

use loadlab_analysis::compare::{compare_pairs, CompareOptions, MetricSamples, PairSamples};
use loadlab_metrics::{LatencyStat, MetricId};
use loadlab_report::study_terminal::{print_comparisons, print_study};

fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut out = Vec::new();
    f(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn a_study_reads_with_cv_and_labelled_p_values() {
    let (s, _) = samples::study();
    let out = text(|o| print_study(o, &s).unwrap());
    assert!(out.contains("CV "), "{out}");
    assert!(!out.contains(" ± "), "{out}");
    assert!(out.contains("p raw") && out.contains("p Holm"), "{out}");
    assert!(out.contains("slower") && out.contains("better"), "{out}");
    // The sample's runs hold ~500-700 requests: their p99 is marked, as in the reports.
    assert!(out.contains("ms† CV "), "{out}");
    assert!(out.contains("† the runs hold too few requests"), "{out}");
    // The error rate is `~` and says why.
    assert!(
        out.contains(
            "error rate ~: no difference detected at 10+10 runs: most runs have the same value"
        ),
        "{out}"
    );
    assert!(out.contains("Holm's correction over the 5 tests"), "{out}");
    // Every word printed is explained in a legend under the table, one line each.
    let legend: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("verdicts:"))
        .take(4)
        .collect();
    assert_eq!(legend.len(), 4, "{out}");
    assert!(legend[0].contains("slower/faster") && legend[0].contains("Holm p < 0.05"));
    assert!(legend
        .iter()
        .any(|l| l.trim_start().starts_with("~: no difference detected")));
    assert!(legend
        .iter()
        .any(|l| l.trim_start().starts_with("insufficient:")));
    assert!(legend
        .iter()
        .any(|l| l.trim_start().starts_with("equivalent:")));
}

#[test]
fn a_saturated_sweep_claims_no_peak() {
    let (s, _) = samples::sweep();
    let out = text(|o| print_study(o, &s).unwrap());
    assert!(out.contains("N* not identifiable from this sweep"), "{out}");
    assert!(out.contains("unreliable"), "{out}");
}

#[test]
fn too_few_runs_read_insufficient_with_the_number() {
    let pair = PairSamples {
        baseline: "a".into(),
        variant: "b".into(),
        offered_differs: false,
        metrics: vec![MetricSamples {
            metric: MetricId::latency(LatencyStat::P95),
            baseline: vec![4.10, 4.11, 4.12, 4.13],
            variant: vec![4.30, 4.31, 4.32, 4.33],
        }],
    };
    let comps = compare_pairs(&[pair], &CompareOptions::default());
    let out = text(|o| print_comparisons(o, &comps, None, None, 0.0, 5).unwrap());
    assert!(out.contains("insufficient"), "{out}");
    assert!(out.contains("4+4 runs; at least 5 per side"), "{out}");
}

#[test]
#[ignore = "prints the sample study's summary: cargo test -p loadlab-report --test study_terminal -- --ignored --nocapture"]
fn show() {
    let (s, _) = samples::study();
    print!("{}", text(|o| print_study(o, &s).unwrap()));
}

#[test]
fn the_first_lines_say_how_many_valid_runs_each_variant_has_and_why_not_more() {
    use loadlab_analysis::study::RunEntry;
    use loadlab_metrics::InvalidKind;
    let (mut s, _) = samples::study();
    let entry = |variant: &str, rep: usize, attempt: usize, used: bool| RunEntry {
        variant: variant.into(),
        rep,
        attempt,
        run: format!("r-{variant}-{rep}-{attempt}"),
        used,
        invalid: if used {
            vec![]
        } else {
            vec![InvalidKind::HostContended]
        },
        reasons: if used {
            vec![]
        } else {
            vec!["other processes took the CPU the generator needed".into()]
        },
    };
    for v in ["baseline", "stress"] {
        for rep in 0..10 {
            let short = v == "stress" && rep == 4;
            s.run_log.push(entry(v, rep, 0, !short));
            if short {
                s.run_log.push(entry(v, rep, 1, false));
                s.run_log.push(entry(v, rep, 2, false));
            }
        }
    }
    let stress = s.variants.iter_mut().find(|v| v.name == "stress").unwrap();
    stress.runs.pop();
    let out = text(|o| print_study(o, &s).unwrap());
    let head: Vec<&str> = out.lines().skip(1).take(4).collect();
    assert!(
        head.iter()
            .any(|l| l.contains("valid runs: baseline: 10 valid runs of 10 planned")),
        "{out}"
    );
    assert!(
        head.iter().any(|l| l.contains(
            "valid runs: stress: 9 valid runs of 10 planned — run 5 invalid in 3 attempts (host_contended: other processes took the CPU the generator needed)"
        )),
        "{out}"
    );
    let quiet = samples::study().0;
    let out = text(|o| print_study(o, &quiet).unwrap());
    assert!(
        out.contains("valid runs: 10 of 10 planned in every variant"),
        "{out}"
    );
}

#[test]
fn a_pair_side_is_named_by_its_variant_kind_id_and_tool() {
    use loadlab_report::study_terminal::PairSide;
    let (s, _) = samples::study();
    let stats = &s.variants[0];
    let side = |kind, id, made_by| PairSide {
        kind,
        id,
        made_by,
        stats,
    };
    assert_eq!(
        side("study", "s1", None).words(),
        format!("{} (study s1)", stats.name)
    );
    assert_eq!(
        side("run", &stats.name, Some("loadlab 0.1.0")).words(),
        format!("{} (run, by loadlab 0.1.0)", stats.name)
    );
}
