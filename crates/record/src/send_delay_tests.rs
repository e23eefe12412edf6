//! How late requests were sent in the open model, judged step by step: one request that
//! waited for a connection must not read as the generator's delay because a slow step's
//! requests pushed it onto the run's p50, and requests all sent late still must.

use super::*;
use loadlab_metrics::IntervalDelta;

/// One slice of `steps` steps: (latency, service time) in µs per request.
fn run(steps: &[Vec<(u64, u64)>]) -> loadlab_metrics::RunResult {
    let mut s = Summarizer::new(steps.len());
    for k in 0..4 {
        let mut d = IntervalDelta::new(steps.len());
        d.cpu_seconds = 0.01;
        if k > 0 {
            for (step, requests) in d.steps.iter_mut().zip(steps) {
                for &(latency, service) in requests {
                    step.requests += 1;
                    step.add_status(200, 1);
                    step.latency.record(latency);
                    step.service.record(service);
                }
            }
        }
        s.add(&interval(k, d));
    }
    s.finish(&meta(steps.len(), None, 1e9), None)
}

fn disturbed(r: &loadlab_metrics::RunResult) -> bool {
    use loadlab_metrics::InvalidKind::*;
    [HostContended, GeneratorSaturated, CpuStolen]
        .iter()
        .any(|k| r.validity.has(*k))
}

#[test]
fn a_fast_step_beside_a_slow_one_is_not_read_as_sent_late() {
    // 12 fast calls, one of which waited 1.5 ms for its connection, and 12 streams of 40 ms:
    // over both steps the p50 latency is the waiting call's, the p50 service time another's.
    let mut fast: Vec<(u64, u64)> = (0..11)
        .map(|i| (500 + 10 * i + 100, 500 + 10 * i))
        .collect();
    fast.push((2_100, 600));
    let slow = vec![(40_000, 40_000); 12];
    assert!(!disturbed(&run(&[fast, slow])));
}

#[test]
fn requests_all_sent_late_still_make_the_run_invalid() {
    let late: Vec<(u64, u64)> = (0..40).map(|i| (2_000 + 10 * i, 500 + 10 * i)).collect();
    let slow = vec![(40_000, 40_000); 40];
    assert!(disturbed(&run(std::slice::from_ref(&late))));
    assert!(disturbed(&run(&[late, slow])));
}
