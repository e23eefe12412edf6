//! Other load testers' result files become runs of the store (`loadlab import-results`): each
//! record rebuilt from the file's requests by `loadlab_results_import`, its summary derived
//! from the record as for any run, its thresholds evaluated; with `--study`, the runs become
//! a study assembled by the same function a running study calls. Nothing is run.

use crate::PipelineError;
use loadlab_analysis::study::{RunEntry, StudyResult};
use loadlab_metrics::record::{summarize, StoredRecord};
use loadlab_metrics::RunResult;
use loadlab_orchestrate::study::{assemble, MadeRun, PlannedVariant, StudyIds, StudyPlan};
use loadlab_results_import::{import_file, Format, ImportError, Options};
use loadlab_scenario::study::Order;
use loadlab_scenario::Scenario;
use loadlab_store::{Labels, NewRun, Store, StudyKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An imported run: its id and summary, and what the file held that could not be read.
pub struct ImportedRun {
    pub id: String,
    pub variant: Option<String>,
    pub result: RunResult,
    /// The malformed lines, described for the user (none when every line was read).
    pub malformed: Option<String>,
}

/// Imports one file into a new run of the store (of `study`, if given). A file that cannot
/// be imported leaves no run behind.
pub fn import_one(
    store: &Store,
    format: Format,
    (file, variant): (&Path, Option<&str>),
    options: &Options,
    labels: &Labels,
    study: Option<&str>,
) -> Result<ImportedRun, PipelineError> {
    let id = store
        .begin_run(&NewRun {
            scenario: options.name.clone(),
            scenario_file: Some(file.display().to_string()),
            variant: variant.map(str::to_string),
            study: study.map(str::to_string),
            load: Some(format!("imported ({})", format.tool())),
            labels: labels.clone(),
            ..NewRun::default()
        })
        .map_err(PipelineError::aborted)?;
    let dir = store.run_dir(&id);
    let imported = match import_file(format, file, &dir, options) {
        Ok(i) => i,
        Err(e) => {
            let _ = store.fail_run(&id);
            let _ = std::fs::remove_dir_all(&dir);
            return Err(match e {
                ImportError::Write { .. } => PipelineError::aborted(e),
                _ => PipelineError::bad_input(e),
            });
        }
    };
    let record = StoredRecord::open(&dir).map_err(PipelineError::aborted)?;
    let mut result = summarize(&record).map_err(PipelineError::aborted)?;
    result.thresholds =
        loadlab_analysis::thresholds::evaluate_exprs(&record.meta.thresholds, &result);
    store
        .finish_run(&id, &result)
        .map_err(PipelineError::aborted)?;
    Ok(ImportedRun {
        id,
        variant: variant.map(str::to_string),
        result,
        malformed: imported.malformed.describe(&file.display().to_string()),
    })
}

/// Indexes the study the imported runs will belong to; returns its id.
pub fn begin_study(store: &Store, name: &str, labels: &Labels) -> Result<String, PipelineError> {
    let (id, _) = store
        .begin_study(StudyKind::Study, name, None, None)
        .map_err(PipelineError::aborted)?;
    store
        .set_labels(&id, labels)
        .map_err(PipelineError::aborted)?;
    Ok(id)
}

/// Assembles and stores the study of `runs` (per variant the median, its 95% CI, the CV and
/// the outlier runs, and the variants compared); the study and where it is stored.
pub fn store_study(
    store: &Store,
    id: &str,
    name: &str,
    runs: &[ImportedRun],
) -> Result<(StudyResult, PathBuf), PipelineError> {
    let (variants, made) = made_runs(name, runs);
    let plan = placeholder_plan(name, &variants, &made)?;
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
        .map_err(|e| PipelineError::aborted(format!("{}: {e}", path.display())))?;
    store
        .update_study(id, &path, made.len(), made.len())
        .and_then(|_| store.finish_study(id, &path, false))
        .map_err(PipelineError::aborted)?;
    Ok((study, path))
}

/// The variants in the order they came, and each run as the study's repetition of its variant.
fn made_runs(name: &str, runs: &[ImportedRun]) -> (Vec<String>, Vec<MadeRun>) {
    let mut variants: Vec<String> = Vec::new();
    let mut reps: Vec<usize> = Vec::new();
    let mut made = Vec::new();
    for r in runs {
        let v = r.variant.clone().unwrap_or_else(|| name.to_string());
        let k = match variants.iter().position(|x| *x == v) {
            Some(k) => k,
            None => {
                variants.push(v.clone());
                reps.push(0);
                variants.len() - 1
            }
        };
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
    (variants, made)
}

/// The plan a study of imported runs would have had: their variants, nothing to run.
fn placeholder_plan(
    name: &str,
    variants: &[String],
    made: &[MadeRun],
) -> Result<StudyPlan, PipelineError> {
    let yaml = format!(
        "name: {}\ntarget: http://imported.invalid\nload: {{ model: closed, vus: 1, duration: 1s }}\nflows:\n  - {{ name: imported, steps: [ {{ get: / }} ] }}\n",
        serde_json::to_string(name).expect("a string serializes")
    );
    let scenario = Scenario::parse(&yaml, "imported")?;
    let repeat = variants
        .iter()
        .map(|v| made.iter().filter(|m| m.entry.variant == *v).count())
        .max()
        .unwrap_or(1);
    Ok(StudyPlan {
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
        repeat,
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
    })
}
