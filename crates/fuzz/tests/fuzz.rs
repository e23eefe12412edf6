//! The fuzz targets: each mutates its corpus and feeds the real code (see the crate docs for
//! the long run). A target fails on a panic, a case slower than its budget, a case that
//! allocates more than its budget, a hang, or a broken property stated below.

use loadlab_engine::http::{ChunkedSkipper, HttpConn, MAX_HEAD};
use loadlab_engine::{PreparedScenario, ResponseData};
use loadlab_fuzz::{hostile, mutated, run_target, Calibration, PeakAlloc, ScriptedStream};
use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::{limits, Scenario};
use proptest::prelude::*;
use std::path::Path;

#[global_allocator]
static MEMORY: PeakAlloc = PeakAlloc;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

fn texts(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// Scenario seeds: every example of the repository and a few files using every section.
fn scenario_corpus() -> Vec<Vec<u8>> {
    let mut corpus: Vec<Vec<u8>> = std::fs::read_dir(workspace().join("examples"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect();
    corpus.extend(texts(&[
        "target: http://127.0.0.1:8080\nload: {model: open, stages: [{duration: 2s, rate: 10/s, ramp_to: 50/s}], arrivals: poisson, max_in_flight: 100}\nwarmup: 500ms\nthresholds: [\"latency.p95 < 2.8s\", \"group.g.errors < 1%\", \"step.s.latency.p99 < 1s\"]\ndefaults: {timeout: 5s, headers: {Accept: application/json}, max_body: 1MiB}\ndata: {users: {values: [{name: ann, id: 1}, {name: bob, id: 2}], pick: unique}, ids: {values: [1, 2, 3]}}\nflows:\n  - name: f\n    weight: 3\n    steps:\n      - once: [ {name: s, group: g, post: /login, json: {u: \"{{ users.name }}\", n: \"{{ ids }}\"}, capture: {token: $.token, kind: {header: Content-Type}, re: {regex: 'a(b)', group: 1}}} ]\n      - loop: {count: 3, steps: [ {get: \"/x/{{ token }}?q={{ random_int(1, 9) }}\", headers: {Authorization: \"Bearer {{ token }}\"}, query: {p: 2}, check: {status: [200, 201], json: {$.ok: true}, body_contains: ok, header: {X-A: b}, max_latency: 1s}} ] }\n      - think: 1s..2s\n  - {name: h, steps: [ {get: \"http://admin:pw@127.0.0.1:9/h\", form: {a: \"{{ uuid() }}\"}} ]}\n",
        "target: http://127.0.0.1:8080\nload: {model: closed, stages: [{duration: 1s, vus: 2}, {duration: 0s, vus: 5}], start_vus: 1}\nsteps: [ {get: /a, timeout: 2s}, {think: 0.5} ]\nstudy:\n  repeat: 6\n  order: sequential\n  cooldown: 1s\n  equivalence: 2%\n  metrics: [latency_ms.p95]\n  variants:\n    - {name: base}\n    - {name: more, load: {model: closed, vus: 4, duration: 1s}}\n  compare: [[base, more]]\ncapacity: {start: 50/s, hold: 10s, warmup: 1s, precision: 5%, confirm: 2, max: 1000/s, max_errors: 1%}\n",
        "target: http://127.0.0.1:8080\nload: {model: open, rate: 20/s, duration: 2s}\nsteps: [ {get: /a} ]\nstudy: {sweep: {rate: [10/s, 20/s, 40/s]}}\n",
        "load: {model: burst, count: 100, max_duration: 5s}\nconnections: none\nsource_addresses: 127.0.0.1-127.0.0.4\ninsecure: true\nsteps: [ {head: \"https://127.0.0.1:8443/\"} ]\n",
        "name: anchors\nx: &a {model: closed, vus: 1, duration: 1s}\nload: *a\nsteps: [ {get: /a} ]\n",
    ]));
    // Above the limit of 1,000 variants, as the 20,000 of the test below, but a tenth of its
    // size: every mutation of a seed is parsed whole (a YAML position index and a serde tree,
    // for the scenario and again for the study), about 25 µs of debug-build CPU per line, so
    // the 400 KB seed made the slowest cases of the pass (0.5 s of CPU here, 2 s on a slower
    // VM: issue 44) without finding more than this one does.
    corpus.push(hostile::many_variants(2_000).into_bytes());
    corpus.push(hostile::many_flows(200_000).into_bytes());
    corpus
}

/// Parses and checks `text` as `loadlab validate` does, from a file on disk; the time it took.
fn validate_file(text: &str) -> (Result<(), String>, std::time::Duration) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.yaml");
    std::fs::write(&path, text).unwrap();
    let started = std::time::Instant::now();
    let result = StudyDocument::read(&path)
        .and_then(|doc| doc.check().map(|_| ()))
        .map_err(|e| e.to_string());
    (result, started.elapsed())
}

#[test]
fn a_study_of_twenty_thousand_variants_is_refused_at_once_with_the_limit_named() {
    let (result, took) = validate_file(&hostile::many_variants(20_000));
    let message = result.unwrap_err();
    assert!(
        message.contains("20000 variants is above the limit of 1000"),
        "{message}"
    );
    let calibration = Calibration::measure();
    let budget = calibration.scale(std::time::Duration::from_secs(2));
    assert!(took < budget, "took {took:?} ({})", calibration.words());
}

#[test]
fn variants_up_to_the_limit_validate_in_linear_time() {
    // Linear: no variant re-parses the whole file (docs/limits.md, "Measurements behind the
    // scenario-file bounds").
    let (result, took) = validate_file(&hostile::many_variants(limits::MAX_VARIANTS));
    result.unwrap();
    let calibration = Calibration::measure();
    let budget = calibration.scale(std::time::Duration::from_secs(2));
    assert!(took < budget, "took {took:?} ({})", calibration.words());
}

#[test]
fn a_ten_megabyte_scenario_is_refused_before_it_is_parsed() {
    let text = hostile::many_flows(200_000);
    assert!(text.len() > 9_000_000);
    MEMORY.reset_peak();
    let (result, took) = validate_file(&text);
    let message = result.unwrap_err();
    assert!(
        message.contains("larger than the limit of 4 MiB"),
        "{message}"
    );
    let calibration = Calibration::measure();
    let budget = calibration.scale(std::time::Duration::from_millis(500));
    assert!(took < budget, "took {took:?} ({})", calibration.words());
    // Read at most the limit and one byte, never parsed: far below what parsing it takes.
    let used = MEMORY.peak_since_reset();
    assert!(used < 3 * limits::MAX_FILE_BYTES, "{used} bytes");
}

#[test]
fn fuzz_scenario_files_and_every_section() {
    let file = workspace().join("examples").join("fuzz.yaml");
    let file = file.to_string_lossy().into_owned();
    run_target(
        "scenario_files",
        &MEMORY,
        mutated(scenario_corpus(), 6),
        move |input| {
            let text = String::from_utf8_lossy(&input);
            match Scenario::parse(&text, &file) {
                Ok(s) => {
                    let plan = s.plan();
                    prop_assert!(
                        plan.duration() <= limits::MAX_DURATION * limits::MAX_STAGES as u32
                    );
                    // No URL the scenario keeps holds a password but the redacted `***`.
                    let urls = s.target.iter().chain(s.request_steps().map(|r| &r.url));
                    for url in urls {
                        if let Ok(parsed) = url::Url::parse(url) {
                            prop_assert!(
                                matches!(parsed.password(), None | Some("***")),
                                "a password kept in {url}"
                            );
                        }
                    }
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            if let Ok(doc) = StudyDocument::parse(&text, &file) {
                let _ = doc.check().map_err(|e| e.to_string());
            }
            Ok(())
        },
    );
}

/// A scenario whose path, query, headers and bodies all hold `text` (as JSON strings, which
/// YAML reads verbatim).
fn templated_scenario(text: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let path = q(&format!("/p/{text}"));
    let value = q(text);
    format!(
        "target: http://127.0.0.1:9\nload: {{model: closed, vus: 1, iterations: 1}}\ndata: {{users: {{values: [{{name: \"a\\r\\nb c\", id: 7}}]}}}}\nsteps:\n  - post: {path}\n    headers: {{X-T: {value}}}\n    query: {{q: {value}}}\n    json: {{a: {value}, b: [{value}]}}\n    capture: {{token: $.t}}\n  - put: {path}\n    headers: {{X-T: {value}}}\n    form: {{f: {value}}}\n  - get: {path}\n    body: {value}\n"
    )
}

#[test]
fn fuzz_templates_never_inject_into_a_request() {
    let seeds = texts(&[
        "Bearer {{ token }}",
        "{{ users.name }}-{{ users.id }}",
        "{{ vu }}/{{ iteration }}?a={{ random_int(-5, 5) }}&b=1",
        "{{ uuid() }} {{ now_ms() }} {{ random_string(8) }}",
        "{{ env.HOME }}",
        "plain text",
        "a{{b}}c{{",
        "{{ users }}",
        "100% \"quoted\" <tag> #frag",
    ]);
    run_target("templates", &MEMORY, mutated(seeds, 5), |input| {
        let text = String::from_utf8_lossy(&input);
        let _ = loadlab_scenario::template::compile(
            &text,
            &loadlab_scenario::template::Names {
                data: &[],
                captures: &["token".to_string()],
                available: None,
            },
        );
        let Ok(scenario) = Scenario::parse(&templated_scenario(&text), "t.yaml") else {
            return Ok(());
        };
        let prepared = PreparedScenario::new(&scenario)
            .map_err(|e| TestCaseError::fail(format!("prepare: {e}")))?;
        for index in 0..prepared.requests.len() {
            // An invalid value refuses the request; anything rendered is exactly one
            // request with exactly the headers the scenario asked for.
            let Ok(bytes) = prepared.render_first(index, 1) else {
                continue;
            };
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut req = httparse::Request::new(&mut headers);
            let status = req.parse(&bytes);
            prop_assert!(
                matches!(status, Ok(httparse::Status::Complete(_))),
                "{status:?}: {}",
                String::from_utf8_lossy(&bytes)
            );
            let allowed = [
                "Host",
                "User-Agent",
                "X-T",
                "Content-Type",
                "Content-Length",
            ];
            for h in req.headers.iter() {
                prop_assert!(
                    allowed.contains(&h.name),
                    "injected header {:?} in {}",
                    h.name,
                    String::from_utf8_lossy(&bytes)
                );
            }
            let length: usize = req
                .headers
                .iter()
                .find(|h| h.name == "Content-Length")
                .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                .unwrap_or(0);
            let head_len = match status {
                Ok(httparse::Status::Complete(n)) => n,
                _ => unreachable!(),
            };
            prop_assert_eq!(head_len + length, bytes.len());
        }
        Ok(())
    });
}

#[test]
fn fuzz_durations_rates_thresholds_and_small_parsers() {
    let seeds = texts(&[
        "500ms",
        "1m30s",
        "2.5s",
        "250us",
        "0",
        "200/s",
        "12000/m",
        "36/h",
        "latency.p95 < 2.8s",
        "http.errors < 5%",
        "step.create application.latency.p999 <= 300",
        "group.auth.service_time.max >= 1ms",
        "requests.rate > 100",
        "$.items[-1].id",
        "$['a key'].b[0]",
        "127.0.0.1-127.0.0.16,::1",
        "a,b\r\n1,\"x, \"\"y\"\"\"\n",
    ]);
    run_target("units", &MEMORY, mutated(seeds, 4), |input| {
        use loadlab_scenario::units::{parse_duration, parse_rate};
        let text = String::from_utf8_lossy(&input);
        if let Ok(d) = parse_duration(&text) {
            prop_assert!(d <= limits::MAX_DURATION);
        }
        if let Ok(r) = parse_rate(&text) {
            prop_assert!(r.is_finite() && r >= 0.0);
        }
        if let Ok(t) = loadlab_scenario::Threshold::parse(&text) {
            prop_assert!(t.value.is_finite());
        }
        let _ = loadlab_scenario::jsonpath::JsonPath::parse(&text);
        if let Ok(a) = loadlab_scenario::parse_addresses(&[text.to_string()]) {
            prop_assert!(a.len() <= limits::MAX_SOURCE_ADDRESSES);
        }
        let _ = loadlab_scenario::parse_csv(&text);
        Ok(())
    });
}

fn response_corpus() -> Vec<Vec<u8>> {
    let mut many = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n".to_vec();
    for i in 0..60 {
        many.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\nok");
    let mut corpus = texts(&[
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\nWiki\r\n5\r\npedia\r\n0\r\nT: 1\r\n\r\n",
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n",
    ]);
    corpus.push(many);
    corpus
}

#[test]
fn fuzz_http_responses() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let strategy = (
        mutated(response_corpus(), 6),
        proptest::collection::vec(any::<usize>(), 0..12),
        any::<bool>(),
    );
    run_target(
        "http_responses",
        &MEMORY,
        strategy,
        move |(data, cuts, head)| {
            const MAX_BODY: u64 = 64 * 1024;
            let mut conn = HttpConn::new(ScriptedStream::new(data, &cuts));
            for _ in 0..3 {
                let mut keep = ResponseData::new(true, true);
                let result = runtime.block_on(conn.exchange(
                    b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
                    head,
                    MAX_BODY,
                    &loadlab_engine::ServerHeader::ServerTiming,
                    Some(&mut keep),
                ));
                let Ok(response) = result else { break };
                prop_assert!((200..1000).contains(&response.status), "{response:?}");
                prop_assert!(keep.header_bytes() <= MAX_HEAD);
                prop_assert!(keep.body.len() as u64 <= MAX_BODY + 2 * MAX_HEAD as u64);
                let _ = keep.header("content-length");
                if response.close {
                    break;
                }
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_chunked_bodies() {
    let seeds = texts(&[
        "4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\nNEXT",
        "0\r\n\r\n",
        "10\r\n0123456789abcdef\r\n0\r\n\r\n",
        "fffffffffffffff\r\nab",
    ]);
    let strategy = (
        mutated(seeds, 6),
        proptest::collection::vec(any::<usize>(), 0..12),
    );
    run_target("chunked_bodies", &MEMORY, strategy, |(data, cuts)| {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
        cuts.push(data.len());
        cuts.sort_unstable();
        let mut skipper = ChunkedSkipper::new();
        let mut body = Vec::new();
        let mut at = 0;
        for cut in cuts {
            while at < cut {
                let used = match skipper.feed_into(&data[at..cut], Some(&mut body)) {
                    Ok(n) => n,
                    Err(_) => return Ok(()),
                };
                prop_assert!(used <= cut - at);
                at += used;
                if skipper.is_done() {
                    prop_assert_eq!(skipper.feed(&data[at..]).unwrap(), 0);
                    prop_assert_eq!(body.len() as u64, skipper.body_bytes);
                    prop_assert!(body.len() <= data.len());
                    return Ok(());
                }
                if used == 0 {
                    break;
                }
            }
        }
        prop_assert_eq!(body.len() as u64, skipper.body_bytes);
        Ok(())
    });
}

#[test]
fn fuzz_run_and_study_json() {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let seeds = vec![
        std::fs::read(corpus_dir.join("run.json")).unwrap(),
        std::fs::read(corpus_dir.join("study.json")).unwrap(),
    ];
    run_target("result_json", &MEMORY, mutated(seeds, 6), |input| {
        if let Ok(run) = serde_json::from_slice::<loadlab_metrics::RunResult>(&input) {
            let doc = loadlab_report::run_report(&run, None);
            let _ = loadlab_report::render_markdown(&doc, "charts");
            let _ = loadlab_report::render_html(&doc);
            let mut out = Vec::new();
            let _ = loadlab_report::render_summary(&run, &mut out, loadlab_report::Style::PLAIN);
        }
        if let Ok(study) = serde_json::from_slice::<loadlab_analysis::study::StudyResult>(&input) {
            let doc = loadlab_report::study_report(&study, &Default::default(), None);
            let _ = loadlab_report::render_markdown(&doc, "charts");
            let _ = loadlab_report::render_html(&doc);
        }
        Ok(())
    });
}
