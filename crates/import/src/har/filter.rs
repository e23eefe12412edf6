//! Which recorded requests are API calls worth replaying: static assets (by extension, type or
//! content type, whatever loaded them), documents, requests without a response, browser
//! internals and third-party telemetry are dropped; form posts and the redirects that follow
//! them (a login) are kept; the user's host and path filters apply.

use super::model::Entry;
use crate::Options;

/// Why a request was left out (counted in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dropped {
    NotHttp,
    /// Status 0: blocked, aborted, or never answered.
    NoResponse,
    Preflight,
    Telemetry,
    StaticAsset,
    Document,
    Host,
    Path,
}

impl Dropped {
    pub fn describe(self) -> &'static str {
        match self {
            Dropped::NotHttp => "not HTTP(S) (data:, blob:, ws:, browser extensions)",
            Dropped::NoResponse => "without a response (status 0: blocked, aborted or cancelled)",
            Dropped::Telemetry => "third-party analytics and telemetry",
            Dropped::Preflight => "CORS preflight (OPTIONS)",
            Dropped::StaticAsset => "static assets (images, CSS, scripts, fonts, media)",
            Dropped::Document => "HTML documents",
            Dropped::Host => "filtered out by host",
            Dropped::Path => "filtered out by path",
        }
    }
}

/// Hosts that receive a page's analytics, error reports and telemetry: a load test of the
/// application does not replay them. A host matches itself and its subdomains.
pub const TELEMETRY_HOSTS: &[&str] = &[
    "google-analytics.com",
    "analytics.google.com",
    "googletagmanager.com",
    "doubleclick.net",
    "googlesyndication.com",
    "googleadservices.com",
    "firebaselogging-pa.googleapis.com",
    "play.google.com",
    "sentry.io",
    "sentry-cdn.com",
    "browser-intake-datadoghq.com",
    "browser-intake-datadoghq.eu",
    "browser-intake-us3-datadoghq.com",
    "browser-intake-us5-datadoghq.com",
    "nr-data.net",
    "js-agent.newrelic.com",
    "segment.io",
    "segment.com",
    "mixpanel.com",
    "amplitude.com",
    "heapanalytics.com",
    "hotjar.com",
    "hotjar.io",
    "fullstory.com",
    "clarity.ms",
    "bat.bing.com",
    "connect.facebook.net",
    "px.ads.linkedin.com",
    "snap.licdn.com",
    "cloudflareinsights.com",
    "plausible.io",
    "posthog.com",
    "lr-ingest.io",
    "lr-in-prod.com",
    "logx.optimizely.com",
    "events.launchdarkly.com",
    "stats.wp.com",
    "scorecardresearch.com",
    "quantserve.com",
    "adservice.google.com",
    "collector.github.com",
    "incoming.telemetry.mozilla.org",
    "rum.browser-intake-datadoghq.com",
];

/// Extensions of files a page loads as assets, whatever loaded them (an XHR too).
const ASSET_EXTENSIONS: &[&str] = &[
    "js",
    "mjs",
    "cjs",
    "map",
    "css",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "ico",
    "webp",
    "avif",
    "bmp",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "mp4",
    "webm",
    "mp3",
    "wav",
    "ogg",
    "m4a",
    "html",
    "htm",
    "wasm",
    "webmanifest",
    "tsx",
    "ts",
    "jsx",
    "vue",
    "less",
    "scss",
];

/// The telemetry host `host` falls under, if any.
pub fn telemetry_host(host: &str) -> Option<&'static str> {
    TELEMETRY_HOSTS
        .iter()
        .find(|t| host == **t || host.ends_with(&format!(".{t}")))
        .copied()
}

/// `None` when the entry is kept. `redirected_to` is true for a document a kept request's
/// redirect led to (the page after a login form).
pub fn drop_reason(
    entry: &Entry,
    url: &url::Url,
    options: &Options,
    redirected_to: bool,
) -> Option<Dropped> {
    if !matches!(url.scheme(), "http" | "https") {
        return Some(Dropped::NotHttp);
    }
    // The user's filters first: what they leave out stays out, even of a recording with no
    // API call, whose pages and unanswered requests are kept (`select`).
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
    if telemetry_host(host).is_some() && !host_matches(&options.include_hosts) {
        return Some(Dropped::Telemetry);
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
    if entry.response.status.is_some_and(|s| s <= 0) {
        return Some(Dropped::NoResponse);
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
    if let Some(ext) = path.rsplit('/').next().and_then(|f| f.rsplit_once('.')) {
        if ASSET_EXTENSIONS.contains(&ext.1.to_ascii_lowercase().as_str()) && method == "GET" {
            return Some(Dropped::StaticAsset);
        }
    }
    // A form posted by the page (a sign-in, a SAML post) and the page its redirect leads to
    // are part of the flow, whatever they answer.
    if method != "GET" && method != "HEAD" || redirected_to {
        return None;
    }
    kind_of(entry)
}

/// By Chrome's resource type when recorded, else by the response's content type.
fn kind_of(entry: &Entry) -> Option<Dropped> {
    if let Some(t) = entry.resource_type.as_deref() {
        match t {
            // Scripts, styles and images fetched by XHR are assets all the same.
            "xhr" | "fetch" => {
                let mime = entry.response.content.mime_type.to_ascii_lowercase();
                let asset = [
                    "javascript",
                    "ecmascript",
                    "text/css",
                    "image/",
                    "font/",
                    "video/",
                    "audio/",
                ]
                .iter()
                .any(|a| mime.contains(a));
                return asset.then_some(Dropped::StaticAsset);
            }
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
        || mime == "text/event-stream"
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
