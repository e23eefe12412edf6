//! Hostile and unusual files end in a scenario or a clear error, quickly and in bounded
//! memory: recursive schemas, dangling references, scripts nested thousands of levels deep.

mod common;

use loadlab_import::{import, Kind, Options};
use std::time::{Duration, Instant};

/// Imports on a thread with the default 2 MiB test stack, failing after `limit`.
fn import_within(
    kind: Kind,
    source: String,
    file: &'static str,
    limit: Duration,
) -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = import(kind, &source, file, &Options::default())
            .map(|i| i.yaml)
            .map_err(|e| e.to_string());
        let _ = tx.send(r);
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{file}: no answer within {limit:?}"))
}

/// A spec whose `Node` schema has `n` optional references to itself (and a list of them).
fn self_referencing_spec(n: usize) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| format!("        c{i}: {{$ref: '#/components/schemas/Node'}}"))
        .collect();
    format!(
        "openapi: 3.0.3\ninfo: {{title: t, version: '1'}}\npaths:\n  /nodes:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {{$ref: '#/components/schemas/Node'}}\n      responses:\n        '201': {{description: ok}}\ncomponents:\n  schemas:\n    Node:\n      type: object\n      properties:\n        name: {{type: string}}\n        kids: {{type: array, items: {{$ref: '#/components/schemas/Node'}}}}\n{}\n",
        props.join("\n")
    )
}

#[test]
fn self_references_are_generated_to_a_fixed_depth_at_once() {
    for n in [1, 6, 12] {
        let started = Instant::now();
        let spec = self_referencing_spec(n);
        let out = import(Kind::OpenApi, &spec, "tree.yaml", &Options::default())
            .unwrap_or_else(|e| panic!("{n}: {e}"));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{n}: {:?}",
            started.elapsed()
        );
        assert!(out.yaml.len() < 20_000, "{n}: {} bytes", out.yaml.len());
        assert!(
            out.report
                .done
                .iter()
                .any(|d| d.contains("refer to themselves (Node)")),
            "{:?}",
            out.report.done
        );
        common::validate(&out.yaml, "tree.yaml");
    }
}

#[test]
fn a_dangling_reference_is_an_error_naming_it() {
    let spec = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {$ref: '#/components/schemas/Pett'}\n      responses:\n        '201': {description: ok}\ncomponents:\n  schemas:\n    Pet: {type: object}\n";
    let err = import(Kind::OpenApi, spec, "pets.yaml", &Options::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("#/components/schemas/Pett"), "{text}");
    assert!(text.contains("line 9"), "{text}");
    assert!(text.contains("names nothing"), "{text}");
    let external = spec.replace("'#/components/schemas/Pett'", "'./pet.yaml'");
    let err = import(Kind::OpenApi, &external, "pets.yaml", &Options::default()).unwrap_err();
    assert!(err.to_string().contains("bundle"), "{err}");
}

#[test]
fn deep_scripts_are_refused_with_their_line_not_an_abort() {
    let head = "import http from 'k6/http';\nexport default function () {\n  http.get('http://127.0.0.1:8080/');\n";
    let cases = [
        format!(
            "{head}  const x = {}1{};\n}}\n",
            "[".repeat(6000),
            "]".repeat(6000)
        ),
        format!(
            "{head}  const x = {}1{};\n}}\n",
            "(".repeat(6000),
            ")".repeat(6000)
        ),
        format!("{head}  const x = {}1;\n}}\n", "!".repeat(6000)),
        format!("{head}  {} x();\n}}\n", "if (a) ".repeat(6000)),
        format!("{head}  const f = {}1;\n}}\n", "() => ".repeat(6000)),
    ];
    for script in cases {
        let err = import_within(Kind::K6, script, "deep.js", Duration::from_secs(5)).unwrap_err();
        assert!(err.contains("deep.js: 4:"), "{err}");
        assert!(err.contains("nested"), "{err}");
    }
    // A long flat expression is not nested: it imports, its long part left unconverted.
    let flat = format!("{head}  const x = 1{};\n}}\n", " + 1".repeat(20_000));
    import_within(Kind::K6, flat, "flat.js", Duration::from_secs(5)).unwrap();
    let members = format!("{head}  const x = a{};\n}}\n", ".b".repeat(20_000));
    import_within(Kind::K6, members, "members.js", Duration::from_secs(5)).unwrap();
}
