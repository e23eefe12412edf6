//! Secrets never reach a scenario: a recording holding every kind of credential — by name in
//! headers, query, form, JSON and cookies, by shape (JWT, vendor keys, random tokens) in the
//! URL, headers and bodies — is imported, and no raw value is left in the output or the report.

mod common;

use common::{import_ok, validate, variable_names};
use loadlab_import::{Kind, Options};
use serde_json::{json, Value};

const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFubiJ9.TJVA95OrM7E2cBab30RMHrHDcEfxjoYZgeFONFh7HgQ";
const GITHUB: &str = "ghp_R2d2C3poTheDroidsYouAreLooking4Xy";
const STRIPE: &str = "sk_live_51HxYzAbCdEfGhIjKlMnOpQr";
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const SLACK: &str = "xoxb-1234567890-0987654321-AbCdEfGhIjKl";
const RANDOM: &str = "Zx8Qw3Lr9Tb2Yk7Mn4Vc6Hp1Sd5Fg0JjKuE2";

/// `(what, raw value)` of every credential in the recording.
fn secrets() -> Vec<(&'static str, &'static str)> {
    vec![
        ("token header", "tok-header-value-1"),
        ("access_token query", "acc-query-value-2"),
        ("refresh_token query", "ref-query-value-3"),
        ("X-Access-Token header", "xat-value-4"),
        ("X-Amz-Security-Token header", "amz-security-value-5"),
        ("X-Insert-Key header", "insert-key-value-6"),
        ("session_id cookie", "sess-cookie-value-7"),
        ("session_id query", "sess-query-value-8"),
        ("password form", "hunter2-form-9"),
        ("Authorization bearer", JWT),
        ("JWT in a JSON body field", JWT),
        ("GitHub token in a text body", GITHUB),
        ("Stripe key in a form field", STRIPE),
        ("AWS key in a custom header", AWS),
        ("Slack token in the path", SLACK),
        ("random token in a query", RANDOM),
        ("api_key in JSON", "json-api-key-value-10"),
        ("basic auth in the URL", "urlpass-11"),
    ]
}

fn entry(method: &str, url: &str, headers: Value, post: Option<Value>) -> Value {
    let mut e = json!({
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 10,
        "_resourceType": "fetch",
        "request": {"method": method, "url": url, "headers": headers},
        "response": {"status": 200, "headers": [], "content": {"mimeType": "application/json", "text": "{\"ok\":true}"}}
    });
    if let Some(p) = post {
        e["request"]["postData"] = p;
    }
    e
}

fn recording() -> String {
    let entries = vec![
        entry(
            "GET",
            "https://api.example.com/v1/items?access_token=acc-query-value-2&refresh_token=ref-query-value-3&session_id=sess-query-value-8",
            json!([
                {"name": "token", "value": "tok-header-value-1"},
                {"name": "X-Access-Token", "value": "xat-value-4"},
                {"name": "X-Amz-Security-Token", "value": "amz-security-value-5"},
                {"name": "Cookie", "value": "session_id=sess-cookie-value-7; theme=1; seen=1"},
            ]),
            None,
        ),
        entry(
            "POST",
            "https://api.example.com/v1/login",
            json!([{"name": "X-Insert-Key", "value": "insert-key-value-6"}]),
            Some(json!({"mimeType": "application/x-www-form-urlencoded", "text": format!("user=ann&password=hunter2-form-9&stripe={STRIPE}")})),
        ),
        entry(
            "POST",
            "https://api.example.com/v1/profile",
            json!([
                {"name": "Authorization", "value": format!("Bearer {JWT}")},
                {"name": "X-Custom", "value": AWS},
            ]),
            Some(json!({"mimeType": "application/json", "text": json!({"data": JWT, "api_key": "json-api-key-value-10", "name": "Ann"}).to_string()})),
        ),
        entry(
            "POST",
            &format!("https://api.example.com/v1/hooks/{SLACK}/notes?sig={RANDOM}"),
            json!([]),
            Some(json!({"mimeType": "text/plain", "text": format!("deploy with {GITHUB} please")})),
        ),
        entry(
            "GET",
            "https://ann:urlpass-11@api.example.com/v1/private",
            json!([]),
            None,
        ),
    ];
    json!({"log": {"version": "1.2", "entries": entries}}).to_string()
}

#[test]
fn no_raw_credential_reaches_the_scenario_or_the_report() {
    let out = import_ok(Kind::Har, &recording(), "secrets.har", &Options::default());
    let report = out.report.to_string();
    for (what, raw) in secrets() {
        assert!(
            !out.yaml.contains(raw),
            "{what}: `{raw}` left in the scenario:\n{}",
            out.yaml
        );
        assert!(
            !report.contains(raw),
            "{what}: `{raw}` in the report:\n{report}"
        );
    }
    // The basic-auth pair leaves as one Authorization header, base64 included.
    assert!(!out.yaml.contains("YW5uOnVybHBhc3MtMTE="), "{}", out.yaml);
    let vars = variable_names(&out.report);
    for want in [
        "TOKEN",
        "ACCESS_TOKEN",
        "REFRESH_TOKEN",
        "X_ACCESS_TOKEN",
        "X_AMZ_SECURITY_TOKEN",
        "X_INSERT_KEY",
        "COOKIE_SESSION_ID",
        "SESSION_ID",
        "PASSWORD",
        "STRIPE_SECRET_KEY",
        "AWS_ACCESS_KEY",
        "GITHUB_TOKEN",
        "SLACK_TOKEN",
        "API_KEY",
        "BASIC_AUTH",
    ] {
        assert!(vars.contains(&want), "{want} not asked for: {vars:?}");
    }
    // The printed report tells the user what to set.
    assert!(report.contains("export TOKEN=..."), "{report}");
    // The same JWT in the Authorization header and a JSON field is one credential.
    let bearer = out
        .yaml
        .split("Bearer {{ env.")
        .nth(1)
        .expect("a bearer header");
    let jwt_var = &bearer[..bearer.find(' ').unwrap()];
    assert_eq!(
        out.yaml
            .matches(&format!("{{{{ env.{jwt_var} }}}}"))
            .count(),
        2,
        "{}",
        out.yaml
    );
    // Two cookies sharing the value `1` are two variables.
    assert!(
        vars.contains(&"COOKIE_THEME") && vars.contains(&"COOKIE_SEEN"),
        "{vars:?}"
    );
    for v in &vars {
        std::env::set_var(v, "x");
    }
    validate(&out.yaml, "secrets.yaml");
}
