//! Example values for OpenAPI schemas: the spec's own `example`/`examples`/`default` when it
//! gives one, else a value built from the schema (format-aware strings, numbers within their
//! bounds, required fields), following `$ref`s within the document.

use super::bounds;
use serde_json::{json, Map, Value};

/// Deepest nesting followed (recursive schemas such as a tree of categories stop here).
const MAX_DEPTH: usize = 8;

/// `#/components/schemas/Pet` → the schema it names.
pub fn resolve<'a>(spec: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..MAX_DEPTH {
        match cur.get("$ref").and_then(Value::as_str) {
            Some(r) => match ref_target(spec, r) {
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

/// Whether `v` holds `{{` in a string or a key: loadlab reads it as a template and its
/// scenario language has no escape, so a value from the spec holding it is never sent as
/// written (a spec's `{{ env.HOME }}` would send the tester's environment to its server).
pub fn holds_braces(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{{"),
        Value::Array(a) => a.iter().any(holds_braces),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains("{{") || holds_braces(v)),
        _ => false,
    }
}

/// An example value, and whether a value the spec gave was passed over for holding `{{`.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub value: Value,
    pub defused: bool,
}

/// The example of a parameter or media type `holder`: its own, else one built from
/// `schema` (`"string"` without one). A given value holding `{{` is replaced by a generated
/// one ([`holds_braces`]).
pub fn example_for(spec: &Value, holder: &Value, schema: Option<&Value>) -> Example {
    let given = given_example(spec, holder);
    let defused = given.as_ref().is_some_and(holds_braces);
    if let Some(value) = given.filter(|g| !holds_braces(g)) {
        return Example { value, defused };
    }
    let Some(schema) = schema else {
        return Example {
            value: json!("string"),
            defused,
        };
    };
    let mut builder = Builder {
        spec,
        stack: Vec::new(),
        nodes: 0,
        defused,
    };
    let value = builder.build(schema, 0);
    Example {
        value,
        defused: builder.defused,
    }
}

/// Most values one example may hold: a schema of many references to schemas of many
/// references grows exponentially with depth, cut here.
const MAX_NODES: usize = 2_000;

/// A value that fits `schema`. A schema that refers to itself (a tree of categories) is
/// generated until the first repetition: an optional self-reference is left out, a required
/// one is an empty value.
#[cfg(test)]
pub fn example(spec: &Value, schema: &Value) -> Value {
    example_for(spec, &Value::Null, Some(schema)).value
}

struct Builder<'a> {
    spec: &'a Value,
    /// The `$ref`s being expanded, outermost first.
    stack: Vec<&'a str>,
    /// Values built so far.
    nodes: usize,
    /// Whether a value the spec gave was passed over for holding `{{`.
    defused: bool,
}

impl<'a> Builder<'a> {
    /// Whether `schema` is a reference already being expanded (a cycle).
    fn repeats(&self, schema: &Value) -> bool {
        schema
            .get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| self.stack.contains(&r))
    }

    fn build(&mut self, schema: &'a Value, depth: usize) -> Value {
        self.nodes += 1;
        let reference = schema.get("$ref").and_then(Value::as_str);
        if let Some(r) = reference {
            if self.stack.contains(&r) {
                return empty_like(resolve(self.spec, schema));
            }
            self.stack.push(r);
        }
        let value = self.build_resolved(resolve(self.spec, schema), depth);
        if reference.is_some() {
            self.stack.pop();
        }
        value
    }

    fn build_resolved(&mut self, schema: &'a Value, depth: usize) -> Value {
        let spec = self.spec;
        let given = [
            schema.get("const").cloned(),
            given_example(spec, schema),
            schema.get("default").cloned(),
            schema
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|e| e.iter().find(|v| !holds_braces(v)).or(e.first()))
                .cloned(),
        ];
        for value in given.into_iter().flatten() {
            if !holds_braces(&value) {
                return value;
            }
            self.defused = true;
        }
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            return empty_like(schema);
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for part in all {
                if let Value::Object(o) = self.build(part, depth + 1) {
                    merged.extend(o);
                }
            }
            return Value::Object(merged);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                // The first option that does not loop back, else the first.
                let pick = options
                    .iter()
                    .find(|o| !self.repeats(o))
                    .or(options.first());
                if let Some(pick) = pick {
                    return self.build(pick, depth + 1);
                }
            }
        }
        match type_of(schema) {
            "object" => self.object(schema, depth),
            "array" => self.array(schema, depth),
            "integer" => bounds::integer(schema),
            "number" => bounds::number(schema),
            "boolean" => json!(true),
            "null" => Value::Null,
            _ => string(schema),
        }
    }

    /// `minItems` items (one without it); an item schema that loops back is its empty
    /// value, only as many times as `minItems` asks.
    fn array(&mut self, schema: &'a Value, depth: usize) -> Value {
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let mut items: Vec<Value> = match schema.get("items") {
            Some(item) if self.repeats(item) => {
                let empty = empty_like(resolve(self.spec, item));
                vec![empty; bounds::item_count(schema).min(min as usize)]
            }
            Some(item) => (0..bounds::item_count(schema))
                .map(|_| self.build(item, depth + 1))
                .collect(),
            None => vec![json!("string"); bounds::item_count(schema)],
        };
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            bounds::distinct(&mut items);
        }
        Value::Array(items)
    }

    fn object(&mut self, schema: &'a Value, depth: usize) -> Value {
        let spec = self.spec;
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
            let is_required = required.contains(&name.as_str());
            if p.get("readOnly") == Some(&Value::Bool(true)) && !is_required {
                continue;
            }
            // An optional property that loops back to a schema being built is left out.
            if !is_required && self.repeats(prop) {
                continue;
            }
            // With no `required` list, every property; else the required ones and those the
            // spec gives an example for.
            let wanted = required.is_empty() || is_required || p.get("example").is_some();
            if wanted {
                out.insert(name.clone(), self.build(prop, depth + 1));
            }
        }
        Value::Object(out)
    }
}

fn type_of(schema: &Value) -> &str {
    match schema.get("type") {
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
    }
}

/// The smallest value of a schema's type: where a cycle or the size limit stops generation.
fn empty_like(schema: &Value) -> Value {
    match type_of(schema) {
        "object" => json!({}),
        "array" => json!([]),
        "integer" => json!(1),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => json!("string"),
    }
}

/// Every local `$ref` of the spec that names nothing, or any reference to another file:
/// `(where, reference)`, the place as a JSON pointer. Examples are data, not looked into.
pub fn unresolved_refs(spec: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk_refs(spec, spec, &mut String::new(), &mut out);
    out
}

fn walk_refs(spec: &Value, v: &Value, at: &mut String, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                if ref_target(spec, r).is_none() {
                    out.push((at.clone(), r.to_string()));
                }
            }
            for (k, inner) in m {
                if k == "example" || k == "value" || k.starts_with("x-") {
                    continue;
                }
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                walk_refs(spec, inner, at, out);
                at.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, inner) in a.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                walk_refs(spec, inner, at, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// What a local reference names (`#/components/schemas/Pet`, percent-encoded or not).
fn ref_target<'a>(spec: &'a Value, r: &str) -> Option<&'a Value> {
    let pointer = r.strip_prefix('#')?;
    spec.pointer(pointer).or_else(|| {
        let decoded =
            url::form_urlencoded::parse(format!("p={}", pointer.replace('+', "%2B")).as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())?;
        spec.pointer(&decoded)
    })
}

/// The schemas under `components.schemas` that refer back to themselves.
pub fn recursive_schemas(spec: &Value) -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let Some(schemas) = spec
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    // The references each reference's target holds, read once.
    let mut memo: HashMap<String, Vec<String>> = HashMap::new();
    let mut out = Vec::new();
    for name in schemas.keys().take(5_000) {
        let own = format!("#/components/schemas/{name}");
        let mut seen: HashSet<String> = HashSet::new();
        let mut queue = Vec::new();
        collect_refs(&schemas[name], &mut queue, 0);
        while let Some(r) = queue.pop() {
            if r == own {
                out.push(name.clone());
                break;
            }
            if seen.len() > 2_000 || !seen.insert(r.clone()) {
                continue;
            }
            let next = memo.entry(r.clone()).or_insert_with(|| {
                let mut found = Vec::new();
                if let Some(target) = ref_target(spec, &r) {
                    collect_refs(target, &mut found, 0);
                }
                found
            });
            queue.extend(next.iter().cloned());
        }
    }
    out
}

fn collect_refs(v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                out.push(r.to_string());
            }
            for (k, inner) in m {
                if k != "example" && k != "examples" {
                    collect_refs(inner, out, depth + 1);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out, depth + 1)),
        _ => {}
    }
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
    Value::String(bounds::sized_text(schema, text))
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
            (
                json!({"type": "integer", "minimum": 100, "exclusiveMinimum": true}),
                json!(101),
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
                json!(0.5),
            ),
            (json!({"const": "gadget"}), json!("gadget")),
            (
                json!({"type": "string", "const": "a", "example": "b"}),
                json!("a"),
            ),
            (
                json!({"type": "array", "minItems": 2, "items": {"type": "integer"}}),
                json!([1, 1]),
            ),
            (
                json!({"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "integer"}}),
                json!([1, 2]),
            ),
            (json!({"type": "string", "maxLength": 3}), json!("str")),
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
        // A recursive schema ends: its optional self-reference is left out.
        let node = example(&spec, &json!({"$ref": "#/components/schemas/Node"}));
        assert_eq!(node, json!({}));
    }
}
