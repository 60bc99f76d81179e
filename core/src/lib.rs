//! March's agent core: the message model, the event contract and agent loop (pi semantics),
//! model providers over HTTP, and the model registry.

pub mod agent;
pub mod agent_loop;
pub mod atomic_file;
pub mod auth;
pub mod compaction;
pub mod config;
pub mod context;
pub mod event;
pub mod history;
pub mod http;
pub mod http_serve;
pub mod lsp_config;
pub mod march_session;
pub mod mcp_config;
pub mod mcp_trust;
pub mod memory;
pub mod message;
pub mod model;
pub mod partial_json;
pub mod paths;
pub mod plan;
pub mod project_settings;
pub mod prompt_templates;
pub mod provider;
pub mod restart;
pub mod session;
pub mod signals;
pub mod skills;
pub mod structured;
pub mod tool;
pub mod usage;
pub mod validate;
