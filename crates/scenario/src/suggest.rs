//! "Did you mean" suggestions for misspelt keys and names.

/// The closest candidate to `word`, if it is close enough to be a plausible typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn suggests_near_misses_only() {
        let keys = ["thresholds", "target", "flows", "load"];
        assert_eq!(closest("therholds", keys), Some("thresholds"));
        assert_eq!(closest("flow", keys), Some("flows"));
        assert_eq!(closest("zzzzzz", keys), None);
    }
}
