//! Sign-ups that must each bring an e-mail of their own (`POST /api/signups`), as a real
//! registration API insists: a repeated e-mail is refused with 409. A scenario that shares
//! rows between VUs or generators (`pick: unique`, `split: segments`) meets it here, and a
//! test can count what the target saw. The e-mails kept are bounded: after [`MAX_SIGNUPS`]
//! the oldest are forgotten, so an hours-long run cannot grow the target without limit.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// E-mails remembered at most.
pub const MAX_SIGNUPS: usize = 1_000_000;

/// What became of one sign-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signup {
    /// A new e-mail: the account's id.
    Created(u64),
    /// The e-mail signed up before.
    Taken,
}

#[derive(Debug)]
pub struct Signups {
    next_id: AtomicU64,
    kept: Mutex<Kept>,
    max: usize,
}

#[derive(Debug, Default)]
struct Kept {
    emails: HashSet<Box<str>>,
    /// E-mails in sign-up order, oldest first, for forgetting.
    order: VecDeque<Box<str>>,
}

impl Default for Signups {
    fn default() -> Self {
        Self::keeping(MAX_SIGNUPS)
    }
}

impl Signups {
    pub fn keeping(max: usize) -> Self {
        Signups {
            next_id: AtomicU64::new(1),
            kept: Mutex::new(Kept::default()),
            max: max.max(1),
        }
    }

    /// Signs `email` up, unless it did before (e-mails compare ignoring ASCII case).
    pub fn sign_up(&self, email: &str) -> Signup {
        let email: Box<str> = email.trim().to_ascii_lowercase().into();
        // Nothing panics while holding the lock; recover the data if something ever did.
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.emails.contains(&email) {
            return Signup::Taken;
        }
        if kept.order.len() >= self.max {
            if let Some(oldest) = kept.order.pop_front() {
                kept.emails.remove(&oldest);
            }
        }
        kept.emails.insert(email.clone());
        kept.order.push_back(email);
        Signup::Created(self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_email_signs_up_once_and_the_oldest_are_forgotten() {
        let s = Signups::keeping(2);
        assert_eq!(s.sign_up("a@x.test"), Signup::Created(1));
        assert_eq!(s.sign_up(" A@X.test"), Signup::Taken);
        assert_eq!(s.sign_up("b@x.test"), Signup::Created(2));
        assert_eq!(s.sign_up("c@x.test"), Signup::Created(3));
        // Two kept: `a` was forgotten, `b` and `c` are not.
        assert_eq!(s.sign_up("b@x.test"), Signup::Taken);
        assert_eq!(s.sign_up("a@x.test"), Signup::Created(4));
    }
}
