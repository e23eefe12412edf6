//! The `json` output: one JSON object per line, per interval and step ([`super::rows::Row`]),
//! flushed every interval so that `tail -f | jq` follows the run.

use super::rows::rows;
use super::snapshot::Snapshot;
use super::{SendError, Sink};
use std::fs::File;
use std::io::{BufWriter, Write};

pub(crate) struct JsonSink {
    out: BufWriter<File>,
}

impl JsonSink {
    pub fn create(path: &str) -> std::io::Result<Self> {
        Ok(Self {
            out: BufWriter::new(File::create(path)?),
        })
    }
}

impl Sink for JsonSink {
    fn send(&mut self, snapshot: &Snapshot) -> Result<(), SendError> {
        for row in rows(snapshot) {
            serde_json::to_writer(&mut self.out, &row).map_err(std::io::Error::from)?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()?;
        Ok(())
    }
}
