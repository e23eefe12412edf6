//! Which kind of mistake made a scenario file fail to deserialize (a key its section does not
//! take, a value outside a fixed set, a missing key), known from the call serde's derived code
//! made rather than from the text of serde_yaml_ng's message: the failing document is read a
//! second time, from its parsed YAML value, through a deserializer whose error type records
//! that call with its typed arguments. serde_yaml_ng still gives the position and the message.
//! A document that is not valid YAML is read as far as its syntax error, as serde_yaml_ng read
//! it before failing.

use serde::de::value::{MapAccessDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde_yaml_ng::Value;
use std::fmt;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// What serde found wrong, with the names it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mistake {
    /// A key the mapping's type does not take, and the keys it takes.
    UnknownField {
        name: String,
        expected: &'static [&'static str],
    },
    /// A value that is none of an enum's names, and its names.
    UnknownVariant {
        name: String,
        expected: &'static [&'static str],
    },
    MissingField,
    /// Anything else (a wrong type, a bad value, YAML that is not even a value).
    Other,
}

impl fmt::Display for Mistake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Mistake {}

impl de::Error for Mistake {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Mistake::Other
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Mistake::UnknownField {
            name: field.to_string(),
            expected,
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Mistake::UnknownVariant {
            name: variant.to_string(),
            expected,
        }
    }

    fn missing_field(_: &'static str) -> Self {
        Mistake::MissingField
    }
}

/// The mistake that makes `src` fail to deserialize as `T`; [`Mistake::Other`] when it reads.
pub(crate) fn mistake<T: DeserializeOwned>(src: &str) -> Mistake {
    match T::deserialize(NodeDeserializer(&document(src))) {
        Ok(_) => Mistake::Other,
        Err(m) => m,
    }
}

/// A YAML node; a mapping keeps its keys in order, repeated ones included (serde reports
/// those as it did when reading the text).
enum Node {
    Scalar(Value),
    Sequence(Vec<Node>),
    Mapping(Vec<(Node, Node)>),
}

impl Node {
    fn from_value(value: Value) -> Node {
        match value {
            Value::Sequence(items) => {
                Node::Sequence(items.into_iter().map(Node::from_value).collect())
            }
            Value::Mapping(map) => Node::Mapping(
                map.into_iter()
                    .map(|(k, v)| (Node::from_value(k), Node::from_value(v)))
                    .collect(),
            ),
            Value::Tagged(tagged) => Node::from_value(tagged.value),
            scalar => Node::Scalar(scalar),
        }
    }
}

/// The document's nodes; when it is not valid YAML (or repeats a key, which serde_yaml_ng's
/// value refuses), read from the parser's events up to the syntax error, with the mappings
/// and sequences still open closed there (a key left without its value gets null).
fn document(src: &str) -> Node {
    if let Ok(value) = serde_yaml_ng::from_str::<Value>(src) {
        return Node::from_value(value);
    }
    let mut builder = NodeBuilder::default();
    // The syntax error itself is reported by serde_yaml_ng; only the part before it is read.
    let _ = Parser::new_from_str(src).load(&mut builder, false);
    builder.finish()
}

/// Builds nodes from parser events, for documents serde_yaml_ng cannot read as a value.
#[derive(Default)]
struct NodeBuilder {
    open: Vec<OpenNode>,
    root: Option<Node>,
}

enum OpenNode {
    Sequence(Vec<Node>),
    /// The mapping so far and a key waiting for its value.
    Mapping(Vec<(Node, Node)>, Option<Node>),
}

impl NodeBuilder {
    fn add(&mut self, value: Node) {
        match self.open.last_mut() {
            None => {
                self.root.get_or_insert(value);
            }
            Some(OpenNode::Sequence(items)) => items.push(value),
            Some(OpenNode::Mapping(map, key)) => match key.take() {
                None => *key = Some(value),
                Some(k) => map.push((k, value)),
            },
        }
    }

    fn close(&mut self) {
        let value = match self.open.pop() {
            None => return,
            Some(OpenNode::Sequence(items)) => Node::Sequence(items),
            Some(OpenNode::Mapping(mut map, key)) => {
                if let Some(k) = key {
                    map.push((k, Node::Scalar(Value::Null)));
                }
                Node::Mapping(map)
            }
        };
        self.add(value);
    }

    fn finish(mut self) -> Node {
        while !self.open.is_empty() {
            self.close();
        }
        self.root.unwrap_or(Node::Scalar(Value::Null))
    }
}

impl MarkedEventReceiver for NodeBuilder {
    fn on_event(&mut self, ev: Event, _: Marker) {
        match ev {
            // A plain scalar is resolved as serde_yaml_ng resolves it (null, bool, number).
            Event::Scalar(text, TScalarStyle::Plain, ..) => {
                let value = serde_yaml_ng::from_str(&text).unwrap_or(Value::String(text));
                self.add(Node::Scalar(value))
            }
            Event::Scalar(text, ..) => self.add(Node::Scalar(Value::String(text))),
            Event::Alias(_) => self.add(Node::Scalar(Value::Null)),
            Event::SequenceStart(..) => self.open.push(OpenNode::Sequence(Vec::new())),
            Event::MappingStart(..) => self.open.push(OpenNode::Mapping(Vec::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            _ => {}
        }
    }
}

/// A node read as serde_yaml_ng reads the text: a scalar is text where text is asked for,
/// a one-key mapping is an enum variant with data.
struct NodeDeserializer<'a>(&'a Node);

impl<'de> IntoDeserializer<'de, Mistake> for NodeDeserializer<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for NodeDeserializer<'_> {
    type Error = Mistake;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        match self.0 {
            Node::Scalar(Value::Bool(b)) => visitor.visit_bool(*b),
            Node::Scalar(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, f) => visitor.visit_f64(f.unwrap_or(f64::NAN)),
            },
            Node::Scalar(Value::String(s)) => visitor.visit_str(s),
            // Null; sequences, mappings and tags never stand in a scalar node.
            Node::Scalar(_) => visitor.visit_unit(),
            Node::Sequence(items) => {
                visitor.visit_seq(SeqDeserializer::new(items.iter().map(NodeDeserializer)))
            }
            Node::Mapping(m) => visitor.visit_map(MapDeserializer::new(
                m.iter()
                    .map(|(k, v)| (NodeDeserializer(k), NodeDeserializer(v))),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        match self.0 {
            Node::Scalar(Value::Null) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        match self.0 {
            Node::Scalar(Value::Number(n)) => visitor.visit_str(&n.to_string()),
            Node::Scalar(Value::Bool(b)) => visitor.visit_str(if *b { "true" } else { "false" }),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        self.deserialize_str(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        match self.0 {
            Node::Scalar(Value::String(s)) => visitor.visit_enum(s.as_str().into_deserializer()),
            Node::Mapping(m) if m.len() == 1 => {
                visitor.visit_enum(MapAccessDeserializer::new(MapDeserializer::new(
                    m.iter()
                        .map(|(k, v)| (NodeDeserializer(k), NodeDeserializer(v))),
                )))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        kind: Option<Kind>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Open,
        Closed,
    }

    #[test]
    fn names_the_call_serde_made() {
        assert_eq!(
            mistake::<Doc>("name: a\nnmae: b\n"),
            Mistake::UnknownField {
                name: "nmae".into(),
                expected: &["name", "kind"]
            }
        );
        assert_eq!(
            mistake::<Doc>("name: a\nkind: opne\n"),
            Mistake::UnknownVariant {
                name: "opne".into(),
                expected: &["open", "closed"]
            }
        );
        assert_eq!(mistake::<Doc>("kind: open\n"), Mistake::MissingField);
        assert_eq!(mistake::<Doc>("name: [1]\n"), Mistake::Other);
        assert_eq!(mistake::<Doc>("name: 2024\nkind: closed\n"), Mistake::Other);
        // A repeated key is serde's to report, not a mistake with a hint.
        assert_eq!(
            mistake::<Doc>("name: a\nname: b\nkind: opne\n"),
            Mistake::Other
        );
        // Not YAML: read up to the syntax error, as serde_yaml_ng read it.
        assert_eq!(
            mistake::<Doc>("{ nmae"),
            Mistake::UnknownField {
                name: "nmae".into(),
                expected: &["name", "kind"]
            }
        );
    }
}
