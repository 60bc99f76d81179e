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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::ToolOutcome;
    use crate::tool::{ToolError, ToolUpdates};
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    struct T(
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        Value,
    );

    #[async_trait::async_trait]
    impl Tool for T {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "d"
        }
        fn parameters(&self) -> &Value {
            &self.3
        }
        fn prompt_snippet(&self) -> Option<&str> {
            self.1
        }
        fn prompt_guidelines(&self) -> &[&str] {
            self.2
        }
        async fn execute(
            &self,
            _: &str,
            _: Value,
            _: CancellationToken,
            _: ToolUpdates,
        ) -> Result<ToolOutcome, ToolError> {
            Ok(ToolOutcome::text(""))
        }
    }

    #[test]
    fn tool_lines_guidelines_deduplicated_and_extensions() {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(T(
                "read",
                Some("Read file contents"),
                &["Use read, not cat"],
                json!({}),
            )),
            Arc::new(T(
                "write",
                Some("Create or overwrite files"),
                &["Use read, not cat", "Only for new files"],
                json!({}),
            )),
            Arc::new(T("hidden", None, &[], json!({}))),
        ];
        let inj = Injections::collect(
            &tools,
            vec![Injection {
                source: "mcp:docs".into(),
                text: "Cite the docs.\n".into(),
            }],
        );
        assert_eq!(
            inj.render(),
            "Available tools:\n- read: Read file contents\n- write: Create or overwrite files\n\n\
             Tool guidelines:\n- Use read, not cat\n- Only for new files\n\n\n\
             <instructions source=\"mcp:docs\">\nCite the docs.\n</instructions>"
        );
        assert!(Injections::default().render().is_empty());
    }
}
