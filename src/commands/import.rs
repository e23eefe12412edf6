//! `loadlab import KIND FILE`: a HAR recording, an Artillery script, an OpenAPI spec or a k6
//! script becomes a scenario file; what the import did and what a person must still decide go to stderr.

use crate::cli::ImportArgs;
use crate::exit::{CliError, Outcome};
use loadlab_import::{import_file, Kind, Options};

pub fn execute(args: ImportArgs) -> Result<Outcome, CliError> {
    let kind = Kind::parse(&args.kind).ok_or_else(|| {
        CliError::bad_input(format!(
            "unknown import kind `{}`: use har, artillery, openapi or k6",
            args.kind
        ))
    })?;
    let har_filters = !(args.include_hosts.is_empty()
        && args.exclude_hosts.is_empty()
        && args.include_paths.is_empty()
        && args.exclude_paths.is_empty()
        && args.base_url.is_none());
    if har_filters && kind != Kind::Har {
        return Err(CliError::bad_input(
            "--include-host, --exclude-host, --include-path, --exclude-path and --base-url read a HAR recording: use them with `loadlab import har`",
        ));
    }
    if args.per_operation && kind != Kind::OpenApi {
        return Err(CliError::bad_input(
            "--per-operation splits an OpenAPI spec: use it with `loadlab import openapi`",
        ));
    }
    let options = Options {
        include_hosts: args.include_hosts,
        exclude_hosts: args.exclude_hosts,
        include_paths: args.include_paths,
        exclude_paths: args.exclude_paths,
        per_operation: args.per_operation,
        base_url: args.base_url,
        output_dir: args.output.as_ref().map(|o| match o.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        }),
    };
    let imported = import_file(kind, &args.file, &options).map_err(CliError::bad_input)?;
    eprint!("{}", imported.report);
    if imported.yaml.len() > loadlab_scenario::limits::MAX_FILE_BYTES {
        eprintln!(
            "warning: the scenario is {} bytes, over the {} bytes `loadlab validate` and `run` accept: narrow the import (--include-path, --include-host) or split the spec",
            imported.yaml.len(),
            loadlab_scenario::limits::MAX_FILE_BYTES
        );
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &imported.yaml).map_err(|e| {
                CliError::bad_input(format!("cannot write {}: {e}", path.display()))
            })?;
            let path = path.display();
            let after = if imported.report.variables.is_empty() {
                ""
            } else {
                " (after setting the variables above)"
            };
            eprintln!("wrote {path} — check it with: loadlab validate {path}{after}");
        }
        None => {
            super::output::to_stdout(&imported.yaml, "the scenario")?;
            eprintln!("wrote the scenario to standard output — save it and check it with: loadlab validate FILE");
        }
    }
    Ok(Outcome::Ok)
}
