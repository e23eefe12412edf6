//! `{{ env.NAME }}` where a URL's origin stands — `get: "{{ env.API }}/users"`,
//! `target: "https://{{ env.HOST }}"` — is filled in when the file is loaded, as every
//! environment value is: the origin is then known before the run, when connections open, and
//! the URL is checked as if written out. Other variables stay out of origins.

/// `url` with the environment values of its origin filled in: a leading `{{ env.NAME }}`
/// (a whole base URL, or a path), or those in the host of an `http(s)://` URL. Unchanged when
/// its origin holds none.
pub fn with_env_origin(url: &str) -> Result<String, String> {
    if url.starts_with("{{") {
        let Some((value, rest)) = leading_env(url)? else {
            return Ok(url.to_string());
        };
        return Ok(format!("{value}{rest}"));
    }
    let Some(scheme_end) = ["http://", "https://"]
        .iter()
        .find(|s| url.starts_with(**s))
        .map(|s| s.len())
    else {
        return Ok(url.to_string());
    };
    let authority_len = url[scheme_end..]
        .find(['/', '?', '#'])
        .unwrap_or(url.len() - scheme_end);
    let authority = &url[scheme_end..scheme_end + authority_len];
    // The host, after any `user:password@` (whose values `credentials` fills in).
    let host_start = authority.rfind('@').map_or(0, |at| at + 1);
    let mut host = &authority[host_start..];
    if !host.contains("{{") {
        return Ok(url.to_string());
    }
    let mut filled = String::new();
    while let Some(open) = host.find("{{") {
        filled.push_str(&host[..open]);
        match leading_env(&host[open..])? {
            Some((value, rest)) => {
                filled.push_str(&value);
                host = rest;
            }
            None => return Ok(url.to_string()),
        }
    }
    filled.push_str(host);
    let host_at = scheme_end + host_start;
    Ok(format!(
        "{}{filled}{}",
        &url[..host_at],
        &url[scheme_end + authority_len..]
    ))
}

/// The value of the `{{ env.NAME }}` `text` starts with, and the text after it; `None` when
/// it starts with another template.
pub(crate) fn leading_env(text: &str) -> Result<Option<(String, &str)>, String> {
    let Some(close) = text.find("}}") else {
        return Ok(None);
    };
    let Some(name) = text[2..close].trim().strip_prefix("env.") else {
        return Ok(None);
    };
    let value = std::env::var(name).map_err(|_| {
        format!("environment variable `{name}` is not set (used as `{{{{ env.{name} }}}}`)")
    })?;
    Ok(Some((value, &text[close + 2..])))
}

#[cfg(test)]
mod tests {
    use super::with_env_origin;

    #[test]
    fn an_origin_from_the_environment_is_filled_in_when_loaded() {
        std::env::set_var("LOADLAB_URL_ENV_BASE", "http://127.0.0.1:8080");
        std::env::set_var("LOADLAB_URL_ENV_HOST", "api.example.com");
        std::env::set_var("LOADLAB_URL_ENV_PATH", "/dino");
        for (url, want) in [
            (
                "{{ env.LOADLAB_URL_ENV_BASE }}/users?x={{ vu }}",
                "http://127.0.0.1:8080/users?x={{ vu }}",
            ),
            ("{{ env.LOADLAB_URL_ENV_PATH }}", "/dino"),
            (
                "https://{{ env.LOADLAB_URL_ENV_HOST }}:8443/a/{{ vu }}",
                "https://api.example.com:8443/a/{{ vu }}",
            ),
            (
                "https://u:{{ env.P }}@{{ env.LOADLAB_URL_ENV_HOST }}/",
                "https://u:{{ env.P }}@api.example.com/",
            ),
            (
                "/plain/{{ env.LOADLAB_URL_ENV_HOST }}",
                "/plain/{{ env.LOADLAB_URL_ENV_HOST }}",
            ),
            ("{{ vu }}/x", "{{ vu }}/x"),
            ("http://{{ vu }}/x", "http://{{ vu }}/x"),
        ] {
            assert_eq!(with_env_origin(url).unwrap(), want, "{url}");
        }
        let e = with_env_origin("{{ env.LOADLAB_URL_ENV_UNSET }}/x").unwrap_err();
        assert!(e.contains("`LOADLAB_URL_ENV_UNSET` is not set"), "{e}");
    }
}
