//! Credentials written in a URL (`http://admin:pw@host/`): taken out when the scenario is
//! loaded and sent as HTTP Basic authentication (as curl does), bound to the origin they were
//! written for. Every URL a [`Scenario`](crate::Scenario) keeps is the redacted form
//! (`admin:***@`), so nothing derived from it — the terminal, run.json, the HDR log, the
//! SQLite index — can show the password. The user and password may be read from the
//! environment (`https://admin:{{ env.ADMIN_PASSWORD }}@host/`), so a file need not hold them.
//!
//! Crates chosen: `base64` for the `Authorization` value and `percent-encoding` (the `url`
//! crate's own) to decode `%40`-style escapes in the user and password, as curl does.

use base64::Engine as _;
use std::fmt;

/// A user and password from a URL, and the origin (`http://host:port`) they may be sent to.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    origin: String,
    user: String,
    password: String,
}

impl Credentials {
    pub fn user(&self) -> &str {
        &self.user
    }

    /// `scheme://host:port` of the URL the credentials were written in.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The `Authorization` header value: `Basic base64(user:password)`.
    pub fn authorization(&self) -> String {
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// Never prints the password, so `{:?}` of a scenario cannot leak it.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credentials({}:***@{})", self.user, self.origin)
    }
}

/// `scheme://host:port` of an absolute URL (port made explicit), or `None` if it has none.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let parsed = url::Url::parse(&format!("{scheme}://{authority}")).ok()?;
    Some(format!(
        "{}://{}:{}",
        parsed.scheme(),
        parsed.host_str()?,
        parsed.port_or_known_default()?
    ))
}

/// Splits the credentials out of an absolute URL: the URL with its password redacted, and the
/// credentials (`None` when it has no `user@`).
pub fn split_credentials(text: &str) -> (String, Option<Credentials>) {
    let redacted = redact(text);
    // The user and password as the URL parser reads them (it drops tabs and line breaks,
    // encodes spaces...), so what is sent is what the URL means.
    let authority_end = text
        .find("://")
        .map(|i| i + 3 + authority_len(&text[i + 3..]))
        .unwrap_or(text.len());
    let credentials = url::Url::parse(&text[..authority_end])
        .ok()
        .filter(|u| !u.username().is_empty() || u.password().is_some())
        .and_then(|u| {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            Some(Credentials {
                origin: origin_of(&redacted)?,
                user: decode(u.username()),
                password: decode(u.password().unwrap_or("")),
            })
        });
    (redacted, credentials)
}

/// `url` with the `{{ env.NAME }}` values of its user and password filled in, read when the
/// file is loaded and percent-encoded into it (so that `@`, `:` or `/` in a password cannot
/// move the host); the URL unchanged when its user and password hold no template. Other
/// variables are refused there: the credentials are fixed before the run.
pub fn with_userinfo_env(url: &str) -> Result<String, String> {
    let Some((start, end)) = userinfo_span(url, 0) else {
        return Ok(url.to_string());
    };
    let mut rest = &url[start..end];
    if !rest.contains("{{") {
        return Ok(url.to_string());
    }
    // Read here rather than by the template compiler, which knows the whole scenario.
    let mut filled = String::with_capacity(rest.len());
    while let Some(open) = rest.find("{{") {
        filled.push_str(&rest[..open]);
        let Some((value, after)) = crate::url_env::leading_env(&rest[open..])? else {
            return Err(format!(
                "the user and password of `{}` may use only `{{{{ env.NAME }}}}`: they are sent from the first request on",
                redact(url)
            ));
        };
        filled.extend(percent_encoding::utf8_percent_encode(
            &value,
            percent_encoding::NON_ALPHANUMERIC,
        ));
        rest = after;
    }
    filled.push_str(rest);
    Ok(format!("{}{filled}{}", &url[..start], &url[end..]))
}

/// Length of a URL's authority (after `scheme://`): up to the first `/`, `\`, `?` or `#`, as
/// the URL parser reads http(s) URLs — whatever else it holds (spaces, quotes) included, so
/// that no password escapes redaction.
fn authority_len(rest: &str) -> usize {
    rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len())
}

/// `text` with the password of every URL in it replaced by `***` (`http://admin:***@host/`),
/// for anything shown or stored that quotes what the user wrote.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some((start, end)) = userinfo_span(text, from) {
        match text[start..end].find(':') {
            Some(colon) => {
                out.push_str(&text[from..start + colon + 1]);
                out.push_str("***");
            }
            None => out.push_str(&text[from..end]),
        }
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// Byte span of the next `user[:password]` (before an `@` in a URL's authority) at or after `from`.
fn userinfo_span(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut at = from;
    loop {
        let scheme_end = text[at..].find("://")? + at + 3;
        let authority = &text[scheme_end..scheme_end + authority_len(&text[scheme_end..])];
        if let Some(last_at) = authority.rfind('@') {
            return Some((scheme_end, scheme_end + last_at));
        }
        at = scheme_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_and_keeps_users() {
        let table = [
            ("http://admin:pw@h:8080/a", "http://admin:***@h:8080/a"),
            ("https://admin@h/", "https://admin@h/"),
            ("http://h/a@b", "http://h/a@b"),
            ("http://a:p@ss@h/x", "http://a:***@h/x"),
            ("http://<<: *a:pw@h:9/h", "http://<<:***@h:9/h"),
            ("http://u:p w`\"@h/", "http://u:***@h/"),
            (
                "invalid URL `http://u:secret@h:99999/`: bad port",
                "invalid URL `http://u:***@h:99999/`: bad port",
            ),
            (
                "x http://u:1@a/ and http://v:2@b/",
                "x http://u:***@a/ and http://v:***@b/",
            ),
            ("no url here", "no url here"),
        ];
        for (text, want) in table {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn the_user_and_password_may_come_from_the_environment() {
        std::env::set_var("LOADLAB_TEST_URL_PASSWORD", "p@ss:w/rd");
        let filled =
            with_userinfo_env("http://admin:{{ env.LOADLAB_TEST_URL_PASSWORD }}@127.0.0.1:8/a")
                .unwrap();
        assert_eq!(filled, "http://admin:p%40ss%3Aw%2Frd@127.0.0.1:8/a");
        let (url, c) = split_credentials(&filled);
        assert_eq!(url, "http://admin:***@127.0.0.1:8/a");
        let c = c.unwrap();
        assert_eq!(c.origin(), "http://127.0.0.1:8");
        // base64("admin:p@ss:w/rd")
        assert_eq!(c.authorization(), "Basic YWRtaW46cEBzczp3L3Jk");
        for (url, refused) in [
            (
                "http://u:{{ env.LOADLAB_TEST_UNSET_VARIABLE }}@h/",
                "is not set",
            ),
            ("http://u:{{ vu }}@h/", "only `{{ env.NAME }}`"),
        ] {
            let e = with_userinfo_env(url).unwrap_err();
            assert!(e.contains(refused), "{url}: {e}");
        }
        // Templates elsewhere are left to the rest of the URL's checks.
        assert_eq!(
            with_userinfo_env("http://h/{{ vu }}@x").unwrap(),
            "http://h/{{ vu }}@x"
        );
    }

    #[test]
    fn credentials_become_basic_auth_for_their_origin() {
        let (url, c) = split_credentials("http://admin:p%40ss@127.0.0.1:8080/api");
        assert_eq!(url, "http://admin:***@127.0.0.1:8080/api");
        let c = c.unwrap();
        assert_eq!(c.user(), "admin");
        assert_eq!(c.origin(), "http://127.0.0.1:8080");
        // base64("admin:p@ss")
        assert_eq!(c.authorization(), "Basic YWRtaW46cEBzcw==");
        assert!(!format!("{c:?}").contains("p@ss"));
        let (_, none) = split_credentials("http://127.0.0.1/");
        assert!(none.is_none());
        assert_eq!(
            origin_of("https://u:***@example.com/x?y").as_deref(),
            Some("https://example.com:443")
        );
    }
}
