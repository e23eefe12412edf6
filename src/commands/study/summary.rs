//! The terminal summary of a study: rendered by `loadlab-report` (the same words as the
//! reports), printed by the binary.

pub use loadlab_report::study_terminal::print_study;
