//! Generated scalars and array sizes that keep a schema's constraints (`minimum`/`maximum`,
//! `exclusiveMinimum`/`exclusiveMaximum` in their 3.0 boolean and 3.1 number forms,
//! `multipleOf`, `minLength`/`maxLength`, `minItems`/`maxItems`): an API that validates its
//! input answers 400 to `count: 100` under `minimum: 100, exclusiveMinimum: true`, and such a
//! load test measures only the rejection.

use serde_json::{json, Value};

/// Most items generated for an array's `minItems` (a schema may ask for thousands).
const MAX_ITEMS: u64 = 32;

/// One side of a numeric range: the bound and whether it is exclusive.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    at: f64,
    exclusive: bool,
}

/// The bound `inclusive` (`minimum`) or `exclusive` (`exclusiveMinimum`) gives: in 3.1 the
/// exclusive one is a number of its own; in 3.0 it is `true` beside the inclusive one. The
/// tighter wins when both are numbers.
fn bound(schema: &Value, inclusive: &str, exclusive: &str, lower: bool) -> Option<Bound> {
    let inc = schema.get(inclusive).and_then(Value::as_f64);
    match (inc, schema.get(exclusive)) {
        (Some(at), Some(Value::Bool(true))) => Some(Bound {
            at,
            exclusive: true,
        }),
        (inc, Some(Value::Number(n))) => {
            let ex = n.as_f64().map(|at| Bound {
                at,
                exclusive: true,
            });
            let inc = inc.map(|at| Bound {
                at,
                exclusive: false,
            });
            match (inc, ex) {
                (Some(i), Some(e)) if (lower && i.at > e.at) || (!lower && i.at < e.at) => Some(i),
                (i, e) => e.or(i),
            }
        }
        (Some(at), _) => Some(Bound {
            at,
            exclusive: false,
        }),
        (None, _) => None,
    }
}

fn fits(v: f64, lo: Option<Bound>, hi: Option<Bound>) -> bool {
    let above = lo.is_none_or(|b| if b.exclusive { v > b.at } else { v >= b.at });
    let below = hi.is_none_or(|b| if b.exclusive { v < b.at } else { v <= b.at });
    above && below
}

/// An integer within the schema's range and a multiple of its `multipleOf`: the smallest one
/// from its lower bound, else 1 (or below the upper bound when 1 is above it).
pub fn integer(schema: &Value) -> Value {
    let lo = bound(schema, "minimum", "exclusiveMinimum", true);
    let hi = bound(schema, "maximum", "exclusiveMaximum", false);
    let first = lo.map_or(1, |b| {
        let up = b.at.ceil() as i64;
        if b.exclusive && up as f64 == b.at {
            up.saturating_add(1)
        } else {
            up
        }
    });
    // A negative lower bound is the type's range (`minimum: -9223372036854775808`), no value
    // to send: 1 or 0 when they fit.
    let first = match lo {
        Some(l) if l.at < 0.0 => [1, 0]
            .into_iter()
            .find(|v| fits(*v as f64, lo, hi))
            .unwrap_or(first),
        _ => first,
    };
    let mut v = match hi {
        Some(h) if !fits(first as f64, lo, hi) && lo.is_none_or(|l| l.at < 0.0) => {
            let down = h.at.floor() as i64;
            if h.exclusive && down as f64 == h.at {
                down.saturating_sub(1)
            } else {
                down
            }
        }
        _ => first,
    };
    let step = schema
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m >= 1.0 && m.fract() == 0.0)
        .map(|m| m as i64);
    if let Some(m) = step {
        let up = v.div_euclid(m) * m + if v.rem_euclid(m) == 0 { 0 } else { m };
        v = if fits(up as f64, lo, hi) {
            up
        } else {
            v.div_euclid(m) * m
        };
    }
    json!(v)
}

/// A number within the schema's range: its inclusive lower bound, else 1.5 when that fits,
/// else between the bounds; then the nearest multiple of `multipleOf` inside the range.
pub fn number(schema: &Value) -> Value {
    let lo = bound(schema, "minimum", "exclusiveMinimum", true);
    let hi = bound(schema, "maximum", "exclusiveMaximum", false);
    let mut v = match (lo, hi) {
        (Some(l), _) if !l.exclusive && l.at >= 0.0 => l.at,
        _ if fits(1.5, lo, hi) => 1.5,
        (Some(l), _) if l.at < 0.0 && fits(0.0, lo, hi) => 0.0,
        (Some(l), _) if !l.exclusive => l.at,
        (Some(l), Some(h)) => (l.at + h.at) / 2.0,
        (Some(l), None) => l.at + 1.0,
        (None, Some(h)) if h.at > 0.0 => h.at / 2.0,
        (None, Some(h)) => h.at - 1.0,
        (None, None) => 1.5,
    };
    if let Some(m) = schema
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0)
    {
        let q = v / m;
        // `1.5 / 0.01` is `150.00000000000003`: a quotient that close is a whole multiple.
        let k = if (q - q.round()).abs() < 1e-9 {
            q.round()
        } else {
            q.ceil()
        };
        let candidates = [k, k + 1.0, q.floor()];
        if let Some(c) = candidates
            .iter()
            .map(|k| tidy(k * m))
            .find(|c| fits(*c, lo, hi))
        {
            v = c;
        }
    }
    json!(v)
}

/// `0.30000000000000004` → `0.3`: a multiple written as a person would.
fn tidy(v: f64) -> f64 {
    (v * 1e9).round() / 1e9
}

/// `text` padded with `x` to `minLength`, cut to `maxLength` (in characters).
pub fn sized_text(schema: &Value, text: &str) -> String {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut s: String = text.chars().take(max.unwrap_or(usize::MAX)).collect();
    let len = s.chars().count();
    s.extend(std::iter::repeat_n('x', min.saturating_sub(len)));
    s
}

/// How many items an array example holds: one, or `minItems` (at most [`MAX_ITEMS`]), none
/// when `maxItems` is 0.
pub fn item_count(schema: &Value) -> usize {
    let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1);
    let max = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX);
    min.max(1).min(max).min(MAX_ITEMS) as usize
}

/// Items made distinct for `uniqueItems`: a repeated number counts up, a repeated text's last
/// character is replaced (its length, and so `minLength`/`maxLength`, kept); other repeats
/// stay (an object's properties are the spec's to vary).
pub fn distinct(items: &mut [Value]) {
    for i in 1..items.len() {
        let mut n = 1;
        while items[..i].contains(&items[i]) && n < 1000 {
            items[i] = match &items[i] {
                Value::Number(x) if x.is_i64() => json!(x.as_i64().unwrap_or(0).saturating_add(1)),
                Value::Number(x) => json!(x.as_f64().unwrap_or(0.0) + 1.0),
                Value::String(s) => {
                    let digits = "123456789abcdefghijklmnopqrstuvwxyz";
                    let c = digits.chars().nth(n % digits.len()).unwrap_or('x');
                    let mut t: String = s
                        .chars()
                        .take(s.chars().count().saturating_sub(1))
                        .collect();
                    t.push(c);
                    json!(t)
                }
                _ => break,
            };
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_keep_their_range() {
        let cases = [
            (json!({}), json!(1)),
            (json!({"minimum": 5}), json!(5)),
            (
                json!({"minimum": 100, "exclusiveMinimum": true}),
                json!(101),
            ),
            (json!({"exclusiveMinimum": 100}), json!(101)),
            (
                json!({"minimum": 100, "exclusiveMinimum": false}),
                json!(100),
            ),
            (json!({"minimum": 2.5}), json!(3)),
            (json!({"maximum": 0}), json!(0)),
            (json!({"maximum": 0, "exclusiveMaximum": true}), json!(-1)),
            (json!({"exclusiveMaximum": 1}), json!(0)),
            (json!({"maximum": 10}), json!(1)),
            (json!({"multipleOf": 5}), json!(5)),
            (json!({"minimum": 12, "multipleOf": 5}), json!(15)),
            (
                json!({"minimum": 10, "maximum": 20, "multipleOf": 10}),
                json!(10),
            ),
            (
                json!({"minimum": 11, "maximum": 12, "multipleOf": 10}),
                json!(10),
            ),
            (
                json!({"minimum": -9.223372036854776e18, "maximum": 9.223372036854776e18}),
                json!(1),
            ),
            (json!({"minimum": -5, "maximum": 0}), json!(0)),
            (json!({"minimum": -5, "maximum": -3}), json!(-5)),
            (json!({"minimum": -5, "exclusiveMaximum": -3}), json!(-5)),
            (json!({"minimum": 0}), json!(0)),
        ];
        for (schema, want) in cases {
            assert_eq!(integer(&schema), want, "{schema}");
        }
    }

    #[test]
    fn numbers_keep_their_range() {
        let cases = [
            (json!({}), json!(1.5)),
            (json!({"minimum": 3.0}), json!(3.0)),
            (
                json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}),
                json!(0.5),
            ),
            (json!({"exclusiveMaximum": 1}), json!(0.5)),
            (json!({"maximum": -2}), json!(-3.0)),
            (json!({"minimum": 0, "exclusiveMinimum": true}), json!(1.5)),
            (
                json!({"minimum": 2, "exclusiveMinimum": true, "maximum": 2.2}),
                json!(2.1),
            ),
            (json!({"minimum": -90, "maximum": 90}), json!(1.5)),
            (json!({"minimum": -90, "maximum": 1}), json!(0.0)),
            (json!({"minimum": -90, "maximum": -10}), json!(-90.0)),
            (json!({"multipleOf": 0.01}), json!(1.5)),
            (json!({"multipleOf": 0.4}), json!(1.6)),
            (json!({"multipleOf": 0.1, "minimum": 0.25}), json!(0.3)),
        ];
        for (schema, want) in cases {
            assert_eq!(number(&schema), want, "{schema}");
        }
    }

    #[test]
    fn texts_and_arrays_keep_their_size() {
        assert_eq!(sized_text(&json!({"minLength": 8}), "string"), "stringxx");
        assert_eq!(sized_text(&json!({"maxLength": 3}), "string"), "str");
        assert_eq!(sized_text(&json!({"maxLength": 2}), "ÄÖÜ"), "ÄÖ");
        assert_eq!(sized_text(&json!({}), "string"), "string");
        let counts = [
            (json!({}), 1),
            (json!({"minItems": 2}), 2),
            (json!({"minItems": 0}), 1),
            (json!({"maxItems": 0}), 0),
            (json!({"minItems": 5000}), 32),
        ];
        for (schema, want) in counts {
            assert_eq!(item_count(&schema), want, "{schema}");
        }
        let mut items = vec![json!(1), json!(1), json!("a"), json!("a"), json!({})];
        distinct(&mut items);
        assert_eq!(
            items,
            [json!(1), json!(2), json!("a"), json!("2"), json!({})]
        );
    }
}
