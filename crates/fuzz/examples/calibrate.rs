//! Prints this machine's calibration unit (the fastest of 30), which scales the fuzz budgets:
//! `cargo run -p loadlab-fuzz --example calibrate` (and `--release`). Run it on a quiet
//! machine to restate `REFERENCE_UNIT` (crates/fuzz/src/calibrate.rs).

fn main() {
    let fastest = (0..6)
        .map(|_| loadlab_fuzz::Calibration::measure().unit)
        .min()
        .unwrap_or_default();
    let c = loadlab_fuzz::Calibration::from_unit(fastest);
    println!(
        "calibration unit {:.2} ms ({} build); {}",
        fastest.as_secs_f64() * 1e3,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        c.words()
    );
}
