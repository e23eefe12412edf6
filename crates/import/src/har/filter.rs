//! Which recorded requests are API calls worth replaying: static assets and documents are
//! dropped by content type, and the user's host and path filters apply.

use super::model::Entry;
use crate::Options;

/// Why a request was left out (counted in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dropped {
    NotHttp,
    Preflight,
    StaticAsset,
    Document,
    Host,
    Path,
}

impl Dropped {
    pub fn describe(self) -> &'static str {
        match self {
            Dropped::NotHttp => "not HTTP(S) (data:, ws:, extensions)",
            Dropped::Preflight => "CORS preflight (OPTIONS)",
            Dropped::StaticAsset => "static assets (images, CSS, scripts, fonts, media)",
            Dropped::Document => "HTML documents",
            Dropped::Host => "filtered out by host",
            Dropped::Path => "filtered out by path",
        }
    }
}

/// `None` when the entry is kept.
pub fn drop_reason(entry: &Entry, url: &url::Url, options: &Options) -> Option<Dropped> {
    if !matches!(url.scheme(), "http" | "https") {
        return Some(Dropped::NotHttp);
    }
    let method = entry.request.method.to_ascii_uppercase();
    let has_cors = entry
        .request
        .headers
        .iter()
        .any(|h| h.name.eq_ignore_ascii_case("access-control-request-method"));
    if method == "OPTIONS" && has_cors {
        return Some(Dropped::Preflight);
    }
    let host = url.host_str().unwrap_or("");
    let host_matches = |list: &[String]| {
        list.iter().any(|h| {
            let h = h.to_ascii_lowercase();
            host == h
                || host.ends_with(&format!(".{h}"))
                || url[url::Position::BeforeHost..url::Position::BeforePath] == h
        })
    };
    if !options.include_hosts.is_empty() && !host_matches(&options.include_hosts) {
        return Some(Dropped::Host);
    }
    if host_matches(&options.exclude_hosts) {
        return Some(Dropped::Host);
    }
    let path = url.path();
    if !options.include_paths.is_empty()
        && !options
            .include_paths
            .iter()
            .any(|p| path.starts_with(p.as_str()))
    {
        return Some(Dropped::Path);
    }
    if options
        .exclude_paths
        .iter()
        .any(|p| path.starts_with(p.as_str()))
    {
        return Some(Dropped::Path);
    }
    kind_of(entry)
}

/// By Chrome's resource type when recorded, else by the response's content type.
fn kind_of(entry: &Entry) -> Option<Dropped> {
    if let Some(t) = entry.resource_type.as_deref() {
        match t {
            "xhr" | "fetch" => return None,
            "document" => return Some(Dropped::Document),
            "stylesheet" | "script" | "image" | "font" | "media" | "manifest" | "texttrack"
            | "imageset" => return Some(Dropped::StaticAsset),
            _ => {}
        }
    }
    by_mime(&entry.response.content.mime_type)
}

pub fn by_mime(mime: &str) -> Option<Dropped> {
    let mime = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime.is_empty()
        || mime.contains("json")
        || mime.contains("xml") && !mime.contains("svg")
        || mime == "text/plain"
        || mime == "application/x-www-form-urlencoded"
        || mime == "multipart/form-data"
        || mime == "text/csv"
        || mime == "application/grpc-web+proto"
    {
        return None;
    }
    if mime == "text/html" || mime == "application/xhtml+xml" {
        return Some(Dropped::Document);
    }
    Some(Dropped::StaticAsset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        let cases = [
            ("application/json", None),
            ("application/json; charset=utf-8", None),
            ("application/problem+json", None),
            ("text/plain", None),
            ("", None),
            ("application/xml", None),
            ("text/html; charset=utf-8", Some(Dropped::Document)),
            ("image/png", Some(Dropped::StaticAsset)),
            ("image/svg+xml", Some(Dropped::StaticAsset)),
            ("text/css", Some(Dropped::StaticAsset)),
            ("application/javascript", Some(Dropped::StaticAsset)),
            ("text/javascript", Some(Dropped::StaticAsset)),
            ("font/woff2", Some(Dropped::StaticAsset)),
            ("video/mp4", Some(Dropped::StaticAsset)),
        ];
        for (mime, want) in cases {
            assert_eq!(by_mime(mime), want, "{mime}");
        }
    }
}
