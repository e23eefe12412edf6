//! Every example's `study:` section parses, and every variant / sweep point is a valid scenario.

use loadlab_scenario::study::{apply_sweep, StudyDocument};

#[test]
fn seed_examples_have_runnable_studies() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut studied = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let doc = StudyDocument::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let Some(spec) = doc.study().unwrap_or_else(|e| panic!("{e}")) else {
            continue;
        };
        studied += 1;
        for v in &spec.variants {
            let s = doc.variant_scenario(v).unwrap_or_else(|e| panic!("{e}"));
            assert!(s.plan().duration().as_secs_f64() > 0.0);
        }
        if let Some(sweep) = &spec.sweep {
            for &value in &sweep.values {
                let mut s = doc.scenario().unwrap();
                apply_sweep(&mut s, sweep.parameter, value).unwrap();
            }
        }
    }
    assert!(studied >= 5, "only {studied} examples have a study section");
}
