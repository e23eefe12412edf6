//! Sign-in and bearer tokens, so scenarios can exercise a realistic login → use-token flow.
//!
//! Tokens are stateless: `<user>.<16 hex digits>.<32 hex digits>`. The first digits are a
//! nonce drawn at each sign-in, so every sign-in gets a token of its own and a token copied
//! from a recording is not what the next sign-in returns; the last digits are a keyed hash of
//! the user name and the nonce under a key chosen at random for each server instance, so a
//! token of another instance (a recording made against an earlier run) is refused. Checking
//! a token recomputes the hash, so validation costs a few hundred nanoseconds and needs no
//! session table; for the same reason an earlier token of the same user stays valid for the
//! life of the instance, as bearer tokens without expiry do.
//!
//! Neither part is cryptographic: the nonce comes from `fastrand` (a fast PRNG seeded per
//! thread) and the hash is SipHash (std's keyed `RandomState`), not a MAC. That is plenty for
//! a test target whose tokens must merely be unguessable by a load script.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::BuildHasher;

/// The password every built-in user has.
pub const PASSWORD: &str = "password";

/// Issues and checks tokens for one server instance.
#[derive(Debug)]
pub struct TokenKey {
    k1: RandomState,
    k2: RandomState,
}

impl Default for TokenKey {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenKey {
    /// A fresh random key: tokens of another instance are not accepted.
    pub fn new() -> Self {
        TokenKey {
            k1: RandomState::new(),
            k2: RandomState::new(),
        }
    }

    fn mac(&self, user: &str, nonce: u64) -> [u64; 2] {
        [
            self.k1.hash_one((user, nonce)),
            self.k2.hash_one((user, nonce)),
        ]
    }

    /// A new token for `user` (who must be a valid user): another one at every call.
    pub fn issue(&self, user: &str) -> String {
        self.issue_with_nonce(user, fastrand::u64(..))
    }

    fn issue_with_nonce(&self, user: &str, nonce: u64) -> String {
        let [a, b] = self.mac(user, nonce);
        let mut token = String::with_capacity(user.len() + 50);
        token.push_str(user);
        // Writing to a String cannot fail.
        let _ = write!(token, ".{nonce:016x}.{a:016x}{b:016x}");
        token
    }

    /// The user a token belongs to, or `None` if the token is malformed, forged or was
    /// issued by another server instance.
    pub fn verify<'t>(&self, token: &'t str) -> Option<&'t str> {
        let (rest, digits) = token.rsplit_once('.')?;
        let (user, nonce) = rest.rsplit_once('.')?;
        if digits.len() != 32 || nonce.len() != 16 || !is_valid_user(user) {
            return None;
        }
        let nonce = hex_u64(nonce)?;
        let a = hex_u64(digits.get(..16)?)?;
        let b = hex_u64(digits.get(16..)?)?;
        let [ea, eb] = self.mac(user, nonce);
        // Compare both halves without short-circuiting.
        (((a ^ ea) | (b ^ eb)) == 0).then_some(user)
    }
}

/// Exactly 16 hex digits (no sign, no prefix) as a number.
fn hex_u64(digits: &str) -> Option<u64> {
    if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// Role of a built-in account, derived from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
        }
    }
}

/// `user1`..`user1000` and `admin1`..`admin100` exist (no leading zeros).
pub fn role_of(user: &str) -> Option<Role> {
    let (role, digits, max) = if let Some(d) = user.strip_prefix("user") {
        (Role::User, d, 1000)
    } else if let Some(d) = user.strip_prefix("admin") {
        (Role::Admin, d, 100)
    } else {
        return None;
    };
    if digits.is_empty() || digits.len() > 4 || digits.starts_with('0') {
        return None;
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (1..=max).contains(&n).then_some(role)
}

/// Whether `user` is one of the built-in accounts.
pub fn is_valid_user(user: &str) -> bool {
    role_of(user).is_some()
}

/// Checks a username/password pair.
pub fn check_credentials(user: &str, password: &str) -> Option<Role> {
    let role = role_of(user)?;
    (password == PASSWORD).then_some(role)
}

/// The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive).
pub fn bearer_token(header: &[u8]) -> Option<&str> {
    let value = std::str::from_utf8(header).ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_and_admins() {
        assert_eq!(role_of("user1"), Some(Role::User));
        assert_eq!(role_of("user1000"), Some(Role::User));
        assert_eq!(role_of("admin100"), Some(Role::Admin));
        for bad in [
            "user0",
            "user1001",
            "user01",
            "admin101",
            "user",
            "admin",
            "user+1",
            "bob",
            "",
            "user10000",
        ] {
            assert_eq!(role_of(bad), None, "{bad}");
        }
        assert!(check_credentials("user42", "password").is_some());
        assert!(check_credentials("user42", "Password").is_none());
    }

    #[test]
    fn tokens_round_trip_and_reject_forgery() {
        let key = TokenKey::new();
        let t = key.issue("user42");
        assert_eq!(key.verify(&t), Some("user42"));
        // Another user's name with this user's nonce and hash.
        let forged = t.replacen("user42", "user43", 1);
        assert_eq!(key.verify(&forged), None);
        // Another instance's key.
        assert_eq!(TokenKey::new().verify(&t), None);
        for bad in [
            "",
            ".",
            "..",
            "user42.",
            "user42.zz",
            "user42.0123456789abcdef0123456789abcdef",
            "user42..0123456789abcdef0123456789abcdef",
            "user42.+123456789abcdef.0123456789abcdef0123456789abcdef",
            "nobody.0123456789abcdef.0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(key.verify(bad), None, "{bad}");
        }
        for i in [t.len() - 1, t.len() - 32, "user42.".len()] {
            let mut flipped = t.clone().into_bytes();
            flipped[i] = if flipped[i] == b'0' { b'1' } else { b'0' };
            let flipped = String::from_utf8(flipped).unwrap();
            assert_eq!(key.verify(&flipped), None, "{flipped}");
        }
    }

    #[test]
    fn every_sign_in_gets_its_own_token_and_earlier_ones_stay_valid() {
        let key = TokenKey::new();
        let first = key.issue("user7");
        let second = key.issue("user7");
        assert_ne!(first, second, "a token is new at each sign-in");
        assert_eq!(key.verify(&first), Some("user7"));
        assert_eq!(key.verify(&second), Some("user7"));
        let (user, rest) = first.split_once('.').unwrap();
        let (nonce, hash) = rest.split_once('.').unwrap();
        assert_eq!((user, nonce.len(), hash.len()), ("user7", 16, 32));
        // The nonce is bound to the hash: one sign-in's nonce with another's hash fails.
        let (_, second_hash) = second.rsplit_once('.').unwrap();
        assert_eq!(key.verify(&format!("user7.{nonce}.{second_hash}")), None);
        // The same nonce gives the same token (the hash is keyed, not random).
        assert_eq!(
            key.issue_with_nonce("user7", 5),
            key.issue_with_nonce("user7", 5)
        );
        assert_ne!(
            key.issue_with_nonce("user7", 5),
            key.issue_with_nonce("user8", 5)
        );
    }

    #[test]
    fn bearer_header() {
        assert_eq!(bearer_token(b"Bearer abc"), Some("abc"));
        assert_eq!(bearer_token(b"bearer  abc "), Some("abc"));
        assert_eq!(bearer_token(b"Basic abc"), None);
        assert_eq!(bearer_token(b"Bearer "), None);
        assert_eq!(bearer_token(&[0xff, 0xfe]), None);
    }
}
