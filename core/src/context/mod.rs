//! The ContextEngine: assembles the initial context of an Agent Run from separate layers.
//!
//! `system_core` (model-specific rules), `injections` (tool and extension instructions),
//! `session_identity` (cwd, workspace, platform, date), `project_context` (AGENTS.md and
//! project rules) and `profiles` (agent and user profiles, memory) become the system prompt,
//! in that order; `recent_chat` opens the transcript. Assembled once at the start of a run:
//! later model calls in the run continue the transcript and never rebuild these layers.

mod injections;
mod memory;
mod profiles;
pub(crate) mod project_context;
mod recent_chat;
mod session_identity;
mod system_core;

use std::path::PathBuf;
use std::sync::Arc;

pub use injections::{Injection, Injections};
pub use memory::{MemoryBlock, MemoryLayer, OmittedMemory};
pub use profiles::{Profiles, profile_paths};
pub use project_context::{CONTEXT_FILES, ContextFile, ProjectContext, repository_root};
pub use recent_chat::{RecallHints, RecentChat};
pub use session_identity::{SessionIdentity, today_utc};
pub use system_core::{ModelFamily, SystemCore};

use crate::memory::Memory;
use crate::message::Message;
use crate::model::Model;
use crate::tool::Tool;

/// Everything the engine needs for one run.
pub struct ContextRequest<'a> {
    /// The model the run uses (selects `system_core`).
    pub model: &'a Model,
    /// The project directory.
    pub cwd: PathBuf,
    /// Other workspace directories.
    pub workspace_dirs: Vec<PathBuf>,
    /// March's config dir (global AGENTS.md, profiles); `None` skips both.
    pub config_dir: Option<PathBuf>,
    /// The memory files and their budget; `None` (memory disabled) leaves memory out.
    pub memory: Option<Memory>,
    /// Active tools.
    pub tools: &'a [Arc<dyn Tool>],
    /// Extension instructions.
    pub extensions: Vec<Injection>,
    /// The skills the model may read (listed only when the read tool is active).
    pub skills: &'a [crate::skills::Skill],
    /// The session's transcript so far (already compacted where the store says so).
    pub transcript: Vec<Message>,
}

/// The layers, kept apart so each can be inspected and tested.
#[derive(Debug, Clone)]
pub struct ContextLayers {
    /// Model-specific rules.
    pub system_core: SystemCore,
    /// Tool and extension instructions.
    pub injections: Injections,
    /// Environment facts.
    pub session_identity: SessionIdentity,
    /// Instruction files.
    pub project_context: ProjectContext,
    /// Agent and user profiles, and memory.
    pub profiles: Profiles,
    /// The skills block (empty without skills or without the read tool).
    pub skills: String,
    /// The turns that open the transcript.
    pub recent_chat: RecentChat,
}

/// What a run starts from.
#[derive(Debug, Clone)]
pub struct AssembledContext {
    /// The system prompt.
    pub system_prompt: String,
    /// The opening transcript.
    pub messages: Vec<Message>,
    /// The layers it was built from.
    pub layers: ContextLayers,
}

/// Share of the context window the opening transcript may fill; the rest is left for the
/// system prompt, the new prompt and the run itself.
const RECENT_CHAT_SHARE: f64 = 0.6;

/// Builds contexts; stateless, so one engine serves every session of a runner.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextEngine;

impl ContextEngine {
    /// Assemble the layers for a run.
    pub fn layers(&self, req: ContextRequest<'_>) -> ContextLayers {
        let budget = (req.model.context_window as f64 * RECENT_CHAT_SHARE) as u64;
        ContextLayers {
            system_core: SystemCore::for_model(req.model),
            injections: Injections::collect(req.tools, req.extensions),
            session_identity: SessionIdentity::detect(req.cwd.clone(), req.workspace_dirs),
            project_context: ProjectContext::discover(req.config_dir.as_deref(), &req.cwd),
            profiles: Profiles {
                memory: req
                    .memory
                    .as_ref()
                    .map(MemoryLayer::load)
                    .unwrap_or_default(),
                ..req
                    .config_dir
                    .as_deref()
                    .map(Profiles::load)
                    .unwrap_or_default()
            },
            // The model reads a skill with the read tool: without it the list is noise.
            skills: if req.tools.iter().any(|t| t.name() == "read") {
                crate::skills::prompt_block(req.skills)
            } else {
                String::new()
            },
            recent_chat: RecentChat::select(req.transcript, budget),
        }
    }

    /// Assemble the context for a run.
    pub fn assemble(&self, req: ContextRequest<'_>) -> AssembledContext {
        let layers = self.layers(req);
        let sections = [
            layers.system_core.render(),
            layers.injections.render(),
            layers.project_context.render(),
            layers.skills.clone(),
            layers.profiles.render(),
            layers.session_identity.render(),
        ];
        let system_prompt = sections
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n");
        AssembledContext {
            system_prompt,
            messages: layers.recent_chat.messages.clone(),
            layers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_appear_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("proj");
        let cfg = tmp.path().join("cfg");
        std::fs::create_dir_all(cfg.join("profiles")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "PROJECT-RULE").unwrap();
        std::fs::write(cfg.join("profiles/user.md"), "USER-PROFILE").unwrap();
        let memory = Memory::new(
            tmp.path().join("data/memory"),
            cwd.clone(),
            std::path::Path::new(".march/memory.md"),
            4000,
        );
        std::fs::create_dir_all(&memory.global_dir).unwrap();
        std::fs::write(memory.global_dir.join("notes.md"), "GLOBAL-MEMORY").unwrap();
        std::fs::create_dir_all(cwd.join(".march")).unwrap();
        std::fs::write(&memory.project_file, "PROJECT-MEMORY").unwrap();
        let model = Model::anthropic("anthropic", "claude-sonnet-4-5", "http://x");
        let earlier = Message::user("earlier");
        let ctx = ContextEngine.assemble(ContextRequest {
            model: &model,
            cwd: cwd.clone(),
            workspace_dirs: vec![],
            config_dir: Some(cfg),
            memory: Some(memory),
            tools: &[],
            skills: &[],
            extensions: vec![Injection {
                source: "mcp:docs".into(),
                text: "EXTENSION-RULE".into(),
            }],
            transcript: vec![earlier.clone()],
        });
        let p = &ctx.system_prompt;
        let pos = |needle: &str| {
            p.find(needle)
                .unwrap_or_else(|| panic!("{needle} missing in {p}"))
        };
        assert!(pos("You are March") < pos("EXTENSION-RULE"));
        assert!(pos("EXTENSION-RULE") < pos("PROJECT-RULE"));
        assert!(pos("PROJECT-RULE") < pos("USER-PROFILE"));
        assert!(pos("USER-PROFILE") < pos("PROJECT-MEMORY"));
        assert!(pos("PROJECT-MEMORY") < pos("GLOBAL-MEMORY"));
        assert!(pos("GLOBAL-MEMORY") < pos("Current working directory:"));
        assert!(p.contains(&cwd.display().to_string()));
        assert_eq!(ctx.messages, vec![earlier]);
        assert_eq!(ctx.layers.system_core.family, ModelFamily::Claude);
    }
}
