//! The purpose-built HTTP/2 client (`h2wire`, the engine's default since issue 42) against an
//! outside judge: h2spec's suite for HTTP/2 clients (57 test cases: frame sizes, stream
//! states, error handling, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION). h2specd
//! (scripts/h2specd) is built by scripts/install-load-tools.sh; each test case runs
//! `examples/h2_get.rs` once against its own server.

use std::path::PathBuf;
use std::process::Command;

/// h2specd, from the tools' cache (or `LOADLAB_TEST_H2SPECD`).
fn h2specd() -> PathBuf {
    if let Some(p) = std::env::var_os("LOADLAB_TEST_H2SPECD") {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
    let path = cache.join("loadlab-test-deps/bin/h2specd");
    assert!(
        path.is_file(),
        "h2specd is not installed: run scripts/install-load-tools.sh (or set LOADLAB_TEST_H2SPECD)"
    );
    path
}

/// The example client, which `cargo test` builds beside this test: the newest
/// `target/<profile>/examples/h2_get-<hash>` (or `h2_get`, from `cargo build --example`).
fn h2_get() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let examples = exe.parent().unwrap().parent().unwrap().join("examples");
    let newest = std::fs::read_dir(&examples)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            (name == "h2_get" || name.starts_with("h2_get-")) && !name.contains('.')
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok());
    newest.map(|e| e.path()).unwrap_or_else(|| {
        panic!(
            "examples/h2_get is not built in {}: `cargo test -p loadlab-engine` builds it",
            examples.display()
        )
    })
}

/// (tests, passed, failed) from h2spec's summary line: "57 tests, 57 passed, 0 skipped, 0 failed".
fn summary(out: &str) -> Option<(u32, u32, u32)> {
    let line = out.lines().rev().find(|l| l.contains(" tests, "))?;
    let n = |word: &str| -> Option<u32> {
        line.split(", ")
            .find(|part| part.ends_with(word))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    Some((n("tests")?, n("passed")?, n("failed")?))
}

#[test]
fn the_own_http2_client_passes_h2specs_client_suite() {
    let client = format!("{} wire", h2_get().display());
    // One port per test case from the first; below the kernel's ephemeral range, another
    // range when one is taken.
    let mut last = String::new();
    for attempt in 0..4u32 {
        let first = 21_000 + (std::process::id() % 50) * 160 + attempt * 8_000;
        let out = Command::new(h2specd())
            .args(["-p", &first.to_string(), "-e", &client])
            .output()
            .expect("h2specd runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("address already in use") {
            last = stderr.to_string();
            continue;
        }
        let report: String = text
            .lines()
            .filter(|l| !l.starts_with("accept tcp"))
            .collect::<Vec<_>>()
            .join("\n");
        let (tests, passed, failed) =
            summary(&report).unwrap_or_else(|| panic!("no summary: {report}\n{stderr}"));
        assert!(tests >= 57, "{tests} test cases ran:\n{report}");
        assert_eq!(failed, 0, "{report}");
        assert_eq!(passed, tests, "{report}");
        return;
    }
    panic!("no free range of ports for h2specd: {last}");
}

#[test]
fn reads_h2specs_summary() {
    assert_eq!(
        summary("x\n57 tests, 55 passed, 0 skipped, 2 failed\n"),
        Some((57, 55, 2))
    );
    assert_eq!(summary("no summary"), None);
}
