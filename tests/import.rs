//! End-to-end: `loadlab import` writes a scenario that `loadlab validate` accepts, and bad
//! input ends with one clear message and exit code 2.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_loadlab");

fn fixture(name: &str) -> String {
    format!(
        "{}/crates/import/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadlab-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn loadlab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("PASSWORD", "password")
        .output()
        .expect("run loadlab")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn imported_har_validates() {
    let out = scratch("har.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&[
        "import",
        "har",
        &fixture("target-flow.har"),
        "-o",
        o,
        "--exclude-host",
        "google-analytics.com",
    ]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("kept 5 of 10 recorded requests"),
        "{stderr}"
    );
    assert!(
        stderr.contains("{{ token }} captured by `POST /api/auth/signin` ($.token)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("{{ application_id }} captured by `POST /api/applications` ($.id)"),
        "{stderr}"
    );
    assert!(stderr.contains("export PASSWORD=..."), "{stderr}");
    assert!(
        stderr.contains(&format!("wrote {o} — check it with: loadlab validate {o}")),
        "{stderr}"
    );
    let validate = loadlab(&["validate", o]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}{}",
        text(&validate.stdout),
        text(&validate.stderr)
    );
    assert!(text(&validate.stdout).contains("5 request step(s)"));
}

#[test]
fn bad_input_exits_2_with_one_message() {
    let not_json = scratch("notes.har");
    std::fs::write(&not_json, "these are my notes, not a recording\n").unwrap();
    let o = loadlab(&["import", "har", not_json.to_str().unwrap()]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("notes.har:1:1: not valid JSON"), "{stderr}");
    assert!(stderr.contains("Save all as HAR"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let o = loadlab(&["import", "har", "/no/such/file.har"]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read /no/such/file.har"), "{stderr}");

    let o = loadlab(&[
        "import",
        "artillery",
        &fixture("seed-001.artillery.yml"),
        "--include-host",
        "example.com",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("use them with `loadlab import har`"));

    let o = loadlab(&["import", "k6", &fixture("target-flow.har")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("har, artillery, openapi"));
}

#[test]
fn imported_artillery_validates() {
    let out = scratch("seed-001.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&[
        "import",
        "artillery",
        &fixture("seed-001.artillery.yml"),
        "--output",
        o,
    ]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("3 scenario(s) became flows with 4 request step(s)"),
        "{stderr}"
    );
    let validate = loadlab(&["validate", o]);
    let stdout = text(&validate.stdout);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{stdout}{}",
        text(&validate.stderr)
    );
    assert!(
        stdout.contains("3 flow(s), 4 request step(s), open model"),
        "{stdout}"
    );
}

#[test]
fn imported_openapi_validates_once_its_variables_are_set() {
    let out = scratch("petstore.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&["import", "openapi", &fixture("petstore3.yaml"), "-o", o]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("export TOKEN=..."), "{stderr}");
    assert!(stderr.contains("export API_KEY=..."), "{stderr}");
    assert!(
        stderr.contains("(after setting the variables above)"),
        "{stderr}"
    );
    // Unset, the scenario names the variable it misses.
    let unset = Command::new(BIN)
        .args(["validate", o])
        .env_remove("TOKEN")
        .env_remove("API_KEY")
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert!(text(&unset.stderr).contains("is not set"));
    let validate = Command::new(BIN)
        .args(["validate", o])
        .env("TOKEN", "t")
        .env("API_KEY", "k")
        .output()
        .unwrap();
    let stdout = text(&validate.stdout);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{stdout}{}",
        text(&validate.stderr)
    );
    assert!(stdout.contains("3 flow(s), 19 request step(s)"), "{stdout}");
}

#[test]
fn without_output_the_scenario_goes_to_stdout() {
    let o = loadlab(&["import", "har", &fixture("target-flow.har")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with("# Imported from target-flow.har"),
        "{stdout}"
    );
    assert!(stdout.contains("capture: { token: $.token }"), "{stdout}");
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("wrote the scenario to standard output"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("# Imported"),
        "the scenario is not on stderr"
    );
}

/// docs/import.md shows what the importers print and write: the examples are checked against
/// the binary, so the page cannot drift from the code.
#[test]
fn docs_examples_are_what_the_importers_write() {
    let doc =
        std::fs::read_to_string(format!("{}/docs/import.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let blocks = |lang: &str| -> Vec<String> {
        doc.split(&format!("```{lang}\n"))
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_string())
            .collect()
    };
    let (yaml, printed) = (blocks("yaml"), blocks("text"));
    let dir = scratch("docs");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |kind: &str, fixture_name: &str, as_name: &str, out: &str, extra: &[&str]| {
        std::fs::copy(fixture(fixture_name), dir.join(as_name)).unwrap();
        let mut args = vec!["import", kind, as_name, "-o", out];
        args.extend_from_slice(extra);
        let o = Command::new(BIN)
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (
            text(&o.stderr),
            std::fs::read_to_string(dir.join(out)).unwrap(),
        )
    };
    let (stderr, written) = run(
        "har",
        "target-flow.har",
        "recording.har",
        "signin-flow.yaml",
        &["--exclude-host", "google-analytics.com"],
    );
    assert_eq!(printed[0], stderr);
    assert_eq!(yaml[0], written);
    let (stderr, written) = run(
        "artillery",
        "seed-001.artillery.yml",
        "seed-001.artillery.yml",
        "seed-001.yaml",
        &[],
    );
    assert_eq!(printed[1], stderr);
    assert_eq!(yaml[1], written);
    let (stderr, _) = run(
        "artillery",
        "features.artillery.yml",
        "shop.artillery.yml",
        "shop.yaml",
        &[],
    );
    assert!(stderr.contains(&printed[2]), "{stderr}");
    let (stderr, written) = run(
        "openapi",
        "petstore3.yaml",
        "petstore3.yaml",
        "petstore.yaml",
        &[],
    );
    assert_eq!(printed[3], stderr);
    let (head, tail) = yaml[2].split_once("      # …\n").unwrap();
    assert!(written.starts_with(head), "{written}");
    assert!(written.contains(tail), "{written}");
}
