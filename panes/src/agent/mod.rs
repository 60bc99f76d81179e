//! The agent pane: a session's transcript (markdown, highlighted code, collapsible thinking
//! and tool calls, inline diffs), a prompt editor with history and slash-command completion,
//! permission requests as a modal, and a border showing the model, context use and cost.
//!
//! The app owns the connection: it feeds the pane ACP updates ([`AgentPane::apply`]) and
//! turn boundaries, gives it the keys its keymap did not claim ([`AgentPane::handle_key`]),
//! calls a method for each mapped command, and acts on the [`PaneEvent`]s that come back.

mod blocks;
mod capture;
mod completion;
mod content;
mod copy;
mod diff;
mod events;
mod frame;
mod heights;
mod input;
mod mention;
mod permission;
mod picker;
mod pictures;
mod prompt;
mod queue;
mod render;
mod status;
mod stream;
mod transcript;
mod tree;
mod tree_pane;

use std::collections::VecDeque;
use std::time::Instant;

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionConfigOption,
    SessionConfigOptionCategory, SessionId, SessionModeId, SessionModeState, SessionUpdate,
    ToolCallStatus,
};

use crate::markdown::code_blocks;
use crate::sanitize::sanitize_line;
use completion::Completion;
use permission::PermissionQueue;
use picker::Picker;
use prompt::Prompt;
use queue::Queued;
use render::Scrollback;
use transcript::{Severity, Transcript};

pub(crate) use blocks::human_duration;
pub use completion::BUILTIN_COMMANDS;
pub use events::{PaneEvent, QueuedKind, TurnOutcome};
pub use mention::ProjectFiles;
pub use prompt::PromptEdit;

pub use permission::{DEFAULT_HOLD as PERMISSION_HOLD, PermissionId};
pub use picker::SessionChoice;
pub use status::{PaneStatus, SANDBOX_CATEGORY};
pub use transcript::BranchMove;
pub use tree::{RestoreLine, TreeMove, TreeNode, TreeNodeKind};

/// An agent pane.
#[derive(Debug)]
pub struct AgentPane {
    title: String,
    transcript: Transcript,
    scroll: Scrollback,
    prompt: Prompt,
    completion: Completion,
    permissions: PermissionQueue,
    picker: Option<Picker>,
    /// The session tree or rewind list, while open.
    tree: Option<tree::TreeView>,
    /// The session's tree as last listed by the agent.
    tree_model: tree_pane::TreeModel,
    /// Esc was pressed on an empty prompt: a second Esc opens the rewind list.
    rewind_armed: bool,
    tools_expanded: bool,
    thinking_expanded: bool,
    busy: bool,
    /// Prompts typed while a turn ran, oldest first: each runs as its own turn after it.
    queued: VecDeque<Queued>,
    /// Numbers queued messages until the agent gives them ids.
    next_queued: u64,
    /// When the running turn started, for its elapsed time.
    turn_since: Option<Instant>,
    /// Since when the running turn waits on the model: nothing came from it since the turn
    /// started or its tool calls finished.
    model_wait: Option<Instant>,
    unread: bool,
    focused: bool,
    error: Option<String>,
    cursor: Option<(u16, u16)>,
    /// Copy mode, while it is on.
    copy: Option<copy::CopyState>,
    /// A turn to show once it is in the transcript (a search's match, in a session still
    /// loading): its message id and the words it holds.
    reveal: Option<(Option<String>, String)>,
    /// Frames the turn to reveal was looked for and not found; it is given up after a few
    /// hundred (a session that finished loading without it).
    reveal_tries: u32,
    /// Blocks expanded or collapsed one by one (index → expanded), over the toggles.
    expanded: std::collections::HashMap<usize, bool>,
    /// The `@` popup and the mentions chosen.
    mentions: mention::Mentions,
    /// When copy mode's search ignores case.
    search_case: crate::copy::SearchCase,
    /// Pictures attached to the prompt, and where the transcript's were drawn.
    pictures: pictures::Pictures,
}

impl AgentPane {
    /// An empty pane titled `title` (the session's title replaces it when the agent sends one).
    pub fn new(title: impl Into<String>) -> Self {
        AgentPane {
            title: title.into(),
            transcript: Transcript::default(),
            scroll: Scrollback::default(),
            prompt: Prompt::default(),
            completion: Completion::default(),
            permissions: PermissionQueue::default(),
            picker: None,
            tree: None,
            tree_model: tree_pane::TreeModel::default(),
            rewind_armed: false,
            tools_expanded: false,
            thinking_expanded: false,
            busy: false,
            queued: VecDeque::new(),
            next_queued: 0,
            turn_since: None,
            model_wait: None,
            unread: false,
            focused: false,
            error: None,
            cursor: None,
            copy: None,
            mentions: mention::Mentions::default(),
            expanded: std::collections::HashMap::new(),
            reveal: None,
            reveal_tries: 0,
            search_case: crate::copy::SearchCase::default(),
            pictures: pictures::Pictures::default(),
        }
    }

    /// The session's title (from the agent), else the one given to [`Self::new`].
    pub fn title(&self) -> &str {
        self.session_title().unwrap_or(&self.title)
    }

    /// The session's title, once the agent gave one.
    pub fn session_title(&self) -> Option<&str> {
        self.transcript.facts.title.as_deref()
    }

    /// The border's title: the one given to [`Self::new`] (agent and project), then the
    /// session's.
    pub fn border_title(&self) -> String {
        match self.session_title() {
            Some(t) if !t.trim().is_empty() => format!("{} · {t}", self.title),
            _ => self.title.clone(),
        }
    }

    /// Applies a `session/update`; true when something shown changed.
    pub fn apply(&mut self, update: &SessionUpdate) -> bool {
        self.apply_at(update, Instant::now())
    }

    /// [`Self::apply`] at a given time (tool call durations are measured with it).
    pub(crate) fn apply_at(&mut self, update: &SessionUpdate, now: Instant) -> bool {
        // A queued message the agent delivered leaves the queue; the transcript shows it.
        if let SessionUpdate::UserMessageChunk(chunk) = update
            && let Some(id) = chunk
                .meta
                .as_ref()
                .and_then(|m| m.get("march")?.get("queueId")?.as_str())
        {
            self.queued.retain(|q| q.taken_id() != Some(id));
        }
        let changed = self.transcript.apply(update, now);
        if self.busy {
            self.track_model_wait(update, now);
        }
        if changed && !self.focused {
            self.unread = true;
        }
        changed
    }

    /// Shows a prompt the user sent (runners do not echo live prompts) and follows the end.
    pub fn submit_local(&mut self, text: &str) {
        self.submit_local_with(text, &[]);
    }

    /// Shows a prompt the user sent with pictures.
    pub fn submit_local_with(
        &mut self,
        text: &str,
        pictures: &[std::sync::Arc<crate::picture::Picture>],
    ) {
        if !text.is_empty() || pictures.is_empty() {
            self.transcript.push_user(text);
        }
        self.transcript.push_user_pictures(pictures);
        self.pictures_sent(text, pictures);
        self.scroll.scroll_to_bottom();
    }

    /// Whether the model is heard from: anything it produces ends a wait, and the last open
    /// tool call finishing starts one (its results go back to the model).
    fn track_model_wait(&mut self, update: &SessionUpdate, now: Instant) {
        match update {
            SessionUpdate::AgentMessageChunk(_)
            | SessionUpdate::AgentThoughtChunk(_)
            | SessionUpdate::ToolCall(_)
            | SessionUpdate::Plan(_) => {
                self.model_wait = None;
                self.pictures_answered();
            }
            SessionUpdate::ToolCallUpdate(u)
                if matches!(
                    u.fields.status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                ) && !self.transcript.has_open_tool_calls() =>
            {
                self.model_wait = Some(now);
            }
            _ => {}
        }
    }

    /// Since when the running turn runs, if one does.
    pub fn turn_since(&self) -> Option<Instant> {
        self.turn_since.filter(|_| self.busy)
    }

    /// Since when the running turn has been waiting for the model, if it is.
    pub fn model_wait(&self) -> Option<Instant> {
        self.model_wait
            .filter(|_| self.busy && self.permissions.is_empty())
    }

    /// A turn started.
    pub fn turn_started(&mut self) {
        self.turn_since = Some(Instant::now());
        self.model_wait = Some(Instant::now());
        self.busy = true;
        self.error = None;
        self.transcript.begin_turn();
    }

    /// A turn ended; anything but a normal end leaves a line in the transcript.
    pub fn turn_ended(&mut self, outcome: TurnOutcome) {
        self.turn_ended_with(outcome, &[]);
    }

    /// [`Self::turn_ended`], with the ids of queued messages the turn never delivered (from
    /// its answer's `_meta.march.unsent`).
    pub fn turn_ended_with(&mut self, outcome: TurnOutcome, unsent: &[String]) {
        self.busy = false;
        self.model_wait = None;
        self.turn_since = None;
        let restore = matches!(outcome, TurnOutcome::Cancelled | TurnOutcome::Error(_));
        self.settle_queue(unsent, restore);
        match outcome {
            TurnOutcome::Error(_) => self.unsend_pictures(),
            _ => self.pictures_answered(),
        }
        let cancelled = outcome == TurnOutcome::Cancelled;
        self.transcript.end_turn(cancelled, Instant::now());
        let (severity, text) = match &outcome {
            TurnOutcome::EndTurn => (None, String::new()),
            TurnOutcome::Cancelled => (Some(Severity::Warning), "Cancelled".to_string()),
            TurnOutcome::MaxTokens => (
                Some(Severity::Warning),
                "Stopped: the reply reached the token limit".to_string(),
            ),
            TurnOutcome::MaxTurnRequests(reason) => (
                Some(Severity::Warning),
                match reason {
                    Some(reason) => format!("Stopped at a limit: {reason}"),
                    None => "Stopped: the turn made too many model requests".to_string(),
                },
            ),
            TurnOutcome::Refusal => (Some(Severity::Warning), "The agent refused".to_string()),
            TurnOutcome::Error(e) => {
                self.error = Some(e.clone());
                (Some(Severity::Error), e.clone())
            }
        };
        if let Some(severity) = severity {
            self.transcript.push_notice(severity, &text, None);
        }
        if !self.focused {
            self.unread = true;
        }
    }

    /// Shows an error in the transcript and the status until the next turn.
    pub fn set_error(&mut self, message: impl Into<String>) {
        let message = message.into();
        self.transcript.push_notice(Severity::Error, &message, None);
        self.error = Some(message);
    }

    /// Shows an informational line in the transcript (answers to built-in commands).
    pub fn notice(&mut self, message: impl Into<String>) {
        self.transcript
            .push_notice(Severity::Info, &message.into(), None);
        self.scroll.scroll_to_bottom();
    }

    /// Shows an informational block: a title line and `detail` under it, as it is laid out.
    pub fn notice_detail(&mut self, title: &str, detail: &str) {
        self.transcript
            .push_notice(Severity::Info, title, Some(detail));
        self.scroll.scroll_to_bottom();
    }

    /// Shows `tail` (the last lines of terminal `terminal_id`) under the tool call that runs
    /// in it; false when no tool call shows that terminal.
    pub fn set_terminal_tail(&mut self, terminal_id: &str, tail: Vec<String>) -> bool {
        self.transcript.set_terminal_tail(terminal_id, tail)
    }

    /// Replaces the title given to [`Self::new`] (a session's own title still wins).
    pub fn set_title(&mut self, title: impl Into<String>) {
        self.title = title.into();
    }

    /// Empties the transcript for a new session; the prompt history stays.
    pub fn clear(&mut self) {
        self.leave_copy_mode();
        self.expanded.clear();
        self.transcript.clear();
        self.permissions.drain();
        self.picker = None;
        self.tree = None;
        self.tree_model = tree_pane::TreeModel::default();
        self.busy = false;
        self.model_wait = None;
        self.error = None;
    }

    /// Shows a permission request as a modal (queued behind one already open).
    pub fn show_permission(&mut self, request: RequestPermissionRequest) -> PermissionId {
        let known = self
            .transcript
            .tool_call(&request.tool_call.tool_call_id.0)
            .map(|t| (t.title.clone(), t.kind));
        let id = self.permissions.push(request, known);
        self.unread = !self.focused || self.unread;
        id
    }

    /// Removes a request the agent withdrew; true when it was shown or queued.
    pub fn dismiss_permission(&mut self, id: PermissionId) -> bool {
        self.permissions.remove(id)
    }

    /// Removes every open request (the turn ended or was cancelled), returning their ids so
    /// the app can answer them `cancelled`.
    pub fn clear_permissions(&mut self) -> Vec<PermissionId> {
        self.permissions.drain()
    }

    /// What the editor holds.
    pub fn prompt_text(&self) -> String {
        self.prompt.text()
    }

    /// Puts `text` in the editor (a draft restored, a prompt edited elsewhere); the
    /// event asks for the project's files when the text ends in an `@` word.
    pub fn set_prompt_text(&mut self, text: &str) -> PaneEvent {
        self.prompt.replace(text);
        self.refresh_completion();
        self.redraw_or_list_files()
    }

    /// The project's files, for `@` mentions (asked for with [`PaneEvent::ListFiles`]).
    pub fn set_files(&mut self, files: ProjectFiles) {
        self.mentions.set_files(files);
    }

    /// The prompts remembered for Up/Down and Ctrl-R, oldest first.
    pub fn history(&self) -> &[String] {
        self.prompt.history()
    }

    /// Replaces the prompts remembered (the project's history, oldest first).
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.prompt.set_history(entries);
    }

    /// Remembers a prompt sent from another pane of the project.
    pub fn remember_prompt(&mut self, text: &str) {
        self.prompt.remember(text);
    }

    /// Whether the session holds a prompt (typed here or replayed), so that there is
    /// something for the agent to load.
    pub fn has_prompt(&self) -> bool {
        self.transcript
            .blocks()
            .iter()
            .any(|b| matches!(b, transcript::Block::Message(m) if m.role == transcript::Role::User))
    }

    /// The first open permission request, whole (its title, whether it leaves the sandbox,
    /// all it would do), if one is open.
    pub fn pending_question(&self) -> Option<&str> {
        self.permissions.front().map(|m| m.question())
    }

    /// The newest open permission request, whole (the one just shown).
    pub fn newest_question(&self) -> Option<&str> {
        self.permissions.back().map(|m| m.question())
    }

    /// How long a permission dialog holds its answer keys after it appears and after the
    /// last key typed into the pane (type-ahead never answers it).
    pub fn set_permission_hold(&mut self, hold: std::time::Duration) {
        self.permissions.set_hold(hold);
    }

    /// When the pane must be drawn again without any event: a dialog's answer keys arming.
    pub fn next_wake(&self, now: Instant) -> Option<Instant> {
        self.permissions.arms_at(now)
    }

    /// Answers the first open permission request with the agent's option of `kind` (from a
    /// list outside the pane); nothing when none is open or the agent offers no such option.
    pub fn answer_question(&mut self, kind: PermissionOptionKind) -> PaneEvent {
        match self.permissions.front().and_then(|m| m.option_of(kind)) {
            Some(outcome) => self.answer(outcome),
            None => PaneEvent::None,
        }
    }

    fn answer(&mut self, outcome: RequestPermissionOutcome) -> PaneEvent {
        match self.permissions.pop_front() {
            Some(modal) => {
                if modal.rejects(&outcome) {
                    // Its failure to come is the user's no, and is shown as such.
                    self.transcript
                        .mark_rejected(modal.tool_call_id().0.as_ref());
                }
                PaneEvent::Permission {
                    id: modal.id,
                    tool_call_id: modal.tool_call_id().clone(),
                    outcome,
                }
            }
            None => PaneEvent::None,
        }
    }

    /// Expands or collapses every tool call's output (diffs show either way); blocks
    /// toggled one by one follow again.
    pub fn toggle_tools(&mut self) -> PaneEvent {
        self.tools_expanded = !self.tools_expanded;
        self.forget_expanded(true);
        PaneEvent::Redraw
    }

    /// Expands or collapses thinking and compaction summaries; blocks toggled one by one
    /// follow again.
    pub fn toggle_thinking(&mut self) -> PaneEvent {
        self.thinking_expanded = !self.thinking_expanded;
        self.forget_expanded(false);
        PaneEvent::Redraw
    }

    /// Drops the expansion of tool call blocks (`tools`) or of the others, each laid out
    /// again.
    fn forget_expanded(&mut self, tools: bool) {
        let blocks = self.transcript.blocks();
        let gone: Vec<usize> = self
            .expanded
            .keys()
            .copied()
            .filter(|&i| matches!(blocks.get(i), Some(transcript::Block::Tool(_))) == tools)
            .collect();
        for i in gone {
            self.expanded.remove(&i);
            self.transcript.touch(i);
        }
    }

    /// Expands or collapses block `i` alone, when it is a tool call, thinking or a
    /// compaction summary; whether it was one.
    pub(crate) fn toggle_block(&mut self, i: usize) -> bool {
        let Some(block) = self.transcript.blocks().get(i) else {
            return false;
        };
        let global = match block {
            transcript::Block::Tool(_) => self.tools_expanded,
            transcript::Block::Message(m) if m.role == transcript::Role::Thought => {
                self.thinking_expanded
            }
            transcript::Block::Compaction(_) => self.thinking_expanded,
            _ => return false,
        };
        let now = !self.expanded.get(&i).copied().unwrap_or(global);
        if now == global {
            self.expanded.remove(&i);
        } else {
            self.expanded.insert(i, now);
        }
        self.transcript.touch(i);
        true
    }

    /// The latest agent message, for copying.
    pub fn last_message_text(&self) -> Option<String> {
        self.transcript.last_agent_text().map(str::to_string)
    }

    /// The transcript as markdown text, only its last `last_turns` turns when given.
    pub fn capture(&self, last_turns: Option<usize>) -> String {
        self.transcript.markdown(last_turns)
    }

    /// Scrolls to the turn whose user message has id `message_id`, else the first holding
    /// `words`, as soon as the transcript has it (a session being loaded gets it later).
    pub fn reveal(&mut self, message_id: Option<&str>, words: &str) {
        self.reveal = Some((message_id.map(str::to_string), words.to_string()));
        self.reveal_tries = 0;
        self.resolve_reveal();
    }

    /// Shows the turn asked for by [`Self::reveal`], once it is there.
    pub(crate) fn resolve_reveal(&mut self) {
        let Some((id, words)) = &self.reveal else {
            return;
        };
        // A transcript rebuilt since the last frame is followed from its end at the next:
        // the turn is shown after that.
        if self.transcript.pending_reset() {
            return;
        }
        if let Some(i) = self.transcript.find_turn(id.as_deref(), words) {
            self.scroll.show_block(i);
            self.reveal = None;
        } else {
            self.reveal_tries += 1;
            if self.reveal_tries > 300 {
                self.reveal = None;
            }
        }
    }

    /// Shows the change of `path` (`old` to `new`) under tool call `tool_call` (from a
    /// record of changes, for a replay that names the call but not the texts); false when
    /// the call is not shown or already shows that file.
    pub fn add_file_change(
        &mut self,
        tool_call: &str,
        path: &str,
        old: Option<&str>,
        new: &str,
    ) -> bool {
        self.transcript.add_diff(tool_call, path, old, new)
    }

    /// The whole session as a markdown document (`/export`, `march export`): prompts,
    /// answers, thinking and tool outputs collapsed under summaries, diffs as diff blocks.
    pub fn export_markdown(&self) -> String {
        self.transcript.export(self.title())
    }

    /// The last code block of the latest agent message that has one, for copying.
    pub fn last_code_block(&self) -> Option<String> {
        self.transcript
            .agent_texts()
            .find_map(|text| code_blocks(text).pop())
    }

    /// Replaces the session's config options (from `session/new`, `load` or a set response).
    pub fn set_config_options(&mut self, options: &[SessionConfigOption]) {
        self.transcript.facts.config = options.to_vec();
    }

    /// The session's ACP modes (for agents that offer modes rather than, or besides, a mode
    /// config option), as `session/new` or `session/load` answered them.
    pub fn set_modes(&mut self, modes: Option<&SessionModeState>) {
        let facts = &mut self.transcript.facts;
        match modes {
            Some(state) => {
                facts.mode = Some(sanitize_line(&state.current_mode_id.0).into_owned());
                facts.modes = state
                    .available_modes
                    .iter()
                    .map(|m| (m.id.0.to_string(), sanitize_line(&m.name).into_owned()))
                    .collect();
            }
            None => facts.modes.clear(),
        }
    }

    /// The agent switched to mode `id` (its answer to `session/set_mode`).
    pub fn mode_set(&mut self, id: &str) {
        self.transcript.facts.mode = Some(sanitize_line(id).into_owned());
    }

    /// The next permission mode after the current one (Shift-Tab): the mode config option's
    /// next value, else the next ACP session mode; `None` when the agent offers neither.
    pub fn cycle_mode(&mut self) -> PaneEvent {
        let facts = &self.transcript.facts;
        if let Some((config_id, value)) =
            status::next_value(&facts.config, &SessionConfigOptionCategory::Mode)
        {
            return PaneEvent::SetConfigOption { config_id, value };
        }
        let modes = &facts.modes;
        let at = modes
            .iter()
            .position(|(id, _)| Some(id) == facts.mode.as_ref());
        match modes.get(at.map_or(0, |i| (i + 1) % modes.len())) {
            Some((id, _)) => PaneEvent::SetMode(SessionModeId::new(id.clone())),
            None => {
                self.notice("The agent offers no modes to switch between.");
                PaneEvent::Redraw
            }
        }
    }

    /// The session's config options.
    pub fn config_options(&self) -> &[SessionConfigOption] {
        &self.transcript.facts.config
    }

    /// Opens a chooser for the select option of `category` (e.g. the model for `/model`);
    /// false when the session has none.
    pub fn open_config_picker(&mut self, category: &SessionConfigOptionCategory) -> bool {
        let picker = self
            .transcript
            .facts
            .config
            .iter()
            .filter(|o| o.category.as_ref() == Some(category))
            .find_map(Picker::new);
        self.picker = picker;
        self.picker.is_some()
    }

    /// Adds `choices` (value id, label) to an open chooser of the option of `category`, after
    /// what the agent offered (models a local server serves, found after the picker opened);
    /// whether the pane changed.
    pub fn offer_more_choices(
        &mut self,
        category: &SessionConfigOptionCategory,
        choices: &[(String, String)],
    ) -> bool {
        let Some(id) = self
            .transcript
            .facts
            .config
            .iter()
            .find(|o| o.category.as_ref() == Some(category))
            .map(|o| o.id.clone())
        else {
            return false;
        };
        self.picker
            .as_mut()
            .is_some_and(|p| p.offer_more(&id, choices))
    }

    /// Opens the `/resume` chooser over `sessions` (newest first), `current` marked; false
    /// when there are none.
    pub fn open_session_picker(
        &mut self,
        sessions: &[SessionChoice],
        current: Option<&SessionId>,
    ) -> bool {
        self.picker = Picker::sessions(sessions, current);
        self.picker.is_some()
    }

    /// The file an edit tool call drawn at screen position (`x`, `y`) changed (its first
    /// diff's path), from the last frame.
    pub fn file_at(&self, x: u16, y: u16) -> Option<String> {
        self.edited_file(self.scroll.block_at(x, y)?)
    }

    /// The file of the lowest edit tool call the last frame showed (what the user was
    /// looking at), if one was on screen.
    pub fn file_on_screen(&self) -> Option<String> {
        self.scroll
            .drawn_blocks()
            .find_map(|block| self.edited_file(block))
    }

    /// The file block `block` changed, when it is an edit's tool call.
    fn edited_file(&self, block: usize) -> Option<String> {
        match self.transcript.blocks().get(block)? {
            transcript::Block::Tool(tool) => tool.body.iter().find_map(|b| match b {
                transcript::ToolBody::Diff { path, .. } => Some(path.clone()),
                _ => None,
            }),
            _ => None,
        }
    }

    /// Where the terminal cursor goes after the last [`Self::render`], when focused.
    pub fn cursor_position(&self) -> Option<(u16, u16)> {
        self.cursor
    }

    /// Blocks laid out so far; tests use it to check only visible blocks are.
    #[cfg(test)]
    pub(crate) fn layout_count(&self) -> u64 {
        self.scroll.renders()
    }
}

#[cfg(test)]
mod tests;
