//! Reports of stored results: reading a result file (run, study, capacity search or
//! comparison) into its report model, and writing the HTML and Markdown (with its charts)
//! beside it or where the user asked. Also the atomic writes every result file goes through.

use crate::PipelineError;
use loadlab_analysis::capacity::{CapacityResult, CAPACITY_SCHEMA};
use loadlab_analysis::compare::{CompareResult, COMPARE_SCHEMA};
use loadlab_analysis::study::{StudyResult, STUDY_SCHEMA};
use loadlab_metrics::RunResult;
use loadlab_report::{ReportDoc, Runs};
use loadlab_store::{ResultFile, Store};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the chart directory beside `report.md`.
pub const CHARTS_DIR: &str = "report-charts";

/// Writes a result file through a temporary file and a rename.
pub(crate) fn write_result(path: &Path, text: &str) -> Result<(), String> {
    loadlab_store::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the `--json` copy of a result, when one was asked for.
pub(crate) fn write_json_copy(json: Option<&Path>, text: &str) -> Result<(), String> {
    match json {
        Some(json) => loadlab_store::write_atomic(json, text.as_bytes())
            .map_err(|e| format!("--json {}: {e}", json.display())),
        None => Ok(()),
    }
}

/// The files a CI asks of a command: `--json`, `--junit`, `--summary`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CiOutputs<'a> {
    pub json: Option<&'a Path>,
    pub junit: Option<&'a Path>,
    pub summary: Option<&'a Path>,
}

/// A run's CI files: JUnit (a case per threshold) and its Markdown summary.
pub fn write_run_ci_outputs(
    result: &RunResult,
    junit: Option<&Path>,
    summary: Option<&Path>,
) -> Result<(), PipelineError> {
    if let Some(path) = junit {
        let cases = loadlab_report::junit::threshold_cases(result);
        let xml = loadlab_report::junit::junit_xml(&result.name, "loadlab.run", &cases);
        write_junit(path, &xml)?;
    }
    if let Some(path) = summary {
        let md = loadlab_report::gate_summary::run_markdown(result);
        write_summary(Some(path), false, &md)?;
    }
    Ok(())
}

/// Environment variable GitHub Actions sets to the step summary file.
const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// Writes a Markdown summary to `--summary PATH`; without the flag, and when `step_summary`
/// is set, appends it to `$GITHUB_STEP_SUMMARY` if that is set (a CI step summary collects
/// every step's).
pub fn write_summary(
    flag: Option<&Path>,
    step_summary: bool,
    markdown: &str,
) -> Result<(), PipelineError> {
    let (path, append) = match flag {
        Some(p) => (p.to_path_buf(), false),
        None => match std::env::var_os(STEP_SUMMARY_ENV) {
            Some(p) if step_summary && !p.is_empty() => (PathBuf::from(p), true),
            _ => return Ok(()),
        },
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown.as_bytes()));
    written.map_err(|e| {
        PipelineError::bad_input(format!("--summary: cannot write {}: {e}", path.display()))
    })
}

/// Writes a record's text to the `--json` path.
pub fn write_json_file(path: &Path, text: &str) -> Result<(), PipelineError> {
    std::fs::write(path, text).map_err(|e| {
        PipelineError::bad_input(format!("--json: cannot write {}: {e}", path.display()))
    })
}

/// Writes a JUnit XML report to the `--junit` path.
pub fn write_junit(path: &Path, xml: &str) -> Result<(), PipelineError> {
    std::fs::write(path, xml).map_err(|e| {
        PipelineError::bad_input(format!("--junit: cannot write {}: {e}", path.display()))
    })
}

/// A file path as given, a directory holding one of the store's result files, else an id in
/// the run store (`last` = the latest study).
pub fn resolve_input(
    input: &str,
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<PathBuf, PipelineError> {
    let p = PathBuf::from(input);
    if p.is_file() {
        return Ok(p);
    }
    if let Some(file) = p.is_dir().then(|| ResultFile::in_dir(&p)).flatten() {
        return Ok(file);
    }
    let dir = loadlab_store::resolve_dir(results);
    if !Store::exists_in(&dir) {
        return Err(PipelineError::bad_input(format!(
            "`{input}` is neither a file nor an id in the run store {} (there is none yet)",
            dir.display()
        )));
    }
    let store = crate::store::open(&dir, warn)?;
    if let Ok(s) = store.study(input) {
        for run in store.study_runs(&s.id)? {
            crate::store::rebuild_if_missing(&store, &run, warn);
        }
        return s.path.ok_or_else(|| {
            PipelineError::bad_input(format!(
                "{} `{}` has no result file ({})",
                s.kind, s.id, s.status
            ))
        });
    }
    match store.run(input) {
        Ok(r) => {
            crate::store::rebuild_if_missing(&store, &r, warn);
            r.path.ok_or_else(|| {
                PipelineError::bad_input(format!(
                    "run `{}` has no result file ({})",
                    r.id, r.status
                ))
            })
        }
        Err(e) => Err(PipelineError::bad_input(format!(
            "`{input}` is neither a file nor a study or run id: {e}"
        ))),
    }
}

/// A stored study (`study.json`).
pub fn read_study(path: &Path) -> Result<StudyResult, PipelineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PipelineError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        PipelineError::bad_input(format!("{}: not a loadlab study: {e}", path.display()))
    })
}

/// A stored run's summary (`run.json`).
pub fn read_run(path: &Path) -> Result<RunResult, PipelineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PipelineError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    RunResult::from_json(&text).map_err(|e| {
        PipelineError::bad_input(format!(
            "{}: not a valid result: {e}{}",
            path.display(),
            rebuild_hint(path)
        ))
    })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, PipelineError> {
    serde_json::from_str(text).map_err(|e| {
        PipelineError::bad_input(format!(
            "{}: not a valid result: {e}{}",
            path.display(),
            rebuild_hint(path)
        ))
    })
}

/// A damaged `run.json` beside a whole record can be derived again (the next command that
/// reads it does so once the file is gone).
fn rebuild_hint(path: &Path) -> &'static str {
    let beside_record = path.file_name() == Some(ResultFile::Run.file_name().as_ref())
        && path.parent().is_some_and(loadlab_record::is_record);
    if beside_record {
        "\n  hint: the run's record beside it is whole: delete this file and the next loadlab command rebuilds it from the record"
    } else {
        ""
    }
}

/// The runs of a study or capacity search, read from the store layout beside its file.
fn load_runs<'a>(path: &Path, ids: impl Iterator<Item = &'a String>) -> Runs {
    let results = loadlab_store::results_dir_of(path);
    let mut runs = Runs::new();
    for id in ids {
        if let Some(r) = std::fs::read_to_string(loadlab_store::run_file_in(&results, id))
            .ok()
            .and_then(|t| RunResult::from_json(&t).ok())
        {
            runs.insert(id.clone(), r);
        }
    }
    runs
}

/// Reads a result file and builds its report model, by its `schema` field.
pub fn load_doc(path: &Path) -> Result<ReportDoc, PipelineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PipelineError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        PipelineError::bad_input(format!(
            "{}: not JSON: {e}{}",
            path.display(),
            rebuild_hint(path)
        ))
    })?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    match schema {
        s if s == loadlab_metrics::result::SCHEMA || s == loadlab_metrics::result::SCHEMA_V1 => {
            let run = RunResult::from_json(&text).map_err(|e| {
                PipelineError::bad_input(format!(
                    "{}: not a valid result: {e}{}",
                    path.display(),
                    rebuild_hint(path)
                ))
            })?;
            Ok(loadlab_report::run_report(&run, run.load.planned.as_ref()))
        }
        s if s == STUDY_SCHEMA => {
            let study: StudyResult = read_json(path, &text)?;
            Ok(study_doc(path, &study))
        }
        s if s == CAPACITY_SCHEMA => {
            let cap: CapacityResult = read_json(path, &text)?;
            let runs = load_runs(path, cap.steps.iter().map(|s| &s.run));
            Ok(loadlab_report::capacity_report(&cap, &runs))
        }
        s if s == COMPARE_SCHEMA => {
            let cmp: CompareResult = read_json(path, &text)?;
            Ok(loadlab_report::compare_report(&cmp))
        }
        "" => Err(PipelineError::bad_input(format!(
            "{}: no `schema` field: not a loadlab result",
            path.display()
        ))),
        other => Err(PipelineError::bad_input(format!(
            "{}: unknown schema `{other}` (reports read {}, {STUDY_SCHEMA}, {CAPACITY_SCHEMA} and {COMPARE_SCHEMA})",
            path.display(),
            loadlab_metrics::result::SCHEMA
        ))),
    }
}

/// A study's report, with its runs read from the store beside it.
fn study_doc(path: &Path, study: &StudyResult) -> ReportDoc {
    let runs = load_runs(
        path,
        study
            .variants
            .iter()
            .flat_map(|v| v.runs.iter().chain(&v.excluded_runs)),
    );
    // The planned load as executed, from the study's first run (one variant).
    let plan = if study.variants.len() == 1 {
        study
            .variants
            .first()
            .and_then(|v| v.runs.first())
            .and_then(|id| runs.get(id))
            .and_then(|r| r.load.planned.clone())
    } else {
        None
    };
    loadlab_report::study_report(study, &runs, plan.as_ref())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), PipelineError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            PipelineError::bad_input(format!("cannot create {}: {e}", dir.display()))
        })?;
    }
    std::fs::write(path, bytes)
        .map_err(|e| PipelineError::bad_input(format!("cannot write {}: {e}", path.display())))
}

/// Writes `path` (HTML).
pub fn write_html(doc: &ReportDoc, path: &Path) -> Result<(), PipelineError> {
    write_file(path, loadlab_report::render_html(doc).as_bytes())
}

/// Writes `path` (the report model as JSON).
pub fn write_doc_json(doc: &ReportDoc, path: &Path) -> Result<(), PipelineError> {
    let text = serde_json::to_string_pretty(doc).expect("a report serializes") + "\n";
    write_file(path, text.as_bytes())
}

/// Writes `path` (Markdown) and its charts in `<dir>/<stem>-charts/` (`report-charts/` for
/// `report.md`).
pub fn write_markdown(doc: &ReportDoc, path: &Path) -> Result<(), PipelineError> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("report");
    let charts_name = if stem == "report" {
        CHARTS_DIR.to_string()
    } else {
        format!("{stem}-charts")
    };
    let md = loadlab_report::render_markdown(doc, &charts_name);
    let dir = path.parent().unwrap_or(Path::new("."));
    let charts = dir.join(&charts_name);
    for (file, svg) in &md.charts {
        write_file(&charts.join(file), svg.as_bytes())?;
    }
    write_file(path, md.text.as_bytes())
}

/// Writes `<stem>.html` and `<stem>.md` (+ charts) into `dir`; returns both paths.
pub fn write_both(
    doc: &ReportDoc,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf), PipelineError> {
    let html = dir.join(format!("{stem}.html"));
    write_html(doc, &html)?;
    let md = dir.join(format!("{stem}.md"));
    write_markdown(doc, &md)?;
    Ok((html, md))
}

/// Writes the report beside a result file, as [`write_report_beside`]; a failure is a warning
/// handed to `warn` (the result itself is already stored). The HTML's path when written.
pub fn report_beside(result: &Path, warn: &mut dyn FnMut(&str)) -> Option<PathBuf> {
    match write_report_beside(result) {
        Ok((html, _)) => Some(html),
        Err(e) => {
            warn(&format!("no report written: {e}"));
            None
        }
    }
}

/// Writes `report.html` and `report.md` beside a result file (a run JSON, `study.json`,
/// `capacity.json` or comparison JSON); returns both paths. `study`, `capacity` and
/// `compare` call it when they finish.
pub fn write_report_beside(result: &Path) -> Result<(PathBuf, PathBuf), PipelineError> {
    let doc = load_doc(result)?;
    write_both(&doc, result.parent().unwrap_or(Path::new(".")), "report")
}

/// The HTML report [`write_report_beside`] writes for a result file.
pub fn html_beside(result: &Path) -> PathBuf {
    result.with_file_name("report.html")
}

/// What `loadlab report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Html,
    Markdown,
    /// The report model as JSON.
    Json,
}

impl ReportFormat {
    pub fn parse(text: &str) -> Option<ReportFormat> {
        match text.to_ascii_lowercase().as_str() {
            "html" => Some(ReportFormat::Html),
            "md" | "markdown" => Some(ReportFormat::Markdown),
            "json" => Some(ReportFormat::Json),
            _ => None,
        }
    }

    /// The format a file name asks for (`.html`, `.md`, `.json`): `-o r.txt` wrote HTML into
    /// a `.txt` file, so another extension is refused unless `--format` says what to write.
    fn of_file(path: &Path) -> Result<ReportFormat, PipelineError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("html");
        match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" => Ok(ReportFormat::Html),
            "md" | "markdown" => Ok(ReportFormat::Markdown),
            "json" => Ok(ReportFormat::Json),
            _ => Err(PipelineError::bad_input(format!(
                "-o {}: `.{ext}` is not a report format: name the file .html, .md or .json, or give --format",
                path.display()
            ))),
        }
    }
}

/// Where a report goes: `-o` as a directory or a file, else beside its input.
pub struct ReportTarget {
    /// The directory the files go to.
    pub dir: PathBuf,
    /// `report` for a result in the store's layout, else the input's name (`result.json` →
    /// `result.html`), so two results in one directory never overwrite each other's report.
    pub stem: String,
    /// `-o FILE`: the one file to write.
    pub file: Option<PathBuf>,
    /// `-o DIR` was given.
    pub dir_given: bool,
}

impl ReportTarget {
    /// `-o` names a directory when it exists as one, ends with a separator or has no
    /// extension; a file otherwise.
    pub fn new(input: &Path, output: Option<&Path>) -> ReportTarget {
        let is_dir = |p: &Path| {
            p.is_dir()
                || p.as_os_str()
                    .to_str()
                    .is_some_and(|s| s.ends_with(std::path::MAIN_SEPARATOR) || s.ends_with('/'))
                || p.extension().is_none()
        };
        let stem = if ResultFile::of_path(input).is_some() {
            "report".to_string()
        } else {
            input
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("report")
                .to_string()
        };
        let out_dir = output.filter(|p| is_dir(p));
        let dir = match out_dir {
            Some(d) => d.to_path_buf(),
            None => input.parent().unwrap_or(Path::new("")).to_path_buf(),
        };
        // An explicit directory, so the printed paths say where the files are.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        ReportTarget {
            dir,
            stem,
            file: output.filter(|p| !is_dir(p)).map(Path::to_path_buf),
            dir_given: out_dir.is_some(),
        }
    }

    fn path(&self, ext: &str) -> PathBuf {
        self.file
            .clone()
            .unwrap_or_else(|| self.dir.join(format!("{}.{ext}", self.stem)))
    }
}

/// What `loadlab report` produced: files, or the JSON model for standard output.
pub enum Written {
    Files(Vec<PathBuf>),
    Stdout(String),
}

/// Writes the report of `input` as asked: both HTML and Markdown by default, or one format
/// (`format`, else the `-o FILE`'s extension). JSON without `-o` goes to standard output.
pub fn write_report(
    input: &Path,
    target: &ReportTarget,
    format: Option<ReportFormat>,
) -> Result<Written, PipelineError> {
    let doc = load_doc(input)?;
    let format = match format {
        Some(f) => Some(f),
        None => target
            .file
            .as_deref()
            .map(ReportFormat::of_file)
            .transpose()?,
    };
    let written = match format {
        None => {
            let (html, md) = write_both(&doc, &target.dir, &target.stem)?;
            vec![html, md]
        }
        Some(ReportFormat::Html) => {
            let path = target.path("html");
            write_html(&doc, &path)?;
            vec![path]
        }
        Some(ReportFormat::Markdown) => {
            let path = target.path("md");
            write_markdown(&doc, &path)?;
            vec![path]
        }
        Some(ReportFormat::Json) => {
            if target.file.is_none() && !target.dir_given {
                let text = serde_json::to_string_pretty(&doc).expect("a report serializes");
                return Ok(Written::Stdout(text + "\n"));
            }
            // Never `<stem>.json`: that would be the input itself.
            let path = match &target.file {
                Some(p) => p.clone(),
                None if target.stem == "report" => target.dir.join("report.json"),
                None => target.dir.join(format!("{}.report.json", target.stem)),
            };
            write_doc_json(&doc, &path)?;
            vec![path]
        }
    };
    Ok(Written::Files(written))
}
