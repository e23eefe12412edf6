//! Reports: one report model ([`ReportDoc`]), many renderers — terminal summary, JSON,
//! Markdown and self-contained HTML.
//!
//! The terminal summary and the JSON renderer read a finished `loadlab.run.v2` result
//! (`docs/schema/run.v2.json`). The Markdown and HTML reports are drawn from a [`ReportDoc`]
//! built from a run (or a study, sweep, capacity search or comparison); builders format what
//! the results say and never compute statistics of their own, so every format agrees with the
//! JSON record it was drawn from. Charts are hand-written SVG ([`svg`]).

pub mod chart;
pub mod compare_terminal;
#[macro_use]
pub mod doc;
mod data_words;
mod format;
pub mod gate_summary;
pub mod history_report;
pub mod history_terminal;
mod html;
mod json;
pub mod junit;
mod level;
mod markdown;
pub mod progress_terminal;
mod protocol_values;
mod run_doc;
mod run_values;
pub mod runs_terminal;
pub mod scenario_terminal;
pub mod stored_terminal;
mod stretch_values;
mod study_doc;
pub mod study_terminal;
mod style;
pub mod svg;
mod terminal;
mod terminal_counts;
mod terminal_grpc;
mod terminal_header;
mod terminal_lines;
mod terminal_resources;
mod terminal_stream;
mod terminal_tables;
mod terminal_thresholds;
mod terminal_timings;
mod terminal_ws;
pub mod verdict_words;
pub mod words;

pub use doc::{Block, Cell, DocKind, Level, ReportDoc, Section, Table, Verdict};
pub use format::format_ms;
pub use html::render_html;
pub use json::render_json;
pub use loadlab_metrics::RunResult;
pub use markdown::{render_markdown, Markdown};
pub use run_doc::{
    active_over_time, caveats, distribution_chart, errors_table, latency_over_time,
    measurement_methods, percentile_curve, plan_chart, run_report, run_verdicts,
    throughput_over_time, PlannedLoad,
};
pub use study_doc::{
    capacity_report, compare_report, comparison_note, comparison_table, comparison_verdicts,
    gate_verdicts, metric_words, multi_environment, one_run_words, study_report, usl_skipped_words,
    ComparisonSettings, Runs,
};
pub use style::Style;
pub use svg::render_svg;
pub use terminal::render_summary;
