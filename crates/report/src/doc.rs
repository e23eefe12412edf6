//! The report model: one [`ReportDoc`] per report, whatever it reports on (a run, a study, a
//! sweep, a capacity search, a comparison). Builders turn results into a `ReportDoc`; renderers
//! (HTML, Markdown, JSON) turn a `ReportDoc` into text and never look at the results themselves,
//! so every format says exactly the same thing.

use crate::chart::Chart;
pub use crate::level::Level;
use serde::Serialize;

/// One plain-language sentence with its level: "p95 latency met its 250ms threshold".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub level: Level,
    pub text: String,
}

impl Verdict {
    pub fn new(level: Level, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
        }
    }
}

/// What a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    Run,
    Study,
    Sweep,
    Capacity,
    Comparison,
}

/// A whole report: title, verdict sentences first, then sections in reading order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportDoc {
    pub kind: DocKind,
    pub title: String,
    /// One line under the title: what, when, which tool version.
    pub subtitle: String,
    /// The verdict in plain words, most important first.
    pub verdicts: Vec<Verdict>,
    pub sections: Vec<Section>,
    /// The loadlab version that wrote the report.
    pub tool_version: String,
}

impl ReportDoc {
    /// Every chart, in document order (the Markdown renderer writes each to its own file).
    pub fn charts(&self) -> Vec<&Chart> {
        self.sections
            .iter()
            .flat_map(|s| s.blocks.iter())
            .filter_map(|b| match b {
                Block::Chart(c) => Some(c.as_ref()),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// Anchor (`summary`, `method`, …), unique in the document.
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(id: &str, title: &str) -> Self {
        Self {
            id: id.to_string(),
            title: title.to_string(),
            blocks: Vec::new(),
        }
    }

    pub fn push(&mut self, block: Block) -> &mut Self {
        self.blocks.push(block);
        self
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Block {
    /// A sub-heading inside a section.
    Heading(String),
    /// A paragraph of plain text (`code` in backticks is kept as code).
    Text(String),
    /// A bullet list.
    List(Vec<String>),
    /// Caveats and findings, each with its level.
    Notes(Vec<Verdict>),
    /// Label → value pairs (a definition list).
    Facts(Vec<(String, String)>),
    Table(Table),
    /// Boxed: a chart is far larger than the other blocks.
    Chart(Box<Chart>),
}

impl Block {
    pub fn chart(c: Chart) -> Block {
        Block::Chart(Box::new(c))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// A line under the table (e.g. what the brackets mean).
    pub note: Option<String>,
}

impl Table {
    /// Columns by title; a title starting with `>` is numeric (right-aligned), the `>` dropped.
    pub fn new(columns: &[&str]) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|c| match c.strip_prefix('>') {
                    Some(t) => Column {
                        title: t.to_string(),
                        numeric: true,
                    },
                    None => Column {
                        title: c.to_string(),
                        numeric: false,
                    },
                })
                .collect(),
            rows: Vec::new(),
            note: None,
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub title: String,
    pub numeric: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub text: String,
    /// Colours the cell (pass/fail) in HTML and adds the mark in Markdown.
    pub level: Option<Level>,
}

impl Cell {
    pub fn level(text: impl Into<String>, level: Level) -> Self {
        Self {
            text: text.into(),
            level: Some(level),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self { text, level: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Self {
            text: text.to_string(),
            level: None,
        }
    }
}

/// `cells!["a", x.to_string(), Cell::level(..)]` → `Vec<Cell>`.
#[macro_export]
macro_rules! cells {
    ($($c:expr),* $(,)?) => { vec![$($crate::doc::Cell::from($c)),*] };
}
