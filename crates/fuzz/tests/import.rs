//! Fuzz targets for the four importers (HAR, OpenAPI, k6, Artillery): each mutates its part of
//! the importer's real-world corpus (crates/import/tests/corpus) and some generated hostile
//! files (deep nesting, self-referencing schemas) and imports the result. An import must end
//! in a scenario or an error — no panic, no abort, within the case budget of time and memory —
//! and what it writes must be free of the credentials the recording held.

use loadlab_fuzz::{mutated, run_target, PeakAlloc};
use loadlab_import::{import, Kind, Options};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

#[global_allocator]
static MEMORY: PeakAlloc = PeakAlloc;

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../import/tests/corpus")
        .join(kind)
}

/// The corpus files of one kind no larger than `max_bytes` (mutating a 300 KB spec a thousand
/// times is slow without finding more).
fn seeds(kind: &str, max_bytes: u64, extra: &[String]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut stack = vec![corpus_dir(kind)];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e.metadata().is_ok_and(|m| m.len() <= max_bytes) {
                out.push(std::fs::read(&p).unwrap());
            }
        }
    }
    out.sort();
    out.extend(extra.iter().map(|s| s.as_bytes().to_vec()));
    out
}

fn check(kind: Kind, input: &[u8], file: &str) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(input);
    match import(kind, &text, file, &Options::default()) {
        Ok(out) => prop_assert!(!out.yaml.is_empty()),
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

#[test]
fn fuzz_har_import() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    let extra = vec![format!(
        r#"{{"log":{{"entries":[{{"request":{{"method":"GET","url":"/a?access_token={jwt}","headers":[{{"name":"token","value":"{jwt}"}}]}},"response":{{"status":200}}}}],"pages":[{{"title":"https://h.example/"}}]}}}}"#
    )];
    run_target(
        "import_har",
        &MEMORY,
        mutated(seeds("har", 40_000, &extra), 6),
        move |input| {
            check(Kind::Har, &input, "fuzz.har")?;
            // The seeded JWT never reaches a scenario, however the file around it is edited.
            if let Ok(out) = import(
                Kind::Har,
                &String::from_utf8_lossy(&input),
                "f.har",
                &Options::default(),
            ) {
                prop_assert!(!out.yaml.contains(jwt), "{}", out.yaml);
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_openapi_import() {
    let recursive = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /n:\n    post:\n      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/N'}}}}\n      responses: {'200': {description: ok}}\ncomponents:\n  schemas:\n    N: {type: object, properties: {a: {$ref: '#/components/schemas/N'}, b: {$ref: '#/components/schemas/N'}, c: {type: array, items: {$ref: '#/components/schemas/N'}}, d: {allOf: [{$ref: '#/components/schemas/N'}]}}}\n".to_string();
    run_target(
        "import_openapi",
        &MEMORY,
        mutated(seeds("openapi", 30_000, &[recursive]), 6),
        |input| check(Kind::OpenApi, &input, "fuzz.yaml"),
    );
}

#[test]
fn fuzz_k6_import() {
    let head = "import http from 'k6/http';\nexport default function () {\n";
    let extra = vec![
        format!(
            "{head}  http.get('http://127.0.0.1/' + {}1{});\n}}\n",
            "(".repeat(300),
            ")".repeat(300)
        ),
        format!("{head}  const x = {}1;\n}}\n", "!".repeat(3000)),
        format!("{head}  const x = 1{};\n}}\n", " + 1".repeat(3000)),
    ];
    run_target(
        "import_k6",
        &MEMORY,
        mutated(seeds("k6", 30_000, &extra), 6),
        |input| check(Kind::K6, &input, "fuzz.js"),
    );
}

#[test]
fn fuzz_artillery_import() {
    let extra = vec![
        "config:\n  target: http://127.0.0.1\n  phases:\n    - {duration: '5min', arrivalCount: 300}\n    - {pause: '1m'}\n    - {duration: 1e20, arrivalRate: 1e20, rampTo: -1}\nscenarios:\n  - flow:\n      - get: {url: '/{{ $processEnvironment.X }}'}\n      - loop: [{get: {url: /}}]\n        count: 4294967295\n".to_string(),
    ];
    run_target(
        "import_artillery",
        &MEMORY,
        mutated(seeds("artillery", 30_000, &extra), 6),
        |input| check(Kind::Artillery, &input, "fuzz.yml"),
    );
}
