//! Every number a user can write is checked when the scenario is loaded — in a file, in
//! flags, in a study variant — with a message naming the limit; nothing panics or runs long.

use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::{LoadFlags, Scenario, UrlTest};
use std::time::{Duration, Instant};

const TARGET: &str = "target: http://127.0.0.1:8080\n";
const LOAD: &str = "load: {model: closed, vus: 1, duration: 10s}\n";
const STEPS: &str = "steps: [ {get: /a} ]\n";

fn error_of(src: &str) -> String {
    match Scenario::parse(src, "limits.yaml") {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(e) => e.to_string(),
    }
}

/// `(yaml, text the error must hold)`: each is refused with that text.
fn assert_refused(cases: &[(String, &str)]) {
    let mut wrong = Vec::new();
    for (src, needle) in cases {
        let got = error_of(src);
        if !got.contains(needle) {
            wrong.push(format!("{src}\n  expected `{needle}` in: {got}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n\n"));
}

#[test]
fn durations_beyond_the_limit_are_errors_not_panics() {
    let huge = "1e20";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{TARGET}{LOAD}warmup: {huge}\n{STEPS}"),
            "warmup: `100000000000000000000 seconds` is longer than the limit of 720h",
        ),
        (
            format!(
                "{TARGET}load: {{model: closed, stages: [{{duration: {huge}, vus: 1}}]}}\n{STEPS}"
            ),
            "load.stages[0].duration",
        ),
        (
            format!("{TARGET}load: {{model: closed, vus: 1, duration: {huge}}}\n{STEPS}"),
            "limit of 720h",
        ),
        (
            format!("{TARGET}load: {{model: open, rate: 1/s, duration: {huge}}}\n{STEPS}"),
            "limit of 720h",
        ),
        (
            format!("{TARGET}load: {{model: burst, count: 1, max_duration: {huge}}}\n{STEPS}"),
            "limit of 720h",
        ),
        (
            format!("{TARGET}{LOAD}defaults: {{timeout: {huge}}}\n{STEPS}"),
            "defaults.timeout",
        ),
        (
            format!("{TARGET}{LOAD}steps: [ {{get: /a, timeout: {huge}}} ]\n"),
            "steps[0].timeout",
        ),
        (
            format!("{TARGET}{LOAD}steps: [ {{get: /a}}, {{think: {huge}}} ]\n"),
            "steps[1].think",
        ),
        (
            format!("{TARGET}{LOAD}steps: [ {{get: /a}}, {{think: 1s..800h}} ]\n"),
            "limit of 720h",
        ),
        (
            format!("{TARGET}{LOAD}steps: [ {{get: /a, check: {{max_latency: {huge}}}}} ]\n"),
            "max_latency",
        ),
        (
            format!("{TARGET}{LOAD}warmup: 18446744073709551615\n{STEPS}"),
            "limit of 720h",
        ),
        (
            format!("{TARGET}{LOAD}warmup: .inf\n{STEPS}"),
            "not a duration",
        ),
        (
            format!("{TARGET}{LOAD}warmup: .nan\n{STEPS}"),
            "not a duration",
        ),
        (
            format!("{TARGET}{LOAD}warmup: -1\n{STEPS}"),
            "cannot be negative",
        ),
        (
            format!("{TARGET}{LOAD}warmup: 10s\n{STEPS}"),
            "the warm-up (10s) is not shorter than the run (10s)",
        ),
        (
            format!("{TARGET}{LOAD}defaults: {{timeout: 0s}}\n{STEPS}"),
            "the timeout must be above zero",
        ),
        (
            format!("{TARGET}{LOAD}steps: [ {{get: /a, timeout: 0s}} ]\n"),
            "steps[0].timeout: the timeout must be above zero",
        ),
        (
            format!("{TARGET}load: {{model: closed, vus: 1, duration: 0s}}\n{STEPS}"),
            "load.duration: the run would last 0s",
        ),
        (
            format!("{TARGET}load: {{model: open, rate: 5/s, duration: 0s}}\n{STEPS}"),
            "the run would last 0s",
        ),
    ];
    assert_refused(&cases);
}

#[test]
fn rates_arrivals_vus_and_counts_beyond_their_limits_are_errors() {
    let many_once: String = (0..65)
        .map(|i| format!("{{once: [{{get: /o{i}}}]}}, "))
        .collect();
    let cases: Vec<(String, &str)> = vec![
        (format!("{TARGET}load: {{model: open, rate: 1e12/s, duration: 1s}}\n{STEPS}"), "load.rate: 1000000000000/s is above the limit of 100000000/s"),
        (format!("{TARGET}load: {{model: open, rate: 10000000/s, duration: 720h}}\n{STEPS}"), "25920000000000 arrivals planned (rate × duration) is above the limit of 1000000000000"),
        (format!("{TARGET}load: {{model: open, stages: [{{duration: 1s, rate: 1/s, ramp_to: 1e9/s}}]}}\n{STEPS}"), "load.stages[0].ramp_to"),
        (format!("{TARGET}load: {{model: open, stages: [{{duration: 1s, rate: 0/s}}]}}\n{STEPS}"), "every rate is 0"),
        (format!("{TARGET}load: {{model: open, rate: 1/h, duration: 1s}}\n{STEPS}"), "load.rate: the rates plan 0.000 arrivals over the run (rate × duration), fewer than one"),
        (format!("{TARGET}load: {{model: open, rate: 100/s, duration: 1ms}}\n{STEPS}"), "load.duration: the run would last 1ms: too short to measure anything (at least 10ms"),
        (format!("{TARGET}load: {{model: closed, vus: 2, duration: 9ms}}\n{STEPS}"), "the run would last 9ms: too short"),
        (format!("{TARGET}defaults: {{max_body: 0}}\n{LOAD}{STEPS}"), "defaults.max_body: 0 bytes: every response with a body would fail as `body_too_large`"),
        (format!("{TARGET}load: {{model: open, rate: 5/s, duration: 1s, max_in_flight: 0}}\n{STEPS}"), "load.max_in_flight: must be between 1 and 1000000"),
        (format!("{TARGET}load: {{model: open, rate: 5/s, duration: 1s, batch_window: 20ms}}\n{STEPS}"), "load.batch_window: 20ms is wider than the widest batch window, 10ms"),
        (format!("{TARGET}load: {{model: closed, vus: 2000000, duration: 1s}}\n{STEPS}"), "load.vus: 2000000 VUs is above the limit of 1000000"),
        (format!("{TARGET}load: {{model: closed, stages: [{{duration: 1s, vus: 0}}]}}\n{STEPS}"), "no stage has a VU"),
        (format!("{TARGET}load: {{model: closed, vus: 1, iterations: 0}}\n{STEPS}"), "load.iterations: must be at least 1"),
        (format!("{TARGET}load: {{model: burst, count: 2000000}}\n{STEPS}"), "load.count: must be between 1 and 1000000"),
        (format!("{TARGET}{LOAD}steps: [ {{loop: {{count: 2000000000, steps: [{{get: /a}}]}}}} ]\n"), "loop.count: must be between 1 and 1000000000"),
        (format!("{TARGET}{LOAD}steps: [ {many_once}{{get: /a}} ]\n"), "65 `once` blocks is above the limit of 64"),
        (format!("{TARGET}{LOAD}steps: [ {{once: [{{get: /a}}]}} ]\n"), "after the first iteration its VUs would loop doing nothing"),
        (format!("{TARGET}{LOAD}defaults: {{max_body: 2TiB}}\n{STEPS}"), "invalid size"),
        (format!("{TARGET}{LOAD}defaults: {{max_body: 2048GiB}}\n{STEPS}"), "above the limit of 1TiB"),
        (format!("{TARGET}{LOAD}source_addresses: [127.0.0.1-127.0.255.255, 127.1.0.0-127.1.255.255]\n{STEPS}"), "more than 65536 source addresses"),
        (format!("{TARGET}{LOAD}thresholds: [\"latency.p95 < inf\"]\n{STEPS}"), "not a finite number"),
    ];
    assert_refused(&cases);
    let stages: String = (0..10_001).map(|_| "{duration: 1s, vus: 1},").collect();
    let too_many_stages = format!("{TARGET}load: {{model: closed, stages: [{stages}]}}\n{STEPS}");
    assert!(error_of(&too_many_stages).contains("10001 stages is above the limit of 10000"));
    let steps: String = (0..65_536).map(|_| "{get: /a},").collect();
    let too_many_steps = format!("{TARGET}{LOAD}steps: [{steps}]\n");
    assert!(error_of(&too_many_steps).contains("65536 request steps is above the limit of 65535"));
}

#[test]
fn headers_must_be_one_line_with_a_token_name_and_a_bounded_size() {
    let long = "x".repeat(64 * 1024 + 1);
    let cases: Vec<(String, &str)> = vec![
        (format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{X-A: \"b\\r\\nX-Injected: 1\"}}}} ]\n"), "steps[0].headers.X-A: the header value holds a line break (CR or LF)"),
        (format!("{TARGET}{LOAD}defaults: {{headers: {{X-A: \"b\\nc\"}}}}\n{STEPS}"), "defaults.headers.X-A: the header value holds a line break"),
        (format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{X-A: \"b\\0\"}}}} ]\n"), "the control character 0x00"),
        (format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{\"Bad Name\": x}}}} ]\n"), "`Bad Name` is not a valid header name"),
        (format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{\"X:Y\": x}}}} ]\n"), "is not a valid header name"),
        (format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{X-Long: {long}}}}} ]\n"), "above the limit of 65536 bytes for a header"),
    ];
    assert_refused(&cases);
    // A tab is fine; so is a variable (checked when the request is built).
    let ok =
        format!("{TARGET}{LOAD}steps: [ {{get: /a, headers: {{X-A: \"a\\tb {{{{ vu }}}}\"}}}} ]\n");
    Scenario::parse(&ok, "ok.yaml").unwrap();
}

#[test]
fn flag_mode_is_held_to_the_same_rules_as_a_file() {
    let load = |vus: Option<u32>, rate: Option<f64>, duration: Option<&str>, requests| LoadFlags {
        vus,
        rate,
        duration: duration.map(|d| parse_duration(d).unwrap()),
        requests,
        ..LoadFlags::default()
    };
    let base = || UrlTest {
        url: "http://127.0.0.1:8080/a".into(),
        load: load(Some(1), None, Some("1s"), None),
        ..UrlTest::default()
    };
    let err = |t: UrlTest| t.into_scenario().unwrap_err().to_string();
    assert_eq!(
        err(UrlTest {
            timeout: Some(Duration::ZERO),
            ..base()
        }),
        "--timeout: the timeout must be above zero"
    );
    assert!(err(UrlTest {
        load: load(Some(1), None, Some("0s"), None),
        ..base()
    })
    .starts_with("--duration: the run would last 0s"));
    assert_eq!(
        err(UrlTest {
            load: load(Some(1), None, None, Some(0)),
            ..base()
        }),
        "--requests: must be at least 1"
    );
    assert_eq!(
        err(UrlTest {
            load: load(None, Some(5.0), None, Some(0)),
            ..base()
        }),
        "--requests: must be at least 1"
    );
    assert!(err(UrlTest {
        load: load(None, Some(1e12), Some("1s"), None),
        ..base()
    })
    .starts_with("--rate: 1000000000000/s is above the limit"));
    assert!(err(UrlTest {
        load: load(None, Some(1e-12), None, Some(1_000_000_000)),
        ..base()
    })
    .contains("limit of 720h"));
    assert!(err(UrlTest {
        headers: vec!["X-A: b\r\nX-Injected: 1".into()],
        ..base()
    })
    .starts_with("--header: the header value holds a line break"));
    assert!(err(UrlTest {
        headers: vec!["X: {{ tokn }}".into()],
        ..base()
    })
    .starts_with("--header: unknown variable `tokn`"));
}

#[test]
fn validate_checks_every_section_of_the_file() {
    let check = |extra: &str| {
        let src = format!("{TARGET}{LOAD}{STEPS}{extra}");
        StudyDocument::parse(&src, "study.yaml").and_then(|d| d.check().map(|_| ()))
    };
    check("study: {repeat: 3, variants: [{name: a}, {name: b, load: {model: closed, vus: 2, duration: 10s}}]}\ncapacity: {start: 10/s, max: 100/s}\n")
        .unwrap();
    for (extra, needle) in [
        ("study: {repeat: 0}\n", "study.repeat"),
        (
            "study: {variants: [{name: a, load: {model: closed, vus: 0, duration: 1s}}]}\n",
            "in variant `a`: need at least 1 VU",
        ),
        (
            "study: {variants: [{name: a, warmup: 1e20}]}\n",
            "in variant `a`",
        ),
        (
            "study: {sweep: {rate: [1/s, 2/s]}}\n",
            "a `rate` sweep needs an open-model load",
        ),
        (
            "study: {sweep: {vus: [1, 4294967296]}}\n",
            "from 1 to 1000000",
        ),
        (
            "study: {sweep: {vus: [1, 2]}, bogus: 1}\n",
            "unknown field `bogus`",
        ),
        (
            "capacity: {confirm: 1000000000}\n",
            "capacity.confirm: at most 100",
        ),
        ("capacity: {precision: 0%}\n", "capacity.precision"),
        (
            "capacity: {start: 100/s, max: 10/s}\n",
            "`max` is below `start`",
        ),
        ("capacity: {max: 1e12/s}\n", "capacity.max"),
        (
            "capacity: {hold: 0s}\n",
            "capacity.hold: must be above zero",
        ),
    ] {
        let got = check(extra).map_err(|e| e.to_string());
        assert!(
            got.as_ref().is_err_and(|e| e.contains(needle)),
            "{extra}: expected `{needle}`, got {got:?}"
        );
    }
}

/// Seconds to parse and check a file of `n` one-step flows (best of two).
fn seconds_for_flows(n: usize) -> f64 {
    let mut src = format!("{TARGET}{LOAD}flows:\n");
    for i in 0..n {
        src.push_str(&format!("  - {{name: f{i}, steps: [{{get: /a{i}}}]}}\n"));
    }
    (0..2)
        .map(|_| {
            let started = Instant::now();
            StudyDocument::parse(&src, "flows.yaml")
                .unwrap()
                .check()
                .unwrap();
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn validation_time_grows_linearly_with_the_number_of_flows() {
    let small = seconds_for_flows(5_000);
    let large = seconds_for_flows(20_000);
    // 4× the flows: linear ≈ 4×, quadratic ≈ 16× (docs/limits.md, "Measurements behind the
    // scenario-file bounds").
    eprintln!("5000 flows {small:.3}s, 20000 flows {large:.3}s");
    assert!(
        large < small * 7.0,
        "5000 flows {small:.3}s, 20000 flows {large:.3}s"
    );
}

#[test]
fn deep_nesting_and_a_byte_order_mark() {
    let deep = format!(
        "{TARGET}{LOAD}steps: [ {{post: /a, json: {}}} ]\n",
        "[".repeat(100_000)
    );
    let started = Instant::now();
    let err = error_of(&deep);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(err.contains("nested deeper than 64 levels"), "{err}");
    let with_bom = format!("\u{feff}{TARGET}{LOAD}{STEPS}");
    Scenario::parse(&with_bom, "bom.yaml").unwrap();
    StudyDocument::parse(&with_bom, "bom.yaml")
        .unwrap()
        .check()
        .unwrap();
}

#[test]
fn credentials_live_only_in_the_steps_and_follow_the_target() {
    let src = format!(
        "target: http://admin:s3cret@127.0.0.1:8080/\n{LOAD}steps: [ {{get: /a}}, {{get: \"http://u:pw@127.0.0.2:9/b\"}} ]\n"
    );
    let mut s = Scenario::parse(&src, "creds.yaml").unwrap();
    assert_eq!(s.target.as_deref(), Some("http://admin:***@127.0.0.1:8080"));
    let shown = format!("{s:?}");
    assert!(
        !shown.contains("s3cret") && !shown.contains(":pw@"),
        "{shown}"
    );
    let steps: Vec<_> = s.request_steps().cloned().collect();
    assert_eq!(steps[1].name, "GET http://u:***@127.0.0.2:9/b");
    let auth = |s: &Scenario, i: usize| {
        s.request_steps()
            .nth(i)
            .unwrap()
            .auth
            .as_ref()
            .map(|a| (a.origin().to_string(), a.authorization()))
    };
    assert_eq!(
        auth(&s, 0),
        Some((
            "http://127.0.0.1:8080".into(),
            "Basic YWRtaW46czNjcmV0".into()
        ))
    );
    assert_eq!(
        auth(&s, 1),
        Some(("http://127.0.0.2:9".into(), "Basic dTpwdw==".into()))
    );
    // --target replaces the target's credentials; a step's own URL keeps its own.
    s.set_target("http://127.0.0.3:8080").unwrap();
    assert_eq!(auth(&s, 0), None);
    assert!(auth(&s, 1).is_some());
    let err = s.set_target("http://x:secret@h:99999/").unwrap_err();
    assert!(!err.contains("secret") && err.contains("x:***@"), "{err}");
}

/// A URL's password may be read from the environment when the file is loaded (what
/// `loadlab import` writes for a password it found in a URL); it is sent as the literal one
/// would be, and an unset variable is the usual load-time error naming the field.
#[test]
fn a_urls_password_may_come_from_the_environment() {
    std::env::set_var("LOADLAB_LIMITS_TEST_PASSWORD", "s3cret");
    let src = format!(
        "target: \"http://admin:{{{{ env.LOADLAB_LIMITS_TEST_PASSWORD }}}}@127.0.0.1:8080\"\n{LOAD}steps: [ {{get: /a}}, {{get: \"http://u:{{{{ env.LOADLAB_LIMITS_TEST_PASSWORD }}}}@127.0.0.2:9/b\"}} ]\n"
    );
    let s = Scenario::parse(&src, "creds.yaml").unwrap();
    assert_eq!(s.target.as_deref(), Some("http://admin:***@127.0.0.1:8080"));
    let auth: Vec<String> = s
        .request_steps()
        .map(|step| step.auth.as_ref().unwrap().authorization())
        .collect();
    // base64("admin:s3cret"), base64("u:s3cret")
    assert_eq!(auth, ["Basic YWRtaW46czNjcmV0", "Basic dTpzM2NyZXQ="]);
    let unset = src.replace(
        "LOADLAB_LIMITS_TEST_PASSWORD }}@127.0.0.2",
        "LOADLAB_LIMITS_TEST_UNSET }}@127.0.0.2",
    );
    let err = Scenario::parse(&unset, "creds.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("steps[1]") && err.contains("`LOADLAB_LIMITS_TEST_UNSET` is not set"),
        "{err}"
    );
}
