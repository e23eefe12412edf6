//! Correlation: a value a response gave (a JSON field, a header, a cookie) that a later request
//! sends back becomes a capture at that response and a `{{ variable }}` at every use — the
//! step that makes a recording replayable by many users instead of one.
//!
//! False positives are worse than misses (a wrong capture breaks a working request), so a
//! value must be distinctive: text of 4+ characters that is not a plain word, or a number of
//! 1000 or more; a smaller id counts only where ids stand (a path segment, an `…id` field)
//! and when its response field is an id too. A value the client sent before the response
//! (a user name echoed back) is the client's, not the server's, and is never captured.

use super::request::{json_path, response_leaves, Exchange, JsonKey, Place, Slot};
use crate::names;
use crate::report::Correlation;
use crate::yaml::Node;
use std::collections::HashMap;

/// A value offered by a response.
#[derive(Debug, Clone)]
struct Source {
    entry: usize,
    value: String,
    is_number: bool,
    id_like: bool,
    /// The variable name it would get.
    name: String,
    capture: Node,
    /// `$.token`, `header X-Csrf`, `cookie SESSION` for the report.
    how: String,
    /// A comment for the capturing step.
    note: Option<String>,
    /// Distinctive enough to be matched anywhere (see [`distinctive`]), computed once.
    strong: bool,
}

/// Finds every correlation and rewrites the exchanges in place (captures and templates).
///
/// Linear in requests × candidate values × places of a request: a recording of a few hundred
/// API calls with large JSON answers is imported in well under a second.
pub fn correlate(exchanges: &mut [Exchange], taken: &mut Vec<String>) -> Vec<Correlation> {
    let sources = candidate_sources(exchanges);
    let mut slots: Vec<Vec<Slot>> = exchanges.iter().map(Exchange::slots).collect();
    let client_sent = sent_by_client(&sources, &slots);
    let offers = offers_by_value(&sources, &client_sent);
    let offered: Vec<&[usize]> = sources
        .iter()
        .map(|s| offers.get(s.value.as_str()).map_or(&[][..], Vec::as_slice))
        .collect();
    let mut found = Found::default();
    for (j, exchange_slots) in slots.iter_mut().enumerate() {
        for (si, s) in sources.iter().enumerate() {
            if s.entry >= j || client_sent[si] {
                continue;
            }
            let latest = offered[si].iter().rev().find(|&&e| e < j).copied();
            if latest != Some(s.entry) {
                continue;
            }
            found.replace_uses(exchanges, j, exchange_slots, s, taken);
        }
    }
    found.correlations
}

/// The values worth correlating, in the order they are to be replaced.
fn candidate_sources(exchanges: &[Exchange]) -> Vec<Source> {
    let mut sources = collect_sources(exchanges);
    // Values that could never be used (plain words, small numbers that are no id) go first.
    sources.retain(|s| s.strong || s.id_like);
    // Longer values first: a token is replaced before a shorter value found inside it.
    sources.sort_by(|a, b| {
        b.value
            .len()
            .cmp(&a.value.len())
            .then(b.entry.cmp(&a.entry))
    });
    sources
}

/// Per source, whether the client sent its value at or before the response that holds it: then
/// the value is the client's.
fn sent_by_client(sources: &[Source], slots: &[Vec<Slot>]) -> Vec<bool> {
    // The first request sending it is found once per kind of value.
    let mut first_sent: HashMap<(&str, bool, bool), Option<usize>> = HashMap::new();
    sources
        .iter()
        .map(|s| {
            let first = *first_sent
                .entry((s.value.as_str(), s.is_number, s.id_like))
                .or_insert_with(|| {
                    slots
                        .iter()
                        .position(|xs| xs.iter().any(|slot| matches(slot, s).is_some()))
                });
            first.is_some_and(|f| f <= s.entry)
        })
        .collect()
}

/// Per value, the responses that offer it (entries, ascending): the latest one before a use
/// defines it.
fn offers_by_value<'s>(
    sources: &'s [Source],
    client_sent: &[bool],
) -> HashMap<&'s str, Vec<usize>> {
    let mut offers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (s, sent) in sources.iter().zip(client_sent) {
        if !sent {
            offers.entry(s.value.as_str()).or_default().push(s.entry);
        }
    }
    for entries in offers.values_mut() {
        entries.sort_unstable();
        entries.dedup();
    }
    offers
}

/// The correlations made so far.
#[derive(Default)]
struct Found {
    /// Value text → (variable, index into `correlations`).
    defined: Vec<(String, String, usize)>,
    correlations: Vec<Correlation>,
}

impl Found {
    /// Every place of exchange `j` that sends the value of `s` gets its variable instead.
    fn replace_uses(
        &mut self,
        exchanges: &mut [Exchange],
        j: usize,
        slots: &mut Vec<Slot>,
        s: &Source,
        taken: &mut Vec<String>,
    ) {
        let mut k = 0;
        while k < slots.len() {
            let slot = &slots[k];
            k += 1;
            if matches(slot, s).is_none() {
                continue;
            }
            let slot = slot.clone();
            let (var, report_index) = self.variable(exchanges, s, taken);
            let template = format!("{{{{ {var} }}}}");
            let replaced = if slot.text == s.value {
                template
            } else {
                replace_bounded(&slot.text, &s.value, &template)
            };
            let place = exchanges[j].describe(&slot.place);
            exchanges[j].set(&slot.place, replaced);
            *slots = exchanges[j].slots();
            let use_text = format!("`{}` {place}", exchanges[j].name);
            let uses = &mut self.correlations[report_index].uses;
            if !uses.contains(&use_text) {
                uses.push(use_text);
            }
        }
    }

    /// The variable standing for the value of `s`, and its correlation: the one defined for
    /// that value, else a new capture at the response of `s`.
    fn variable(
        &mut self,
        exchanges: &mut [Exchange],
        s: &Source,
        taken: &mut Vec<String>,
    ) -> (String, usize) {
        if let Some((_, var, i)) = self.defined.iter().find(|d| d.0 == s.value) {
            return (var.clone(), *i);
        }
        let var = names::unique(s.name.clone(), taken);
        let step = exchanges[s.entry].name.clone();
        if let Some(note) = &s.note {
            exchanges[s.entry].comments.push(note.clone());
        }
        exchanges[s.entry]
            .captures
            .push((var.clone(), s.capture.clone()));
        self.correlations.push(Correlation {
            variable: var.clone(),
            step,
            capture: s.how.clone(),
            uses: Vec::new(),
        });
        let index = self.correlations.len() - 1;
        self.defined.push((s.value.clone(), var.clone(), index));
        (var, index)
    }
}

fn collect_sources(exchanges: &[Exchange]) -> Vec<Source> {
    let mut out = Vec::new();
    for (i, x) in exchanges.iter().enumerate() {
        let path = x.segments.join("/");
        if let Some(json) = &x.response_json {
            for (keys, value, is_number) in response_leaves(json) {
                let key_names: Vec<String> = keys
                    .iter()
                    .map(|k| match k {
                        JsonKey::Key(k) => k.clone(),
                        JsonKey::Index(i) => i.to_string(),
                    })
                    .collect();
                let last = keys.iter().rev().find_map(|k| match k {
                    JsonKey::Key(k) => Some(k.as_str()),
                    JsonKey::Index(_) => None,
                });
                let p = json_path(&keys);
                out.push(Source {
                    entry: i,
                    value,
                    is_number,
                    id_like: last.is_some_and(is_id_key),
                    name: names::variable_for_field(&key_names, &path),
                    capture: Node::str(p.clone()),
                    how: p,
                    note: None,
                    strong: false,
                });
            }
        }
        for (name, value) in &x.response_headers {
            if ignored_response_header(name) {
                continue;
            }
            out.push(Source {
                entry: i,
                value: value.clone(),
                is_number: false,
                id_like: is_id_key(name),
                name: names::snake_case(name),
                capture: Node::map([("header", Node::str(name.clone()))]),
                how: format!("header {name}"),
                note: None,
                strong: false,
            });
        }
        // The engine keeps no cookie jar, so a cookie the server set is captured like a header:
        // the whole `Set-Cookie` text (`name=value; Path=/…`), which is exact only when the
        // response sets one cookie; servers read the first pair of what is sent back.
        if x.set_cookies.len() == 1 {
            let (name, value) = &x.set_cookies[0];
            out.push(Source {
                entry: i,
                value: format!("{name}={value}"),
                is_number: false,
                id_like: false,
                strong: false,
                note: Some(format!(
                    "cookie {name}: the capture holds the whole Set-Cookie text (attributes included), sent back as is; the engine keeps no cookie jar"
                )),
                name: format!("{}_cookie", names::snake_case(name)),
                capture: Node::map([("header", Node::str("Set-Cookie"))]),
                how: format!("cookie {name} (the whole Set-Cookie value)"),
            });
        }
    }
    out.retain(|s| !s.value.is_empty());
    for s in &mut out {
        s.strong = distinctive(s);
    }
    out
}

fn ignored_response_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("access-control-")
        || n.starts_with(':')
        || matches!(
            n.as_str(),
            "date"
                | "content-type"
                | "content-length"
                | "content-encoding"
                | "server"
                | "connection"
                | "keep-alive"
                | "cache-control"
                | "pragma"
                | "expires"
                | "last-modified"
                | "vary"
                | "transfer-encoding"
                | "strict-transport-security"
                | "x-content-type-options"
                | "x-frame-options"
                | "x-xss-protection"
                | "referrer-policy"
                | "content-security-policy"
                | "set-cookie"
                | "server-timing"
                | "age"
                | "via"
                | "alt-svc"
                | "report-to"
                | "nel"
                | "x-powered-by"
        )
}

pub fn is_id_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k == "id"
        || k.ends_with("_id")
        || k.ends_with("-id")
        || k.ends_with("uuid")
        || key.ends_with("Id")
}

/// Whether the value is distinctive on its own (anywhere, exact).
fn distinctive(s: &Source) -> bool {
    let v = s.value.as_str();
    if s.is_number || v.chars().all(|c| c.is_ascii_digit()) {
        return v.parse::<f64>().is_ok_and(|n| n.abs() >= 1000.0);
    }
    if v.chars().count() < 4 || matches!(v, "true" | "false" | "null") {
        return false;
    }
    // A plain word (`draft`, `admin`) is an enum value, not something the server generated.
    v.chars().count() >= 12 || !v.chars().all(|c| c.is_alphabetic())
}

/// Whether `slot` sends the value of `s`: `Some(true)` for the whole slot, `Some(false)` for a
/// bounded part of it.
fn matches(slot: &Slot, s: &Source) -> Option<bool> {
    if slot.text == s.value {
        if s.strong {
            return Some(true);
        }
        let id_place = match &slot.place {
            Place::Segment(_) => true,
            Place::Json(_) | Place::Query(_) | Place::Form(_) => {
                slot.key.as_deref().is_some_and(is_id_key)
            }
            _ => false,
        };
        return (s.id_like && id_place && !s.value.is_empty()).then_some(true);
    }
    if slot.is_number || matches!(slot.place, Place::Segment(_)) {
        return None;
    }
    if s.value.len() >= 8 && s.strong && find_bounded(&slot.text, &s.value).is_some() {
        return Some(false);
    }
    None
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first occurrence of `needle` not inside a longer word.
fn find_bounded(hay: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            return Some(at);
        }
        from = at + needle.len().max(1);
        if from > hay.len() {
            break;
        }
    }
    None
}

fn replace_bounded(hay: &str, needle: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = hay;
    while let Some(at) = find_bounded(rest, needle) {
        out.push_str(&rest[..at]);
        out.push_str(with);
        rest = &rest[at + needle.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(value: &str, is_number: bool, id_like: bool) -> Source {
        let mut s = Source {
            entry: 0,
            value: value.into(),
            is_number,
            id_like,
            name: "v".into(),
            capture: Node::str("$.v"),
            how: "$.v".into(),
            note: None,
            strong: false,
        };
        s.strong = distinctive(&s);
        s
    }

    fn slot(place: Place, text: &str, is_number: bool, key: Option<&str>) -> Slot {
        Slot {
            place,
            text: text.into(),
            is_number,
            key: key.map(str::to_string),
        }
    }

    #[test]
    fn what_counts_as_a_use() {
        let token = source("user1.0123456789abcdef", false, false);
        let auth = slot(
            Place::Header(0),
            "Bearer user1.0123456789abcdef",
            false,
            Some("Authorization"),
        );
        assert_eq!(matches(&auth, &token), Some(false));
        let longer = slot(
            Place::Header(0),
            "Bearer user1.0123456789abcdef99",
            false,
            None,
        );
        assert_eq!(matches(&longer, &token), None, "inside a longer token");

        let small_id = source("7", true, true);
        assert_eq!(
            matches(
                &slot(Place::Segment(3), "7", false, Some("applications")),
                &small_id
            ),
            Some(true)
        );
        assert_eq!(
            matches(
                &slot(Place::Json(vec![]), "7", true, Some("application_id")),
                &small_id
            ),
            Some(true)
        );
        assert_eq!(
            matches(
                &slot(Place::Json(vec![]), "7", true, Some("quantity")),
                &small_id
            ),
            None
        );
        assert_eq!(
            matches(&slot(Place::Query(0), "7", false, Some("page")), &small_id),
            None
        );
        let small_count = source("7", true, false);
        assert_eq!(
            matches(&slot(Place::Segment(3), "7", false, None), &small_count),
            None
        );

        let big = source("48213", true, false);
        assert_eq!(
            matches(
                &slot(Place::Json(vec![]), "48213", true, Some("amount")),
                &big
            ),
            Some(true)
        );
        assert_eq!(
            matches(&slot(Place::Query(0), "48213", false, Some("ref")), &big),
            Some(true)
        );

        let word = source("draft", false, false);
        assert_eq!(
            matches(
                &slot(Place::Json(vec![]), "draft", false, Some("status")),
                &word
            ),
            None
        );
        let flag = source("true", false, false);
        assert_eq!(
            matches(&slot(Place::Query(0), "true", false, None), &flag),
            None
        );
        let short = source("ab1", false, false);
        assert_eq!(
            matches(&slot(Place::Query(0), "ab1", false, None), &short),
            None
        );
    }

    #[test]
    fn bounded_replacement() {
        assert_eq!(
            replace_bounded("Bearer abcdefgh1", "abcdefgh1", "{{ t }}"),
            "Bearer {{ t }}"
        );
        assert_eq!(
            replace_bounded("a=abcdefgh1; b=abcdefgh1x", "abcdefgh1", "X"),
            "a=X; b=abcdefgh1x"
        );
    }

    fn exchange(
        path: &str,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        body: Option<serde_json::Value>,
        response: serde_json::Value,
    ) -> Exchange {
        Exchange {
            method: "GET".into(),
            origin: "http://h".into(),
            segments: path.split('/').map(str::to_string).collect(),
            query: query
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            raw_query: None,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.map(crate::har::request::ReqBody::Json),
            started_ms: None,
            ended_ms: None,
            status: 200,
            response_json: Some(response),
            response_headers: vec![],
            set_cookies: vec![],
            name: crate::names::step_name("GET", path),
            comments: vec![],
            captures: vec![],
        }
    }

    #[test]
    fn only_server_values_are_correlated() {
        use serde_json::json;
        let mut xs = vec![
            exchange(
                "/api/products",
                &[],
                &[],
                Some(json!({"page": 1, "size": 20, "user": "ann01"})),
                json!({"page": 1, "total": 3, "user": "ann01", "cursor": "c9f1e2d3a4b5",
                       "items": [{"id": 5, "status": "active"}]}),
            ),
            exchange(
                "/api/products",
                &[
                    ("page", "1"),
                    ("size", "20"),
                    ("cursor", "c9f1e2d3a4b5"),
                    ("state", "active"),
                ],
                &[("X-User", "ann01")],
                None,
                json!({"total": 3}),
            ),
            exchange(
                "/api/products/5",
                &[("limit", "3")],
                &[],
                None,
                json!({"id": 5}),
            ),
        ];
        let mut taken = Vec::new();
        let found = correlate(&mut xs, &mut taken);
        let got: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|c| (c.variable.as_str(), c.step.as_str(), c.capture.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("cursor", "GET /api/products", "$.cursor"),
                ("product_id", "GET /api/products", "$.items[0].id"),
            ]
        );
        // The page number, the size, the echoed user, the status word and the count stay.
        assert_eq!(
            xs[1].query,
            [
                ("page".to_string(), "1".to_string()),
                ("size".to_string(), "20".to_string()),
                ("cursor".to_string(), "{{ cursor }}".to_string()),
                ("state".to_string(), "active".to_string()),
            ]
        );
        assert_eq!(xs[1].headers[0].1, "ann01");
        assert_eq!(xs[2].segments, ["", "api", "products", "{{ product_id }}"]);
        assert_eq!(xs[2].query[0].1, "3");
        assert_eq!(xs[0].captures.len(), 2);
    }
}
