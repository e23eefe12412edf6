//! JUnit XML, the test-report format every CI system reads (Jenkins, GitLab, GitHub
//! reporters): one `<testcase>` per threshold (a run) or per gated metric (a comparison or
//! gate), a `<failure>` carrying the actual value when it failed, `<skipped>` when no verdict
//! could be drawn. Rendered from the result records alone; text is XML-escaped, so scenario
//! and metric names cannot break the document.

use crate::verdict_words::{change_words, format_value, regression_sentence};
use loadlab_analysis::compare::CompareResult;
use loadlab_metrics::{RunResult, Verdict};
use std::fmt::Write;

/// One test case.
#[derive(Debug, Clone, PartialEq)]
pub struct JunitCase {
    pub name: String,
    pub outcome: CaseOutcome,
    /// Shown as the case's standard output (the measured value, the change with its CI).
    pub detail: String,
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseOutcome {
    Passed,
    /// Failed, with a one-line message (the actual value or the regression).
    Failed(String),
    /// No verdict (too few runs): neither passed nor failed.
    Skipped(String),
}

/// One case per threshold of a run: `latency.p95 < 2.8s`, failed with the value measured.
pub fn threshold_cases(result: &RunResult) -> Vec<JunitCase> {
    result
        .thresholds
        .iter()
        .map(|t| {
            let actual = t.actual.map_or("no data".to_string(), |v| format!("{v}"));
            JunitCase {
                name: t.expr.clone(),
                outcome: if t.ok {
                    CaseOutcome::Passed
                } else {
                    CaseOutcome::Failed(format!("{} failed: actual {actual}", t.expr))
                },
                detail: format!("actual: {actual}"),
            }
        })
        .collect()
}

/// One case per threshold and variant of a study, over its runs: failed when any run failed
/// it, the message carrying each failing run's actual value.
pub fn study_threshold_cases(variants: &[(String, Vec<RunResult>)]) -> Vec<JunitCase> {
    let mut cases = Vec::new();
    for (variant, runs) in variants {
        let mut exprs: Vec<&str> = Vec::new();
        for t in runs.iter().flat_map(|r| &r.thresholds) {
            if !exprs.contains(&t.expr.as_str()) {
                exprs.push(&t.expr);
            }
        }
        for expr in exprs {
            let values: Vec<(bool, String)> = runs
                .iter()
                .flat_map(|r| r.thresholds.iter().filter(|t| t.expr == expr))
                .map(|t| (t.ok, t.actual.map_or("no data".into(), |v| format!("{v}"))))
                .collect();
            let failed: Vec<&str> = values
                .iter()
                .filter(|(ok, _)| !ok)
                .map(|(_, v)| v.as_str())
                .collect();
            let all: Vec<&str> = values.iter().map(|(_, v)| v.as_str()).collect();
            cases.push(JunitCase {
                name: format!("{variant}: {expr}"),
                outcome: if failed.is_empty() {
                    CaseOutcome::Passed
                } else {
                    CaseOutcome::Failed(format!(
                        "{expr} failed in {} of {} runs: actual {}",
                        failed.len(),
                        values.len(),
                        failed.join(", ")
                    ))
                },
                detail: format!("actual per run: {}", all.join(", ")),
            });
        }
    }
    cases
}

/// One case per compared metric: failed when it is a regression beyond the gate's bound,
/// skipped when `insufficient`, passed otherwise.
pub fn comparison_cases(result: &CompareResult) -> Vec<JunitCase> {
    result
        .comparisons
        .iter()
        .map(|c| {
            let unit = c.metric.unit();
            let change = change_words(c);
            let verdict = c.verdict.as_str();
            let detail = format!(
                "baseline median {}, actual median {}, change {change}, verdict {verdict}",
                format_value(unit, c.baseline_median),
                format_value(unit, c.variant_median)
            );
            let regression = result
                .regressions
                .iter()
                .find(|r| r.metric == c.metric && r.variant == c.variant);
            let outcome = match regression {
                Some(r) => CaseOutcome::Failed(format!(
                    "{} (actual {})",
                    regression_sentence(r).replace('`', ""),
                    format_value(unit, c.variant_median)
                )),
                None if c.verdict == Verdict::Insufficient => {
                    CaseOutcome::Skipped(format!("insufficient: {detail}"))
                }
                None => CaseOutcome::Passed,
            };
            JunitCase {
                name: c.metric.label(),
                outcome,
                detail,
            }
        })
        .collect()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The document: one `<testsuite>` named `suite` (classname `classname`) in `<testsuites>`.
pub fn junit_xml(suite: &str, classname: &str, cases: &[JunitCase]) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Failed(_)))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Skipped(_)))
        .count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"loadlab\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
        escape(suite),
        cases.len()
    );
    for case in cases {
        let _ = writeln!(
            xml,
            "    <testcase classname=\"{}\" name=\"{}\">",
            escape(classname),
            escape(&case.name)
        );
        match &case.outcome {
            CaseOutcome::Passed => {}
            CaseOutcome::Failed(message) => {
                let _ = writeln!(
                    xml,
                    "      <failure message=\"{}\" type=\"loadlab\">{}</failure>",
                    escape(message),
                    escape(&case.detail)
                );
            }
            CaseOutcome::Skipped(message) => {
                let _ = writeln!(xml, "      <skipped message=\"{}\"/>", escape(message));
            }
        }
        let _ = writeln!(
            xml,
            "      <system-out>{}</system-out>",
            escape(&case.detail)
        );
        let _ = writeln!(xml, "    </testcase>");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_skips_are_counted_and_text_is_escaped() {
        let cases = vec![
            JunitCase {
                name: "latency.p95 < 2.8s".into(),
                outcome: CaseOutcome::Failed("actual 3.1 & more".into()),
                detail: "actual: 3100".into(),
            },
            JunitCase {
                name: "ok".into(),
                outcome: CaseOutcome::Passed,
                detail: String::new(),
            },
            JunitCase {
                name: "few".into(),
                outcome: CaseOutcome::Skipped("insufficient".into()),
                detail: String::new(),
            },
        ];
        let xml = junit_xml("shop \"A\"", "loadlab.run", &cases);
        assert!(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        assert!(xml.contains("name=\"latency.p95 &lt; 2.8s\""));
        assert!(xml.contains("message=\"actual 3.1 &amp; more\""));
        assert!(xml.contains("name=\"shop &quot;A&quot;\""));
    }
}
