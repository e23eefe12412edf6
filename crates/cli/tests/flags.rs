//! The flag tables, checked without the binary: what a command line parses into, and which
//! values clap refuses (the binary exits 2 on them).

use clap::{CommandFactory, Parser};
use loadlab_cli::{Cli, Command};
use std::time::Duration;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("loadlab").chain(args.iter().copied()))
}

#[test]
fn clap_finds_the_declarations_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn run_flags_parse_into_typed_values() {
    let cli = parse(&[
        "run",
        "--url",
        "http://127.0.0.1:1/",
        "--rate",
        "200/s",
        "-d",
        "1s",
    ])
    .unwrap();
    let Command::Run(run) = cli.command else {
        panic!("not a run");
    };
    assert_eq!(run.url.as_deref(), Some("http://127.0.0.1:1/"));
    assert_eq!(run.rate, Some(200.0));
    assert_eq!(run.duration, Some(Duration::from_secs(1)));
    assert_eq!(run.file, None);
    assert_eq!(run.retry_invalid, 0);
    assert_eq!(run.live.dashboard, None);
}

#[test]
fn rates_durations_and_fractions_in_their_other_spellings() {
    let cli = parse(&[
        "run",
        "--url",
        "http://127.0.0.1:1/",
        "--rate",
        "12000/m",
        "-d",
        "1m30s",
        "--baseline",
        "last",
        "--fail-on-regression",
        "5%",
        "--dashboard",
    ])
    .unwrap();
    let Command::Run(run) = cli.command else {
        panic!("not a run");
    };
    assert_eq!(run.rate, Some(200.0));
    assert_eq!(run.duration, Some(Duration::from_secs(90)));
    assert_eq!(run.fail_on_regression, Some(0.05));
    assert_eq!(
        run.live.dashboard.as_deref(),
        Some(loadlab_cli::DEFAULT_LIVE_ADDR)
    );
}

#[test]
fn defaults_are_typed_too() {
    let Command::Target(target) = parse(&["target"]).unwrap().command else {
        panic!("not a target");
    };
    assert_eq!(target.listen, "127.0.0.1:8080");
    assert_eq!(target.service_time, Duration::ZERO);
    assert_eq!(target.step_time, Duration::from_millis(8));
    assert_eq!(target.step_per_seq, Duration::from_micros(500));
    let Command::Gate(gate) = parse(&["gate", "checkout"]).unwrap().command else {
        panic!("not a gate");
    };
    assert_eq!(gate.fail_on_regression, 0.05);
    assert_eq!(gate.detector.window, 50);
}

#[test]
fn bad_values_are_clap_errors_naming_the_flag() {
    for (args, flag) in [
        (
            &["run", "--url", "http://127.0.0.1:1/", "--duration", "10x"][..],
            "--duration",
        ),
        (
            &["run", "--url", "http://127.0.0.1:1/", "--rate", "abc"][..],
            "--rate",
        ),
        (
            &["compare", "a", "b", "--fail-on-regression", "lots"][..],
            "--fail-on-regression",
        ),
        (
            &["run", "--url", "http://127.0.0.1:1/", "--label", "nokey"][..],
            "--label",
        ),
    ] {
        let Err(e) = parse(args) else {
            panic!("{args:?} parsed");
        };
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::ValueValidation,
            "{args:?}"
        );
        assert!(e.use_stderr(), "{args:?}");
        let text = e.to_string();
        assert!(text.contains(flag), "{args:?}: {text}");
    }
}
