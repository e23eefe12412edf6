//! HAR 1.2 as browsers save it (Chrome, Firefox): only the fields the importer reads, every
//! one optional so that a recording from any tool loads.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Har {
    pub log: Log,
}

#[derive(Debug, Deserialize)]
pub struct Log {
    pub entries: Vec<Entry>,
    #[serde(default)]
    pub pages: Vec<Page>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Page {
    #[serde(default)]
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
    #[serde(default)]
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
    #[serde(default)]
    pub headers: Vec<NameValue>,
    #[serde(default)]
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
    #[serde(default)]
    pub params: Vec<NameValue>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NameValue {
    pub name: String,
    #[serde(default)]
    pub value: String,
}
