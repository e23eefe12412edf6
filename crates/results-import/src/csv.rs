//! A CSV line split into fields (RFC 4180 quoting: `"a,b"`, `""` for a quote), reusing the
//! caller's vector. Enough for the tools' result files, whose records are one line each.

/// Splits `line` at `sep` into `out` (cleared first).
pub fn split(line: &str, sep: char, out: &mut Vec<String>) {
    out.clear();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' if quoted => quoted = false,
            '"' if field.is_empty() => quoted = true,
            c if c == sep && !quoted => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_and_separators() {
        let mut f = Vec::new();
        super::split(r#"1,"a,b","say ""hi""",,x"#, ',', &mut f);
        assert_eq!(f, vec!["1", "a,b", "say \"hi\"", "", "x"]);
    }
}
