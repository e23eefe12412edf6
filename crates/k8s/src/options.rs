//! What `loadlab k8s` is told, checked before anything is rendered: names Kubernetes accepts,
//! quantities it parses, and credentials only ever by Secret reference.

use crate::error::K8sError;
use std::path::PathBuf;
use std::time::Duration;

/// The image the manifests use unless `--image` says otherwise. A placeholder: build and
/// push the repository's Dockerfile (docs/distributed.md), then give its name.
pub const DEFAULT_IMAGE: &str = concat!("ghcr.io/OWNER/loadlab:", env!("CARGO_PKG_VERSION"));

/// `--secret-env ENV=SECRET:KEY`: an environment variable taken from a Secret's key.
#[derive(Debug, Clone, PartialEq)]
pub struct SecretKeyRef {
    pub env: String,
    pub secret: String,
    pub key: String,
}

/// `--env NAME=VALUE`: a plain (non-secret) environment variable, e.g. `AWS_ENDPOINT_URL`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvVarSpec {
    pub name: String,
    pub value: String,
}

impl EnvVarSpec {
    /// `NAME=VALUE`, as `--env` takes it.
    pub fn parse(text: &str) -> Result<EnvVarSpec, K8sError> {
        match text.split_once('=') {
            Some((name, value)) => Ok(EnvVarSpec {
                name: name.trim().to_string(),
                value: value.to_string(),
            }),
            None => Err(K8sError::flag(
                "--env",
                format!(
                    "`{text}`: give NAME=VALUE, e.g. AWS_ENDPOINT_URL=http://minio.storage:9000"
                ),
            )),
        }
    }
}

impl SecretKeyRef {
    /// `ENV=SECRET:KEY`, as `--secret-env` takes it.
    pub fn parse(text: &str) -> Result<SecretKeyRef, K8sError> {
        let parsed = text.split_once('=').and_then(|(env, r)| {
            let (secret, key) = r.split_once(':')?;
            Some(SecretKeyRef {
                env: env.trim().to_string(),
                secret: secret.trim().to_string(),
                key: key.trim().to_string(),
            })
        });
        parsed.ok_or_else(|| {
            K8sError::flag(
                "--secret-env",
                format!("`{text}`: give ENV=SECRET:KEY, e.g. AWS_SECRET_ACCESS_KEY=loadlab-s3:secret-key"),
            )
        })
    }
}

#[derive(Debug, Clone)]
pub struct K8sOptions {
    pub scenario_path: PathBuf,
    pub parallelism: u32,
    pub image: String,
    /// Where runs go (`s3://bucket/prefix`); this run's records go under `<results>/<name>`.
    pub results: String,
    /// The run's name: Job name and the last part of its prefix.
    pub name: String,
    pub namespace: Option<String>,
    pub cpu: String,
    pub memory: String,
    /// One generator per node (required pod anti-affinity on the host name).
    pub spread: bool,
    pub merge_job: bool,
    /// `--target` for the pods (overrides the scenario's `target:`).
    pub target: Option<String>,
    /// Secrets whose keys all become environment variables (`envFrom`).
    pub secrets: Vec<String>,
    pub secret_env: Vec<SecretKeyRef>,
    pub env: Vec<EnvVarSpec>,
    pub barrier_timeout: Duration,
    /// `loadlab run` flags that change what the pods send or how they measure it, passed on
    /// to every segment as given (`--http2`, `--http2-client h2`, `--insecure`).
    pub run_flags: Vec<String>,
}

/// Environment variables that carry credentials: refused in `--env`, which would inline them.
const SECRET_ENV: [&str; 9] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS_JSON",
];

/// A DNS-1123 label (what Kubernetes object names and label values here must be).
fn is_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A Kubernetes quantity: a decimal number with an optional SI or binary suffix.
fn is_quantity(s: &str) -> bool {
    let number_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    let digits_ok = !number.is_empty()
        && number.split('.').count() <= 2
        && number
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits_ok
        && [
            "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
        ]
        .contains(&suffix)
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// The longest run name: `<name>-merge` and the pods' `<name>-<index>-<suffix>` stay legal.
const MAX_NAME: usize = 47;

impl K8sOptions {
    pub fn job_name(&self) -> String {
        self.name.clone()
    }

    pub fn merge_job_name(&self) -> String {
        format!("{}-merge", self.name)
    }

    pub fn run_url(&self) -> String {
        format!("{}/{}", self.results.trim_end_matches('/'), self.name)
    }

    pub(crate) fn check(&self) -> Result<(), K8sError> {
        if !(1..=10_000).contains(&self.parallelism) {
            return Err(K8sError::flag(
                "--parallelism",
                format!("{} segments: give 1 to 10000", self.parallelism),
            ));
        }
        if !is_label(&self.name, MAX_NAME) {
            return Err(K8sError::flag(
                "--name",
                format!("`{}` is not a Kubernetes name: use lower-case letters, digits and `-`, at most {MAX_NAME} characters, starting and ending with a letter or digit", self.name),
            ));
        }
        if let Some(ns) = &self.namespace {
            if !is_label(ns, 63) {
                return Err(K8sError::flag(
                    "--namespace",
                    format!("`{ns}` is not a Kubernetes namespace name"),
                ));
            }
        }
        if !is_quantity(&self.cpu) {
            return Err(K8sError::flag(
                "--cpu",
                format!("`{}` is not a CPU quantity: e.g. 2, 1.5 or 500m", self.cpu),
            ));
        }
        if !is_quantity(&self.memory) {
            return Err(K8sError::flag(
                "--memory",
                format!(
                    "`{}` is not a memory quantity: e.g. 1Gi or 512Mi",
                    self.memory
                ),
            ));
        }
        let scheme = self.results.split_once("://").map(|(scheme, _)| scheme);
        if matches!(scheme, None | Some("file")) {
            return Err(K8sError::flag(
                "--results",
                format!("`{}`: pods on other machines need shared object storage: give s3://bucket/prefix, gs://bucket/prefix or az://container/prefix", self.results),
            ));
        }
        for e in &self.env {
            if !is_env_name(&e.name) {
                return Err(K8sError::flag(
                    "--env",
                    format!("`{}` is not an environment variable name", e.name),
                ));
            }
            if SECRET_ENV.contains(&e.name.as_str()) {
                return Err(K8sError::flag(
                    "--env",
                    format!("{} is a credential: it is never written into a manifest; put it in a Secret (kubectl create secret generic NAME --from-literal={}=…) and give --secret NAME or --secret-env {}=NAME:{}", e.name, e.name, e.name, e.name),
                ));
            }
        }
        for s in &self.secret_env {
            if !is_env_name(&s.env) || !is_label(&s.secret, 253) || s.key.is_empty() {
                return Err(K8sError::flag(
                    "--secret-env",
                    format!("`{}={}:{}`: give ENV=SECRET:KEY, e.g. AWS_SECRET_ACCESS_KEY=loadlab-s3:secret-key", s.env, s.secret, s.key),
                ));
            }
        }
        for s in &self.secrets {
            if !is_label(s, 253) {
                return Err(K8sError::flag(
                    "--secret",
                    format!("`{s}` is not a Secret name"),
                ));
            }
        }
        Ok(())
    }
}

/// A run name from the scenario's name and a time stamp: `loadlab-<slug>-<stamp>`.
pub fn default_name(scenario_name: &str, stamp: &str) -> String {
    let mut slug = String::new();
    for c in scenario_name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 20 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let stamp: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit())
        .take(14)
        .collect();
    if slug.is_empty() {
        format!("loadlab-{stamp}")
    } else {
        format!("loadlab-{slug}-{stamp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quantities() {
        for (s, ok) in [
            ("spike-1", true),
            ("Spike", false),
            ("-a", false),
            ("a_b", false),
        ] {
            assert_eq!(is_label(s, 63), ok, "{s}");
        }
        for (s, ok) in [
            ("2", true),
            ("500m", true),
            ("1.5", true),
            ("1Gi", true),
            ("512Mi", true),
            ("1GB", false),
            ("", false),
            ("m", false),
            ("1..5", false),
        ] {
            assert_eq!(is_quantity(s), ok, "{s}");
        }
        assert_eq!(
            default_name("Permit service — spike!", "2026-11-23T10:00:00Z"),
            "loadlab-permit-service-spike-20261123100000"
        );
        assert_eq!(default_name("???", "2026"), "loadlab-2026");
        assert!(is_label(
            &default_name(&"x".repeat(80), "2026-11-23T10:00:00Z"),
            MAX_NAME
        ));
    }
}
