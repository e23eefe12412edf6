//! Prometheus series selectors as users write them in PromQL: `name` or
//! `name{label="value", other!="x", path=~"/api/.*", code!~"2.."}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A metric name with label matchers; matching series are summed by the monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesSelector {
    /// The selector in canonical form (`name{label="value"}`); also the series' name suffix:
    /// `prometheus.<endpoint>.<text>`.
    pub text: String,
    pub metric: String,
    pub matchers: Vec<LabelMatcher>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMatcher {
    pub label: String,
    pub op: MatchOp,
    pub value: String,
}

/// PromQL's four matchers; regexes are anchored at both ends, as in PromQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOp {
    Eq,
    Ne,
    Regex,
    NotRegex,
}

impl MatchOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchOp::Eq => "=",
            MatchOp::Ne => "!=",
            MatchOp::Regex => "=~",
            MatchOp::NotRegex => "!~",
        }
    }
}

impl fmt::Display for SeriesSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Parses a selector; the error says what is wrong and shows the expected form.
pub fn parse_series_selector(text: &str) -> Result<SeriesSelector, String> {
    let form = "expected e.g. `process_cpu_seconds_total` or `http_requests_total{code=\"500\"}`";
    let t = text.trim();
    let name_end = t.find(|c: char| !is_name_char(c)).unwrap_or(t.len());
    let metric = &t[..name_end];
    if !metric.starts_with(is_name_start) {
        return Err(format!(
            "`{text}` does not start with a metric name; {form}"
        ));
    }
    let mut rest = t[name_end..].trim_start();
    let mut matchers = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        rest = inner;
        loop {
            rest = rest.trim_start();
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let label_end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
            let label = &rest[..label_end];
            if label.is_empty()
                || label.starts_with(':')
                || label.starts_with(|c: char| c.is_ascii_digit())
            {
                return Err(format!(
                    "`{text}`: expected a label name inside {{...}}; {form}"
                ));
            }
            rest = rest[label_end..].trim_start();
            let op = if let Some(r) = rest.strip_prefix("=~") {
                rest = r;
                MatchOp::Regex
            } else if let Some(r) = rest.strip_prefix("!~") {
                rest = r;
                MatchOp::NotRegex
            } else if let Some(r) = rest.strip_prefix("!=") {
                rest = r;
                MatchOp::Ne
            } else if let Some(r) = rest.strip_prefix('=') {
                rest = r;
                MatchOp::Eq
            } else {
                return Err(format!(
                    "`{text}`: label `{label}` needs one of =, !=, =~, !~ and a quoted value; {form}"
                ));
            };
            let (value, after) = quoted(rest.trim_start()).ok_or_else(|| {
                format!("`{text}`: the value of label `{label}` must be in double quotes; {form}")
            })?;
            if matches!(op, MatchOp::Regex | MatchOp::NotRegex) {
                regex::Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                    format!(
                        "`{text}`: invalid regex for label `{label}`: {}",
                        super::flag::regex_error_text(&e)
                    )
                })?;
            }
            matchers.push(LabelMatcher {
                label: label.to_string(),
                op,
                value,
            });
            rest = after.trim_start();
            if let Some(after) = rest.strip_prefix(',') {
                rest = after;
            } else if !rest.starts_with('}') {
                return Err(format!(
                    "`{text}`: expected `,` or `}}` after a label matcher; {form}"
                ));
            }
        }
    }
    if !rest.trim().is_empty() {
        return Err(format!(
            "`{text}`: unexpected `{}` after the selector; {form}",
            rest.trim()
        ));
    }
    Ok(SeriesSelector {
        text: canonical(metric, &matchers),
        metric: metric.to_string(),
        matchers,
    })
}

/// A double-quoted string with `\"`, `\\` and `\n` escapes; returns it and the rest.
fn quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

fn canonical(metric: &str, matchers: &[LabelMatcher]) -> String {
    if matchers.is_empty() {
        return metric.to_string();
    }
    let inner: Vec<String> = matchers
        .iter()
        .map(|m| {
            let value = m
                .value
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{}{}\"{value}\"", m.label, m.op.as_str())
        })
        .collect();
    format!("{metric}{{{}}}", inner.join(","))
}

impl Serialize for SeriesSelector {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for SeriesSelector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_series_selector(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_selectors() {
        let s = parse_series_selector("process_cpu_seconds_total").unwrap();
        assert_eq!(
            (s.metric.as_str(), s.matchers.len()),
            ("process_cpu_seconds_total", 0)
        );
        let s =
            parse_series_selector(r#" http_requests_total{ code = "500", route=~"/api/.*" ,} "#)
                .unwrap();
        assert_eq!(s.metric, "http_requests_total");
        assert_eq!(
            s.matchers,
            vec![
                LabelMatcher {
                    label: "code".into(),
                    op: MatchOp::Eq,
                    value: "500".into()
                },
                LabelMatcher {
                    label: "route".into(),
                    op: MatchOp::Regex,
                    value: "/api/.*".into()
                },
            ]
        );
        assert_eq!(
            s.text,
            r#"http_requests_total{code="500",route=~"/api/.*"}"#
        );
        let s = parse_series_selector(r#"x{a!="q\"uote",b!~"1|2"}"#).unwrap();
        assert_eq!(s.matchers[0].value, "q\"uote");
        assert_eq!(s.matchers[0].op, MatchOp::Ne);
        assert_eq!(s.matchers[1].op, MatchOp::NotRegex);
        assert_eq!(s.text, r#"x{a!="q\"uote",b!~"1|2"}"#);
        assert_eq!(parse_series_selector("up{}").unwrap().text, "up");
    }

    #[test]
    fn rejects_bad_selectors() {
        for (bad, says) in [
            ("", "does not start with a metric name"),
            ("9x", "does not start with a metric name"),
            ("x{code=500}", "must be in double quotes"),
            ("x{code}", "needs one of =, !=, =~, !~"),
            ("x{code=\"5\"", "expected `,` or `}`"),
            ("x{code=\"5}", "must be in double quotes"),
            ("x{=\"5\"}", "expected a label name"),
            ("x{a=~\"(\"}", "invalid regex for label `a`"),
            ("x y", "unexpected `y`"),
        ] {
            let err = parse_series_selector(bad).unwrap_err();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
    }
}
