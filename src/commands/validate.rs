//! `loadlab validate FILE`: every check of `run`, `study` and `capacity` on every section of
//! the file (variants and sweep points included), without sending a request; and
//! `loadlab schema`: the JSON Schema of the file format, for editors.

use crate::exit::{CliError, Outcome};
use loadlab_scenario::study::StudyDocument;
use std::path::Path;

/// The scenario file format as JSON Schema (committed as docs/schema/scenario.json).
pub const SCENARIO_SCHEMA: &str = include_str!("../../docs/schema/scenario.json");

pub fn execute(file: &Path) -> Result<Outcome, CliError> {
    let checked = StudyDocument::read(file)?.check()?;
    let shown = match file.to_str() {
        Some("-") => Path::new(loadlab_scenario::STDIN_NAME),
        _ => file,
    };
    loadlab_report::scenario_terminal::describe(shown, &checked, &mut std::io::stdout().lock());
    Ok(Outcome::Ok)
}

pub fn schema() -> Result<Outcome, CliError> {
    super::output::to_stdout(SCENARIO_SCHEMA, "the schema")?;
    Ok(Outcome::Ok)
}
