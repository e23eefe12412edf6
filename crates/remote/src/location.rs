//! `--results` is a directory (the local run store, unchanged) or an object-store URL; this
//! tells them apart and opens the store a URL names, with the usual environment credentials.

use crate::error::RemoteError;
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use std::path::PathBuf;
use std::sync::Arc;
use url::Url;

/// Where results go.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultsLocation {
    /// The local run store (SQLite index and run directories).
    Dir(PathBuf),
    /// Object storage: `s3://bucket/prefix`, `gs://…`, `az://…`, `file:///dir`.
    Url(Url),
}

const SCHEMES: &str =
    "s3://bucket/prefix, gs://bucket/prefix, az://container/prefix or file:///directory";

/// A directory, or a URL when the text has a `scheme://`.
pub fn parse_location(text: &str) -> Result<ResultsLocation, RemoteError> {
    if !text.contains("://") {
        return Ok(ResultsLocation::Dir(PathBuf::from(text)));
    }
    let bad = |message: String| RemoteError::BadUrl {
        url: text.to_string(),
        message,
    };
    let url = Url::parse(text).map_err(|e| bad(format!("not a valid URL ({e})")))?;
    match ObjectStoreScheme::parse(&url) {
        Ok((
            ObjectStoreScheme::Local
            | ObjectStoreScheme::AmazonS3
            | ObjectStoreScheme::GoogleCloudStorage
            | ObjectStoreScheme::MicrosoftAzure,
            _,
        )) => Ok(ResultsLocation::Url(url)),
        _ => Err(bad(format!(
            "`{}://` is not an object store loadlab knows: use {SCHEMES}, or a directory",
            url.scheme()
        ))),
    }
}

/// Opens the store a URL names; the returned path is the URL's prefix inside it.
pub(crate) fn open_store(url: &Url) -> Result<(Arc<dyn ObjectStore>, Path), RemoteError> {
    // reqwest is built without a bundled TLS provider: use the ring one the workspace builds.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let text = url.as_str();
    let bad = |message: String| RemoteError::BadUrl {
        url: text.to_string(),
        message,
    };
    let (scheme, path) = ObjectStoreScheme::parse(url).map_err(|e| bad(e.to_string()))?;
    let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
        ObjectStoreScheme::Local => {
            let dir = url.to_file_path().map_err(|_| {
                bad("a file:// URL needs an absolute path, e.g. file:///tmp/runs".into())
            })?;
            std::fs::create_dir_all(&dir)
                .map_err(|e| bad(format!("cannot create {}: {e}", dir.display())))?;
            return LocalFileSystem::new_with_prefix(&dir)
                .map(|s| (Arc::new(s) as Arc<dyn ObjectStore>, Path::default()))
                .map_err(|e| bad(e.to_string()));
        }
        ObjectStoreScheme::AmazonS3 => AmazonS3Builder::from_env()
            .with_url(text)
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
        ObjectStoreScheme::GoogleCloudStorage => GoogleCloudStorageBuilder::from_env()
            .with_url(text)
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
        ObjectStoreScheme::MicrosoftAzure => MicrosoftAzureBuilder::from_env()
            .with_url(text)
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
        _ => return Err(bad(format!("use {SCHEMES}"))),
    };
    built
        .map(|s| (s, path))
        .map_err(|e| bad(format!("{e} (credentials and endpoint come from the environment: AWS_*, GOOGLE_*, AZURE_*; see docs/distributed.md)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_urls_are_told_apart() {
        let cases = [
            ("loadlab-results", Some(false)),
            ("/tmp/x", Some(false)),
            ("s3://bucket/prefix", Some(true)),
            ("gs://bucket/p", Some(true)),
            ("az://container/p", Some(true)),
            ("file:///tmp/runs", Some(true)),
            ("ftp://host/x", None),
            ("s3:/bucket", Some(false)),
            ("http://example.com/x", None),
        ];
        for (text, url) in cases {
            let got = parse_location(text);
            match (url, got) {
                (Some(false), Ok(ResultsLocation::Dir(_))) => {}
                (Some(true), Ok(ResultsLocation::Url(_))) => {}
                (None, Err(e)) => assert!(e.is_bad_input(), "{text}: {e}"),
                (want, got) => panic!("{text}: want {want:?}, got {got:?}"),
            }
        }
    }
}
