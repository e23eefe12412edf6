//! One blocking HTTP POST per interval (`ureq`: no async runtime, so the sender stays a plain
//! thread), bounded by a timeout below the end's flush bound.

use super::SendError;
use std::time::Duration;

/// A send slower than this fails (and is retried with backoff by the next interval).
pub const SEND_TIMEOUT: Duration = Duration::from_millis(1500);

pub struct Poster {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(&'static str, &'static str)>,
}

impl Poster {
    pub fn new(url: &str, headers: Vec<(&'static str, &'static str)>) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(SEND_TIMEOUT))
            .http_status_as_error(false)
            .user_agent(concat!("loadlab/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            agent,
            url: url.to_string(),
            headers,
        }
    }

    /// POSTs `body`; a status outside 2xx is an error carrying the receiver's words.
    pub fn post(&self, body: &[u8]) -> Result<(), SendError> {
        let mut req = self.agent.post(&self.url);
        for (k, v) in &self.headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).map_err(|e| SendError::Http(e.to_string()))?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(());
        }
        let text = resp
            .body_mut()
            .with_config()
            .limit(4096)
            .read_to_string()
            .unwrap_or_default();
        Err(SendError::Status {
            status,
            body: text.trim().chars().take(200).collect(),
        })
    }
}
