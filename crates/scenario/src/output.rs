//! Live outputs (`--out KIND=DEST`, `outputs:`): where each interval of a run is also sent
//! while it goes, parsed and checked here so a flag and a file entry give the same errors.

use std::fmt;

/// What kind of receiver an output feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// One JSON line per interval and step, appended to a file.
    Json,
    /// One CSV line per interval and step, with a fixed header.
    Csv,
    /// Prometheus remote write 1.0 (protobuf + snappy) to a URL.
    PrometheusRw,
    /// OpenTelemetry metrics over OTLP/HTTP (protobuf) to a URL.
    Otlp,
}

impl OutputKind {
    pub const ALL: [OutputKind; 4] = [Self::Json, Self::Csv, Self::PrometheusRw, Self::Otlp];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Csv => "csv",
            Self::PrometheusRw => "prometheus-rw",
            Self::Otlp => "otlp",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether the destination is a URL (else a file path).
    pub fn is_remote(self) -> bool {
        matches!(self, Self::PrometheusRw | Self::Otlp)
    }
}

impl fmt::Display for OutputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One live output: its kind and destination (a file path or an http(s) URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub kind: OutputKind,
    pub dest: String,
}

/// The kinds, as a message lists them.
pub fn kinds_list() -> String {
    let names: Vec<&str> = OutputKind::ALL.iter().map(|k| k.as_str()).collect();
    names.join(", ")
}

impl OutputSpec {
    /// `KIND=DEST` as the flag and the file's string form write it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((kind, dest)) = text.split_once('=') else {
            return Err(format!(
                "`{text}` is not KIND=DEST (kinds: {}), e.g. json=live.jsonl or prometheus-rw=http://127.0.0.1:9090/api/v1/write",
                kinds_list()
            ));
        };
        Self::new(kind.trim(), dest.trim())
    }

    /// A kind named `kind` sending to `dest`, checked.
    pub fn new(kind: &str, dest: &str) -> Result<Self, String> {
        let Some(kind) = OutputKind::parse(kind) else {
            return Err(format!(
                "unknown output kind `{kind}` (kinds: {})",
                kinds_list()
            ));
        };
        if dest.is_empty() {
            let what = if kind.is_remote() {
                "a URL"
            } else {
                "a file path"
            };
            return Err(format!("output `{kind}` needs {what} after `=`"));
        }
        if kind.is_remote() {
            let url = url::Url::parse(dest)
                .map_err(|e| format!("output `{kind}`: `{dest}` is not a URL ({e})"))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "output `{kind}`: `{dest}` must be an http:// or https:// URL"
                ));
            }
        }
        Ok(Self {
            kind,
            dest: dest.to_string(),
        })
    }
}

impl fmt::Display for OutputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.kind, self.dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text, and what it parses to (kind and destination) or a part of its error.
    type Case<'a> = (&'a str, Result<(OutputKind, &'a str), &'a str>);

    #[test]
    fn parses_and_rejects() {
        let table: &[Case] = &[
            ("json=live.jsonl", Ok((OutputKind::Json, "live.jsonl"))),
            ("csv = out/live.csv", Ok((OutputKind::Csv, "out/live.csv"))),
            (
                "prometheus-rw=http://127.0.0.1:9090/api/v1/write",
                Ok((
                    OutputKind::PrometheusRw,
                    "http://127.0.0.1:9090/api/v1/write",
                )),
            ),
            (
                "otlp=https://collector:4318/v1/metrics",
                Ok((OutputKind::Otlp, "https://collector:4318/v1/metrics")),
            ),
            ("json", Err("is not KIND=DEST")),
            ("influx=http://x", Err("unknown output kind `influx`")),
            ("csv=", Err("needs a file path")),
            ("otlp=", Err("needs a URL")),
            (
                "otlp=localhost:4318",
                Err("must be an http:// or https:// URL"),
            ),
            ("prometheus-rw=not a url", Err("is not a URL")),
        ];
        for (text, want) in table {
            match (OutputSpec::parse(text), want) {
                (Ok(spec), Ok((kind, dest))) => {
                    assert_eq!((spec.kind, spec.dest.as_str()), (*kind, *dest), "{text}")
                }
                (Err(e), Err(part)) => assert!(e.contains(part), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }
}
