//! A `grpc:` step's `message:` checked against its method's input type at load time, by the
//! canonical protobuf JSON mapping (`prost_reflect::DynamicMessage::deserialize`): every field
//! name at every level must exist (with "did you mean"), and every value must convert. A
//! string holding a template stands for a value known only when the call is made: it is
//! checked as a placeholder of its field's kind (the JSON mapping accepts `"42"` for integer
//! fields and an enum's value by name, which is what a rendered template gives).

use super::Ctx;
use crate::error::ScenarioError;
use crate::suggest::closest;
use crate::template::has_template;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

/// Checks `message` (the step's `grpc.message`, at `field`) against `desc`.
pub(super) fn check(
    message: &Value,
    desc: &MessageDescriptor,
    field: &str,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    names(message, desc, field, ctx)?;
    // Whatever the field-by-field pass cannot see (two fields of one `oneof`, say).
    DynamicMessage::deserialize(
        desc.clone(),
        placeholders(message, &Kind::Message(desc.clone())),
    )
    .map(drop)
    .map_err(|e| {
        ctx.err(field, format!("not a `{}` message: {e}", desc.full_name()))
            .with_hint(fields_of(desc))
    })
}

/// Walks the message's keys; each scalar (or list or map of scalars) is tried on its own.
fn names(
    value: &Value,
    desc: &MessageDescriptor,
    field: &str,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    let Value::Object(map) = value else {
        return Err(ctx
            .err(
                field,
                format!(
                    "a `{}` message is written as a mapping of its fields",
                    desc.full_name()
                ),
            )
            .with_hint(fields_of(desc)));
    };
    for (key, item) in map {
        let kfield = format!("{field}.{key}");
        let f = desc
            .get_field_by_name(key)
            .or_else(|| desc.get_field_by_json_name(key))
            .ok_or_else(|| unknown(key, desc, &kfield, ctx))?;
        if item.is_null() {
            continue;
        }
        match nested(&f) {
            Some(m) if f.is_list() => match item {
                Value::Array(list) => {
                    for (i, v) in list.iter().enumerate() {
                        names(v, &m, &format!("{kfield}[{i}]"), ctx)?;
                    }
                }
                _ => return Err(value_error(key, &f, desc, "expected a list", &kfield, ctx)),
            },
            Some(m) if f.is_map() => match item {
                Value::Object(entries) => {
                    for (k, v) in entries {
                        names(v, &m, &format!("{kfield}.{k}"), ctx)?;
                    }
                }
                _ => {
                    return Err(value_error(
                        key,
                        &f,
                        desc,
                        "expected a mapping",
                        &kfield,
                        ctx,
                    ))
                }
            },
            Some(m) => names(item, &m, &kfield, ctx)?,
            None => scalar(key, item, &f, desc, &kfield, ctx)?,
        }
    }
    Ok(())
}

/// The message type a field holds (its elements', its map values'), unless it is one of
/// the well-known types with a JSON form of their own (`Timestamp` as text...).
fn nested(f: &FieldDescriptor) -> Option<MessageDescriptor> {
    let kind = if f.is_map() {
        f.kind().as_message()?.map_entry_value_field().kind()
    } else {
        f.kind()
    };
    kind.as_message().filter(|m| !well_known(m)).cloned()
}

/// One of the `google.protobuf.*` types whose JSON form is not a mapping of its fields.
fn well_known(m: &MessageDescriptor) -> bool {
    m.full_name().starts_with("google.protobuf.")
}

/// A field that holds no message of ours: `{key: value}` read as the containing type.
fn scalar(
    key: &str,
    item: &Value,
    f: &FieldDescriptor,
    desc: &MessageDescriptor,
    kfield: &str,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    if matches!(f.kind(), Kind::Bool) && holds_template(item) {
        return Err(ctx
            .err(
                kfield,
                format!("`{key}` is a bool: a template gives text, and the protobuf JSON mapping takes only true or false for a bool"),
            )
            .with_hint("write true or false"));
    }
    let mut one = Map::new();
    one.insert(key.to_string(), item.clone());
    let probe = placeholders(&Value::Object(one), &Kind::Message(desc.clone()));
    DynamicMessage::deserialize(desc.clone(), probe)
        .map(drop)
        .map_err(|e| value_error(key, f, desc, &e.to_string(), kfield, ctx))
}

fn holds_template(v: &Value) -> bool {
    match v {
        Value::String(s) => has_template(s),
        Value::Array(a) => a.iter().any(holds_template),
        Value::Object(m) => m.values().any(holds_template),
        _ => false,
    }
}

/// `value` with every string that holds a template replaced by a value of its field's kind;
/// a template standing for a well-known type (a `Timestamp`'s text...) is left out.
fn placeholders(value: &Value, kind: &Kind) -> Value {
    match (value, kind) {
        (Value::String(s), _) if has_template(s) => placeholder(kind),
        (Value::Array(list), _) => {
            Value::Array(list.iter().map(|v| placeholders(v, kind)).collect())
        }
        (Value::Object(map), Kind::Message(m)) if !well_known(m) => Value::Object(
            map.iter()
                .filter_map(|(k, v)| {
                    let f = m
                        .get_field_by_name(k)
                        .or_else(|| m.get_field_by_json_name(k));
                    match f {
                        Some(f) => entry(v, &f).map(|v| (k.clone(), v)),
                        None => Some((k.clone(), v.clone())),
                    }
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// One field's value with placeholders; `None` to leave the field out.
fn entry(v: &Value, f: &FieldDescriptor) -> Option<Value> {
    let kind = if f.is_map() {
        f.kind().as_message()?.map_entry_value_field().kind()
    } else {
        f.kind()
    };
    if holds_template(v) && kind.as_message().is_some_and(well_known) {
        return None;
    }
    match v {
        Value::Object(entries) if f.is_map() => Some(Value::Object(
            entries
                .iter()
                .map(|(ek, ev)| (ek.clone(), placeholders(ev, &kind)))
                .collect(),
        )),
        _ => Some(placeholders(v, &kind)),
    }
}

/// A value of `kind` standing for a template's rendering.
fn placeholder(kind: &Kind) -> Value {
    match kind {
        Kind::Double
        | Kind::Float
        | Kind::Int32
        | Kind::Int64
        | Kind::Uint32
        | Kind::Uint64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Fixed32
        | Kind::Fixed64
        | Kind::Sfixed32
        | Kind::Sfixed64 => Value::from(0),
        Kind::Enum(e) => Value::String(e.default_value().name().to_string()),
        Kind::Bool => Value::Bool(false),
        // Text and bytes (empty is valid base64); a well-known type's text form is unknown.
        _ => Value::String(String::new()),
    }
}

fn unknown(key: &str, desc: &MessageDescriptor, kfield: &str, ctx: &Ctx) -> ScenarioError {
    let names: Vec<String> = desc.fields().map(|f| f.name().to_string()).collect();
    let err = ctx.err(
        kfield,
        format!("`{key}` is not a field of `{}`", desc.full_name()),
    );
    match closest(key, names.iter().map(String::as_str)) {
        Some(s) => err.with_hint(format!("did you mean `{s}`? {}", fields_of(desc))),
        None => err.with_hint(fields_of(desc)),
    }
}

fn value_error(
    key: &str,
    f: &FieldDescriptor,
    desc: &MessageDescriptor,
    why: &str,
    kfield: &str,
    ctx: &Ctx,
) -> ScenarioError {
    ctx.err(
        kfield,
        format!(
            "`{key}` of `{}` ({}): {why}",
            desc.full_name(),
            kind_name(f)
        ),
    )
    .with_hint(fields_of(desc))
}

/// `repeated string`, `uint32`, `map<string, Permit>`, `permits.v1.Status`.
fn kind_name(f: &FieldDescriptor) -> String {
    let one = |k: Kind| match k {
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => format!("enum {}", e.full_name()),
        other => format!("{other:?}").to_lowercase(),
    };
    if f.is_map() {
        let entry = f.kind().as_message().cloned();
        if let Some(e) = entry {
            return format!(
                "map<{}, {}>",
                one(e.map_entry_key_field().kind()),
                one(e.map_entry_value_field().kind())
            );
        }
    }
    let base = one(f.kind());
    if f.is_list() {
        format!("repeated {base}")
    } else {
        base
    }
}

/// `permits.v1.CreateRequest has: applicant (string), kind (string), ...`.
fn fields_of(desc: &MessageDescriptor) -> String {
    let list: Vec<String> = desc
        .fields()
        .map(|f| format!("{} ({})", f.name(), kind_name(&f)))
        .collect();
    if list.is_empty() {
        format!(
            "`{}` has no fields: write `message: {{}}` or leave it out",
            desc.full_name()
        )
    } else {
        format!("`{}` has: {}", desc.full_name(), list.join(", "))
    }
}
