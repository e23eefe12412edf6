//! Maps field paths (`flows[0].steps[2].post`) to line and column, for errors found after parsing,
//! and [`Ctx`], which turns a field path into an error at its place in the file or on its flag.

use crate::error::{ErrorLocation, ScenarioError};
use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// Positions of every node in a YAML document, by dotted path.
#[derive(Debug, Default)]
pub struct PathIndex {
    positions: HashMap<String, (usize, usize)>,
}

enum Frame {
    Map {
        path: String,
        key: Option<String>,
        first: bool,
    },
    Seq {
        path: String,
        index: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    positions: HashMap<String, (usize, usize)>,
}

impl Builder {
    /// Path of the node that starts now, or None if this event is a mapping key.
    fn begin_node(&mut self) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Map { key: None, .. }) => None,
            Some(Frame::Map {
                path, key: Some(k), ..
            }) => Some(join(path, k)),
            Some(Frame::Seq { path, index }) => Some(format!("{path}[{index}]")),
        }
    }

    fn end_node(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Map { key, .. }) => *key = None,
            Some(Frame::Seq { index, .. }) => *index += 1,
            None => {}
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let pos = (mark.line(), mark.col() + 1);
        match ev {
            Event::Scalar(value, ..) => match self.begin_node() {
                None => {
                    if let Some(Frame::Map { key, first, path }) = self.stack.last_mut() {
                        // A block mapping's start mark lies after its first key: use the key.
                        if *first {
                            self.positions.insert(path.clone(), pos);
                            *first = false;
                        }
                        *key = Some(value);
                    }
                }
                Some(path) => {
                    self.positions.entry(path).or_insert(pos);
                    self.end_node();
                }
            },
            Event::Alias(_) => {
                if let Some(path) = self.begin_node() {
                    self.positions.entry(path).or_insert(pos);
                }
                self.end_node();
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let path = self.begin_node().unwrap_or_default();
                self.positions.entry(path.clone()).or_insert(pos);
                self.stack.push(if matches!(ev, Event::MappingStart(..)) {
                    Frame::Map {
                        path,
                        key: None,
                        first: true,
                    }
                } else {
                    Frame::Seq { path, index: 0 }
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                self.end_node();
            }
            _ => {}
        }
    }
}

impl PathIndex {
    pub fn build(src: &str) -> PathIndex {
        let mut builder = Builder::default();
        // Syntax errors are reported by the serde pass; a partial index is still useful.
        let _ = Parser::new_from_str(src).load(&mut builder, false);
        PathIndex {
            positions: builder.positions,
        }
    }

    /// True when `path` itself was written in the file.
    pub fn has(&self, path: &str) -> bool {
        self.positions.contains_key(path)
    }

    /// Line and column (1-based) of `path`, or of its nearest ancestor that has one.
    pub fn find(&self, path: &str) -> Option<(usize, usize)> {
        let mut p = path;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            let cut = p.rfind(['.', '['])?;
            p = &p[..cut];
        }
    }
}

/// Context for locating errors: the file name and the position index of its YAML, or the
/// command-line flags a scenario was built from (then a field names its flag).
pub struct Ctx<'a> {
    pub file: &'a str,
    /// `None` for a scenario built from flags.
    pub index: Option<&'a PathIndex>,
    /// `.proto` files compiled so far for this scenario, by canonical path: each `grpc:` step
    /// naming one would otherwise compile it again (a file of many such steps took seconds).
    pub(crate) compiled_protos:
        std::cell::RefCell<HashMap<std::path::PathBuf, prost_reflect::DescriptorPool>>,
}

impl<'a> Ctx<'a> {
    pub fn file(file: &'a str, index: &'a PathIndex) -> Self {
        Ctx {
            file,
            index: Some(index),
            compiled_protos: Default::default(),
        }
    }

    /// Errors name the flag of `loadlab run --url ...` that set the field.
    pub fn flags() -> Self {
        Ctx {
            file: "",
            index: None,
            compiled_protos: Default::default(),
        }
    }

    pub fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        let Some(index) = self.index else {
            return ScenarioError::flag(flag_of(field), message, None);
        };
        let (line, column) = index.find(field).unwrap_or((1, 1));
        let location = ErrorLocation::File {
            path: self.file.to_string(),
            line,
            column,
        };
        ScenarioError::at(location, field, message)
    }

    /// Like [`Ctx::err`] at the first of `fields` written in the file (the same value can be
    /// written as `load.vus` or `load.stages[0].vus`); the last one if none is.
    pub fn err_at(&self, fields: &[&str], message: impl Into<String>) -> ScenarioError {
        let field = match self.index {
            Some(index) => fields
                .iter()
                .find(|f| index.has(f))
                .or(fields.last())
                .copied()
                .unwrap_or(""),
            None => fields.first().copied().unwrap_or(""),
        };
        self.err(field, message)
    }
}

/// The `loadlab run` flag that sets a field of a scenario built from flags.
fn flag_of(field: &str) -> &'static str {
    let last = field.rsplit('.').next().unwrap_or("");
    if field.starts_with("defaults.timeout") || last == "timeout" {
        "--timeout"
    } else if field.contains("headers") {
        "--header"
    } else if field.ends_with(".body") {
        "--body"
    } else if field.starts_with("source_addresses") {
        "--source-addrs"
    } else if field.starts_with("load") {
        match last {
            "vus" | "start_vus" => "--vus",
            "rate" | "ramp_to" => "--rate",
            "requests" | "shared_iterations" | "iterations" => "--requests",
            "max_in_flight" => "--max-in-flight",
            "batch_window" => "--batch-window",
            _ => "--duration",
        }
    } else {
        "--url"
    }
}

#[cfg(test)]
mod tests {
    use super::PathIndex;

    #[test]
    fn finds_nested_positions() {
        let src = "name: x\nflows:\n  - name: a\n    steps:\n      - get: /a\n      - post: /b\n        json: {k: 1}\n";
        let idx = PathIndex::build(src);
        assert_eq!(idx.find("name"), Some((1, 7)));
        assert_eq!(idx.find("flows[0].steps[1]"), Some((6, 9)));
        assert_eq!(idx.find("flows[0].steps[1].post"), Some((6, 15)));
        assert_eq!(idx.find("flows[0].steps[1].json.k"), Some((7, 19)));
        assert_eq!(idx.find("flows[0].steps[1].nothing"), Some((6, 9)));
    }
}
