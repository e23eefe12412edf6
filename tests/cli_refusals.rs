//! End-to-end: what the `loadlab` binary refuses or reports instead of doing something a user
//! did not mean — output it cannot write, paths, flags and object-storage credentials checked
//! before any load is sent.

mod common;

use common::{Target, BIN};
use std::process::{Command, Output, Stdio};

fn loadlab(args: &[&str]) -> Output {
    // Stored runs go to a scratch directory, not the working tree, removed once loadlab exits.
    let results = common::scratch_dir("loadlab-cli-refusals-");
    common::loadlab_in(args, results.path())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_reader_that_leaves_early_gets_no_panic() {
    // `loadlab validate FILE | head -0`: the reader is gone before loadlab prints.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart.yaml");
    let mut child = Command::new(BIN)
        .args(["validate", example])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loadlab");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for loadlab");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(out.status.code(), Some(0), "{said}");
}

/// Output that cannot be written (a full disk: /dev/full) is an error naming what was lost,
/// exit 3: never a panic, and never exit 0 with nothing written (a CI step would then apply
/// empty manifests).
#[test]
fn output_that_cannot_be_written_is_an_error_not_a_panic() {
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/seed-001-monolith-vs-micro.yaml"
    );
    for (args, what) in [
        (vec!["schema"], "the schema"),
        (
            vec![
                "k8s",
                scenario,
                "--parallelism",
                "2",
                "--results",
                "s3://bucket/prefix",
            ],
            "the manifests",
        ),
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(BIN).args(&args).stdout(full).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!("cannot write {what} to standard output"))
                && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

/// `--junit` and `--summary` files that cannot be written, and a `--baseline` that names
/// nothing, are refused before the load starts (as `--json` is): the run's own outcome is not
/// lost to a typo after it ran.
#[test]
fn ci_output_paths_and_the_baseline_are_checked_before_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("junit.xml");
    for (flag, path, says) in [
        (
            "--junit",
            missing.display().to_string(),
            "does not exist (create it first)",
        ),
        (
            "--summary",
            dir.path().display().to_string(),
            "is a directory; give a file name",
        ),
        (
            "--baseline",
            "no-such-study".to_string(),
            "no-such-study: `no-such-study` is neither a file",
        ),
    ] {
        // Nothing listens there: had the load started first, the message would be about it.
        let out = loadlab(&[
            "run",
            "--url",
            "http://127.0.0.1:9/",
            "--rate",
            "1/s",
            "--duration",
            "1s",
            flag,
            &path,
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(flag) && err.contains(says) && !err.contains("cannot connect"),
            "{err}"
        );
    }
}

/// Flags that cannot apply are refused naming them, never ignored (README): the HTTP/2
/// client for a plain-text URL test that speaks HTTP/1.1, and an open model's bound on a
/// closed one.
#[test]
fn flags_that_cannot_apply_are_refused() {
    let base = ["run", "--url", "http://127.0.0.1:9/", "--duration", "1s"];
    for (extra, flag) in [
        (
            &["--rate", "1/s", "--http2-client", "h2"][..],
            "--http2-client",
        ),
        (
            &["--vus", "1", "--max-in-flight", "5"][..],
            "--max-in-flight",
        ),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let out = loadlab(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && !err.contains("cannot connect"),
            "{args:?}: {err}"
        );
    }
}

/// `merge --wait` waits for a distributed run's segments in object storage; with run
/// directories it was ignored without a word.
#[test]
fn merge_wait_with_run_directories_is_refused() {
    let dir = common::scratch_dir("loadlab-merge-wait-");
    let out = loadlab(&["merge", "--wait", "1m", dir.path().to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "error: --wait waits for the segments of a distributed run in object storage"
        ),
        "{err}"
    );
}

/// `loadlab run … > /dev/full`: the summary is lost, which the exit status says (3) and
/// stderr names; the run itself is stored and read back.
#[test]
fn a_run_whose_summary_cannot_be_written_exits_3_and_is_stored() {
    let target = Target::start(&[]);
    let results = common::scratch_dir("loadlab-cli-full-");
    let url = format!("{}/api/ping", target.url);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--url", &url, "--rate", "20/s", "--duration", "1s"])
        .args(["--no-progress", "--results"])
        .arg(results.path())
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot write the run's summary to standard output")
            && !err.contains("panicked"),
        "{err}"
    );
    let shown = common::loadlab_in(&["runs", "show", "last"], results.path());
    assert!(shown.status.success(), "{}", common::text(&shown));
    assert!(String::from_utf8_lossy(&shown.stdout).contains("20 total"));
}

/// A run refused before any load (nothing listens on its target) leaves no row in the run
/// store: `loadlab runs` lists runs that were made, not `failed` rows without a number.
#[test]
fn a_run_refused_before_the_load_is_not_listed() {
    let results = common::scratch_dir("loadlab-cli-refused-");
    let refused = common::loadlab_in(
        &[
            "run",
            "--url",
            "http://127.0.0.1:9/",
            "--rate",
            "5/s",
            "--duration",
            "1s",
        ],
        results.path(),
    );
    assert_eq!(refused.status.code(), Some(2), "{}", common::text(&refused));
    let listed = common::loadlab_in(&["runs"], results.path());
    let out = String::from_utf8_lossy(&listed.stdout);
    assert!(out.starts_with("no runs stored in"), "{out}");
    let left: Vec<_> = std::fs::read_dir(results.path().join("runs"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "run directories left: {left:?}");
}

#[test]
fn s3_results_without_credentials_are_bad_input_naming_what_to_set() {
    // No AWS_* credentials, and the instance metadata service asked on a closed loopback
    // port (never a cloud machine's real one): the store is refused before any load.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metadata = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let started = std::time::Instant::now();
    for args in [
        vec!["runs", "--results", "s3://bucket/prefix"],
        vec![
            "run",
            "--url",
            "http://127.0.0.1:9/",
            "--rate",
            "5/s",
            "--duration",
            "1s",
            "--results",
            "s3://bucket/prefix",
        ],
    ] {
        let mut cmd = Command::new(BIN);
        for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
            cmd.env_remove(name);
        }
        let o = cmd
            .args(&args)
            .env("AWS_METADATA_ENDPOINT", &metadata)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("s3://bucket/prefix") && err.contains("no AWS credentials"),
            "{err}"
        );
        assert!(
            err.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            "{err}"
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
