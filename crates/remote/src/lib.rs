//! Run records in object storage, for runs spread over machines (Kubernetes pods): the segments
//! of one plan write under one URL (`s3://`, `gs://`, `az://`, `file://`), each uploading its
//! record while it runs; they meet at a start barrier kept there; `loadlab merge URL` downloads
//! what is there and merges it exactly.
//!
//! Layout under a run's prefix (`docs/distributed.md` documents it for users):
//!
//! ```text
//! barrier/announce/<i>.json        segment i is here (host, pod, node, plan hash, own clock)
//! barrier/start.json               the common start time (written once: PutMode::Create)
//! barrier/failed.json              the barrier timed out (who was missing)
//! clock/<i>                        clock probes (tiny objects whose Last-Modified is read back)
//! segments/<i>/record.json         the record's header (RecordMeta), at the start
//! segments/<i>/intervals/<n>.hlog  batch n of interval histograms (batch 0 opens with the
//!                                  HdrHistogram log header)
//! segments/<i>/intervals/<n>.jsonl batch n of interval counters, written after its .hlog:
//!                                  the commit mark of the batch
//! segments/<i>/end.json            how the run ended (absent: the process died)
//! segments/<i>/run.json            the segment's own summary
//! run/...                          the same files for a run that was not split into segments
//! merged/                          the merged record, run.json, report.html and report.md
//! ```
//!
//! Object stores do not append, so the record goes up as immutable batches (one `.hlog` and
//! one `.jsonl` object every few seconds) rather than re-uploading growing files: a batch costs
//! two PUTs whatever the run's length, and a pod that dies leaves every batch it finished.
//! Downloading concatenates the batches back into the record files `loadlab_record`
//! reads, so merging a remote run is the local merge.
//!
//! Crates chosen: `object_store` (Apache Arrow's; one API over S3, GCS, Azure and local files,
//! credentials from the usual environment variables, retries, conditional put for a race-free
//! barrier) with its `reqwest` client on rustls and the *ring* provider the workspace already
//! builds (no aws-lc/cmake in the build); `tokio` (a current-thread runtime per thread that
//! talks to the store: the rest of loadlab stays synchronous); `tempfile` for downloads.

mod barrier;
mod error;
mod fetch;
mod layout;
mod location;
mod store;
mod upload;
mod wait;

pub use barrier::{Announcement, Barrier, BarrierOptions, Met, StartTime};
pub use error::RemoteError;
pub use fetch::{download_run, find_runs, Downloaded, RunListing, SegmentState};
pub use layout::{
    segment_dir, RunLayout, LABELS as LABELS_FILE, MERGED, SUMMARY as SUMMARY_FILE, WHOLE_RUN,
};
pub use location::{parse_location, ResultsLocation};
pub use store::{Entry, PutOutcome, Remote};
pub use upload::{UploadSink, UploadStats};
pub use wait::{wait_for_segments, WaitOptions, WaitOutcome};
