//! A small YAML writer: the importers need comments beside the values a human must decide on,
//! which serde cannot write, and strings quoted so that any text reads back unchanged.

/// A value of the document, with comments on map entries and list items.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Text: written plain when that reads back as the same string, else double-quoted.
    Str(String),
    /// Written verbatim: numbers, booleans, durations (`1.5s`), rates (`5/s`).
    Raw(String),
    Map(Vec<Entry>),
    Seq(Vec<Item>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Lines written above the entry as `# ...`.
    pub comments: Vec<String>,
    pub key: String,
    pub value: Node,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub comments: Vec<String>,
    pub value: Node,
}

impl Node {
    pub fn str(s: impl Into<String>) -> Node {
        Node::Str(s.into())
    }

    pub fn raw(s: impl Into<String>) -> Node {
        Node::Raw(s.into())
    }

    /// A map from `(key, value)` pairs, without comments.
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Node {
        Node::Map(entries.into_iter().map(|(k, v)| Entry::new(k, v)).collect())
    }

    pub fn seq(items: impl IntoIterator<Item = Node>) -> Node {
        Node::Seq(items.into_iter().map(Item::new).collect())
    }

    /// A JSON value as YAML (numbers and booleans keep their type).
    pub fn json(v: &serde_json::Value) -> Node {
        use serde_json::Value;
        match v {
            Value::Null => Node::raw("null"),
            Value::Bool(b) => Node::raw(b.to_string()),
            Value::Number(n) => Node::raw(n.to_string()),
            Value::String(s) => Node::str(s.clone()),
            Value::Array(a) => Node::seq(a.iter().map(Node::json)),
            Value::Object(o) => Node::map(o.iter().map(|(k, v)| (k.clone(), Node::json(v)))),
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Node::Str(_) | Node::Raw(_))
    }
}

impl Entry {
    pub fn new(key: impl Into<String>, value: Node) -> Entry {
        Entry {
            comments: Vec::new(),
            key: key.into(),
            value,
        }
    }

    pub fn commented(mut self, comment: impl Into<String>) -> Entry {
        self.comments.push(comment.into());
        self
    }
}

impl Item {
    pub fn new(value: Node) -> Item {
        Item {
            comments: Vec::new(),
            value,
        }
    }

    pub fn commented(mut self, comment: impl Into<String>) -> Item {
        self.comments.push(comment.into());
        self
    }
}

/// A whole file: header comment lines, then the top-level map.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub header: Vec<String>,
    pub root: Vec<Entry>,
}

pub fn write_document(doc: &Document) -> String {
    let mut out = String::new();
    write_comments(&mut out, &doc.header, 0);
    write_entries(&mut out, &doc.root, 0);
    out
}

/// Longest `{ a: b, c: d }` written on one line.
const FLOW_WIDTH: usize = 72;

fn write_comments(out: &mut String, comments: &[String], indent: usize) {
    for c in comments {
        for line in c.lines() {
            push_indent(out, indent);
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                out.push_str("# ");
                out.push_str(&one_line(line));
                out.push('\n');
            }
        }
    }
}

fn write_entries(out: &mut String, entries: &[Entry], indent: usize) {
    for e in entries {
        write_comments(out, &e.comments, indent);
        push_indent(out, indent);
        out.push_str(&scalar(&e.key));
        out.push(':');
        write_value(out, &e.value, indent);
    }
}

/// The value after `key:` or `- `, starting on the current line.
fn write_value(out: &mut String, value: &Node, indent: usize) {
    match value {
        Node::Str(_) | Node::Raw(_) => {
            out.push(' ');
            out.push_str(&inline(value));
            out.push('\n');
        }
        Node::Map(m) if m.is_empty() => out.push_str(" {}\n"),
        Node::Seq(s) if s.is_empty() => out.push_str(" []\n"),
        Node::Map(m) => match flow_map(m) {
            Some(text) if text.len() + indent <= FLOW_WIDTH => {
                out.push(' ');
                out.push_str(&text);
                out.push('\n');
            }
            _ => {
                out.push('\n');
                write_entries(out, m, indent + 2);
            }
        },
        Node::Seq(items) => {
            out.push('\n');
            write_items(out, items, indent + 2);
        }
    }
}

fn write_items(out: &mut String, items: &[Item], indent: usize) {
    for item in items {
        write_comments(out, &item.comments, indent);
        match &item.value {
            Node::Map(m) if !m.is_empty() => {
                // The first entry goes after the dash, the others under it.
                let mut block = String::new();
                write_entries(&mut block, m, indent + 2);
                let mut dashed = false;
                for line in block.split_inclusive('\n') {
                    let body = &line[(indent + 2).min(line.len())..];
                    if !dashed && !body.starts_with('#') {
                        push_indent(out, indent);
                        out.push_str("- ");
                        out.push_str(body);
                        dashed = true;
                    } else {
                        out.push_str(line);
                    }
                }
            }
            Node::Seq(s) if !s.is_empty() => {
                push_indent(out, indent);
                out.push('-');
                out.push('\n');
                write_items(out, s, indent + 2);
            }
            other => {
                push_indent(out, indent);
                out.push('-');
                write_value(out, other, indent);
            }
        }
    }
}

/// `{ a: 1, b: x }` when every value is a scalar and no entry has a comment.
fn flow_map(entries: &[Entry]) -> Option<String> {
    if entries.len() > 4
        || entries
            .iter()
            .any(|e| !e.value.is_scalar() || !e.comments.is_empty())
    {
        return None;
    }
    let parts: Vec<String> = entries
        .iter()
        .map(|e| format!("{}: {}", scalar(&e.key), inline(&e.value)))
        .collect();
    Some(format!("{{ {} }}", parts.join(", ")))
}

fn inline(value: &Node) -> String {
    match value {
        Node::Str(s) => scalar(s),
        Node::Raw(r) => r.clone(),
        _ => unreachable!("inline is called on scalars only"),
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A comment holds one line: control characters become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A string as a YAML scalar that reads back as the same string: plain when it is made of
/// safe characters and would not be read as a number, boolean or null; else double-quoted.
pub fn scalar(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '/' || first == '$' || first == '_') {
        return false;
    }
    if s.ends_with(' ') || s.contains("  ") {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '.' | '/' | '$' | '-'))
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let reserved = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf", ".inf", ".nan",
    ];
    !reserved.contains(&lower.as_str())
}

/// A double-quoted YAML string: `"` and `\` escaped, control and special characters as `\u`.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads_back(s: &str) {
        let doc = Document {
            header: vec![],
            root: vec![
                Entry::new("v", Node::str(s)),
                Entry::new(s, Node::map([("k", Node::str(s))])),
                Entry::new(
                    "l",
                    Node::seq([Node::str(s), Node::map([("a", Node::str(s))])]),
                ),
            ],
        };
        let text = write_document(&doc);
        let back: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("{s:?} wrote unreadable YAML: {e}\n{text}"));
        assert_eq!(back["v"].as_str(), Some(s), "{text}");
        assert_eq!(back[s]["k"].as_str(), Some(s), "{text}");
        assert_eq!(back["l"][0].as_str(), Some(s), "{text}");
        assert_eq!(back["l"][1]["a"].as_str(), Some(s), "{text}");
    }

    #[test]
    fn strings_read_back_unchanged() {
        for s in [
            "plain",
            "/api/x",
            "$.token",
            "yes",
            "No",
            "true",
            "null",
            "~",
            "123",
            "1.5",
            "0x1f",
            "1e3",
            "-",
            "- a",
            "a: b",
            "a #b",
            "#x",
            "{{ token }}",
            "Bearer {{ token }}",
            "'",
            "\"",
            "\\",
            "line\nbreak",
            "  lead",
            "trail ",
            "ü ñ 漢",
            "\u{7f}",
            "\u{85}",
            "\u{feff}x",
            "? x",
            "@x",
            "`x",
            "%x",
            "!x",
            "&x",
            "*x",
            "|",
            ">",
            "[a]",
            "a,b",
            "",
            "tab\there",
            ":",
            "a:",
            "key: {x}",
            "=",
            "<<",
        ] {
            reads_back(s);
        }
    }

    #[test]
    fn plain_when_safe_quoted_otherwise() {
        assert_eq!(scalar("/api/applications"), "/api/applications");
        assert_eq!(scalar("$.token"), "$.token");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("200"), "\"200\"");
        assert_eq!(scalar("{{ id }}"), "\"{{ id }}\"");
        assert_eq!(scalar("a\"b"), "\"a\\\"b\"");
    }

    #[test]
    fn comments_and_layout() {
        let doc = Document {
            header: vec!["imported".into()],
            root: vec![
                Entry::new("load", Node::map([("model", Node::raw("closed"))]))
                    .commented("decide the load"),
                Entry::new(
                    "steps",
                    Node::Seq(vec![Item::new(Node::Map(vec![
                        Entry::new("name", Node::str("GET /x")),
                        Entry::new("get", Node::str("/x")).commented("a note"),
                    ]))
                    .commented("first")]),
                ),
            ],
        };
        let text = write_document(&doc);
        assert_eq!(
            text,
            "# imported\n# decide the load\nload: { model: closed }\nsteps:\n  # first\n  - name: GET /x\n    # a note\n    get: /x\n"
        );
    }
}
