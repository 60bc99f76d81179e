//! Test support for March: a scripted model server speaking the OpenAI Chat
//! Completions and Anthropic Messages streaming wire formats over real HTTP.
//!
//! Each POST consumes the next [`Turn`] of a [`Script`]; every request is
//! recorded so tests can assert what the client sent. [`PageServer`] serves fixed web pages
//! for the web tools.

mod anthropic;
pub mod client;
mod http;
mod openai;
mod pages;
pub mod process;
mod record;
mod script;
mod server;
pub mod test_tools;
mod wire;
pub mod workload;

pub use pages::{PageReply, PageRequest, PageServer};
pub use record::RecordedRequest;
pub use script::{Event, Script, ScriptStop, ScriptUsage, Turn};
pub use server::{RequestHook, ScriptedServer, ServerOptions};

/// The file `name` of the workspace's `tests/fixtures/` (real files other programs made).
pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}
