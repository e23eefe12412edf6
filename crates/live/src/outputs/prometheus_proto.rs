//! Prometheus remote write 1.0 messages (`prometheus/prompb/types.proto`, `remote.proto`),
//! declared by hand for `prost` (no protoc): only the fields loadlab sends.

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
    #[prost(message, repeated, tag = "3")]
    pub metadata: Vec<MetricMetadata>,
}

/// `prometheus.TimeSeries`: labels sorted by name, `__name__` among them.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// A value at a time (milliseconds since the Unix epoch).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// `prometheus.MetricMetadata`: a family's type and help.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricMetadata {
    /// 1 counter, 2 gauge, 5 summary.
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    #[prost(string, tag = "2")]
    pub metric_family_name: String,
    #[prost(string, tag = "4")]
    pub help: String,
    #[prost(string, tag = "5")]
    pub unit: String,
}

pub const COUNTER: i32 = 1;
pub const GAUGE: i32 = 2;
pub const SUMMARY: i32 = 5;
