//! The web capability: pages fetched as readable markdown, within limits, and only from
//! public addresses unless the user allows the rest.

mod charset;
pub mod fetch;
pub mod guard;
pub mod page;
pub mod tool;

pub use fetch::{FetchError, FetchLimits, Fetched, WebClient};
