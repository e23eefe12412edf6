//! What `loadlab import-results FORMAT FILE` does to one file, without the run store: the
//! record rebuilt in DIR and its summary derived from it. `bench/import-results.sh` measures
//! it in a release build (building the whole CLI in release takes far longer).
//!
//! `cargo run --release -p loadlab-results-import --example import_file -- k6-json FILE DIR`

use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, Options};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [format, file, dir] = args.as_slice() else {
        eprintln!("usage: import_file FORMAT FILE DIR");
        std::process::exit(2);
    };
    let Some(format) = Format::parse(format) else {
        eprintln!("unknown format {format}");
        std::process::exit(2);
    };
    let options = Options {
        name: "bench".into(),
        ..Options::default()
    };
    let dir = PathBuf::from(dir);
    match import_file(format, file.as_ref(), &dir, &options) {
        Ok(imported) => {
            let record = StoredRecord::open(&dir).expect("the record just written");
            let result = summarize(&record).expect("a readable record");
            println!(
                "{} requests, {} intervals, {} malformed, p50 {:.3} ms, p99 {:.3} ms",
                result.requests.total,
                imported.intervals,
                imported.malformed.count,
                result.latency_ms.p50,
                result.latency_ms.p99
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
