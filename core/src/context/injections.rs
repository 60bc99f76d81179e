//! `injections`: instructions contributed by capabilities (tools) and extensions.

use std::sync::Arc;

use crate::tool::Tool;

/// Instructions from one extension (an MCP server, a plugin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// Who contributed it.
    pub source: String,
    /// The text.
    pub text: String,
}

/// The tools' own prompt lines plus extension instructions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injections {
    /// `- name: snippet` for each tool that has a snippet.
    pub tool_lines: Vec<String>,
    /// De-duplicated guidelines of the active tools.
    pub guidelines: Vec<String>,
    /// Extension instructions.
    pub extensions: Vec<Injection>,
}

impl Injections {
    /// Collect from the active tools and extensions.
    pub fn collect(tools: &[Arc<dyn Tool>], extensions: Vec<Injection>) -> Self {
        let tool_lines = tools
            .iter()
            .filter_map(|t| t.prompt_snippet().map(|s| format!("- {}: {s}", t.name())))
            .collect();
        let mut guidelines: Vec<String> = Vec::new();
        for g in tools.iter().flat_map(|t| t.prompt_guidelines().iter()) {
            if !guidelines.iter().any(|x| x == g) {
                guidelines.push((*g).to_string());
            }
        }
        Injections {
            tool_lines,
            guidelines,
            extensions,
        }
    }

    /// The section text; empty when there is nothing to say.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.tool_lines.is_empty() {
            out.push_str("Available tools:\n");
            out.push_str(&self.tool_lines.join("\n"));
        }
        if !self.guidelines.is_empty() {
            out.push_str("\n\nTool guidelines:\n");
            for g in &self.guidelines {
                out.push_str(&format!("- {g}\n"));
            }
        }
        for ext in &self.extensions {
            out.push_str(&format!(
                "\n\n<instructions source=\"{}\">\n{}\n</instructions>",
                ext.source,
                ext.text.trim()
            ));
        }
        out.trim().to_string()
    }
}
