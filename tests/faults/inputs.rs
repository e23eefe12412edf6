//! Hostile input against the real binary, with a fault server to see what reaches the wire:
//! source addresses that cannot work, secrets in URLs, header injection, limits, flags that
//! would send nothing.

use super::handlers::ok_handler;
use super::run::*;
use super::server::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scratch directory removed when the returned guard is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    scratch_dir(&format!("inputs-{name}-"))
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A run refused as bad input: exit 2, no request reached the server, a message holding
/// every one of `needles`.
fn assert_refused(run: &Run, server: &Server, needles: &[&str]) {
    assert_eq!(run.code(), 2, "{}", run.describe());
    assert_eq!(server.requests(), 0, "{}", run.describe());
    for n in needles {
        assert!(run.stderr.contains(n), "no `{n}` in\n{}", run.describe());
    }
    assert!(run.elapsed < Duration::from_secs(5), "{}", run.describe());
}

#[test]
fn a_source_address_not_of_this_machine_is_bad_input_before_any_load() {
    let server = Server::start(ok_handler);
    // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
    let run = run_loadlab(
        "non_local_source",
        &server.url("/s"),
        &["--vus", "1", "--source-addrs", "192.0.2.1"],
        "1s",
    );
    assert_refused(
        &run,
        &server,
        &["192.0.2.1", "not an address of this machine", "hint:"],
    );
    assert!(!run.stderr.contains("ephemeral"), "{}", run.describe());
}

#[test]
fn a_source_address_of_the_wrong_family_is_bad_input() {
    let server = Server::start(ok_handler);
    let run = run_loadlab(
        "wrong_family_source",
        &server.url("/s"),
        &["--rate", "10/s", "--source-addrs", "::1"],
        "1s",
    );
    assert_refused(&run, &server, &["::1", "IPv6", "IPv4"]);
}

/// Every file under `dir` (run.json, the HDR log, the SQLite index...), as bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn credentials_in_the_url_are_sent_as_basic_auth_and_never_shown_or_stored() {
    let server = Server::start(ok_handler);
    let tmp = scratch("secrets");
    let results = tmp.path();
    let url = format!("http://admin:s3cr%40t@{}/private", server.addr);
    let run = run_args(
        "credentials",
        args(&["run", "--url", &url, "--vus", "1", "--duration", "300ms"]),
        results,
        &[],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() > 0 && run.failed() == 0, "{}", run.describe());
    // base64("admin:s3cr@t"), as curl sends it.
    let heads = server.heads();
    assert!(
        heads
            .iter()
            .all(|h| h.contains("\r\nAuthorization: Basic YWRtaW46czNjckB0\r\n")),
        "{heads:?}"
    );
    for secret in ["s3cr%40t", "s3cr@t"] {
        assert!(!run.stdout.contains(secret), "{}", run.describe());
        assert!(!run.stderr.contains(secret), "{}", run.describe());
        assert!(!run.json().to_string().contains(secret));
        let stored = files_under(results);
        assert!(stored.len() >= 3, "{stored:?}");
        for (path, bytes) in stored {
            assert!(
                !contains(&bytes, secret),
                "{} holds the password",
                path.display()
            );
        }
    }
    assert!(run.stdout.contains("admin:***@"), "{}", run.describe());
    assert_eq!(
        run.json()["target"].as_str(),
        Some(format!("http://admin:***@{}", server.addr).as_str())
    );
}

#[test]
fn target_credentials_go_to_the_target_only() {
    let target = Server::start(ok_handler);
    let other = Server::start(ok_handler);
    let tmp = scratch("target_creds");
    let dir = tmp.path();
    let file = dir.join("creds.yaml");
    std::fs::write(
        &file,
        format!(
            "target: http://u:pw@{}\nload: {{model: closed, vus: 1, iterations: 2}}\nsteps:\n  - get: /a\n  - get: http://{}/b\n",
            target.addr, other.addr
        ),
    )
    .unwrap();
    let run = run_args(
        "target_creds",
        args(&["run", file.to_str().unwrap()]),
        dir,
        &[],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(target
        .heads()
        .iter()
        .all(|h| h.contains("Authorization: Basic dTpwdw==")));
    assert!(other.heads().iter().all(|h| !h.contains("Authorization")));
    assert!(!run.stdout.contains("pw@"), "{}", run.describe());
}

#[test]
fn env_values_are_escaped_in_paths_and_refused_in_headers() {
    let server = Server::start(ok_handler);
    let tmp = scratch("env_escape");
    let dir = tmp.path();
    let file = dir.join("env.yaml");
    std::fs::write(
        &file,
        "load: {model: closed, vus: 1, iterations: 1}\nsteps:\n  - get: \"/p/{{ env.LOADLAB_FAULTS_PATH }}?q={{ env.LOADLAB_FAULTS_PATH }}\"\n",
    )
    .unwrap();
    let target = server.url("");
    let path_value = "a b\"c?d\r\nX-Injected: 1";
    let run = run_args(
        "env_path",
        args(&["run", file.to_str().unwrap(), "--target", &target]),
        dir,
        &[("LOADLAB_FAULTS_PATH", path_value)],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    let heads = server.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(
        heads[0].starts_with(
            "GET /p/a%20b%22c%3Fd%0D%0AX-Injected:%201?q=a%20b%22c%3Fd%0D%0AX-Injected%3A%201 HTTP/1.1\r\n"
        ),
        "{heads:?}"
    );
    assert!(!heads[0].contains("\r\nX-Injected"), "{heads:?}");

    std::fs::write(
        &file,
        "load: {model: closed, vus: 1, iterations: 1}\nsteps:\n  - get: /h\n    headers: { X-Env: \"v={{ env.LOADLAB_FAULTS_HEADER }}\" }\n",
    )
    .unwrap();
    let run = run_args(
        "env_header",
        args(&["run", file.to_str().unwrap(), "--target", &target]),
        dir,
        &[("LOADLAB_FAULTS_HEADER", "x\r\nX-Injected: 1")],
    );
    assert_eq!(run.code(), 2, "{}", run.describe());
    assert!(
        run.stderr
            .contains("steps[0].headers.X-Env: an environment variable used in this header holds a line break"),
        "{}",
        run.describe()
    );
    assert_eq!(server.requests(), 1, "nothing more was sent");
}

#[test]
fn a_raw_line_break_in_a_header_flag_is_bad_input() {
    let server = Server::start(ok_handler);
    let run = run_loadlab(
        "header_flag_crlf",
        &server.url("/h"),
        &["--vus", "1", "--header", "X-A: b\r\nX-Injected: 1"],
        "1s",
    );
    assert_refused(&run, &server, &["--header", "line break"]);
}

/// Answers `/first` with a JSON value holding a line break, anything else with `ok`.
fn crlf_value_handler(c: &mut Conn) {
    while c.read_request() {
        let last = c
            .stats
            .heads
            .lock()
            .unwrap()
            .last()
            .cloned()
            .unwrap_or_default();
        let response: &[u8] = if last.starts_with("GET /first") {
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 33\r\n\r\n{\"v\":\"a\\r\\nX-Injected: yes\"}     "
        } else {
            super::handlers::OK_2
        };
        if !c.respond(response) {
            return;
        }
    }
}

#[test]
fn a_captured_line_break_bound_for_a_header_is_counted_and_never_sent() {
    let server = Server::start(crlf_value_handler);
    let tmp = scratch("capture_crlf");
    let dir = tmp.path();
    let file = dir.join("capture.yaml");
    std::fs::write(
        &file,
        "load: {model: closed, vus: 1, iterations: 3}\nsteps:\n  - get: /first\n    capture: { v: $.v }\n  - name: second\n    get: /second\n    headers: { X-V: \"{{ v }}\" }\n",
    )
    .unwrap();
    let run = run_args(
        "capture_crlf",
        args(&["run", file.to_str().unwrap(), "--target", &server.url("")]),
        dir,
        &[],
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert_eq!(run.err("invalid_request"), 3, "{}", run.describe());
    assert_eq!(run.ok(), 3, "{}", run.describe());
    assert!(
        server.heads().iter().all(|h| !h.contains("X-Injected")),
        "{:?}",
        server.heads()
    );
    assert!(
        run.json().to_string().contains("holds a line break"),
        "{}",
        run.describe()
    );
}

#[test]
fn flags_that_would_send_nothing_are_bad_input() {
    let server = Server::start(ok_handler);
    let url = server.url("/z");
    for (name, extra, needle) in [
        (
            "timeout0",
            &["--vus", "1", "--timeout", "0s"][..],
            "--timeout",
        ),
        (
            "duration0",
            &["--vus", "1", "--duration", "0s"][..],
            "--duration",
        ),
        (
            "requests0_closed",
            &["--vus", "1", "--requests", "0"][..],
            "--requests",
        ),
        (
            "requests0_open",
            &["--rate", "5/s", "--requests", "0"][..],
            "--requests",
        ),
        (
            "rate_huge",
            &["--rate", "1e12/s", "--duration", "1s"][..],
            "limit",
        ),
    ] {
        let mut list = args(&["run", "--url", &url]);
        list.extend(args(extra));
        if !extra.contains(&"--duration") && !extra.contains(&"--requests") {
            list.extend(args(&["--duration", "1s"]));
        }
        let run = run_args(name, list, results_dir().path(), &[]);
        assert_refused(&run, &server, &[needle]);
    }
}

#[test]
fn a_byte_order_mark_before_a_valid_file_is_ignored() {
    let server = Server::start(ok_handler);
    let tmp = scratch("bom");
    let dir = tmp.path();
    let file = dir.join("bom.yaml");
    std::fs::write(
        &file,
        format!(
            "\u{feff}target: {}\nload: {{model: closed, vus: 1, iterations: 2}}\nsteps: [{{get: /bom}}]\n",
            server.url("")
        ),
    )
    .unwrap();
    let run = run_args("bom", args(&["run", file.to_str().unwrap()]), dir, &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(run.ok(), 2, "{}", run.describe());
}
