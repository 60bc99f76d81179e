//! The Tool Capability Registry: named sets of tools for a session.
//!
//! The runtime asks for a set by name and gets tools that carry their own schemas, limits and
//! permission annotations; nothing here knows what a tool does.

use std::path::PathBuf;
use std::sync::Arc;

use march_core::tool::Tool;

use crate::bash::BashTool;
use crate::browser::tool::{BrowserEvaluateTool, BrowserTool};
use crate::context::ToolContext;
use crate::edit::EditTool;
use crate::find::FindTool;
use crate::grep::GrepTool;
use crate::image::avatar::AvatarTool;
use crate::image::tool::ImageGenerateTool;
use crate::ls::LsTool;
use crate::lsp::DiagnosticsTool;
use crate::memory::MemoryTool;
use crate::read::ReadTool;
use crate::todo::TodoTool;
use crate::web::search_tool::WebSearchTool;
use crate::web::tool::WebFetchTool;
use crate::workspace::WorkspaceTool;
use crate::write::WriteTool;

/// Every tool name, in the order tools are offered.
pub const ALL: [&str; 17] = [
    "read",
    "bash",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "memory",
    "todo",
    "diagnostics",
    "workspace",
    "web_fetch",
    "web_search",
    "browser",
    "browser_evaluate",
    "image_generate",
    "avatar",
];
/// pi's default set: read, bash, edit, write.
pub const CODING: [&str; 4] = ["read", "bash", "edit", "write"];
/// Tools that only look: read, grep, find, ls.
pub const READ_ONLY: [&str; 4] = ["read", "grep", "find", "ls"];

/// A name that is not a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{name}` (known: {})", ALL.join(", "))]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
}

/// A set of tools, in the order they are offered to the model.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// One tool by name.
    pub fn tool(ctx: &ToolContext, name: &str) -> Result<Arc<dyn Tool>, UnknownTool> {
        let ctx = ctx.clone();
        Ok(match name {
            "read" => Arc::new(ReadTool::new(ctx)),
            "bash" => Arc::new(BashTool::new(ctx)),
            "edit" => Arc::new(EditTool::new(ctx)),
            "write" => Arc::new(WriteTool::new(ctx)),
            "grep" => Arc::new(GrepTool::new(ctx)),
            "find" => Arc::new(FindTool::new(ctx)),
            "ls" => Arc::new(LsTool::new(ctx)),
            "memory" => Arc::new(MemoryTool::new(ctx)),
            "todo" => Arc::new(TodoTool::new()),
            "diagnostics" => Arc::new(DiagnosticsTool::new(ctx)),
            "workspace" => Arc::new(WorkspaceTool::new(ctx)),
            "web_fetch" => Arc::new(WebFetchTool::new(ctx.web)),
            "web_search" => Arc::new(WebSearchTool::new(ctx.search)),
            "browser" => Arc::new(BrowserTool::new(ctx.browser)),
            "browser_evaluate" => Arc::new(BrowserEvaluateTool::new(ctx.browser)),
            "image_generate" => {
                let (api, dir) = match ctx.images {
                    Some(images) => (Some(images.api), images.dir),
                    None => (None, PathBuf::from(".march/images")),
                };
                Arc::new(ImageGenerateTool::new(api, ctx.cwd, dir))
            }
            "avatar" => Arc::new(AvatarTool::new(ctx.cwd, ctx.avatars)),
            other => {
                return Err(UnknownTool {
                    name: other.to_string(),
                });
            }
        })
    }

    /// The tools with these names, in the given order.
    pub fn by_names<S: AsRef<str>>(ctx: &ToolContext, names: &[S]) -> Result<Self, UnknownTool> {
        let tools = names
            .iter()
            .map(|n| Self::tool(ctx, n.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(ToolRegistry { tools })
    }

    /// read, bash, edit, write.
    pub fn coding(ctx: &ToolContext) -> Self {
        Self::known(ctx, &CODING)
    }

    /// read, grep, find, ls.
    pub fn read_only(ctx: &ToolContext) -> Self {
        Self::known(ctx, &READ_ONLY)
    }

    /// Every tool.
    pub fn all(ctx: &ToolContext) -> Self {
        Self::known(ctx, &ALL)
    }

    /// Every tool the context can serve: memory only with memory files configured,
    /// diagnostics only with a language-server host, workspace only inside a workspace,
    /// web_search only with a search API, the browser tools only with a browser,
    /// image_generate only with an image model, avatar only with a config directory (a
    /// model is never offered a tool that could only answer "switched off").
    pub fn available(ctx: &ToolContext) -> Self {
        let served = |name: &&str| match *name {
            "memory" => ctx.memory.is_some(),
            "diagnostics" => ctx.lsp.is_some(),
            "workspace" => ctx.workspace.is_some(),
            "web_search" => ctx.search.is_some(),
            "browser" | "browser_evaluate" => ctx.browser.is_some(),
            "image_generate" => ctx.images.is_some(),
            "avatar" => ctx.avatars.is_some(),
            _ => true,
        };
        let names: Vec<&str> = ALL.iter().copied().filter(served).collect();
        Self::known(ctx, &names)
    }

    fn known(ctx: &ToolContext, names: &[&str]) -> Self {
        ToolRegistry {
            tools: names
                .iter()
                .filter_map(|n| Self::tool(ctx, n).ok())
                .collect(),
        }
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// A tool of this set by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::tool::ToolAnnotations;

    #[test]
    fn named_sets_and_annotations() {
        let ctx = ToolContext::local("/tmp");
        let names = |r: &ToolRegistry| {
            r.tools()
                .iter()
                .map(|t| t.name().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&ToolRegistry::coding(&ctx)), CODING);
        assert_eq!(names(&ToolRegistry::read_only(&ctx)), READ_ONLY);
        assert_eq!(names(&ToolRegistry::all(&ctx)), ALL);
        // No memory files and no language-server host: neither tool is offered.
        assert_eq!(
            names(&ToolRegistry::available(&ctx)),
            [
                "read",
                "bash",
                "edit",
                "write",
                "grep",
                "find",
                "ls",
                "todo",
                "web_fetch"
            ]
        );
        for t in ToolRegistry::read_only(&ctx).tools() {
            assert!(
                t.annotations().is_harmless(),
                "{} must be harmless",
                t.name()
            );
        }
        // Inside a workspace the workspace tool is offered too.
        let in_workspace = ctx.clone().with_workspace("/run/march/api.sock".into());
        assert!(names(&ToolRegistry::available(&in_workspace)).contains(&"workspace".to_string()));
        // With a search API configured, web_search is offered too.
        let config = march_core::config::Config::parse(
            "[web.search]\nprovider = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        let api = crate::web::SearchApi::from_config(&config.web, |_| None)
            .unwrap()
            .unwrap();
        let searching = ctx.clone().with_search(api);
        assert!(names(&ToolRegistry::available(&searching)).contains(&"web_search".to_string()));
        // With a config directory, avatar is offered too.
        assert!(!names(&ToolRegistry::available(&ctx)).contains(&"avatar".to_string()));
        let configured = ctx
            .clone()
            .with_avatars("/home/u/.config/march/profiles/avatars".into());
        assert!(names(&ToolRegistry::available(&configured)).contains(&"avatar".to_string()));
        for name in [
            "bash",
            "edit",
            "write",
            "memory",
            "workspace",
            "web_fetch",
            "web_search",
            "browser",
            "browser_evaluate",
            "image_generate",
            "avatar",
        ] {
            let t = ToolRegistry::tool(&ctx, name).unwrap();
            assert!(!t.annotations().is_harmless(), "{name} must ask");
            assert_ne!(t.annotations(), ToolAnnotations::READ_ONLY);
        }
        let err = ToolRegistry::by_names(&ctx, &["read", "fly"])
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "unknown tool `fly` (known: read, bash, edit, write, grep, find, ls, memory, todo, diagnostics, workspace, web_fetch, web_search, browser, browser_evaluate, image_generate, avatar)"
        );
        for t in ToolRegistry::all(&ctx).tools() {
            assert_eq!(t.parameters()["type"], "object", "{}", t.name());
            assert!(!t.description().is_empty());
        }
    }
}
