//! Merging the records of the segments of one plan into one record, exactly: histograms add,
//! counters sum, intervals line up by wall-clock time. Resource samples are not added up (the
//! segments' hosts differ): each segment's samples are kept, tagged with its index, in
//! segment order. A missing or invalid segment makes the merged run invalid; nothing is ever
//! extrapolated. The same inputs give the same bytes.

use super::codec::IntervalRecord;
use super::meta::{MergedSegment, RecordEnd, RecordMeta};
use super::reader::{Intervals, RecordError, StoredRecord};
use super::summary::Summarizer;
use super::writer::Guarded;
use loadlab_metrics::clock::ClockSkew;
use loadlab_metrics::result::{
    encode_nonempty, from_unix_seconds, rfc3339, PlannedLoad, RunResult, SegmentSummary, StopReason,
};
use loadlab_metrics::steering::{driven_points, summed_points};
use loadlab_metrics::validity::{InvalidKind, Validity};
use std::iter::Peekable;

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give the record directories of a plan's segments")]
    Empty,
    #[error("{path} is not a segment (it was not run with --segment i/N): only segments of one plan can be merged")]
    NotASegment { path: String },
    #[error("{a} and {b} are segments of different plans (plan hash {ha} vs {hb}): only segments of one plan can be merged")]
    DifferentPlans {
        a: String,
        b: String,
        ha: String,
        hb: String,
    },
    #[error("{a} is segment {sa} and {b} is segment {sb}: the plan was split differently")]
    DifferentCounts {
        a: String,
        b: String,
        sa: String,
        sb: String,
    },
    #[error("{a} and {b} are both segment {segment}: give each segment once")]
    Duplicate {
        a: String,
        b: String,
        segment: String,
    },
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Segments further apart than this at their start did not start together.
const ALIGNED_WITHIN_S: f64 = 0.05;

/// Merges the records; writes the merged record to `out` (when given) as it goes; returns
/// the merged summary (thresholds not evaluated).
pub fn merge_records(
    records: &[StoredRecord],
    mut out: Option<&mut Guarded>,
) -> Result<RunResult, MergeError> {
    let records = segments_of_one_plan(records)?;
    let count = records[0].meta.segment.expect("checked").count;
    let start = records
        .iter()
        .map(|r| r.meta.start_unix_s)
        .fold(f64::INFINITY, f64::min);
    let meta = merged_meta(&records, start);
    if let Some(o) = out.as_deref_mut() {
        o.begin(&meta);
    }
    let mut per_segment: Vec<Summarizer> = records
        .iter()
        .map(|r| Summarizer::counters_only(r.meta.steps.len()))
        .collect();
    let mut merged = Summarizer::for_record(&meta);
    let intervals = interleave(
        &records,
        start,
        meta.slice_s.max(1e-3),
        &mut per_segment,
        &mut merged,
        out.as_deref_mut(),
    )?;
    let end = merged_end(&records, intervals);
    let mut result = merged.finish(&meta, Some(&end));
    result.segment = None;
    for (r, own_summary) in records.iter().zip(&per_segment) {
        let own = own_summary.finish(&r.meta, r.end.as_ref());
        let seg = r.meta.segment.expect("checked");
        if !own.valid {
            carry_segment_validity(&mut result.validity, &seg.to_string(), &own.validity);
        }
        let latency = own_summary.measured_latency().get().map(encode_nonempty);
        result
            .segments
            .push(segment_summary(r, &own, start, latency.unwrap_or_default()));
    }
    result.clock_skew = ClockSkew::of(records.iter().filter_map(|r| r.meta.clock.as_ref()));
    if let Some(skew) = &result.clock_skew {
        result.notes.push(skew.describe());
    }
    for missing in (0..count).filter(|i| {
        !records
            .iter()
            .any(|r| r.meta.segment.is_some_and(|s| s.index == *i))
    }) {
        result.validity.push(
            InvalidKind::SegmentMissing,
            format!("segment {missing}/{count} missing: its share of the plan is not in this result (not extrapolated)"),
        );
    }
    let spread = records
        .iter()
        .map(|r| r.meta.start_unix_s - start)
        .fold(0.0, f64::max);
    if spread > ALIGNED_WITHIN_S {
        result.notes.push(format!(
            "the segments started up to {:.0} ms apart: totals are exact, but their intervals were lined up to the nearest second (start them together with --start-at)",
            spread * 1000.0
        ));
    }
    result.valid = result.validity.is_valid();
    if let Some(o) = out {
        o.end(&end);
    }
    Ok(result)
}

/// The records in segment order, once each checked to be segments of one plan split the
/// same way, none given twice.
fn segments_of_one_plan(records: &[StoredRecord]) -> Result<Vec<&StoredRecord>, MergeError> {
    let mut records: Vec<&StoredRecord> = records.iter().collect();
    let first = *records.first().ok_or(MergeError::Empty)?;
    let path = |r: &StoredRecord| r.dir.display().to_string();
    for r in &records {
        let Some(seg) = r.meta.segment else {
            return Err(MergeError::NotASegment { path: path(r) });
        };
        let base = first.meta.segment.expect("checked above");
        if r.meta.plan_hash != first.meta.plan_hash {
            return Err(MergeError::DifferentPlans {
                a: path(first),
                b: path(r),
                ha: short(&first.meta.plan_hash),
                hb: short(&r.meta.plan_hash),
            });
        }
        if seg.count != base.count {
            return Err(MergeError::DifferentCounts {
                a: path(first),
                b: path(r),
                sa: base.to_string(),
                sb: seg.to_string(),
            });
        }
    }
    records.sort_by_key(|r| r.meta.segment.map(|s| s.index));
    for pair in records.windows(2) {
        if pair[0].meta.segment == pair[1].meta.segment {
            return Err(MergeError::Duplicate {
                a: path(pair[0]),
                b: path(pair[1]),
                segment: pair[0].meta.segment.expect("checked").to_string(),
            });
        }
    }
    Ok(records)
}

/// Reads the segments' intervals side by side, each shifted by its whole slices of start
/// offset (segments of one plan share its slice length), and adds those that fall on the
/// same slice into one merged interval: folded into `merged` and written to `out`, each
/// segment's own folded into its `per_segment` summarizer. Returns how many there were.
fn interleave(
    records: &[&StoredRecord],
    start: f64,
    slice_s: f64,
    per_segment: &mut [Summarizer],
    merged: &mut Summarizer,
    mut out: Option<&mut Guarded>,
) -> Result<u32, MergeError> {
    let mut streams: Vec<(i64, Peekable<Intervals>)> = Vec::new();
    for r in records {
        let shift = ((r.meta.start_unix_s - start) / slice_s).round() as i64;
        streams.push((shift, r.intervals()?.peekable()));
    }
    let mut index = 0u32;
    loop {
        let next = streams
            .iter_mut()
            .filter_map(|(shift, s)| s.peek().map(|r| i64::from(r.index) + *shift))
            .min();
        let Some(at) = next else { break };
        let mut interval: Option<IntervalRecord> = None;
        for (k, (shift, s)) in streams.iter_mut().enumerate() {
            if s.peek().map(|r| i64::from(r.index) + *shift) != Some(at) {
                continue;
            }
            let mut r = s.next().expect("peeked");
            per_segment[k].add(&r);
            let segment = records[k].meta.segment.map(|s| s.index);
            shift_onto_merged_axis(&mut r, *shift as f64 * slice_s, segment);
            match interval.as_mut() {
                None => interval = Some(r),
                Some(m) => {
                    m.delta.add(&r.delta);
                    m.length_s = m.length_s.max(r.length_s);
                    m.warmup |= r.warmup;
                    m.resources.append(&mut r.resources);
                }
            }
        }
        let mut interval = interval.expect("at least one segment had this interval");
        interval.index = index;
        index += 1;
        merged.add(&interval);
        if let Some(o) = out.as_deref_mut() {
            o.interval(&interval);
        }
    }
    Ok(index)
}

/// Moves a segment's interval `shift_s` later, onto the merged time axis. Its samples stay
/// its own (its host), tagged with its `segment`.
fn shift_onto_merged_axis(r: &mut IntervalRecord, shift_s: f64, segment: Option<u32>) {
    r.start_s += shift_s;
    for res in &mut r.resources {
        res.segment = segment;
        res.sample.elapsed_ms = res
            .sample
            .elapsed_ms
            .saturating_add_signed((shift_s * 1000.0).round() as i64);
    }
}

/// How the merged run ended: crashed if any segment's record has no end, interrupted if any
/// was, its wall time and memory the largest of the segments'.
fn merged_end(records: &[&StoredRecord], intervals: u32) -> RecordEnd {
    let ends: Vec<Option<&RecordEnd>> = records.iter().map(|r| r.end.as_ref()).collect();
    RecordEnd {
        stop: if ends.iter().any(Option::is_none) {
            StopReason::Crashed
        } else if ends
            .iter()
            .any(|e| e.is_some_and(|e| e.stop == StopReason::Signal))
        {
            StopReason::Signal
        } else if ends
            .iter()
            .any(|e| e.is_some_and(|e| e.stop == StopReason::Threshold))
        {
            StopReason::Threshold
        } else {
            StopReason::Completed
        },
        signal: ends.iter().flatten().find_map(|e| e.signal.clone()),
        aborted_by_threshold: ends
            .iter()
            .flatten()
            .find_map(|e| e.aborted_by_threshold.clone()),
        wall_s: ends.iter().flatten().map(|e| e.wall_s).fold(0.0, f64::max),
        max_rss_bytes: ends
            .iter()
            .flatten()
            .map(|e| e.max_rss_bytes)
            .max()
            .unwrap_or(0),
        intervals,
        monitor_cpu_percent: ends
            .iter()
            .flatten()
            .filter_map(|e| e.monitor_cpu_percent)
            .reduce(f64::max),
        // The segments' machines each have their own; the worst one is the merged run's floor.
        host_timer: ends
            .iter()
            .flatten()
            .filter_map(|e| e.host_timer)
            .max_by(|a, b| a.p95_ms.total_cmp(&b.p95_ms)),
        steering: merged_steering(&ends),
        driven: merged_driven(records),
        data_use: merged_data_use(records),
    }
}

/// Each data set's use, added up over the segments that counted it.
fn merged_data_use(records: &[&StoredRecord]) -> Vec<loadlab_metrics::data_use::DataUse> {
    records[0]
        .meta
        .data_sets
        .iter()
        .enumerate()
        .map(|(i, set)| {
            let uses: Vec<_> = records
                .iter()
                .filter_map(|r| r.end.as_ref()?.data_use.get(i).copied())
                .collect();
            loadlab_metrics::data_use::DataUse::merged(&uses, set.split)
        })
        .collect()
}

/// The segments' loads as driven, added up (each shifted to the merged run's start), when
/// any was steered.
fn merged_driven(records: &[&StoredRecord]) -> Option<PlannedLoad> {
    let ends = records.iter().filter_map(|r| r.end.as_ref());
    if ends.clone().all(|e| e.steering.is_empty()) {
        return None;
    }
    let start = records
        .iter()
        .map(|r| r.meta.start_unix_s)
        .fold(f64::INFINITY, f64::min);
    let curves: Vec<Vec<(f64, f64)>> = records
        .iter()
        .map(|r| {
            let planned = r.meta.load.planned.as_ref();
            let end = r.end.as_ref();
            let points = driven_points(
                planned.map_or(&[][..], |p| &p.points),
                end.map_or(&[][..], |e| &e.steering),
                end.map_or(r.meta.load.planned_duration_s, |e| e.wall_s),
            );
            let shift = r.meta.start_unix_s - start;
            points.into_iter().map(|(t, v)| (t + shift, v)).collect()
        })
        .collect();
    Some(PlannedLoad {
        vus: records[0].meta.load.model == loadlab_metrics::LoadModel::Closed,
        points: summed_points(&curves),
    })
}

/// Every segment's commands in time order: each process of a distributed run is steered on
/// its own, and the merged record says what each was told (the same command sent to all is
/// kept once).
fn merged_steering(ends: &[Option<&RecordEnd>]) -> Vec<loadlab_metrics::SteerEvent> {
    let mut all: Vec<loadlab_metrics::SteerEvent> = ends
        .iter()
        .flatten()
        .flat_map(|e| e.steering.iter().cloned())
        .collect();
    all.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    all.dedup_by(|a, b| {
        a.action == b.action
            && a.after == b.after
            && a.over_s == b.over_s
            && (a.at_s - b.at_s).abs() < 0.5
    });
    all
}

/// A segment's line in the merged result, from its own summary.
fn segment_summary(
    r: &StoredRecord,
    own: &RunResult,
    start: f64,
    latency: String,
) -> SegmentSummary {
    SegmentSummary {
        latency,
        index: r.meta.segment.expect("checked").index,
        host: r.meta.environment.hostname.clone(),
        started_at: rfc3339(from_unix_seconds(r.meta.start_unix_s)),
        requests: own.requests.total + own.requests.warmup,
        failed: own.requests.failed,
        cpu_percent: own.generator.cpu_percent,
        valid: own.valid,
        invalid: own.validity.reasons.iter().map(|r| r.kind).collect(),
        interrupted: own.interrupted,
        start_offset_ms: (r.meta.start_unix_s - start) * 1000.0,
        node: r.meta.environment.node.clone(),
        pod: r.meta.environment.pod.clone(),
        clock: r.meta.clock.clone(),
    }
}

fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

/// The merged record's header: the whole plan (the segments' shares added up).
fn merged_meta(records: &[&StoredRecord], start: f64) -> RecordMeta {
    let first = &records[0].meta;
    let mut meta = first.clone();
    meta.segment = None;
    meta.start_unix_s = start;
    meta.pid = 0;
    meta.clock = None;
    meta.threads = records.iter().map(|r| r.meta.threads).sum();
    meta.cores = records.iter().map(|r| r.meta.cores).sum();
    let sum_u32 = |f: fn(&RecordMeta) -> Option<u32>| -> Option<u32> {
        records.iter().map(|r| f(&r.meta)).sum()
    };
    meta.load.max_vus = sum_u32(|m| m.load.max_vus);
    meta.load.max_in_flight = sum_u32(|m| m.load.max_in_flight);
    meta.load.count = records.iter().map(|r| r.meta.load.count).sum();
    meta.load.planned_arrivals = records.iter().map(|r| r.meta.load.planned_arrivals).sum();
    meta.load.peak_rate = records.iter().map(|r| r.meta.load.peak_rate).sum();
    meta.steerable = records.iter().any(|r| r.meta.steerable);
    meta.load.planned = first.load.planned.as_ref().map(|p| PlannedLoad {
        vus: p.vus,
        points: p
            .points
            .iter()
            .enumerate()
            .map(|(i, &(t, _))| {
                let total = records
                    .iter()
                    .filter_map(|r| r.meta.load.planned.as_ref()?.points.get(i))
                    .map(|p| p.1)
                    .sum();
                (t, total)
            })
            .collect(),
    });
    meta.merged_from = Some(
        records
            .iter()
            .map(|r| MergedSegment {
                index: r.meta.segment.map_or(0, |s| s.index),
                host: r.meta.environment.hostname.clone(),
                start_unix_s: r.meta.start_unix_s,
                source: r.dir.display().to_string(),
                complete: r.end.is_some(),
                wall_s: r.end.as_ref().map_or(0.0, |e| e.wall_s),
                threads: r.meta.threads,
                cores: r.meta.cores,
                max_rss_bytes: r.end.as_ref().map_or(0, |e| e.max_rss_bytes),
            })
            .collect(),
    );
    meta
}

/// A segment's invalid reasons in the merged run. The generator's or its host's limits keep
/// their kind (named for the segment), so `--allow-saturated` forgives a merge as it forgives
/// a run; anything else makes the segment, and so the merge, invalid.
fn carry_segment_validity(merged: &mut Validity, seg: &str, own: &Validity) {
    let prefix = format!("segment {seg}: ");
    let (limits, others): (Vec<_>, Vec<_>) = own
        .reasons
        .iter()
        .partition(|r| r.kind.is_generator_limit());
    for reason in limits {
        let already = merged
            .reasons
            .iter()
            .any(|m| m.kind == reason.kind && m.message.starts_with(&prefix));
        if !already {
            let named = if reason.message.starts_with(&prefix) {
                reason.message.clone()
            } else {
                format!("{prefix}{}", reason.message)
            };
            merged.push(reason.kind, named);
        }
    }
    if !others.is_empty() {
        let messages: Vec<&str> = others.iter().map(|r| r.message.as_str()).collect();
        merged.push(
            InvalidKind::SegmentInvalid,
            format!(
                "segment {seg} was not a valid measurement: {}",
                messages.join("; ")
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Reasons<'a> = &'a [(InvalidKind, &'a str)];

    fn validity(reasons: Reasons) -> Validity {
        let mut v = Validity::default();
        for (kind, message) in reasons {
            v.push(*kind, *message);
        }
        v
    }

    #[test]
    fn a_segments_reasons_keep_their_kind_when_they_are_the_generators() {
        use InvalidKind::*;
        let cases: &[(Reasons, Reasons, &[InvalidKind])] = &[
            // Only its generator's limit: kept as that kind, named for the segment.
            (
                &[],
                &[(GeneratorSaturated, "cpu 99%")],
                &[GeneratorSaturated],
            ),
            // Already judged on the merged record (host samples): not said twice.
            (
                &[(HostContended, "segment 1/3: host busy")],
                &[(HostContended, "segment 1/3: host busy")],
                &[HostContended],
            ),
            // Another segment's same kind does not count as already said.
            (
                &[(HostContended, "segment 2/3: host busy")],
                &[(HostContended, "segment 1/3: host busy")],
                &[HostContended, HostContended],
            ),
            // Anything else makes the segment invalid; its limits are still carried.
            (
                &[],
                &[(SchedulerLate, "lag"), (Interrupted, "SIGTERM")],
                &[SchedulerLate, SegmentInvalid],
            ),
        ];
        for (merged, own, want) in cases {
            let mut merged = validity(merged);
            carry_segment_validity(&mut merged, "1/3", &validity(own));
            let kinds: Vec<InvalidKind> = merged.reasons.iter().map(|r| r.kind).collect();
            assert_eq!(&kinds, want, "{own:?}");
            for r in &merged.reasons {
                assert!(r.message.starts_with("segment "), "{}", r.message);
                assert!(!r.message.contains("segment 1/3: segment"), "{}", r.message);
            }
        }
    }
}
