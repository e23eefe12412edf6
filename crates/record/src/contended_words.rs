//! What the `host_contended` verdict says of other processes: on a host where the generator
//! is pinned to some cores, a process busy on another core (the target, pinned apart) did not
//! compete with it, and the host-wide share alone blamed it.

/// The verdict's sentence: `delay` is what the generator went through, `others` the busy
/// share of the host not the generator's, `on_cores` that share on the generator's own cores
/// when it is pinned, `named` the busiest other processes (host-wide, empty when unknown);
/// others below `competing_percent` of its cores did not compete with it.
pub fn contended_sentence(
    delay: &str,
    others: f64,
    on_cores: Option<f64>,
    named: &str,
    competing_percent: f64,
) -> String {
    match on_cores {
        None => {
            let named = words_of(named, "busiest others");
            format!(
                "other processes took the CPU the generator needed ({others:.0}% of the host){named}: {delay} — the latencies include time the generator waited for a CPU; stop them, pin the generator to cores of its own (taskset), or run it on another machine"
            )
        }
        Some(mine) if mine >= competing_percent => {
            let named = words_of(named, "busiest others");
            format!(
                "other processes took the CPU the generator needed ({mine:.0}% of the cores it is pinned to, {others:.0}% of the host){named}: {delay} — the latencies include time the generator waited for a CPU; stop what runs on its cores, or pin the others away from them (taskset)"
            )
        }
        Some(mine) => {
            let named = words_of(named, "on other cores");
            format!(
                "the generator's timing was disturbed: {delay} — other processes used {others:.0}% of the host{named} but only {mine:.0}% of the cores the generator is pinned to, so they hardly competed with it; retry the run — a study retries it by itself, `loadlab run --retry-invalid 2` too — and if it recurs, give the generator more cores or a quieter machine"
            )
        }
    }
}

fn words_of(named: &str, label: &str) -> String {
    if named.is_empty() {
        String::new()
    } else {
        format!(" — {label}: {named}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_are_counted_where_the_generator_runs() {
        let delay = "p99 4.00 ms late";
        let named = "loadlab 94% of a core";
        let cases: [(Option<f64>, &str, &str); 4] = [
            // Not pinned: the host is where it runs.
            (None, "(49% of the host) — busiest others: loadlab 94% of a core:", "stop them"),
            // Pinned, and its own cores were busy with others.
            (
                Some(35.0),
                "(35% of the cores it is pinned to, 49% of the host) — busiest others:",
                "stop what runs on its cores",
            ),
            // Pinned to core 1, the target busy on core 0: not blamed.
            (
                Some(2.0),
                "other processes used 49% of the host — on other cores: loadlab 94% of a core but only 2% of the cores the generator is pinned to",
                "retry the run",
            ),
            (Some(9.9), "but only 10% of the cores", "hardly competed"),
        ];
        for (on_cores, says, fix) in cases {
            let s = contended_sentence(delay, 49.0, on_cores, named, 10.0);
            assert!(s.contains(says), "{on_cores:?}: {s}");
            assert!(s.contains(fix), "{on_cores:?}: {s}");
            assert!(s.contains(delay), "{on_cores:?}: {s}");
        }
        let blamed = contended_sentence(delay, 49.0, Some(2.0), named, 10.0);
        assert!(!blamed.contains("took the CPU"), "{blamed}");
        assert_eq!(
            contended_sentence(delay, 12.0, None, "", 10.0),
            "other processes took the CPU the generator needed (12% of the host): p99 4.00 ms late — the latencies include time the generator waited for a CPU; stop them, pin the generator to cores of its own (taskset), or run it on another machine"
        );
    }
}
