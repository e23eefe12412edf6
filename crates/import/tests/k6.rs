//! The k6 importer: seed studies 000 and 004, rebuilt as the k6 scripts they ran, convert to
//! the scenarios written by hand in examples/ (load stages, flows, steps, groups, captures,
//! checks, thresholds, data), and every construct outside the common subset is reported with
//! its line.

mod common;

use common::{example, fixture, import_ok, repo_root, validate, validate_in_dir};
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::{Check, Load, Scenario, Step};

/// Imports a fixture and loads the scenario beside a copy of the examples' data files.
fn convert(name: &str) -> (Scenario, loadlab_import::Imported) {
    let out = import_ok(Kind::K6, &fixture(name), name, &Options::default());
    // A literal password in a script is read from the environment, never written out.
    std::env::set_var("PASSWORD", "password");
    let users = std::fs::read_to_string(repo_root().join("examples/data/users.csv")).unwrap();
    let s = validate_in_dir(
        &out.yaml,
        &format!("loadlab-import-k6-{name}"),
        "scenario.yaml",
        &[("data/users.csv", &users)],
    );
    (s, out)
}

/// Flows, steps (requests with everything the engine sends and checks, think times, once
/// blocks) of two scenarios are the same.
fn same_flows(got: &Scenario, want: &Scenario, yaml: &str) {
    assert_eq!(got.flows.len(), want.flows.len(), "{yaml}");
    for (g, w) in got.flows.iter().zip(&want.flows) {
        assert_eq!(g.name, w.name, "{yaml}");
        same_steps(&g.steps, &w.steps, &g.name, yaml);
    }
}

fn same_steps(got: &[Step], want: &[Step], flow: &str, yaml: &str) {
    assert_eq!(got.len(), want.len(), "flow {flow}: {got:#?}\n{yaml}");
    for (gs, ws) in got.iter().zip(want) {
        match (gs, ws) {
            (Step::Request(gr), Step::Request(wr)) => {
                let what = format!("flow `{flow}` step `{}`\n{yaml}", wr.name);
                assert_eq!(gr.name, wr.name, "{what}");
                assert_eq!(gr.group, wr.group, "{what}");
                assert_eq!(gr.method, wr.method, "{what}");
                assert_eq!(gr.url, wr.url, "{what}");
                assert_eq!(gr.headers, wr.headers, "{what}");
                assert_eq!(gr.query, wr.query, "{what}");
                let mut want_body = wr.body.clone();
                if let Some(loadlab_scenario::Body::Json(j)) = &mut want_body {
                    if j.get("password")
                        .is_some_and(|p| !p.to_string().contains("{{"))
                    {
                        j["password"] = "{{ env.PASSWORD }}".into();
                    }
                }
                assert_eq!(gr.body, want_body, "{what}");
                assert_eq!(gr.timeout, wr.timeout, "{what}");
                assert_eq!(gr.captures, wr.captures, "{what}");
                assert_eq!(gr.checks, wr.checks, "{what}");
            }
            (Step::Once(g), Step::Once(w)) => same_steps(g, w, flow, yaml),
            (g, w) => assert_eq!(g, w, "flow {flow}\n{yaml}"),
        }
    }
}

fn same_thresholds(got: &Scenario, want: &Scenario) {
    let key = |s: &Scenario| {
        let mut t: Vec<String> = s
            .thresholds
            .iter()
            .map(|t| format!("{:?} {:?} {}", t.metric, t.op, t.value))
            .collect();
        t.sort();
        t
    };
    assert_eq!(key(got), key(want));
}

/// The example's staged load as k6 runs the script's `stages`: from 1 VU (k6's `startVUs`
/// default), where the hand-written example starts from none.
fn from_one_vu(load: &Load) -> Load {
    let mut load = load.clone();
    if let Load::Closed(c) = &mut load {
        c.start_vus = 1;
    }
    load
}

#[test]
fn seed_000_converts_to_the_example_scenario() {
    let (got, out) = convert("seed-000.k6.js");
    let want = example("seed-000-permit-k6-stages.yaml");
    assert_eq!(got.target, want.target);
    assert_eq!(got.load, from_one_vu(&want.load), "{}", out.yaml);
    assert!(matches!(got.load, Load::Closed(_)));
    assert_eq!(got.defaults.timeout, want.defaults.timeout);
    assert_eq!(got.defaults.headers, want.defaults.headers);
    let data = |s: &Scenario| {
        s.data
            .iter()
            .map(|d| (d.name.clone(), d.pick, d.csv.clone(), d.columns.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(data(&got), data(&want));
    same_flows(&got, &want, &out.yaml);
    same_thresholds(&got, &want);
    assert_eq!(out.report.unsupported, [], "{}", out.report);
    let c: Vec<(&str, &str)> = out
        .report
        .correlations
        .iter()
        .map(|c| (c.variable.as_str(), c.capture.as_str()))
        .collect();
    assert_eq!(c, [("token", "$.token"), ("app_id", "$.id")]);
}

#[test]
fn seed_004_converts_to_the_example_scenario() {
    let (got, out) = convert("seed-004.k6.js");
    let want = example("seed-004-gateway-stages.yaml");
    assert_eq!(got.target, want.target);
    assert_eq!(got.load, from_one_vu(&want.load), "{}", out.yaml);
    assert_eq!(got.defaults.timeout, want.defaults.timeout);
    assert_eq!(got.defaults.headers, want.defaults.headers);
    same_flows(&got, &want, &out.yaml);
    same_thresholds(&got, &want);
    assert_eq!(out.report.unsupported, [], "{}", out.report);
    assert!(
        out.yaml
            .contains("# `if (__ITER === 0)`: on the VU's first iteration only\n"),
        "{}",
        out.yaml
    );
}

#[test]
fn unsupported_constructs_are_reported_with_their_line() {
    let source = fixture("features.k6.js");
    let out = import_ok(Kind::K6, &source, "features.k6.js", &Options::default());
    let r = &out.report;
    let lines: Vec<(Option<usize>, &str)> = r
        .unsupported
        .iter()
        .map(|u| (u.line, u.what.as_str()))
        .collect();
    let line_of = |text: &str| {
        source
            .lines()
            .position(|l| l.contains(text))
            .map(|i| i + 1)
            .unwrap_or_else(|| panic!("no `{text}` in the fixture"))
    };
    let has = |at: &str, what: &str| {
        let line = line_of(at);
        assert!(
            lines
                .iter()
                .any(|(l, w)| *l == Some(line) && w.contains(what)),
            "no `{what}` at line {line} in {lines:#?}"
        )
    };
    has("import ws", "module `k6/ws`");
    has("new Trend", "custom metric `signinTime`");
    has("gracefulStop", "`gracefulStop`");
    has("admins:", "scenario `admins`");
    has("checks:", "threshold checks");
    has("abortOnFail", "abortOnFail");
    has("iteration_duration", "iteration_duration");
    has("discardResponseBodies", "options.discardResponseBodies");
    has("export function setup", "`setup()`");
    has("export function teardown", "`teardown()`");
    has("signinTime.add", "signinTime.add");
    has("'odd'", "check 'odd'");
    has("if (res.status", "`if (");
    has("for (let i", "for (let i");
    has(
        "http.batch",
        "http.batch: not a literal array or object of requests",
    );
    has("kind: 'read'", "tag `kind`");
    has("redirects: 0", "`redirects`");
    has("sleep(randomSleep", "sleep");
    assert_eq!(r.variables.len(), 1, "{r}");
    assert_eq!(r.variables[0].name, "SHOP_PASSWORD");
    let for_line = line_of("for (let i");
    assert!(
        out.yaml
            .contains(&format!("# not converted (line {for_line}): `for (let i")),
        "{}",
        out.yaml
    );

    std::env::set_var("SHOP_PASSWORD", "x");
    let s = validate_in_dir(
        &out.yaml,
        "loadlab-import-k6f",
        "features.yaml",
        &[("users.csv", "name\nann\n")],
    );
    assert_eq!(s.target.as_deref(), Some("https://shop.test"));
    let Load::Open(open) = &s.load else {
        panic!("{:?}", s.load)
    };
    let stages: Vec<(u64, f64, Option<f64>)> = open
        .stages
        .iter()
        .map(|st| (st.duration.as_secs(), st.rate, st.ramp_to))
        .collect();
    assert_eq!(stages, [(120, 5.0 / 60.0, Some(1.0)), (300, 1.0, None)]);
    assert_eq!(open.max_in_flight, 100);
    let reqs: Vec<_> = s.request_steps().collect();
    assert_eq!(reqs.len(), 2, "{}", out.yaml);
    assert_eq!(
        reqs[0].body,
        Some(loadlab_scenario::Body::Form(vec![
            ("pass".into(), "{{ env.SHOP_PASSWORD }}".into()),
            ("user".into(), "{{ users.name }}".into()),
        ]))
    );
    assert_eq!(
        reqs[0].checks,
        [
            Check::Status(vec![200, 204]),
            Check::MaxLatency(std::time::Duration::from_millis(300))
        ]
    );
    assert_eq!(reqs[0].captures[0].name, "session");
    assert_eq!(reqs[1].name, "search");
    assert_eq!(reqs[1].url, "/api/items/{{ session }}");
    assert_eq!(
        reqs[1].headers,
        [("X-Session".to_string(), "{{ session }}".to_string())]
    );
    assert_eq!(reqs[1].checks, [Check::BodyContains("\"id\"".into())]);
    let t: Vec<&str> = s.thresholds.iter().map(|t| t.expr.as_str()).collect();
    assert_eq!(t, ["step.search.latency.p99 < 800ms"]);
    assert_eq!(s.data[0].pick, loadlab_scenario::Pick::Random);
}

#[test]
fn not_a_k6_script_is_refused_with_the_fix() {
    let err = import(Kind::K6, "name: [unclosed\n", "a.js", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("a.js: 2:1: not valid JavaScript"), "{err}");
    assert!(err.contains("not valid JavaScript"), "{err}");
    let err = import(Kind::K6, "const a = 1;\n", "b.js", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("b.js is not a k6 script"), "{err}");
}

/// A script of `options` and one request in the default function.
fn script(options: &str, body: &str) -> String {
    format!(
        "import http from 'k6/http';\nimport {{ check, sleep }} from 'k6';\nimport {{ randomIntBetween }} from 'https://jslib.k6.io/k6-utils/1.2.0/index.js';\nconst BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';\nexport const options = {options};\nexport default function () {{\n{body}\n}}\n"
    )
}

fn parsed(source: &str) -> (Scenario, loadlab_import::Imported) {
    let out = import(Kind::K6, source, "t.js", &Options::default())
        .unwrap_or_else(|e| panic!("{e}\n{source}"));
    let s = validate(&out.yaml, "t.yaml");
    (s, out)
}

#[test]
fn expressions_become_templates_and_captures() {
    std::env::set_var("X", "1");
    let cases = [
        ("http.get(`${BASE_URL}/a/${__VU}/${__ITER}`);", "/a/{{ vu }}/{{ iteration }}"),
        ("http.get(BASE_URL + '/a?x=' + __ENV.X);", "/a?x={{ env.X }}"),
        ("http.get(`${BASE_URL}/t/${new Date().getTime()}`);", "/t/{{ now_ms() }}"),
        ("http.get(`${BASE_URL}/t/${Date.now()}`);", "/t/{{ now_ms() }}"),
        ("http.get(`${BASE_URL}/r/${randomIntBetween(1, 9)}`);", "/r/{{ random_int(1, 9) }}"),
        ("http.get('https://other.test/p');", "https://other.test/p"),
        ("http.del(`${BASE_URL}/d`, null, null);", "/d"),
        ("const P = '/api';\nhttp.get(`${BASE_URL}${P}/x`);", "/api/x"),
        (
            "const r = http.post(`${BASE_URL}/s`);\nconst id = JSON.parse(r.body).data.id;\nhttp.get(`${BASE_URL}/i/${id}`);",
            "/i/{{ id }}",
        ),
        (
            "const r = http.post(`${BASE_URL}/s`);\nhttp.get(`${BASE_URL}/i/${r.json('items.0.id')}`);",
            "/i/{{ id }}",
        ),
    ];
    for (body, url) in cases {
        let (s, out) = parsed(&script("{}", body));
        let last = s.request_steps().last().unwrap();
        assert_eq!(last.url, url, "{body}\n{}", out.yaml);
    }
    let (s, out) = parsed(&script(
        "{}",
        "const r = http.post(`${BASE_URL}/s`);\nconst id = JSON.parse(r.body).data.id;\nhttp.get(`${BASE_URL}/i/${id}`);\nconst r2 = http.post(`${BASE_URL}/t`);\nhttp.get(`${BASE_URL}/j/${r2.json('items.0.id')}`);",
    ));
    let caps: Vec<Vec<String>> = s
        .request_steps()
        .map(|r| r.captures.iter().map(|c| c.name.clone()).collect())
        .collect();
    assert_eq!(
        caps,
        [
            vec!["id".to_string()],
            vec![],
            vec!["id".to_string()],
            vec![]
        ],
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains("capture: { id: $.data.id }"),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains("capture: { id: \"$.items[0].id\" }"),
        "{}",
        out.yaml
    );
    // Pauses: fixed, uniform, whole seconds.
    let (s, _) = parsed(&script(
        "{}",
        "http.get(`${BASE_URL}/a`);\nsleep(0.5);\nsleep(1 + Math.random() * 4);\nsleep(randomIntBetween(2, 3));",
    ));
    let thinks: Vec<(u128, u128)> = s.flows[0]
        .steps
        .iter()
        .filter_map(|st| match st {
            Step::Think(t) => Some((t.min.as_millis(), t.max.as_millis())),
            _ => None,
        })
        .collect();
    assert_eq!(thinks, [(500, 500), (1000, 5000), (2000, 3000)]);
    // A counted `for` loop is a `loop:`; its counter has no loadlab value.
    let (s, out) = parsed(&script(
        "{}",
        "for (let i = 0; i < 3; i++) {\n  http.get(`${BASE_URL}/a`);\n  http.get(`${BASE_URL}/b/${i}`);\n}",
    ));
    assert!(
        matches!(&s.flows[0].steps[0], Step::Loop { count: 3, steps } if steps.len() == 1),
        "{}",
        out.yaml
    );
    assert_eq!(out.report.unsupported.len(), 1, "{}", out.report);
    assert_eq!(out.report.unsupported[0].line, Some(9));
    assert!(
        out.report.unsupported[0]
            .what
            .contains("the loop counter `i` (line 7) has no loadlab value (a `loop:` has no index): to send each value, drop the loop and list them in a data set"),
        "{}",
        out.report
    );
}

/// Real scripts keep their requests in helpers of several statements and give `group` a
/// function by name: both are followed (a helper calling itself is reported, not followed),
/// and TypeScript reads as the JavaScript it is.
#[test]
fn helpers_of_several_statements_and_groups_by_name_are_followed() {
    let script = r#"import http from 'k6/http';
import { group, check, sleep } from 'k6';

interface Pizza { name: string }
const BASE: string = 'http://127.0.0.1:8080';

function frontPage(): void {
  const res = http.get(`${BASE}/`);
  check(res, { 'home': (r) => r.status === 200 });
  sleep(1);
}

function order(kind: string) {
  const body = { kind: kind };
  http.post(`${BASE}/api/orders`, JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
  again();
}

function again() {
  http.get(`${BASE}/api/again`);
  again();
}

export default function () {
  group('front page', frontPage);
  order('margherita' as string);
}
"#;
    let out = import_ok(Kind::K6, script, "helpers.ts", &Options::default());
    let s = validate(&out.yaml, "helpers.yaml");
    let reqs: Vec<(String, Option<String>)> = s
        .request_steps()
        .map(|r| (r.name.clone(), r.group.clone()))
        .collect();
    assert_eq!(
        reqs,
        [
            ("GET /".to_string(), Some("front page".to_string())),
            ("POST /api/orders".to_string(), None),
            ("GET /api/again".to_string(), None),
        ],
        "{}",
        out.yaml
    );
    assert!(
        out.report
            .unsupported
            .iter()
            .any(|u| u.line == Some(21) && u.what.contains("`again(…)`: a helper calling itself")),
        "{}",
        out.report
    );
}

#[test]
fn http_batch_requests_become_steps_and_their_responses_are_checked() {
    let body = r#"  const responses = http.batch([
    ['GET', `${BASE_URL}/api/news`],
    ['GET', `${BASE_URL}/api/contacts`, null, { tags: { ctype: 'html' } }],
    { method: 'POST', url: `${BASE_URL}/api/login`, body: JSON.stringify({ user: 'a' }), params: { headers: { 'Content-Type': 'application/json' } } },
    `${BASE_URL}/api/plain`,
  ]);
  check(responses[0], { 'news 200': (r) => r.status === 200 });
  const named = http.batch({ front: ['GET', `${BASE_URL}/`] });
  check(named.front, { 'front 200': (r) => r.status === 200 });"#;
    let (s, out) = parsed(&script("{ vus: 5, duration: '30s' }", body));
    let reqs: Vec<String> = s.request_steps().map(|r| r.name.clone()).collect();
    assert_eq!(
        reqs,
        [
            "GET /api/news",
            "GET /api/contacts",
            "POST /api/login",
            "GET /api/plain",
            "GET /"
        ],
        "{}",
        out.yaml
    );
    let checked: Vec<bool> = s
        .request_steps()
        .map(|r| r.checks.iter().any(|c| matches!(c, Check::Status(_))))
        .collect();
    assert_eq!(checked, [true, false, false, false, true], "{}", out.yaml);
    // Only what loadlab has no equivalent for is left out: the tag.
    let left_out: Vec<&str> = out
        .report
        .unsupported
        .iter()
        .map(|u| u.what.as_str())
        .collect();
    assert_eq!(
        left_out,
        ["tag `ctype`: loadlab tags steps by name and group only"]
    );
    assert!(
        out.report
            .to_string()
            .contains("http.batch of 4 requests: sent one after another"),
        "{}",
        out.report
    );
}

#[test]
fn a_loop_over_a_batchs_responses_checks_each_of_them() {
    let body = r#"  const responses = http.batch([
    ['GET', `${BASE_URL}/api/a`],
    ['GET', `${BASE_URL}/api/b`],
  ]);
  for (const res of responses) {
    check(res, { 'batch request 200': (r) => r.status === 200 });
  }
  const users = ['ann', 'bob'];
  for (const u of users) {
    http.get(`${BASE_URL}/api/users/${u}`);
  }"#;
    let (s, out) = parsed(&script("{ vus: 1, duration: '10s' }", body));
    let checked: Vec<(String, bool)> = s
        .request_steps()
        .map(|r| {
            let status = r.checks.iter().any(|c| matches!(c, Check::Status(_)));
            (r.name.clone(), status)
        })
        .collect();
    assert_eq!(
        checked,
        [
            ("GET /api/a".to_string(), true),
            ("GET /api/b".to_string(), true)
        ],
        "{}",
        out.yaml
    );
    // A loop over anything but a batch's responses is reported with its line, not followed.
    let left_out: Vec<(Option<usize>, &str)> = out
        .report
        .unsupported
        .iter()
        .map(|u| (u.line, u.what.as_str()))
        .collect();
    assert!(
        left_out
            .iter()
            .any(|(_, w)| w.starts_with("`for (const u of users) {")),
        "{left_out:?}"
    );
}

#[test]
fn counted_loops_in_any_direction_repeat_their_steps() {
    let cases = [
        ("for (let i = 0; i < 3; i++)", Some(3)),
        ("for (let i = 1; i <= 100; i++)", Some(100)),
        ("for (let i = 0; i <= 2; i += 1)", Some(3)),
        ("for (let i = 3; i > 0; i--)", Some(3)),
        ("for (let i = 5; i >= 1; --i)", Some(5)),
        ("for (let i = 5; i < 5; i++)", None),
        ("for (let i = 0; i < 3; i--)", None),
    ];
    for (head, count) in cases {
        let source = script(
            "{}",
            &format!(
                "http.get(`${{BASE_URL}}/a`);\n{head} {{\n  http.get(`${{BASE_URL}}/posts`);\n}}"
            ),
        );
        let (s, out) = parsed(&source);
        let got = s.flows[0].steps.iter().find_map(|st| match st {
            Step::Loop { count, .. } => Some(*count),
            _ => None,
        });
        assert_eq!(got, count, "{head}\n{}", out.yaml);
    }
}

#[test]
fn k6_executions_named_imports_read_like_its_default_one() {
    for (import, expr) in [
        ("import { vu } from 'k6/execution';", "vu.idInTest"),
        ("import { vu as v } from 'k6/execution';", "v.idInTest"),
        (
            "import execution from 'k6/execution';",
            "execution.vu.idInTest",
        ),
    ] {
        let source = format!(
            "import http from 'k6/http';\n{import}\nexport default function () {{\n  http.get(`http://127.0.0.1:9/u/${{{expr}}}`);\n}}\n"
        );
        let (s, out) = parsed(&source);
        assert_eq!(
            s.request_steps().next().unwrap().url,
            "/u/{{ vu }}",
            "{}",
            out.yaml
        );
    }
}
