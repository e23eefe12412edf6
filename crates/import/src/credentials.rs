//! What a credential looks like, by its field's name or by its own shape, so that no importer
//! writes one into a scenario file: names (`token`, `access_token`, `X-Amz-Security-Token`,
//! `session_id`...) and shapes (JWTs, vendor key prefixes, long random strings) are decided
//! here once and used by every importer.

use crate::report::Report;

/// Why a value is taken for a credential: by the name of the field holding it, or its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Jwt,
    /// A key with a vendor's known prefix (`ghp_`, `sk_live_`, `AKIA`, `xoxb-`...).
    Vendor(&'static str),
    /// A long run of letters, digits and symbols with high entropy.
    Random,
}

impl Shape {
    pub fn describe(self) -> String {
        match self {
            Shape::Jwt => "a JWT".into(),
            Shape::Vendor(v) => format!("a {v}"),
            Shape::Random => "a long random token".into(),
        }
    }

    /// The environment variable a credential of this shape is named after when its field's
    /// name says nothing.
    pub fn env_stem(self) -> String {
        match self {
            Shape::Jwt => "JWT".into(),
            // "GitHub token" → GITHUB_TOKEN.
            Shape::Vendor(what) => what
                .split_whitespace()
                .map(str::to_ascii_uppercase)
                .collect::<Vec<_>>()
                .join("_"),
            Shape::Random => "SECRET".into(),
        }
    }
}

/// Field names (headers, query and form parameters, JSON keys, cookies) whose value is a
/// credential, compared without case, `-` or `_`.
pub fn is_credential_name(name: &str) -> bool {
    let n: String = name
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    if n.is_empty() {
        return false;
    }
    // Tokens that page through results are no credential.
    let not_secret = [
        "pagetoken",
        "nextpagetoken",
        "nexttoken",
        "continuationtoken",
        "cursortoken",
        "tokentype",
        "tokencount",
        "maxtokens",
        "tokens",
        "author",
        "authors",
        "authority",
        "authorid",
        "authorname",
        "keyword",
        "keywords",
        "sidebar",
    ];
    if not_secret.contains(&n.as_str()) {
        return false;
    }
    let exact = [
        "pin",
        "otp",
        "pwd",
        "pass",
        "sid",
        "auth",
        "jwt",
        "sig",
        "cookie",
        "bearer",
        "samlresponse",
        "samlrequest",
        "ssid",
        "hsid",
        "apsid",
        "sapisid",
    ];
    if exact.contains(&n.as_str()) {
        return true;
    }
    let endings = [
        "password",
        "passwd",
        "passphrase",
        "passcode",
        "secret",
        "token",
        "apikey",
        "accesskey",
        "insertkey",
        "licensekey",
        "privatekey",
        "secretkey",
        "signingkey",
        "subscriptionkey",
        "sessionid",
        "sessid",
        "sessionkey",
        "session",
        "signature",
        "credential",
        "credentials",
        "authorization",
        "authkey",
        "jwt",
        "csrf",
        "xsrf",
    ];
    if endings.iter().any(|e| n.ends_with(e)) {
        return true;
    }
    let starts = ["xauth", "xapikey", "xamz", "apikey", "auth", "session"];
    starts
        .iter()
        .any(|s| n.starts_with(s) && n != "authority" && !n.starts_with("author"))
        && !n.starts_with("xamzdate")
        && !n.starts_with("xamzcontent")
        && !n.starts_with("xamzuseragent")
        && !n.starts_with("xamztarget")
        && !n.starts_with("xamzalgorithm")
        && !n.starts_with("xamzexpires")
        && !n.starts_with("xamzsignedheaders")
}

/// Known prefixes of vendor keys, with what they are.
const VENDORS: &[(&str, &str, usize)] = &[
    ("ghp_", "GitHub token", 20),
    ("gho_", "GitHub token", 20),
    ("ghu_", "GitHub token", 20),
    ("ghs_", "GitHub token", 20),
    ("ghr_", "GitHub token", 20),
    ("github_pat_", "GitHub token", 20),
    ("glpat-", "GitLab token", 20),
    ("sk_live_", "Stripe secret key", 16),
    ("sk_test_", "Stripe secret key", 16),
    ("rk_live_", "Stripe restricted key", 16),
    ("rk_test_", "Stripe restricted key", 16),
    ("whsec_", "webhook secret", 16),
    ("sk-proj-", "OpenAI key", 20),
    ("sk-ant-", "Anthropic key", 20),
    ("xoxb-", "Slack token", 15),
    ("xoxp-", "Slack token", 15),
    ("xoxa-", "Slack token", 15),
    ("xoxs-", "Slack token", 15),
    ("xoxe-", "Slack token", 15),
    ("xapp-", "Slack token", 15),
    ("AKIA", "AWS access key", 20),
    ("ASIA", "AWS access key", 20),
    ("AIza", "Google API key", 35),
    ("ya29.", "Google OAuth token", 20),
    ("SG.", "SendGrid key", 30),
    ("NRAK-", "New Relic key", 20),
    ("NRII-", "New Relic key", 20),
    ("shpat_", "Shopify token", 20),
    ("npm_", "npm token", 30),
    ("pypi-", "PyPI token", 30),
    ("dop_v1_", "DigitalOcean token", 30),
    ("hf_", "Hugging Face token", 30),
];

/// The shape of `value` when it is a credential by its look alone.
pub fn shape(value: &str) -> Option<Shape> {
    let v = value.trim();
    if v.contains("{{") || v.len() < 12 {
        return None;
    }
    if is_jwt(v) {
        return Some(Shape::Jwt);
    }
    for (prefix, what, min) in VENDORS {
        if v.starts_with(prefix)
            && v.len() >= *min
            && v[prefix.len()..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            if prefix.starts_with("AKIA") || prefix.starts_with("ASIA") {
                // AWS key ids are 20 upper-case letters and digits.
                if v.len() != 20
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                {
                    continue;
                }
            }
            return Some(Shape::Vendor(what));
        }
    }
    if looks_random(v) {
        return Some(Shape::Random);
    }
    None
}

/// `header.payload.signature`, each base64url, the header a JSON object (`eyJ`).
fn is_jwt(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && v.starts_with("eyJ")
        && parts[0].len() >= 10
        && parts[1].len() >= 2
        && parts.iter().all(|p| {
            p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '=')
        })
}

/// At least 32 characters of base64 or hex-like text mixing upper case, lower case and digits,
/// with at least 4.2 bits of entropy a character: an API key or a session secret, not a word,
/// a slug, a UUID or a hash in hex (which [`crate::names::looks_dynamic`] reports instead).
fn looks_random(v: &str) -> bool {
    if v.len() < 32 || v.len() > 4096 {
        return false;
    }
    if !v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "+/=_-.~%".contains(c))
    {
        return false;
    }
    let upper = v.chars().filter(char::is_ascii_uppercase).count();
    let lower = v.chars().filter(char::is_ascii_lowercase).count();
    let digits = v.chars().filter(char::is_ascii_digit).count();
    if upper < 3 || lower < 3 || digits < 3 {
        return false;
    }
    // A path-like or dotted text (`com.example.app.Module`) is no key.
    if v.matches('.').count() > 2 || v.matches('-').count() > 4 {
        return false;
    }
    entropy(v) >= 4.2
}

/// Shannon entropy in bits per character.
fn entropy(v: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in v.bytes() {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// The passwords written in URLs inside `text` (`http://user:password@host/`):
/// `(start, end, user)` of each literal one; a password that is a template already is none.
pub fn url_passwords(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("://") {
        let authority_start = at + found + 3;
        let authority_len = text[authority_start..]
            .find(|c: char| "/\\?#\"'`<> \t\r\n".contains(c))
            .unwrap_or(text.len() - authority_start);
        let authority = &text[authority_start..authority_start + authority_len];
        if let Some((userinfo, _host)) = authority.rsplit_once('@') {
            if let Some((user, password)) = userinfo.split_once(':') {
                if !password.is_empty() && !password.contains("{{") {
                    let start = authority_start + user.len() + 1;
                    out.push((start, start + password.len(), user.to_string()));
                }
            }
        }
        at = authority_start;
    }
    out
}

/// The credentials inside a longer text (a URL, a text body, a header): `(start, end, shape)`
/// of each token that is one by shape. Tokens are split at characters no key holds.
pub fn find_in_text(text: &str) -> Vec<(usize, usize, Shape)> {
    let mut out = Vec::new();
    let is_sep = |c: char| {
        c.is_whitespace() || "\"'&?,;:()[]{}<>|\\!#*^`@$".contains(c) || c == '/' || c == '='
    };
    let mut start = None;
    let bytes_end = text.len();
    for (i, c) in text.char_indices().chain(std::iter::once((bytes_end, ' '))) {
        if is_sep(c) {
            if let Some(s) = start.take() {
                // `=` ends a token unless it is base64 padding at its end.
                let mut end = i;
                let rest = &text[i..];
                let pad = rest.chars().take_while(|&c| c == '=').count();
                if pad > 0 && pad <= 2 {
                    let after = rest[pad..].chars().next();
                    if after.is_none_or(|a| a != '=' && is_sep(a) || a == '&') {
                        end = i + pad;
                    }
                }
                if let Some(shape) = shape(&text[s..end]).filter(|_| !in_template(text, s)) {
                    out.push((s, end, shape));
                }
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    out
}

/// Whether byte `at` of `text` stands inside a `{{ … }}` template (an `env.NAME` a scrub
/// wrote is no key, however random its name looks).
fn in_template(text: &str, at: usize) -> bool {
    let before = &text[..at];
    before
        .rfind("{{")
        .is_some_and(|open| !before[open..].contains("}}"))
}

/// Names given so far: the same credential gets the same variable everywhere; equal values
/// from different fields get distinct names unless the value is a credential by its shape
/// (the same JWT in a header and a cookie is one login; `1` in two cookies is not).
#[derive(Default)]
pub struct Namer {
    /// `(literal, wanted name, variable)`.
    given: Vec<(String, String, String)>,
}

impl Namer {
    pub fn name(
        &mut self,
        literal: &str,
        wanted: String,
        report: &mut Report,
        why: &str,
    ) -> String {
        let shaped = shape(literal).is_some();
        if let Some((_, _, v)) = self
            .given
            .iter()
            .find(|(l, w, _)| l == literal && (shaped || *w == wanted))
        {
            return v.clone();
        }
        let mut name = wanted.clone();
        let mut n = 2;
        while self.given.iter().any(|(_, _, v)| *v == name) {
            name = format!("{wanted}_{n}");
            n += 1;
        }
        self.given.push((literal.to_string(), wanted, name.clone()));
        report.variable(&name, why);
        name
    }

    /// Every `(literal, variable)` given so far, longest literal first (so that a token is
    /// replaced before a shorter one it contains).
    pub fn given(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .given
            .iter()
            .map(|(l, _, v)| (l.as_str(), v.as_str()))
            .collect();
        out.sort_by_key(|(l, _)| std::cmp::Reverse(l.len()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_a_scrub_wrote_is_no_key_however_random_its_name() {
        let written = "{{ env.COOKIE_AMCVS_843_F02_BE53271_A1_A0_A490_D4_C_40_ADOBE_ORG }}";
        assert_eq!(find_in_text(written), []);
        let key = "Zx8Qw3Lr9Tb2Yk7Mn4Vc6Hp1Sd5Fg0JjKuE2";
        assert_eq!(
            find_in_text(&format!("{written}&k={key}")),
            [(
                written.len() + 3,
                written.len() + 3 + key.len(),
                Shape::Random
            )]
        );
    }

    #[test]
    fn a_credential_without_a_telling_field_name_is_named_after_its_shape() {
        let cases = [
            (Shape::Jwt, "JWT"),
            (Shape::Vendor("GitHub token"), "GITHUB_TOKEN"),
            (Shape::Vendor("AWS access key"), "AWS_ACCESS_KEY"),
            (Shape::Random, "SECRET"),
        ];
        for (shape, want) in cases {
            assert_eq!(shape.env_stem(), want, "{shape:?}");
        }
    }

    #[test]
    fn credential_names() {
        for n in [
            "token",
            "access_token",
            "refresh_token",
            "id_token",
            "X-Access-Token",
            "X-Amz-Security-Token",
            "X-Insert-Key",
            "session_id",
            "JSESSIONID",
            "PHPSESSID",
            "password",
            "client_secret",
            "X-Api-Key",
            "api_key",
            "Authorization",
            "X-CSRF-Token",
            "pin",
            "sid",
            "X-Auth-Email",
        ] {
            assert!(is_credential_name(n), "{n}");
        }
        for n in [
            "username",
            "page",
            "nextPageToken",
            "author",
            "Content-Type",
            "Accept",
            "title",
            "spinner",
            "X-Amz-Date",
            "keywords",
            "shipping",
        ] {
            assert!(!is_credential_name(n), "{n}");
        }
    }

    #[test]
    fn credential_shapes() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(shape(jwt), Some(Shape::Jwt));
        assert_eq!(
            shape("ghp_R2d2C3poTheDroidsYouAreLooking4"),
            Some(Shape::Vendor("GitHub token"))
        );
        assert_eq!(
            shape("sk_live_51HxYzAbCdEfGhIjKlMn"),
            Some(Shape::Vendor("Stripe secret key"))
        );
        assert_eq!(
            shape("AKIAIOSFODNN7EXAMPLE"),
            Some(Shape::Vendor("AWS access key"))
        );
        assert_eq!(
            shape("xoxb-1234567890-abcdefghij"),
            Some(Shape::Vendor("Slack token"))
        );
        assert_eq!(
            shape("Zx8Qw3Lr9Tb2Yk7Mn4Vc6Hp1Sd5Fg0JjKuE2"),
            Some(Shape::Random)
        );
        for plain in [
            "hello world",
            "3f2b8c1e-9a4d-4e7b-8c2d-1a2b3c4d5e6f",
            "deadbeef0123456789abcdef01234567",
            "my-first-post-about-rust-in-2024-and-more",
            "application/json",
            "com.example.service.v1.OrderService",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef",
            "AKIAnotakeyatall",
        ] {
            assert_eq!(shape(plain), None, "{plain}");
        }
        let text = format!("a=1&t={jwt}&k=ghp_R2d2C3poTheDroidsYouAreLooking4");
        let found: Vec<&str> = find_in_text(&text)
            .into_iter()
            .map(|(s, e, _)| &text[s..e])
            .collect();
        assert_eq!(found, [jwt, "ghp_R2d2C3poTheDroidsYouAreLooking4"]);
    }
}
