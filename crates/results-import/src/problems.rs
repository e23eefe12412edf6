//! Lines or rows of a file that could not be read: counted and named by line number, so an
//! import never silently drops part of a result.

/// At most this many line numbers are kept to be quoted; all are counted.
const QUOTED: usize = 20;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Malformed {
    pub count: u64,
    /// (line number, why), the first [`QUOTED`] of them.
    pub first: Vec<(u64, String)>,
}

impl Malformed {
    pub fn add(&mut self, line: u64, why: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.len() < QUOTED {
            self.first.push((line, why()));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `3 malformed lines: line 4: ...; line 9: ...` (None when every line was read).
    /// `` (N line(s) could not be read; the first, line L: why)``, or nothing.
    pub fn describe_briefly(&self) -> String {
        match self.first.first() {
            Some((n, why)) => format!(
                " ({} line(s) could not be read; the first, line {n}: {why})",
                self.count
            ),
            None => String::new(),
        }
    }

    pub fn describe(&self, file: &str) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let quoted: Vec<String> = self
            .first
            .iter()
            .map(|(n, why)| format!("  {file}:{n}: {why}"))
            .collect();
        let more = self.count.saturating_sub(self.first.len() as u64);
        let tail = if more > 0 {
            format!("\n  ... and {more} more")
        } else {
            String::new()
        };
        Some(format!(
            "{file}: {} line(s) could not be read and are not in the run:\n{}{tail}",
            self.count,
            quoted.join("\n")
        ))
    }
}
