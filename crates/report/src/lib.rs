//! Reports of a run: one report model (the [`RunResult`]), many renderers; for now terminal + JSON.
//!
//! Renderers read a finished `loadlab.run.v1` result and never compute statistics of their own,
//! so a summary printed on the terminal always agrees with the JSON record it was drawn from.
//! The JSON Schema of that record is `docs/schema/run.v1.json`.

mod format;
mod json;
mod style;
mod terminal;

pub use format::format_ms;
pub use json::render_json;
pub use loadlab_metrics::RunResult;
pub use style::Style;
pub use terminal::render_summary;
