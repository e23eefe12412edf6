//! The seed examples: every `study:` section parses and every variant / sweep point is a
//! valid scenario; each full example keeps what its seed study did (the load shapes, tiers,
//! work, sizes and targets the seed used); each short variant (examples/short/) is its full
//! example with less load; and each short study, run against the targets its header starts,
//! writes a report holding every table and figure of the seed's hand-written report, with
//! real values.

mod common;

use common::{exclusive, yaml_files, Target, BIN};
use loadlab_scenario::study::{apply_sweep, StudyDocument};
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn yaml(path: &Path) -> Value {
    serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn seed_examples_have_runnable_studies() {
    let mut studied = 0;
    let dir = examples_dir();
    for path in yaml_files(&dir)
        .into_iter()
        .chain(yaml_files(&dir.join("short")))
    {
        let doc = StudyDocument::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let Some(spec) = doc.study().unwrap_or_else(|e| panic!("{e}")) else {
            continue;
        };
        studied += 1;
        for v in &spec.variants {
            let s = doc.variant_scenario(v).unwrap_or_else(|e| panic!("{e}"));
            assert!(s.plan().duration().as_secs_f64() > 0.0);
        }
        if let Some(sweep) = &spec.sweep {
            for &value in &sweep.values {
                let mut s = doc.scenario().unwrap();
                apply_sweep(&mut s, sweep.parameter, value).unwrap();
            }
        }
    }
    assert!(
        studied >= 12,
        "only {studied} examples have a study section"
    );
}

/// The short variant of each full seed example.
fn seed_pairs() -> Vec<(PathBuf, PathBuf)> {
    let dir = examples_dir();
    let pairs: Vec<(PathBuf, PathBuf)> = yaml_files(&dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seed-")
        })
        .map(|p| {
            let short = dir.join("short").join(p.file_name().unwrap());
            assert!(short.exists(), "{} has no short variant", p.display());
            (p, short)
        })
        .collect();
    assert_eq!(pairs.len(), 6, "five seeds, seed 002 in two files");
    pairs
}

/// Think times replaced, so that flows can be compared whatever their pauses.
fn without_think(v: &Value) -> Value {
    match v {
        Value::Mapping(m) => Value::Mapping(
            m.iter()
                .map(|(k, x)| {
                    if k.as_str() == Some("think") {
                        (k.clone(), Value::from("-"))
                    } else if k.as_str() == Some("count") {
                        (k.clone(), Value::from(0))
                    } else {
                        (k.clone(), without_think(x))
                    }
                })
                .collect(),
        ),
        Value::Sequence(s) => Value::Sequence(s.iter().map(without_think).collect()),
        other => other.clone(),
    }
}

#[test]
fn short_variants_are_their_full_examples_with_less_load() {
    for (full, short) in seed_pairs() {
        let (f, s) = (yaml(&full), yaml(&short));
        let name = short.display();
        for key in ["target", "defaults", "thresholds", "monitor", "connections"] {
            assert_eq!(
                f[key], s[key],
                "{name}: `{key}` differs from the full example"
            );
        }
        // The same requests in the same order; pauses and loop counts are shortened.
        assert_eq!(
            without_think(&f["flows"]),
            without_think(&s["flows"]),
            "{name}: flows"
        );
        assert_eq!(f["load"]["model"], s["load"]["model"], "{name}");
        let (fs, ss) = (&f["study"], &s["study"]);
        for key in [
            "sweep",
            "compare",
            "metrics",
            "equivalence",
            "order",
            "warmup_runs",
        ] {
            assert_eq!(fs[key], ss[key], "{name}: study.{key}");
        }
        // Enough runs for every statistic of the full study (a median's CI needs 6).
        let (fr, sr) = (
            fs["repeat"].as_u64().unwrap(),
            ss["repeat"].as_u64().unwrap(),
        );
        assert!(sr >= 6 && sr <= fr, "{name}: {sr} runs (full: {fr})");
        let names = |v: &Value| -> Vec<Value> {
            v["variants"]
                .as_sequence()
                .map(|s| s.iter().map(|v| v["name"].clone()).collect())
                .unwrap_or_default()
        };
        assert_eq!(names(fs), names(ss), "{name}: variants");
        // The targets the header starts are the full example's.
        assert_eq!(target_commands(&full), target_commands(&short), "{name}");
    }
}

fn stage_vus(load: &Value) -> Vec<(String, u64)> {
    load["stages"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["duration"].as_str().unwrap().to_string(),
                s["vus"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn variant<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["study"]["variants"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|v| v["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no variant {name}"))
}

#[test]
fn full_examples_keep_what_the_seeds_did() {
    let dir = examples_dir();
    // 000: baseline holds 35 VUs for 8m30s (k6 stages: a 0 s step, then the hold), stress
    // jumps 25 → 75; 10 repetitions; an SLO per domain.
    let s0 = yaml(&dir.join("seed-000-permit-k6-stages.yaml"));
    let stages = stage_vus(&s0["load"]);
    assert_eq!(
        stages,
        [("30s", 10), ("0s", 35), ("8m30s", 35), ("30s", 0)].map(|(d, v)| (d.to_string(), v))
    );
    assert_eq!(
        stage_vus(&variant(&s0, "stress")["load"]),
        [("30s", 25), ("0s", 75), ("6m30s", 75), ("30s", 0)].map(|(d, v)| (d.to_string(), v))
    );
    assert_eq!(s0["study"]["repeat"], 10);
    let thresholds = serde_yaml_ng::to_string(&s0["thresholds"]).unwrap();
    for domain in ["auth", "applications", "workflow", "survey"] {
        assert!(thresholds.contains(&format!("group.{domain}.latency.p95")));
    }
    // 001: tiers of 10, 35 and 75 arrivals/s on two systems, ≥ 6 runs each.
    let s1 = yaml(&dir.join("seed-001-monolith-vs-micro.yaml"));
    assert!(s1["study"]["repeat"].as_u64().unwrap() >= 6);
    for (name, rate) in [
        ("monolith-low", "10/s"),
        ("micro-low", "10/s"),
        ("monolith-high", "75/s"),
        ("micro-high", "75/s"),
    ] {
        let stages = variant(&s1, name)["load"]["stages"].as_sequence().unwrap();
        assert_eq!(
            stages.last().unwrap()["rate"].as_str(),
            Some(rate),
            "{name}"
        );
        assert_eq!(stages.last().unwrap()["duration"].as_str(), Some("120s"));
    }
    assert_eq!(
        s1["load"]["stages"][1]["rate"].as_str(),
        Some("35/s"),
        "mid tier"
    );
    // 002: constant work, 100 users × 1000 transactions at every level; ≥ 6 runs; the
    // keep-alive comparison at 25 VUs.
    for file in [
        "seed-002-users-transactions.yaml",
        "seed-002-keep-alive.yaml",
    ] {
        let s2 = yaml(&dir.join(file));
        assert_eq!(s2["load"]["shared_iterations"], 100, "{file}");
        assert!(s2["load"]["iterations"].is_null(), "{file}");
        assert!(s2["study"]["repeat"].as_u64().unwrap() >= 6, "{file}");
        let flow = serde_yaml_ng::to_string(&s2["flows"]).unwrap();
        assert!(flow.contains("count: 1000"), "{file}");
    }
    let sweep = yaml(&dir.join("seed-002-users-transactions.yaml"));
    assert_eq!(
        serde_yaml_ng::to_string(&sweep["study"]["sweep"]["vus"]).unwrap(),
        "- 10\n- 20\n- 25\n- 30\n- 50\n- 75\n"
    );
    let ka = yaml(&dir.join("seed-002-keep-alive.yaml"));
    assert_eq!(ka["load"]["vus"], 25);
    assert_eq!(variant(&ka, "keep-alive")["connections"], "per_vu");
    assert_eq!(
        variant(&ka, "new-connection-per-request")["connections"],
        "none"
    );
    // 003: the full 66,666 spike, a warm-up, per-step thresholds for the reservation.
    let s3 = yaml(&dir.join("seed-003-spike.yaml"));
    assert_eq!(s3["load"]["count"], 66666);
    assert!(s3["study"]["warmup_runs"].as_u64().unwrap() >= 1);
    let thresholds = serde_yaml_ng::to_string(&s3["thresholds"]).unwrap();
    assert!(thresholds.contains("step.reserve ticket.latency.p95"));
    assert!(thresholds.contains("step.signin.latency.p95"));
    let header = std::fs::read_to_string(dir.join("seed-003-spike.yaml")).unwrap();
    assert!(header.contains("--segment") && header.contains("loadlab merge"));
    // 004: the gateway at 450 VUs and each service isolated at 1000 and 3000, with and
    // without observability, each on its own target.
    let s4 = yaml(&dir.join("seed-004-gateway-stages.yaml"));
    let peak = |load: &Value| stage_vus(load).iter().map(|(_, v)| *v).max().unwrap();
    assert_eq!(peak(&s4["load"]), 450);
    let mut targets = vec![s4["target"].as_str().unwrap().to_string()];
    for (name, vus) in [
        ("assessments-without-observability", 1000),
        ("assessments-with-observability", 1000),
        ("patients-without-observability", 3000),
        ("patients-with-observability", 3000),
    ] {
        let v = variant(&s4, name);
        assert_eq!(peak(&v["load"]), vus, "{name}");
        targets.push(v["target"].as_str().unwrap().to_string());
    }
    targets.push(
        variant(&s4, "gateway-with-observability")["target"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    targets.sort();
    targets.dedup();
    assert_eq!(targets.len(), 6, "six systems under test");
}

/// `(port, arguments)` of each `#   loadlab target --listen 127.0.0.1:PORT ARGS &` line of
/// an example's header.
fn target_commands(path: &Path) -> Vec<(u16, Vec<String>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("#   loadlab target --listen 127.0.0.1:"))
        .map(|rest| {
            let rest = rest.trim_end().trim_end_matches('&').trim_end();
            let mut words = rest.split_whitespace();
            let port = words.next().unwrap().parse().unwrap();
            (port, words.map(String::from).collect())
        })
        .collect()
}

/// Runs a short study against the targets its header starts (on free ports) and returns its
/// Markdown report.
fn run_short_study(path: &Path, results: &Path) -> String {
    let commands = target_commands(path);
    assert!(
        !commands.is_empty(),
        "{}: no target command",
        path.display()
    );
    let mut text = std::fs::read_to_string(path).unwrap();
    let mut targets = Vec::new();
    for (port, args) in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let t = Target::start(&args);
        let new_port = t.url.rsplit(':').next().unwrap().to_string();
        text = text
            .replace(
                &format!("127.0.0.1:{port}"),
                &format!("127.0.0.1:{new_port}"),
            )
            .replace(&format!("port: {port}"), &format!("port: {new_port}"));
        targets.push(t);
    }
    // At the same place in a stand-in for examples/, so that relative data paths resolve.
    let scratch = common::examples_scratch("loadlab-study-example-");
    let file = scratch
        .path()
        .join(path.strip_prefix(examples_dir()).unwrap());
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let out = Command::new(BIN)
        .args([
            "study",
            file.to_str().unwrap(),
            "--repeat",
            "2",
            // Flat-out variants on a shared VM: a repetition may be held up more than twice.
            "--retry-invalid",
            "4",
            "--no-progress",
        ])
        .args(["--results", results.to_str().unwrap()])
        .output()
        .expect("run loadlab study");
    drop(targets);
    let said = format!(
        "{}: {}{}",
        path.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Thresholds may fail (seed 001's overloaded tiers do on purpose); nothing else may.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{said}");
    let studies = results.join("studies");
    let dir = std::fs::read_dir(&studies)
        .unwrap_or_else(|e| panic!("{}: {e}; {said}", studies.display()))
        .map(|e| e.unwrap().path())
        .max_by_key(|p| p.metadata().unwrap().modified().unwrap())
        .unwrap();
    std::fs::read_to_string(dir.join("report.md"))
        .unwrap_or_else(|e| panic!("{}: no report.md ({e}); {said}", dir.display()))
}

/// The rows of the first Markdown table whose header row starts with `header`, as cells.
fn table(md: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = md.lines().skip_while(|l| !l.starts_with(header));
    assert!(lines.next().is_some(), "no table `{header}` in the report");
    lines
        .skip(1) // |---|
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// `1.23ms`, `4.5s`, `812µs`, `17.9/s`, `12`, `0.25%` → the number (unit dropped).
fn number(cell: &str) -> f64 {
    let digits: String = cell
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("`{cell}` is not a number"))
}

/// Every cell of `column` in `rows` (by index) is a positive number.
fn positive(rows: &[Vec<String>], column: usize, what: &str) {
    assert!(!rows.is_empty(), "{what}: no rows");
    for r in rows {
        assert!(number(&r[column]) > 0.0, "{what}: {r:?}");
    }
}

/// The comparison table: pair, metric, medians, % change [95% CI], p, Holm p, n, verdict.
fn comparisons(md: &str) -> Vec<Vec<String>> {
    table(md, "| baseline → variant | metric | baseline median |")
}

fn rows_for<'a>(rows: &'a [Vec<String>], first: &str) -> Vec<&'a Vec<String>> {
    rows.iter().filter(|r| r[0].contains(first)).collect()
}

/// What every seed report has: the runs of each variant (duration, iterations, requests,
/// throughput, p95), the summary across runs with mean … max, charts, the monitored target's
/// resources, client beside server latency per run and step, thresholds.
fn common_sections(md: &str, variants: usize, runs_per_variant: usize) {
    let summary = table(md, "| variant | load | runs | throughput |");
    assert_eq!(summary.len(), variants, "one summary row per variant");
    for col in [3, 5, 6, 8, 9] {
        positive(&summary, col, "summary throughput / mean / p50 / p99 / max");
    }
    let runs = md
        .lines()
        .filter(|l| l.starts_with("| run | started | duration | iterations |"))
        .count();
    assert_eq!(runs, variants, "a runs table per variant");
    let first = table(md, "| run | started | duration | iterations |");
    assert_eq!(first.len(), runs_per_variant);
    for col in [2, 3, 4, 5, 8] {
        positive(
            &first,
            col,
            "run duration / iterations / requests / throughput / p95",
        );
    }
    for chart in [
        "p95-per-run.svg",
        "latency-over-time.svg",
        "process-cpu.svg",
    ] {
        assert!(md.contains(chart), "no chart {chart}");
    }
    let split = table(md, "| variant | run | step | requests | client p50 |");
    positive(&split, 4, "client p50 per run");
    positive(&split, 8, "server p50 per run");
    assert!(md.contains("## Thresholds"));
}

/// What a seed's short study report must hold (asserted).
type SeedTables = fn(&str);

#[test]
fn short_seed_studies_write_the_seeds_tables() {
    let _serial = exclusive();
    let dir = examples_dir().join("short");
    let tmp = common::scratch_dir("loadlab-seed-reports-");
    let results = tmp.path();
    let seeds: [(&str, SeedTables); 6] = [
        ("seed-000-permit-k6-stages.yaml", seed_000_per_domain_tables),
        (
            "seed-001-monolith-vs-micro.yaml",
            seed_001_side_by_side_tables,
        ),
        (
            "seed-002-users-transactions.yaml",
            seed_002_per_operation_and_sweep_tables,
        ),
        ("seed-002-keep-alive.yaml", seed_002_keep_alive_tables),
        ("seed-003-spike.yaml", seed_003_round_tables),
        (
            "seed-004-gateway-stages.yaml",
            seed_004_observability_tables,
        ),
    ];
    for (file, tables) in seeds {
        tables(&run_short_study(&dir.join(file), &results.join(file)));
    }
    let _ = std::fs::remove_dir_all(results);
}

/// 000: per domain (group) tables over all runs, baseline vs stress with % change and
/// degradation factors, thresholds per domain.
fn seed_000_per_domain_tables(md: &str) {
    common_sections(md, 2, 2);
    let domains = table(md, "| group / step | requests |");
    for domain in ["auth", "applications", "workflow", "survey"] {
        let row = rows_for(&domains, &format!("group `{domain}`"));
        assert_eq!(row.len(), 1, "{domain}");
        assert!(
            number(&row[0][1]) > 0.0 && number(&row[0][8]) > 0.0,
            "{row:?}"
        );
    }
    let changes = comparisons(md);
    let survey: Vec<_> = changes
        .iter()
        .filter(|r| r[0] == "baseline → stress" && r[1] == "p95 latency of group `survey`")
        .collect();
    assert_eq!(survey.len(), 1, "{changes:?}");
    assert!(
        survey[0][4].contains('%'),
        "a % change with its CI: {:?}",
        survey[0]
    );
    // Raw and compensated latency compared side by side (the closed model's two views).
    for metric in [
        "p95 latency",
        "p95 compensated latency",
        "p99 compensated latency",
    ] {
        assert!(
            changes
                .iter()
                .any(|r| r[0] == "baseline → stress" && r[1] == metric),
            "{metric} in {changes:?}"
        );
    }
    // Each variant's results give its compensated p95 and p99 beside the raw ones, and the
    // size of the correction; the method says the verdicts rest on the raw latency.
    let results = &md[md
        .find("## Results per variant")
        .expect("a results section")..];
    let results = &results[..results[3..].find("\n## ").map_or(results.len(), |i| i + 3)];
    assert_eq!(
        results.matches("| p99 compensated latency |").count(),
        2,
        "{results}"
    );
    assert_eq!(
        results
            .matches("Closed model, compensated for coordinated omission")
            .count(),
        2,
        "{results}"
    );
    assert!(
        md.contains("| **Latency compared** | as measured (raw)"),
        "{md}"
    );
    let factors = table(md, "| baseline → variant | load | throughput |");
    assert_eq!(factors.len(), 1);
    assert!(
        number(&factors[0][1]) > 2.0,
        "stress/baseline VUs: {factors:?}"
    );
    let thresholds = table(md, "| variant | threshold | met in |");
    assert!(thresholds
        .iter()
        .any(|r| r[1] == "`group.survey.latency.p95 < 2.2s`" && r[2].contains("2/2 runs")));
}

/// 001: six variants side by side (its 3-tier and response time tables), errors by kind
/// per variant (the overloaded monolith answers 503), a % change table per tier.
fn seed_001_side_by_side_tables(md: &str) {
    common_sections(md, 6, 2);
    let errors = table(md, "| variant | kind | count |");
    assert!(
        errors
            .iter()
            .any(|r| r[0] == "`monolith-high`" && number(&r[2]) > 0.0),
        "{errors:?}"
    );
    positive(&errors, 2, "errors by kind");
    let changes = comparisons(md);
    for tier in ["low", "mid", "high"] {
        let pair = format!("monolith-{tier} → micro-{tier}");
        assert!(
            changes
                .iter()
                .any(|r| r[0] == pair && r[1] == "p95 latency"),
            "tier {tier}"
        );
    }
}

/// 002: per operation (step) tables, the sweep with the change between adjacent levels,
/// each run's duration (the seed's total execution time).
fn seed_002_per_operation_and_sweep_tables(md: &str) {
    common_sections(md, 6, 2);
    let steps = table(md, "| group / step | requests |");
    for step in ["create user", "create transaction"] {
        let row = rows_for(&steps, &format!("step `{step}`"));
        assert_eq!(row.len(), 1, "{step}");
        for col in [4, 5, 6, 7, 8, 9, 10] {
            assert!(number(&row[0][col]) > 0.0, "{step}: mean … max {row:?}");
        }
    }
    let sweep = table(md, "| levels | run duration | throughput |");
    assert_eq!(sweep.len(), 5, "five adjacent pairs of six levels");
    assert!(sweep
        .iter()
        .all(|r| r[1].contains('%') && r[2].contains('%')));
    assert!(md.contains("`create transaction` p95"));
}

/// 002, keep-alive: new connections per request against keep-alive.
fn seed_002_keep_alive_tables(md: &str) {
    common_sections(md, 2, 2);
    let changes = comparisons(md);
    assert!(changes
        .iter()
        .any(|r| r[0] == "new-connection-per-request → keep-alive" && r[1] == "throughput"));
}

/// 003: the warm-up, per round the reservation's client and server latency, per-step
/// thresholds.
fn seed_003_round_tables(md: &str) {
    common_sections(md, 1, 2);
    assert!(md.contains("**Warm-up runs** | 1 of each variant"));
    let split = table(md, "| variant | run | step | requests | client p50 |");
    let reservations = rows_for(&split, "")
        .into_iter()
        .filter(|r| r[2] == "`reserve ticket`");
    assert_eq!(reservations.count(), 2, "one row per round: {split:?}");
    let thresholds = table(md, "| variant | threshold | met in |");
    assert!(thresholds
        .iter()
        .any(|r| r[1] == "`step.reserve ticket.latency.p95 < 10s`"));
}

/// 004: three targets, each with and without observability: six variants, three
/// comparisons, the CPU of each target.
fn seed_004_observability_tables(md: &str) {
    common_sections(md, 6, 2);
    let changes = comparisons(md);
    for service in ["gateway", "assessments", "patients"] {
        let pair = format!("{service}-without-observability → {service}-with-observability");
        assert!(changes.iter().any(|r| r[0] == pair), "{pair}");
        assert!(md.contains(&format!(
            "{service}-with-observability — CPU of the monitored processes"
        )));
    }
}
