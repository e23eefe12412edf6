//! A parameter's example as OpenAPI serialises it by `style` and `explode`, in one place for
//! every location. Query and cookie (by default `form`, exploded): an array `ids=1&ids=2`, an
//! object's properties as their own pairs, `deepObject` as `filter[color]=red`; a name given
//! twice cannot be a `query:` map, so such a query is written after the path's `?`, each
//! literal percent-encoded. Path and header (by default `simple`, not exploded): one text,
//! `1,2`, `a,1,b,2` (`a=1,b=2` exploded), a path's `label` `.1,2` or `matrix` `;id=1,2`.

use super::spec::scalar_text;
use crate::template_text::outside_templates;
use serde_json::Value;

/// The `(name, value)` pairs parameter `p` sends with the example `value`.
pub fn pairs(p: &Value, name: &str, value: &Value) -> Vec<(String, String)> {
    let style = p.get("style").and_then(Value::as_str).unwrap_or("form");
    let explode = p
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == "form");
    let one = |text: String| vec![(name.to_string(), text)];
    match value {
        Value::Array(items) if style == "form" && explode => items
            .iter()
            .map(|v| (name.to_string(), scalar_text(v)))
            .collect(),
        Value::Array(items) => {
            let separator = match style {
                "spaceDelimited" => " ",
                "pipeDelimited" => "|",
                _ => ",",
            };
            let texts: Vec<String> = items.iter().map(scalar_text).collect();
            one(texts.join(separator))
        }
        Value::Object(m) if style == "deepObject" => m
            .iter()
            .map(|(k, v)| (format!("{name}[{k}]"), scalar_text(v)))
            .collect(),
        Value::Object(m) if explode => m.iter().map(|(k, v)| (k.clone(), scalar_text(v))).collect(),
        Value::Object(m) => {
            let texts: Vec<String> = m
                .iter()
                .flat_map(|(k, v)| [k.clone(), scalar_text(v)])
                .collect();
            one(texts.join(","))
        }
        other => one(scalar_text(other)),
    }
}

/// The one text a path or header parameter `p` sends for `value`: `simple` (the default)
/// `1,2,3`, an object `k,v` (`k=v` exploded); `label` `.1,2,3` (`.1.2.3` exploded); `matrix`
/// `;id=1,2,3` (`;id=1;id=2` exploded).
pub fn single(p: &Value, value: &Value) -> String {
    let style = p.get("style").and_then(Value::as_str).unwrap_or("simple");
    let explode = p.get("explode") == Some(&Value::Bool(true));
    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
    let parts: Vec<String> = match value {
        Value::Array(a) => a.iter().map(scalar_text).collect(),
        Value::Object(m) if explode => m
            .iter()
            .map(|(k, v)| format!("{k}={}", scalar_text(v)))
            .collect(),
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, v)| [k.clone(), scalar_text(v)])
            .collect(),
        other => vec![scalar_text(other)],
    };
    match style {
        "label" if explode => format!(".{}", parts.join(".")),
        "label" => format!(".{}", parts.join(",")),
        "matrix" if explode && value.is_array() => {
            parts.iter().map(|p| format!(";{name}={p}")).collect()
        }
        "matrix" if explode && value.is_object() => parts.iter().map(|p| format!(";{p}")).collect(),
        "matrix" => format!(";{name}={}", parts.join(",")),
        _ => parts.join(","),
    }
}

/// Whether a name repeats (then the query cannot be a `query:` map).
pub fn repeats(query: &[(String, String)]) -> bool {
    query
        .iter()
        .enumerate()
        .any(|(i, (k, _))| query[..i].iter().any(|(seen, _)| seen == k))
}

/// `a=1&a=2` for the path, literals percent-encoded and `{{ … }}` templates kept (the engine
/// encodes a template's value after a literal `?` as a query value).
pub fn in_path(query: &[(String, String)]) -> String {
    query
        .iter()
        .map(|(k, v)| format!("{}={}", encoded(k), encoded(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn encoded(text: &str) -> String {
    outside_templates(text, |part| {
        url::form_urlencoded::byte_serialize(part.as_bytes()).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_style_writes_its_pairs() {
        let table = [
            (json!({}), json!([1, 2]), vec![("ids", "1"), ("ids", "2")]),
            (
                json!({"explode": false}),
                json!([1, 2]),
                vec![("ids", "1,2")],
            ),
            (
                json!({"style": "pipeDelimited", "explode": false}),
                json!([1, 2]),
                vec![("ids", "1|2")],
            ),
            (
                json!({"style": "spaceDelimited", "explode": false}),
                json!(["a", "b"]),
                vec![("ids", "a b")],
            ),
            (
                json!({"style": "deepObject", "explode": true}),
                json!({"color": "red", "size": 3}),
                vec![("ids[color]", "red"), ("ids[size]", "3")],
            ),
            (json!({}), json!({"color": "red"}), vec![("color", "red")]),
            (
                json!({"explode": false}),
                json!({"color": "red"}),
                vec![("ids", "color,red")],
            ),
            (json!({}), json!("x"), vec![("ids", "x")]),
        ];
        for (p, value, want) in table {
            let got = pairs(&p, "ids", &value);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(got, want, "{p} {value}");
        }
    }

    #[test]
    fn a_repeated_name_goes_into_the_path_encoded_templates_kept() {
        let q = vec![
            ("ids".to_string(), "1".to_string()),
            ("ids".to_string(), "a b&c".to_string()),
            ("key".to_string(), "{{ env.API_KEY }}".to_string()),
        ];
        assert!(repeats(&q));
        assert!(!repeats(&q[1..]));
        assert_eq!(in_path(&q), "ids=1&ids=a+b%26c&key={{ env.API_KEY }}");
    }

    #[test]
    fn path_and_header_parameters_are_written_in_their_style() {
        let arr = json!([3, 4, 5]);
        let obj = json!({"role": "admin", "first": "Alex"});
        let cases = [
            (json!({"name": "id"}), json!("x y"), "x y"),
            (json!({"name": "id"}), json!(5), "5"),
            (json!({"name": "id"}), arr.clone(), "3,4,5"),
            (json!({"name": "id"}), obj.clone(), "role,admin,first,Alex"),
            (json!({"name": "id", "explode": true}), arr.clone(), "3,4,5"),
            (
                json!({"name": "id", "explode": true}),
                obj.clone(),
                "role=admin,first=Alex",
            ),
            (json!({"name": "id", "style": "label"}), json!(5), ".5"),
            (
                json!({"name": "id", "style": "label"}),
                arr.clone(),
                ".3,4,5",
            ),
            (
                json!({"name": "id", "style": "label", "explode": true}),
                arr.clone(),
                ".3.4.5",
            ),
            (json!({"name": "id", "style": "matrix"}), json!(5), ";id=5"),
            (
                json!({"name": "id", "style": "matrix"}),
                arr.clone(),
                ";id=3,4,5",
            ),
            (
                json!({"name": "id", "style": "matrix", "explode": true}),
                arr,
                ";id=3;id=4;id=5",
            ),
            (
                json!({"name": "id", "style": "matrix", "explode": true}),
                obj,
                ";role=admin;first=Alex",
            ),
        ];
        for (p, value, want) in cases {
            assert_eq!(single(&p, &value), want, "{p} {value}");
        }
    }
}
