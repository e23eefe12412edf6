//! Reading a spec's YAML with numbers beyond 64 bits: `serde_yaml_ng::Value` refuses them
//! (OpenAI's spec has `minimum: -9223372036854776000`, valid YAML), which refused the whole
//! spec as "not valid YAML". Here such a number is read as the float it is closest to, as
//! a JSON reader does; everything else is read as `serde_yaml_ng::Value` reads it.

use crate::error::{parse_yaml, ImportError};
use serde::de::{
    Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde_yaml_ng::{Mapping, Number, Value};
use std::fmt;

/// The document at `source`: JSON read as JSON, YAML with over-long integers as floats.
pub fn parse(source: &str, file: &str, fix: &'static str) -> Result<Value, ImportError> {
    let trimmed = source.trim_start_matches('\u{feff}');
    if trimmed.trim_start().starts_with(['{', '[']) {
        return parse_yaml(source, file, fix);
    }
    match serde_yaml_ng::from_str::<Loose>(trimmed) {
        Ok(Loose(v)) => Ok(v),
        // The same message as before for what is really wrong.
        Err(_) => parse_yaml(source, file, fix),
    }
}

/// A YAML value read leniently (see the module's comment).
struct Loose(Value);

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor).map(Loose)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }
    fn visit_i128<E>(self, i: i128) -> Result<Value, E> {
        Ok(Value::Number(Number::from(i as f64)))
    }
    fn visit_u128<E>(self, u: u128) -> Result<Value, E> {
        Ok(Value::Number(Number::from(u as f64)))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Number(Number::from(f)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Loose::deserialize(d).map(|l| l.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Loose(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Sequence(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Mapping::new();
        while let Some((Loose(k), Loose(v))) = map.next_entry()? {
            out.insert(k, v);
        }
        Ok(Value::Mapping(out))
    }
    /// A tagged value (`!Ref x`): the tag says nothing to an importer, the value is kept.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (_, variant): (Loose, _) = data.variant()?;
        variant.newtype_variant::<Loose>().map(|l| l.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_64_bits_are_floats() {
        let src = "seed:\n  minimum: -9223372036854776000\n  maximum: 9223372036854775807\n  big: 36893488147419103232\n  tagged: !Thing 3\n  200: ok\n";
        let v = parse(src, "s.yaml", "fix").unwrap();
        let seed = &v["seed"];
        assert_eq!(seed["minimum"].as_f64(), Some(-9.223372036854776e18));
        assert_eq!(seed["maximum"].as_i64(), Some(i64::MAX));
        assert_eq!(seed["big"].as_f64(), Some(3.6893488147419103e19));
        assert_eq!(seed["tagged"].as_i64(), Some(3));
        assert_eq!(seed[200].as_str(), Some("ok"));
        // What is not YAML is still refused with the parser's message.
        let err = parse("a: [1,\n", "s.yaml", "fix").unwrap_err().to_string();
        assert!(err.starts_with("s.yaml: not valid YAML or JSON ("), "{err}");
    }
}
