//! Field names whose values are opaque but public handles — a pagination cursor, an ETag, a
//! hash, an id, a version: random-looking by design, so the long-random-token shape alone would
//! take them for keys (Box's `marker=JV9IRGZm…` became `{{ env.SECRET_2 }}`). Only that shape
//! yields to such a name; a JWT or a vendor key is a credential under any name.

use crate::credentials::{self, Shape};

/// Parts of a name that never name a public handle, whatever it ends with (`secret_id`,
/// `api_key_hash`, `session_marker`).
const NEVER: &[&str] = &[
    "secret", "pass", "key", "sig", "auth", "sess", "cred", "cookie", "token", "private",
];

/// Name endings (lower case, no `-`/`_`) of public handles.
const ENDINGS: &[&str] = &[
    "marker",
    "cursor",
    "continuation",
    "after",
    "before",
    "offset",
    "page",
    "next",
    "prev",
    "previous",
    "etag",
    "ifmatch",
    "ifnonematch",
    "hash",
    "sha",
    "sha1",
    "sha256",
    "md5",
    "checksum",
    "digest",
    "fingerprint",
    "id",
    "ids",
    "uuid",
    "guid",
    "version",
    "revision",
    "rev",
    "commit",
];

/// Whether a field called `name` holds a public handle rather than a credential.
pub fn is_public_name(name: &str) -> bool {
    if credentials::is_credential_name(name) {
        return false;
    }
    let n: String = name
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    // A name ending in `token` that is no credential is a paging token (`nextPageToken`).
    if n.ends_with("token") {
        return true;
    }
    !n.is_empty() && !NEVER.iter().any(|w| n.contains(w)) && ENDINGS.iter().any(|e| n.ends_with(e))
}

/// The credentials in `text`, a value of the field `key`: [`credentials::find_in_text`]
/// without the random-looking tokens that stand under a public name — `key` itself, or the
/// query or form parameter the token is the value of (`?marker=…` in a URL).
pub fn find_in_field(key: &str, text: &str) -> Vec<(usize, usize, Shape)> {
    credentials::find_in_text(text)
        .into_iter()
        .filter(|&(start, _, shape)| {
            shape != Shape::Random || !is_public_name(param_before(text, start).unwrap_or(key))
        })
        .collect()
}

/// `marker` for the value at `at` in `…?limit=10&marker=<at>`: the parameter name right
/// before it, if it is one.
fn param_before(text: &str, at: usize) -> Option<&str> {
    let before = text[..at].strip_suffix('=')?;
    let from = before.rfind(['?', '&', ';', ' ']).map_or(0, |i| i + 1);
    let name = &before[from..];
    (!name.is_empty() && !name.contains(['/', '=', '{'])).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANDOM: &str = "JV9IRGZmieiBasejOG9yDCRNgd2ymoZIbjsxbJMjIs3kioVii";
    const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";

    #[test]
    fn public_handles_by_name() {
        for n in [
            "marker",
            "next_marker",
            "cursor",
            "starting_after",
            "ETag",
            "If-None-Match",
            "sha256",
            "content_hash",
            "zip_download_id",
            "client_id",
            "nextPageToken",
            "continuation_token",
            "version",
        ] {
            assert!(is_public_name(n), "{n}");
        }
        for n in [
            "token",
            "access_token",
            "sync_token",
            "session_id",
            "sid",
            "secret_id",
            "api_key_id",
            "password_hash",
            "private_key_fingerprint",
            "signature",
            "code",
            "value",
            "",
        ] {
            assert!(!is_public_name(n), "{n}");
        }
    }

    /// `(field, text, what is still taken for a credential)`.
    #[test]
    fn only_the_random_shape_yields_to_a_public_name() {
        let cases: Vec<(&str, String, Vec<&str>)> = vec![
            ("marker", RANDOM.into(), vec![]),
            ("If-None-Match", format!("W/\"{RANDOM}\""), vec![]),
            (
                "get",
                format!("/sign_requests?marker={RANDOM}&limit=10"),
                vec![],
            ),
            ("get", format!("/a?limit=10&token={RANDOM}"), vec![RANDOM]),
            ("get", format!("/files/{RANDOM}"), vec![RANDOM]),
            ("value", RANDOM.into(), vec![RANDOM]),
            ("code", RANDOM.into(), vec![RANDOM]),
            ("marker", JWT.into(), vec![JWT]),
            (
                "next_marker",
                "ghp_R2d2C3poTheDroidsYouAreLooking4".into(),
                vec!["ghp_R2d2C3poTheDroidsYouAreLooking4"],
            ),
            ("id", format!("/a?marker={JWT}"), vec![JWT]),
            ("marker", format!("/a?api_key={RANDOM}"), vec![RANDOM]),
        ];
        for (key, text, want) in cases {
            let got: Vec<&str> = find_in_field(key, &text)
                .into_iter()
                .map(|(s, e, _)| &text[s..e])
                .collect();
            assert_eq!(got, want, "{key}: {text}");
        }
    }
}
