//! The JSONPath subset captures and checks use: `$.a.b`, `$.a[0]`, `$['x y']`, `$[-1]`.
//!
//! Written here rather than taken from a crate: load tests read one value at a known place
//! (`$.token`, `$.data.items[0].id`), never filters or wildcards, and this subset compiles to
//! a short list of keys and indices that is walked without allocating. The full-JSONPath
//! crates (serde_json_path, jsonpath-rust) bring parsers larger than this whole crate.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(i64),
}

/// A compiled path; evaluate it with [`JsonPath::find`].
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    text: String,
    segments: Vec<Segment>,
}

impl JsonPath {
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let bad = |why: &str| {
            format!("invalid JSONPath `{text}`: {why}; expected e.g. `$.token`, `$.items[0].id` or `$['a key']`")
        };
        let rest = text
            .trim()
            .strip_prefix('$')
            .ok_or_else(|| bad("it must start with `$`"))?;
        let bytes = rest.as_bytes();
        let mut segments = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'.' => {
                    let start = i + 1;
                    let mut end = start;
                    while end < bytes.len() && bytes[end] != b'.' && bytes[end] != b'[' {
                        end += 1;
                    }
                    if end == start {
                        return Err(bad("empty key after `.`"));
                    }
                    let key = &rest[start..end];
                    if key == "*" {
                        return Err(bad("wildcards are not supported"));
                    }
                    segments.push(Segment::Key(key.to_string()));
                    i = end;
                }
                b'[' => {
                    let close = rest[i..]
                        .find(']')
                        .map(|j| i + j)
                        .ok_or_else(|| bad("unclosed `[`"))?;
                    let inner = rest[i + 1..close].trim();
                    let quoted = (inner.starts_with('\'') && inner.ends_with('\''))
                        || (inner.starts_with('"') && inner.ends_with('"'));
                    if quoted && inner.len() >= 2 {
                        segments.push(Segment::Key(inner[1..inner.len() - 1].to_string()));
                    } else {
                        let n: i64 = inner
                            .parse()
                            .map_err(|_| bad("`[...]` takes an index or a quoted key"))?;
                        segments.push(Segment::Index(n));
                    }
                    i = close + 1;
                }
                _ => return Err(bad("expected `.` or `[` after `$`")),
            }
        }
        Ok(JsonPath {
            text: text.trim().to_string(),
            segments,
        })
    }

    /// The path as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value at the path, if there is one.
    pub fn find<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        let mut v = root;
        for s in &self.segments {
            v = match (s, v) {
                (Segment::Key(k), Value::Object(m)) => m.get(k)?,
                (Segment::Index(i), Value::Array(a)) => {
                    let idx = if *i < 0 { a.len() as i64 + i } else { *i };
                    a.get(usize::try_from(idx).ok()?)?
                }
                _ => return None,
            };
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::JsonPath;
    use serde_json::json;

    #[test]
    fn finds_values() {
        let v = json!({"token": "t", "data": {"items": [{"id": 7}, {"id": 9}]}, "a b": true});
        let f = |p: &str| JsonPath::parse(p).unwrap().find(&v).cloned();
        assert_eq!(f("$.token"), Some(json!("t")));
        assert_eq!(f("$.data.items[1].id"), Some(json!(9)));
        assert_eq!(f("$.data.items[-1].id"), Some(json!(9)));
        assert_eq!(f("$['a b']"), Some(json!(true)));
        assert_eq!(f("$"), Some(v.clone()));
        assert_eq!(f("$.nope"), None);
        assert_eq!(f("$.data.items[5]"), None);
    }

    #[test]
    fn rejects_bad_paths() {
        for p in ["token", "$.", "$[x]", "$.a[0", "$.*"] {
            assert!(JsonPath::parse(p).is_err(), "{p}");
        }
    }
}
