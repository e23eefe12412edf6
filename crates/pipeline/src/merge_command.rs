//! `loadlab merge` between its flags and its printing: the locations checked, the local store
//! opened, the segments merged from local records ([`crate::merge`]) or from object storage
//! ([`crate::remote`]), and `--json` written.

use crate::merge::{merge_and_store, merge_locations, open_records, Merged};
use crate::PipelineError;
use std::path::Path;

/// What `loadlab merge` is asked: the segments' run directories or ids, or one distributed
/// run's URL; `--results`, `--wait` and `--json`.
pub struct MergeRequest<'a> {
    pub inputs: &'a [String],
    pub results: Option<&'a Path>,
    pub wait: Option<std::time::Duration>,
    pub json: Option<&'a Path>,
}

/// A merge made: the merged run, how many segments it holds, where a distributed run's merge
/// was published (`URL/merged`), and what could not be stored or written.
pub struct MergeDone {
    pub merged: Merged,
    pub segments: usize,
    pub published: Option<String>,
}

/// Merges what `request` names into the local store (checked writable first, and `--json`
/// before anything is read), writing `--json`; `say` hears a distributed run's waiting, `warn`
/// of stored runs that could not be recovered.
pub fn merge_command(
    request: &MergeRequest<'_>,
    say: &mut dyn FnMut(&str),
    warn: &mut dyn FnMut(&str),
) -> Result<MergeDone, PipelineError> {
    if let Some(json) = request.json {
        crate::measure::check_json_path(json)?;
    }
    let (url, local) = merge_locations(request.inputs, request.results)?;
    let store = crate::store::open_for_runs(local.as_deref(), warn)?;
    let mut done = if let Some(url) = url {
        let remote = crate::remote::merge_from_url(&url, request.wait, &store, say)?;
        MergeDone {
            merged: remote.merged,
            segments: remote.segments,
            published: Some(remote.published),
        }
    } else {
        if request.inputs.is_empty() {
            return Err(PipelineError::bad_input(
                "nothing to merge: give the segments' run directories or run ids, or the URL of a distributed run (s3://bucket/prefix/NAME)",
            ));
        }
        if request.wait.is_some() {
            return Err(PipelineError::bad_input(
                "--wait waits for the segments of a distributed run in object storage (s3://bucket/prefix/NAME); run directories and ids are merged as they are now: leave --wait out, or merge once every segment has ended",
            ));
        }
        let records = open_records(request.inputs, &store)?;
        let merged = merge_and_store(&records, &request.inputs.join(" "), &store)?;
        MergeDone {
            merged,
            segments: records.len(),
            published: None,
        }
    };
    if let Some(json) = request.json {
        if let Err(e) = crate::measure::write_json(&done.merged.result, json) {
            done.merged.errors.push(e);
        }
    }
    Ok(done)
}
