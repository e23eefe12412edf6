//! The environment section of a set of runs (a study or a capacity search).

use crate::doc::{Block, Level, Section, Verdict};
use crate::words::{environment_facts, generator_words};
use loadlab_metrics::RunResult;

/// Environment of a set of runs: the machine, the targets, the generator's worst CPU use.
pub fn multi_environment(every: &[&RunResult]) -> Section {
    let mut sec = Section::new("environment", "Environment");
    let mut facts = Vec::new();
    let mut targets: Vec<&str> = every.iter().filter_map(|r| r.target.as_deref()).collect();
    targets.sort();
    targets.dedup();
    facts.push((
        "Target".to_string(),
        if targets.is_empty() {
            "not recorded".to_string()
        } else {
            targets
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    ));
    match every.iter().find_map(|r| r.environment.as_ref()) {
        Some(e) => facts.extend(environment_facts(e)),
        None => facts.push(("Machine".to_string(), "not recorded".to_string())),
    }
    if let Some(worst) = every
        .iter()
        .max_by(|a, b| a.generator.cpu_percent.total_cmp(&b.generator.cpu_percent))
    {
        facts.push((
            "Load generator (busiest run)".to_string(),
            generator_words(worst),
        ));
    }
    let saturated = every.iter().filter(|r| r.generator.saturated).count();
    facts.push((
        "Generator saturated".to_string(),
        format!("in {saturated} of {} runs", every.len()),
    ));
    let contended = every
        .iter()
        .filter(|r| r.validity.has(loadlab_metrics::InvalidKind::HostContended))
        .count();
    if contended > 0 || every.iter().any(|r| r.resources.is_some()) {
        facts.push((
            "Host contended by other processes".to_string(),
            format!("in {contended} of {} runs", every.len()),
        ));
    }
    sec.push(Block::Facts(facts));
    let mut notes = Vec::new();
    for r in every.iter().filter(|r| !r.valid && r.validity_judged()) {
        notes.push(Verdict::new(
            Level::Fail,
            format!(
                "Run started {} is invalid: {}.",
                r.started_at,
                r.invalid_messages().join("; ")
            ),
        ));
    }
    if targets
        .iter()
        .any(|t| t.contains("127.0.0.1") || t.contains("localhost"))
    {
        notes.push(Verdict::new(
            Level::Info,
            "The target runs on the same machine as the generator: they share its CPUs.",
        ));
    }
    if !notes.is_empty() {
        sec.push(Block::Notes(notes));
    }
    sec
}
