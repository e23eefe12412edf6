//! Table tests of the classification: each case is a window of samples and the findings
//! (kinds and key numbers) it must give — and must not give.

use super::super::sample::ProcessCpu;
use super::*;

fn sample(values: &[(&str, f64)]) -> Sample {
    Sample {
        elapsed_ms: 0,
        unix_ms: 0,
        interval_ms: 1000,
        values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        top_processes: Vec::new(),
        missing: Vec::new(),
        warnings: Vec::new(),
    }
}

fn repeat(n: usize, values: &[(&str, f64)]) -> Vec<Sample> {
    (0..n).map(|_| sample(values)).collect()
}

fn kinds(findings: &[Finding]) -> Vec<&'static str> {
    findings
        .iter()
        .map(|f| match f {
            Finding::HostContended(_) => "host_contended",
            Finding::TargetCpuBound(_) => "target_cpu_bound",
            Finding::MemoryGrowth(_) => "memory_growth",
            Finding::FdPressure(_) => "fd_pressure",
            Finding::PortsPressure(_) => "ports_pressure",
        })
        .collect()
}

const TWO_CORES: GeneratorFacts = GeneratorFacts { cores_allowed: 2.0 };

type Case<'a> = (&'a str, Vec<Sample>, Vec<&'a str>);

fn check(cases: Vec<Case<'_>>) {
    for (name, samples, want) in cases {
        let got = classify(&samples, &TWO_CORES, &Thresholds::default());
        assert_eq!(kinds(&got), want, "{name}: {got:#?}");
    }
}

/// The host: quiet, contended, CPU pressure, steal, and a blip that is not a finding.
#[test]
fn host_findings() {
    let quiet = [
        ("host.cpu_count", 2.0),
        ("host.cpu_percent", 40.0),
        ("generator.cpu_percent", 30.0),
    ];
    check(vec![
        ("a quiet host", repeat(10, &quiet), vec![]),
        (
            "host busy, generator light (seed 004)",
            repeat(
                10,
                &[
                    ("host.cpu_count", 2.0),
                    ("host.cpu_percent", 99.0),
                    ("generator.cpu_percent", 20.0),
                ],
            ),
            vec!["host_contended"],
        ),
        (
            "host busy because the generator is saturated: not host contention",
            repeat(
                10,
                &[
                    ("host.cpu_count", 2.0),
                    ("host.cpu_percent", 99.0),
                    ("generator.cpu_percent", 195.0),
                ],
            ),
            vec![],
        ),
        (
            "CPU pressure high although not 95% busy",
            repeat(
                5,
                &[
                    ("host.cpu_count", 2.0),
                    ("host.cpu_percent", 80.0),
                    ("host.pressure.cpu_some_percent", 55.0),
                ],
            ),
            vec!["host_contended"],
        ),
        (
            "steal on a noisy cloud host",
            repeat(
                5,
                &[
                    ("host.cpu_count", 2.0),
                    ("host.cpu_percent", 60.0),
                    ("host.cpu.steal_percent", 20.0),
                ],
            ),
            vec!["host_contended"],
        ),
        (
            "one busy interval of ten is a blip",
            {
                let mut s = repeat(9, &quiet);
                s.push(sample(&[
                    ("host.cpu_count", 2.0),
                    ("host.cpu_percent", 99.0),
                ]));
                s
            },
            vec![],
        ),
    ]);
}

/// Processes and containers: CPU-bound on their cores, event loops, throttling, quotas.
#[test]
fn process_and_container_findings() {
    check(vec![
        (
            "a process using both of its cores",
            repeat(
                5,
                &[
                    ("host.cpu_count", 4.0),
                    ("host.cpu_percent", 60.0),
                    ("processes.target.cpu_percent", 192.0),
                    ("processes.target.cpus_allowed", 2.0),
                ],
            ),
            vec!["target_cpu_bound"],
        ),
        (
            "a process at half its cores is not CPU-bound",
            repeat(
                5,
                &[
                    ("host.cpu_count", 4.0),
                    ("processes.target.cpu_percent", 200.0),
                ],
            ),
            vec![],
        ),
        (
            "a single-threaded event loop at 97% of a core",
            repeat(
                5,
                &[
                    ("host.cpu_count", 4.0),
                    ("processes.node.cpu_percent", 105.0),
                    ("processes.node.max_thread_cpu_percent", 97.0),
                ],
            ),
            vec!["target_cpu_bound"],
        ),
        (
            "a throttled container",
            repeat(
                5,
                &[
                    ("cgroups.db.cpu_percent", 120.0),
                    ("cgroups.db.cpu_limit_cores", 2.0),
                    ("cgroups.db.cpu_throttled_percent", 40.0),
                ],
            ),
            vec!["target_cpu_bound"],
        ),
        (
            "a container at its quota",
            repeat(
                5,
                &[
                    ("cgroups.db.cpu_percent", 148.0),
                    ("cgroups.db.cpu_limit_cores", 1.5),
                ],
            ),
            vec!["target_cpu_bound"],
        ),
    ]);
}

/// Open files and ephemeral ports near their limits.
#[test]
fn file_and_port_findings() {
    check(vec![
        (
            "generator near its open-file limit",
            repeat(
                3,
                &[
                    ("generator.open_files", 19_900.0),
                    ("generator.open_files_limit", 20_000.0),
                ],
            ),
            vec!["fd_pressure"],
        ),
        (
            "target with few open files",
            repeat(
                3,
                &[
                    ("processes.db.open_files", 100.0),
                    ("processes.db.open_files_limit", 1024.0),
                ],
            ),
            vec![],
        ),
        (
            "ephemeral ports running out",
            repeat(
                3,
                &[
                    ("host.ports.ephemeral_used_percent", 85.0),
                    ("host.ports.ephemeral_in_use", 24_000.0),
                    ("host.ports.ephemeral_range", 28_232.0),
                    ("host.tcp.time_wait", 23_000.0),
                ],
            ),
            vec!["ports_pressure"],
        ),
    ]);
}

#[test]
fn memory_growth_table() {
    let rss = |values: &[f64]| -> Vec<Sample> {
        values
            .iter()
            .map(|v| sample(&[("processes.app.rss_bytes", v * 1024.0 * 1024.0)]))
            .collect()
    };
    let t = Thresholds::default();
    let cases: &[(&[f64], Option<f64>)] = &[
        (&[100.0, 110.0, 120.0, 130.0], Some(30.0)),
        (&[100.0, 105.0, 110.0, 115.0], None), // 15%: under 20%
        (&[100.0, 300.0, 100.0, 100.0], None), // a spike, not growth
        (&[2.0, 2.5, 3.0, 2.9], None),         // 45% but under 1 MiB
        (&[100.0, 130.0], None),               // too few samples
        (&[100.0, 90.0, 80.0, 70.0], None),    // shrinking
    ];
    for (values, want) in cases {
        let got = memory_growth(&rss(values), &t);
        assert_eq!(
            got.first().map(|g| g.growth_percent.round()),
            *want,
            "{values:?}"
        );
    }
}

#[test]
fn host_contention_names_who_used_the_cpu() {
    let mut samples = repeat(
        4,
        &[
            ("host.cpu_count", 2.0),
            ("host.cpu_percent", 98.0),
            ("host.pressure.cpu_some_percent", 70.0),
            ("generator.cpu_percent", 60.0),
            ("processes.target.cpu_percent", 80.0),
        ],
    );
    for s in &mut samples {
        s.top_processes = vec![
            ProcessCpu {
                name: "stress-ng".into(),
                processes: 2,
                cpu_percent: 50.0,
            },
            ProcessCpu {
                name: "chrome".into(),
                processes: 1,
                cpu_percent: 4.0,
            },
        ];
    }
    let found = classify(&samples, &TWO_CORES, &Thresholds::default());
    let Finding::HostContended(h) = &found[0] else {
        panic!("{found:?}")
    };
    assert_eq!((h.contended_intervals, h.intervals), (4, 4));
    assert_eq!(h.generator_percent_of_host, 30.0);
    assert_eq!(h.monitored[0].percent_of_host, 40.0);
    assert_eq!(h.other_percent_of_host, 28.0);
    assert_eq!(h.top_others[0].name, "stress-ng");
    assert_eq!(
        found[0].sentence(),
        "the host was saturated in 4 of 4 intervals (CPU 98% busy, tasks waiting for a CPU 70% of the time): generator 30%, target 40%, other processes 28% — busiest others: stress-ng ×2 50% of a core, chrome 4% of a core"
    );
    let json = serde_json::to_value(&found[0]).unwrap();
    assert_eq!(json["kind"], "host_contended");
}

#[test]
fn sentences_of_the_other_findings() {
    let t = Thresholds::default();
    let bound = classify(
        &repeat(
            3,
            &[
                ("host.cpu_count", 4.0),
                ("processes.target.cpu_percent", 392.0),
            ],
        ),
        &TWO_CORES,
        &t,
    );
    assert_eq!(
        bound[0].sentence(),
        "target is CPU-bound: it used 98% of its 4 cores (3.92 cores)"
    );
    let json = serde_json::to_value(&bound[0]).unwrap();
    assert_eq!(
        (json["kind"].as_str(), json["basis"].as_str()),
        (Some("target_cpu_bound"), Some("all_cores"))
    );
    let fds = classify(
        &repeat(
            2,
            &[
                ("generator.open_files", 20_000.0),
                ("generator.open_files_limit", 20_000.0),
            ],
        ),
        &TWO_CORES,
        &t,
    );
    assert_eq!(
        fds[0].sentence(),
        "the generator ran out of file descriptors: 20,000 of its 20,000 open files (100%): raise the limit (`ulimit -n`, LimitNOFILE) or lower the concurrency"
    );
    assert_eq!(thousands(1234567.0), "1,234,567");
    assert_eq!(thousands(12.0), "12");
}

#[test]
fn an_in_process_target_is_not_counted_twice() {
    let samples = repeat(
        3,
        &[
            ("host.cpu_count", 2.0),
            ("host.cpu_percent", 99.0),
            ("generator.cpu_percent", 120.0),
            ("processes.target.cpu_percent", 120.0),
            ("processes.target.includes_generator", 1.0),
        ],
    );
    let found = classify(&samples, &TWO_CORES, &Thresholds::default());
    let Finding::HostContended(h) = &found[0] else {
        panic!("{found:?}")
    };
    assert!(h.monitored.is_empty());
    assert_eq!(h.other_percent_of_host, 39.0);
}

/// /proc/stat's tick-sampled busy share missed a target working in short bursts; the
/// processes' exact counters are what the shares are taken from then.
#[test]
fn who_used_the_host_counts_work_the_tick_sampled_busy_share_missed() {
    let s = repeat(
        3,
        &[
            ("host.cpu_percent", 3.0),
            ("host.cpu_count", 2.0),
            ("generator.cpu_percent", 10.0),
            ("host.processes_cpu_percent", 18.0),
        ],
    );
    let load = host_load(&s, &[]).unwrap();
    assert!((load.host_cpu_percent - 9.0).abs() < 1e-9, "{load:?}");
    assert!((load.generator_percent_of_host - 5.0).abs() < 1e-9);
    assert!((load.other_percent_of_host - 4.0).abs() < 1e-9, "{load:?}");
    // Without the counters (older records), /proc/stat's share as before.
    let old = repeat(
        3,
        &[
            ("host.cpu_percent", 30.0),
            ("host.cpu_count", 2.0),
            ("generator.cpu_percent", 10.0),
        ],
    );
    let load = host_load(&old, &[]).unwrap();
    assert!((load.other_percent_of_host - 25.0).abs() < 1e-9, "{load:?}");
}

/// A 2-core host, the generator pinned to core 1 and the target busy on core 0: the others
/// host-wide are the target, on the generator's core next to nothing.
#[test]
fn others_on_the_generators_cores_leave_out_other_cores() {
    let host = |core0: f64, core1: f64, generator: f64| {
        repeat(
            3,
            &[
                ("host.cpu_percent", (core0 + core1) / 2.0),
                ("host.cpu_count", 2.0),
                ("generator.cpu_percent", generator),
                ("host.core.0.cpu_percent", core0),
                ("host.core.1.cpu_percent", core1),
            ],
        )
    };
    // (generator's cores, core 0 busy %, core 1 busy %, generator % of a core, expected)
    type Case<'a> = (&'a [u32], f64, f64, f64, Option<f64>);
    let cases: [Case; 4] = [
        // Pinned to core 1, target on core 0: others 49% of the host, 2% of its core.
        (&[1], 94.0, 40.0, 38.0, Some(2.0)),
        // Something else on its core.
        (&[1], 10.0, 90.0, 40.0, Some(50.0)),
        // Not pinned (all cores, or unknown): no share of "its cores" apart from the host's.
        (&[0, 1], 94.0, 40.0, 38.0, None),
        (&[], 94.0, 40.0, 38.0, None),
    ];
    for (cpus, core0, core1, generator, expected) in cases {
        let load = host_load(&host(core0, core1, generator), cpus).unwrap();
        let got = load.other_percent_of_generator_cores;
        assert_eq!(got.map(|v| (v * 10.0).round() / 10.0), expected, "{cpus:?}");
    }
    // A core not read in every sample: not guessed.
    let mut s = host(94.0, 40.0, 38.0);
    s.push(sample(&[
        ("host.cpu_percent", 60.0),
        ("host.cpu_count", 2.0),
    ]));
    assert_eq!(
        host_load(&s, &[1])
            .unwrap()
            .other_percent_of_generator_cores,
        None
    );
}
