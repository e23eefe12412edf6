//! The start barrier of a distributed run. Pods start minutes apart (scheduling, image pulls);
//! the plan's phases must line up across them. Each segment announces itself under the run's
//! prefix and polls until all N have; then the start time is computed from what every segment
//! sees alike — the store's Last-Modified of the newest announcement, plus a lead — and
//! written once with `PutMode::Create` (S3 `If-None-Match: *`, GCS generation 0, Azure
//! `If-None-Match`, an atomic link on file://). Whoever loses the race reads the winner's, so all
//! segments start at one wall-clock time. Because the value is computed from shared facts, two
//! segments that race on a store without conditional put still write the same time.
//!
//! While waiting, each segment probes its clock against the store's (a tiny write whose
//! Last-Modified is read back): the offsets go into its record, and the merge reports the skew.

use crate::error::RemoteError;
use crate::layout::{announce_key, clock_key, ANNOUNCE, FAILED, START};
use crate::store::{now_unix_s, PutOutcome, Remote};
use loadlab_metrics::clock::{estimate, resolution_of, ClockEstimate, Probe};
use loadlab_metrics::result::{from_unix_seconds, rfc3339};
use loadlab_metrics::Segment;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

/// `barrier/announce/<i>.json`: segment i is here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Announcement {
    pub index: u32,
    pub count: u32,
    pub plan_hash: String,
    pub host: Option<String>,
    pub node: Option<String>,
    pub pod: Option<String>,
    pub pid: u32,
    /// This segment's clock when it announced (seconds since the Unix epoch).
    pub announced_unix_s: f64,
}

/// `barrier/start.json`: when every segment starts the plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StartTime {
    pub start_unix_s: f64,
    pub count: u32,
    pub plan_hash: String,
    /// The store's Last-Modified of the newest announcement, the time the lead counts from.
    pub last_arrival_unix_s: f64,
    pub lead_s: f64,
    /// The segment whose write won.
    pub written_by: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct BarrierOptions {
    /// How long to wait for all segments.
    pub timeout: Duration,
    pub poll: Duration,
    /// From the last arrival to the start: time for every segment to see the start.
    pub lead: Duration,
    /// Clock probes to make while waiting.
    pub probes: u32,
}

impl Default for BarrierOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            poll: Duration::from_millis(500),
            lead: Duration::from_secs(5),
            probes: 6,
        }
    }
}

/// A start time further than this in the past cannot be joined.
const JOIN_TOLERANCE_S: f64 = 1.0;

pub struct Barrier<'a> {
    run: &'a Remote,
    me: Announcement,
    options: BarrierOptions,
    probes: Vec<Probe>,
    last_probe: Option<Instant>,
    /// Announcements read so far, by key, with the Last-Modified they were read at.
    seen: HashMap<String, (Announcement, f64)>,
}

/// The outcome of a barrier: the start and this segment's clock.
#[derive(Debug, Clone)]
pub struct Met {
    pub start: SystemTime,
    pub clock: Option<ClockEstimate>,
}

impl<'a> Barrier<'a> {
    pub fn new(
        run: &'a Remote,
        segment: Segment,
        plan_hash: &str,
        options: BarrierOptions,
    ) -> Self {
        let env = loadlab_metrics::Environment::detect();
        Barrier {
            run,
            me: Announcement {
                index: segment.index,
                count: segment.count,
                plan_hash: plan_hash.to_string(),
                host: env.hostname,
                node: env.node,
                pod: env.pod,
                pid: std::process::id(),
                announced_unix_s: 0.0,
            },
            options,
            probes: Vec::new(),
            last_probe: None,
            seen: HashMap::new(),
        }
    }

    fn segment_name(&self) -> String {
        format!("{}/{}", self.me.index, self.me.count)
    }

    /// Announces this segment and waits for the others; `progress` hears what it waits for.
    pub fn meet(mut self, progress: &mut dyn FnMut(&str)) -> Result<Met, RemoteError> {
        let began = Instant::now();
        if let Some(reason) = self.run.get(FAILED)? {
            return Err(RemoteError::BarrierFailed {
                url: self.run.url().to_string(),
                reason: String::from_utf8_lossy(&reason).trim().to_string(),
            });
        }
        if let Some(start) = self.read_start()? {
            return self.join(start, began);
        }
        self.announce()?;
        let deadline = began + self.options.timeout;
        let mut said = 0u32;
        loop {
            self.probe_clock()?;
            if let Some(start) = self.read_start()? {
                return self.join(start, began);
            }
            let arrived = self.arrivals()?;
            if arrived.len() as u32 == self.me.count {
                let start = self.propose(&arrived)?;
                return self.join(start, began);
            }
            if arrived.len() as u32 != said {
                said = arrived.len() as u32;
                progress(&format!(
                    "segment {}: {said} of {} segments at the start barrier",
                    self.segment_name(),
                    self.me.count
                ));
            }
            if Instant::now() >= deadline {
                return Err(self.fail(&arrived, began));
            }
            std::thread::sleep(self.options.poll);
        }
    }

    fn announce(&mut self) -> Result<(), RemoteError> {
        let sent = now_unix_s();
        self.me.announced_unix_s = sent;
        let body = serde_json::to_vec_pretty(&self.me).expect("an announcement serializes");
        self.run.put(&announce_key(self.me.index), body)?;
        let answered = now_unix_s();
        if let Some(e) = self.run.head(&announce_key(self.me.index))? {
            self.probes.push(Probe {
                sent,
                answered,
                stamp: e.modified_unix_s,
                resolution: 0.0,
            });
        }
        self.last_probe = Some(Instant::now());
        Ok(())
    }

    /// One clock probe, a little over a quarter second after the last (so probes fall at
    /// different phases of a whole-second Last-Modified).
    fn probe_clock(&mut self) -> Result<(), RemoteError> {
        if self.probes.len() as u32 >= self.options.probes
            || self
                .last_probe
                .is_some_and(|t| t.elapsed() < Duration::from_millis(270))
        {
            return Ok(());
        }
        let key = clock_key(self.me.index);
        let sent = now_unix_s();
        self.run.put(&key, format!("{sent}\n").into_bytes())?;
        let answered = now_unix_s();
        if let Some(e) = self.run.head(&key)? {
            self.probes.push(Probe {
                sent,
                answered,
                stamp: e.modified_unix_s,
                resolution: 0.0,
            });
        }
        self.last_probe = Some(Instant::now());
        Ok(())
    }

    fn clock(&self, waited: Duration) -> Option<ClockEstimate> {
        let stamps: Vec<f64> = self.probes.iter().map(|p| p.stamp).collect();
        let resolution = resolution_of(&stamps);
        let probes: Vec<Probe> = self
            .probes
            .iter()
            .map(|p| Probe { resolution, ..*p })
            .collect();
        let reference = format!(
            "object store's Last-Modified ({} resolution)",
            if resolution >= 1.0 { "1 s" } else { "10 ms" }
        );
        estimate(&probes, &reference).map(|mut e| {
            e.barrier_wait_s = waited.as_secs_f64();
            e
        })
    }

    fn read_start(&self) -> Result<Option<StartTime>, RemoteError> {
        let Some(bytes) = self.run.get(START)? else {
            return Ok(None);
        };
        let start: StartTime = serde_json::from_slice(&bytes)
            .map_err(|e| RemoteError::invalid(self.run.url(), format!("{START}: {e}")))?;
        self.same_split_of_our_plan(&start.plan_hash, start.count, self.me.index)?;
        Ok(Some(start))
    }

    /// What another segment wrote (as segment `segment` of `count`, for plan `plan_hash`)
    /// belongs to this plan split the same way: another plan or split under the same prefix
    /// is a mistake no waiting resolves.
    fn same_split_of_our_plan(
        &self,
        plan_hash: &str,
        count: u32,
        segment: u32,
    ) -> Result<(), RemoteError> {
        if plan_hash != self.me.plan_hash {
            return Err(RemoteError::OtherPlan {
                url: self.run.url().to_string(),
                theirs: short(plan_hash),
                ours: short(&self.me.plan_hash),
            });
        }
        if count != self.me.count {
            return Err(RemoteError::OtherSplit {
                url: self.run.url().to_string(),
                segment,
                theirs: count,
                ours: self.me.count,
            });
        }
        Ok(())
    }

    /// The announcements of this plan, checking that no other plan shares the prefix.
    /// Each announcement is read once (again only when it was rewritten): a poll costs one
    /// listing, however many segments there are.
    fn arrivals(&mut self) -> Result<Vec<(Announcement, f64)>, RemoteError> {
        let mut arrived = Vec::new();
        for e in self.run.list(ANNOUNCE)? {
            let cached = self
                .seen
                .get(&e.key)
                .filter(|(_, modified)| *modified == e.modified_unix_s)
                .map(|(a, _)| a.clone());
            let a = match cached {
                Some(a) => a,
                None => {
                    let Some(bytes) = self.run.get(&e.key)? else {
                        continue;
                    };
                    let Ok(a) = serde_json::from_slice::<Announcement>(&bytes) else {
                        continue;
                    };
                    self.seen
                        .insert(e.key.clone(), (a.clone(), e.modified_unix_s));
                    a
                }
            };
            self.same_split_of_our_plan(&a.plan_hash, a.count, a.index)?;
            if a.index < self.me.count
                && !arrived
                    .iter()
                    .any(|(b, _): &(Announcement, f64)| b.index == a.index)
            {
                arrived.push((a, e.modified_unix_s));
            }
        }
        Ok(arrived)
    }

    /// All are here: the start is the newest arrival (by the store's clock) plus the lead,
    /// written once; the first write wins and everyone uses it.
    fn propose(&self, arrived: &[(Announcement, f64)]) -> Result<StartTime, RemoteError> {
        let last = arrived.iter().map(|(_, t)| *t).fold(0.0, f64::max);
        let lead = self.options.lead.as_secs_f64();
        let proposal = StartTime {
            start_unix_s: ((last + lead) * 1000.0).ceil() / 1000.0,
            count: self.me.count,
            plan_hash: self.me.plan_hash.clone(),
            last_arrival_unix_s: last,
            lead_s: lead,
            written_by: self.me.index,
        };
        let body = serde_json::to_vec_pretty(&proposal).expect("a start time serializes");
        match self.run.put_if_absent(START, body)? {
            PutOutcome::Created => Ok(proposal),
            PutOutcome::Existed | PutOutcome::Overwrote => {
                Ok(self.read_start()?.unwrap_or(proposal))
            }
        }
    }

    /// Uses an agreed start: probes the clock while there is time, refuses one long past.
    fn join(mut self, start: StartTime, began: Instant) -> Result<Met, RemoteError> {
        let waited = began.elapsed();
        let ago = now_unix_s() - start.start_unix_s;
        if ago > JOIN_TOLERANCE_S {
            return Err(RemoteError::TooLate {
                url: self.run.url().to_string(),
                started: rfc3339(from_unix_seconds(start.start_unix_s)),
                ago_s: ago,
                segment: self.segment_name(),
            });
        }
        if self.probes.is_empty() {
            self.announce()?;
        }
        while (self.probes.len() as u32) < self.options.probes
            && start.start_unix_s - now_unix_s() > 1.0
        {
            std::thread::sleep(Duration::from_millis(280));
            self.probe_clock()?;
        }
        Ok(Met {
            start: from_unix_seconds(start.start_unix_s),
            clock: self.clock(waited),
        })
    }

    fn fail(&self, arrived: &[(Announcement, f64)], began: Instant) -> RemoteError {
        let missing: Vec<String> = (0..self.me.count)
            .filter(|i| !arrived.iter().any(|(a, _)| a.index == *i))
            .map(|i| i.to_string())
            .collect();
        let err = RemoteError::BarrierTimeout {
            url: self.run.url().to_string(),
            arrived: arrived.len() as u32,
            count: self.me.count,
            waited_s: began.elapsed().as_secs(),
            missing: missing.join(", "),
        };
        // Tell the others and the merge job; the first segment to give up writes it.
        let _ = self.run.put_if_absent(
            FAILED,
            format!("{}\n", first_line(&err.to_string())).into_bytes(),
        );
        err
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}
