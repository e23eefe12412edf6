//! `loadlab import openapi`: an OpenAPI 3 spec becomes a scenario.

use crate::error::ImportError;
use crate::report::Report;
use crate::yaml::Document;
use crate::Options;

pub fn import(
    _source: &str,
    file: &str,
    _name: &str,
    _options: &Options,
) -> Result<(Document, Report), ImportError> {
    Err(ImportError::invalid(
        file,
        "the OpenAPI importer is not written yet",
    ))
}
