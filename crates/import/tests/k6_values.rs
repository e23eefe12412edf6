//! Values of a k6 script as the scenario holds them: the base URL in data values and bodies,
//! inline sets of URLs read as a request's whole URL, secrets moved to the environment, and
//! `__ENV.X || default` taken at its default.

mod common;

use common::validate;
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::Scenario;

fn imported(source: &str) -> (Scenario, loadlab_import::Imported) {
    let out = import(Kind::K6, source, "t.js", &Options::default())
        .unwrap_or_else(|e| panic!("{e}\n{source}"));
    assert!(!out.yaml.contains("\\u0001"), "{}", out.yaml);
    let s = validate(&out.yaml, "t.yaml");
    (s, out)
}

#[test]
fn a_set_of_urls_read_as_a_whole_url_holds_paths() {
    let cases = [
        // Built from the base URL constant (in/k6-pantheon.js's staticAssets).
        (
            "const BASE_URL = 'https://shop.example.com';\nconst pages = [BASE_URL + '/a', `${BASE_URL}/b?x=1`];",
            "https://shop.example.com",
            "/{{ pages }}",
        ),
        // Absolute URLs with no base URL constant: their origin is the target.
        (
            "const pages = ['https://shop.example.com/a', 'https://shop.example.com/b?x=1'];",
            "https://shop.example.com",
            "/{{ pages }}",
        ),
        // On another origin than the target.
        (
            "const BASE_URL = 'https://api.example.com';\nconst pages = ['https://cdn.example.com/a', 'https://cdn.example.com/b?x=1'];",
            "https://api.example.com",
            "https://cdn.example.com/{{ pages }}",
        ),
    ];
    for (top, target, url) in cases {
        let source = format!(
            "import http from 'k6/http';\n{top}\nexport default function () {{\n  http.get(pages[Math.floor(Math.random() * pages.length)]);\n}}\n"
        );
        let (s, out) = imported(&source);
        assert_eq!(s.target.as_deref(), Some(target), "{}", out.yaml);
        assert_eq!(s.request_steps().next().unwrap().url, url, "{}", out.yaml);
        let values: Vec<&str> = s.data[0]
            .rows
            .iter()
            .map(|row| row[0].as_str().unwrap())
            .collect();
        assert_eq!(values, ["a", "b?x=1"], "{}", out.yaml);
    }
}

#[test]
fn the_base_url_in_a_body_is_the_target_url_and_an_unused_set_is_left_out() {
    let source = "import http from 'k6/http';\nconst BASE_URL = 'https://shop.example.com';\nconst assets = [BASE_URL + '/a.css'];\nexport default function () {\n  http.post(`${BASE_URL}/hook`, JSON.stringify({ callback: `${BASE_URL}/done` }));\n}\n";
    let (s, out) = imported(source);
    assert!(
        s.data.is_empty() && !out.yaml.contains("a.css"),
        "a set no request reads is left out: {}",
        out.yaml
    );
    assert!(
        out.report
            .to_string()
            .contains("line 3: the inline array `assets` no converted request reads it: left out"),
        "{}",
        out.report
    );
    assert!(
        out.yaml
            .contains("callback: \"https://shop.example.com/done\""),
        "{}",
        out.yaml
    );
}

#[test]
fn no_secret_of_a_script_is_written_out() {
    std::env::set_var("PASSWORD", "p");
    let source = r#"import http from 'k6/http';
const users = [{ username: 'testuser1', password: 'testuser1pw' }];
export default function () {
  const u = users[Math.floor(Math.random() * users.length)];
  http.post('https://api.example.com/login', { user: u.username, password: u.password });
  http.get('https://admin:hunter2@api.example.com/h');
  http.get('https://user:passwd77@api.example.com/basic-auth/user/passwd77');
  http.get('https://api.example.com/d?api_key=k3y12345&page=2');
  http.post('https://api.example.com/i', JSON.stringify({ user: { login: 'bob', pass: 's3cr3tpass' } }), { headers: { 'Content-Type': 'application/json' } });
  http.get('https://api.example.com/j', { headers: { 'Ocp-Apim-Subscription-Key': '0123456789abcdef0123456789abcdef' } });
  http.get('https://api.example.com/c', { headers: { Cookie: 'PHPSESSID=deadbeef1234; theme=dark' } });
}
"#;
    let out = import(Kind::K6, source, "t.js", &Options::default()).unwrap();
    let all = format!("{}\n{}", out.yaml, out.report);
    for secret in [
        "testuser1pw",
        "hunter2",
        "passwd77",
        "k3y12345",
        "s3cr3tpass",
        "0123456789abcdef0123456789abcdef",
        "deadbeef1234",
    ] {
        assert!(!all.contains(secret), "{secret} written:\n{all}");
    }
    for kept in [
        "name: \"GET https://admin@api.example.com/h\"",
        "/basic-auth/user/{{ env.USER_PASSWORD }}",
        "?api_key={{ env.API_KEY }}&page=2",
        "pass: \"{{ env.PASS }}\"",
        "Ocp-Apim-Subscription-Key: \"{{ env.OCP_APIM_SUBSCRIPTION_KEY }}\"",
        "users: { csv: users.csv, pick: random }",
        "header row `username,password`",
        "Cookie: \"PHPSESSID={{ env.COOKIE_PHPSESSID }}; theme=dark\"",
    ] {
        assert!(out.yaml.contains(kept), "{kept} missing:\n{}", out.yaml);
    }
}

#[test]
fn a_pause_read_from_the_environment_with_a_default_is_the_default() {
    let cases = [
        ("const t = __ENV.SLEEP || 3;", "sleep(t);", "3s"),
        ("", "sleep(__ENV.SLEEP || 5);", "5s"),
        ("", "sleep(__ENV.SLEEP ?? 0.5);", "0.5s"),
        ("const p = Number(__ENV.PAUSE) || 4;", "sleep(p);", "4s"),
        ("", "sleep(parseFloat(__ENV.PAUSE) || 1.5);", "1.5s"),
        ("const THINK = 2;", "sleep(THINK * 2);", "4s"),
        ("", "sleep('2');", "2s"),
        // crafted/sleeps.js, after real scripts' forms.
        ("", "sleep(randomIntBetween(1, 5) / 10);", "0.1s..0.5s"),
        ("", "sleep(Math.floor(Math.random() * 3) + 1);", "1s..3s"),
        ("", "sleep(Math.random() * 3);", "0s..3s"),
        ("", "sleep(1 + Math.random() * 2);", "1s..3s"),
        (
            "const MIN = 2, MAX = 6;",
            "sleep(Math.random() * (MAX - MIN) + MIN);",
            "2s..6s",
        ),
        ("", "sleep(Math.round(Math.random() * 4));", "0s..4s"),
    ];
    for (top, pause, want) in cases {
        let source = format!(
            "import http from 'k6/http';\nimport {{ sleep }} from 'k6';\n{top}\nexport default function () {{\n  http.get('http://127.0.0.1:9/a');\n  {pause}\n}}\n"
        );
        let (_, out) = imported(&source);
        assert!(
            out.yaml.contains(&format!("- think: {want}\n")),
            "{pause}\n{}",
            out.yaml
        );
    }
}

#[test]
fn a_pause_that_cannot_be_read_is_reported_with_its_line() {
    let source = "import http from 'k6/http';\nimport { sleep } from 'k6';\nexport default function () {\n  http.get('http://127.0.0.1:9/a');\n  sleep(Math.random() + Math.random());\n}\n";
    let (_, out) = imported(source);
    assert!(!out.yaml.contains("- think:"), "{}", out.yaml);
    assert!(
        out.yaml
            .contains("# not converted (line 5): sleep: `Math.random(…) + Math.random(…)`"),
        "{}",
        out.yaml
    );
    assert!(
        out.report.to_string().contains("line 5: sleep:"),
        "{}",
        out.report
    );
}

#[test]
fn an_unread_inline_set_of_credentials_is_left_out() {
    let source = "import http from 'k6/http';\nconst credentials = [{ username: 'testuser1', password: 'testuser1pw' }];\nexport default function () {\n  http.get('https://shop.example.com/');\n}\n";
    let (s, out) = imported(source);
    assert!(s.data.is_empty(), "{}", out.yaml);
    assert!(!out.yaml.contains("testuser1"), "{}", out.yaml);
    assert!(
        out.report
            .to_string()
            .contains("`credentials` holds credentials"),
        "{}",
        out.report
    );
}

#[test]
fn a_time_kept_in_a_constant_is_said_to_be_read_at_each_use() {
    let source = "import http from 'k6/http';\nconst ms = new Date().getTime();\nexport default function () {\n  http.post('http://127.0.0.1:9/register', { username: 'berta' + ms });\n  http.post('http://127.0.0.1:9/login', { username: 'berta' + ms });\n}\n";
    let (_, out) = imported(source);
    assert!(
        out.yaml.contains("username: \"berta{{ now_ms() }}\""),
        "{}",
        out.yaml
    );
    assert!(
        out.report
            .to_string()
            .contains("decide: line 2: `ms` holds the time it was set"),
        "{}",
        out.report
    );
}

#[test]
fn an_empty_array_filled_while_the_script_runs_is_no_data_set() {
    // nicole/challenge.js: `let challengerOrders = []`, pushed to from responses.
    let source = "import http from 'k6/http';\nlet orders = [];\nexport default function () {\n  const res = http.get('http://127.0.0.1:9/orders');\n  orders.push(res.body);\n  http.get('http://127.0.0.1:9/done');\n}\n";
    let (s, out) = imported(source);
    assert!(s.data.is_empty(), "{}", out.yaml);
    assert_eq!(s.request_steps().count(), 2, "{}", out.yaml);
}

#[test]
fn a_list_named_like_a_credential_is_a_csv_to_write() {
    // valiantsin/set-csrf-request.js: `let passwordArr = ['123', '1234']`, picked at random.
    let source = "import http from 'k6/http';\nconst usernameArr = ['admin', 'test_user'];\nconst passwordArr = ['123', '1234'];\nconst apiKeys = ['k3y0000a', 'k3y0000b'];\nexport default function () {\n  http.post('http://127.0.0.1:9/login', { login: usernameArr[Math.floor(Math.random() * usernameArr.length)], password: passwordArr[Math.floor(Math.random() * passwordArr.length)] });\n  http.get('http://127.0.0.1:9/x', { headers: { 'X-Api-Key': apiKeys[Math.floor(Math.random() * apiKeys.length)] } });\n}\n";
    let out = import(Kind::K6, source, "t.js", &Options::default()).unwrap();
    let all = format!("{}\n{}", out.yaml, out.report);
    for secret in ["'123'", "\"123\"", "- 123", "1234", "k3y0000"] {
        assert!(!all.contains(secret), "{secret} written:\n{all}");
    }
    for kept in [
        "passwordArr: { csv: passwordArr.csv, pick: random }",
        "its header row `password`",
        "password: \"{{ passwordArr.password }}\"",
        "X-Api-Key: \"{{ apiKeys.api_key }}\"",
        "- test_user",
    ] {
        assert!(out.yaml.contains(kept), "{kept} missing:\n{}", out.yaml);
    }
    let s = common::validate_in_dir(
        &out.yaml,
        "loadlab-k6-withheld",
        "t.yaml",
        &[
            ("passwordArr.csv", "password\np1\np2\n"),
            ("apiKeys.csv", "api_key\nk1\n"),
        ],
    );
    assert_eq!(s.data.len(), 3);
}

#[test]
fn a_check_on_a_request_left_out_names_that_request() {
    // docs-api-crud-operations-1.js: `res = http.get(…)` left out, then `check(res, …)`.
    let source = "import http from 'k6/http';\nimport { check } from 'k6';\nexport default function () {\n  http.get('http://127.0.0.1:9/a');\n  const res = http.get(unknownUrl());\n  check(res, { ok: (r) => r.status === 200 });\n}\n";
    let (_, out) = imported(source);
    let report = out.report.to_string();
    assert!(
        report.contains("line 6: check on `res`: the response of `http.get(…)` of line 5, a request left out (see that line)"),
        "{report}"
    );
}

#[test]
fn an_empty_body_is_no_body() {
    // k6bench/scripts/website.js: `http.batch([["GET", url, {}, params], …])`.
    let source = "import http from 'k6/http';\nexport default function () {\n  http.batch([['GET', 'http://127.0.0.1:9/a', {}, { tags: { name: 'a' } }], ['GET', 'http://127.0.0.1:9/b', '', {}]]);\n  http.post('http://127.0.0.1:9/c', {});\n}\n";
    let (s, out) = imported(source);
    assert_eq!(s.request_steps().count(), 3, "{}", out.yaml);
    assert!(s.request_steps().all(|r| r.body.is_none()), "{}", out.yaml);
    assert!(!out.yaml.contains("form"), "{}", out.yaml);
}

#[test]
fn a_json_file_read_by_its_key_and_a_random_index_in_a_variable_are_a_data_set() {
    // trongtuyen96/tests/test.k6.js: `JSON.parse(open('../src/data/users.json'))`, then
    // `loginData.users[position]` with `position = Math.floor(Math.random() * loginData.users.length)`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/data")).unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("src/data/users.json"),
        r#"{ "users": [ { "username": "admin", "role": "a" }, { "username": "test", "role": "b" } ] }"#,
    )
    .unwrap();
    let script = dir.path().join("tests/t.js");
    std::fs::write(&script, "import http from 'k6/http';\nconst loginData = JSON.parse(open('../src/data/users.json'));\nexport default function () {\n  const position = Math.floor(Math.random() * loginData.users.length);\n  const u = loginData.users[position];\n  http.post('http://127.0.0.1:9/login', { login: u.username });\n}\n").unwrap();
    let out = loadlab_import::import_file(Kind::K6, &script, &Options::default()).unwrap();
    assert!(
        out.yaml.contains("login: \"{{ loginData.username }}\""),
        "{}",
        out.yaml
    );
    assert!(out.yaml.contains("pick: random"), "{}", out.yaml);
    let s = validate(&out.yaml, "t.yaml");
    assert_eq!(s.data[0].rows.len(), 2, "{}", out.yaml);
}

#[test]
fn an_authorization_header_that_cannot_be_followed_says_what_to_write() {
    // k6-docs http-authentication (b64encode) and api-crud-operations (a token from setup()).
    let source = "import http from 'k6/http';\nimport encoding from 'k6/encoding';\nexport function setup() { return 'x'; }\nexport default function (authToken) {\n  http.get('http://127.0.0.1:9/a');\n  http.get('http://127.0.0.1:9/b', { headers: { Authorization: `Basic ${encoding.b64encode('u:p')}` } });\n  http.get('http://127.0.0.1:9/c', { headers: { Authorization: authToken } });\n}\n";
    let (_, out) = imported(source);
    let report = out.report.to_string();
    for want in [
        "line 6: http.get: header Authorization: `encoding.b64encode(…)`: no loadlab template for it (write `Authorization: \"Basic {{ env.BASIC_AUTH }}\"`",
        "line 7: http.get: header Authorization: `authToken`: no loadlab template for it (write `Authorization: \"Bearer {{ env.TOKEN }}\"`",
    ] {
        assert!(report.contains(want), "{want}\n{report}");
    }
}

#[test]
fn a_note_after_a_groups_last_step_stays_after_it() {
    // k6bench website.js: `timeToFirstByte.add(…)` after the batch of a nested group.
    let source = "import http from 'k6/http';\nimport { group, sleep } from 'k6';\nexport default function () {\n  group('a', function () {\n    http.get('http://127.0.0.1:9/a');\n    console.log('after a');\n  });\n  sleep(1);\n}\n";
    let (_, out) = imported(source);
    let step = out.yaml.find("get: /a").unwrap();
    let note = out.yaml.find("not converted (line 6)").unwrap();
    let think = out.yaml.find("- think: 1s").unwrap();
    assert!(step < note && note < think, "{}", out.yaml);
}

#[test]
fn two_texts_of_a_metric_with_no_loadlab_metric_give_one_note() {
    // k6 README's thresholds: `check_failure_rate: ['rate<0.01', { threshold: 'rate<=0.05', … }]`.
    let source = "import http from 'k6/http';\nexport const options = { vus: 1, duration: '1s', thresholds: {\n  check_failure_rate: ['rate<0.01', { threshold: 'rate<=0.05', abortOnFail: true }],\n} };\nexport default function () {\n  http.get('http://127.0.0.1:9/a');\n}\n";
    let (_, out) = imported(source);
    assert_eq!(
        out.yaml.matches("threshold check_failure_rate").count(),
        1,
        "{}",
        out.yaml
    );
}

#[test]
fn rows_read_at_one_random_index_are_a_random_pick_said_to_be_paired() {
    // valiantsin/set-csrf-request.js: `let rand = Math.floor(Math.random() * 2)`, then
    // `usernameArr[rand]` and `passwordArr[rand]`.
    let source = "import http from 'k6/http';\nlet usernameArr = ['admin', 'test_user'];\nlet passwordArr = ['123', '1234'];\nexport default function () {\n  let rand = Math.floor(Math.random() * 2);\n  let username = usernameArr[rand];\n  let password = passwordArr[rand];\n  http.post('http://127.0.0.1:9/login', { login: username, password: password });\n}\n";
    let out = import(Kind::K6, source, "t.js", &Options::default()).unwrap();
    for want in [
        "login: \"{{ usernameArr }}\"",
        "password: \"{{ passwordArr.password }}\"",
        "pick: random",
        "decide: the script read `usernameArr` and `passwordArr` at the same index `rand`",
    ] {
        assert!(out.yaml.contains(want), "{want}\n{}", out.yaml);
    }
    assert!(!out.yaml.contains("1234"), "{}", out.yaml);
}
