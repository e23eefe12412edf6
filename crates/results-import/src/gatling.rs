//! Gatling's `simulation.log` (the text log of Gatling 3.0 to 3.11; 3.12 made it binary): tab
//! separated records. `RUN` names the simulation and Gatling's version; `REQUEST groups name
//! start end OK|KO message` (ms since the epoch) is one request, its step the name, its group
//! the group path; `USER scenario START|END time` gives the users active over time. Gatling
//! logs no status code: a KO's message says what failed (`... but actually found 500`).
//! Gatling 3.0 to 3.3 wrote a user id after the record's kind (`REQUEST user groups name start
//! end OK|KO message`, `USER scenario user START|END start end`): both layouts are read, told
//! apart record by record by where `OK|KO` and `START|END` stand.

use crate::builder::RecordBuilder;
use crate::lines::Lines;
use crate::problems::Malformed;
use crate::sample::{Request, StepKey};
use crate::ReadError;
use loadlab_metrics::{ErrorKind, LoadModel};
use std::collections::HashMap;
use std::io::BufRead;

/// The error kind of a KO's message, and the status it names when it names one.
fn failure(message: &str) -> (ErrorKind, u16) {
    let found = message
        .rsplit_once("found ")
        .and_then(|(_, n)| n.trim().get(..3)?.parse::<u16>().ok());
    let m = message.to_ascii_lowercase();
    match found {
        Some(s @ 500..=599) => (ErrorKind::Http5xx, s),
        Some(s @ 400..=499) => (ErrorKind::Http4xx, s),
        Some(s) => (ErrorKind::CheckFailed, s),
        None if m.contains("connection refused") => (ErrorKind::ConnectRefused, 0),
        None if m.contains("timeout") || m.contains("timed out") => (ErrorKind::Timeout, 0),
        None if m.contains("reset") || m.contains("closed") => (ErrorKind::Reset, 0),
        None => (ErrorKind::CheckFailed, 0),
    }
}

fn is_outcome(field: &str) -> bool {
    matches!(field.trim(), "OK" | "KO")
}

/// A USER record's `START`/`END` and when (ms): `USER scenario START|END time` (3.4-3.11),
/// `USER scenario user START|END start end` (3.0-3.3, the end time for an `END`), or without
/// the scenario, `USER START|END start end` (Taurus's Gatling logs).
fn user_event<'a>(f: &[&'a str]) -> Option<(&'a str, i64)> {
    let ms = |i: usize| f.get(i)?.trim().parse::<i64>().ok();
    match f[1].trim() {
        "START" if ms(2).is_some() => return Some(("START", ms(2)?)),
        "END" if ms(2).is_some() => return Some(("END", ms(3).or_else(|| ms(2))?)),
        _ => {}
    }
    match (f[2].trim(), f[3].trim()) {
        (event @ ("START" | "END"), _) => Some((event, ms(3)?)),
        (_, "START") => Some(("START", ms(4)?)),
        (_, "END") => Some(("END", ms(5).or_else(|| ms(4))?)),
        _ => None,
    }
}

/// `RUN\tgatling_example.GoogleTest\tgoogletest\t…` → `googletest`.
pub fn simulation_id(line: &str) -> Option<String> {
    let f: Vec<&str> = line.trim_start_matches('\u{feff}').split('\t').collect();
    (f.first() == Some(&"RUN"))
        .then(|| f.get(2).or(f.get(1)))
        .flatten()
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
}

/// What reading a log gathers beyond the builder: Gatling's version, the users active, the
/// steps seen, and whether requests of Gatling 2.x's layout came (to refuse the file).
#[derive(Default)]
struct Log {
    version: Option<String>,
    users: u64,
    steps: HashMap<(String, String), usize>,
    requests: u64,
    v2: Option<u64>,
}

/// Reads a simulation.log; returns Gatling's version from its `RUN` record.
pub fn read(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<Option<String>, ReadError> {
    builder.load.model = LoadModel::Closed;
    let mut lines = Lines::new(input);
    let mut log = Log::default();
    while let Some((n, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        builder.at_line(n);
        match f[0] {
            "RUN" => {
                log.version = f
                    .last()
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
            }
            "REQUEST" if is_v2_request(&f) => {
                log.v2.get_or_insert(n);
                malformed.add(n, || "a REQUEST record of Gatling 2.x's layout".to_string());
            }
            "USER" if f.len() >= 4 => log.user(&f, n, builder, malformed)?,
            "REQUEST" if f.len() >= 6 => log.request(&f, n, builder, malformed)?,
            "GROUP" | "ERROR" | "ASSERTION" => {}
            _ => malformed.add(n, || {
                "not a Gatling 3.0-3.11 simulation.log record (RUN, USER, REQUEST, GROUP, ERROR)"
                    .to_string()
            }),
        }
    }
    log.finish()
}

impl Log {
    /// A `USER` record: one user more or less from its time on.
    fn user(
        &mut self,
        f: &[&str],
        n: u64,
        builder: &mut RecordBuilder,
        malformed: &mut Malformed,
    ) -> Result<(), ReadError> {
        let Some((event, at_ms)) = user_event(f) else {
            malformed.add(n, || "a USER record without a time in ms".to_string());
            return Ok(());
        };
        match event {
            "START" => self.users += 1,
            "END" => self.users = self.users.saturating_sub(1),
            _ => {}
        }
        builder.active(at_ms * 1000, self.users)
    }

    /// A `REQUEST` record of the 3.0-3.3 or the 3.4-3.11 layout: one request.
    fn request(
        &mut self,
        f: &[&str],
        n: u64,
        builder: &mut RecordBuilder,
        malformed: &mut Malformed,
    ) -> Result<(), ReadError> {
        // 3.0-3.3: a user id first; the fields after it as 3.4 wrote them.
        let f = if !is_outcome(f[5]) && f.get(6).is_some_and(|o| is_outcome(o)) {
            &f[1..]
        } else {
            f
        };
        let (Ok(start), Ok(end)) = (f[3].trim().parse::<i64>(), f[4].trim().parse::<i64>()) else {
            malformed.add(n, || {
                "a REQUEST record without start and end in ms (Gatling 3.0-3.11 layouts)"
                    .to_string()
            });
            return Ok(());
        };
        let step = self.step(f[2], f[1], builder);
        let message = f.get(6).map(|m| m.trim()).unwrap_or("");
        let (error, status) = match f[5] {
            "OK" => (None, 0),
            _ => {
                let (kind, status) = failure(message);
                (Some(kind), status)
            }
        };
        self.requests += 1;
        // The request first: the run's time grid starts at the first one's start.
        builder.request(
            step,
            &Request {
                end_us: end * 1000,
                duration_us: (end - start).max(0) as u64 * 1000,
                status,
                error,
                ..Request::default()
            },
        )?;
        if let (Some(kind), false) = (error, message.is_empty()) {
            builder.error_example(end * 1000, kind, message)?;
        }
        Ok(())
    }

    /// The step of request `name` in group path `groups` (`a,b` → `a / b`).
    fn step(&mut self, name: &str, groups: &str, builder: &mut RecordBuilder) -> usize {
        let key = (name.to_string(), groups.to_string());
        if let Some(&i) = self.steps.get(&key) {
            return i;
        }
        let i = builder.step(&StepKey {
            name: key.0.clone(),
            group: (!key.1.is_empty()).then(|| key.1.replace(',', " / ")),
            tags: Vec::new(),
        });
        self.steps.insert(key, i);
        i
    }

    /// Gatling's version, or the refusal of a Gatling 2.x log (no request of 3.x's layout).
    fn finish(self) -> Result<Option<String>, ReadError> {
        match self.v2 {
            Some(line) if self.requests == 0 => Err(ReadError::Bad(format!(
                "line {line}: this is a Gatling 2.x simulation.log (`REQUEST scenario userId groups name start end OK|KO message`{}), which loadlab does not read: it reads Gatling 3.0-3.11 logs; re-run the simulation with Gatling 3.0-3.11",
                self.version.map(|v| format!(", RUN record of version {v}")).unwrap_or_default()
            ))),
            _ => Ok(self.version),
        }
    }
}

/// Gatling 2.x's `REQUEST scenario userId groups name start end OK|KO message` (2.0-2.1: four
/// times): the outcome after a scenario, a user id and the times, where 3.x writes times.
fn is_v2_request(f: &[&str]) -> bool {
    let ms = |i: usize| f.get(i).is_some_and(|v| v.trim().parse::<i64>().is_ok());
    let outcome = |i: usize| f.get(i).is_some_and(|o| is_outcome(o));
    ms(5) && ms(6) && (outcome(7) || (ms(7) && ms(8) && outcome(9)))
}

#[cfg(test)]
mod tests {
    use super::{simulation_id, user_event};

    #[test]
    fn user_records_of_every_layout_give_their_event_and_time() {
        let cases = [
            ("USER\tscn\tSTART\t1000", Some(("START", 1000))),
            ("USER\tscn\tEND\t2000", Some(("END", 2000))),
            ("USER\tscn\t7\tSTART\t1000\t0", Some(("START", 1000))),
            ("USER\tscn\t7\tEND\t1000\t3000", Some(("END", 3000))),
            ("USER\tSTART\t1000\t1000", Some(("START", 1000))),
            ("USER\tEND\t1000\t4000", Some(("END", 4000))),
            ("USER\tscn\tSTART\tlater", None),
        ];
        for (line, want) in cases {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(user_event(&f), want, "{line}");
        }
    }

    #[test]
    fn the_run_record_names_the_simulation() {
        let cases = [
            (
                "RUN\tgatling_example.GoogleTest\tgoogletest\t1561361758058\t \t3.1.2\n",
                Some("googletest"),
            ),
            (
                "\u{feff}RUN\tCuriusTRex_Bash\tcuriustrex-bash\t1693898386165\t \t3.9.5",
                Some("curiustrex-bash"),
            ),
            (
                "RUN\tcomputerdatabase.BasicSimulation\n",
                Some("computerdatabase.BasicSimulation"),
            ),
            ("RUN\t\t\t1\t \t3.9.5", None),
            ("USER\tx\tSTART\t1", None),
            ("", None),
        ];
        for (line, want) in cases {
            assert_eq!(simulation_id(line).as_deref(), want, "{line:?}");
        }
    }
}
