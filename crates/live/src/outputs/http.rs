//! One blocking HTTP POST per interval (the sender stays a plain thread), bounded by a
//! timeout below the end's flush bound.

use super::SendError;
use std::time::Duration;

/// A send slower than this fails (and is retried with backoff by the next interval).
pub const SEND_TIMEOUT: Duration = Duration::from_millis(1500);

pub struct Poster {
    /// The client, or why none could be made (said by every send).
    client: Result<loadlab_http_client::Client, String>,
    url: String,
    headers: Vec<(&'static str, &'static str)>,
}

impl Poster {
    pub fn new(url: &str, headers: Vec<(&'static str, &'static str)>) -> Self {
        let client = loadlab_http_client::client(
            SEND_TIMEOUT,
            concat!("loadlab/", env!("CARGO_PKG_VERSION")),
        );
        Self {
            client,
            url: url.to_string(),
            headers,
        }
    }

    /// POSTs `body`; a status outside 2xx is an error carrying the receiver's words.
    pub fn post(&self, body: &[u8]) -> Result<(), SendError> {
        let client = self
            .client
            .as_ref()
            .map_err(|e| SendError::Http(e.clone()))?;
        let mut req = client.post(&self.url);
        for (k, v) in &self.headers {
            req = req.header(*k, *v);
        }
        let resp = loadlab_http_client::send(req.body(body.to_vec())).map_err(SendError::Http)?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(());
        }
        let text = loadlab_http_client::text_prefix(resp, 4096);
        Err(SendError::Status {
            status,
            body: text.trim().chars().take(200).collect(),
        })
    }
}
