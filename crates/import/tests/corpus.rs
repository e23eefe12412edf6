//! The real-world corpus: public files of every kind (browser recordings, OpenAPI specs,
//! k6 and Artillery scripts) listed in `tests/corpus/MANIFEST` with their source, licence and
//! the outcome recorded for each. Every file is imported; an `ok` file must give a scenario
//! that validates (with the variables the import asks for set), a `refused: TEXT` file an
//! error holding TEXT. No file may panic, take over 5 s or allocate over 500 MB at once.

use loadlab_import::{import_file, Kind, Options};
use loadlab_scenario::study::StudyDocument;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts the bytes allocated at once, and the peak since the last reset.
struct Peak;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

const TIME_LIMIT: Duration = Duration::from_secs(5);
const MEMORY_LIMIT: usize = 500 * 1024 * 1024;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// One MANIFEST line: `file  source  licence  expected`, tab-separated.
struct Case {
    file: String,
    expected: Expected,
}

#[derive(Debug, PartialEq)]
enum Expected {
    Ok,
    Refused(String),
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Validated,
    Refused(String),
    /// Imported, but the scenario does not validate.
    Invalid(String),
}

fn manifest() -> Vec<Case> {
    let text = std::fs::read_to_string(corpus().join("MANIFEST")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                cols.len(),
                4,
                "MANIFEST line `{l}`: 4 tab-separated columns"
            );
            // MPL-2.0 (Artillery's own test scripts) is copyleft per file only: a file kept
            // unmodified, its source named here, imposes nothing on the code that reads it.
            assert!(
                [
                    "MIT",
                    "Apache-2.0",
                    "BSD-3-Clause",
                    "CC-BY-4.0",
                    "CC0-1.0",
                    "MPL-2.0"
                ]
                .contains(&cols[2]),
                "{}: licence {} is not permissive",
                cols[0],
                cols[2]
            );
            let expected = match cols[3].strip_prefix("refused: ") {
                Some(why) => Expected::Refused(why.to_string()),
                None => {
                    assert_eq!(cols[3], "ok", "{}", cols[0]);
                    Expected::Ok
                }
            };
            Case {
                file: cols[0].to_string(),
                expected,
            }
        })
        .collect()
}

fn kind_of(file: &str) -> Kind {
    let dir = file.split('/').next().unwrap();
    Kind::parse(dir).unwrap_or_else(|| panic!("{file}: under har/, openapi/, k6/ or artillery/"))
}

/// A value for each variable the import asks for: a URL where the name says so.
fn set_variables(names: &[String]) {
    for n in names {
        let value = if ["URL", "HOST", "TARGET", "ENDPOINT", "BASE"]
            .iter()
            .any(|w| n.contains(w))
        {
            "http://127.0.0.1:8080"
        } else {
            "x"
        };
        std::env::set_var(n, value);
    }
}

/// Imports `file` on a thread of its own (a hang fails after [`TIME_LIMIT`]) and validates
/// the scenario as if written beside the source (where its data files are).
fn run(file: &str) -> (Outcome, Duration, usize) {
    let path = corpus().join(file);
    let kind = kind_of(file);
    let (tx, rx) = std::sync::mpsc::channel();
    let shown = path.clone();
    PEAK.store(NOW.load(Ordering::Relaxed), Ordering::Relaxed);
    let base = NOW.load(Ordering::Relaxed);
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(import_file(kind, &shown, &Options::default()));
    });
    let imported = rx
        .recv_timeout(TIME_LIMIT)
        .unwrap_or_else(|_| panic!("{file}: no answer within {TIME_LIMIT:?}"));
    let took = started.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let outcome = match imported {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok(out) => {
            let names: Vec<String> = out
                .report
                .variables
                .iter()
                .map(|v| v.name.clone())
                .collect();
            set_variables(&names);
            let beside = path.with_file_name("imported.yaml");
            // As `loadlab validate` and `run` read it (a duplicate key is refused there).
            match StudyDocument::parse(&out.yaml, &beside.to_string_lossy())
                .and_then(|doc| doc.check())
            {
                Ok(_) => Outcome::Validated,
                Err(e) => Outcome::Invalid(format!("{e}\n{}", out.yaml)),
            }
        }
    };
    (outcome, took, peak)
}

#[test]
fn every_corpus_file_gives_its_recorded_outcome() {
    let cases = manifest();
    let mut failures = Vec::new();
    let mut table: Vec<(String, usize, usize, usize)> = Vec::new();
    for case in &cases {
        let (outcome, took, peak) = run(&case.file);
        let kind = case.file.split('/').next().unwrap().to_string();
        let row = match table.iter_mut().find(|(k, ..)| *k == kind) {
            Some(r) => r,
            None => {
                table.push((kind.clone(), 0, 0, 0));
                table.last_mut().unwrap()
            }
        };
        row.1 += 1;
        match &outcome {
            Outcome::Validated => row.2 += 1,
            Outcome::Refused(_) => row.3 += 1,
            Outcome::Invalid(_) => {}
        }
        if took > TIME_LIMIT || peak > MEMORY_LIMIT {
            failures.push(format!("{}: {took:?}, {peak} bytes", case.file));
        }
        let as_expected = match (&case.expected, &outcome) {
            (Expected::Ok, Outcome::Validated) => true,
            (Expected::Refused(why), Outcome::Refused(msg)) => msg.contains(why.as_str()),
            _ => false,
        };
        if !as_expected {
            failures.push(format!(
                "{}: expected {:?}, got {outcome:?}",
                case.file, case.expected
            ));
        }
        println!(
            "{:<60} {:>7.1} ms {:>8.1} MiB  {}",
            case.file,
            took.as_secs_f64() * 1e3,
            peak as f64 / (1024.0 * 1024.0),
            match &outcome {
                Outcome::Validated => "validated".to_string(),
                Outcome::Refused(m) => format!("refused: {}", m.lines().next().unwrap_or("")),
                Outcome::Invalid(m) => format!("INVALID: {}", m.lines().next().unwrap_or("")),
            }
        );
    }
    for (kind, files, validated, refused) in &table {
        println!("{kind:<10} files {files:>3}  validated {validated:>3}  refused {refused:>3}");
    }
    // Every file of the corpus directory is listed (none added without its licence).
    let listed: Vec<&str> = cases.iter().map(|c| c.file.as_str()).collect();
    for kind in ["har", "openapi", "k6", "artillery"] {
        for entry in walk(&corpus().join(kind)) {
            let rel = entry
                .strip_prefix(corpus())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let is_main =
                !rel.contains("/data/") && !rel.contains("/lib/") && !rel.ends_with(".json")
                    || kind != "k6";
            if is_main && !listed.contains(&rel.as_str()) {
                failures.push(format!("{rel}: in the corpus but not in MANIFEST"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
