//! Processes measured for real: a child burning a known CPU share, a tree of burners found
//! through its parent, processes found by port and by command line, a pid that does not
//! exist, and a host made busy by hogs.

mod common;

use common::{
    burn_report, child_entry, exclusive, mean_of, mean_within, measured_and_own_account,
    report_path, sample_for, spawn_role, Reaped,
};
use loadlab_monitor::{classify, processes_listening_on, Finding, Monitor, PortLookup, Thresholds};
use loadlab_scenario::monitor::{MonitorConfig, ProcessSelector, ProcessWatch};
use std::time::Duration;

#[test]
fn child_process_entry() {
    child_entry();
}

fn watch(name: &str, selector: ProcessSelector) -> MonitorConfig {
    MonitorConfig {
        interval: Duration::from_millis(500),
        host: false,
        processes: vec![ProcessWatch {
            name: name.into(),
            selector,
        }],
        ..MonitorConfig::default()
    }
}

#[test]
fn a_child_burning_half_a_core_is_measured_within_10_points() {
    let _cpu = exclusive();
    let report = report_path("burn");
    let child = Reaped(spawn_role(&format!("burn:0.5:3:{}", report.display())));
    let pid = child.0.id();
    let monitor = Monitor::start(&watch("burner", ProcessSelector::Pid(pid))).unwrap();
    let got = burn_report(&report);
    let samples = monitor.stop().samples;
    // On a busy machine (a VM with steal, the suite's other binaries) the child gets less than
    // it asks for, and unevenly: its own account over the same intervals is the truth the
    // monitor is held to, not the 50% asked.
    let burner = std::slice::from_ref(&got);
    let (cpu, own) = measured_and_own_account(&samples, "processes.burner.cpu_percent", burner);
    println!("burner at 50% duty: measured {cpu:.1}% of a core; the child's own account {own:.1}%");
    let per_sample: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            s.get("processes.burner.cpu_percent")
                .map(|v| format!("{}+{}:{v:.0}", s.unix_ms, s.interval_ms))
        })
        .collect();
    assert!(
        (cpu - own).abs() <= 10.0,
        "measured {cpu:.1}%, child says {own:.1}% over {}..{} ms; samples {per_sample:?}",
        got.start_ms,
        got.end_ms
    );
    assert!(got.percent >= 10.0, "the child hardly ran: {got:?}");
    let (thread, own) =
        measured_and_own_account(&samples, "processes.burner.max_thread_cpu_percent", burner);
    assert!(
        (thread - own).abs() <= 10.0,
        "busiest thread {thread:.1}%, the child says {own:.1}%"
    );
    assert!(mean_of(&samples, "processes.burner.rss_bytes", 0) > 100_000.0);
    assert!(mean_of(&samples, "processes.burner.open_files", 0) >= 3.0);
    assert!(mean_of(&samples, "processes.burner.open_files_limit", 0) >= 64.0);
}

#[test]
fn children_are_included() {
    let _cpu = exclusive();
    // A parent that only waits, and two children at 25% each: 50% for the tree.
    let report = report_path("tree");
    let parent = Reaped(spawn_role(&format!("tree:2:0.25:3:{}", report.display())));
    let monitor = Monitor::start(&watch("tree", ProcessSelector::Pid(parent.0.id()))).unwrap();
    let kids: Vec<_> = (0..2)
        .map(|i| burn_report(&report.with_extension(i.to_string())))
        .collect();
    let samples = monitor.stop().samples;
    let (start, end) = (
        kids[0].start_ms.max(kids[1].start_ms),
        kids[0].end_ms.min(kids[1].end_ms),
    );
    let (cpu, truth) = measured_and_own_account(&samples, "processes.tree.cpu_percent", &kids);
    println!("tree of 2 × 25%: measured {cpu:.1}%; the children's own account {truth:.1}%");
    assert!(
        (cpu - truth).abs() <= 10.0,
        "measured {cpu:.1}%, children say {truth:.1}%"
    );
    assert_eq!(
        mean_within(&samples, "processes.tree.processes", start, end),
        3.0
    );
    // Each burner is its own process: the busiest thread is one of them.
    let thread = mean_within(
        &samples,
        "processes.tree.max_thread_cpu_percent",
        start,
        end,
    );
    assert!(
        (thread - truth / 2.0).abs() <= 10.0,
        "busiest thread {thread:.1}%"
    );
}

#[test]
fn finds_the_process_listening_on_a_port() {
    // This process.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let own_port = listener.local_addr().unwrap().port();
    assert_eq!(
        processes_listening_on(own_port).unwrap(),
        PortLookup::Found(vec![std::process::id() as i32])
    );

    // Another process, and the monitor following it by port.
    let dir = tempfile::Builder::new()
        .prefix("loadlab-port-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("port");
    let child = Reaped(spawn_role(&format!("listen:{}:6", file.display())));
    let port = wait_for_port(&file);
    assert_eq!(
        processes_listening_on(port).unwrap(),
        PortLookup::Found(vec![child.0.id() as i32])
    );
    let samples = sample_for(
        &watch("target", ProcessSelector::Port(port)),
        Duration::from_millis(1200),
    );
    assert!(samples.iter().all(|s| s.missing.is_empty()), "{samples:#?}");
    assert!(mean_of(&samples, "processes.target.rss_bytes", 0) > 100_000.0);
    assert_eq!(mean_of(&samples, "processes.target.processes", 0), 1.0);
    assert!(samples
        .iter()
        .any(|s| s.get("processes.target.cpu_percent").is_some()));
    let _ = std::fs::remove_file(file);
}

fn wait_for_port(file: &std::path::Path) -> u16 {
    for _ in 0..200 {
        if let Some(port) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.parse().ok())
        {
            return port;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the child did not report its port");
}

#[test]
fn finds_processes_by_command_line() {
    let report = report_path("match");
    let tag = format!("tree:1:0.1:4:{}", report.display());
    let parent = Reaped(spawn_role(&tag));
    let samples = sample_for(
        &watch(
            "burners",
            ProcessSelector::Match(format!("child_process_entry .*{}$", regex::escape(&tag))),
        ),
        Duration::from_millis(1700),
    );
    // The parent and its child (whose command line matches too) are one group.
    assert_eq!(mean_of(&samples, "processes.burners.processes", 1), 2.0);
    burn_report(&report.with_extension("0"));
    drop(parent);
}

#[test]
fn a_missing_process_is_a_warning_not_a_failure() {
    let samples = sample_for(
        &watch("ghost", ProcessSelector::Pid(999_999_999)),
        Duration::from_millis(1100),
    );
    assert!(!samples.is_empty());
    assert!(samples.iter().all(|s| s.missing == ["processes.ghost"]));
    let warnings: Vec<_> = samples.iter().flat_map(|s| &s.warnings).collect();
    assert_eq!(
        warnings.len(),
        1,
        "one warning, not one per interval: {warnings:?}"
    );
    assert_eq!(warnings[0].message, "process 999999999 is not running");
}

#[test]
fn a_process_that_exited_unreaped_is_not_running() {
    // A zombie keeps its pid until its parent waits for it, with no memory and no open files:
    // it is gone, not a process of 0 bytes (a CI VM sampled the burner test's child so).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    let stat = format!("/proc/{pid}/stat");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z ")) {
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} never became a zombie"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let samples = sample_for(
        &watch("zombie", ProcessSelector::Pid(pid)),
        Duration::from_millis(600),
    );
    child.wait().unwrap();
    assert!(!samples.is_empty());
    assert!(samples.iter().all(|s| s.missing == ["processes.zombie"]));
    assert!(samples
        .iter()
        .all(|s| s.get("processes.zombie.open_files").is_none()));
    let warnings: Vec<_> = samples.iter().flat_map(|s| &s.warnings).collect();
    assert_eq!(warnings[0].message, format!("process {pid} is not running"));
}

#[test]
fn a_busy_host_is_contended_and_the_hogs_are_named() {
    let _cpu = exclusive();
    let cpus = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let report = report_path("hog");
    let hogs: Vec<Reaped> = (0..cpus)
        .map(|i| {
            Reaped(spawn_role(&format!(
                "burn:1.0:2.5:{}.{i}",
                report.display()
            )))
        })
        .collect();
    let config = MonitorConfig {
        interval: Duration::from_millis(500),
        ..MonitorConfig::default()
    };
    let samples = sample_for(&config, Duration::from_millis(2200));
    drop(hogs);
    let steady = &samples[1..samples.len() - 1];
    let busy = mean_of(steady, "host.cpu_percent", 0);
    println!("{cpus} hogs: host {busy:.0}% busy");
    let findings = classify(
        steady,
        &loadlab_monitor::generator_facts(),
        &Thresholds::default(),
    );
    let Some(Finding::HostContended(h)) = findings.first() else {
        panic!("expected host_contended, host {busy:.0}% busy: {findings:#?}");
    };
    // The hogs run this test binary: its name leads the other processes.
    let exe = std::env::current_exe().unwrap();
    let comm: String = exe
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .take(15)
        .collect();
    // Named among the busiest others (on a shared machine, a compiler may be busier still).
    let hog = h.top_others.iter().find(|p| p.name == comm);
    assert!(
        hog.is_some_and(|p| p.cpu_percent > 10.0),
        "{comm} in {h:#?}"
    );
    assert!(findings[0].sentence().contains(&comm));
}
