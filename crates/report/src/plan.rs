//! The planned load of a scenario as chart points (the run record keeps only its peak).

use crate::run_doc::PlannedLoad;
use loadlab_scenario::Load;
use loadlab_scenario::Scenario;

/// `(t, VUs)` for a closed model, `(t, arrivals/s)` for an open one; `None` for a burst.
pub fn planned_load(scenario: &Scenario) -> Option<PlannedLoad> {
    match &scenario.load {
        Load::Closed(c) => {
            let mut t = 0.0;
            let mut points = vec![(0.0, c.start_vus as f64)];
            for s in &c.stages {
                t += s.duration.as_secs_f64();
                points.push((t, s.vus as f64));
            }
            Some(PlannedLoad { vus: true, points })
        }
        Load::Open(o) => {
            let mut t = 0.0;
            let mut points = Vec::new();
            for s in &o.stages {
                points.push((t, s.rate));
                t += s.duration.as_secs_f64();
                points.push((t, s.ramp_to.unwrap_or(s.rate)));
            }
            Some(PlannedLoad { vus: false, points })
        }
        _ => None,
    }
}
