//! `loadlab runs`: the run store's index (runs, segments, merges, partial runs);
//! `loadlab runs show ID|last`: one stored run, study or capacity search;
//! `loadlab runs studies`: studies and capacity searches, resumable ones marked.

use crate::cli::{RunsArgs, RunsCommand};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::CapacityResult;
use loadlab_analysis::study::StudyResult;
use loadlab_report::Style;
use loadlab_store::{RunRecord, RunStatus, Store};
use std::io::{IsTerminal, Write};

pub fn execute(args: RunsArgs) -> Result<Outcome, CliError> {
    let dir = loadlab_store::resolve_dir(args.results.as_deref());
    if let Some(url) = super::remote_run::url_of(&dir)? {
        return super::remote_runs::execute(&url, &args);
    }
    let store = super::store::open(&dir)?;
    let mut out = std::io::stdout().lock();
    match args.command {
        None => list(&store, args.limit, &mut out)?,
        Some(RunsCommand::Show { id }) => show(&store, &id, &mut out)?,
        Some(RunsCommand::Studies) => studies(&store, args.limit, &mut out)?,
    }
    let _ = out.flush();
    Ok(Outcome::Ok)
}

fn list(store: &Store, limit: usize, out: &mut impl Write) -> Result<(), CliError> {
    let (runs, total) = store.runs(limit).map_err(CliError::bad_input)?;
    if runs.is_empty() {
        let _ = writeln!(out, "no runs stored in {}", store.dir().display());
        return Ok(());
    }
    let _ = writeln!(
        out,
        "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  status",
        "id", "time", "scenario", "variant", "load", "requests", "req/s", "p95", "errors", "valid"
    );
    for r in &runs {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  {}",
            r.id,
            r.started_at.replace('T', " ").trim_end_matches('Z'),
            truncate(&r.scenario, 18),
            truncate(r.variant.as_deref().unwrap_or("-"), 12),
            opt(r.load.clone()),
            opt(r.requests.map(|n| n.to_string())),
            opt(r.rate.map(|v| format!("{v:.1}"))),
            opt(r.p95_ms.map(loadlab_report::format_ms)),
            opt(r.error_rate.map(|e| format!("{:.2}%", e * 100.0))),
            opt(r.valid.map(|v| if v { "yes" } else { "no" }.to_string())),
            status(r)
        );
    }
    if total > runs.len() {
        let _ = writeln!(
            out,
            "… {} older run(s) not shown (show more with -n {total})",
            total - runs.len()
        );
    }
    Ok(())
}

/// `done`, `interrupted (partial)`, `completed, not stored`, `segment 1/4`, `merged`…
fn status(r: &RunRecord) -> String {
    let mut s = match (r.status, r.partial, r.path.is_some()) {
        (RunStatus::NotStored, false, _) => "completed, not stored".to_string(),
        (RunStatus::NotStored, true, _) => "interrupted, not stored".to_string(),
        (RunStatus::Interrupted, _, true) => "interrupted (partial result)".to_string(),
        (RunStatus::Interrupted, _, false) => "interrupted".to_string(),
        (other, true, _) => format!("{other} (partial)"),
        (other, false, _) => other.to_string(),
    };
    if let Some(seg) = &r.segment {
        s.push_str(&format!(", segment {seg}"));
    }
    if r.merged_from.is_some() {
        s.push_str(", merged");
    }
    s
}

fn show(store: &Store, id: &str, out: &mut impl Write) -> Result<(), CliError> {
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    // A study or capacity search id first (`s…`, `c…`), then a run id or `last`.
    if id != "last" {
        if let Ok(s) = store.study(id) {
            let path = s.path.clone().ok_or_else(|| {
                CliError::bad_input(format!(
                    "{} {} has no result yet ({})",
                    s.kind, s.id, s.status
                ))
            })?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::bad_input(format!("{}: {e}", path.display())))?;
            let _ = writeln!(
                out,
                "{} {} ({}), stored in {}",
                s.kind,
                s.id,
                s.status,
                path.display()
            );
            if s.kind == "capacity" {
                let c: CapacityResult = serde_json::from_str(&text)
                    .map_err(|e| CliError::bad_input(format!("{}: {e}", path.display())))?;
                for step in &c.steps {
                    let _ = writeln!(
                        out,
                        "  {:>8}/s [{:<7}] {}{}",
                        super::measure::fmt_num(step.rate),
                        step.phase,
                        if step.passed { "pass" } else { "FAIL" },
                        if step.retried { " (re-run)" } else { "" }
                    );
                }
                for w in &c.warnings {
                    let _ = writeln!(out, "  {w}");
                }
            } else {
                let study: StudyResult = serde_json::from_str(&text)
                    .map_err(|e| CliError::bad_input(format!("{}: {e}", path.display())))?;
                let _ = super::study::print_study(out, &study);
            }
            return Ok(());
        }
    }
    let (rec, result) = store.load_run(id).map_err(CliError::bad_input)?;
    let _ = writeln!(
        out,
        "run {} ({}{}{}), stored in {}",
        rec.id,
        status(&rec),
        rec.variant
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        rec.study
            .map(|s| format!(", study {s}"))
            .unwrap_or_default(),
        store.run_dir(&rec.id).display()
    );
    let _ = loadlab_report::render_summary(&result, out, style);
    Ok(())
}

fn studies(store: &Store, limit: usize, out: &mut impl Write) -> Result<(), CliError> {
    let studies = store.studies(limit).map_err(CliError::bad_input)?;
    if studies.is_empty() {
        let _ = writeln!(out, "no studies stored in {}", store.dir().display());
    }
    for s in studies {
        let progress = match (s.runs_done, s.runs_planned) {
            (Some(d), Some(p)) if p > 0 => format!("{d}/{p} runs"),
            (Some(d), _) => format!("{d} steps"),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<24} {:<9} {:<19} {:<20} {:<12} {:<12} {}",
            s.id,
            s.kind,
            s.started_at.replace('T', " ").trim_end_matches('Z'),
            truncate(&s.name, 20),
            if s.status == "interrupted" {
                "interrupted (resumable)".to_string()
            } else {
                s.status.clone()
            },
            progress,
            s.path.map(|p| p.display().to_string()).unwrap_or_default()
        );
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}
