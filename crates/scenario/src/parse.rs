//! Entry points: a scenario from a YAML file, or from the flags of `loadlab run --url`.

use crate::error::{ErrorLocation, ScenarioError};
use crate::limits::MAX_FILE_BYTES;
use crate::locate::{Ctx, PathIndex};
use crate::mistake::{mistake, Mistake};
use crate::model::*;
use crate::raw::{RawScenario, TOP_KEYS};
use crate::suggest::closest;
use crate::validate;
use serde::de::DeserializeOwned;
use std::path::Path;

/// The text of a scenario file and its name as shown in errors.
/// At most one byte more than [`MAX_FILE_BYTES`] is read, so that a huge file (or a pipe
/// that never ends) is refused without being held in memory; `prescan` names the limit.
pub(crate) fn read_scenario_file(path: &Path) -> Result<(String, String), ScenarioError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let cannot_read = |e: std::io::Error| {
        ScenarioError::at(
            ErrorLocation::Unknown,
            "",
            format!("cannot read scenario file {shown}: {e}"),
        )
    };
    let file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    let src = String::from_utf8(bytes).map_err(|_| {
        cannot_read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })?;
    Ok((src, shown))
}

impl Scenario {
    /// Reads and parses a scenario file.
    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let (src, shown) = read_scenario_file(path)?;
        Scenario::parse(&src, &shown)
    }

    /// Parses YAML source; `file` names it in errors.
    pub fn parse(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let src = crate::prescan::prescan(src, file)?;
        let raw: RawScenario =
            serde_yaml_ng::from_str(src).map_err(|e| serde_error::<RawScenario>(&e, src, file))?;
        let index = PathIndex::build(src);
        let ctx = Ctx::file(file, &index);
        let stem = Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        validate::scenario(raw, &ctx, &stem)
    }
}

/// Parses only the `monitor:` section of a YAML document (other keys are ignored), with
/// the same checks and `file:line:column` errors as a whole scenario. For tools that sample
/// without running load (`loadlab-monitor`'s `watch` example).
pub fn parse_monitor_section(
    src: &str,
    file: &str,
) -> Result<crate::monitor::MonitorConfig, ScenarioError> {
    #[derive(serde::Deserialize)]
    struct OnlyMonitor {
        monitor: Option<crate::raw::RawMonitor>,
    }
    let raw: OnlyMonitor =
        serde_yaml_ng::from_str(src).map_err(|e| serde_error::<OnlyMonitor>(&e, src, file))?;
    let index = PathIndex::build(src);
    let ctx = Ctx::file(file, &index);
    validate::monitor::monitor(raw.monitor, &ctx)
}

/// Rewrites serde_yaml's message into `file:line:col: field: message` with a suggestion.
/// What kind of mistake it was comes from reading `src` again as `T` (see `crate::mistake`),
/// not from the message's words.
pub(crate) fn serde_error<T: DeserializeOwned>(
    e: &serde_yaml_ng::Error,
    src: &str,
    file: &str,
) -> ScenarioError {
    let (line, column) = e
        .location()
        .map(|l| (l.line(), l.column()))
        .unwrap_or((1, 1));
    let mut text = e.to_string();
    if let Some(cut) = text.rfind(" at line ") {
        text.truncate(cut);
    }
    let (field, message) = match text.split_once(": ") {
        Some((head, rest)) if !head.contains(' ') && !head.is_empty() => {
            (head.to_string(), rest.to_string())
        }
        _ => (String::new(), text.clone()),
    };
    let message = humanize_expected(&message);
    let location = ErrorLocation::File {
        path: file.to_string(),
        line,
        column,
    };
    let mut err = ScenarioError::at(location, &field, message);
    match mistake::<T>(src) {
        Mistake::UnknownField { name, expected } => {
            name_the_unknown(&mut err, "field", &name, expected, &field)
        }
        Mistake::UnknownVariant { name, expected } => {
            name_the_unknown(&mut err, "value", &name, expected, &field)
        }
        Mistake::MissingField => err.hint = Some("add the field; see docs/scenario.md".into()),
        Mistake::Other => {}
    }
    if (line, column) == (1, 1) {
        // serde reports a key given twice at the top level on the whole document.
        if let Some((key, first, again)) = repeated_top_level_key(src) {
            err.location = ErrorLocation::File {
                path: file.to_string(),
                line: again,
                column: 1,
            };
            err.message = format!("`{key}` is given twice (first at line {first})");
            err.hint = Some("keep one of them (a later one does not add to the first)".into());
        }
    }
    let at = src.lines().nth(line.saturating_sub(1)).unwrap_or("");
    if at
        .chars()
        .take_while(|c| c.is_whitespace())
        .any(|c| c == '\t')
    {
        err.hint = Some("this line is indented with a tab: YAML indents with spaces only".into());
    }
    err
}

/// The first top-level key written twice: its name, and the lines of both.
fn repeated_top_level_key(src: &str) -> Option<(String, usize, usize)> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, line) in src.lines().enumerate() {
        if line.starts_with([' ', '\t', '#', '-']) {
            continue;
        }
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        if key.is_empty() || key.contains(' ') {
            continue;
        }
        if let Some(first) = seen.insert(key, i + 1) {
            return Some((key.to_string(), first, i + 1));
        }
    }
    None
}

/// `unknown field `x``, with the closest of what `field` takes as the hint (all of it when
/// none is close); a top-level key is compared with every top-level key.
fn name_the_unknown(
    err: &mut ScenarioError,
    kind: &str,
    bad: &str,
    expected: &[&str],
    field: &str,
) {
    err.message = format!("unknown {kind} `{bad}`");
    let candidates: &[&str] = if expected.is_empty() && field.is_empty() {
        TOP_KEYS
    } else {
        expected
    };
    err.hint = Some(match closest(bad, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("expected one of: {}", candidates.join(", ")),
    });
}

/// Replaces serde's internal type names (`struct RawLoad`) with what the user should write.
fn humanize_expected(message: &str) -> String {
    match message.find("expected struct ") {
        Some(i) => format!("{}expected a mapping of `key: value` fields", &message[..i]),
        None => message.replace("expected a sequence", "expected a list"),
    }
}

/// What `loadlab run --url ...` asks for; becomes an ordinary [`Scenario`].
#[derive(Debug, Clone, Default)]
pub struct UrlTest {
    pub url: String,
    pub method: Option<String>,
    pub headers: Vec<String>,
    pub body: Option<String>,
    /// The whole load of the test (`--vus`/`--rate`, `--duration`, …).
    pub load: crate::load_flags::LoadFlags,
    pub timeout: Option<std::time::Duration>,
}

impl UrlTest {
    /// The scenario these flags describe, checked by the same rules as a scenario file
    /// (`validate::resolved`); errors name the flag.
    pub fn into_scenario(self) -> Result<Scenario, ScenarioError> {
        let (target, auth) = crate::addresses::check_target_credentials(&self.url)
            .map_err(|m| ScenarioError::flag("--url", m, None))?;
        let method = match &self.method {
            None => Method::Get,
            Some(m) => Method::parse(m).ok_or_else(|| {
                ScenarioError::flag(
                    "--method",
                    format!("unknown method `{m}`"),
                    Some("use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS".into()),
                )
            })?,
        };
        let mut headers = Vec::new();
        for h in &self.headers {
            let (k, v) = h.split_once(':').ok_or_else(|| {
                ScenarioError::flag(
                    "--header",
                    format!("`{}` is not `Name: value`", h.escape_debug()),
                    Some("e.g. --header 'Authorization: Bearer abc'".into()),
                )
            })?;
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT);
        let load = self.load.constant_load(None)?;
        let path_start = target
            .find("://")
            .map(|i| i + 3)
            .and_then(|i| target[i..].find(['/', '?']).map(|j| i + j));
        let (base, path) = match path_start {
            Some(i) if target[i..].starts_with('?') => {
                (target[..i].to_string(), format!("/{}", &target[i..]))
            }
            Some(i) => (target[..i].to_string(), target[i..].to_string()),
            None => (target.clone(), "/".to_string()),
        };
        let body = self.body.map(Body::Text);
        let scenario = Scenario {
            name: format!("{} {}", method.as_str(), target),
            source: None,
            target: Some(base),
            defaults: Defaults {
                timeout,
                ..Defaults::default()
            },
            load,
            warmup: std::time::Duration::ZERO,
            thresholds: Vec::new(),
            flows: vec![Flow {
                name: "default".into(),
                weight: 1,
                steps: vec![Step::Request(Box::new(RequestStep {
                    name: format!("{} {}", method.as_str(), path),
                    group: None,
                    method,
                    url: path,
                    headers,
                    body,
                    timeout: None,
                    query: Vec::new(),
                    tags: Vec::new(),
                    captures: Vec::new(),
                    checks: Vec::new(),
                    auth,
                    http_version: None,
                    grpc: None,
                    stream: None,
                }))],
            }],
            connections: ConnectionPolicy::PerVu,
            http: Default::default(),
            source_addresses: Vec::new(),
            insecure: false,
            data: Vec::new(),
            monitor: crate::monitor::MonitorConfig::default(),
            outputs: Vec::new(),
        };
        validate::resolved(&scenario, true, &Ctx::flags())?;
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{MonitorConfig, ProcessSelector};

    #[test]
    fn parses_the_section_alone() {
        let src = "name: ignored\nmonitor:\n  processes:\n    - { name: t, port: 8080 }\n";
        let config = parse_monitor_section(src, "m.yaml").unwrap();
        assert_eq!(config.processes[0].selector, ProcessSelector::Port(8080));
        assert_eq!(
            parse_monitor_section("other: 1\n", "m.yaml").unwrap(),
            MonitorConfig::default()
        );
        let err = parse_monitor_section("monitor:\n  processes:\n    - { name: t }\n", "m.yaml")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("m.yaml:3:9: monitor.processes[0]: give exactly one of"),
            "{err}"
        );
    }
}
