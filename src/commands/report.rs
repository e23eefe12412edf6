//! `loadlab report`: renders stored results (run, study, capacity, comparison) as HTML/Markdown.

use crate::cli::ReportArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::{CapacityResult, CAPACITY_SCHEMA};
use loadlab_analysis::compare::{CompareResult, COMPARE_SCHEMA};
use loadlab_analysis::study::{StudyResult, STUDY_SCHEMA};
use loadlab_metrics::RunResult;
use loadlab_report::{ReportDoc, Runs};
use std::path::{Path, PathBuf};

/// Name of the chart directory beside `report.md`.
pub const CHARTS_DIR: &str = "report-charts";

/// File names the store gives its results: their reports are `report.html`/`report.md`.
const STORE_NAMES: [&str; 4] = ["run.json", "study.json", "capacity.json", "compare.json"];

/// Where a report goes: beside its input (or in the `-o` directory), named `report.*` for a
/// result in the store's layout and after the input otherwise (`result.json` →
/// `result.html`, `result.md`), so two results in one directory never overwrite each
/// other's report.
struct Destination {
    dir: PathBuf,
    stem: String,
}

impl Destination {
    fn of(input: &Path, out_dir: Option<&Path>) -> Self {
        let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let stem = if STORE_NAMES.contains(&name) {
            "report".to_string()
        } else {
            input
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("report")
                .to_string()
        };
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
        Self { dir, stem }
    }

    fn file(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("{}.{ext}", self.stem))
    }
}

/// `-o` names a directory when it exists as one, ends with a separator or has no extension.
fn is_dir_arg(p: &Path) -> bool {
    p.is_dir()
        || p.as_os_str()
            .to_str()
            .is_some_and(|s| s.ends_with(std::path::MAIN_SEPARATOR) || s.ends_with('/'))
        || p.extension().is_none()
}

pub fn execute(args: ReportArgs) -> Result<Outcome, CliError> {
    let input = resolve_input(&args.input, args.results.as_deref())?;
    let doc = load_doc(&input)?;
    let out_dir = args.output.as_deref().filter(|p| is_dir_arg(p));
    let out_file = args.output.as_deref().filter(|p| !is_dir_arg(p));
    let format = match (&args.format, out_file) {
        (Some(f), _) => Some(f.to_ascii_lowercase()),
        (None, Some(p)) => Some(
            match p.extension().and_then(|e| e.to_str()).unwrap_or("html") {
                "md" | "markdown" => "md".to_string(),
                "json" => "json".to_string(),
                _ => "html".to_string(),
            },
        ),
        (None, None) => None,
    };
    let dest = Destination::of(&input, out_dir);
    let target = |ext: &str| {
        out_file
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dest.file(ext))
    };
    let written: Vec<PathBuf> = match format.as_deref() {
        None => {
            let (html, md) = write_both_named(&doc, &dest.dir, &dest.stem)?;
            vec![html, md]
        }
        Some("html") => {
            let path = target("html");
            write_file(&path, loadlab_report::render_html(&doc).as_bytes())?;
            vec![path]
        }
        Some("md" | "markdown") => {
            let path = target("md");
            write_markdown(&doc, &path)?;
            vec![path]
        }
        Some("json") => {
            let text = serde_json::to_string_pretty(&doc).expect("a report serializes") + "\n";
            match (out_file, out_dir) {
                (None, None) => {
                    print!("{text}");
                    return Ok(Outcome::Ok);
                }
                _ => {
                    // Never `<stem>.json`: that would be the input itself.
                    let path = match out_file {
                        Some(p) => p.to_path_buf(),
                        None if dest.stem == "report" => dest.dir.join("report.json"),
                        None => dest.dir.join(format!("{}.report.json", dest.stem)),
                    };
                    write_file(&path, text.as_bytes())?;
                    vec![path]
                }
            }
        }
        Some(other) => {
            return Err(CliError::bad_input(format!(
                "--format: unknown format `{other}` (use html, md or json)"
            )))
        }
    };
    if !args.quiet {
        let mut label = "report:";
        for p in written {
            println!("{label} {}", shown(&p).display());
            label = "       ";
        }
    }
    Ok(Outcome::Ok)
}

/// A written file's path as the user can open it from anywhere: absolute when possible.
fn shown(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A file path as given, else an id in the run store (`last` = the latest study).
fn resolve_input(input: &str, results: Option<&Path>) -> Result<PathBuf, CliError> {
    let p = PathBuf::from(input);
    if p.is_file() {
        return Ok(p);
    }
    if p.is_dir() {
        for name in ["study.json", "capacity.json", "run.json", "compare.json"] {
            if p.join(name).is_file() {
                return Ok(p.join(name));
            }
        }
    }
    let dir = loadlab_store::resolve_dir(results);
    if !dir.join("loadlab.db").is_file() {
        return Err(CliError::bad_input(format!(
            "`{input}` is neither a file nor an id in the run store {} (there is none yet)",
            dir.display()
        )));
    }
    let store = super::store::open(&dir)?;
    if let Ok(s) = store.study(input) {
        return s.path.ok_or_else(|| {
            CliError::bad_input(format!(
                "{} `{}` has no result file ({})",
                s.kind, s.id, s.status
            ))
        });
    }
    match store.run(input) {
        Ok(r) => r.path.ok_or_else(|| {
            CliError::bad_input(format!("run `{}` has no result file ({})", r.id, r.status))
        }),
        Err(e) => Err(CliError::bad_input(format!(
            "`{input}` is neither a file nor a study or run id: {e}"
        ))),
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, CliError> {
    serde_json::from_str(text)
        .map_err(|e| CliError::bad_input(format!("{}: not a valid result: {e}", path.display())))
}

/// The runs of a study or capacity search, read from the store layout
/// (`<results>/studies/<id>/study.json` → `<results>/runs/<run>/run.json`).
fn load_runs<'a>(path: &Path, ids: impl Iterator<Item = &'a String>) -> Runs {
    let root = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut runs = Runs::new();
    for id in ids {
        let file = root.join("runs").join(id).join("run.json");
        if let Some(r) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| RunResult::from_json(&t).ok())
        {
            runs.insert(id.clone(), r);
        }
    }
    runs
}

/// Reads a result file and builds its report model, by its `schema` field.
pub fn load_doc(path: &Path) -> Result<ReportDoc, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", path.display())))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::bad_input(format!("{}: not JSON: {e}", path.display())))?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    match schema {
        s if s == loadlab_metrics::result::SCHEMA || s == loadlab_metrics::result::SCHEMA_V1 => {
            let run = RunResult::from_json(&text).map_err(|e| {
                CliError::bad_input(format!("{}: not a valid result: {e}", path.display()))
            })?;
            Ok(loadlab_report::run_report(&run, run.load.planned.as_ref()))
        }
        s if s == STUDY_SCHEMA => {
            let study: StudyResult = read_json(path, &text)?;
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
            Ok(loadlab_report::study_report(&study, &runs, plan.as_ref()))
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
        "" => Err(CliError::bad_input(format!(
            "{}: no `schema` field: not a loadlab result",
            path.display()
        ))),
        other => Err(CliError::bad_input(format!(
            "{}: unknown schema `{other}` (reports read {}, {STUDY_SCHEMA}, {CAPACITY_SCHEMA} and {COMPARE_SCHEMA})",
            path.display(),
            loadlab_metrics::result::SCHEMA
        ))),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::bad_input(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, bytes)
        .map_err(|e| CliError::bad_input(format!("cannot write {}: {e}", path.display())))
}

/// Writes `path` (Markdown) and its charts in `<dir>/<stem>-charts/`.
fn write_markdown(doc: &ReportDoc, path: &Path) -> Result<(), CliError> {
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
fn write_both_named(
    doc: &ReportDoc,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf), CliError> {
    let html = dir.join(format!("{stem}.html"));
    write_file(&html, loadlab_report::render_html(doc).as_bytes())?;
    let md = dir.join(format!("{stem}.md"));
    write_markdown(doc, &md)?;
    Ok((html, md))
}

/// Writes `report.html` and `report.md` (+ charts) into `dir`; returns both paths.
pub fn write_both(doc: &ReportDoc, dir: &Path) -> Result<(PathBuf, PathBuf), CliError> {
    write_both_named(doc, dir, "report")
}

/// Writes `report.html` and `report.md` beside the given result file (a run JSON,
/// `study.json`, `capacity.json` or comparison JSON); returns the HTML path.
/// Called by `study`, `capacity` and `compare` when they finish.
pub fn write_report_for(result: &Path, quiet: bool) -> Result<Option<PathBuf>, CliError> {
    let doc = load_doc(result)?;
    let dir = result.parent().unwrap_or(Path::new("."));
    let (html, md) = write_both(&doc, dir)?;
    if !quiet {
        println!("report: {}", html.display());
        println!("        {}", md.display());
    }
    Ok(Some(html))
}
