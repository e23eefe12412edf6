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

/// Where an S3 store's credentials come from, so that a failure can say what to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Credentials {
    /// Given in the environment (keys, a web identity, a container's), or none needed.
    Given,
    /// None in the environment: object_store asks the cloud instance metadata service
    /// (169.254.169.254), which answers only on a cloud machine that has a role.
    InstanceMetadata,
}

/// No AWS credentials in the environment: the builder will fall back to the instance
/// metadata service.
fn s3_credentials(builder: &AmazonS3Builder) -> Credentials {
    use object_store::aws::AmazonS3ConfigKey as Key;
    let given = [
        Key::AccessKeyId,
        Key::WebIdentityTokenFile,
        Key::ContainerCredentialsRelativeUri,
        Key::ContainerCredentialsFullUri,
    ]
    .iter()
    .any(|k| builder.get_config_value(k).is_some_and(|v| !v.is_empty()))
        || builder
            .get_config_value(&Key::SkipSignature)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if given {
        Credentials::Given
    } else {
        Credentials::InstanceMetadata
    }
}

/// Opens the store a URL names; the returned path is the URL's prefix inside it.
pub(crate) fn open_store(
    url: &Url,
) -> Result<(Arc<dyn ObjectStore>, Path, Credentials), RemoteError> {
    // reqwest is built without a bundled TLS provider: use the ring one the workspace builds.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let text = url.as_str();
    let bad = |message: String| RemoteError::BadUrl {
        url: text.to_string(),
        message,
    };
    let (scheme, path) = ObjectStoreScheme::parse(url).map_err(|e| bad(e.to_string()))?;
    let mut credentials = Credentials::Given;
    let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
        ObjectStoreScheme::Local => {
            let dir = url.to_file_path().map_err(|_| {
                bad("a file:// URL needs an absolute path, e.g. file:///tmp/runs".into())
            })?;
            std::fs::create_dir_all(&dir)
                .map_err(|e| bad(format!("cannot create {}: {e}", dir.display())))?;
            return LocalFileSystem::new_with_prefix(&dir)
                .map(|s| {
                    (
                        Arc::new(s) as Arc<dyn ObjectStore>,
                        Path::default(),
                        Credentials::Given,
                    )
                })
                .map_err(|e| bad(e.to_string()));
        }
        ObjectStoreScheme::AmazonS3 => {
            let builder = AmazonS3Builder::from_env().with_url(text);
            credentials = s3_credentials(&builder);
            builder.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }
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
        .map(|s| (s, path, credentials))
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

    #[test]
    fn s3_without_credentials_in_the_environment_falls_back_to_the_instance_metadata() {
        use object_store::aws::AmazonS3ConfigKey as Key;
        let bare = || AmazonS3Builder::new().with_url("s3://bucket/p");
        assert_eq!(s3_credentials(&bare()), Credentials::InstanceMetadata);
        let cases = [
            (Key::AccessKeyId, "AKIA", Credentials::Given),
            (Key::AccessKeyId, "", Credentials::InstanceMetadata),
            (
                Key::WebIdentityTokenFile,
                "/var/run/token",
                Credentials::Given,
            ),
            (
                Key::ContainerCredentialsRelativeUri,
                "/v2/creds",
                Credentials::Given,
            ),
            (Key::SkipSignature, "true", Credentials::Given),
            (Key::SkipSignature, "false", Credentials::InstanceMetadata),
            (Key::Region, "eu-west-1", Credentials::InstanceMetadata),
        ];
        for (key, value, want) in cases {
            let builder = bare().with_config(key, value);
            assert_eq!(s3_credentials(&builder), want, "{key:?}={value:?}");
        }
    }
}
