//! Line numbers for keys of a YAML source: serde_yaml_ng values carry no positions, so the importers
//! walk the source text alongside the document, in order, to name the line of what they
//! could not convert.

pub struct Lines<'a> {
    lines: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Self {
        Lines {
            lines: source.lines().collect(),
        }
    }

    /// The 1-based line of the first `key:` (or `- key:`, `"key":`, `{ "key":`) at or after line `from`
    /// (1-based).
    pub fn find(&self, key: &str, from: usize) -> Option<usize> {
        let start = from.saturating_sub(1);
        self.lines
            .iter()
            .enumerate()
            .skip(start)
            .find(|(_, l)| {
                // `- key:`, and a JSON or flow mapping opened on the key's line: `{ "key": …`.
                let t = l.trim_start_matches(|c: char| c.is_whitespace() || "-{[".contains(c));
                let t = t
                    .strip_prefix('"')
                    .or_else(|| t.strip_prefix('\''))
                    .unwrap_or(t);
                t.strip_prefix(key).is_some_and(|rest| {
                    let rest = rest.trim_start_matches(['"', '\'']);
                    rest.starts_with(':')
                })
            })
            .map(|(i, _)| i + 1)
    }
}

impl Lines<'_> {
    /// The 1-based line of the first occurrence of `text`.
    pub fn find_text(&self, text: &str) -> Option<usize> {
        self.lines
            .iter()
            .position(|l| l.contains(text))
            .map(|i| i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_in_order() {
        let src = "config:\n  target: x\nscenarios:\n  - flow:\n      - get:\n          url: /a\n      - get:\n          url: /b\n      - \"log\": hi\n";
        let l = Lines::new(src);
        assert_eq!(l.find("config", 1), Some(1));
        assert_eq!(l.find("get", 1), Some(5));
        assert_eq!(l.find("get", 6), Some(7));
        assert_eq!(l.find("url", 7), Some(8));
        assert_eq!(l.find("log", 1), Some(9));
        assert_eq!(l.find("missing", 1), None);
        assert_eq!(l.find("targ", 1), None, "a prefix of a key is not the key");
        let json = "{\n  \"flow\": [\n    { \"get\": { \"url\": \"/\" } },\n    {\n      \"post\": {}\n    }\n  ]\n}\n";
        let l = Lines::new(json);
        assert_eq!(l.find("flow", 1), Some(2));
        assert_eq!(l.find("get", 1), Some(3));
        assert_eq!(l.find("post", 1), Some(5));
    }
}
