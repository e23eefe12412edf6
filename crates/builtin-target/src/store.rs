//! In-memory storage behind the CRUD endpoints, bounded so that an hours-long load test
//! cannot grow the target's memory without limit: only the most recent applications are
//! kept (by count and by approximate size), older ones answer 404 like deleted records.
//!
//! An application belongs to the user who created it: reading or submitting it with another
//! user's token is [`Access::NotOwner`] (the handler answers 403), so a scenario that shares
//! an application id between users, or replays a recorded id, fails as it would on a real API.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{Map, Value};

/// Applications kept at most.
pub const MAX_APPLICATIONS: usize = 100_000;
/// Approximate bytes of application data kept at most.
pub const MAX_APPLICATION_BYTES: usize = 64 * 1024 * 1024;
/// Bookkeeping cost counted per application on top of its body.
const PER_ENTRY_OVERHEAD: usize = 128;

/// Kinds of records that only need an id (they are created, never read back).
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    User,
    Transaction,
    Reservation,
}

/// All mutable state of the CRUD endpoints.
#[derive(Debug)]
pub struct Store {
    next_application: AtomicU64,
    next_user: AtomicU64,
    next_transaction: AtomicU64,
    next_reservation: AtomicU64,
    applications: Mutex<Applications>,
    max_count: usize,
    max_bytes: usize,
}

#[derive(Debug, Default)]
struct Applications {
    by_id: HashMap<u64, Stored>,
    /// Ids in insertion order, oldest first, for eviction.
    order: VecDeque<u64>,
    bytes: usize,
}

#[derive(Debug)]
struct Stored {
    /// The full JSON object as returned to clients (including id, status, owner).
    object: Map<String, Value>,
    /// The user who created it (also `object["owner"]`, which this copy saves parsing).
    owner: Box<str>,
    size: usize,
}

/// What a user may do with an application id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access<T> {
    /// The application exists and is the user's.
    Granted(T),
    /// No such application (never created, or evicted).
    Missing,
    /// It exists but another user created it.
    NotOwner,
}

impl Default for Store {
    fn default() -> Self {
        Self::with_limits(MAX_APPLICATIONS, MAX_APPLICATION_BYTES)
    }
}

impl Store {
    /// A store keeping at most `max_count` applications and about `max_bytes` of them.
    pub fn with_limits(max_count: usize, max_bytes: usize) -> Self {
        Store {
            next_application: AtomicU64::new(1),
            next_user: AtomicU64::new(1),
            next_transaction: AtomicU64::new(1),
            next_reservation: AtomicU64::new(1),
            applications: Mutex::new(Applications::default()),
            max_count: max_count.max(1),
            max_bytes,
        }
    }

    /// A new id for a record that is not kept.
    pub fn next_id(&self, counter: Counter) -> u64 {
        let c = match counter {
            Counter::User => &self.next_user,
            Counter::Transaction => &self.next_transaction,
            Counter::Reservation => &self.next_reservation,
        };
        c.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Applications> {
        // Nothing panics while holding the lock; recover the data if something ever did.
        self.applications
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores a new draft application made of the client's `fields`; returns the stored
    /// object (with `id`, `owner` and `status` set by the server).
    pub fn create_application(
        &self,
        mut fields: Map<String, Value>,
        owner: &str,
        body_len: usize,
    ) -> Map<String, Value> {
        let id = self.next_application.fetch_add(1, Ordering::Relaxed);
        fields.insert("id".into(), Value::from(id));
        fields.insert("owner".into(), Value::from(owner));
        fields.insert("status".into(), Value::from("draft"));
        let size = body_len + PER_ENTRY_OVERHEAD;
        let response = fields.clone();
        let mut apps = self.lock();
        apps.by_id.insert(
            id,
            Stored {
                object: fields,
                owner: owner.into(),
                size,
            },
        );
        apps.order.push_back(id);
        apps.bytes += size;
        while apps.order.len() > self.max_count
            || (apps.bytes > self.max_bytes && apps.order.len() > 1)
        {
            let Some(old) = apps.order.pop_front() else {
                break;
            };
            if let Some(gone) = apps.by_id.remove(&old) {
                apps.bytes -= gone.size;
            }
        }
        response
    }

    /// The application serialized as JSON, if it is (still) stored and `user` created it.
    pub fn application_json(&self, id: u64, user: &str) -> Access<Vec<u8>> {
        let apps = self.lock();
        match apps.by_id.get(&id) {
            None => Access::Missing,
            Some(stored) if *stored.owner != *user => Access::NotOwner,
            Some(stored) => match serde_json::to_vec(&stored.object) {
                Ok(json) => Access::Granted(json),
                // A map of JSON values always serializes; were it ever not to, say missing.
                Err(_) => Access::Missing,
            },
        }
    }

    /// Marks an application of `user` submitted.
    pub fn submit_application(&self, id: u64, user: &str) -> Access<()> {
        let mut apps = self.lock();
        match apps.by_id.get_mut(&id) {
            None => Access::Missing,
            Some(stored) if *stored.owner != *user => Access::NotOwner,
            Some(stored) => {
                stored
                    .object
                    .insert("status".into(), Value::from("submitted"));
                Access::Granted(())
            }
        }
    }

    /// Applications currently stored.
    #[cfg(test)]
    pub fn application_count(&self) -> usize {
        self.lock().by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(access: Access<Vec<u8>>) -> Value {
        match access {
            Access::Granted(json) => serde_json::from_slice(&json).expect("valid json"),
            other => panic!("not granted: {other:?}"),
        }
    }

    #[test]
    fn create_get_submit() {
        let store = Store::default();
        let mut fields = Map::new();
        fields.insert("name".into(), Value::from("x"));
        fields.insert("id".into(), Value::from(999)); // overridden by the server
        fields.insert("owner".into(), Value::from("user2")); // overridden too
        let created = store.create_application(fields, "user1", 20);
        let id = created["id"].as_u64().expect("numeric id");
        assert_eq!(id, 1);
        assert_eq!(created["status"], "draft");
        assert_eq!(created["name"], "x");
        assert_eq!(created["owner"], "user1");
        assert_eq!(store.submit_application(id, "user1"), Access::Granted(()));
        let got = json_of(store.application_json(id, "user1"));
        assert_eq!(got["status"], "submitted");
        assert_eq!(store.submit_application(12345, "user1"), Access::Missing);
        assert_eq!(store.application_json(12345, "user1"), Access::Missing);
    }

    #[test]
    fn applications_belong_to_their_creator() {
        let store = Store::default();
        let id = store.create_application(Map::new(), "user1", 2)["id"]
            .as_u64()
            .unwrap();
        // Not another user, not an admin, not a name that merely starts the same.
        for other in ["user2", "admin1", "user10", "user", ""] {
            assert_eq!(
                store.application_json(id, other),
                Access::NotOwner,
                "{other}"
            );
            assert_eq!(
                store.submit_application(id, other),
                Access::NotOwner,
                "{other}"
            );
        }
        // Nothing changed for the owner.
        assert_eq!(
            json_of(store.application_json(id, "user1"))["status"],
            "draft"
        );
    }

    #[test]
    fn memory_stays_bounded() {
        let store = Store::with_limits(10, 1 << 20);
        for _ in 0..100 {
            store.create_application(Map::new(), "user1", 2);
        }
        assert_eq!(store.application_count(), 10);
        assert_eq!(store.application_json(90, "user1"), Access::Missing);
        assert!(matches!(
            store.application_json(91, "user1"),
            Access::Granted(_)
        ));
        assert!(matches!(
            store.application_json(100, "user1"),
            Access::Granted(_)
        ));

        let store = Store::with_limits(1000, 10 * (1000 + PER_ENTRY_OVERHEAD));
        for _ in 0..50 {
            store.create_application(Map::new(), "user1", 1000);
        }
        assert_eq!(store.application_count(), 10);
    }
}
