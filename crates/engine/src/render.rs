//! Templated requests as a byte program: literal chunks and variables with their escaping,
//! built once before the run and rendered into a reused per-VU buffer for each request.
//!
//! A request without templates is rendered once, before the run (see prepare).
//!
//! Escaping is decided by position, for variables and for `{{ env.NAME }}` values alike: a
//! path is percent-encoded (literal path text only where a request line cannot hold it), a
//! header value that a variable would break over two lines is refused — the request is not
//! sent and fails `invalid_request` — so no value can inject a header or split the request line.

use crate::request::RequestParts;
use crate::vu::VuState;
use loadlab_scenario::template::{compile, is_control, Names, Part, Template, Var};
use loadlab_scenario::{Body, DataSet};
use std::fmt::Write as _;

/// How a variable's text is written where it appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Esc {
    /// URL path: percent-encode what a path cannot hold.
    Path,
    /// Query or form value: percent-encode all but unreserved characters.
    Component,
    /// Header value: as is, but a value holding a control character (CR, LF, NUL...) makes
    /// the request invalid (see [`InvalidValue`]).
    Header,
    /// Inside a JSON string: JSON-escaped.
    JsonString,
    /// A whole JSON value: numbers stay numbers, anything else becomes a JSON string.
    JsonValue,
    /// Text body: as is.
    Raw,
}

#[derive(Debug, Clone)]
pub enum Piece {
    Lit(Box<[u8]>),
    Var(Var, Esc),
}

/// Pieces being assembled; adjacent literals are merged.
#[derive(Debug, Clone, Default)]
pub struct Pieces {
    pub pieces: Vec<Piece>,
    lit: Vec<u8>,
}

impl Pieces {
    pub fn lit(&mut self, bytes: &[u8]) {
        self.lit.extend_from_slice(bytes);
    }

    pub fn var(&mut self, v: Var, esc: Esc) {
        self.flush();
        self.pieces.push(Piece::Var(v, esc));
    }

    fn flush(&mut self) {
        if !self.lit.is_empty() {
            let lit = std::mem::take(&mut self.lit);
            self.pieces.push(Piece::Lit(lit.into_boxed_slice()));
        }
    }

    pub fn finish(mut self) -> Vec<Piece> {
        self.flush();
        self.pieces
    }

    /// Appends a request target (`/path?query`): variables before the query are escaped as
    /// path text, those after a literal `?` as query values (an `&` or `=` in a value cannot
    /// add a parameter).
    pub fn target(&mut self, t: &Template) {
        let mut esc = Esc::Path;
        for p in &t.parts {
            match p {
                // Literal text is the user's own `/path?a=1&b=2`: kept as written (`Esc::Path`
                // encodes only what a request line cannot hold).
                Part::Lit(s) => {
                    self.template_part(p, Esc::Path);
                    if s.contains('?') {
                        esc = Esc::Component;
                    }
                }
                _ => self.template_part(p, esc),
            }
        }
    }

    /// Appends a compiled template. Literals are escaped for their position (in a path only
    /// what a request line cannot hold); `env.NAME` values exactly like variables.
    pub fn template(&mut self, t: &Template, esc: Esc) {
        for p in &t.parts {
            self.template_part(p, esc);
        }
    }

    fn template_part(&mut self, part: &Part, esc: Esc) {
        let mut out = Vec::new();
        match part {
            Part::Lit(s) => match esc {
                Esc::Path => encode_target_text(&mut out, s.as_bytes()),
                Esc::Raw | Esc::Header => out.extend_from_slice(s.as_bytes()),
                _ => escape_into(&mut out, s.as_bytes(), esc),
            },
            // Checked at load time in headers; escaped like any value elsewhere.
            Part::Env(s) => escape_into(&mut out, s.as_bytes(), esc),
            Part::Var(v) => return self.var(*v, esc),
        }
        self.lit(&out);
    }
}

/// A request as pieces: its target, its header fields (names literal, values pieces) and its
/// body; rendered per request when some piece is a variable.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// `/path?query`.
    pub target: Vec<Piece>,
    pub headers: Vec<(Box<[u8]>, Vec<Piece>)>,
    pub body: Option<Vec<Piece>>,
}

impl Program {
    /// Every piece, target to body.
    pub fn pieces(&self) -> impl Iterator<Item = &Piece> {
        self.target
            .iter()
            .chain(self.headers.iter().flat_map(|(_, v)| v))
            .chain(self.body.iter().flatten())
    }

    /// True when some piece is a variable (otherwise the request is static).
    pub fn has_vars(&self) -> bool {
        self.pieces().any(|p| matches!(p, Piece::Var(..)))
    }

    /// Renders the request for this VU into `out`; fails when a variable's value cannot go
    /// where it stands (then nothing may be sent).
    pub fn render(&self, out: &mut RequestParts, cx: &mut RenderCx) -> Result<(), InvalidValue> {
        out.clear();
        out.write_target(|b| render_pieces(&self.target, b, cx))?;
        for (name, value) in &self.headers {
            out.write_header(name, |b| render_pieces(value, b, cx))?;
        }
        if let Some(body) = &self.body {
            out.write_body(|b| render_pieces(body, b, cx))?;
        }
        Ok(())
    }

    /// The request as VU `vu` renders it on its first iteration, before anything is captured
    /// (data sets at their first row, random values from a generator seeded with `vu`): how a
    /// static request is rendered once before the run, and what `render_first` shows.
    pub fn render_first_iteration(
        &self,
        vu: u64,
        data: &[DataSet],
    ) -> Result<RequestParts, InvalidValue> {
        let mut out = RequestParts::default();
        self.render(
            &mut out,
            &mut RenderCx {
                vu: &VuState::new(vu),
                data,
                rng: &mut fastrand::Rng::with_seed(vu),
            },
        )?;
        Ok(out)
    }
}

/// A variable held a control character (CR, LF, NUL...) where a header value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidValue {
    pub var: Var,
    pub byte: u8,
}

impl InvalidValue {
    pub fn describe(&self) -> String {
        let what = match self.byte {
            b'\r' | b'\n' => "a line break".to_string(),
            b => format!("the control character {b:#04x}"),
        };
        format!(
            "the value of {} holds {what}, which cannot go into a header value; the request was not sent",
            describe_var(self.var)
        )
    }
}

fn describe_var(v: Var) -> &'static str {
    match v {
        Var::Capture(_) => "a captured variable",
        Var::Data { .. } => "a data set column",
        _ => "a template variable",
    }
}

/// What rendering reads: the VU's state, the data sets and the worker's random numbers.
pub struct RenderCx<'a> {
    pub vu: &'a VuState,
    pub data: &'a [DataSet],
    pub rng: &'a mut fastrand::Rng,
}

fn render_pieces(
    pieces: &[Piece],
    out: &mut Vec<u8>,
    cx: &mut RenderCx,
) -> Result<(), InvalidValue> {
    let mut scratch = itoa_buf();
    for p in pieces {
        match p {
            Piece::Lit(b) => out.extend_from_slice(b),
            Piece::Var(v, esc) => {
                let (text, numeric): (&[u8], bool) = match *v {
                    Var::Vu => (fmt_u64(&mut scratch, cx.vu.vu), true),
                    Var::Iteration => (fmt_u64(&mut scratch, cx.vu.iteration), true),
                    Var::NowMs => {
                        let ms = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_millis() as u64)
                            .unwrap_or(0);
                        (fmt_u64(&mut scratch, ms), true)
                    }
                    Var::RandomInt(a, b) => {
                        let n = cx.rng.i64(a..=b);
                        scratch.clear();
                        let _ = write!(StrWriter(&mut scratch), "{n}");
                        (scratch.as_bytes(), true)
                    }
                    Var::Uuid => {
                        let n = cx.rng.u128(..);
                        let n = (n & !(0xF000u128 << 64) | (0x4000u128 << 64))
                            & !(0xC000u128 << 48)
                            | (0x8000u128 << 48);
                        let h = format!("{n:032x}");
                        scratch.clear();
                        scratch.push_str(&h[0..8]);
                        scratch.push('-');
                        scratch.push_str(&h[8..12]);
                        scratch.push('-');
                        scratch.push_str(&h[12..16]);
                        scratch.push('-');
                        scratch.push_str(&h[16..20]);
                        scratch.push('-');
                        scratch.push_str(&h[20..32]);
                        (scratch.as_bytes(), false)
                    }
                    Var::RandomString(n) => {
                        scratch.clear();
                        for _ in 0..n {
                            scratch.push(cx.rng.alphanumeric());
                        }
                        (scratch.as_bytes(), false)
                    }
                    Var::RandomWords(a, b) => {
                        scratch.clear();
                        for i in 0..cx.rng.u32(a..=b) {
                            if i > 0 {
                                scratch.push(' ');
                            }
                            let words = &loadlab_scenario::template::PROMPT_WORDS;
                            scratch.push_str(words[cx.rng.usize(..words.len())]);
                        }
                        (scratch.as_bytes(), false)
                    }
                    Var::Data { set, column } => {
                        let row = cx.vu.row(set as usize);
                        match cx.data[set as usize].rows[row].get(column as usize) {
                            Some(serde_json::Value::String(s)) => (s.as_bytes(), false),
                            Some(other) => {
                                scratch.clear();
                                let _ = write!(StrWriter(&mut scratch), "{other}");
                                (scratch.as_bytes(), other.is_number())
                            }
                            None => (&[][..], false),
                        }
                    }
                    Var::Capture(i) => match cx.vu.var(i as usize) {
                        Some(c) => (c.text.as_bytes(), c.number),
                        None => (&[][..], false),
                    },
                };
                match esc {
                    Esc::JsonValue if numeric => out.extend_from_slice(text),
                    Esc::JsonValue => {
                        out.push(b'"');
                        escape_into(out, text, Esc::JsonString);
                        out.push(b'"');
                    }
                    Esc::Header => {
                        if let Some(&byte) = text.iter().find(|&&b| is_control(b)) {
                            return Err(InvalidValue { var: *v, byte });
                        }
                        out.extend_from_slice(text);
                    }
                    _ => escape_into(out, text, *esc),
                }
            }
        }
    }
    Ok(())
}

/// Literal request-target text as written in a scenario: kept, except the bytes a request
/// line cannot hold (spaces, quotes, control and non-ASCII characters...), percent-encoded.
/// `%`, `?`, `&` and `=` stay, so pre-encoded paths and queries pass unchanged.
fn encode_target_text(out: &mut Vec<u8>, text: &[u8]) {
    for &b in text {
        let keep = is_path_byte(b) || b == b'?';
        if keep {
            out.push(b);
        } else {
            push_percent(out, b);
        }
    }
}

fn push_percent(out: &mut Vec<u8>, b: u8) {
    out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
}

struct StrWriter<'a>(&'a mut String);

impl std::fmt::Write for StrWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.push_str(s);
        Ok(())
    }
}

fn itoa_buf() -> String {
    String::new()
}

fn fmt_u64(scratch: &mut String, n: u64) -> &[u8] {
    scratch.clear();
    let _ = write!(StrWriter(scratch), "{n}");
    scratch.as_bytes()
}

/// RFC 3986 unreserved characters: never escaped anywhere.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// What a path keeps as written: unreserved, sub-delims, `:` `@` `/`, and `%` (pre-encoded).
fn is_path_byte(b: u8) -> bool {
    is_unreserved(b)
        || matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        )
        || matches!(b, b':' | b'@' | b'/' | b'%')
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `text` with the escaping of its position.
pub fn escape_into(out: &mut Vec<u8>, text: &[u8], esc: Esc) {
    match esc {
        Esc::Raw => out.extend_from_slice(text),
        // Values known at load time were checked there; never let a line break through.
        Esc::Header => out.extend(text.iter().copied().filter(|&b| !is_control(b))),
        Esc::Path | Esc::Component => {
            for &b in text {
                let keep = if esc == Esc::Path {
                    is_path_byte(b)
                } else {
                    is_unreserved(b)
                };
                if keep {
                    out.push(b);
                } else {
                    push_percent(out, b);
                }
            }
        }
        Esc::JsonString | Esc::JsonValue => {
            for &b in text {
                match b {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    0..=0x1f => out.extend_from_slice(format!("\\u{:04x}", b).as_bytes()),
                    _ => out.push(b),
                }
            }
        }
    }
}

/// Compiles a text that may hold templates (validated at load time, so errors are rare:
/// they come only from scenarios built in code).
pub fn template(text: &str, names: &Names) -> Result<Template, String> {
    compile(text, names)
}

/// Appends a JSON body whose strings may hold templates.
pub fn json_body(v: &serde_json::Value, names: &Names, out: &mut Pieces) -> Result<(), String> {
    use serde_json::Value;
    match v {
        Value::String(s) if s.contains("{{") => {
            let t = compile(s, names)?;
            match t.single_var() {
                Some(var) => out.var(var, Esc::JsonValue),
                None => {
                    out.lit(b"\"");
                    out.template(&t, Esc::JsonString);
                    out.lit(b"\"");
                }
            }
        }
        Value::Array(a) => {
            out.lit(b"[");
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.lit(b",");
                }
                json_body(item, names, out)?;
            }
            out.lit(b"]");
        }
        Value::Object(m) => {
            out.lit(b"{");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.lit(b",");
                }
                out.lit(serde_json::to_string(k).unwrap_or_default().as_bytes());
                out.lit(b":");
                json_body(item, names, out)?;
            }
            out.lit(b"}");
        }
        other => out.lit(serde_json::to_string(other).unwrap_or_default().as_bytes()),
    }
    Ok(())
}

/// The body pieces of a request and its default content type.
pub fn body(b: &Body, names: &Names) -> Result<(Vec<Piece>, &'static str), String> {
    let mut p = Pieces::default();
    let ct = match b {
        Body::Json(v) => {
            json_body(v, names, &mut p)?;
            "application/json"
        }
        Body::Text(t) => {
            p.template(&compile(t, names)?, Esc::Raw);
            "text/plain; charset=utf-8"
        }
        Body::Form(fields) => {
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    p.lit(b"&");
                }
                let mut key = Vec::new();
                escape_into(&mut key, k.as_bytes(), Esc::Component);
                p.lit(&key);
                p.lit(b"=");
                p.template(&compile(v, names)?, Esc::Component);
            }
            "application/x-www-form-urlencoded"
        }
    };
    Ok((p.finish(), ct))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(pieces: &[Piece]) -> Vec<u8> {
        let vu = VuState::new(1);
        let mut out = Vec::new();
        render_pieces(
            pieces,
            &mut out,
            &mut RenderCx {
                vu: &vu,
                data: &[],
                rng: &mut fastrand::Rng::with_seed(1),
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn env_values_are_escaped_like_variables_in_a_target() {
        let value = "a b\"c?d&e=f\r\n";
        let t = Template {
            parts: vec![
                Part::Lit("/p q/".into()),
                Part::Env(value.into()),
                Part::Lit("?x=1&y=".into()),
                Part::Env(value.into()),
            ],
        };
        let mut p = Pieces::default();
        p.target(&t);
        assert_eq!(
            String::from_utf8(bytes_of(&p.finish())).unwrap(),
            "/p%20q/a%20b%22c%3Fd&e=f%0D%0A?x=1&y=a%20b%22c%3Fd%26e%3Df%0D%0A"
        );
    }

    #[test]
    fn a_variable_holding_a_line_break_makes_a_header_invalid() {
        let mut vu = VuState::new(1);
        vu.set_var(
            0,
            crate::vu::Captured {
                text: "ok\r\nX-Injected: 1".into(),
                number: false,
            },
        );
        let program = Program {
            target: vec![Piece::Lit(b"/".to_vec().into_boxed_slice())],
            headers: vec![(
                b"X-V".to_vec().into_boxed_slice(),
                vec![Piece::Var(Var::Capture(0), Esc::Header)],
            )],
            body: None,
        };
        let mut out = RequestParts::default();
        let err = program
            .render(
                &mut out,
                &mut RenderCx {
                    vu: &vu,
                    data: &[],
                    rng: &mut fastrand::Rng::with_seed(1),
                },
            )
            .unwrap_err();
        assert_eq!(err.byte, b'\r');
        assert!(err
            .describe()
            .contains("captured variable holds a line break"));
    }

    #[test]
    fn random_words_give_a_prompt_of_a_length_in_the_range() {
        let words = |a, b| {
            let text = bytes_of(&[Piece::Var(Var::RandomWords(a, b), Esc::JsonString)]);
            String::from_utf8(text).unwrap()
        };
        let mut lengths = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let text = words(3, 6);
            let n = text.split(' ').count();
            assert!((3..=6).contains(&n), "{text:?}");
            assert!(text
                .split(' ')
                .all(|w| loadlab_scenario::template::PROMPT_WORDS.contains(&w)));
            lengths.insert(n);
        }
        // bytes_of seeds the same generator each time: one length, drawn in the range.
        assert_eq!(lengths.len(), 1);
        assert_eq!(words(0, 0), "");
        assert_eq!(words(5, 5).split(' ').count(), 5);
    }

    #[test]
    fn escapes_by_position() {
        let mut out = Vec::new();
        escape_into(&mut out, b"a b/c?d", Esc::Path);
        assert_eq!(out, b"a%20b/c%3Fd");
        out.clear();
        escape_into(&mut out, b"a b&c=d", Esc::Component);
        assert_eq!(out, b"a%20b%26c%3Dd");
        out.clear();
        escape_into(&mut out, b"x\r\ny\0", Esc::Header);
        assert_eq!(out, b"xy");
        out.clear();
        encode_target_text(&mut out, b"/a b/\"q\"?x=1&y=%20#\r\n\xc3\xa9");
        assert_eq!(out, b"/a%20b/%22q%22?x=1&y=%20%23%0D%0A%C3%A9");
        out.clear();
        escape_into(&mut out, b"say \"hi\"\n", Esc::JsonString);
        assert_eq!(out, b"say \\\"hi\\\"\\n");
    }
}
