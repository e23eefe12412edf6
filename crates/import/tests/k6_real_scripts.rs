//! The k6 importer on what real scripts do that the seed examples do not: a URL and a load
//! read from the environment, and thresholds on k6's default request names (URLs).

mod common;

use common::{import_ok, validate};
use loadlab_import::{Kind, Options};

/// A script that takes its whole URL, or its host, and its load from the environment (as
/// calibration scripts do): the URLs read the same variables (a scenario fills in an origin
/// from the environment when it loads), and the rate and duration it could not read are
/// written with a `decide:` comment and reported, never replaced silently.
#[test]
fn a_url_and_a_load_from_the_environment_stay_the_scripts() {
    let script = r#"import http from 'k6/http';
export const options = {
  scenarios: {
    calibrate: {
      executor: 'constant-arrival-rate',
      rate: __ENV.RPS,
      timeUnit: '1s',
      duration: `${__ENV.DURATION}s`,
      preAllocatedVUs: 10,
    },
  },
};
export default function () {
  http.get(__ENV.URL);
  http.get(`http://${__ENV.HOST}/health`);
}
"#;
    let out = import_ok(Kind::K6, script, "calibrate.js", &Options::default());
    let names: Vec<&str> = out
        .report
        .variables
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(names, ["URL", "HOST"], "{}", out.yaml);
    std::env::set_var("URL", "http://127.0.0.1:8080/ping");
    std::env::set_var("HOST", "127.0.0.1:8081");
    let s = validate(&out.yaml, "calibrate.yaml");
    let urls: Vec<&str> = s.request_steps().map(|r| r.url.as_str()).collect();
    assert_eq!(
        urls,
        ["http://127.0.0.1:8080/ping", "http://127.0.0.1:8081/health"],
        "{}",
        out.yaml
    );
    for said in [
        "# decide: the script's `rate` is read from __ENV.RPS with no default: written as 1",
        "# decide: the script's `duration` is read from __ENV.DURATION with no default",
    ] {
        assert!(out.yaml.contains(said), "{said}\n{}", out.yaml);
    }
    assert!(
        out.report.done.iter().any(|d| d.contains("__ENV.RPS")),
        "{:?}",
        out.report.done
    );
}

/// k6 names an unnamed request by its URL, so a threshold on `{name:<URL>}` (k6's own
/// thresholds example) is on the step requesting that URL, named by method and path here.
#[test]
fn a_threshold_on_a_urls_name_tag_is_on_its_step() {
    let script = r#"import http from "k6/http";
export let options = {
  thresholds: {
    http_req_duration: ["p(95)<500"],
    "http_req_duration{name:http://httpbin.org/post}": ["max<1000"],
  }
};
export default function() {
  http.get("http://httpbin.org/");
  http.post("http://httpbin.org/post", {data: "some data"});
}
"#;
    let out = import_ok(Kind::K6, script, "thresholds.js", &Options::default());
    let s = validate(&out.yaml, "thresholds.yaml");
    let exprs: Vec<&str> = s.thresholds.iter().map(|t| t.expr.as_str()).collect();
    assert_eq!(
        exprs,
        ["latency.p95 < 500ms", "step.POST /post.latency.max < 1s"],
        "{}",
        out.yaml
    );
}

/// `options.stages` alone (trongtuyen96/k6-performance-test, tests/http.js): k6's
/// ramping-vus starts from 1 VU (`startVUs`' default), and so does the scenario.
#[test]
fn a_stages_shortcut_ramps_from_one_vu_as_k6_does() {
    let path = common::repo_root().join("crates/import/tests/corpus/k6/trongtuyen96-http.js");
    let script = std::fs::read_to_string(path).unwrap();
    let out = import_ok(Kind::K6, &script, "http.js", &Options::default());
    let s = validate(&out.yaml, "http.yaml");
    let loadlab_scenario::Load::Closed(c) = &s.load else {
        panic!("{}", out.yaml)
    };
    assert_eq!(c.start_vus, 1, "{}", out.yaml);
    let vus: Vec<u32> = c.stages.iter().map(|st| st.vus).collect();
    assert_eq!(vus, [20, 10, 0], "{}", out.yaml);
}
