//! HAR 1.2 as browsers save it (Chrome, Firefox): only the fields the importer reads, every
//! one optional so that a recording from any tool loads. Tools write the same field in other
//! shapes (Polly.js an array for a repeated header, a beacon an object for a form value, a
//! recorder `null` for an empty list): a value is read as text whatever its shape, and a
//! `null` list as empty.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Read entry by entry (`har::read_recording`), so that a refusal names the entry.
#[derive(Debug)]
pub struct Har {
    pub log: Log,
}

#[derive(Debug)]
pub struct Log {
    pub entries: Vec<Entry>,
    pub pages: Vec<Page>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Page {
    #[serde(default, deserialize_with = "any_as_text")]
    pub title: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[serde(default)]
    pub started_date_time: String,
    /// Total time of the request in ms (-1 or absent when unknown).
    #[serde(default)]
    pub time: f64,
    pub request: Request,
    #[serde(default)]
    pub response: Response,
    /// Chrome's resource type: `xhr`, `fetch`, `document`, `script`, `image`…
    #[serde(default, rename = "_resourceType")]
    pub resource_type: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub method: String,
    pub url: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub headers: Vec<NameValue>,
    #[serde(default)]
    pub post_data: Option<PostData>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// `None` when the recording has no response (a tool that writes requests only); 0 when
    /// the browser got none (blocked, aborted, cancelled).
    #[serde(default)]
    pub status: Option<i64>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub headers: Vec<NameValue>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub cookies: Vec<NameValue>,
    #[serde(default)]
    pub content: Content,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    #[serde(default)]
    pub mime_type: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub encoding: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostData {
    #[serde(default)]
    pub mime_type: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub params: Vec<NameValue>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NameValue {
    #[serde(deserialize_with = "any_as_text")]
    pub name: String,
    #[serde(default, deserialize_with = "any_as_text")]
    pub value: String,
}

/// `null` where a list belongs is an empty list.
fn null_as_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// A value as text: a string as it is, a number or boolean as written, `null` as empty, the
/// items of an array (one header given twice) joined by `, ` as HTTP joins a repeated field,
/// and an object as its JSON.
fn any_as_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(text_of(&Value::deserialize(d)?))
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}
