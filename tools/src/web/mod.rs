//! The web capability: pages fetched as readable markdown, within limits, and only from
//! public addresses unless the user allows the rest; searches through the API the user
//! configured.

mod charset;
pub mod fetch;
pub mod guard;
pub mod page;
pub mod search;
pub mod search_tool;
pub mod tool;

pub use fetch::{FetchError, FetchLimits, Fetched, WebClient};
pub use search::{Hit, SearchApi, SearchError};
