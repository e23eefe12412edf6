//! Turns what people already have — a browser recording (HAR), an Artillery script, an OpenAPI
//! spec, a k6 script — into a loadlab scenario file they can read, fix where told, and run.
//!
//! Each importer reads its format into a document model ([`yaml::Node`]), which a small YAML
//! writer turns into text: written by hand (not by serde) so that comments can stand where a
//! human must decide. Beside the text every import returns a [`Report`]: what it did, the
//! values it correlated (a response value reused by a later request becomes a capture and a
//! template), values that look dynamic but have no source, the environment variables to set,
//! and what it could not convert (with its line when the source has lines).
//!
//! Plain, synchronous code: no engine, no async runtime. Crates: `serde_json` / `serde_yaml_ng`
//! to read the sources, `url` to split request URLs, `base64` for HAR bodies saved encoded, and
//! for k6 scripts `oxc_parser` with `oxc_ast`, `oxc_allocator` and `oxc_span` (one version):
//! a complete, maintained ECMAScript parser (regular expressions cannot follow JavaScript's
//! nesting, template literals and comments). Chosen over `swc_ecma_parser` for its smaller
//! dependency tree and a plain AST of enums over an arena; only the parser is used — no
//! semantic analysis, transformer or code generator — and only `k6/parse.rs` sees its AST.

pub mod artillery;
mod credentials;
mod error;
pub mod har;
mod k6;
mod lines;
pub mod names;
mod opaque;
pub mod openapi;
mod rebase;
mod report;
mod scaffold;
mod scrub;
mod template_text;
pub mod think;
pub mod yaml;

pub use error::ImportError;
pub use report::{Correlation, Finding, Report, Unsupported, Variable};

/// The formats `loadlab import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Har,
    Artillery,
    OpenApi,
    K6,
}

impl Kind {
    /// The file an importer reads, in words.
    pub fn what(self) -> &'static str {
        match self {
            Kind::Har => "HAR (a recording saved from the browser's devtools)",
            Kind::Artillery => "Artillery script (YAML)",
            Kind::OpenApi => "OpenAPI 3 spec (YAML or JSON)",
            Kind::K6 => "k6 script (JavaScript)",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Some(match text.to_ascii_lowercase().as_str() {
            "har" => Kind::Har,
            "artillery" => Kind::Artillery,
            "openapi" | "swagger" | "oas" => Kind::OpenApi,
            "k6" => Kind::K6,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Har => "har",
            Kind::Artillery => "artillery",
            Kind::OpenApi => "openapi",
            Kind::K6 => "k6",
        }
    }
}

/// Choices that change what is imported (the HAR filters, OpenAPI's flow per operation).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep only requests to these hosts (HAR); empty: every host.
    pub include_hosts: Vec<String>,
    /// Drop requests to these hosts (HAR).
    pub exclude_hosts: Vec<String>,
    /// Keep only paths starting with one of these (HAR); empty: every path.
    pub include_paths: Vec<String>,
    /// Drop paths starting with one of these (HAR).
    pub exclude_paths: Vec<String>,
    /// OpenAPI: one flow per operation instead of one per tag.
    pub per_operation: bool,
    /// HAR: the origin relative URLs are read against (default: the page's, when recorded).
    pub base_url: Option<String>,
    /// The directory the scenario will be written to, when not beside the source: data files
    /// the source reads are named relative to it.
    pub output_dir: Option<std::path::PathBuf>,
}

/// A scenario file's text and what the import did to write it.
#[derive(Debug, Clone)]
pub struct Imported {
    pub yaml: String,
    pub report: Report,
}

/// Reads the file at `path` and imports it; a file that cannot be read or is not text is
/// refused naming the kind of file wanted.
pub fn import_file(
    kind: Kind,
    path: &std::path::Path,
    options: &Options,
) -> Result<Imported, ImportError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        ImportError::Unreadable(format!(
            "cannot read {shown}: {e}; give the path of a {} file",
            kind.what()
        ))
    })?;
    let source = String::from_utf8(bytes).map_err(|_| {
        ImportError::Unreadable(format!(
            "{shown} is not text (not UTF-8): give a {} file",
            kind.what()
        ))
    })?;
    import(kind, &source, &shown, options)
}

/// Imports `source` (the text of `file`, named in errors and in the scenario's name).
pub fn import(
    kind: Kind,
    source: &str,
    file: &str,
    options: &Options,
) -> Result<Imported, ImportError> {
    let name = scenario_name(file);
    let (mut doc, mut report) = match kind {
        Kind::Har => har::import(source, file, &name, options)?,
        Kind::Artillery => artillery::import(source, file, &name)?,
        Kind::OpenApi => openapi::import(source, file, &name, options)?,
        Kind::K6 => k6::import(source, file, &name)?,
    };
    if let Some(out) = &options.output_dir {
        let source_dir = std::path::Path::new(file)
            .parent()
            .unwrap_or(std::path::Path::new(""));
        rebase::data_paths(&mut doc, source_dir, out, &mut report);
    }
    scrub::scrub(&mut doc, &mut report);
    let yaml = yaml::write_document(&doc);
    refuse_oversized(kind, &yaml, file)?;
    // Only what the scenario reads is asked for (a URL read from the environment may have
    // become the target to decide).
    report
        .variables
        .retain(|v| yaml.contains(&format!("{{{{ env.{} }}}}", v.name)));
    Ok(Imported { yaml, report })
}

/// The largest scenario file `loadlab validate` and `run` read (loadlab-scenario's
/// `MAX_FILE_BYTES`): an import writing more would hand over a file that cannot be used.
const MAX_SCENARIO_BYTES: usize = 4 * 1024 * 1024;

fn refuse_oversized(kind: Kind, yaml: &str, file: &str) -> Result<(), ImportError> {
    if yaml.len() <= MAX_SCENARIO_BYTES {
        return Ok(());
    }
    let fix = match kind {
        Kind::Har => "keep part of the recording (`--include-host`, `--include-path`)",
        Kind::OpenApi => "import a copy of the spec with fewer paths (e.g. the tags you test)",
        Kind::Artillery | Kind::K6 => "split the script into smaller ones",
    };
    Err(ImportError::invalid(
        file,
        format!(
            "the scenario written from it would be {:.1} MiB, over the {} MiB limit of a scenario file; {fix}",
            yaml.len() as f64 / (1024.0 * 1024.0),
            MAX_SCENARIO_BYTES / (1024 * 1024)
        ),
    ))
}

/// The file's stem: `recording.har` → `recording`, `shop.artillery.yml` → `shop`,
/// `seed-000.k6.js` → `seed-000`.
fn scenario_name(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .map(|s| {
            let kinds = [".artillery", ".openapi", ".swagger", ".har", ".k6"];
            kinds
                .iter()
                .find_map(|k| s.strip_suffix(k).map(str::to_string))
                .unwrap_or(s)
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "imported".into())
}
