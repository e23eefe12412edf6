//! `loadlab import-results ... --study`: the imported runs become a study, as if `loadlab
//! study` had made them: per variant the median, its 95% CI, the CV and the outlier runs,
//! and the variants compared (`loadlab_orchestrate::study::assemble`, the same function a
//! running study calls). The runs already exist; nothing is run.

use super::import_results::{print_study_report, ImportedRun};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::study::RunEntry;
use loadlab_orchestrate::study::{assemble, MadeRun, PlannedVariant, StudyIds, StudyPlan};
use loadlab_report::study_terminal::print_study;
use loadlab_scenario::study::Order;
use loadlab_scenario::Scenario;
use loadlab_store::{Labels, Store, StudyKind};
use std::time::Duration;

/// Indexes the study the imported runs will belong to; returns its id.
pub fn begin(store: &Store, name: &str, labels: &Labels) -> Result<String, CliError> {
    let (id, _) = store
        .begin_study(StudyKind::Study, name, None, None)
        .map_err(|e| CliError::aborted(e.to_string()))?;
    store
        .set_labels(&id, labels)
        .map_err(|e| CliError::aborted(e.to_string()))?;
    Ok(id)
}

/// The imported runs' scenario as a study plan sees it: a name, nothing to run.
fn placeholder_scenario(name: &str) -> Result<Scenario, CliError> {
    let yaml = format!(
        "name: {}\ntarget: http://imported.invalid\nload: {{ model: closed, vus: 1, duration: 1s }}\nflows:\n  - {{ name: imported, steps: [ {{ get: / }} ] }}\n",
        serde_json::to_string(name).expect("a string serializes")
    );
    Scenario::parse(&yaml, "imported").map_err(CliError::from)
}

/// Assembles, stores and prints the study of `runs`; its outcome.
pub fn finish(
    store: &Store,
    id: &str,
    name: &str,
    runs: &[ImportedRun],
    quiet: bool,
) -> Result<Outcome, CliError> {
    let scenario = placeholder_scenario(name)?;
    let mut variants: Vec<String> = Vec::new();
    for r in runs {
        let v = r.variant.clone().unwrap_or_else(|| name.to_string());
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    let mut made = Vec::new();
    let mut reps = vec![0usize; variants.len()];
    for r in runs {
        let v = r.variant.clone().unwrap_or_else(|| name.to_string());
        let k = variants.iter().position(|x| *x == v).expect("listed above");
        made.push(MadeRun {
            entry: RunEntry {
                variant: v,
                rep: reps[k],
                attempt: 0,
                run: r.id.clone(),
                used: true,
                invalid: Vec::new(),
                reasons: Vec::new(),
            },
            result: r.result.clone(),
        });
        reps[k] += 1;
    }
    let plan = StudyPlan {
        name: name.to_string(),
        scenario_file: None,
        variants: variants
            .iter()
            .map(|v| PlannedVariant {
                name: v.clone(),
                scenario: scenario.clone(),
                sweep_value: None,
            })
            .collect(),
        repeat: reps.iter().copied().max().unwrap_or(1),
        order: Order::Sequential,
        cooldown: Duration::ZERO,
        retry_invalid: 0,
        warmup_runs: 0,
        equivalence: 0.0,
        metrics: None,
        compare_on: loadlab_metrics::LatencyBasis::Raw,
        compare: Vec::new(),
        sweep: None,
        segments: None,
    };
    let ids = StudyIds {
        id: id.to_string(),
        started_at: runs
            .iter()
            .map(|r| r.result.started_at.clone())
            .min()
            .unwrap_or_default(),
    };
    let mut study = assemble(&plan, &ids, &made, true);
    study.plan_hash = None;
    study.warnings.push(format!(
        "made from {} imported run(s): their validity was not judged (the files hold none of the generator's own timing)",
        runs.len()
    ));
    let path = store.study_file(StudyKind::Study, id);
    let text = serde_json::to_string_pretty(&study).expect("a study serializes") + "\n";
    loadlab_store::write_atomic(&path, text.as_bytes())
        .map_err(|e| CliError::aborted(format!("{}: {e}", path.display())))?;
    store
        .update_study(id, &path, made.len(), made.len())
        .and_then(|_| store.finish_study(id, &path, false))
        .map_err(|e| CliError::aborted(e.to_string()))?;
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = print_study(&mut out, &study);
        drop(out);
        println!("\nstudy {id} stored: {}", path.display());
        print_study_report(&path);
    }
    Ok(loadlab_pipeline::study::outcome_of_study(&study, false))
}
