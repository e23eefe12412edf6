//! A recorded exchange in the shape the importer rewrites: every text a request carries
//! (path segments, query values, headers, body fields) is a numbered place that correlation
//! and credential replacement can read and replace uniformly.

use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    /// `https://host:port`.
    pub origin: String,
    /// Path segments as recorded (percent-encoded); the first is empty for the leading `/`.
    pub segments: Vec<String>,
    pub query: Vec<(String, String)>,
    /// The query kept as written in the path (a name given twice cannot be a `query:` map).
    pub raw_query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<ReqBody>,
    pub started_ms: Option<f64>,
    pub ended_ms: Option<f64>,
    pub status: u16,
    pub response_json: Option<Value>,
    pub response_headers: Vec<(String, String)>,
    /// Cookies the response sets, `(name, value)`, and how many `Set-Cookie` headers it has.
    pub set_cookies: Vec<(String, String)>,
    /// `METHOD /path/{id}` from the recorded path.
    pub name: String,
    pub comments: Vec<String>,
    /// `(variable, capture)`: `capture` is the YAML value (`$.token` or `{header: X}`).
    pub captures: Vec<(String, crate::yaml::Node)>,
}

#[derive(Debug, Clone)]
pub enum ReqBody {
    Json(Value),
    Form(Vec<(String, String)>),
    /// A text body and its content type (sent as a header, since `body:` sets none).
    Text(String, String),
}

/// Where in a request a text stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    Segment(usize),
    Query(usize),
    /// The query kept as written (`raw_query`).
    RawQuery,
    Header(usize),
    Form(usize),
    Text,
    /// Keys and indices from the JSON body's root.
    Json(Vec<JsonKey>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum JsonKey {
    Key(String),
    Index(usize),
}

/// A text at a place, with the field name it belongs to (for id-like and secret keys).
#[derive(Debug, Clone)]
pub struct Slot {
    pub place: Place,
    pub text: String,
    /// A JSON number (compared as a number, replaced as a whole).
    pub is_number: bool,
    pub key: Option<String>,
}

impl Exchange {
    pub fn path(&self) -> String {
        let p = self.segments.join("/");
        let p = if p.is_empty() { "/".to_string() } else { p };
        match &self.raw_query {
            Some(q) => format!("{p}?{q}"),
            None => p,
        }
    }

    pub fn slots(&self) -> Vec<Slot> {
        let mut out = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            if !s.is_empty() {
                out.push(Slot {
                    place: Place::Segment(i),
                    text: s.clone(),
                    is_number: false,
                    key: i.checked_sub(1).map(|p| self.segments[p].clone()),
                });
            }
        }
        for (i, (k, v)) in self.query.iter().enumerate() {
            out.push(slot(Place::Query(i), v, Some(k)));
        }
        if let Some(q) = &self.raw_query {
            out.push(slot(Place::RawQuery, q, None));
        }
        for (i, (k, v)) in self.headers.iter().enumerate() {
            out.push(slot(Place::Header(i), v, Some(k)));
        }
        match &self.body {
            Some(ReqBody::Form(fields)) => {
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push(slot(Place::Form(i), v, Some(k)));
                }
            }
            Some(ReqBody::Text(t, _)) => out.push(slot(Place::Text, t, None)),
            Some(ReqBody::Json(v)) => json_slots(v, &mut Vec::new(), &mut out),
            None => {}
        }
        out
    }

    /// Replaces the text at `place`; a JSON number becomes the string `text` (a template).
    pub fn set(&mut self, place: &Place, text: String) {
        match place {
            Place::Segment(i) => self.segments[*i] = text,
            Place::Query(i) => self.query[*i].1 = text,
            Place::RawQuery => self.raw_query = Some(text),
            Place::Header(i) => self.headers[*i].1 = text,
            Place::Form(i) => {
                if let Some(ReqBody::Form(f)) = &mut self.body {
                    f[*i].1 = text;
                }
            }
            Place::Text => {
                if let Some(ReqBody::Text(t, _)) = &mut self.body {
                    *t = text;
                }
            }
            Place::Json(keys) => {
                if let Some(ReqBody::Json(v)) = &mut self.body {
                    if let Some(leaf) = json_at(v, keys) {
                        *leaf = Value::String(text);
                    }
                }
            }
        }
    }

    /// How a place is named in the report: `path`, `query page`, `header Authorization`.
    pub fn describe(&self, place: &Place) -> String {
        match place {
            Place::Segment(_) => "path".into(),
            Place::Query(i) => format!("query {}", self.query[*i].0),
            Place::RawQuery => "query".into(),
            Place::Header(i) => format!("header {}", self.headers[*i].0),
            Place::Form(i) => match &self.body {
                Some(ReqBody::Form(f)) => format!("form {}", f[*i].0),
                _ => "form".into(),
            },
            Place::Text => "body".into(),
            Place::Json(keys) => format!("json {}", json_path(keys)),
        }
    }
}

fn slot(place: Place, text: &str, key: Option<&String>) -> Slot {
    Slot {
        place,
        text: text.to_string(),
        is_number: false,
        key: key.cloned(),
    }
}

fn json_slots(v: &Value, keys: &mut Vec<JsonKey>, out: &mut Vec<Slot>) {
    let key = || match keys.last() {
        Some(JsonKey::Key(k)) => Some(k.clone()),
        _ => keys.iter().rev().find_map(|k| match k {
            JsonKey::Key(k) => Some(k.clone()),
            JsonKey::Index(_) => None,
        }),
    };
    match v {
        Value::String(s) => out.push(Slot {
            place: Place::Json(keys.clone()),
            text: s.clone(),
            is_number: false,
            key: key(),
        }),
        Value::Number(n) => out.push(Slot {
            place: Place::Json(keys.clone()),
            text: n.to_string(),
            is_number: true,
            key: key(),
        }),
        Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                keys.push(JsonKey::Index(i));
                json_slots(item, keys, out);
                keys.pop();
            }
        }
        Value::Object(o) => {
            for (k, item) in o {
                keys.push(JsonKey::Key(k.clone()));
                json_slots(item, keys, out);
                keys.pop();
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

fn json_at<'a>(v: &'a mut Value, keys: &[JsonKey]) -> Option<&'a mut Value> {
    let mut cur = v;
    for k in keys {
        cur = match k {
            JsonKey::Key(k) => cur.get_mut(k.as_str())?,
            JsonKey::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

/// `$.a.b`, `$.items[0].id`, `$['a key']`: the JSONPath subset captures accept.
pub fn json_path(keys: &[JsonKey]) -> String {
    let mut out = String::from("$");
    for k in keys {
        match k {
            JsonKey::Index(i) => out.push_str(&format!("[{i}]")),
            JsonKey::Key(k)
                if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                out.push('.');
                out.push_str(k);
            }
            JsonKey::Key(k) => out.push_str(&format!("['{}']", k.replace('\'', "\\'"))),
        }
    }
    out
}

/// The leaves of a response body, for correlation: `(keys, text, is_number)`.
pub fn response_leaves(v: &Value) -> Vec<(Vec<JsonKey>, String, bool)> {
    let mut slots = Vec::new();
    json_slots(v, &mut Vec::new(), &mut slots);
    slots
        .into_iter()
        .filter_map(|s| match s.place {
            Place::Json(keys) => Some((keys, s.text, s.is_number)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths() {
        let k = |s: &str| JsonKey::Key(s.into());
        assert_eq!(json_path(&[k("token")]), "$.token");
        assert_eq!(
            json_path(&[k("items"), JsonKey::Index(0), k("id")]),
            "$.items[0].id"
        );
        assert_eq!(json_path(&[k("a key")]), "$['a key']");
    }
}
