//! `options.thresholds` as loadlab thresholds: `http_req_duration: ['p(95)<500']` →
//! `latency.p95 < 500ms`, `'http_req_duration{group:::auth}'` → `group.auth.latency…`,
//! `{name:X}` → `step.X.…`, `http_req_failed: ['rate<0.01']` → `http.errors < 1%`,
//! `http_reqs` → `requests.rate` / `requests`. What has no equivalent is reported.

use super::js::Expr;
use crate::report::Report;
use crate::scaffold::fmt_num;

/// The thresholds, and comments for the file where some were left out.
pub fn convert(e: &Expr, line: usize, report: &mut Report) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut comments = Vec::new();
    let Expr::Object(props) = e else {
        report.unsupported(Some(line), "options.thresholds: not an object literal (a value computed or imported): write the thresholds by hand");
        return (out, comments);
    };
    for p in props {
        let items: Vec<&Expr> = match &p.value {
            Expr::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        for item in items {
            let (text, extra) = match item {
                Expr::Object(_) => (
                    item.prop("threshold").and_then(Expr::as_str),
                    item.prop("abortOnFail").is_some(),
                ),
                other => (other.as_str(), false),
            };
            let result = match text {
                Some(t) => one(&p.key, t),
                None => Err(format!("`{}` is not a threshold text", item.sketch())),
            };
            match result {
                Ok(t) => {
                    if extra {
                        let what = format!("threshold `{t}`: abortOnFail (loadlab judges thresholds after the run)");
                        report.unsupported(Some(p.line), what.clone());
                        comments.push(format!("not converted (line {}): {what}", p.line));
                    }
                    out.push(t)
                }
                Err(why) => {
                    let what = format!("threshold {}: {why}", p.key);
                    // Two texts of one metric that has no loadlab metric: one note says it.
                    let note = format!("not converted (line {}): {what}", p.line);
                    if !comments.contains(&note) {
                        comments.push(note);
                    }
                    report.unsupported(Some(p.line), what);
                }
            }
        }
    }
    (out, comments)
}

/// One k6 threshold (`metric{tag:value}` and `p(95)<500`) in loadlab's words.
pub fn one(key: &str, expr: &str) -> Result<String, String> {
    let (metric, tag) = match key.split_once('{') {
        Some((m, rest)) => {
            let tag = rest.strip_suffix('}').ok_or("an unclosed `{`")?;
            let (k, v) = tag.split_once(':').ok_or("a tag without `:`")?;
            (m.trim(), Some((k.trim(), v.trim())))
        }
        None => (key.trim(), None),
    };
    let scope = match tag {
        None => String::new(),
        Some(("group", g)) => {
            let g = g.trim_start_matches("::");
            if g.is_empty() {
                return Err("the root group".into());
            }
            format!("group.{g}.")
        }
        Some(("name", n)) => format!("step.{n}."),
        Some((k, v)) => return Err(format!("the tag {k}:{v} (loadlab has steps and groups)")),
    };
    let (agg, op, value) =
        split(expr).ok_or_else(|| format!("`{expr}` is not `aggregate op value`"))?;
    if !["<", "<=", ">", ">="].contains(&op) {
        return Err(format!("`{op}` (loadlab compares with <, <=, > and >=)"));
    }
    let value: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a number"))?;
    let phase = match metric {
        "http_req_duration" => Some("latency"),
        "http_req_waiting" => Some("waiting"),
        "http_req_receiving" => Some("receiving"),
        "http_req_connecting" => Some("connect"),
        "http_req_tls_handshaking" => Some("tls_handshake"),
        _ => None,
    };
    if let Some(phase) = phase {
        if phase != "latency" && scope.starts_with("group.") {
            return Err(format!("`{phase}` is kept per step, not per group"));
        }
        let stat = stat(agg).ok_or_else(|| format!("`{agg}` on {metric}"))?;
        return Ok(format!("{scope}{phase}.{stat} {op} {}", duration(value)));
    }
    match (metric, agg) {
        ("http_req_failed", "rate") => Ok(format!(
            "{scope}http.errors {op} {}%",
            fmt_num(value * 100.0)
        )),
        ("http_reqs", "rate") if scope.is_empty() => {
            Ok(format!("requests.rate {op} {}", fmt_num(value)))
        }
        ("http_reqs", "count") if scope.is_empty() => {
            Ok(format!("requests {op} {}", fmt_num(value)))
        }
        ("checks", _) => {
            Err("a failed check fails its request in loadlab, so `http.errors` counts it".into())
        }
        _ => Err(format!("no loadlab metric for `{metric}` `{agg}`")),
    }
}

/// `p(95)<500` → (`p(95)`, `<`, `500`).
fn split(expr: &str) -> Option<(&str, &str, &str)> {
    let expr = expr.trim();
    let i = expr.find(['<', '>', '=', '!'])?;
    let rest = &expr[i..];
    let len = rest
        .find(|c: char| !matches!(c, '<' | '>' | '=' | '!'))
        .unwrap_or(rest.len());
    Some((expr[..i].trim(), &rest[..len], rest[len..].trim()))
}

/// `p(95)` → `p95`, `p(99.9)` → `p999`, `avg` → `mean`, `med` → `p50`.
fn stat(agg: &str) -> Option<String> {
    let agg = agg.replace(' ', "");
    if let Some(p) = agg.strip_prefix("p(").and_then(|r| r.strip_suffix(')')) {
        let n: f64 = p.parse().ok()?;
        if !(0.0..100.0).contains(&n) {
            return None;
        }
        return Some(format!("p{}", p.replace('.', "")));
    }
    Some(
        match agg.as_str() {
            "avg" => "mean",
            "med" => "p50",
            "min" => "min",
            "max" => "max",
            _ => return None,
        }
        .to_string(),
    )
}

/// Milliseconds as loadlab writes a duration: `500ms`, `2.8s`.
fn duration(ms: f64) -> String {
    let s = ms / 1000.0;
    if ms >= 1000.0 && (s * 1000.0).fract() == 0.0 && fmt_num(s).len() <= 5 {
        format!("{}s", fmt_num(s))
    } else {
        format!("{}ms", fmt_num(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::one;

    #[test]
    fn k6_thresholds_in_loadlab_words() {
        let cases = [
            ("http_req_duration", "p(95)<500", Ok("latency.p95 < 500ms")),
            (
                "http_req_duration",
                "p(95) < 2800",
                Ok("latency.p95 < 2.8s"),
            ),
            (
                "http_req_duration",
                "p(99.9)<=2000",
                Ok("latency.p999 <= 2s"),
            ),
            ("http_req_duration", "avg<200", Ok("latency.mean < 200ms")),
            ("http_req_duration", "med<150", Ok("latency.p50 < 150ms")),
            (
                "http_req_duration{group:::auth}",
                "p(95)<1200",
                Ok("group.auth.latency.p95 < 1.2s"),
            ),
            (
                "http_req_duration{name:signin}",
                "max<3000",
                Ok("step.signin.latency.max < 3s"),
            ),
            ("http_req_waiting", "p(90)<100", Ok("waiting.p90 < 100ms")),
            ("http_req_failed", "rate<0.01", Ok("http.errors < 1%")),
            ("http_req_failed", "rate<=0.05", Ok("http.errors <= 5%")),
            ("http_reqs", "rate>100", Ok("requests.rate > 100")),
            ("http_reqs", "count>=1000", Ok("requests >= 1000")),
        ];
        for (key, expr, want) in cases {
            assert_eq!(
                one(key, expr).as_deref(),
                want.map(|w: &str| w),
                "{key} {expr}"
            );
        }
        for (key, expr) in [
            ("checks", "rate>0.99"),
            ("iteration_duration", "p(95)<1000"),
            ("http_req_duration{scenario:browse}", "p(95)<500"),
            ("http_req_duration", "p(95)==500"),
            ("http_req_duration", "count<5"),
            ("http_req_waiting{group:::auth}", "p(95)<5"),
            ("my_trend", "p(95)<5"),
        ] {
            assert!(one(key, expr).is_err(), "{key} {expr}");
        }
    }
}
