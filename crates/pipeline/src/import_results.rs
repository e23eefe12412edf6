//! Other load testers' result files become runs of the store (`loadlab import-results`): each
//! record rebuilt from the file's requests by `loadlab_results_import`, its summary derived
//! from the record as for any run, its thresholds evaluated; with `--study`, the runs become
//! a study assembled by the same function a running study calls. Nothing is run.
//! [`import_all`] is the whole command between its flags and what it prints.

use crate::{Outcome, PipelineError};
use loadlab_analysis::study::{RunEntry, StudyResult};
use loadlab_metrics::RunResult;
use loadlab_orchestrate::study::{assemble, MadeRun, PlannedVariant, StudyIds, StudyPlan};
use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, ImportError, Options};
use loadlab_scenario::study::Order;
use loadlab_scenario::Scenario;
use loadlab_store::{Labels, NewRun, Store, StudyKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `loadlab import-results` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// The files' format, as given (`k6-json`, ...).
    pub format: String,
    /// The result files, one run each; `VARIANT=FILE` puts a file in a variant.
    pub files: Vec<String>,
    /// The runs' name (default: the first file's name without extension).
    pub name: Option<String>,
    /// The variant of the files that name none.
    pub variant: Option<String>,
    /// The tool's version, when the file does not say it.
    pub tool_version: Option<String>,
    /// Threshold expressions to judge the runs by.
    pub thresholds: Vec<String>,
    /// Also make a study of the runs.
    pub study: bool,
    /// `--label` flags (LOADLAB_LABELS adds more).
    pub labels: Vec<(String, String)>,
    /// `--results`, else the store's default.
    pub results: Option<PathBuf>,
}

/// One file to import, and the variant it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub file: PathBuf,
    pub variant: Option<String>,
}

/// The study made of the imported runs: its id, itself, and where it is stored.
pub struct ImportedStudy {
    pub id: String,
    pub study: StudyResult,
    pub path: PathBuf,
}

/// What an import made, and how the command ends.
pub struct Imported {
    pub runs: Vec<ImportedRun>,
    pub study: Option<ImportedStudy>,
    /// The study's outcome when it is not ok, else failed when any run's threshold failed.
    pub outcome: Outcome,
}

/// Imports every file of `request` into the store, each told to `on_run` as it is stored,
/// and with `--study` makes the study of them. Everything the request gets wrong (format,
/// thresholds, files, labels, results location) is refused before any run is stored.
pub fn import_all(
    request: &ImportRequest,
    warn: &mut dyn FnMut(&str),
    on_run: &mut dyn FnMut(&Input, &ImportedRun),
) -> Result<Imported, PipelineError> {
    let format = Format::parse(&request.format).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
        // oha's JSON is its end-of-run summary; its CSV (1.16) lists requests, but with times
        // relative to an unstated start and no URL: only its database places each request.
        let hint = if request.format.starts_with("oha") {
            "; oha keeps each request with its time and URL only in its SQLite database: run oha with --db-url results.db and import that as oha-sqlite"
        } else {
            ""
        };
        PipelineError::bad_input(format!(
            "unknown result format `{}`: use one of {}{hint}",
            request.format,
            names.join(", ")
        ))
    })?;
    if let Some(why) = format.refusal() {
        return Err(PipelineError::bad_input(format!(
            "{}: {why}",
            request.format
        )));
    }
    for t in &request.thresholds {
        loadlab_scenario::Threshold::parse(t)
            .map_err(|e| PipelineError::bad_input(format!("--threshold `{t}`: {e}")))?;
    }
    let inputs = inputs_of(&request.files, request.variant.as_deref())?;
    let name = request
        .name
        .clone()
        .or_else(|| loadlab_results_import::run_name_in(format, &inputs[0].file))
        .unwrap_or_else(|| default_name(&inputs[0].file));
    let labels =
        loadlab_store::labels_from_env(&request.labels).map_err(PipelineError::bad_input)?;
    let store = crate::store::open_for_runs(request.results.as_deref(), warn)?;
    let study = if request.study {
        Some(begin_study(&store, &name, &labels)?)
    } else {
        None
    };
    let options = Options {
        name: name.clone(),
        tool_version: request.tool_version.clone(),
        thresholds: request.thresholds.clone(),
    };
    let mut runs = Vec::new();
    for input in &inputs {
        let source = (input.file.as_path(), input.variant.as_deref());
        let run = import_one(&store, format, source, &options, &labels, study.as_deref())?;
        on_run(input, &run);
        runs.push(run);
    }
    let thresholds_failed = runs
        .iter()
        .any(|r| r.result.thresholds.iter().any(|t| !t.ok));
    let mut outcome = if thresholds_failed {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    };
    let study = match study {
        Some(id) => {
            let (study, path) = store_study(&store, &id, &name, &runs)?;
            let of_study = crate::study::outcome_of_study(&study, false);
            if of_study != Outcome::Ok {
                outcome = of_study;
            }
            Some(ImportedStudy { id, study, path })
        }
        None => None,
    };
    Ok(Imported {
        runs,
        study,
        outcome,
    })
}

/// The files, each with its variant (`VARIANT=FILE`, else `variant`); each must exist.
pub fn inputs_of(files: &[String], variant: Option<&str>) -> Result<Vec<Input>, PipelineError> {
    files
        .iter()
        .map(|arg| {
            let (variant, file) = match arg.split_once('=') {
                Some((v, f)) if !Path::new(arg).exists() && !v.is_empty() => {
                    (Some(v.to_string()), PathBuf::from(f))
                }
                _ => (variant.map(str::to_string), PathBuf::from(arg)),
            };
            if !file.is_file() {
                return Err(PipelineError::bad_input(format!(
                    "{}: no such file (give the tool's result files; VARIANT=FILE names a variant)",
                    file.display()
                )));
            }
            Ok(Input { file, variant })
        })
        .collect()
}

/// `checkout-03.json` → `checkout-03`.
fn default_name(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".to_string())
}

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
            let _ = store.forget_run(&id);
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
    // The runs ended when the tool's last request did, not when they were imported.
    let ends = runs.iter().filter_map(|r| {
        let start = loadlab_metrics::result::parse_rfc3339(&r.result.started_at)?;
        Some(start + Duration::from_secs_f64(r.result.duration_s.max(0.0)))
    });
    if let Some(end) = ends.max() {
        study.finished_at = loadlab_metrics::result::rfc3339(end);
    }
    study.imported_from = imported_tools(runs);
    // The plan above is a placeholder: its load is no variant's, so no load factor is known.
    for d in &mut study.degradation {
        d.load_factor = None;
    }
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

/// The tools (with their versions when known) that measured the runs, each once.
fn imported_tools(runs: &[ImportedRun]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for words in runs
        .iter()
        .filter_map(|r| r.result.imported.as_ref())
        .map(|i| i.tool_words())
    {
        if !tools.contains(&words) {
            tools.push(words);
        }
    }
    tools
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_has_its_variant_and_must_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a.json");
        let odd = tmp.path().join("x=odd.json");
        std::fs::write(&a, "").unwrap();
        std::fs::write(&odd, "").unwrap();
        let s = |p: &Path| p.display().to_string();
        let files = vec![s(&a), format!("fast={}", s(&a)), s(&odd)];
        let inputs = inputs_of(&files, Some("base")).unwrap();
        let variants: Vec<Option<&str>> = inputs.iter().map(|i| i.variant.as_deref()).collect();
        // A file whose own name has `=` in it is that file, not a variant.
        assert_eq!(variants, [Some("base"), Some("fast"), Some("base")]);
        assert_eq!(inputs[1].file, a);
        assert_eq!(inputs[2].file, odd);
        assert_eq!(inputs_of(&files[..1], None).unwrap()[0].variant, None);
        let missing = inputs_of(&[s(&tmp.path().join("b.json"))], None).unwrap_err();
        assert!(missing.is_bad_input());
        assert!(missing.to_string().ends_with(
            "b.json: no such file (give the tool's result files; VARIANT=FILE names a variant)"
        ));
        assert!(inputs_of(&[format!("=x{}", s(&a))], None).is_err());
    }

    #[test]
    fn runs_are_named_after_their_first_file() {
        assert_eq!(
            default_name(Path::new("out/checkout-03.json")),
            "checkout-03"
        );
        assert_eq!(default_name(Path::new("/")), "imported");
    }

    #[test]
    fn a_request_the_import_cannot_use_is_refused_before_any_run() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("r.json");
        std::fs::write(&file, "").unwrap();
        let results = tmp.path().join("results");
        let request = |format: &str, thresholds: &[&str]| ImportRequest {
            format: format.to_string(),
            files: vec![file.display().to_string()],
            thresholds: thresholds.iter().map(|t| t.to_string()).collect(),
            results: Some(results.clone()),
            ..ImportRequest::default()
        };
        let refused = |r: ImportRequest| match import_all(&r, &mut |_| {}, &mut |_, _| {
            panic!("nothing is imported")
        }) {
            Err(e) => {
                assert!(e.is_bad_input(), "{e}");
                e.to_string()
            }
            Ok(_) => panic!("{} was imported", r.format),
        };
        assert!(
            refused(request("nope", &[])).starts_with("unknown result format `nope`: use one of ")
        );
        assert!(refused(request("k6-summary", &[])).starts_with("k6-summary: "));
        assert!(refused(request("k6-json", &["latency.p95 <"]))
            .starts_with("--threshold `latency.p95 <`: "));
        assert!(!results.exists(), "no store is made for a refused request");
    }
}
