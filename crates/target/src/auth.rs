//! Sign-in and bearer tokens, so scenarios can exercise a realistic login → use-token flow.
//!
//! Tokens are stateless: `<user>.<32 hex digits>`, where the digits are a keyed hash of the
//! user name under a key chosen at random for each server instance. Checking a token
//! recomputes the hash, so validation costs a few hundred nanoseconds and needs no session
//! table. The hash is SipHash (std's keyed `RandomState`): not a cryptographic MAC, but
//! plenty for a test target whose tokens must merely be unguessable by a load script.

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

    fn mac(&self, user: &str) -> [u64; 2] {
        [self.k1.hash_one(user), self.k2.hash_one(user)]
    }

    /// The token for `user` (who must be a valid user).
    pub fn issue(&self, user: &str) -> String {
        let [a, b] = self.mac(user);
        let mut token = String::with_capacity(user.len() + 33);
        token.push_str(user);
        // Writing to a String cannot fail.
        let _ = write!(token, ".{a:016x}{b:016x}");
        token
    }

    /// The user a token belongs to, or `None` if the token is malformed or forged.
    pub fn verify<'t>(&self, token: &'t str) -> Option<&'t str> {
        let (user, digits) = token.rsplit_once('.')?;
        if digits.len() != 32 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        if !is_valid_user(user) {
            return None;
        }
        let a = u64::from_str_radix(digits.get(..16)?, 16).ok()?;
        let b = u64::from_str_radix(digits.get(16..)?, 16).ok()?;
        let [ea, eb] = self.mac(user);
        // Compare both halves without short-circuiting.
        (((a ^ ea) | (b ^ eb)) == 0).then_some(user)
    }
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
        // Another user's name with this user's hash.
        let forged = t.replacen("user42", "user43", 1);
        assert_eq!(key.verify(&forged), None);
        // Another instance's key.
        assert_eq!(TokenKey::new().verify(&t), None);
        for bad in [
            "",
            ".",
            "user42.",
            "user42.zz",
            "nobody.0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(key.verify(bad), None, "{bad}");
        }
        let mut flipped = t.clone();
        let last = if t.ends_with('0') { '1' } else { '0' };
        flipped.pop();
        flipped.push(last);
        assert_eq!(key.verify(&flipped), None);
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
