//! A steered run in the terminal summary and the run report: one row per stretch of constant
//! load (the exploratory answer, "at 800/s p95 was 40 ms, at 1,200/s 900 ms"), the requests
//! no row holds, and the load as driven drawn beside the planned one.

mod common;

use loadlab_metrics::result::{IntervalLatency, PlannedLoad};
use loadlab_metrics::{LoadModel, LoadStretch, SteerAction, SteerEvent, SteerSource, StretchLevel};
use loadlab_report::{render_markdown, render_summary, run_report, Block, RunResult, Style};

fn stretch(from_s: f64, to_s: f64, level: StretchLevel, requests: u64, p95: f64) -> LoadStretch {
    let measured_s = to_s - from_s - 1.0;
    LoadStretch {
        from_s,
        to_s,
        level,
        measured_s,
        requests,
        failed: requests / 100,
        rate: requests as f64 / measured_s,
        latency_ms: IntervalLatency {
            p50: p95 / 2.0,
            p95,
            p99: p95 * 2.0,
            max: p95 * 3.0,
        },
    }
}

/// The sample's open run, raised from 800/s to 1,200/s at 20 s and paused at 40 s.
fn steered() -> RunResult {
    let mut r = common::sample_open_invalid();
    r.load.model = LoadModel::Open;
    r.load.planned = Some(PlannedLoad {
        vus: false,
        points: vec![(0.0, 800.0), (60.0, 800.0)],
    });
    r.load.driven = Some(PlannedLoad {
        vus: false,
        points: vec![
            (0.0, 800.0),
            (20.0, 800.0),
            (20.0, 1200.0),
            (40.0, 1200.0),
            (40.0, 0.0),
            (60.0, 0.0),
        ],
    });
    let event = |at_s, action, before, after| SteerEvent {
        at_s,
        source: SteerSource::Page,
        action,
        before,
        after,
        over_s: None,
    };
    r.steering = vec![
        event(20.0, SteerAction::Rate, 800.0, 1200.0),
        event(40.0, SteerAction::Pause, 1200.0, 0.0),
    ];
    r.steered = true;
    r.stretches = vec![
        stretch(
            0.0,
            20.0,
            StretchLevel::Steady { level: 800.0 },
            15_200,
            40.0,
        ),
        stretch(
            20.0,
            40.0,
            StretchLevel::Steady { level: 1200.0 },
            22_800,
            900.0,
        ),
        stretch(40.0, 60.0, StretchLevel::Paused, 0, 0.0),
    ];
    r.requests.total = 15_200 + 22_800 + 2_000;
    r
}

#[test]
fn the_summary_has_a_row_per_stretch_and_says_what_no_row_holds() {
    let r = steered();
    let mut out = Vec::new();
    render_summary(&r, &mut out, Style::PLAIN).unwrap();
    let text = String::from_utf8(out).unwrap();
    println!("{text}");
    let table = &text[text.find("load as steered").expect("the stretches' table")..];
    let row = |needle: &str| {
        table
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no row with {needle:?} in:\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        row("1200/s"),
        "20s – 40s 1200/s 19s 22800 1200.0/s 228 (1.00%) 450.00ms 900.00ms 1.80s 2.70s"
    );
    assert!(row("800/s").starts_with("0s – 20s 800/s 19s 15200 800.0/s"));
    assert!(
        row("paused").ends_with("paused 19s 0 0.0/s 0 - - - -"),
        "{}",
        row("paused")
    );
    assert!(
        table.contains("the 2000 requests of intervals in which the load changed are in no row")
    );
    assert!(
        text.contains("20s 800/s → 1200/s (page); 40s pause (page)"),
        "{text}"
    );
}

#[test]
fn the_report_has_the_table_and_draws_the_load_as_driven() {
    let r = steered();
    let doc = run_report(&r, r.load.planned.as_ref());
    let section = doc
        .sections
        .iter()
        .find(|s| s.id == "stretches")
        .expect("a section of the stretches");
    let Some(Block::Table(t)) = section.blocks.first() else {
        panic!("a table first");
    };
    assert_eq!(t.rows.len(), 3);
    let md = render_markdown(&doc, "charts").text;
    assert!(md.contains("## Load as steered"), "{md}");
    assert!(md.contains("| 20s – 40s | 1200/s |"), "{md}");
    let charts: Vec<_> = doc
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Chart(c) => Some(c),
            _ => None,
        })
        .collect();
    let plan = charts
        .iter()
        .find(|c| c.id == "planned-load")
        .expect("the plan's chart");
    assert_eq!(plan.title, "Planned and driven load");
    let driven = plan
        .series
        .iter()
        .find(|s| s.name == "driven arrivals/s")
        .expect("the driven load");
    assert_eq!(driven.points, r.load.driven.as_ref().unwrap().points);
    assert!(!driven.dashed);
    let throughput = charts
        .iter()
        .find(|c| c.series.iter().any(|s| s.name == "ok/s"))
        .expect("the throughput chart");
    assert!(throughput
        .series
        .iter()
        .any(|s| s.name == "driven arrivals/s"));
}
