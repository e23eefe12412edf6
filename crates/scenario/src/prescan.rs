//! A pass over the raw text before the YAML parser sees it: refuses a file larger than
//! [`MAX_FILE_BYTES`] (parsing costs about 50 bytes of memory per byte of YAML), drops a UTF-8
//! byte-order mark (editors on Windows write one; the parser would take it for a second
//! document) and refuses flow collections nested deeper than [`MAX_NESTING`] — the YAML
//! parser's time grows with the square of that depth, this scan is linear (docs/limits.md).

use crate::error::{ErrorLocation, ScenarioError};
use crate::limits::{MAX_FILE_BYTES, MAX_NESTING};

/// The text without a leading byte-order mark, or an error if it nests too deep.
pub fn prescan<'a>(src: &'a str, file: &str) -> Result<&'a str, ScenarioError> {
    if src.len() > MAX_FILE_BYTES {
        return Err(ScenarioError::at(
            ErrorLocation::File {
                path: file.to_string(),
                line: 1,
                column: 1,
            },
            "",
            format!(
                "the file is larger than the limit of {} MiB for a scenario",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
        .with_hint(
            "a scenario describes flows, not data: put rows in a CSV file (`data:`) and split \
             very long flow lists; docs/limits.md lists every limit",
        ));
    }
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    if let Some((line, column)) = too_deep(src) {
        return Err(ScenarioError::at(
            ErrorLocation::File {
                path: file.to_string(),
                line,
                column,
            },
            "",
            format!("`[` / `{{` nested deeper than {MAX_NESTING} levels"),
        )
        .with_hint("flatten the structure; no scenario needs this much nesting"));
    }
    Ok(src)
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Plain,
    Single,
    Double,
    Comment,
}

/// Line and column (1-based) of the first `[` or `{` beyond [`MAX_NESTING`], skipping quoted
/// scalars, comments and block scalars (`|`, `>`). Brackets inside plain scalars are counted
/// too, which can only over-count a nesting no real file has.
fn too_deep(src: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut state = State::Plain;
    // Indentation of the line that opened a block scalar; lines indented more are its text.
    let mut block_scalar: Option<usize> = None;
    for (line_no, line) in src.split('\n').enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block_scalar {
            if line.trim().is_empty() || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        if state == State::Comment {
            state = State::Plain;
        }
        let mut prev = b' ';
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match state {
                State::Comment => break,
                State::Single => {
                    if b == b'\'' {
                        if bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            state = State::Plain;
                        }
                    }
                }
                State::Double => match b {
                    b'\\' => i += 1,
                    b'"' => state = State::Plain,
                    _ => {}
                },
                State::Plain => {
                    let token_start = matches!(prev, b' ' | b'\t' | b'[' | b'{' | b',' | b':');
                    match b {
                        b'#' if prev == b' ' || prev == b'\t' => state = State::Comment,
                        b'\'' if token_start => state = State::Single,
                        b'"' if token_start => state = State::Double,
                        b'|' | b'>' if token_start && depth == 0 => {
                            block_scalar = Some(indent);
                            break;
                        }
                        b'[' | b'{' => {
                            depth += 1;
                            if depth > MAX_NESTING {
                                return Some((line_no + 1, line[..i].chars().count() + 1));
                            }
                        }
                        b']' | b'}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
            }
            prev = b;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_a_byte_order_mark() {
        assert_eq!(prescan("\u{feff}name: x\n", "f").unwrap(), "name: x\n");
        assert_eq!(prescan("name: x\n", "f").unwrap(), "name: x\n");
    }

    #[test]
    fn refuses_deep_nesting_fast() {
        let deep = format!("name: x\njson: {}", "[".repeat(100_000));
        let started = std::time::Instant::now();
        let err = prescan(&deep, "f.yaml").unwrap_err().to_string();
        assert!(started.elapsed().as_millis() < 500);
        assert!(
            err.starts_with("f.yaml:2:71: `[` / `{` nested deeper than 64 levels"),
            "{err}"
        );
        let ok = format!("json: {}{}", "[".repeat(64), "]".repeat(64));
        assert!(prescan(&ok, "f").is_ok());
    }

    #[test]
    fn ignores_brackets_in_strings_comments_and_block_scalars() {
        let many = "[".repeat(200);
        for src in [
            format!("a: '{many}'\n"),
            format!("a: \"{many}\\\"\"\n"),
            format!("a: 1 # {many}\n"),
            format!("body: |\n  {many}\n  {many}\nb: 1\n"),
        ] {
            assert!(prescan(&src, "f").is_ok(), "{src}");
        }
        // After the block scalar ends, brackets count again.
        let after = format!("body: >\n  {many}\nb: {many}\n");
        assert!(prescan(&after, "f").is_err());
    }
}
