//! The built-in slash commands typed in an agent pane (`/export`, `/image`, `/model`,
//! `/resume`, …); anything else is a prompt for the agent.

use agent_client_protocol::v1::schema::{SessionConfigOptionCategory, SessionModeId};
use march_panes::agent::SANDBOX_CATEGORY;
use march_runner::client::find_config_option;

use super::agent::ListPurpose;
use super::layout::PaneId;
use super::router::SessionKey;
use super::{UiRequest, Workspace};

impl Workspace {
    /// Whether session `key` runs March's own agent (whose models are March's config's).
    fn runs_march(&self, key: SessionKey) -> bool {
        let l = &self.launcher;
        let spec = match self.sessions.get(&key).and_then(|s| s.agent.as_deref()) {
            Some(name) => l.agents.get(name).unwrap_or(&l.spec),
            None => &l.spec,
        };
        spec.name == "march"
    }

    /// A slash command typed in `pane`, which shows session `key`.
    pub(super) fn slash(
        &mut self,
        pane: PaneId,
        key: SessionKey,
        name: &str,
        args: &str,
    ) -> UiRequest {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return UiRequest::None;
        };
        match name {
            "export" => self.export_session(key, args.trim()),
            "copy" => return UiRequest::Copy(slot.view.export_markdown()),
            "image" => match args.trim() {
                "" => slot
                    .view
                    .set_error("/image PATH attaches an image file to the prompt"),
                path => {
                    let path = match path.strip_prefix("~/") {
                        Some(rest) => std::env::var_os("HOME").map_or_else(
                            || std::path::PathBuf::from(path),
                            |h| std::path::PathBuf::from(h).join(rest),
                        ),
                        None => std::path::PathBuf::from(path),
                    };
                    self.attach_file(key, path, None);
                }
            },
            // Typed in the focused pane, which is the one it closes.
            "exit" | "quit" => {
                if self.focused() == pane {
                    return self.close_focused();
                }
            }
            "model" if args.trim().is_empty() => {
                if !slot
                    .view
                    .open_config_picker(&SessionConfigOptionCategory::Model)
                {
                    slot.view.notice("The agent offers no model choice.");
                } else if self.runs_march(key) {
                    // March's models come from March's config, whose local servers may
                    // serve more than it lists.
                    self.discover_models(key);
                }
            }
            "model" => {
                let id = find_config_option(
                    slot.view.config_options(),
                    SessionConfigOptionCategory::Model,
                    "model",
                );
                match id {
                    Some(id) => {
                        slot.driver.set_option(&id.0, args.trim());
                    }
                    None => slot.view.notice("The agent offers no model choice."),
                }
            }
            "mode" | "thinking" if args.trim().is_empty() => {
                let (category, what) = if name == "mode" {
                    (SessionConfigOptionCategory::Mode, "mode")
                } else {
                    (SessionConfigOptionCategory::ThoughtLevel, "thinking level")
                };
                if !slot.view.open_config_picker(&category) {
                    slot.view
                        .notice(format!("The agent offers no {what} choice."));
                }
            }
            "mode" | "thinking" => {
                let (category, fallback) = if name == "mode" {
                    (SessionConfigOptionCategory::Mode, "permissions")
                } else {
                    (SessionConfigOptionCategory::ThoughtLevel, "thinking")
                };
                match find_config_option(slot.view.config_options(), category, fallback) {
                    Some(id) => {
                        slot.driver.set_option(&id.0, args.trim());
                    }
                    None if name == "mode" => {
                        slot.driver
                            .set_mode(SessionModeId::new(args.trim().to_string()));
                    }
                    None => slot
                        .view
                        .notice("The agent offers no thinking level choice."),
                }
            }
            "sandbox" => {
                let category = SessionConfigOptionCategory::Other(SANDBOX_CATEGORY.to_string());
                let value = args.trim();
                if value.is_empty() {
                    if !slot.view.open_config_picker(&category) {
                        slot.view.notice("The agent offers no sandbox choice.");
                    }
                } else {
                    match find_config_option(slot.view.config_options(), category, "sandbox") {
                        Some(id) => {
                            slot.driver.set_option(&id.0, value);
                        }
                        None => slot.view.notice("The agent offers no sandbox choice."),
                    }
                }
            }
            "tree" => self.ask_tree(key, super::agent::TreePurpose::Tree),
            "rewind" => self.ask_tree(key, super::agent::TreePurpose::Rewind),
            "fork" => {
                if slot.view.status().busy {
                    slot.view
                        .notice("A turn is running: wait for it to end, or stop it, to fork.");
                } else if !slot.driver.fork() {
                    slot.view
                        .notice("This agent cannot fork its session for March.");
                }
            }
            "merge" => self.merge_worktree(key, args),
            "pr" => self.worktree_pull_request(key),
            "new" => self.replace_in_pane(pane, None),
            "resume" => {
                let query = args.trim();
                if !query.is_empty() {
                    slot.resume_query = Some(query.to_string());
                }
                if !slot
                    .driver
                    .list_sessions(slot.project.clone(), ListPurpose::Resume)
                {
                    slot.view
                        .set_error("the agent is not ready yet".to_string());
                }
            }
            "mcp" => {
                if !slot.driver.refresh_mcp(true, true) {
                    slot.view
                        .notice("This agent does not report its MCP servers to March.");
                }
            }
            "help" => slot
                .view
                .notice_detail("Commands and keys", &self.help_text),
            // The agent's own commands (such as /compact) are prompts it interprets.
            other => {
                let text = if args.is_empty() {
                    format!("/{other}")
                } else {
                    format!("/{other} {args}")
                };
                if slot.driver.prompt(text.clone(), &slot.project, Vec::new()) {
                    slot.view.submit_local(&text);
                    slot.view.turn_started();
                    self.sessions.router_mut().prompt_sent(key);
                }
            }
        }
        UiRequest::None
    }
}
