//! What an import did, for the person who must finish the scenario: printed by the CLI,
//! asserted on by tests.

use std::fmt;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// One line per thing done ("kept 6 of 31 requests", "3 think steps").
    pub done: Vec<String>,
    pub correlations: Vec<Correlation>,
    /// Values in requests that look generated (ids, timestamps) but come from no response.
    pub dynamic: Vec<Finding>,
    /// Environment variables the scenario reads (`{{ env.NAME }}`): set them before a run.
    pub variables: Vec<Variable>,
    pub unsupported: Vec<Unsupported>,
}

/// A response value reused by later requests: captured once, templated at each use.
#[derive(Debug, Clone, PartialEq)]
pub struct Correlation {
    pub variable: String,
    /// The step that captures it.
    pub step: String,
    /// How: `$.token`, `header X-Csrf`, `cookie SESSION`.
    pub capture: String,
    /// Where it is used: `GET /api/applications/{id} path`, `... header Authorization`.
    pub uses: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub step: String,
    /// `path`, `query q`, `json $.id`, `header X-Request-Id`.
    pub place: String,
    pub value: String,
    /// `a UUID`, `a timestamp in ms`, `a long hex string`.
    pub looks_like: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported {
    /// 1-based line in the source, when the source has lines.
    pub line: Option<usize>,
    pub what: String,
}

impl Report {
    pub(crate) fn did(&mut self, line: impl Into<String>) {
        self.done.push(line.into());
    }

    pub(crate) fn unsupported(&mut self, line: Option<usize>, what: impl Into<String>) {
        self.unsupported.push(Unsupported {
            line,
            what: what.into(),
        });
    }

    /// Records an environment variable once, whatever the number of steps using it.
    pub(crate) fn variable(&mut self, name: &str, why: impl Into<String>) {
        if !self.variables.iter().any(|v| v.name == name) {
            self.variables.push(Variable {
                name: name.to_string(),
                why: why.into(),
            });
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.done {
            writeln!(f, "{line}")?;
        }
        if !self.correlations.is_empty() {
            writeln!(f, "correlations ({}):", self.correlations.len())?;
            for c in &self.correlations {
                writeln!(
                    f,
                    "  {{{{ {} }}}} captured by `{}` ({}), used by {}",
                    c.variable,
                    c.step,
                    c.capture,
                    c.uses.join("; ")
                )?;
            }
        }
        if !self.dynamic.is_empty() {
            writeln!(
                f,
                "values that look dynamic but come from no recorded response ({}): check them",
                self.dynamic.len()
            )?;
            for d in &self.dynamic {
                writeln!(
                    f,
                    "  `{}` {}: {} looks like {}",
                    d.step, d.place, d.value, d.looks_like
                )?;
            }
        }
        if !self.variables.is_empty() {
            writeln!(f, "variables to set before validating or running:")?;
            for v in &self.variables {
                writeln!(f, "  export {}=...   # {}", v.name, v.why)?;
            }
        }
        if !self.unsupported.is_empty() {
            writeln!(f, "not converted ({}):", self.unsupported.len())?;
            for u in &self.unsupported {
                match u.line {
                    Some(line) => writeln!(f, "  line {line}: {}", u.what)?,
                    None => writeln!(f, "  {}", u.what)?,
                }
            }
        }
        Ok(())
    }
}
