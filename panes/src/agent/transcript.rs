//! The transcript model: blocks built from ACP `session/update`s plus the session facts the
//! pane shows (title, usage, commands, config options). Every text is sanitised on the way
//! in, so nothing an agent sends reaches a renderer raw.
//!
//! Blocks are only ever appended or changed in place, never removed (except by
//! [`Transcript::clear`]); each change is recorded so the view re-renders just those blocks.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema::{
    AvailableCommand, CompactionStatus, ContentBlock, ContentChunk, NoticeSeverity, Plan,
    PlanEntryStatus, SessionConfigOption, SessionUpdate, ToolCallContent, ToolCallStatus,
    ToolCallUpdateFields, ToolKind,
};

use super::content::{block_text, tool_body};
use crate::picture::Picture;
use crate::sanitize::{sanitize, sanitize_line, sanitize_output};

/// Who wrote a message block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    User,
    Agent,
    Thought,
}

/// A message: text streamed in chunks, grouped by the agent's message id when it sends one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub role: Role,
    pub id: Option<String>,
    pub text: String,
}

/// A picture in a message: its label, and the picture itself where a terminal shows them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageView {
    pub role: Role,
    pub picture: Arc<Picture>,
}

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolState {
    Pending,
    Running,
    Done,
    Failed,
    /// Failed because the user turned its permission request down (ACP has no wire status
    /// for this either: the agent reports it failed).
    Rejected,
    /// Unfinished when its turn was cancelled (ACP has no wire status for this).
    Cancelled,
}

/// One piece of what a tool call shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolBody {
    Text(String),
    Diff {
        path: String,
        old: Option<String>,
        new: String,
    },
    Terminal(String),
}

/// A tool call as the transcript shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCallView {
    pub id: String,
    pub title: String,
    pub kind: ToolKind,
    pub state: ToolState,
    pub created: Instant,
    pub started: Option<Instant>,
    pub finished: Option<Instant>,
    pub body: Vec<ToolBody>,
    /// `rawOutput.output`: what a command printed when it ran in a terminal.
    pub raw_output: Option<String>,
    /// The last lines of the terminal it runs in, while the client shows one live.
    pub terminal_tail: Vec<String>,
    /// The whole command it runs (from its raw input), which a title shows only in part;
    /// sanitized.
    pub command: Option<String>,
    /// The user let it run outside the sandbox (March's `_meta.march.sandbox: "outside"`).
    pub outside: bool,
}

impl ToolCallView {
    /// How long the call ran, once it finished.
    pub(crate) fn duration(&self) -> Option<Duration> {
        let end = self.finished?;
        Some(end.saturating_duration_since(self.started.unwrap_or(self.created)))
    }
}

/// A plan entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanItem {
    pub text: String,
    pub status: PlanEntryStatus,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Info,
    Warning,
    Error,
}

/// A context compaction and its summary.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compaction {
    pub id: String,
    pub status: CompactionStatus,
    pub summary: String,
    pub error: Option<String>,
}

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Message(Message),
    Image(ImageView),
    Tool(ToolCallView),
    Plan(Vec<PlanItem>),
    Notice {
        severity: Severity,
        title: String,
        detail: Option<String>,
    },
    Compaction(Compaction),
}

/// Context use and cost from the latest usage update.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Usage {
    pub used: u64,
    pub size: u64,
    pub cost: Option<(f64, String)>,
    /// Every token of the session's model calls so far (March's runner says it in
    /// `_meta.march.usage`).
    pub total_tokens: Option<u64>,
}

/// Facts about the session that are not transcript blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SessionFacts {
    pub title: Option<String>,
    pub usage: Option<Usage>,
    pub commands: Vec<AvailableCommand>,
    pub config: Vec<SessionConfigOption>,
    /// The current ACP session mode's id, for agents that offer modes.
    pub mode: Option<String>,
    /// The modes the agent offers: id and name.
    pub modes: Vec<(String, String)>,
}

/// The transcript: blocks in order, with indexes to find the block an update belongs to.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    blocks: Vec<Block>,
    tools: HashMap<String, usize>,
    messages: HashMap<(Role, String), usize>,
    compactions: HashMap<String, usize>,
    /// The plan block of the current turn (plans replace themselves within a turn).
    plan: Option<usize>,
    changed: Vec<usize>,
    is_changed: Vec<bool>,
    /// Set when the block list was rebuilt, so views drop everything they cached.
    reset: bool,
    /// Tool calls whose permission request the user rejected.
    rejected: std::collections::HashSet<String>,
    /// Tool calls whose pictures (a generated image, a screenshot) were added after them.
    pictured: std::collections::HashSet<String>,
    /// The conversation put aside at the last leaf move, for when the leaf comes back.
    held: Option<held::HeldBranch>,
    pub facts: SessionFacts,
}

impl Transcript {
    /// The blocks, oldest first.
    pub(crate) fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Number of blocks.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether the block list was rebuilt since views last looked.
    pub(crate) fn pending_reset(&self) -> bool {
        self.reset
    }

    /// Indexes of blocks added or changed since the last call, and whether everything was
    /// replaced.
    pub(crate) fn take_changes(&mut self) -> (Vec<usize>, bool) {
        for &i in &self.changed {
            if let Some(flag) = self.is_changed.get_mut(i) {
                *flag = false;
            }
        }
        let reset = std::mem::take(&mut self.reset);
        (std::mem::take(&mut self.changed), reset)
    }

    /// Sets the live tail of terminal `terminal_id` on the tool call that shows it; whether
    /// one does.
    pub(crate) fn set_terminal_tail(&mut self, terminal_id: &str, tail: Vec<String>) -> bool {
        let found = self.tools.values().copied().find(|&i| {
            matches!(&self.blocks[i], Block::Tool(t)
                if t.body.iter().any(|b| matches!(b, ToolBody::Terminal(id) if id == terminal_id)))
        });
        let Some(i) = found else {
            return false;
        };
        if let Block::Tool(t) = &mut self.blocks[i] {
            if t.terminal_tail == tail {
                return true;
            }
            t.terminal_tail = tail;
        }
        self.mark(i);
        true
    }

    /// Adds the change of `path` from `old` to `new` to tool call `id` (a replay names the
    /// call but not the file's texts); false when there is no such call or it shows it.
    pub(crate) fn add_diff(&mut self, id: &str, path: &str, old: Option<&str>, new: &str) -> bool {
        let Some(&i) = self.tools.get(id) else {
            return false;
        };
        let Block::Tool(t) = &mut self.blocks[i] else {
            return false;
        };
        let (path, new) = (sanitize_line(path).into_owned(), new.to_string());
        let old = old.map(str::to_string);
        if t.body
            .iter()
            .any(|b| matches!(b, ToolBody::Diff { path: p, .. } if *p == path))
        {
            return false;
        }
        t.body.push(ToolBody::Diff { path, old, new });
        self.mark(i);
        true
    }

    /// The block of a turn: the user message with id `message_id`, else the first user
    /// message holding every word of `words` (case ignored), else the first block that does.
    pub(crate) fn find_turn(&self, message_id: Option<&str>, words: &str) -> Option<usize> {
        if let Some(id) = message_id
            && let Some(&i) = self.messages.get(&(Role::User, id.to_string()))
        {
            return Some(i);
        }
        let words: Vec<String> = words.split_whitespace().map(str::to_lowercase).collect();
        if words.is_empty() {
            return None;
        }
        let holds = |text: &str| {
            let text = text.to_lowercase();
            words.iter().all(|w| text.contains(w.as_str()))
        };
        fn text_of(b: &Block) -> Option<&str> {
            match b {
                Block::Message(m) => Some(m.text.as_str()),
                Block::Tool(t) => Some(t.title.as_str()),
                _ => None,
            }
        }
        self.blocks
            .iter()
            .position(|b| matches!(b, Block::Message(m) if m.role == Role::User && holds(&m.text)))
            .or_else(|| {
                self.blocks
                    .iter()
                    .position(|b| text_of(b).is_some_and(holds))
            })
    }

    /// Block `i` changed in how it is shown (expanded or collapsed): laid out again.
    pub(crate) fn touch(&mut self, i: usize) {
        if i < self.blocks.len() {
            self.mark(i);
        }
    }

    fn mark(&mut self, i: usize) {
        self.held_before(i);
        if self.is_changed.len() <= i {
            self.is_changed.resize(i + 1, false);
        }
        if !self.is_changed[i] {
            self.is_changed[i] = true;
            self.changed.push(i);
        }
    }

    fn push(&mut self, block: Block) -> usize {
        self.blocks.push(block);
        let i = self.blocks.len() - 1;
        self.mark(i);
        i
    }

    /// Empties the transcript (a new session in the same pane).
    pub(crate) fn clear(&mut self) {
        *self = Transcript {
            reset: true,
            ..Transcript::default()
        };
    }

    /// Empties the conversation but keeps what is known of the session (its title, usage,
    /// commands and options): the session's leaf moved and its new path is replayed.
    pub(crate) fn clear_conversation(&mut self) {
        let facts = std::mem::take(&mut self.facts);
        self.clear();
        self.facts = facts;
    }

    /// Where the `(kept + 1)`-th user message starts (the end when there is none), when the
    /// transcript shows exactly `of` user messages and the `kept`-th reads `last` (what the
    /// agent says is unchanged); none when it cannot tell.
    fn user_message_cut(&self, kept: usize, of: usize, last: Option<&str>) -> Option<usize> {
        let users: Vec<usize> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, Block::Message(m) if m.role == Role::User))
            .map(|(i, _)| i)
            .collect();
        if users.len() != of || kept > of {
            return None;
        }
        if let (Some(last), Some(i)) = (last, kept.checked_sub(1)) {
            let same = matches!(&self.blocks[users[i]], Block::Message(m)
                if m.text.trim() == sanitize(last).trim());
            if !same {
                return None;
            }
        }
        Some(users.get(kept).copied().unwrap_or(self.blocks.len()))
    }

    /// A prompt the user sent from this pane.
    pub(crate) fn push_user(&mut self, text: &str) {
        self.plan = None;
        self.push(Block::Message(Message {
            role: Role::User,
            id: None,
            text: sanitize(text).into_owned(),
        }));
    }

    /// Pictures the user sent from this pane with a prompt.
    pub(crate) fn push_user_pictures(&mut self, pictures: &[Arc<Picture>]) {
        for picture in pictures {
            self.push(Block::Image(ImageView {
                role: Role::User,
                picture: picture.clone(),
            }));
        }
    }

    /// A line from March itself (errors, turn outcomes).
    pub(crate) fn push_notice(&mut self, severity: Severity, title: &str, detail: Option<&str>) {
        self.push(Block::Notice {
            severity,
            title: sanitize_line(title).into_owned(),
            detail: detail.map(|d| sanitize(d).into_owned()),
        });
    }

    /// A new turn starts: a plan sent from now on is a new block.
    pub(crate) fn begin_turn(&mut self) {
        self.plan = None;
    }

    /// The user rejected tool call `id`: when it fails, it shows as rejected.
    pub(crate) fn mark_rejected(&mut self, id: &str) {
        self.rejected.insert(id.to_string());
    }

    /// Whether a tool call is still pending or running.
    pub(crate) fn has_open_tool_calls(&self) -> bool {
        self.tools.values().any(|&i| {
            matches!(&self.blocks[i], Block::Tool(t)
                if matches!(t.state, ToolState::Pending | ToolState::Running))
        })
    }

    /// The turn ended; when cancelled, calls still open are marked cancelled.
    pub(crate) fn end_turn(&mut self, cancelled: bool, now: Instant) {
        if !cancelled {
            return;
        }
        let open: Vec<usize> = self
            .tools
            .values()
            .copied()
            .filter(|&i| {
                matches!(&self.blocks[i], Block::Tool(t)
                    if matches!(t.state, ToolState::Pending | ToolState::Running))
            })
            .collect();
        for i in open {
            if let Some(Block::Tool(t)) = self.blocks.get_mut(i) {
                t.state = ToolState::Cancelled;
                t.finished = Some(now);
            }
            self.mark(i);
        }
    }

    /// Applies one update at time `now`; false when it changed nothing shown (unknown kinds
    /// are ignored).
    pub(crate) fn apply(&mut self, update: &SessionUpdate, now: Instant) -> bool {
        match update {
            SessionUpdate::UserMessageChunk(c) => self.chunk(Role::User, c),
            SessionUpdate::AgentMessageChunk(c) => self.chunk(Role::Agent, c),
            SessionUpdate::AgentThoughtChunk(c) => self.chunk(Role::Thought, c),
            SessionUpdate::ToolCall(tc) => {
                let fields = ToolCallUpdateFields::new()
                    .title(tc.title.clone())
                    .kind(tc.kind)
                    .status(tc.status)
                    .content(tc.content.clone());
                let fields = match &tc.raw_output {
                    Some(raw) => fields.raw_output(raw.clone()),
                    None => fields,
                };
                let fields = match &tc.raw_input {
                    Some(input) => fields.raw_input(input.clone()),
                    None => fields,
                };
                self.tool(&tc.tool_call_id.0, &fields, now);
            }
            SessionUpdate::ToolCallUpdate(u) => {
                // March's runner marks a call the user rejected (also in a replay).
                let march = u.meta.as_ref().and_then(|m| m.get("march"));
                if march.and_then(|v| v.get("rejected")) == Some(&true.into()) {
                    self.mark_rejected(&u.tool_call_id.0);
                }
                self.tool(&u.tool_call_id.0, &u.fields, now);
                // March's runner marks a call the user let out of the sandbox.
                if march
                    .and_then(|v| v.get("sandbox"))
                    .and_then(|v| v.as_str())
                    == Some("outside")
                    && let Some(&i) = self.tools.get(u.tool_call_id.0.as_ref())
                    && let Some(Block::Tool(t)) = self.blocks.get_mut(i)
                {
                    t.outside = true;
                }
            }
            SessionUpdate::Plan(plan) => self.plan(plan),
            SessionUpdate::AvailableCommandsUpdate(u) => {
                self.facts.commands = u
                    .available_commands
                    .iter()
                    .map(|c| {
                        let mut c = c.clone();
                        c.name = sanitize_line(&c.name).into_owned();
                        c.description = sanitize_line(&c.description).into_owned();
                        c
                    })
                    .collect();
            }
            SessionUpdate::ConfigOptionUpdate(u) => self.facts.config = u.config_options.clone(),
            SessionUpdate::SessionInfoUpdate(u) => match &u.title {
                MaybeUndefined::Value(t) => self.facts.title = Some(sanitize_line(t).into_owned()),
                MaybeUndefined::Null => self.facts.title = None,
                MaybeUndefined::Undefined => {}
            },
            SessionUpdate::UsageUpdate(u) => {
                self.facts.usage = Some(Usage {
                    used: u.used,
                    size: u.size,
                    cost: u
                        .cost
                        .as_ref()
                        .map(|c| (c.amount, sanitize_line(&c.currency).into_owned())),
                    total_tokens: u.meta.as_ref().and_then(|m| {
                        let usage = m.get("march")?.get("usage")?;
                        let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
                        Some(n("input")? + n("output")? + n("cacheRead")? + n("cacheWrite")?)
                    }),
                });
            }
            SessionUpdate::CurrentModeUpdate(u) => {
                self.facts.mode = Some(sanitize_line(&u.current_mode_id.0).into_owned());
            }
            SessionUpdate::Notice(n) => {
                let severity = match n.severity {
                    NoticeSeverity::Warning => Severity::Warning,
                    NoticeSeverity::Error => Severity::Error,
                    _ => Severity::Info,
                };
                self.push_notice(severity, &n.title, n.description.as_deref());
            }
            SessionUpdate::CompactionUpdate(u) => {
                let i = self.compaction(&u.compaction_id.0);
                if let Some(Block::Compaction(c)) = self.blocks.get_mut(i) {
                    c.status = u.status.clone();
                    if let MaybeUndefined::Value(summary) = &u.summary {
                        c.summary = summary
                            .iter()
                            .map(block_text)
                            .collect::<Vec<_>>()
                            .join("\n");
                    }
                    if let MaybeUndefined::Value(e) = &u.error {
                        c.error = Some(sanitize(e).into_owned());
                    }
                }
            }
            SessionUpdate::CompactionSummaryChunk(u) => {
                let i = self.compaction(&u.compaction_id.0);
                if let Some(Block::Compaction(c)) = self.blocks.get_mut(i) {
                    c.summary.push_str(&block_text(&u.content));
                }
            }
            _ => return false,
        }
        true
    }

    fn chunk(&mut self, role: Role, chunk: &ContentChunk) {
        // A picture is a block of its own; one that does not decode stays a text label.
        if let ContentBlock::Image(image) = &chunk.content
            && role != Role::Thought
            && let Ok(picture) = Picture::from_base64(&image.data)
        {
            self.push(Block::Image(ImageView { role, picture }));
            return;
        }
        let text = block_text(&chunk.content);
        let id = chunk.message_id.as_ref().map(|m| m.0.to_string());
        let target = match &id {
            Some(id) => self.messages.get(&(role, id.clone())).copied(),
            // Without an id a chunk continues the last block when that is the same kind.
            None => match self.blocks.last() {
                Some(Block::Message(m)) if m.role == role => Some(self.blocks.len() - 1),
                _ => None,
            },
        };
        match target {
            Some(i) => {
                if let Some(Block::Message(m)) = self.blocks.get_mut(i) {
                    m.text.push_str(&text);
                }
                self.mark(i);
            }
            None => {
                let i = self.push(Block::Message(Message {
                    role,
                    id: id.clone(),
                    text,
                }));
                if let Some(id) = id {
                    self.messages.insert((role, id), i);
                }
            }
        }
    }

    fn tool(&mut self, id: &str, f: &ToolCallUpdateFields, now: Instant) {
        let i = match self.tools.get(id) {
            Some(&i) => i,
            None => {
                let i = self.push(Block::Tool(ToolCallView {
                    id: id.to_string(),
                    title: "tool call".to_string(),
                    kind: ToolKind::Other,
                    state: ToolState::Pending,
                    created: now,
                    started: None,
                    finished: None,
                    body: Vec::new(),
                    raw_output: None,
                    terminal_tail: Vec::new(),
                    command: None,
                    outside: false,
                }));
                self.tools.insert(id.to_string(), i);
                i
            }
        };
        self.mark(i);
        let Some(Block::Tool(t)) = self.blocks.get_mut(i) else {
            return;
        };
        if let Some(title) = &f.title {
            t.title = sanitize_line(title).into_owned();
        }
        if let Some(kind) = f.kind {
            t.kind = kind;
        }
        if let Some(command) = f
            .raw_input
            .as_ref()
            .and_then(|input| input.get("command")?.as_str())
        {
            t.command = Some(crate::sanitize::sanitize(command).into_owned());
        }
        // Pictures in a result become picture blocks after the call (once); the rest is its
        // body.
        let mut pictures = Vec::new();
        if let Some(content) = &f.content {
            t.body = content
                .iter()
                .filter_map(|c| match c {
                    ToolCallContent::Content(block) => match &block.content {
                        ContentBlock::Image(image) => match Picture::from_base64(&image.data) {
                            Ok(picture) => {
                                pictures.push(picture);
                                None
                            }
                            Err(_) => tool_body(c),
                        },
                        _ => tool_body(c),
                    },
                    _ => tool_body(c),
                })
                .collect();
        }
        let call = t.id.clone();
        if let Some(raw) = &f.raw_output {
            let text = raw
                .as_str()
                .or_else(|| raw.get("output").and_then(|o| o.as_str()));
            if let Some(text) = text {
                t.raw_output = Some(sanitize_output(text).into_owned());
            }
        }
        if let Some(status) = f.status {
            match status {
                ToolCallStatus::InProgress => {
                    t.state = ToolState::Running;
                    t.started.get_or_insert(now);
                }
                ToolCallStatus::Completed | ToolCallStatus::Failed => {
                    t.state = if status == ToolCallStatus::Completed {
                        ToolState::Done
                    } else if self.rejected.contains(&t.id) {
                        ToolState::Rejected
                    } else {
                        ToolState::Failed
                    };
                    t.finished.get_or_insert(now);
                }
                _ => t.state = ToolState::Pending,
            }
        }
        if !pictures.is_empty() && self.pictured.insert(call) {
            for picture in pictures {
                self.push(Block::Image(ImageView {
                    role: Role::Agent,
                    picture,
                }));
            }
        }
    }

    fn plan(&mut self, plan: &Plan) {
        let items: Vec<PlanItem> = plan
            .entries
            .iter()
            .map(|e| PlanItem {
                text: sanitize_line(&e.content).into_owned(),
                status: e.status.clone(),
            })
            .collect();
        match self.plan {
            Some(i) => {
                if let Some(b) = self.blocks.get_mut(i) {
                    *b = Block::Plan(items);
                }
                self.mark(i);
            }
            None => self.plan = Some(self.push(Block::Plan(items))),
        }
    }

    fn compaction(&mut self, id: &str) -> usize {
        if let Some(&i) = self.compactions.get(id) {
            self.mark(i);
            return i;
        }
        let i = self.push(Block::Compaction(Compaction {
            id: id.to_string(),
            status: CompactionStatus::InProgress,
            summary: String::new(),
            error: None,
        }));
        self.compactions.insert(id.to_string(), i);
        i
    }

    /// The tool call with this id, for the permission modal.
    pub(crate) fn tool_call(&self, id: &str) -> Option<&ToolCallView> {
        match self.blocks.get(*self.tools.get(id)?) {
            Some(Block::Tool(t)) => Some(t),
            _ => None,
        }
    }

    /// The text of the latest agent message.
    pub(crate) fn last_agent_text(&self) -> Option<&str> {
        self.blocks.iter().rev().find_map(|b| match b {
            Block::Message(m) if m.role == Role::Agent => Some(m.text.as_str()),
            _ => None,
        })
    }

    /// Agent messages, newest first.
    pub(crate) fn agent_texts(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().rev().filter_map(|b| match b {
            Block::Message(m) if m.role == Role::Agent => Some(m.text.as_str()),
            _ => None,
        })
    }
}

#[path = "transcript_held.rs"]
mod held;
pub use held::BranchMove;

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
