//! A share of a plan (`--segment i/N`): the type is the run record's, owned by
//! `loadlab_metrics`, which the plan's arithmetic and the records share.

pub use loadlab_metrics::Segment;
