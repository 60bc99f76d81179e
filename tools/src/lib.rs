//! March's coding tools as capabilities. Each tool owns its behaviour, schema, limits and
//! permission annotations; the runtime only assembles them through [`ToolRegistry`].

mod args;
pub mod bash;
pub mod browser;
pub mod context;
pub mod daemon;
pub mod edit;
pub mod exec;
pub mod find;
pub mod grep;
pub mod image;
mod listing;
pub mod ls;
pub mod lsp;
pub mod mcp;
pub mod memory;
pub mod mutation_queue;
pub mod paths;
pub mod read;
pub mod registry;
mod stat;
mod task;
#[cfg(test)]
pub(crate) mod test_support;
pub mod todo;
pub mod truncate;
pub mod web;
pub mod workspace;
pub mod write;

pub use context::ToolContext;
pub use registry::ToolRegistry;
