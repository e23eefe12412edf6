//! Other load testers' result files become loadlab runs: each request the file lists goes
//! into a run record (per-interval HDR histograms per step, status counts, error kinds, the
//! phases the format carries, the VUs over time it shows), written with the record's own
//! writer, so the imported run is an ordinary record and `report`, `study`, `compare`,
//! `history` and `gate` work on it unchanged. The record says which tool and file made it
//! (`imported`), and its validity is "not judged (imported)": the file holds none of the
//! generator's own timing.
//!
//! Formats: k6 `--out json` and `--out csv`, vegeta `encode --to json|csv`, oha `--db-url`
//! (SQLite), JMeter CSV and XML (`.jtl`), Gatling `simulation.log` (3.0-3.11). Aggregates-only
//! formats (Locust `--csv`, k6's summary export) are refused: percentiles cannot be rebuilt
//! from percentiles. Files are streamed (see `builder`): memory does not grow with the file.

mod builder;
mod csv;
mod gatling;
mod input;
mod jmeter;
mod jmeter_csv;
mod jmeter_xml;
mod k6_csv;
mod k6_json;
mod lines;
mod oha;
mod problems;
mod refused;
mod sample;
mod seen;
mod slicing;
mod span;
mod time;
mod vegeta;

pub use k6_json::error_kind_of_code;
pub use problems::Malformed;
pub use time::rfc3339_us;

use builder::RecordBuilder;
use loadlab_metrics::ImportedFrom;
use std::path::{Path, PathBuf};

/// A result file format `import-results` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    K6Json,
    K6Csv,
    VegetaJson,
    VegetaCsv,
    OhaSqlite,
    JmeterCsv,
    JmeterXml,
    GatlingLog,
    /// Aggregates only: refused.
    LocustCsv,
    /// Aggregates only: refused.
    K6Summary,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::K6Json,
        Format::K6Csv,
        Format::VegetaJson,
        Format::VegetaCsv,
        Format::OhaSqlite,
        Format::JmeterCsv,
        Format::JmeterXml,
        Format::GatlingLog,
        Format::LocustCsv,
        Format::K6Summary,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::K6Json => "k6-json",
            Format::K6Csv => "k6-csv",
            Format::VegetaJson => "vegeta-json",
            Format::VegetaCsv => "vegeta-csv",
            Format::OhaSqlite => "oha-sqlite",
            Format::JmeterCsv => "jmeter-csv",
            Format::JmeterXml => "jmeter-xml",
            Format::GatlingLog => "gatling-log",
            Format::LocustCsv => "locust-csv",
            Format::K6Summary => "k6-summary",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The tool that writes it.
    pub fn tool(self) -> &'static str {
        match self {
            Format::K6Json | Format::K6Csv | Format::K6Summary => "k6",
            Format::VegetaJson | Format::VegetaCsv => "vegeta",
            Format::OhaSqlite => "oha",
            Format::JmeterCsv | Format::JmeterXml => "jmeter",
            Format::GatlingLog => "gatling",
            Format::LocustCsv => "locust",
        }
    }

    /// Why a format cannot be imported, when it cannot.
    pub fn refusal(self) -> Option<String> {
        match self {
            Format::LocustCsv => Some(refused::why("Locust's --csv output")),
            Format::K6Summary => Some(refused::why("k6's summary export")),
            _ => None,
        }
    }
}

/// How the imported run is named and judged.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The run's name (its scenario name in the store; runs of one name form a history).
    pub name: String,
    /// The tool's version, when the file does not say it.
    pub tool_version: Option<String>,
    /// Threshold expressions to judge the run by.
    pub thresholds: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {why}")]
    AggregatesOnly { path: String, why: String },
    #[error("{path}: cannot be read: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: String, message: String },
    #[error("{path}: no request in the file: is it a {format} file?{detail}")]
    Empty {
        path: String,
        format: &'static str,
        /// The lines that could not be read, if any.
        detail: String,
    },
    #[error("the run record in {dir} could not be written: {source}")]
    Write { dir: String, source: std::io::Error },
}

/// What went wrong while reading (mapped to [`ImportError`] with the file's name).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Bad(String),
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The record's directory.
    pub dir: PathBuf,
    pub source: ImportedFrom,
    pub intervals: u32,
    /// Requests that came after their interval was written (counted in a later one).
    pub late: u64,
    pub malformed: Malformed,
}

/// The name the file gives its run, when it gives one: a Gatling log's simulation id (the
/// `RUN` record's, as Gatling names its results directory), since every Gatling log is called
/// `simulation.log`. `None` for formats that name nothing, or a file that cannot be read.
pub fn run_name_in(format: Format, file: &Path) -> Option<String> {
    if format != Format::GatlingLog {
        return None;
    }
    let mut first = String::new();
    std::io::BufRead::read_line(&mut input::open(file).ok()?, &mut first).ok()?;
    gatling::simulation_id(&first)
}

/// Reads `file` as `format` and writes its run record into `dir`.
pub fn import_file(
    format: Format,
    file: &Path,
    dir: &Path,
    options: &Options,
) -> Result<Imported, ImportError> {
    let path = file.display().to_string();
    if let Some(why) = format.refusal() {
        return Err(ImportError::AggregatesOnly { path, why });
    }
    let mut source = ImportedFrom {
        tool: format.tool().to_string(),
        version: options.tool_version.clone(),
        format: format.as_str().to_string(),
        file: path.clone(),
        ..ImportedFrom::default()
    };
    let refusal = input::binary_refusal(format, file).map_err(|e| ImportError::Open {
        path: path.clone(),
        source: e,
    })?;
    if let Some(message) = refusal {
        return Err(ImportError::Format { path, message });
    }
    let mut malformed = Malformed::default();
    // Read once to learn what only the file says (Gatling's version, oha's runs), then build.
    let mut builder = RecordBuilder::new(dir, &options.name, source.clone());
    builder.set_thresholds(options.thresholds.clone());
    let extra = read(format, file, dir, &mut builder, &mut malformed)?;
    match (format, extra) {
        (Format::GatlingLog, Some(v)) if source.version.is_none() => {
            builder.set_version(v.clone());
            source.version = Some(v);
        }
        (Format::OhaSqlite, Some(note)) => builder.note(note),
        _ => {}
    }
    let finished = finish(builder, &malformed, dir, &source.file)?;
    if finished.intervals == 0 {
        // When the file is recognised as another output, its lines quoted one by one as not
        // this format's are noise: the count and the first say enough.
        let detail = match input::hint(format, file) {
            Some(h) => format!("\n  hint: {h}{}", malformed.describe_briefly()),
            None => malformed
                .describe(&path)
                .map(|m| format!("\n{m}"))
                .unwrap_or_default(),
        };
        return Err(ImportError::Empty {
            path,
            format: format.as_str(),
            detail,
        });
    }
    source.malformed = malformed.count;
    Ok(Imported {
        dir: dir.to_path_buf(),
        source,
        intervals: finished.intervals,
        late: finished.late,
        malformed,
    })
}

/// Feeds the requests of `file` to `builder` with the reader of `format`; what the file alone
/// says comes back (Gatling's version, a note on oha's runs).
fn read(
    format: Format,
    file: &Path,
    dir: &Path,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<Option<String>, ImportError> {
    let path = file.display().to_string();
    let open = || {
        input::open(file).map_err(|e| ImportError::Open {
            path: path.clone(),
            source: e,
        })
    };
    let read = match format {
        Format::K6Json => k6_json::read(open()?, builder, malformed).map(|_| None),
        Format::K6Csv => k6_csv::read(open()?, builder, malformed).map(|_| None),
        Format::VegetaJson => vegeta::read_json(open()?, builder, malformed).map(|_| None),
        Format::VegetaCsv => vegeta::read_csv(open()?, builder, malformed).map(|_| None),
        Format::JmeterCsv | Format::JmeterXml => {
            let read: jmeter::Reader<_> = match format {
                Format::JmeterCsv => jmeter_csv::read_csv,
                _ => jmeter_xml::read,
            };
            // Read twice: the first pass finds the test runs the file holds.
            let reopen = || open().map_err(|e| ReadError::Bad(e.to_string()));
            jmeter::import_newest_run(read, reopen, builder, malformed).map(|_| None)
        }
        Format::GatlingLog => gatling::read(open()?, builder, malformed),
        Format::OhaSqlite => {
            open()?;
            oha::read(file, builder, malformed).map(|runs| {
                (runs > 1)
                    .then(|| format!("the file holds {runs} oha runs: the newest was imported"))
            })
        }
        Format::LocustCsv | Format::K6Summary => unreachable!("refused above"),
    };
    read.map_err(|e| match e {
        ReadError::Io(e) => ImportError::Write {
            dir: dir.display().to_string(),
            source: e,
        },
        ReadError::Bad(message) => ImportError::Format { path, message },
    })
}

/// Writes the record's last intervals, noting the requests that came too late for theirs.
fn finish(
    mut builder: RecordBuilder,
    malformed: &Malformed,
    dir: &Path,
    path: &str,
) -> Result<builder::Finished, ImportError> {
    builder.set_malformed(malformed);
    let late = builder.late;
    if late > 0 {
        builder.note(format!(
            "{late} request(s) came more than {} s out of time order in the file and were counted in a later interval (totals and percentiles are exact; the over-time curve is not, there)",
            builder::REORDER_WINDOW
        ));
    }
    builder.finish().map_err(|e| match e {
        ReadError::Io(e) => ImportError::Write {
            dir: dir.display().to_string(),
            source: e,
        },
        ReadError::Bad(message) => ImportError::Format {
            path: path.to_string(),
            message,
        },
    })
}
