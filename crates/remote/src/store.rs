//! A synchronous view of one prefix of an object store: put, put-if-absent, get, head, list.
//! loadlab's commands are synchronous; each `Remote` drives the async store on its own
//! current-thread runtime, so a thread that talks to the store (the uploader, the barrier)
//! never shares a runtime with the load.

use crate::error::RemoteError;
use crate::location::{open_store, Credentials};
use futures_util::StreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use url::Url;

/// One object, its key relative to the prefix it was listed under.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub size: u64,
    /// The store's Last-Modified, seconds since the Unix epoch (the store's clock).
    pub modified_unix_s: f64,
}

/// What a put-if-absent did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    Created,
    /// Someone else's object was there first; it was left as it was.
    Existed,
    /// The store cannot put conditionally (`AWS_CONDITIONAL_PUT=disabled`): written anyway.
    Overwrote,
}

pub struct Remote {
    store: Arc<dyn ObjectStore>,
    root: Path,
    url: String,
    runtime: Arc<tokio::runtime::Runtime>,
    credentials: Credentials,
    /// Some operation on the store succeeded: credentials were found, and a later failure is
    /// the store's, not a missing credential's.
    reached: Arc<std::sync::atomic::AtomicBool>,
}

fn runtime() -> Result<tokio::runtime::Runtime, RemoteError> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

impl Remote {
    /// Opens the store a URL names (`s3://bucket/prefix`…), at the URL's prefix.
    pub fn open(url: &Url) -> Result<Remote, RemoteError> {
        let (store, root, credentials) = open_store(url)?;
        Ok(Remote {
            store,
            root,
            url: url.as_str().trim_end_matches('/').to_string(),
            runtime: Arc::new(runtime()?),
            credentials,
            reached: Arc::default(),
        })
    }

    /// The same store at a sub-prefix (`segments/2`).
    pub fn at(&self, rel: &str) -> Remote {
        Remote {
            store: self.store.clone(),
            root: self.key(rel),
            url: format!("{}/{}", self.url, rel.trim_matches('/')),
            runtime: self.runtime.clone(),
            credentials: self.credentials,
            reached: self.reached.clone(),
        }
    }

    /// The same prefix with a runtime of its own, for another thread.
    pub fn for_thread(&self) -> Result<Remote, RemoteError> {
        Ok(Remote {
            store: self.store.clone(),
            root: self.root.clone(),
            url: self.url.clone(),
            runtime: Arc::new(runtime()?),
            credentials: self.credentials,
            reached: self.reached.clone(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn key(&self, rel: &str) -> Path {
        let mut parts: Vec<String> = self.root.parts().map(|p| p.as_ref().to_string()).collect();
        parts.extend(rel.split('/').filter(|p| !p.is_empty()).map(String::from));
        Path::from_iter(parts)
    }

    fn err(&self, op: &'static str, rel: &str, e: object_store::Error) -> RemoteError {
        let first = !self.reached.load(std::sync::atomic::Ordering::Relaxed);
        if first && self.credentials == Credentials::InstanceMetadata {
            return RemoteError::NoCredentials {
                url: self.url.clone(),
                source: Box::new(e),
            };
        }
        RemoteError::store(&self.url, op, rel, e)
    }

    /// Notes that the store answered (see `reached`).
    fn answered<T>(&self, r: Result<T, object_store::Error>) -> Result<T, object_store::Error> {
        if r.is_ok()
            || matches!(
                r,
                Err(object_store::Error::NotFound { .. }
                    | object_store::Error::AlreadyExists { .. })
            )
        {
            self.reached
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }

    pub fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<(), RemoteError> {
        let key = self.key(rel);
        self.answered(
            self.runtime
                .block_on(self.store.put(&key, PutPayload::from(bytes))),
        )
        .map(|_| ())
        .map_err(|e| self.err("write", rel, e))
    }

    /// Writes `rel` only if nothing is there yet (race-free where the store supports it).
    pub fn put_if_absent(&self, rel: &str, bytes: Vec<u8>) -> Result<PutOutcome, RemoteError> {
        let key = self.key(rel);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let payload = PutPayload::from(bytes.clone());
        match self.answered(
            self.runtime
                .block_on(self.store.put_opts(&key, payload, opts)),
        ) {
            Ok(_) => Ok(PutOutcome::Created),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(PutOutcome::Existed),
            Err(object_store::Error::NotImplemented { .. }) => {
                self.put(rel, bytes)?;
                Ok(PutOutcome::Overwrote)
            }
            Err(e) => Err(self.err("write", rel, e)),
        }
    }

    /// The object's bytes, `None` when there is none.
    pub fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, RemoteError> {
        let key = self.key(rel);
        let got = self.answered(self.runtime.block_on(async {
            let r = self.store.get(&key).await?;
            r.bytes().await
        }));
        match got {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err("read", rel, e)),
        }
    }

    pub fn head(&self, rel: &str) -> Result<Option<Entry>, RemoteError> {
        let key = self.key(rel);
        match self.answered(self.runtime.block_on(self.store.head(&key))) {
            Ok(m) => Ok(Some(self.entry(m))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err("read", rel, e)),
        }
    }

    /// Every object under `rel` (recursively), keys relative to this prefix, sorted.
    pub fn list(&self, rel: &str) -> Result<Vec<Entry>, RemoteError> {
        let prefix = self.key(rel);
        let listed: Result<Vec<object_store::ObjectMeta>, object_store::Error> =
            self.answered(self.runtime.block_on(async {
                let mut stream = self.store.list(Some(&prefix));
                let mut all = Vec::new();
                while let Some(m) = stream.next().await {
                    all.push(m?);
                }
                Ok(all)
            }));
        let mut entries: Vec<Entry> = match listed {
            Ok(all) => all.into_iter().map(|m| self.entry(m)).collect(),
            Err(object_store::Error::NotFound { .. }) => Vec::new(),
            Err(e) => return Err(self.err("list", rel, e)),
        };
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(entries)
    }

    fn entry(&self, m: object_store::ObjectMeta) -> Entry {
        let root: Vec<String> = self.root.parts().map(|p| p.as_ref().to_string()).collect();
        let parts: Vec<String> = m.location.parts().map(|p| p.as_ref().to_string()).collect();
        let key = parts.get(root.len()..).unwrap_or_default().join("/");
        Entry {
            key,
            size: m.size,
            modified_unix_s: m.last_modified.timestamp() as f64
                + f64::from(m.last_modified.timestamp_subsec_nanos()) / 1e9,
        }
    }
}

/// This machine's clock, seconds since the Unix epoch.
pub(crate) fn now_unix_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
