//! A k6 project split into files: the local modules a script imports are read (named,
//! renamed and default imports, a module importing another), their functions convert where
//! the script calls them, and a global set with `globalThis` is read by its bare name.

mod common;

use common::validate;
use loadlab_import::{import_file, Kind, Options};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn local_modules_are_read_and_their_functions_convert_where_called() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "config.js",
        "export const BASE = 'https://shop.example.com';\nexport const options = { vus: 99 };\n",
    );
    write(
        dir.path(),
        "lib/auth.js",
        "import http from 'k6/http';\nimport { BASE } from '../config.js';\nexport function login() {\n  http.post(`${BASE}/login`, { user: 'ann' });\n}\n",
    );
    write(
        dir.path(),
        "browse.js",
        "import http from 'k6/http';\nimport { sleep } from 'k6';\nexport default function () {\n  http.get('https://shop.example.com/items');\n  sleep(pause);\n}\n",
    );
    write(
        dir.path(),
        "main.js",
        "import { login as signIn } from './lib/auth.js';\nimport browse from './browse.js';\nimport { nothing } from './missing.js';\nimport http from 'k6/http';\nglobalThis.pause = 2;\nexport const options = { vus: 2, duration: '10s' };\nexport default function () {\n  signIn();\n  browse();\n}\n",
    );
    let main = dir.path().join("main.js");
    let out = import_file(Kind::K6, &main, &Options::default()).unwrap();
    let s = validate(&out.yaml, "main.yaml");
    let steps: Vec<String> = s
        .request_steps()
        .map(|r| format!("{} {}", r.method.as_str(), r.url))
        .collect();
    assert_eq!(steps, ["POST /login", "GET /items"], "{}", out.yaml);
    assert!(out.yaml.contains("- think: 2s"), "{}", out.yaml);
    assert!(
        out.yaml.contains("vus: 2"),
        "the script's options, not a module's: {}",
        out.yaml
    );
    let report = out.report.to_string();
    assert!(report.contains("read the local module(s)"), "{report}");
    assert!(
        report.contains("the local module `./missing.js` could not be read"),
        "{report}"
    );
    assert!(
        report.contains("module `./missing.js`: not converted"),
        "{report}"
    );
}

#[test]
fn load_options_read_from_a_modules_object_are_taken() {
    // grafana/quickpizza's 12.modularization.js: `vus: SmokeOptions.vus` from lib/load-options.js.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "lib/load-options.js",
        "export const SmokeOptions = {\n  vus: \"3\",\n  duration: \"20s\",\n};\n",
    );
    write(
        dir.path(),
        "main.js",
        "import http from 'k6/http';\nimport { SmokeOptions } from './lib/load-options.js';\nexport const options = {\n  scenarios: {\n    smoke: { executor: 'constant-vus', vus: SmokeOptions.vus, duration: SmokeOptions.duration },\n  },\n};\nexport default function () {\n  http.get('https://shop.example.com/');\n}\n",
    );
    let out = import_file(Kind::K6, &dir.path().join("main.js"), &Options::default()).unwrap();
    validate(&out.yaml, "main.yaml");
    assert!(
        out.yaml
            .contains("load: { model: closed, vus: 3, duration: 20s }"),
        "{}",
        out.yaml
    );
    assert!(!out.yaml.contains("cannot evaluate"), "{}", out.yaml);
}

#[test]
fn a_modules_object_spread_into_the_options_or_a_scenario_gives_its_fields() {
    // `...SmokeOptions` (sunspla-style config.js exports), in the options and in a scenario.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "config.js",
        "export const SmokeOptions = { vus: 3, duration: '30s' };\nexport const Workload = { executor: 'constant-vus', vus: 4, duration: '20s' };\n",
    );
    let cases = [
        (
            "export const options = { ...SmokeOptions, thresholds: { http_req_duration: ['p(95)<500'] } };",
            "load: { model: closed, vus: 3, duration: 30s }",
        ),
        (
            "export const options = { scenarios: { smoke: { ...Workload, duration: '40s' } } };",
            "load: { model: closed, vus: 4, duration: 40s }",
        ),
    ];
    for (options, want) in cases {
        write(
            dir.path(),
            "main.js",
            &format!("import http from 'k6/http';\nimport {{ SmokeOptions, Workload }} from './config.js';\n{options}\nexport default function () {{\n  http.get('http://127.0.0.1:9/a');\n}}\n"),
        );
        let out = import_file(Kind::K6, &dir.path().join("main.js"), &Options::default()).unwrap();
        assert!(out.yaml.contains(want), "{options}\n{}", out.yaml);
        validate(&out.yaml, "main.yaml");
    }
}
