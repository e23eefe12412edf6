//! The environment section of a run: the target, the machine and the generator's health.

use crate::doc::{Block, Level, Section, Verdict};
use crate::words::*;
use loadlab_metrics::result::RunResult;

pub(super) fn environment(r: &RunResult) -> Section {
    let mut s = Section::new("environment", "Environment");
    let mut facts = Vec::new();
    facts.push((
        "Target".to_string(),
        r.target
            .as_deref()
            .map(|t| format!("`{t}`"))
            .unwrap_or_else(|| "not recorded".to_string()),
    ));
    if let Some(protocol) = protocol_words(r) {
        facts.push(("Protocol".to_string(), protocol));
    }
    facts.extend(
        request_wait_facts(r)
            .into_iter()
            .map(|(label, sentence)| (label.to_string(), sentence)),
    );
    facts.extend(crate::data_words::data_set_facts(r));
    match &r.environment {
        Some(e) => facts.extend(environment_facts(e)),
        None => facts.push((
            "Machine".to_string(),
            match imported_tool(r) {
                Some(tool) => format!("not recorded (measured by {tool}, imported)"),
                None => "not recorded (result written by an older loadlab)".to_string(),
            },
        )),
    }
    facts.push(("Load generator".to_string(), generator_words(r)));
    if let Some(others) = other_processes_words(r) {
        facts.push(("Other processes".to_string(), others));
    }
    s.push(Block::Facts(facts));
    let mut notes = Vec::new();
    if r.generator.saturated || !r.usable() {
        for reason in r.invalid_messages() {
            notes.push(Verdict::new(Level::Fail, format!("Invalid: {reason}.")));
        }
    }
    for shared in r
        .verdicts
        .iter()
        .filter(|v| v.kind == loadlab_metrics::TargetVerdictKind::SharesHostWithTarget)
    {
        notes.push(Verdict::new(
            Level::Warn,
            format!("{}.", capitalize(shared.message.trim_end_matches('.'))),
        ));
    }
    if !notes.is_empty() {
        s.push(Block::Notes(notes));
    }
    s
}
