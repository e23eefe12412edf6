//! Example values for OpenAPI schemas: the spec's own `example`/`examples`/`default` when it
//! gives one, else a value built from the schema (format-aware strings, numbers within their
//! bounds, required fields), following `$ref`s within the document.

use serde_json::{json, Map, Value};

/// Deepest nesting followed (recursive schemas such as a tree of categories stop here).
const MAX_DEPTH: usize = 8;

/// `#/components/schemas/Pet` → the schema it names.
pub fn resolve<'a>(spec: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..MAX_DEPTH {
        match cur.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| spec.pointer(p)) {
                Some(target) => cur = target,
                None => return cur,
            },
            None => return cur,
        }
    }
    cur
}

/// The example a media type or parameter gives (`example`, first of `examples`), if any.
pub fn given_example(spec: &Value, holder: &Value) -> Option<Value> {
    if let Some(e) = holder.get("example") {
        return Some(e.clone());
    }
    let examples = holder.get("examples")?;
    let first = match examples {
        Value::Object(m) => m.values().next()?,
        Value::Array(a) => return a.first().cloned(),
        _ => return None,
    };
    resolve(spec, first).get("value").cloned()
}

/// A value that fits `schema`.
pub fn example(spec: &Value, schema: &Value) -> Value {
    build(spec, schema, 0)
}

fn build(spec: &Value, schema: &Value, depth: usize) -> Value {
    let schema = resolve(spec, schema);
    if let Some(e) = given_example(spec, schema) {
        return e;
    }
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in all {
            if let Value::Object(o) = build(spec, part, depth + 1) {
                merged.extend(o);
            }
        }
        return Value::Object(merged);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return build(spec, first, depth + 1);
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // OpenAPI 3.1: `type: [string, "null"]`.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ if schema.get("items").is_some() => "array",
        _ => "string",
    };
    match ty {
        "object" => object(spec, schema, depth),
        "array" => {
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(vec![build(spec, &item, depth + 1)])
        }
        "integer" => {
            let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(1);
            json!(min.max(
                schema
                    .get("exclusiveMinimum")
                    .and_then(Value::as_i64)
                    .map_or(min, |m| m + 1)
            ))
        }
        "number" => json!(schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.5)),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => string(schema),
    }
}

fn object(spec: &Value, schema: &Value, depth: usize) -> Value {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return json!({});
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out = Map::new();
    for (name, prop) in props {
        let p = resolve(spec, prop);
        if p.get("readOnly") == Some(&Value::Bool(true)) && !required.contains(&name.as_str()) {
            continue;
        }
        // With no `required` list, every property; else the required ones and those the spec
        // gives an example for.
        let wanted =
            required.is_empty() || required.contains(&name.as_str()) || p.get("example").is_some();
        if wanted {
            out.insert(name.clone(), build(spec, prop, depth + 1));
        }
    }
    Value::Object(out)
}

fn string(schema: &Value) -> Value {
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    let text = match format {
        "date-time" => "2026-01-01T00:00:00Z",
        "date" => "2026-01-01",
        "time" => "12:00:00",
        "email" => "user@example.com",
        "uuid" => "3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "uri" | "url" => "https://example.com/",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "byte" => "ZXhhbXBsZQ==",
        "password" => "{{ env.PASSWORD }}",
        _ => "string",
    };
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut s = text.to_string();
    while s.len() < min {
        s.push('x');
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_schemas() {
        let spec = json!({"components": {"schemas": {
            "Tag": {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}, "name": {"type": "string"}}},
            "Pet": {"type": "object", "required": ["name", "photoUrls"], "properties": {
                "id": {"type": "integer", "example": 10},
                "name": {"type": "string", "example": "doggie"},
                "photoUrls": {"type": "array", "items": {"type": "string"}},
                "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                "status": {"type": "string", "enum": ["available", "pending", "sold"]}
            }},
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}
        }}});
        let pet = example(&spec, &json!({"$ref": "#/components/schemas/Pet"}));
        assert_eq!(
            pet,
            json!({"id": 10, "name": "doggie", "photoUrls": ["string"]})
        );
        let tag = example(&spec, &json!({"$ref": "#/components/schemas/Tag"}));
        assert_eq!(tag, json!({"id": 1, "name": "string"}));
        let cases = [
            (
                json!({"type": "string", "format": "date-time"}),
                json!("2026-01-01T00:00:00Z"),
            ),
            (
                json!({"type": "string", "format": "email"}),
                json!("user@example.com"),
            ),
            (json!({"type": "string", "minLength": 8}), json!("stringxx")),
            (json!({"type": "integer", "minimum": 5}), json!(5)),
            (json!({"type": ["integer", "null"]}), json!(1)),
            (json!({"type": "boolean"}), json!(true)),
            (json!({"type": "string", "enum": ["a", "b"]}), json!("a")),
            (json!({"type": "integer", "default": 7}), json!(7)),
            (
                json!({"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "boolean"}}}]}),
                json!({"a": 1, "b": true}),
            ),
            (
                json!({"oneOf": [{"type": "number"}, {"type": "string"}]}),
                json!(1.5),
            ),
        ];
        for (schema, want) in cases {
            assert_eq!(example(&spec, &schema), want, "{schema}");
        }
        // A recursive schema ends.
        let node = example(&spec, &json!({"$ref": "#/components/schemas/Node"}));
        assert!(node.get("child").is_some());
    }
}
