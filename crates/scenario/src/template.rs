//! `{{ name }}` templates, compiled once at load time into literal and variable parts.
//!
//! A template is parsed when the scenario is loaded; an unknown variable, a bad function call
//! or an unset `env.NAME` is a load-time error with the file position. The engine turns the
//! parts into a byte program, so a request never re-parses text while the load runs.

use crate::model::DataSet;
use crate::suggest::closest;

/// The most words `random_words(a, b)` may ask for (a prompt of about this many tokens).
pub const MAX_RANDOM_WORDS: i64 = 100_000;

/// What `random_words` draws from: short English words that common LLM tokenizers (GPT's
/// cl100k/o200k, LLaMA's) each read as one token after a space, so a prompt of n words is about
/// n input tokens.
pub const PROMPT_WORDS: [&str; 64] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "time", "day", "water",
    "house", "light", "world", "plan", "road", "night", "city", "tree", "bird", "stone", "river",
    "song", "field",
];

/// A value known only while the load runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var {
    /// The VU number (1-based, unique across worker threads).
    Vu,
    /// The VU's iteration number (0-based).
    Iteration,
    /// A random UUID v4.
    Uuid,
    /// A uniform random integer in `[a, b]`.
    RandomInt(i64, i64),
    /// `n` random alphanumeric characters.
    RandomString(u32),
    /// A uniform random number in `[a, b]` of words, each one token to common LLM tokenizers:
    /// a synthetic prompt of a chosen length (`vllm bench serve --dataset-name random`).
    RandomWords(u32, u32),
    /// Milliseconds since the Unix epoch.
    NowMs,
    /// A column of the VU's current row of a data set.
    Data { set: u16, column: u16 },
    /// A value captured earlier by this VU (index into `Scenario::capture_names`).
    Capture(u16),
}

impl Var {
    /// Renders as a JSON number when a JSON value is this single template.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Var::Vu | Var::Iteration | Var::RandomInt(..) | Var::NowMs
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text written in the scenario.
    Lit(String),
    /// The value of `{{ env.NAME }}`, read at load time: known text, but escaped like a
    /// variable where it lands (a path, a query value, a header, a JSON string).
    Env(String),
    Var(Var),
}

/// A compiled template: literal text and variables, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    pub parts: Vec<Part>,
}

impl Template {
    /// The text, when it has no variables (environment values included as read).
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) | Part::Env(s) => out.push_str(s),
                Part::Var(_) => return None,
            }
        }
        Some(out)
    }

    /// The variable, when the template is exactly one `{{ ... }}` and nothing else.
    pub fn single_var(&self) -> Option<Var> {
        match self.parts.as_slice() {
            [Part::Var(v)] => Some(*v),
            _ => None,
        }
    }
}

/// A byte no header value may hold: every control character but tab (CR and LF would start
/// a new header). Literal values are checked at load time, variables when a request is built.
pub fn is_control(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b == 0x7f
}

/// True if the text contains a template opening.
pub fn has_template(text: &str) -> bool {
    text.contains("{{")
}

/// The names a template may use.
pub struct Names<'a> {
    pub data: &'a [DataSet],
    /// Every capture of the scenario; index = `Var::Capture` index.
    pub captures: &'a [String],
    /// Captures already set at this point of the flow; `None` accepts all of `captures`.
    pub available: Option<&'a [String]>,
}

impl Names<'_> {
    fn known(&self) -> Vec<String> {
        let mut k: Vec<String> = [
            "vu",
            "iteration",
            "uuid()",
            "random_int(a, b)",
            "random_string(n)",
            "random_words(a, b)",
            "now_ms()",
            "env.NAME",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for d in self.data {
            if d.columns.len() == 1 && d.columns[0] == "value" {
                k.push(d.name.clone());
            }
            for c in &d.columns {
                k.push(format!("{}.{c}", d.name));
            }
        }
        k.extend(self.captures.iter().cloned());
        k
    }
}

/// Compiles `text`; errors explain what is wrong and what is known.
pub fn compile(text: &str, names: &Names) -> Result<Template, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    let mut lit = String::new();
    while let Some(open) = rest.find("{{") {
        lit.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| format!("unclosed `{{{{` in `{text}`: close it with `}}}}`"))?;
        let expr = after[..close].trim();
        let part = expression(expr, names)?;
        if !lit.is_empty() {
            parts.push(Part::Lit(std::mem::take(&mut lit)));
        }
        parts.push(part);
        rest = &after[close + 2..];
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Ok(Template { parts })
}

/// `{{ name(args) }}`: one of the built-in functions, its arguments checked; `open` is the
/// position of the `(`.
fn function(expr: &str, open: usize) -> Result<Part, String> {
    let func = expr[..open].trim();
    let args_text = expr[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| format!("`{expr}`: missing `)`"))?;
    let args: Vec<&str> = args_text
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    let want = |n: usize, usage: &str| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!(
                "`{func}` takes {n} argument(s), got {}: write `{usage}`",
                args.len()
            ))
        }
    };
    let int = |a: &str| {
        a.parse::<i64>()
            .map_err(|_| format!("`{expr}`: `{a}` is not an integer"))
    };
    Ok(Part::Var(match func {
        "uuid" => {
            want(0, "uuid()")?;
            Var::Uuid
        }
        "now_ms" => {
            want(0, "now_ms()")?;
            Var::NowMs
        }
        "random_int" => {
            want(2, "random_int(1, 100)")?;
            let (a, b) = (int(args[0])?, int(args[1])?);
            if a > b {
                return Err(format!("`{expr}`: the range runs backwards"));
            }
            Var::RandomInt(a, b)
        }
        "random_string" => {
            want(1, "random_string(12)")?;
            let n = int(args[0])?;
            if !(0..=4096).contains(&n) {
                return Err(format!("`{expr}`: length must be 0..=4096"));
            }
            Var::RandomString(n as u32)
        }
        "random_words" => {
            want(2, "random_words(100, 300)")?;
            let (a, b) = (int(args[0])?, int(args[1])?);
            if !(0..=MAX_RANDOM_WORDS).contains(&a) || !(0..=MAX_RANDOM_WORDS).contains(&b) {
                return Err(format!(
                    "`{expr}`: word counts must be 0..={MAX_RANDOM_WORDS}"
                ));
            }
            if a > b {
                return Err(format!("`{expr}`: the range runs backwards"));
            }
            Var::RandomWords(a as u32, b as u32)
        }
        other => {
            let funcs = [
                "uuid",
                "now_ms",
                "random_int",
                "random_string",
                "random_words",
            ];
            let mut msg = format!("unknown function `{other}()`");
            match closest(other, funcs) {
                Some(s) => msg.push_str(&format!(", did you mean `{s}()`?")),
                None => {
                    msg.push_str("; known: uuid(), random_int(a, b), random_string(n), random_words(a, b), now_ms()")
                }
            }
            return Err(msg);
        }
    }))
}

fn expression(expr: &str, names: &Names) -> Result<Part, String> {
    if expr.is_empty() {
        return Err("empty `{{ }}`: put a variable name inside, e.g. `{{ vu }}`".into());
    }
    if let Some(open) = expr.find('(') {
        return function(expr, open);
    }
    if let Some(var) = expr.strip_prefix("env.") {
        return std::env::var(var).map(Part::Env).map_err(|_| {
            format!("environment variable `{var}` is not set (used as `{{{{ env.{var} }}}}`)")
        });
    }
    match expr {
        "vu" => return Ok(Part::Var(Var::Vu)),
        "iteration" => return Ok(Part::Var(Var::Iteration)),
        _ => {}
    }
    let (head, column) = match expr.split_once('.') {
        Some((h, c)) => (h, Some(c)),
        None => (expr, None),
    };
    if let Some(set) = names.data.iter().position(|d| d.name == head) {
        let d = &names.data[set];
        let column = column.unwrap_or("value");
        if let Some(c) = d.columns.iter().position(|c| c == column) {
            return Ok(Part::Var(Var::Data {
                set: set as u16,
                column: c as u16,
            }));
        }
        let mut msg = format!("data set `{head}` has no column `{column}`");
        match closest(column, d.columns.iter().map(String::as_str)) {
            Some(s) => msg.push_str(&format!(", did you mean `{head}.{s}`?")),
            None => msg.push_str(&format!("; its columns: {}", d.columns.join(", "))),
        }
        return Err(msg);
    }
    if let Some(i) = names.captures.iter().position(|c| c == expr) {
        if let Some(available) = names.available {
            if !available.iter().any(|a| a == expr) {
                return Err(format!(
                    "`{expr}` is used before any earlier step of this flow captures it: move the capturing step first (or into a `once:` block before this step)"
                ));
            }
        }
        return Ok(Part::Var(Var::Capture(i as u16)));
    }
    let known = names.known();
    let mut msg = format!("unknown variable `{expr}`");
    match closest(expr, known.iter().map(String::as_str)) {
        Some(s) => msg.push_str(&format!(", did you mean `{s}`?")),
        None => msg.push_str(&format!("; known: {}", known.join(", "))),
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DataSet, Pick};

    fn names<'a>(data: &'a [DataSet], caps: &'a [String]) -> Names<'a> {
        Names {
            data,
            captures: caps,
            available: None,
        }
    }

    #[test]
    fn compiles_parts() {
        let data = vec![DataSet {
            name: "users".into(),
            columns: vec!["username".into(), "password".into()],
            rows: vec![],
            pick: Pick::Sequential,
            split: false,
            csv: None,
        }];
        let caps = vec!["token".to_string()];
        let t = compile(
            "Bearer {{ token }} {{users.password}}-{{ vu }}{{ random_int(1, 9) }}",
            &names(&data, &caps),
        )
        .unwrap();
        assert_eq!(
            t.parts,
            vec![
                Part::Lit("Bearer ".into()),
                Part::Var(Var::Capture(0)),
                Part::Lit(" ".into()),
                Part::Var(Var::Data { set: 0, column: 1 }),
                Part::Lit("-".into()),
                Part::Var(Var::Vu),
                Part::Var(Var::RandomInt(1, 9)),
            ]
        );
        assert_eq!(
            compile("plain", &names(&[], &[])).unwrap().literal(),
            Some("plain".into())
        );
        assert_eq!(
            compile("{{ uuid() }}", &names(&[], &[]))
                .unwrap()
                .single_var(),
            Some(Var::Uuid)
        );
    }

    #[test]
    fn random_words_take_a_range_of_counts() {
        let one = |t: &str| compile(t, &names(&[], &[])).map(|t| t.single_var());
        assert_eq!(
            one("{{ random_words(100, 300) }}"),
            Ok(Some(Var::RandomWords(100, 300)))
        );
        let cases = [
            ("{{ random_words(300, 100) }}", "runs backwards"),
            (
                "{{ random_words(1, 200000) }}",
                "word counts must be 0..=100000",
            ),
            ("{{ random_words(10) }}", "write `random_words(100, 300)`"),
            ("{{ random_word(1, 2) }}", "did you mean `random_words()`"),
        ];
        for (text, want) in cases {
            let err = one(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(PROMPT_WORDS
            .iter()
            .all(|w| w.chars().all(|c| c.is_ascii_lowercase())));
    }

    #[test]
    fn explains_errors() {
        let caps = vec!["token".to_string()];
        let err = |t: &str| compile(t, &names(&[], &caps)).unwrap_err();
        assert_eq!(
            err("{{ tokn }}"),
            "unknown variable `tokn`, did you mean `token`?"
        );
        assert_eq!(
            err("{{ uuid(1) }}"),
            "`uuid` takes 0 argument(s), got 1: write `uuid()`"
        );
        assert_eq!(
            err("{{ rand_int(1, 2) }}"),
            "unknown function `rand_int()`, did you mean `random_int()`?"
        );
        assert!(err("{{ vu ").starts_with("unclosed"));
        assert!(err("{{ env.LOADLAB_SURELY_UNSET_VAR }}").contains("is not set"));
        let available: Vec<String> = vec![];
        let n = Names {
            data: &[],
            captures: &caps,
            available: Some(&available),
        };
        assert!(compile("{{ token }}", &n)
            .unwrap_err()
            .contains("before any earlier step"));
    }
}
