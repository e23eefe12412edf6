//! The flag form of a monitored source, `--monitor NAME=WHAT` on `run`, `study` and
//! `capacity`: `target=1234` (a pid), `target=port:8080`, `jvm=match:java .*ticket`,
//! `db=cgroup:/sys/fs/cgroup/system.slice/mysql.service`, `db=container:3f2a9c1b7e4d`.

use super::{is_valid_source_name, CgroupLocation, CgroupWatch, ProcessSelector, ProcessWatch};
use crate::error::ScenarioError;

/// What one `--monitor` flag adds to the scenario's `monitor:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorFlag {
    Process(ProcessWatch),
    Cgroup(CgroupWatch),
}

const FLAG: &str = "--monitor";
const FORMS: &str = "write NAME=PID, NAME=port:8080, NAME=match:REGEX, NAME=cgroup:/sys/fs/cgroup/... or NAME=container:ID, e.g. --monitor target=port:8080";

/// Parses the value of one `--monitor` flag.
pub fn parse_monitor_flag(text: &str) -> Result<MonitorFlag, ScenarioError> {
    let bad = |message: String| ScenarioError::flag(FLAG, message, Some(FORMS.into()));
    let (name, what) = text
        .split_once('=')
        .ok_or_else(|| bad(format!("`{text}` has no `=`")))?;
    let name = name.trim();
    if !is_valid_source_name(name) {
        return Err(bad(format!(
            "`{name}` is not a usable name: use letters, digits, `_` and `-` (it names the series, e.g. processes.{}.cpu_percent)",
            if name.is_empty() { "target" } else { "NAME" }
        )));
    }
    let name = name.to_string();
    let what = what.trim();
    let (kind, value) = match what.split_once(':') {
        Some((kind, value)) if ["pid", "port", "match", "cgroup", "container"].contains(&kind) => {
            (kind, value.trim())
        }
        _ => ("pid", what),
    };
    let process = |selector| {
        MonitorFlag::Process(ProcessWatch {
            name: name.clone(),
            selector,
        })
    };
    match kind {
        "pid" => match value.parse::<u32>() {
            Ok(pid) if pid > 0 => Ok(process(ProcessSelector::Pid(pid))),
            _ if what.starts_with("pid:") => Err(bad(format!("`{value}` is not a process id"))),
            _ => Err(bad(format!(
                "`{what}` is not a process id nor one of port:, match:, cgroup:, container:"
            ))),
        },
        "port" => match value.parse::<u16>() {
            Ok(port) if port > 0 => Ok(process(ProcessSelector::Port(port))),
            _ => Err(bad(format!("`{value}` is not a TCP port (1-65535)"))),
        },
        "match" => {
            check_regex(value).map_err(bad)?;
            Ok(process(ProcessSelector::Match(value.to_string())))
        }
        "cgroup" => Ok(MonitorFlag::Cgroup(CgroupWatch {
            name,
            location: CgroupLocation::Path(check_cgroup_path(value).map_err(bad)?.into()),
        })),
        _ => Ok(MonitorFlag::Cgroup(CgroupWatch {
            name,
            location: CgroupLocation::Container(check_container_id(value).map_err(bad)?),
        })),
    }
}

/// A command-line pattern must compile and must not be empty (it would match everything).
pub(crate) fn check_regex(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("the command-line pattern is empty: it would match every process".into());
    }
    regex::Regex::new(pattern)
        .map(|_| ())
        .map_err(|e| format!("invalid regex `{pattern}`: {}", regex_error_text(&e)))
}

/// The regex crate's syntax errors span several lines (the pattern, a caret, the reason);
/// a one-line message keeps only the reason.
pub(crate) fn regex_error_text(e: &regex::Error) -> String {
    let text = e.to_string();
    match text.lines().last() {
        Some(last) if text.contains('\n') => last.trim_start_matches("error: ").to_string(),
        _ => text,
    }
}

/// A cgroup directory: an absolute path.
pub(crate) fn check_cgroup_path(path: &str) -> Result<&str, String> {
    if path.starts_with('/') {
        Ok(path)
    } else {
        Err(format!(
            "cgroup path `{path}` is not absolute: give the directory, e.g. /sys/fs/cgroup/system.slice/mysql.service"
        ))
    }
}

/// A container id: 12 to 64 hex digits (`docker ps` shows 12), lowercased.
pub(crate) fn check_container_id(id: &str) -> Result<String, String> {
    let id = id.trim().to_ascii_lowercase();
    if (12..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(format!(
            "`{id}` is not a container id: give at least 12 hex digits as `docker ps` shows them"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_forms_table() {
        let proc_ = |name: &str, selector| {
            MonitorFlag::Process(ProcessWatch {
                name: name.into(),
                selector,
            })
        };
        let ok = [
            ("target=1234", proc_("target", ProcessSelector::Pid(1234))),
            ("target=pid:77", proc_("target", ProcessSelector::Pid(77))),
            (
                "target=port:8080",
                proc_("target", ProcessSelector::Port(8080)),
            ),
            (
                " api = port: 443 ",
                proc_("api", ProcessSelector::Port(443)),
            ),
            (
                "jvm=match:java .*ticket",
                proc_("jvm", ProcessSelector::Match("java .*ticket".into())),
            ),
            (
                "db=cgroup:/sys/fs/cgroup/system.slice/mysql.service",
                MonitorFlag::Cgroup(CgroupWatch {
                    name: "db".into(),
                    location: CgroupLocation::Path(
                        "/sys/fs/cgroup/system.slice/mysql.service".into(),
                    ),
                }),
            ),
            (
                "db=container:3F2A9C1B7E4D",
                MonitorFlag::Cgroup(CgroupWatch {
                    name: "db".into(),
                    location: CgroupLocation::Container("3f2a9c1b7e4d".into()),
                }),
            ),
        ];
        for (text, want) in ok {
            assert_eq!(parse_monitor_flag(text).unwrap(), want, "{text}");
        }
        let bad = [
            ("target", "`target` has no `=`"),
            ("=1234", "`` is not a usable name"),
            ("a.b=1234", "`a.b` is not a usable name"),
            ("target=0", "is not a process id"),
            ("target=abc", "`abc` is not a process id nor one of port:"),
            ("target=pid:x", "`x` is not a process id"),
            ("target=port:70000", "`70000` is not a TCP port"),
            ("target=port:0", "`0` is not a TCP port"),
            ("target=match:(", "invalid regex `(`"),
            ("target=match:", "would match every process"),
            ("db=cgroup:system.slice", "is not absolute"),
            ("db=container:xyz", "is not a container id"),
        ];
        for (text, says) in bad {
            let err = parse_monitor_flag(text).unwrap_err();
            let shown = err.to_string();
            assert!(shown.starts_with("--monitor: "), "{text}: {shown}");
            assert!(shown.contains(says), "{text}: {shown}");
            assert!(shown.contains("hint: write NAME=PID"), "{text}: {shown}");
        }
    }
}
