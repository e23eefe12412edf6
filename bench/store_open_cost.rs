//! What opening the run store costs as the store grows: every command (`loadlab run`, `runs`,
//! `report`…) opens it and recovers the runs whose summary was never written. This crafts a
//! store of N completed runs (index rows and `run.json` files, no records: a completed run is
//! read from its summary) and times `Store::open` plus `unrecovered`, the median of 20.
//!
//! `cargo run -p loadlab-store --example store_open_cost -- [N] [DIR]` (N = 10000; DIR a new
//! temporary directory, kept when given so `loadlab runs --results DIR` can be timed on it).

use loadlab_metrics::RunResult;
use loadlab_store::{NewRun, Store};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let kept = args.next().map(PathBuf::from);
    let tmp = tempfile::tempdir()?;
    let dir = kept.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    craft(&dir, n)?;
    let mut times: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let store = Store::open(&dir).expect("open");
            let todo = store.unrecovered().expect("unrecovered");
            assert!(todo.is_empty());
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "store of {n} runs: open + unrecovered, median {:.4} s (min {:.4}, max {:.4})",
        times[10], times[0], times[19]
    );
    Ok(())
}

/// One run made through the store, then copied `n - 1` times in one transaction (a run at a
/// time through the store would commit, and sync, 10,000 times).
fn craft(dir: &std::path::Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let store = Store::open(dir)?;
    let first = store.begin_run(&NewRun {
        scenario: "bench".into(),
        ..NewRun::default()
    })?;
    let summary = store.finish_run(&first, &RunResult::default())?;
    let text = std::fs::read(&summary)?;
    drop(store);
    let mut conn = rusqlite::Connection::open(dir.join("loadlab.db"))?;
    let tx = conn.transaction()?;
    for i in 1..n {
        let id = format!("{first}-{i:05}");
        let run_dir = dir.join("runs").join(&id);
        std::fs::create_dir_all(&run_dir)?;
        std::fs::write(run_dir.join("run.json"), &text)?;
        tx.execute(
            "INSERT INTO runs (id, started_at, scenario, status, path, requests, partial)
             SELECT ?1, started_at, scenario, status, ?2, requests, partial FROM runs WHERE id = ?3",
            rusqlite::params![id, format!("runs/{id}/run.json"), first],
        )?;
    }
    tx.commit()?;
    Ok(())
}
