//! March's panes: one module per pane kind (state, input handling, rendering), and the
//! rendering they share: themes, markdown, syntax highlighting, sanitising agent text.
//!
//! Panes know ACP's schema types and ratatui, never the agent loop or the tools: everything
//! an agent does reaches a pane as an ACP update routed by the app.

pub mod agent;
pub mod attention;
pub mod avatar;
pub mod cells;
pub mod chrome;
pub mod copy;
pub mod diagnostics;
pub mod diff;
pub mod highlight;
pub mod markdown;
pub mod osc52;
pub mod paste;
pub mod picture;
pub mod sanitize;
pub mod scroll;
pub mod setup;
pub mod shell;
pub mod switcher;
pub mod terminal;
pub mod theme;
pub mod wrap;

#[cfg(test)]
mod test_support;
