//! A purpose-built HTTP/2 client for the load path (issue 42): the `h2` crate costs about
//! twice nghttp2's user time per request (one lock over all streams, several wake-ups per
//! stream, a `HeaderMap` per response, a write per frame). This one batches: one driver task
//! per connection, one write per wake-up, one wake per completed stream, no allocation per
//! request in steady state. Not yet wired into the engine's transport.

mod conn;
mod driver;
mod error;
pub mod frame;
mod hdecode;
mod hpack;
mod recv;
mod response;
mod state;
#[cfg(test)]
mod tests;

pub use conn::{Config, Exchange, H2Wire};
pub use driver::Driver;
pub use error::{code_name, H2Error};
pub use hpack::{HeaderBlock, HeaderBlockError};
pub use response::{H2Response, HeaderList, Keep};
