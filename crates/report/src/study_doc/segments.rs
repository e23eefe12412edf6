//! A study whose repetitions were rounds of segments (`study --segments N`): each round and
//! each segment's own figures, the two-level bootstrap CI of each percentile ratio, and which
//! level carries the variance, with what the next repetition should be.

use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::format_ms;
use loadlab_analysis::study::{NextRepetition, RoundsStudy, StudyResult, VariantRounds};

pub(super) fn segments_section(s: &StudyResult) -> Option<Section> {
    let rounds = s.rounds.as_ref()?;
    let mut sec = Section::new("rounds", "Rounds of segments");
    sec.push(Block::Text(format!(
        "Each repetition was a round of {} generator processes (`loadlab study --segments {}`), started together at a barrier and merged exactly (histograms added): the round is the unit of every statistic above, and a round is valid only when each of its segments is. Percentiles here are each round's or segment's own; none is averaged.",
        rounds.segments, rounds.segments
    )));
    sec.push(Block::Table(percentile_table(rounds)));
    sec.push(Block::Table(round_table(rounds)));
    sec.push(Block::Table(segment_table(rounds)));
    if let Some(t) = bootstrap_table(rounds) {
        sec.push(Block::Table(t));
    }
    let levels: Vec<String> = rounds.variants.iter().filter_map(level_words).collect();
    if !levels.is_empty() {
        sec.push(Block::Heading("Where the variance is".into()));
        sec.push(Block::List(levels));
    }
    Some(sec)
}

fn percentile_table(rounds: &RoundsStudy) -> Table {
    let mut t = Table::new(&[
        "variant",
        "metric",
        ">median over rounds",
        ">95% CI (two-level)",
    ]);
    for v in &rounds.variants {
        for p in &v.percentiles {
            let ci = format!("{} – {}", format_ms(p.ci_ms[0]), format_ms(p.ci_ms[1]));
            t.row(vec![
                Cell::from(format!("`{}`", v.name)),
                Cell::from(format!("`{}`", p.metric)),
                Cell::from(format_ms(p.median_ms)),
                if p.thin {
                    Cell::level(format!("{ci} (too few requests beyond it)"), Level::Info)
                } else {
                    Cell::from(ci)
                },
            ]);
        }
    }
    t.with_note(format!(
        "Each round's percentile is that of its merged histogram; the median is over the valid rounds. The CI is a two-level bootstrap ({} resamples): rounds drawn with replacement, then the segments of each drawn round, merged, the percentile computed again.",
        rounds.resamples
    ))
}

fn round_table(rounds: &RoundsStudy) -> Table {
    let mut t = Table::new(&[
        "variant",
        ">round",
        "run",
        ">requests",
        ">p50",
        ">p99",
        ">segments valid",
    ]);
    for v in &rounds.variants {
        for (i, r) in v.rounds.iter().enumerate() {
            let valid = r.segments.iter().filter(|s| s.valid).count();
            t.row(vec![
                Cell::from(format!("`{}`", v.name)),
                Cell::from((i + 1).to_string()),
                Cell::from(format!("`{}`", r.run)),
                Cell::from(r.requests.to_string()),
                Cell::from(format_ms(r.p50_ms)),
                Cell::from(format_ms(r.p99_ms)),
                Cell::from(format!("{valid} of {}", r.segments.len())),
            ]);
        }
    }
    t.with_note("Each valid round as merged: its percentiles are those of all its segments' requests together.")
}

fn segment_table(rounds: &RoundsStudy) -> Table {
    let mut t = Table::new(&[
        "variant",
        ">round",
        ">segment",
        ">requests",
        ">p50",
        ">p99",
        "valid",
    ]);
    for v in &rounds.variants {
        for (i, r) in v.rounds.iter().enumerate() {
            for seg in &r.segments {
                t.row(vec![
                    Cell::from(format!("`{}`", v.name)),
                    Cell::from((i + 1).to_string()),
                    Cell::from(format!("{}/{}", seg.index, r.segments.len())),
                    Cell::from(seg.requests.to_string()),
                    Cell::from(format_ms(seg.p50_ms)),
                    Cell::from(format_ms(seg.p99_ms)),
                    if seg.valid {
                        Cell::from("yes".to_string())
                    } else {
                        Cell::level("no".to_string(), Level::Fail)
                    },
                ]);
            }
        }
    }
    t.with_note("Each segment's own requests (warm-up included in the count) and percentiles.")
}

fn bootstrap_table(rounds: &RoundsStudy) -> Option<Table> {
    if rounds.comparisons.is_empty() {
        return None;
    }
    let mut t = Table::new(&["comparison", "metric", ">ratio", ">95% CI", "reads"]);
    for c in &rounds.comparisons {
        let [lo, hi] = c.ci;
        let reads = if c.thin {
            Cell::level("too few requests beyond it".to_string(), Level::Info)
        } else if lo > 1.0 {
            Cell::level("higher".to_string(), Level::Warn)
        } else if hi < 1.0 {
            Cell::level("lower".to_string(), Level::Pass)
        } else {
            Cell::from("no difference shown".to_string())
        };
        t.row(vec![
            Cell::from(format!("`{}` vs `{}`", c.variant, c.baseline)),
            Cell::from(format!("`{}`", c.metric)),
            Cell::from(format!("{:.3}×", c.ratio)),
            Cell::from(format!("{lo:.3}–{hi:.3}")),
            reads,
        ]);
    }
    Some(t.with_note(format!(
        "Ratio of the medians over rounds of each round's merged percentile. The CI is a two-level bootstrap ({} resamples): rounds are drawn with replacement, then the segments of each drawn round, whose histograms are merged and the percentile computed again, so both the rounds' and the segments' variation is in it.",
        rounds.resamples
    )))
}

/// Where a variant's variance lies and what the next repetition should be, in one sentence
/// (the report's list and the terminal).
pub(crate) fn level_words(v: &VariantRounds) -> Option<String> {
    let l = v.levels.as_ref()?;
    let next = match l.next {
        NextRepetition::MoreRounds => format!(
            "one more round narrows the CI most (×{:.2}, against ×{:.2} for one more segment per round)",
            l.ci_factor_more_rounds, l.ci_factor_more_segments
        ),
        NextRepetition::MoreSegments => format!(
            "one more segment per round narrows the CI most (×{:.2}, against ×{:.2} for one more round)",
            l.ci_factor_more_segments, l.ci_factor_more_rounds
        ),
        NextRepetition::Either => format!(
            "one more round and one more segment per round narrow the CI alike (×{:.2})",
            l.ci_factor_more_rounds
        ),
    };
    let stat = l.metric.to_string();
    let stat = stat.rsplit('.').next().unwrap_or("p99");
    Some(format!(
        "`{}`: of the variance of a segment's {stat}, {:.0}% lies between rounds ({:.3} ms²) and {:.0}% between the segments of a round ({:.3} ms²), over {} rounds of {} segments (Kalibera & Jones's estimate per level); {next}.",
        v.name,
        l.rounds_share * 100.0,
        l.between_rounds,
        (1.0 - l.rounds_share) * 100.0,
        l.within_rounds,
        l.rounds,
        l.segments_per_round,
    ))
}
