//! Rounds of segments (`loadlab study --segments N`): each repetition is a round of N
//! generator processes, merged exactly into one run. The round is the study's unit (its
//! medians, CIs and exact tests are the ordinary ones over runs); this adds what only the
//! segments can tell:
//! - a two-level bootstrap of each percentile's ratio between variants: resample rounds, then
//!   segments within each round, merge their histograms and recompute the percentile
//!   (the hierarchical bootstrap of Saravanan et al. 2020), never an average of percentiles;
//! - how the variance splits between rounds and the segments of a round (Kalibera & Jones
//!   2013, on each segment's p99, or a lower percentile when segments are too small for it),
//!   and so whether the next repetition does more as one more
//!   round or as one more segment per round.

use crate::stats::{median, SplitMix64};
use loadlab_metrics::result::decode_histogram;
use loadlab_metrics::{thin_percentile, LatencyHistogram, LatencyStat, MetricId, RunResult};
use serde::{Deserialize, Serialize};

/// Resamples of the two-level bootstrap (fixed seed: a study's report is reproducible).
pub const ROUND_BOOTSTRAP_RESAMPLES: usize = 2000;

/// The percentiles whose ratios are bootstrapped.
pub const ROUND_STATS: [LatencyStat; 3] = [LatencyStat::P50, LatencyStat::P95, LatencyStat::P99];

/// `study.json`'s `rounds`: a study whose runs were rounds of segments.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundsStudy {
    /// Segments per round (the most any round had).
    pub segments: u32,
    pub resamples: usize,
    pub variants: Vec<VariantRounds>,
    pub comparisons: Vec<RoundsComparison>,
}

/// One variant's valid rounds, its percentiles over them, and where their variance lies.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VariantRounds {
    pub name: String,
    pub rounds: Vec<RoundRow>,
    /// p50, p95, p99: the median over rounds of each round's merged percentile, with its
    /// two-level bootstrap CI.
    #[serde(default)]
    pub percentiles: Vec<RoundPercentile>,
    /// `None` with fewer than 2 rounds or 2 segments per round.
    pub levels: Option<LevelVariance>,
}

/// A variant's percentile over its rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundPercentile {
    /// The run's latency percentile (`latency_ms.p99`).
    pub metric: MetricId,
    /// The median over rounds of each round's merged percentile (ms).
    pub median_ms: f64,
    /// Its 95% two-level bootstrap CI (ms).
    pub ci_ms: [f64; 2],
    /// A round holds fewer than 10 requests beyond it.
    pub thin: bool,
}

/// A round: its merged percentiles (the run's own) and each segment's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundRow {
    pub run: String,
    pub requests: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub segments: Vec<SegmentRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SegmentRow {
    pub index: u32,
    pub requests: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub valid: bool,
}

/// Variance of the segments' percentile (ms²) split by level, as Kalibera & Jones estimate it
/// for a balanced design: `within` is the spread of segments inside a round, `between` what
/// the rounds add beyond it (clipped at 0).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LevelVariance {
    /// The percentile looked at: p99 when every segment has enough requests for it (1,000),
    /// else p95 (200), else p50.
    pub metric: MetricId,
    pub rounds: usize,
    pub segments_per_round: usize,
    pub between_rounds: f64,
    pub within_rounds: f64,
    /// The rounds' share of the variance of one segment's p99 (0..1).
    pub rounds_share: f64,
    /// How much narrower the CI of the mean would be with one more round, and with one more
    /// segment per round (√ of the predicted variance ratio; below 1 is narrower).
    pub ci_factor_more_rounds: f64,
    pub ci_factor_more_segments: f64,
    pub next: NextRepetition,
}

/// What the next repetition does most for the CI.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NextRepetition {
    MoreRounds,
    MoreSegments,
    /// Both narrow the CI alike (within 1%).
    Either,
}

/// `variant` against `baseline` on one percentile: the ratio of the medians of the rounds'
/// merged percentile, and its two-level bootstrap CI (95%).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundsComparison {
    pub baseline: String,
    pub variant: String,
    /// The run's latency percentile (`latency_ms.p99`).
    pub metric: MetricId,
    pub ratio: f64,
    pub ci: [f64; 2],
    /// A round holds fewer than 10 requests beyond this percentile: it is nearly the round's
    /// maximum, and the ratio says little.
    #[serde(default)]
    pub thin: bool,
}

/// A variant's valid runs, in order.
pub struct VariantRuns<'a> {
    pub name: &'a str,
    pub runs: Vec<(&'a str, &'a RunResult)>,
}

/// The rounds analysis, when the study's runs were rounds of segments with their histograms
/// (merges made before segments kept theirs have none: `None`).
pub fn analyze_rounds(
    variants: &[VariantRuns<'_>],
    pairs: &[(usize, usize)],
) -> Option<RoundsStudy> {
    let rounds: Vec<Vec<Round>> = variants.iter().map(|v| rounds_of(&v.runs)).collect();
    if rounds.iter().all(Vec::is_empty) {
        return None;
    }
    let segments = rounds
        .iter()
        .flatten()
        .map(|r| r.segments.len() as u32)
        .max()
        .unwrap_or(0);
    let grid = Grid::of(rounds.iter().flatten());
    let dense: Vec<Vec<Vec<Vec<u64>>>> = rounds
        .iter()
        .map(|rs| {
            rs.iter()
                .map(|r| r.segments.iter().map(|s| grid.counts(&s.latency)).collect())
                .collect()
        })
        .collect();
    let mut comparisons = Vec::new();
    for &(a, b) in pairs {
        if dense[a].is_empty() || dense[b].is_empty() {
            continue;
        }
        let mut rng = SplitMix64(0x5EED_0F2A_u64 ^ ((a as u64) << 32 | b as u64));
        let boot = two_level_ratios(&grid, &dense[a], &dense[b], &mut rng);
        for (k, stat) in ROUND_STATS.into_iter().enumerate() {
            let q = stat.quantile().expect("a percentile");
            let ratio =
                median_of_rounds(&grid, &dense[b], q) / median_of_rounds(&grid, &dense[a], q);
            let fewest = rounds[a]
                .iter()
                .chain(&rounds[b])
                .map(Round::measured)
                .min()
                .unwrap_or(0);
            comparisons.push(RoundsComparison {
                thin: thin_percentile(fewest, q),
                baseline: variants[a].name.to_string(),
                variant: variants[b].name.to_string(),
                metric: MetricId::latency(stat),
                ratio,
                ci: percentile_interval(&boot[k]),
            });
        }
    }
    Some(RoundsStudy {
        segments,
        resamples: ROUND_BOOTSTRAP_RESAMPLES,
        variants: variants
            .iter()
            .enumerate()
            .map(|(i, v)| VariantRounds {
                name: v.name.to_string(),
                rounds: rounds[i].iter().map(Round::row).collect(),
                percentiles: own_percentiles(&grid, &dense[i], &rounds[i], i as u64),
                levels: level_variance(&rounds[i]),
            })
            .collect(),
        comparisons,
    })
}

struct Segment {
    index: u32,
    requests: u64,
    valid: bool,
    latency: LatencyHistogram,
}

struct Round {
    run: String,
    result_requests: u64,
    p50_ms: f64,
    p99_ms: f64,
    segments: Vec<Segment>,
}

impl Round {
    /// Requests in its histograms (measured, warm-up left out).
    fn measured(&self) -> u64 {
        self.segments.iter().map(|s| s.latency.len()).sum()
    }

    fn row(&self) -> RoundRow {
        RoundRow {
            run: self.run.clone(),
            requests: self.result_requests,
            p50_ms: self.p50_ms,
            p99_ms: self.p99_ms,
            segments: self
                .segments
                .iter()
                .map(|s| SegmentRow {
                    index: s.index,
                    requests: s.requests,
                    p50_ms: ms(s.latency.value_at_quantile(0.5)),
                    p99_ms: ms(s.latency.value_at_quantile(0.99)),
                    valid: s.valid,
                })
                .collect(),
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The runs that are rounds: merged runs whose every segment kept its latency.
fn rounds_of(runs: &[(&str, &RunResult)]) -> Vec<Round> {
    runs.iter()
        .filter_map(|(id, r)| {
            if r.segments.is_empty() {
                return None;
            }
            let segments = r
                .segments
                .iter()
                .map(|s| {
                    Some(Segment {
                        index: s.index,
                        requests: s.requests,
                        valid: s.valid,
                        latency: decode_histogram(&s.latency).filter(|h| !h.is_empty())?,
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Round {
                run: id.to_string(),
                result_requests: r.requests.total,
                p50_ms: r.latency_ms.p50,
                p99_ms: r.latency_ms.p99,
                segments,
            })
        })
        .collect()
}

/// Every recorded value of the histograms, sorted: a segment becomes a count per grid value,
/// so that a resampled round merges by adding vectors (thousands of values, not the
/// histograms' tens of thousands of buckets).
struct Grid {
    values: Vec<u64>,
}

impl Grid {
    fn of<'a>(rounds: impl Iterator<Item = &'a Round>) -> Grid {
        let mut values: Vec<u64> = rounds
            .flat_map(|r| r.segments.iter())
            .flat_map(|s| s.latency.iter_recorded().map(|v| v.value_iterated_to()))
            .collect();
        values.sort_unstable();
        values.dedup();
        Grid { values }
    }

    fn counts(&self, h: &LatencyHistogram) -> Vec<u64> {
        let mut counts = vec![0; self.values.len()];
        for v in h.iter_recorded() {
            let i = self
                .values
                .binary_search(&v.value_iterated_to())
                .expect("the grid holds every recorded value");
            counts[i] += v.count_at_value();
        }
        counts
    }

    /// The `q` quantile of merged counts, as HdrHistogram reads it (the first value whose
    /// cumulative count reaches ⌈q·total⌉), in ms.
    fn quantile(&self, counts: &[u64], q: f64) -> f64 {
        let total: u64 = counts.iter().sum();
        let wanted = ((q * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (v, &c) in self.values.iter().zip(counts) {
            seen += c;
            if seen >= wanted {
                return ms(*v);
            }
        }
        self.values.last().map_or(0.0, |v| ms(*v))
    }
}

fn merged(picked: impl Iterator<Item = usize>, segments: &[Vec<u64>], into: &mut [u64]) {
    into.iter_mut().for_each(|c| *c = 0);
    for k in picked {
        for (a, b) in into.iter_mut().zip(&segments[k]) {
            *a += b;
        }
    }
}

/// The median over rounds of each round's merged `q` quantile: the study's own statistic.
fn median_of_rounds(grid: &Grid, rounds: &[Vec<Vec<u64>>], q: f64) -> f64 {
    let mut buf = vec![0; grid.values.len()];
    let per_round: Vec<f64> = rounds
        .iter()
        .map(|segs| {
            merged(0..segs.len(), segs, &mut buf);
            grid.quantile(&buf, q)
        })
        .collect();
    median(&per_round)
}

/// One resample of a variant: rounds drawn with replacement, each one's segments drawn with
/// replacement and merged; the median over the drawn rounds of each percentile.
fn resample(
    grid: &Grid,
    rounds: &[Vec<Vec<u64>>],
    rng: &mut SplitMix64,
    buf: &mut [u64],
) -> Vec<f64> {
    let mut per_stat = vec![Vec::with_capacity(rounds.len()); ROUND_STATS.len()];
    for _ in 0..rounds.len() {
        let segs = &rounds[rng.below(rounds.len())];
        let picks: Vec<usize> = (0..segs.len()).map(|_| rng.below(segs.len())).collect();
        merged(picks.into_iter(), segs, buf);
        for (k, stat) in ROUND_STATS.into_iter().enumerate() {
            per_stat[k].push(grid.quantile(buf, stat.quantile().expect("a percentile")));
        }
    }
    per_stat.iter().map(|v| median(v)).collect()
}

/// The bootstrap distribution of b/a for each of [`ROUND_STATS`].
fn two_level_ratios(
    grid: &Grid,
    a: &[Vec<Vec<u64>>],
    b: &[Vec<Vec<u64>>],
    rng: &mut SplitMix64,
) -> Vec<Vec<f64>> {
    let mut buf = vec![0; grid.values.len()];
    let mut ratios = vec![Vec::with_capacity(ROUND_BOOTSTRAP_RESAMPLES); ROUND_STATS.len()];
    for _ in 0..ROUND_BOOTSTRAP_RESAMPLES {
        let sa = resample(grid, a, rng, &mut buf);
        let sb = resample(grid, b, rng, &mut buf);
        for k in 0..ROUND_STATS.len() {
            if sa[k] > 0.0 {
                ratios[k].push(sb[k] / sa[k]);
            }
        }
    }
    ratios
}

/// A variant's own p50, p95 and p99 over its rounds, each with its two-level bootstrap CI.
fn own_percentiles(
    grid: &Grid,
    dense: &[Vec<Vec<u64>>],
    rounds: &[Round],
    seed: u64,
) -> Vec<RoundPercentile> {
    if dense.is_empty() {
        return Vec::new();
    }
    let mut rng = SplitMix64(0x0A11_0F17_u64 ^ seed);
    let mut buf = vec![0; grid.values.len()];
    let mut boot = vec![Vec::with_capacity(ROUND_BOOTSTRAP_RESAMPLES); ROUND_STATS.len()];
    for _ in 0..ROUND_BOOTSTRAP_RESAMPLES {
        for (k, v) in resample(grid, dense, &mut rng, &mut buf)
            .into_iter()
            .enumerate()
        {
            boot[k].push(v);
        }
    }
    let fewest = rounds.iter().map(Round::measured).min().unwrap_or(0);
    ROUND_STATS
        .into_iter()
        .enumerate()
        .map(|(k, stat)| {
            let q = stat.quantile().expect("a percentile");
            RoundPercentile {
                metric: MetricId::latency(stat),
                median_ms: median_of_rounds(grid, dense, q),
                ci_ms: percentile_interval(&boot[k]),
                thin: thin_percentile(fewest, q),
            }
        })
        .collect()
}

/// The 2.5% and 97.5% points of a bootstrap distribution.
fn percentile_interval(values: &[f64]) -> [f64; 2] {
    if values.is_empty() {
        return [f64::NAN, f64::NAN];
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((p * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
    [at(0.025), at(0.975)]
}

/// Kalibera & Jones's variance components of the segments' percentile over rounds of equal
/// size (rounds with another number of segments are left out of it).
fn level_variance(rounds: &[Round]) -> Option<LevelVariance> {
    let n2 = rounds.iter().map(|r| r.segments.len()).max()?;
    let fewest = rounds
        .iter()
        .flat_map(|r| &r.segments)
        .map(|s| s.latency.len())
        .min()?;
    let stat = [LatencyStat::P99, LatencyStat::P95]
        .into_iter()
        .find(|s| !thin_percentile(fewest, s.quantile().expect("a percentile")))
        .unwrap_or(LatencyStat::P50);
    let q = stat.quantile().expect("a percentile");
    let ys: Vec<Vec<f64>> = rounds
        .iter()
        .filter(|r| r.segments.len() == n2)
        .map(|r| {
            r.segments
                .iter()
                .map(|s| ms(s.latency.value_at_quantile(q)))
                .collect()
        })
        .collect();
    let n1 = ys.len();
    if n1 < 2 || n2 < 2 {
        return None;
    }
    let means: Vec<f64> = ys
        .iter()
        .map(|y| y.iter().sum::<f64>() / n2 as f64)
        .collect();
    let grand = means.iter().sum::<f64>() / n1 as f64;
    let within = ys
        .iter()
        .zip(&means)
        .map(|(y, m)| y.iter().map(|v| (v - m).powi(2)).sum::<f64>())
        .sum::<f64>()
        / (n1 * (n2 - 1)) as f64;
    let s1 = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (n1 - 1) as f64;
    let between = (s1 - within / n2 as f64).max(0.0);
    let total = between + within;
    // The variance of the study's mean: between/n1 + within/(n1·n2).
    let var = |r: f64, s: f64| between / r + within / (r * s);
    let now = var(n1 as f64, n2 as f64);
    let factor = |v: f64| if now > 0.0 { (v / now).sqrt() } else { 1.0 };
    let more_rounds = factor(var(n1 as f64 + 1.0, n2 as f64));
    let more_segments = factor(var(n1 as f64, n2 as f64 + 1.0));
    Some(LevelVariance {
        metric: MetricId::latency(stat),
        rounds: n1,
        segments_per_round: n2,
        between_rounds: between,
        within_rounds: within,
        rounds_share: if total > 0.0 { between / total } else { 0.0 },
        ci_factor_more_rounds: more_rounds,
        ci_factor_more_segments: more_segments,
        next: if (more_segments - more_rounds).abs() <= 0.01 * more_rounds {
            NextRepetition::Either
        } else if more_segments < more_rounds {
            NextRepetition::MoreSegments
        } else {
            NextRepetition::MoreRounds
        },
    })
}

#[cfg(test)]
mod tests;
