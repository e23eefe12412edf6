//! Terminal styling: ANSI colours only when asked for, so logs and pipes stay plain text.

/// How to draw a terminal report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Emit ANSI colour codes (the binary sets this when stdout is a TTY).
    pub color: bool,
}

impl Style {
    /// No escape codes: for files, pipes and CI logs.
    pub const PLAIN: Style = Style { color: false };
    /// ANSI colours: for an interactive terminal.
    pub const COLOR: Style = Style { color: true };

    pub(crate) fn bold(self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
        self.paint("2", s)
    }
    pub(crate) fn red(self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn bold_red(self, s: &str) -> String {
        self.paint("1;31", s)
    }
    pub(crate) fn green(self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn yellow(self, s: &str) -> String {
        self.paint("33", s)
    }

    fn paint(self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}
