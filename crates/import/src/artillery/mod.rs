//! `loadlab import artillery`: an Artillery script becomes a scenario.

use crate::error::ImportError;
use crate::report::Report;
use crate::yaml::Document;

pub fn import(_source: &str, file: &str, _name: &str) -> Result<(Document, Report), ImportError> {
    Err(ImportError::invalid(
        file,
        "the Artillery importer is not written yet",
    ))
}
