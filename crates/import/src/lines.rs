//! Line numbers for keys of a YAML source: serde_yaml_ng values carry no positions, so the importers
//! walk the source text alongside the document, in order, to name the line of what they
//! could not convert.

pub struct Lines<'a> {
    lines: Vec<&'a str>,
    /// The 0-based line numbers sorted by each line's text from where a key would start (see
    /// [`key_text`]): the lines of one key are then found by binary search. Built at the
    /// first [`Lines::find`]: scanning the source at each lookup made a 16 MB spec take
    /// seconds (one lookup per operation, each reading the whole file).
    index: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Self {
        Lines {
            lines: source.lines().collect(),
            index: std::cell::OnceCell::new(),
        }
    }

    /// The 1-based line of the first `key:` (or `- key:`, `"key":`, `{ "key":`) at or after line `from`
    /// (1-based).
    pub fn find(&self, key: &str, from: usize) -> Option<usize> {
        let text = |i: &usize| key_text(self.lines[*i]);
        let index = self.index.get_or_init(|| {
            let mut index: Vec<usize> = (0..self.lines.len()).collect();
            index.sort_by(|a, b| text(a).cmp(text(b)).then(a.cmp(b)));
            index
        });
        // The key then `:`, `":` or `':`: three runs of the sorted index.
        [":", "\"", "'"]
            .iter()
            .filter_map(|after| {
                let prefix = format!("{key}{after}");
                let start = index.partition_point(|i| text(i) < prefix.as_str());
                index[start..]
                    .iter()
                    .take_while(|i| text(i).starts_with(prefix.as_str()))
                    .filter(|i| {
                        text(i)[key.len()..]
                            .trim_start_matches(['"', '\''])
                            .starts_with(':')
                    })
                    .map(|i| i + 1)
                    .filter(|line| *line >= from)
                    .min()
            })
            .min()
    }
}

/// A line without its indentation, a list's `-`, a JSON or flow mapping opened on the key's
/// line (`{ "key": …`) and a key's opening quote.
fn key_text(line: &str) -> &str {
    let t = line.trim_start_matches(|c: char| c.is_whitespace() || "-{[".contains(c));
    t.strip_prefix('"')
        .or_else(|| t.strip_prefix('\''))
        .unwrap_or(t)
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
        let json = "{\n  \"paths\": {\n    \"/a\": {},\n    \"/a/{id}\": {},\n    \"/a:go\": {},\n    '/a': {},\n    - \"/a\" : 1\n  }\n}\n";
        let l = Lines::new(json);
        assert_eq!(l.find("/a", 1), Some(3));
        assert_eq!(l.find("/a/{id}", 1), Some(4));
        assert_eq!(l.find("/a", 7), None, "`\"/a\" :` is no key");
        // As the scan at each lookup it replaces found, for every key and start.
        for key in ["/a", "/a/{id}", "/a:go", "paths", "/", "", "}"] {
            for from in 0..12 {
                assert_eq!(l.find(key, from), scan(json, key, from), "{key} {from}");
            }
        }
    }

    /// The lookup as it was: each line in turn.
    fn scan(source: &str, key: &str, from: usize) -> Option<usize> {
        source
            .lines()
            .enumerate()
            .skip(from.saturating_sub(1))
            .find(|(_, l)| {
                key_text(l)
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start_matches(['"', '\'']).starts_with(':'))
            })
            .map(|(i, _)| i + 1)
    }
}
