//! Shared helpers for the SciPy-fixture tests: load a fixture, read JSON numbers, compare floats.
#![allow(dead_code)]

use serde_json::Value;

/// Parses `tests/fixtures/<name>` (written by `scripts/stats_reference.py`).
pub fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("fixture is valid JSON")
}

/// The `cases` array of a fixture.
pub fn cases<'a>(fixture: &'a Value, key: &str) -> &'a Vec<Value> {
    fixture[key].as_array().expect("array of cases")
}

pub fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array of numbers")
        .iter()
        .map(num)
        .collect()
}

pub fn pair(v: &Value) -> (f64, f64) {
    let a = nums(v);
    assert_eq!(a.len(), 2, "expected [lo, hi], got {v}");
    (a[0], a[1])
}

/// `|actual − expected| ≤ tol · max(1, |expected|)` (absolute for values up to 1, relative above).
pub fn assert_close(actual: f64, expected: f64, tol: f64, what: &str) {
    let scale = expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tol * scale,
        "{what}: got {actual:e}, expected {expected:e} (diff {:e}, tol {:e})",
        (actual - expected).abs(),
        tol * scale
    );
}

/// How close a value must be to its fixture (`tests/fixtures/tolerances.json`, which
/// scripts/compare_fixtures.py applies too when the fixtures are regenerated on a machine).
#[derive(Debug, Clone, Copy)]
pub enum Tolerance {
    /// `|d| ≤ s · max(1, |expected|)`, as [`assert_close`].
    Scaled(f64),
    /// `|d| ≤ r · |expected| + a`.
    Relative(f64, f64),
}

impl Tolerance {
    pub fn allows(self, actual: f64, expected: f64) -> bool {
        let d = (actual - expected).abs();
        match self {
            Tolerance::Scaled(s) => d <= s * expected.abs().max(1.0),
            Tolerance::Relative(r, a) => d <= r * expected.abs() + a,
        }
    }

    fn of(rule: &Value) -> Option<Tolerance> {
        if let Some(s) = rule["scaled"].as_f64() {
            return Some(Tolerance::Scaled(s));
        }
        let r = rule["relative"].as_f64()?;
        Some(Tolerance::Relative(
            r,
            rule["absolute"].as_f64().unwrap_or(0.0),
        ))
    }
}

/// The tolerance for the values under `key` in fixture `file` (a path below tests/fixtures).
pub fn tolerance(file: &str, key: &str) -> Tolerance {
    let all = fixture("tolerances.json");
    let spec = &all["files"][file];
    Tolerance::of(&spec["keys"][key])
        .or_else(|| Tolerance::of(spec))
        .or_else(|| Tolerance::of(&all["default"]))
        .expect("tolerances.json has a default rule")
}

/// Asserts `actual` is within the fixture's tolerance for `key` of `expected`.
pub fn assert_fixture_close(file: &str, key: &str, actual: f64, expected: f64, what: &str) {
    let tol = tolerance(file, key);
    assert!(
        tol.allows(actual, expected),
        "{what}: got {actual:e}, expected {expected:e} (diff {:e}, tolerance {tol:?} from tolerances.json)",
        (actual - expected).abs()
    );
}
