//! One runner session: its transcript store, settings, permission memory, and the queue that
//! lets one turn run at a time.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptResponse, SessionConfigOption, SessionConfigOptionValue,
    SessionInfoUpdate, SessionModeState, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Error, RequestCancellation};
use march_core::config::Config;
use march_core::memory::Memory;
use march_core::model::ModelRegistry;
use march_core::provider::StreamFn;
use march_core::session::SessionStore;
use march_core::session::{BashExecutionMessage, SessionMessage, bash_execution_to_text};
use march_core::structured::ResponseSchema;
use march_core::tool::Tool;
use march_tools::exec::sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use super::client_fs::ClientCaps;
use super::client_terminal::ClientTerminals;
use super::commands::SlashCommands;
use super::compaction::{self, Outcome, Trigger};
use super::gate::PermissionMemory;
use super::history::History;
use super::mcp::SessionMcp;
use super::options::{self, Change, Settings};
use super::port::ClientPort;
use super::queue::TurnQueue;
use super::state::SessionState;
use super::{content, errors, replay, turn, updates};

/// Everything a session is built from.
pub(crate) struct SessionSetup {
    /// The ACP session id (the store's id, unless an old pi file was continued in a new one).
    pub id: String,
    /// The project directory.
    pub cwd: PathBuf,
    /// March's config dir (global AGENTS.md, profiles).
    pub config_dir: PathBuf,
    /// Models and credentials.
    pub registry: Arc<ModelRegistry>,
    /// The transport.
    pub provider: Arc<dyn StreamFn>,
    /// The tools of every run.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The transcript.
    pub store: SessionStore,
    /// Model, thinking level and permission mode.
    pub settings: Settings,
    /// The config the session was opened with (recall, memory, compaction settings).
    pub config: Arc<Config>,
    /// The history index: finished turns are indexed, prompts get recall hints.
    pub history: Arc<History>,
    /// The memory files (none when memory is switched off in config).
    pub notes: Option<Memory>,
    /// The memory server whose files `notes` mirrors (`[memory] remote`).
    pub remote_memory: Option<super::remote_memory::SessionRemote>,
    /// What the client offered in `initialize`.
    pub client: ClientCaps,
    /// The client terminals the session's bash commands run in (when the client offers them).
    pub terminals: Arc<ClientTerminals>,
    /// March's own state of the session (title, timeline, restore data).
    pub state: Arc<SessionState>,
    /// Its MCP servers.
    pub mcp: SessionMcp,
    /// The sandbox its commands run in (shared with their executors).
    pub sandbox: Sandbox,
    /// Its slash commands (prompt templates among them; shared with its MCP servers').
    pub commands: Arc<SlashCommands>,
}

/// A session held in memory by the runner.
pub(crate) struct Session {
    pub(super) id: String,
    pub(super) cwd: PathBuf,
    pub(super) config_dir: PathBuf,
    pub(super) registry: Arc<ModelRegistry>,
    pub(super) provider: Arc<dyn StreamFn>,
    pub(super) tools: Vec<Arc<dyn Tool>>,
    pub(super) store: Arc<Mutex<SessionStore>>,
    pub(super) settings: Arc<Mutex<Settings>>,
    pub(super) config: Arc<Config>,
    pub(super) history: Arc<History>,
    pub(super) client: ClientCaps,
    /// The memory files read into the `profiles` layer (not the permission memory below).
    pub(super) notes: Option<Memory>,
    /// The memory server whose files `notes` mirrors, synced at each run's start.
    pub(super) remote_memory: Option<super::remote_memory::SessionRemote>,
    pub(super) memory: PermissionMemory,
    pub(super) terminals: Arc<ClientTerminals>,
    pub(super) state: Arc<SessionState>,
    /// Its MCP servers, started when its first run needs them.
    pub(super) mcp: SessionMcp,
    /// The sandbox its commands run in; the config option switches it, the gate lets one
    /// call out of it.
    pub(super) sandbox: Sandbox,
    /// Its slash commands: the prompt templates a prompt may name.
    pub(super) commands: Arc<SlashCommands>,
    /// Messages typed while a turn runs, handed to its agent (`_march/session/queue`).
    pub(super) queue: Arc<TurnQueue>,
    /// Held by the running turn; waiting prompts queue on it in arrival order (tokio's mutex
    /// is fair).
    turns: tokio::sync::Mutex<()>,
    /// Cancelled by `session/cancel`, then replaced: every prompt that arrived before the
    /// cancel (running or queued) ends `cancelled`, later ones are unaffected.
    epoch: Mutex<CancellationToken>,
    closed: AtomicBool,
    runs: AtomicU64,
}

impl Session {
    /// A session ready for prompts.
    pub(crate) fn new(setup: SessionSetup) -> Arc<Self> {
        Arc::new(Session {
            id: setup.id,
            cwd: setup.cwd,
            config_dir: setup.config_dir,
            registry: setup.registry,
            provider: setup.provider,
            tools: setup.tools,
            store: Arc::new(Mutex::new(setup.store)),
            settings: Arc::new(Mutex::new(setup.settings)),
            config: setup.config,
            history: setup.history,
            client: setup.client,
            notes: setup.notes,
            remote_memory: setup.remote_memory,
            memory: PermissionMemory::default(),
            terminals: setup.terminals,
            state: setup.state,
            mcp: setup.mcp,
            sandbox: setup.sandbox,
            commands: setup.commands,
            queue: Arc::new(TurnQueue::default()),
            turns: tokio::sync::Mutex::new(()),
            epoch: Mutex::new(CancellationToken::new()),
            closed: AtomicBool::new(false),
            runs: AtomicU64::new(0),
        })
    }

    /// The ACP session id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// A number for the next Agent Run of this session.
    pub(crate) fn next_run(&self) -> u64 {
        self.runs.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The session file.
    pub(crate) fn path(&self) -> PathBuf {
        self.store.lock().path().to_path_buf()
    }

    /// The complete config option list.
    pub(crate) fn config_options(&self) -> Vec<SessionConfigOption> {
        options::config_options(&self.settings.lock(), &self.registry, &self.sandbox)
    }

    /// The permission modes as ACP session modes, the current one selected.
    pub(crate) fn modes(&self) -> SessionModeState {
        options::session_modes(self.settings.lock().mode)
    }

    /// The session's usage as the transcript records it (none before the first model call).
    pub(crate) fn stored_usage(&self) -> Option<SessionUpdate> {
        let window = self.settings.lock().model.context_window;
        updates::stored_usage(&self.store.lock(), window)
    }

    /// The session's tree from its `from`-th entry (`_march/session/tree`).
    pub(crate) fn tree(&self, from: u64) -> crate::session_tree::SessionTreeResponse {
        super::tree::tree(&self.store.lock(), from)
    }

    /// The conversation as updates, for `session/load`.
    pub(crate) fn replay(&self) -> Vec<SessionUpdate> {
        replay::replay(&self.store.lock(), &self.tools, self.client.compaction, 0)
    }

    /// Apply a config option. Model and thinking changes are recorded in the transcript
    /// (as pi records them) before they take effect; the next model request uses them.
    pub(crate) async fn set_option(
        &self,
        config_id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<Vec<SessionConfigOption>, Error> {
        let change = options::parse_change(config_id, value, &self.registry)?;
        let store = self.store.clone();
        let record = change.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = store.lock();
            match &record {
                Change::Model(m) => store.append_model_change(&m.provider, &m.id).map(drop),
                Change::Thinking(t) => store.append_thinking_level(t.as_str()).map(drop),
                // The permission mode and limits are March's own session state, not transcript.
                Change::Mode(_)
                | Change::MaxTurns(_)
                | Change::ToolTimeout(_)
                | Change::Sandbox(_) => Ok(()),
            }
        })
        .await
        .map_err(|e| errors::internal(format!("recording the change failed: {e}")))?
        .map_err(|e| errors::internal(e.to_string()))?;
        {
            let mut settings = self.settings.lock();
            match change.clone() {
                Change::Model(m) => settings.model = m,
                Change::Thinking(t) => settings.thinking = t,
                Change::Mode(m) => {
                    settings.mode = m;
                    // Until the user picks a sandbox for the session, it follows the mode
                    // (none under yolo), as it was chosen when the session opened.
                    if self.state.saved_sandbox().is_none() {
                        let yolo = m == options::PermissionMode::Yolo;
                        self.sandbox.set_mode(crate::sandbox_exec::default_mode(
                            &self.config.sandbox,
                            yolo,
                        ));
                    }
                }
                Change::MaxTurns(n) => {
                    settings.limits.max_turns = n;
                    settings.limits.chosen = true;
                }
                Change::ToolTimeout(t) => {
                    settings.limits.tool_timeout = t;
                    settings.limits.chosen = true;
                }
                // Commands started from now on run in it; running ones keep theirs.
                Change::Sandbox(m) => self.sandbox.set_mode(m),
            }
        }
        self.state.changed(&change, &self.settings).await;
        Ok(self.config_options())
    }

    /// Record a command the user ran (`_march/session/bash`) as a bash execution entry, after
    /// the running turn (so it never lands inside one), and show it to the client as the
    /// user's message.
    pub(crate) async fn record_bash(
        &self,
        req: crate::user_shell::RecordBashRequest,
        port: &Arc<dyn ClientPort>,
    ) -> Result<(), Error> {
        let _turn = self.turns.lock().await;
        let message = BashExecutionMessage {
            command: req.command,
            output: req.output,
            exit_code: req.exit_code,
            cancelled: req.cancelled,
            truncated: req.truncated,
            full_output_path: None,
            timestamp: march_core::message::now_ms(),
            exclude_from_context: req.exclude_from_context,
        };
        let text = bash_execution_to_text(&message);
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            store
                .lock()
                .append_message(SessionMessage::BashExecution(message))
                .map(drop)
        })
        .await
        .map_err(|e| errors::internal(format!("recording the command failed: {e}")))?
        .map_err(|e| errors::internal(e.to_string()))?;
        port.notify(SessionUpdate::UserMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(text)),
        )));
        Ok(())
    }

    /// `/compact [instructions]`: compact now and say how it went.
    async fn compact_command(
        &self,
        instructions: Option<String>,
        port: &Arc<dyn ClientPort>,
        cancel: CancellationToken,
    ) -> StopReason {
        let outcome =
            compaction::compact(self, port, Trigger::Manual(instructions), cancel.clone()).await;
        let text = match outcome {
            Outcome::Compacted { tokens_before } => format!(
                "Compacted: about {tokens_before} tokens of conversation now start from a summary."
            ),
            Outcome::NothingToCompact => {
                "Nothing to compact: the conversation is no longer than what compaction keeps."
                    .to_string()
            }
            Outcome::Failed(error) => {
                format!("Compaction failed; the conversation is unchanged. {error}")
            }
        };
        if cancel.is_cancelled() {
            return StopReason::Cancelled;
        }
        port.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(text)),
        )));
        StopReason::EndTurn
    }

    /// The turn lock, when no turn runs or waits: work that must not interleave with a turn
    /// (moving the leaf) holds it.
    pub(super) fn try_hold_turns(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        self.turns.try_lock().ok()
    }

    /// A token cancelled with the session's current turns (`session/cancel`).
    pub(super) fn cancel_token(&self) -> CancellationToken {
        self.epoch.lock().child_token()
    }

    /// Stop the running turn and every queued prompt (`session/cancel`).
    pub(crate) fn cancel(&self) {
        let old = std::mem::replace(&mut *self.epoch.lock(), CancellationToken::new());
        old.cancel();
    }

    /// Forget the session: its turns are cancelled, no new prompt is accepted, and its MCP
    /// servers are closed.
    pub(crate) async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.cancel();
        self.mcp.shutdown().await;
    }

    /// Run a prompt as one Agent Run, after the turns queued before it; with a `schema`, its
    /// final answer must match it. `request` is the prompt's own `$/cancel_request` marker,
    /// which cancels this prompt only.
    pub(crate) async fn prompt(
        self: &Arc<Self>,
        blocks: &[ContentBlock],
        schema: Option<ResponseSchema>,
        port: Arc<dyn ClientPort>,
        request: RequestCancellation,
    ) -> Result<PromptResponse, Error> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(errors::session_not_found(&self.id));
        }
        let user = content::user_message(blocks)?;
        if content::has_image(&user) {
            let model = self.settings.lock().model.clone();
            if !model.images {
                // Refused rather than sent without the picture the user meant to show.
                return Err(errors::invalid_params(format!(
                    "the model {} does not take images; choose one that does (/model)",
                    options::model_spec(&model)
                )));
            }
        }
        let mine = self.epoch.lock().child_token();
        let run = async {
            let _turn = tokio::select! {
                biased;
                () = mine.cancelled() => return Ok(PromptResponse::new(StopReason::Cancelled)),
                guard = self.turns.lock() => guard,
            };
            if mine.is_cancelled() {
                return Ok(PromptResponse::new(StopReason::Cancelled));
            }
            // Messages typed from here on are this prompt's, also while it is prepared.
            self.queue.opened(port.clone());
            let result = self.prepare_and_run(user, schema, &port, &mine).await;
            // What was queued into the turn and never delivered goes back to the client.
            let unsent = self.queue.run_ended();
            result.map(|response| with_unsent(response, unsent))
        };
        tokio::pin!(run);
        tokio::select! {
            biased;
            result = &mut run => result,
            () = request.cancelled() => {
                mine.cancel();
                run.await
            }
        }
    }

    /// The prompt's commands and expansions, then its run (the turn is the prompt's).
    async fn prepare_and_run(
        self: &Arc<Self>,
        mut user: march_core::message::UserMessage,
        schema: Option<ResponseSchema>,
        port: &Arc<dyn ClientPort>,
        mine: &CancellationToken,
    ) -> Result<PromptResponse, Error> {
        if let Some(instructions) = compact_command(&user) {
            let stop = self.compact_command(instructions, port, mine.clone()).await;
            return Ok(PromptResponse::new(stop));
        }
        if turn::user_text(&user).trim() == "/skills" {
            port.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::Text(TextContent::new(self.commands.skills_listing())),
            )));
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        if let Some((command, rest)) = mcp_prompt_command(&user) {
            self.mcp.prepare(port, mine).await;
            let hub = self.mcp.hub();
            let expanded = tokio::select! {
                biased;
                () = mine.cancelled() => return Ok(PromptResponse::new(StopReason::Cancelled)),
                expanded = hub.run_prompt(&command, &rest) => expanded,
            };
            match expanded {
                Some(Ok(content)) => {
                    user.content = march_core::message::UserBody::Blocks(content);
                }
                Some(Err(e)) => {
                    port.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        ContentBlock::Text(TextContent::new(e)),
                    )));
                    return Ok(PromptResponse::new(StopReason::EndTurn));
                }
                // Not a prompt of a running server: sent as typed.
                None => {}
            }
        }
        // A skill's or a prompt template's command is its text, expanded (as pi records
        // it); a skill's file is read again, off the async threads.
        let typed = turn::user_text(&user).trim_start().to_string();
        let commands = self.commands.clone();
        let skill = tokio::task::spawn_blocking(move || {
            march_core::skills::expand(&typed, commands.skills())
        })
        .await
        .ok()
        .flatten();
        let expanded = match skill {
            Some(Err(e)) => {
                port.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    ContentBlock::Text(TextContent::new(e)),
                )));
                return Ok(PromptResponse::new(StopReason::EndTurn));
            }
            Some(Ok(text)) => Some(text),
            None => march_core::prompt_templates::expand(
                turn::user_text(&user).trim_start(),
                self.commands.templates(),
            ),
        };
        if let Some(expanded) = expanded {
            use march_core::message::{UserBody, UserContent};
            // Pictures sent with it stay; the text is the template's.
            user.content = match std::mem::replace(&mut user.content, UserBody::Text(String::new()))
            {
                UserBody::Text(_) => UserBody::Text(expanded),
                UserBody::Blocks(blocks) => {
                    let mut out = vec![UserContent::text(expanded)];
                    out.extend(
                        blocks
                            .into_iter()
                            .filter(|b| !matches!(b, UserContent::Text(_))),
                    );
                    UserBody::Blocks(out)
                }
            };
        }
        let (title, saving) = self.state.prompt_started(&user).await;
        if let Some(title) = title {
            // Clients learn the title as ACP says: a session info update.
            port.notify(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(title),
            ));
        }
        let stop = turn::run(self, user, schema, port.clone(), mine.clone()).await;
        if let Some(saving) = saving
            && let Err(e) = saving.await
        {
            tracing::warn!(error = %e, "saving March session state failed");
        }
        // Commands a cancel cut short are released before the turn answers.
        self.terminals.settle().await;
        // Indexed before the answer, so a search right after finds the turn; a failure
        // is only logged and the next pass catches up.
        self.history.index_session(self.path()).await;
        stop
    }
}

/// `response` with `_meta.march.unsent`: the ids of queued messages its turn never delivered.
fn with_unsent(response: PromptResponse, unsent: Vec<String>) -> PromptResponse {
    if unsent.is_empty() {
        return response;
    }
    crate::structured_output::with_march_meta(
        response,
        crate::steering::UNSENT_KEY,
        serde_json::json!(unsent),
    )
}

/// The instructions of a `/compact [instructions]` prompt (`Some(None)` without any);
/// `None` when the prompt is not that command.
fn compact_command(user: &march_core::message::UserMessage) -> Option<Option<String>> {
    let text = turn::user_text(user);
    let rest = text.trim_start().strip_prefix("/compact")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim();
    Some((!rest.is_empty()).then(|| rest.to_string()))
}

/// `/mcp__<server>__<prompt> ARGS`: the command (without `/`) and the text after it.
fn mcp_prompt_command(user: &march_core::message::UserMessage) -> Option<(String, String)> {
    let text = turn::user_text(user);
    let text = text.trim_start().strip_prefix('/')?;
    if !text.starts_with("mcp__") {
        return None;
    }
    let (command, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    Some((command.to_string(), rest.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::message::UserMessage;

    #[test]
    fn an_mcp_prompt_command_is_its_name_and_the_rest() {
        let c = |t: &str| mcp_prompt_command(&UserMessage::text(t));
        assert_eq!(
            c("/mcp__docs__review src/a.rs  carefully "),
            Some(("mcp__docs__review".into(), "src/a.rs  carefully".into()))
        );
        assert_eq!(
            c("/mcp__docs__summary"),
            Some(("mcp__docs__summary".into(), String::new()))
        );
        assert_eq!(c("/compact"), None);
        assert_eq!(c("use /mcp__x__y"), None);
    }

    #[test]
    fn only_the_compact_command_is_taken_as_one() {
        let c = |t: &str| compact_command(&UserMessage::text(t));
        assert_eq!(c("/compact"), Some(None));
        assert_eq!(c("  /compact  \n"), Some(None));
        assert_eq!(
            c("/compact keep the parser decisions"),
            Some(Some("keep the parser decisions".into()))
        );
        assert_eq!(c("/compaction please"), None);
        assert_eq!(c("please /compact"), None);
    }
}
