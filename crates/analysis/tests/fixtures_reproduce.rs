//! The SciPy fixtures are reproduced on a fresh machine by comparing numbers within the
//! tolerance the tests compare loadlab with them at (tests/fixtures/tolerances.json, applied by
//! scripts/compare_fixtures.py and by the tests), not bytes: the last bits of a float depend on
//! the CPU's vector unit and BLAS kernel, and iterative fits stop at other digits on other
//! processors. A stricter check failed the README's test command on machines unlike the one that
//! wrote them (issues 22 and 35).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A copy of the committed fixtures with `edits` (file, from, to) applied, as another machine
/// might regenerate them.
fn regenerated_with(edits: &[(&str, &str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(committed()).unwrap() {
        let path = entry.unwrap().path();
        // The SciPy fixtures only: otava/ holds the change-point fixtures, reproduced by
        // setup-test-deps.sh from their own environment.
        if !path.is_file() {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let mut text = std::fs::read_to_string(&path).unwrap();
        for (file, from, to) in edits {
            if *file == name {
                assert!(text.contains(from), "{name} no longer holds {from}");
                text = text.replace(from, to);
            }
        }
        std::fs::write(dir.path().join(&name), text).unwrap();
    }
    dir
}

fn compare(regenerated: &Path) -> (i32, String) {
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/compare_fixtures.py"))
        .arg(committed())
        .arg(regenerated)
        .output()
        .expect("python3 runs (scripts/test.sh installs the reference statistics with it)");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn values_that_differ_in_the_last_bits_are_reproduced() {
    // The two values a fresh 2-core machine regenerated (issue 22).
    let other_machine = regenerated_with(&[
        (
            "hodges_lehmann.json",
            "0.5999999999999995",
            "0.5999999999999994",
        ),
        ("usl.json", "0.04906100180747337", "0.049061001807473366"),
    ]);
    let (code, text) = compare(other_machine.path());
    assert_eq!(code, 0, "{text}");
}

#[test]
fn an_iterative_fit_that_stops_elsewhere_within_the_tests_tolerance_is_reproduced() {
    // What SciPy's curve_fit gave on another AMD EPYC VM (issue 35): 7.5e-8 relative, inside
    // the 1e-6 the USL test allows, outside the old fixed 1e-9.
    let other_processor = regenerated_with(&[
        ("usl.json", "4.879041494865852e-05", "4.879041129690164e-05"),
        ("usl.json", "143.13892608800137", "143.13893144577898"),
        ("usl.json", "17500.730249150572", "17500.730900752555"),
        ("usl.json", "0.0003452802540274506", "0.0003452802385975464"),
        ("usl.json", "121.87055690868763", "121.87055669943308"),
    ]);
    let (code, text) = compare(other_processor.path());
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_difference_just_beyond_a_tests_tolerance_fails_the_check() {
    // describe.json is compared at 1e-9 · max(1, |x|) (tolerances.json's default, assert_close's
    // rule): a mean of 610.894 may move by 6.1e-7, not by 7e-7.
    let within = regenerated_with(&[("describe.json", "610.894", "610.8940006")]);
    assert_eq!(compare(within.path()).0, 0);
    let beyond = regenerated_with(&[("describe.json", "610.894", "610.8940007")]);
    let (code, text) = compare(beyond.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("beyond 1e-09 scaled"), "{text}");
}

#[test]
fn a_real_change_in_a_reference_value_is_caught_and_named() {
    let changed = regenerated_with(&[("usl.json", "0.04906100180747337", "0.04906110180747337")]);
    let (code, text) = compare(changed.path());
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("usl.json: $.cases[") && text.contains("kappa"),
        "{text}"
    );
    assert!(text.contains("0.04906110180747337"), "{text}");
}

#[test]
fn a_missing_file_or_key_is_a_difference() {
    let dir = regenerated_with(&[("holm.json", "\"cases\"", "\"kases\"")]);
    std::fs::remove_file(dir.path().join("tukey.json")).unwrap();
    let (code, text) = compare(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("tukey.json: committed only"), "{text}");
    assert!(text.contains("holm.json: $.cases: committed"), "{text}");
}
