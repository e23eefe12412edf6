//! Artillery requests sent only sometimes: `probability: P` (sent P% of the time) and
//! `ifTrue: EXPR` (sent when a JavaScript expression or processor function says so). loadlab
//! has no conditional step, and sending such a request every time multiplies its load
//! (`probability: 10` in a loop of 100 is 10 requests, not 100), so the request is left out
//! with a `decide:` comment instead.

use serde_yaml_ng::Value;

/// Why a request's spec makes it conditional, or `None` when it is always sent as written.
pub fn condition(spec: &Value) -> Option<String> {
    if let Some(p) = spec.get("probability") {
        // As Artillery reads it: `Number(p) || 0`, capped at 100; 100 or more is always.
        let percent = match p {
            Value::Number(n) => n.as_f64().unwrap_or(0.0),
            Value::String(s) => s.trim().parse().unwrap_or(0.0),
            _ => 0.0,
        };
        if percent < 100.0 {
            let shown = crate::scaffold::fmt_num(percent.max(0.0));
            return Some(format!(
                "sent with probability {shown}% in Artillery; loadlab has no conditional step"
            ));
        }
    }
    let expr = spec.get("ifTrue")?;
    let shown = expr.as_str().map(str::to_string).unwrap_or_else(|| {
        serde_yaml_ng::to_string(expr)
            .unwrap_or_default()
            .trim()
            .to_string()
    });
    Some(format!(
        "sent only if `{shown}` in Artillery (ifTrue); loadlab has no conditional step"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_requests() {
        let cases = [
            ("{url: /, probability: 10}", Some("probability 10%")),
            ("{url: /, probability: '25'}", Some("probability 25%")),
            ("{url: /, probability: 0}", Some("probability 0%")),
            ("{url: /, probability: 100}", None),
            ("{url: /, probability: 150}", None),
            (
                "{url: /, ifTrue: \"name === 'x'\"}",
                Some("if `name === 'x'`"),
            ),
            ("{url: /}", None),
        ];
        for (yaml, want) in cases {
            let v: Value = serde_yaml_ng::from_str(yaml).unwrap();
            let got = condition(&v);
            match (want, &got) {
                (None, None) => {}
                (Some(w), Some(g)) if g.contains(w) => {}
                _ => panic!("{yaml}: {got:?}, want {want:?}"),
            }
        }
    }
}
