//! A script nested thousands of levels deep would overflow the stack of the recursive parser
//! (an abort, not an error): its depth is measured by a light scan before anything recurses,
//! and a script past the limit is refused naming the line.

/// Deepest bracket nesting (`(`, `[`, `{`, `${`) accepted; real scripts stay under 30.
pub const MAX_BRACKETS: usize = 200;
/// Most constructs that nest without brackets (`!`, unary `-`, `if`, `? :`, `=>`, `=`, `new`,
/// `await`...) accepted between two `;`, `,`, `{` or `}`; real code stays under 20.
pub const MAX_CHAIN: usize = 400;

/// `Err((line, what))` for a script nested deeper than the parser may recurse.
pub fn check(source: &str) -> Result<(), (usize, String)> {
    let mut scan = Scan::default();
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        i = scan.step(bytes, i)?;
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Bracket,
    /// `${` inside a template literal: its `}` goes back to the template's text.
    TemplateExpr,
}

#[derive(Default)]
struct Scan {
    frames: Vec<Frame>,
    line: usize,
    chain: usize,
    /// The last significant byte of code (for telling a regex or a unary sign from division
    /// or a binary operator).
    prev: u8,
}

impl Scan {
    fn line(&self) -> usize {
        self.line + 1
    }

    fn deeper(&mut self, frame: Frame) -> Result<(), (usize, String)> {
        self.frames.push(frame);
        if self.frames.len() > MAX_BRACKETS {
            return Err((
                self.line(),
                format!("brackets nested deeper than {MAX_BRACKETS} levels"),
            ));
        }
        Ok(())
    }

    fn chained(&mut self) -> Result<(), (usize, String)> {
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            return Err((
                self.line(),
                format!("more than {MAX_CHAIN} nested operators or statements in one expression"),
            ));
        }
        Ok(())
    }

    /// Reads one token at `i`; the index after it.
    fn step(&mut self, b: &[u8], i: usize) -> Result<usize, (usize, String)> {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        match c {
            b'\n' => {
                self.line += 1;
                return Ok(i + 1);
            }
            b' ' | b'\t' | b'\r' => return Ok(i + 1),
            b'/' if next == b'/' => return Ok(skip_until(b, i, b"\n")),
            b'/' if next == b'*' => {
                let end = skip_until(b, i + 2, b"*/");
                self.line += count_lines(&b[i..end]);
                return Ok((end + 2).min(b.len()));
            }
            b'\'' | b'"' => {
                let end = skip_string(b, i, c);
                self.prev = c;
                return Ok(end);
            }
            b'`' => {
                let end = self.template(b, i + 1)?;
                self.prev = b'`';
                return Ok(end);
            }
            b'/' if b"(,=:[!&|?{};+-*%<>~^".contains(&self.prev) || self.prev == 0 => {
                let end = skip_regex(b, i);
                self.prev = b'/';
                return Ok(end);
            }
            b'(' | b'[' | b'{' => {
                self.deeper(Frame::Bracket)?;
                if c == b'{' {
                    self.chain = 0;
                }
            }
            b')' | b']' => {
                self.frames.pop();
            }
            b'}' => {
                self.chain = 0;
                if self.frames.pop() == Some(Frame::TemplateExpr) {
                    self.prev = b'`';
                    return self.template(b, i + 1);
                }
            }
            b';' | b',' => self.chain = 0,
            b'!' | b'~' | b'?' => self.chained()?,
            b'-' | b'+' if b"=([,!~+-*/%&|^<>?:".contains(&self.prev) || self.prev == 0 => {
                self.chained()?
            }
            b'=' if next != b'=' && !b"=!<>".contains(&self.prev) => self.chained()?,
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                let end = i + b[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'$')
                    .count();
                let word = &b[i..end];
                let nests: &[&[u8]] = &[
                    b"if", b"else", b"for", b"while", b"do", b"new", b"await", b"typeof", b"void",
                    b"delete", b"yield", b"with",
                ];
                if nests.contains(&word) {
                    self.chained()?;
                }
                self.prev = b'a';
                return Ok(end);
            }
            _ => {}
        }
        self.prev = c;
        Ok(i + 1)
    }

    /// The text of a template literal from `i` (after its backtick): to its closing backtick,
    /// or into a `${` expression.
    fn template(&mut self, b: &[u8], mut i: usize) -> Result<usize, (usize, String)> {
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'`' => return Ok(i + 1),
                b'$' if b.get(i + 1) == Some(&b'{') => {
                    self.deeper(Frame::TemplateExpr)?;
                    self.prev = b'{';
                    return Ok(i + 2);
                }
                b'\n' => {
                    self.line += 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        Ok(b.len())
    }
}

fn skip_until(b: &[u8], from: usize, end: &[u8]) -> usize {
    b[from..]
        .windows(end.len())
        .position(|w| w == end)
        .map_or(b.len(), |p| from + p)
}

fn count_lines(b: &[u8]) -> usize {
    b.iter().filter(|c| **c == b'\n').count()
}

fn skip_string(b: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

fn skip_regex(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    let mut class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1
            }
            b']' => {
                class = false;
                i += 1
            }
            b'/' if !class => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_scripts_pass_and_deep_ones_are_refused_with_a_line() {
        let real = "import http from 'k6/http';\nconst re = /[(]{3}/g;\nexport default function () {\n  const r = http.get(`${BASE}/a/${id}?q=${'('.repeat(3)}`);\n  check(r, { 'ok': (r) => r.status === 200 && !r.body.includes('{') });\n  x = a ? b : c ? d : e;\n}\n";
        assert_eq!(check(real), Ok(()));
        let deep = format!("const x = {}1{};\n", "[".repeat(6000), "]".repeat(6000));
        let (line, what) = check(&format!("// a comment\n{deep}")).unwrap_err();
        assert_eq!(line, 2);
        assert!(what.contains("200"), "{what}");
        let unary = format!("const x = {}1;", "!".repeat(6000));
        assert!(check(&unary).is_err());
        let ifs = format!("{} x();", "if (a) ".repeat(6000));
        assert!(check(&ifs).is_err());
        let minus = format!("const x = {}1;", "- ".repeat(6000));
        assert!(check(&minus).is_err());
        let long_sum = format!("const x = 1{};", " + 1".repeat(6000));
        assert_eq!(check(&long_sum), Ok(()), "a long flat sum is not nested");
    }
}
