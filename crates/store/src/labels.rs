//! Labels on runs, studies and capacity searches (`--label commit=abc123`, `LOADLAB_LABELS`):
//! free key=value pairs a CI attaches so a history can say which commit or branch each point
//! was, and filter by them. Kept in the index's `labels` table, one row per (owner, key);
//! a key appears once per owner (the last value given wins).

use crate::{Store, StoreError};
use rusqlite::params;
use std::collections::BTreeMap;

/// Labels of one run or study, sorted by key.
pub type Labels = BTreeMap<String, String>;

/// Environment variable holding labels for every run, study and capacity search:
/// `key=value` pairs separated by commas (`commit=abc123,branch=main`).
pub const LABELS_ENV: &str = "LOADLAB_LABELS";

/// Why a label was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LabelError {
    /// No `=` between key and value.
    #[error("label `{text}` has no `=`: write key=value, e.g. commit=abc123")]
    MissingEquals { text: String },
    /// The key is empty or has a character outside letters, digits, `_`, `-`, `.`.
    #[error("label key `{key}` must be letters, digits, `_`, `-` or `.` (e.g. commit, branch)")]
    BadKey { key: String },
    /// The value is empty.
    #[error("label `{key}` has an empty value: write {key}=VALUE")]
    EmptyValue { key: String },
}

/// Parses one `key=value` label.
pub fn parse_label(text: &str) -> Result<(String, String), LabelError> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(LabelError::MissingEquals {
            text: text.to_string(),
        });
    };
    let key = key.trim();
    let value = value.trim();
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !key_ok {
        return Err(LabelError::BadKey {
            key: key.to_string(),
        });
    }
    if value.is_empty() {
        return Err(LabelError::EmptyValue {
            key: key.to_string(),
        });
    }
    Ok((key.to_string(), value.to_string()))
}

/// Parses the comma-separated labels of [`LABELS_ENV`] (empty items are skipped).
pub fn parse_label_list(text: &str) -> Result<Labels, LabelError> {
    text.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(parse_label)
        .collect()
}

/// The labels to store with a run or study: `LOADLAB_LABELS` (`k=v,k=v`), then the `--label`
/// flags over it. A bad environment value is an error naming the variable.
pub fn labels_from_env(flags: &[(String, String)]) -> Result<Labels, String> {
    let mut labels = match std::env::var(LABELS_ENV) {
        Ok(text) => parse_label_list(&text).map_err(|e| format!("{LABELS_ENV}: {e}"))?,
        Err(_) => Labels::new(),
    };
    labels.extend(flags.iter().cloned());
    Ok(labels)
}

/// Whether `labels` has every pair of `filter`.
pub fn matches(labels: &Labels, filter: &Labels) -> bool {
    filter.iter().all(|(k, v)| labels.get(k) == Some(v))
}

impl Store {
    /// Sets labels on a run, study or capacity search (replacing a key already set).
    pub fn set_labels(&self, owner: &str, labels: &Labels) -> Result<(), StoreError> {
        for (key, value) in labels {
            self.conn().execute(
                "INSERT INTO labels (owner, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT(owner, key) DO UPDATE SET value = excluded.value",
                params![owner, key, value],
            )?;
        }
        Ok(())
    }

    /// The labels of a run, study or capacity search (empty for ones stored before labels).
    pub fn labels(&self, owner: &str) -> Result<Labels, StoreError> {
        let mut stmt = self
            .conn()
            .prepare("SELECT key, value FROM labels WHERE owner = ?1")?;
        let rows = stmt
            .query_map(params![owner], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse_and_refuse_with_the_fix() {
        assert_eq!(
            parse_label("commit=abc=1").unwrap(),
            ("commit".into(), "abc=1".into())
        );
        assert!(matches!(
            parse_label("commit"),
            Err(LabelError::MissingEquals { .. })
        ));
        assert!(matches!(parse_label("=x"), Err(LabelError::BadKey { .. })));
        assert!(matches!(
            parse_label("a b=x"),
            Err(LabelError::BadKey { .. })
        ));
        assert!(matches!(
            parse_label("branch="),
            Err(LabelError::EmptyValue { .. })
        ));
        let list = parse_label_list("commit=abc, branch=main,,").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list["branch"], "main");
    }

    #[test]
    fn a_filter_needs_every_pair() {
        let labels = parse_label_list("commit=abc,branch=main").unwrap();
        assert!(matches(&labels, &Labels::new()));
        assert!(matches(&labels, &parse_label_list("branch=main").unwrap()));
        assert!(!matches(&labels, &parse_label_list("branch=dev").unwrap()));
    }
}
