//! A purpose-built HTTP/2 client for the load path (issue 42): the `h2` crate costs about
//! twice nghttp2's user time per request (one lock over all streams, several wake-ups per
//! stream, a `HeaderMap` per response, a write per frame). This one batches: one driver task
//! per connection, one write per wake-up, one wake per completed stream, no allocation per
//! request in steady state. The engine uses it with `--http2-client wire` (`http/wire`);
//! measured bare it spends a third of the `h2` crate's user time but more system time
//! (smaller batches per syscall) (bench/README.md, "A purpose-built HTTP/2 client, measured
//! bare").
//! Responses' HPACK is decoded here (`hdecode`), not by `loona-hpack`: that decoder builds a
//! hash-map Huffman table for every string (85% of the CPU in the first profile).

mod conn;
mod driver;
mod error;
pub mod frame;
mod hdecode;
mod hpack;
mod huffman;
mod recent;
mod recv;
mod response;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_keep;

pub use conn::{Config, Exchange, H2Wire, Settled};
pub use driver::Driver;
pub use error::{code_name, H2Error};
pub use hpack::{HeaderBlock, HeaderBlockError};
pub use response::{FieldName, H2Response, HeaderList, Keep, KeepHeaders};
