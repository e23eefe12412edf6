//! `loadlab runs`: the run store's index; `loadlab runs show ID`: one stored run.

use crate::cli::{RunsArgs, RunsCommand};
use crate::exit::{CliError, Outcome};
use loadlab_report::Style;
use loadlab_store::Store;
use std::io::{IsTerminal, Write};

pub fn execute(args: RunsArgs) -> Result<Outcome, CliError> {
    let dir = loadlab_store::resolve_dir(args.results.as_deref());
    let store = Store::open(&dir).map_err(CliError::bad_input)?;
    let mut out = std::io::stdout().lock();
    match args.command {
        None => {
            let (runs, _total) = store.runs(args.limit).map_err(CliError::bad_input)?;
            if runs.is_empty() {
                let _ = writeln!(out, "no runs stored in {}", dir.display());
                return Ok(Outcome::Ok);
            }
            let _ = writeln!(
                out,
                "{:<24} {:<20} {:<18} {:<12} {:>9} {:>10} {:>9} {:>7} {:>7}  status",
                "id", "time", "scenario", "variant", "load", "req/s", "p95", "errors", "valid"
            );
            for r in runs {
                let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
                let _ = writeln!(
                    out,
                    "{:<24} {:<20} {:<18} {:<12} {:>9} {:>10} {:>9} {:>7} {:>7}  {}",
                    r.id,
                    r.started_at.replace('T', " ").trim_end_matches('Z'),
                    truncate(&r.scenario, 18),
                    truncate(r.variant.as_deref().unwrap_or("-"), 12),
                    opt(r.load),
                    opt(r.rate.map(|v| format!("{v:.1}"))),
                    opt(r.p95_ms.map(loadlab_report::format_ms)),
                    opt(r.error_rate.map(|e| format!("{:.2}%", e * 100.0))),
                    opt(r.valid.map(|v| if v { "yes" } else { "no" }.to_string())),
                    r.status
                );
            }
        }
        Some(RunsCommand::Show { id }) => {
            let (rec, result) = store.load_run(&id).map_err(CliError::bad_input)?;
            let style = Style {
                color: std::io::stdout().is_terminal(),
            };
            let _ = writeln!(
                out,
                "run {} ({}{}{}), stored in {}",
                rec.id,
                rec.status,
                rec.variant
                    .map(|v| format!(", variant {v}"))
                    .unwrap_or_default(),
                rec.study
                    .map(|s| format!(", study {s}"))
                    .unwrap_or_default(),
                store.run_dir(&rec.id).display()
            );
            let _ = loadlab_report::render_summary(&result, &mut out, style);
        }
        Some(RunsCommand::Studies) => {
            let studies = store.studies(args.limit).map_err(CliError::bad_input)?;
            if studies.is_empty() {
                let _ = writeln!(out, "no studies stored in {}", dir.display());
            }
            for s in studies {
                let _ = writeln!(
                    out,
                    "{:<24} {:<9} {:<20} {:<20} {:<12} {}",
                    s.id,
                    s.kind,
                    s.started_at.replace('T', " ").trim_end_matches('Z'),
                    truncate(&s.name, 20),
                    s.status,
                    s.path.map(|p| p.display().to_string()).unwrap_or_default()
                );
            }
        }
    }
    let _ = out.flush();
    Ok(Outcome::Ok)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}
