//! The `monitor:` section: the documented example parses; mistakes name file:line:column.

use loadlab_scenario::monitor::{CgroupLocation, MatchOp, ProcessSelector};
use loadlab_scenario::Scenario;
use std::time::Duration;

const BASE: &str = "load: {model: closed, vus: 1, duration: 1s}\nsteps: [ { get: /a } ]\n";

const EXAMPLE: &str = r#"
monitor:
  interval: 1s
  host: true                                     # default on
  processes:
    - { name: target, port: 8080 }               # or pid: 1234, or match: "java .*ticket"
    - { name: jvm, match: "java .*ticket" }
    - { name: worker, pid: 1234 }
  cgroups:
    - { name: db, path: /sys/fs/cgroup/system.slice/mysql.service }
    - { name: cache, container: 3f2a9c1b7e4d }
  prometheus:
    - { name: app, url: http://127.0.0.1:8080/metrics, series: [process_cpu_seconds_total, "http_requests_total{code=\"500\"}"] }
"#;

#[test]
fn parses_the_documented_section() {
    let s = Scenario::parse(&format!("{BASE}{EXAMPLE}"), "mon.yaml").unwrap();
    let m = &s.monitor;
    assert_eq!(m.interval, Duration::from_secs(1));
    assert!(m.host);
    let selectors: Vec<_> = m
        .processes
        .iter()
        .map(|p| (p.name.as_str(), &p.selector))
        .collect();
    assert_eq!(
        selectors,
        vec![
            ("target", &ProcessSelector::Port(8080)),
            ("jvm", &ProcessSelector::Match("java .*ticket".into())),
            ("worker", &ProcessSelector::Pid(1234)),
        ]
    );
    assert_eq!(
        m.cgroups[0].location,
        CgroupLocation::Path("/sys/fs/cgroup/system.slice/mysql.service".into())
    );
    assert_eq!(
        m.cgroups[1].location,
        CgroupLocation::Container("3f2a9c1b7e4d".into())
    );
    let app = &m.prometheus[0];
    assert_eq!(app.url, "http://127.0.0.1:8080/metrics");
    assert_eq!(app.series[0].metric, "process_cpu_seconds_total");
    assert_eq!(app.series[1].metric, "http_requests_total");
    assert_eq!(app.series[1].matchers[0].op, MatchOp::Eq);
    assert_eq!(app.series[1].matchers[0].value, "500");
}

#[test]
fn host_monitoring_is_on_without_a_section() {
    let s = Scenario::parse(BASE, "plain.yaml").unwrap();
    assert!(s.monitor.host);
    assert_eq!(s.monitor.interval, Duration::from_secs(1));
    assert!(s.monitor.processes.is_empty());
    let s = Scenario::parse(&format!("{BASE}monitor: {{ host: false }}\n"), "off.yaml").unwrap();
    assert!(s.monitor.is_empty());
}

#[test]
fn mistakes_name_their_line() {
    let cases = [
        (
            "monitor:\n  intervl: 1s\n",
            "bad.yaml:4:3: monitor: unknown field `intervl`\n  hint: did you mean `interval`?",
        ),
        (
            "monitor:\n  interval: 10ms\n",
            "bad.yaml:4:13: monitor.interval: the interval must be at least 100ms",
        ),
        (
            "monitor:\n  processes:\n    - { name: target, port: 8080, pid: 12 }\n",
            "bad.yaml:5:9: monitor.processes[0]: give exactly one of `pid`, `port` or `match`",
        ),
        (
            "monitor:\n  processes:\n    - { port: 8080 }\n",
            "bad.yaml:5:9: monitor.processes[0]: missing `name`",
        ),
        (
            "monitor:\n  processes:\n    - { name: a, port: 1 }\n    - { name: a, pid: 2 }\n",
            "bad.yaml:6:15: monitor.processes[1].name: `a` is used twice in `monitor.processes`",
        ),
        (
            "monitor:\n  processes:\n    - { name: \"my target\", port: 1 }\n",
            "bad.yaml:5:15: monitor.processes[0].name: `my target` is not a usable name",
        ),
        (
            "monitor:\n  processes:\n    - { name: jvm, match: \"java (\" }\n",
            "bad.yaml:5:27: monitor.processes[0].match: invalid regex `java (`: unclosed group",
        ),
        (
            "monitor:\n  processes:\n    - { name: t, port: 70000 }\n",
            "bad.yaml:5:24: monitor.processes[0].port: `70000` is too large: at most 65535",
        ),
        (
            "monitor:\n  processes:\n    - { name: t, prot: 80 }\n",
            "bad.yaml:5:18: monitor.processes[0]: unknown field `prot`\n  hint: did you mean `port`?",
        ),
        (
            "monitor:\n  cgroups:\n    - { name: db, path: system.slice/mysql.service }\n",
            "bad.yaml:5:25: monitor.cgroups[0].path: cgroup path `system.slice/mysql.service` is not absolute",
        ),
        (
            "monitor:\n  cgroups:\n    - { name: db }\n",
            "bad.yaml:5:9: monitor.cgroups[0]: give exactly one of `path` or `container`",
        ),
        (
            "monitor:\n  prometheus:\n    - { name: app, url: ftp://x/metrics, series: [up] }\n",
            "bad.yaml:5:25: monitor.prometheus[0].url: unsupported scheme `ftp`",
        ),
        (
            "monitor:\n  prometheus:\n    - { name: app, url: http://127.0.0.1:9100/metrics }\n",
            "bad.yaml:5:9: monitor.prometheus[0]: list the `series` to record",
        ),
        (
            "monitor:\n  prometheus:\n    - name: app\n      url: http://127.0.0.1:9100/metrics\n      series:\n        - up\n        - 'http_requests_total{code=500}'\n",
            "bad.yaml:9:11: monitor.prometheus[0].series[1]: `http_requests_total{code=500}`: the value of label `code` must be in double quotes",
        ),
    ];
    for (section, want) in cases {
        let err = Scenario::parse(&format!("{BASE}{section}"), "bad.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{section}\n got: {err}\nwant: {want}");
    }
}
