//! Sessions in the workspace: starting them, routing their agents' events to their views
//! and attention, and the panes' requests to their drivers (the built-in slash commands
//! are `slash.rs`'s).

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, SessionId, SessionUpdate, ToolCallContent,
};
use march_panes::agent::{AgentPane, BranchMove, PaneEvent, SessionChoice, TurnOutcome};
use march_panes::picture::Picture;
use march_panes::setup::SetupView;

use super::agent::{AgentDriver, AgentEvent, ListPurpose, RunnerState, SessionOpen};
use super::changes::{ChangeLog, FileChange};
use super::layout::PaneId;
use super::pane::Pane;
use super::router::SessionKey;
use super::supervisor::TurnEvent;
use super::{AgentSlot, Notification, UiRequest, Workspace, project_name};

impl Workspace {
    /// A new session on `project` (or `resume` replayed), not yet shown anywhere.
    pub(super) fn spawn_session(
        &mut self,
        project: &Path,
        resume: Option<SessionId>,
        agent: Option<&str>,
    ) -> SessionKey {
        let key = SessionKey(self.next_id());
        let l = &self.launcher;
        // A named agent the config no longer has runs as the workspace's own.
        let (agent, spec) = match agent.and_then(|n| l.agents.get(n).map(|s| (n, s))) {
            Some((name, spec)) => (Some(name.to_string()), spec),
            None => (None, &l.spec),
        };
        // A project on another machine runs March's runner there, over ssh.
        let remote = crate::remote::Remote::of(project);
        let over_ssh;
        let (agent, spec) = match &remote {
            Some(remote) => {
                over_ssh = super::agent::AgentSpec {
                    name: "march".to_string(),
                    command: remote.runner_command(&l.ssh),
                };
                (None, &over_ssh)
            }
            None => (agent, spec),
        };
        let mut view = AgentPane::new(format!("{} · {}", spec.name, project_name(project)));
        view.set_search_case(super::shells::search_case(&l.shell));
        view.set_permission_hold(l.permission_hold);
        // March's runner with no model to use is set up first (known since March started,
        // or since the last setup, so opening a pane reads no file).
        let needs_setup = match &l.paths {
            Some(_) if spec.name == "march" && remote.is_none() => l.setup_needed.clone(),
            _ => None,
        };
        let (driver, setup) = match (&l.paths, needs_setup) {
            (None, _) => (AgentDriver::detached(key, l.events.clone()), None),
            (Some(_), Some(reason)) => {
                // The local servers among them are probed next.
                let mut view = SetupView::new(reason, l.setup_providers.clone());
                view.set_probing(true);
                (AgentDriver::detached(key, l.events.clone()), Some(view))
            }
            (Some(_), None) => {
                let open = match resume.clone() {
                    Some(session) => SessionOpen::Load(session),
                    None => SessionOpen::New(l.mode),
                };
                let driver = AgentDriver::start(
                    key,
                    spec.clone(),
                    project.to_path_buf(),
                    open,
                    l.events.clone(),
                );
                (driver, None)
            }
        };
        if setup.is_some() {
            self.probe(key);
        }
        self.read_history(project);
        self.sessions.add(
            key,
            AgentSlot {
                view,
                driver,
                setup,
                resume_query: None,
                project: project.to_path_buf(),
                session_id: resume.clone(),
                last_activity: Some(std::time::SystemTime::now()),
                parked: false,
                pending_prompt: None,
                crash: None,
                restarts: 0,
                agent,
                last_turn: None,
            },
        );
        key
    }

    /// Stop session `key` when no pane shows or follows it any more.
    pub(super) fn stop_if_unshown(&mut self, key: SessionKey) {
        if self.session_in_a_pane(key) {
            return;
        }
        self.end_session_terminals(key);
        if let Some(slot) = self.sessions.remove(key) {
            tokio::spawn(slot.driver.shutdown());
        }
    }

    /// A new session (or `resume` replayed) takes `pane`'s place; the session it showed is
    /// stopped unless another pane shows it.
    pub(super) fn replace_in_pane(&mut self, pane: PaneId, resume: Option<SessionId>) {
        let Some(old) = self.agent_session(pane) else {
            return;
        };
        let project = self
            .sessions
            .get(&old)
            .map(|s| s.project.clone())
            .unwrap_or_else(|| self.tab().project.clone());
        let id = self.new_pane(&project, resume);
        // In place: the other panes keep their sizes.
        if let Some(tab) = self.tabs.holding_mut(pane) {
            tab.layout.replace_pane(pane, id);
        }
        self.panes.remove(&pane);
        let Some(new) = self.agent_session(id) else {
            return;
        };
        if self.agent_panes_of(old).next().is_none() {
            // The panes that showed the old session's commands and changes go on with the
            // session that took its place, rather than showing one that has ended.
            let mut moved = false;
            for p in self.panes.values_mut() {
                match p {
                    Pane::Commands { session, view } if *session == old => {
                        *session = new;
                        *view = Default::default();
                    }
                    Pane::Diff { session, .. } if *session == old => {
                        *session = new;
                        moved = true;
                    }
                    _ => {}
                }
            }
            if moved {
                self.refresh_diffs(new);
            }
        }
        self.stop_if_unshown(old);
    }

    /// Send `text` as session `key`'s next turn, shown in its pane; a session whose agent is
    /// not up yet sends it once it is (starting a stopped one).
    pub(super) fn send_prompt(
        &mut self,
        key: SessionKey,
        text: String,
        pictures: Vec<Arc<Picture>>,
    ) {
        // `!command` runs in the project (`!!command`: kept out of the agent's context).
        if let Some((command, send)) = user_command(&text) {
            let command = command.to_string();
            self.run_user_command(key, &command, send);
            return;
        }
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if slot
            .driver
            .prompt(text.clone(), &slot.project, pictures.clone())
        {
            slot.view.submit_local_with(&text, &pictures);
            slot.view.turn_started();
            self.sessions.router_mut().prompt_sent(key);
            self.sessions.turn_event(key, TurnEvent::Started(text));
        } else if slot.setup.is_none() {
            match slot.driver.status().state {
                // Sent once the agent is ready.
                RunnerState::Starting | RunnerState::Restarting => {
                    slot.view
                        .notice("The agent is starting; the prompt goes once it is ready.");
                    slot.pending_prompt = Some((text, pictures));
                }
                // A stopped agent starts on demand; the prompt goes once it is back.
                RunnerState::Stopped | RunnerState::Crashed(_) => {
                    slot.pending_prompt = Some((text, pictures));
                    self.restart_session(key);
                }
                RunnerState::Ready => {
                    slot.view.restore_attached(pictures);
                    slot.view
                        .set_error("the agent is not ready yet".to_string());
                }
            }
        } else {
            slot.view.set_error("finish the setup first".to_string());
        }
    }

    /// Route an agent event to its session. Returns whether anything visible changed.
    pub fn agent_event(&mut self, key: SessionKey, event: AgentEvent) -> bool {
        let event = match event {
            AgentEvent::Terminal(request) => {
                self.terminal_request(key, request);
                return self.agent_shell_shows(key);
            }
            AgentEvent::Diagnostics(n) => return self.diagnostics_event(n),
            other => other,
        };
        let seen = self.is_seen(key);
        let Some((slot, router)) = self.sessions.get_routed(&key) else {
            return false;
        };
        let view = &mut slot.view;
        let mut notify = None;
        let mut next_prompt = None;
        // How a turn ended, for whoever waits on it (`march wait`).
        let mut ended = None;
        // A turn that began, a question asked, for whoever watches.
        let mut turn_event = None;
        match event {
            AgentEvent::Ready {
                agent,
                session,
                options,
                modes,
            } => {
                view.set_modes(modes.as_ref());
                tracing::info!(key = key.0, %agent, session = %session.0, "agent ready");
                slot.session_id = Some(session);
                if let Some((text, pictures)) = slot.pending_prompt.take()
                    && slot
                        .driver
                        .prompt(text.clone(), &slot.project, pictures.clone())
                {
                    view.submit_local_with(&text, &pictures);
                    view.turn_started();
                    router.prompt_sent(key);
                    turn_event = Some(TurnEvent::Started(text));
                }
                view.set_title(format!("{agent} · {}", project_name(&slot.project)));
                view.set_config_options(&options);
                // A copy of the session's tree is kept, so `/tree` opens at once.
                slot.driver
                    .session_tree(super::agent::TreePurpose::Keep, view.tree_known());
            }
            AgentEvent::Failed(e) => {
                view.set_error(e);
                notify = router.crashed(key, seen);
            }
            AgentEvent::Update(n) => {
                slot.last_activity = Some(std::time::SystemTime::now());
                let recorded = slot.session_id.as_ref().is_some_and(|session| {
                    record_changes(&mut self.changes, &session.0, &n.update)
                });
                // Out of sight, the view is kept current but nothing needs drawing.
                let drawn = view.apply(&n.update) && self.is_visible(key);
                // A diff pane of the session, or of its project's uncommitted changes, shows
                // a change it made.
                return (recorded && self.refresh_changes(key)) || drawn;
            }
            AgentEvent::FileWritten(change) => {
                let recorded = slot
                    .session_id
                    .as_ref()
                    .is_some_and(|session| self.changes.record(&session.0, change));
                return recorded && self.refresh_changes(key);
            }
            AgentEvent::Permission(request) => {
                view.show_permission(request);
                notify = router.question_asked(key, seen);
                turn_event = view
                    .newest_question()
                    .map(|q| TurnEvent::Asked(q.to_string()));
            }
            AgentEvent::TurnEnded(result) => {
                // Requests the agent left open die with the turn.
                view.clear_permissions();
                let ok = result.is_ok();
                slot.last_turn = Some(result.clone());
                ended = Some(result.clone());
                let unsent = result.as_ref().map(unsent_ids).unwrap_or_default();
                view.turn_ended_with(
                    match result {
                        Ok(response) => TurnOutcome::from(&response),
                        Err(e) => TurnOutcome::Error(e),
                    },
                    &unsent,
                );
                notify = router.turn_ended(key, ok, seen);
                // The turn started the session's MCP servers or met their failures.
                slot.driver.refresh_mcp(false, false);
                // The turn's entries join the pane's copy of the tree.
                slot.driver
                    .session_tree(super::agent::TreePurpose::Keep, view.tree_known());
                // What was typed meanwhile runs now, as a turn of its own.
                next_prompt = view.next_queued();
            }
            AgentEvent::Options(Ok(options)) => view.set_config_options(&options),
            AgentEvent::ModeSet(Ok(mode)) => view.mode_set(&mode.0),
            AgentEvent::Queued { local, id } => {
                // Taken back while on its way: the agent lets go of it too.
                if let Some(id) = view.queue_taken(local, id) {
                    slot.driver.unqueue(id);
                }
            }
            AgentEvent::NotRecorded(why) => view.set_error(why),
            AgentEvent::Mcp { result, show } => match result {
                Ok(servers) if show && servers.is_empty() => view.notice(super::mcp::NO_SERVERS),
                Ok(servers) if show => {
                    view.notice_detail("MCP servers", &super::mcp::describe(&servers))
                }
                Err(e) if show => view.set_error(format!("MCP servers not listed: {e}")),
                // Kept in the runner's status, which the supervisor view may show.
                _ => return true,
            },
            AgentEvent::ModeSet(Err(e)) => view.set_error(format!("mode not changed: {e}")),
            AgentEvent::Options(Err(e)) => view.set_error(format!("option not changed: {e}")),
            AgentEvent::Exited(text) => {
                if view.status().busy {
                    ended = Some(Err(text.clone()));
                }
                view.set_error(text.clone());
                view.clear_permissions();
                slot.crash = Some(text);
                notify = router.crashed(key, seen);
            }
            AgentEvent::Restarted { attempt } => {
                // The session's replay follows: the view is rebuilt from it.
                view.clear();
                slot.restarts = attempt;
                router.restarted(key);
            }
            AgentEvent::Reopened(None) => {
                let why = slot
                    .crash
                    .take()
                    .unwrap_or_else(|| "the agent ended".into());
                view.notice(format!(
                    "{why}. Restarted it (restart {} in a row) and reloaded the session.",
                    slot.restarts
                ));
            }
            AgentEvent::Reopened(Some(e)) => {
                view.set_error(format!(
                    "the agent restarted but the session did not reload: {e}"
                ));
            }
            AgentEvent::GaveUp(text) => {
                let tail = slot.driver.status().stderr_tail;
                view.set_error(if tail.is_empty() {
                    text
                } else {
                    format!("{text}; its last words: {tail}")
                });
                notify = router.crashed(key, seen);
            }
            AgentEvent::Sessions {
                purpose: ListPurpose::Resume,
                result,
            } => {
                let query = slot.resume_query.take();
                self.sessions_listed(key, query, result);
            }
            AgentEvent::Sessions {
                purpose: ListPurpose::Switcher,
                result,
            } => match result {
                Ok(sessions) => {
                    let project = slot.project.clone();
                    self.listed.push((project, sessions));
                }
                Err(e) => tracing::warn!("sessions not listed for the switcher: {e}"),
            },
            AgentEvent::Tree { purpose, result } => {
                self.tree_arrived(key, purpose, result);
                return true;
            }
            // The new path's replay follows: the view is rebuilt from it.
            AgentEvent::Branch(moved) => {
                tracing::info!(key = key.0, leaf = ?moved.leaf_id, "the session's leaf moved");
                let kept = moved.kept.as_ref().map(|k| {
                    let n = |v: u32| usize::try_from(v).unwrap_or(usize::MAX);
                    (n(k.user_messages), n(k.of), k.last_user_text.as_deref())
                });
                let branch = BranchMove {
                    kept,
                    left: moved.previous_leaf_id.as_deref(),
                    leaf: moved.leaf_id.as_deref(),
                    held: moved.held,
                };
                // A view that does not show what the agent expects gets the whole path.
                if !view.branch_moved(&branch) {
                    slot.driver.replay_path();
                }
            }
            AgentEvent::Quiet => return false,
            AgentEvent::Forked(result) => {
                self.forked(key, result);
                return true;
            }
            AgentEvent::Navigated { chosen, result } => {
                self.navigated(key, chosen, result);
                return true;
            }
            // Taken above.
            AgentEvent::Terminal(_) | AgentEvent::Diagnostics(_) => {}
        }
        if let Some(event) = turn_event {
            self.sessions.turn_event(key, event);
        }
        if let Some(result) = ended {
            self.sessions.turn_event(key, TurnEvent::Ended(result));
            // A turn cost something: the supervisor's project and day totals follow; it may
            // have opened browser tabs.
            self.refresh_costs();
            self.refresh_daemons();
            // The turn may have given its agent a new avatar.
            self.refresh_avatars();
        }
        if let Some(text) = next_prompt {
            self.send_prompt(key, text, Vec::new());
        }
        if let Some(kind) = notify {
            let title = self
                .sessions
                .get(&key)
                .map(|s| s.view.border_title())
                .unwrap_or_default();
            self.notifications.push(Notification { kind, title });
        }
        true
    }

    /// `/resume`'s list arrived: open the picker, or the session the query names.
    fn sessions_listed(
        &mut self,
        key: SessionKey,
        query: Option<String>,
        result: Result<Vec<agent_client_protocol::v1::schema::SessionInfo>, String>,
    ) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        let sessions = match result {
            Ok(sessions) => sessions,
            Err(e) => {
                slot.view.set_error(format!("cannot list sessions: {e}"));
                return;
            }
        };
        let current = slot.driver.session();
        let earlier: Vec<SessionChoice> = sessions
            .into_iter()
            .map(|s| SessionChoice {
                id: s.session_id,
                title: s.title,
                updated_at: s.updated_at,
            })
            .collect();
        let Some(query) = query else {
            if !slot.view.open_session_picker(&earlier, current.as_ref()) {
                slot.view.notice("No sessions in this project yet.");
            }
            return;
        };
        match resume_match(&earlier, &query) {
            Ok(id) if current.as_ref() == Some(&id) => {}
            Ok(id) => {
                // The pane that asked is the focused one showing this session, if any.
                let pane = self.focused();
                if self.agent_session(pane) == Some(key) {
                    self.replace_in_pane(pane, Some(id));
                }
            }
            Err(e) => slot.view.set_error(e),
        }
    }

    /// Hand what pane `pane` answered to its session's driver. Returns a request for the
    /// UI.
    pub fn pane_event(&mut self, pane: PaneId, event: PaneEvent) -> UiRequest {
        match self.agent_session(pane) {
            Some(key) => self.session_event(key, Some(pane), event),
            None => UiRequest::None,
        }
    }

    /// Answers session `key`'s first open permission request with the option of `kind`,
    /// from a list, without going to its pane.
    pub fn answer_question(&mut self, key: SessionKey, kind: PermissionOptionKind) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        let event = slot.view.answer_question(kind);
        self.session_event(key, None, event);
    }

    /// What session `key`'s view answered, from `pane` (none when answered from a list).
    fn session_event(
        &mut self,
        key: SessionKey,
        pane: Option<PaneId>,
        event: PaneEvent,
    ) -> UiRequest {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return UiRequest::None;
        };
        match event {
            PaneEvent::None | PaneEvent::Redraw => {}
            PaneEvent::Submit(text) => {
                // Pictures stay on the prompt for a `!command`, during setup, and for an
                // agent that takes none.
                let command = user_command(&text).is_some();
                let refused = slot.driver.takes_images() == Some(false);
                if refused && !command && !slot.view.attached().is_empty() {
                    // Nothing is lost: the text goes back beside its pictures.
                    slot.view.paste_text(&text);
                    slot.view.set_error(super::attach::NO_IMAGES);
                    return UiRequest::None;
                }
                let takes = !command && !refused && slot.setup.is_none();
                let pictures = if takes {
                    slot.view.take_attached()
                } else {
                    Vec::new()
                };
                if !text.is_empty() {
                    self.save_prompt(key, &text);
                }
                self.send_prompt(key, text, pictures);
            }
            PaneEvent::CancelTurn => {
                slot.view.clear_permissions();
                slot.driver.cancel();
                self.sessions.router_mut().cancelled(key);
            }
            PaneEvent::Permission {
                tool_call_id,
                outcome,
                ..
            } => {
                slot.driver.answer_permission(&tool_call_id.0, outcome);
                self.sessions.router_mut().question_answered(key);
            }
            PaneEvent::SetConfigOption { config_id, value } => {
                slot.driver.set_option(&config_id.0, &value.0);
            }
            PaneEvent::Queue { local, text, kind } => {
                slot.driver.queue(local, text.clone(), kind);
                self.save_prompt(key, &text);
            }
            PaneEvent::Unqueue(id) => slot.driver.unqueue(id),
            PaneEvent::SetMode(mode) => {
                if !slot.driver.set_mode(mode) {
                    slot.view
                        .set_error("the agent is not ready yet".to_string());
                }
            }
            PaneEvent::Slash { name, args } => {
                let line = format!("/{name} {args}");
                self.save_prompt(key, line.trim_end());
                if let Some(pane) = pane {
                    return self.slash(pane, key, &name, &args);
                }
            }
            PaneEvent::ResumeSession(session) => {
                if let Some(pane) = pane
                    && slot.driver.session().as_ref() != Some(&session)
                {
                    self.replace_in_pane(pane, Some(session));
                }
            }
            PaneEvent::Navigate(chosen) => self.navigate_chosen(key, chosen),
            PaneEvent::RewindCheck(chosen) => self.rewind_chosen(key, chosen),
            PaneEvent::LabelEntry { entry_id, label } => slot.driver.label_entry(entry_id, label),
            PaneEvent::Copy(text) => return UiRequest::Copy(text),
            PaneEvent::ListFiles => self.list_files(key),
            PaneEvent::AttachImage { path, pasted } => self.attach_file(key, path, pasted),
            PaneEvent::Click { x, y } => {
                // A click on an edit in the transcript shows its file's diff.
                if let Some(pane) = pane {
                    self.open_diff_at(pane, x, y);
                }
            }
        }
        UiRequest::None
    }
}

/// A `!command` or `!!command` prompt: the command and whether its output goes to the model.
pub(super) fn user_command(text: &str) -> Option<(&str, bool)> {
    let text = text.trim();
    let (rest, send) = match text.strip_prefix("!!") {
        Some(rest) => (rest, false),
        None => (text.strip_prefix('!')?, true),
    };
    let command = rest.trim();
    (!command.is_empty()).then_some((command, send))
}

/// The ids of queued messages a turn never delivered (`_meta.march.unsent` of its answer).
fn unsent_ids(response: &agent_client_protocol::v1::schema::PromptResponse) -> Vec<String> {
    response
        .meta
        .as_ref()
        .and_then(|m| {
            m.get("march")?
                .get(march_runner::client::UNSENT_KEY)?
                .as_array()
        })
        .map(|ids| {
            ids.iter()
                .filter_map(|id| id.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The one session `/resume QUERY` means: an id, an id prefix, or words of the title
/// (case-insensitive).
fn resume_match(sessions: &[SessionChoice], query: &str) -> Result<SessionId, String> {
    if let Some(s) = sessions.iter().find(|s| *s.id.0 == *query) {
        return Ok(s.id.clone());
    }
    let lower = query.to_lowercase();
    let found: Vec<&SessionChoice> = sessions
        .iter()
        .filter(|s| {
            s.id.0.starts_with(query)
                || s.title
                    .as_deref()
                    .is_some_and(|t| t.to_lowercase().contains(&lower))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(format!("no session of this project matches {query:?}")),
        many => Err(format!(
            "{} sessions match {query:?}; /resume alone lists them",
            many.len()
        )),
    }
}

/// Records the file changes a session update reports (the diff content of a tool call);
/// whether there were new ones.
fn record_changes(log: &mut ChangeLog, session: &str, update: &SessionUpdate) -> bool {
    let (call, content) = match update {
        SessionUpdate::ToolCall(tc) => (&tc.tool_call_id, &tc.content),
        SessionUpdate::ToolCallUpdate(u) => match &u.fields.content {
            Some(content) => (&u.tool_call_id, content),
            None => return false,
        },
        _ => return false,
    };
    let mut recorded = false;
    for item in content {
        if let ToolCallContent::Diff(d) = item {
            let change = FileChange::new(&call.0, &d.path, d.old_text.as_deref(), &d.new_text);
            recorded |= log.record(session, change);
        }
    }
    recorded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_content_of_tool_calls_is_recorded_once_per_edit() {
        use agent_client_protocol::v1::schema::{
            Diff, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
        };
        let (jobs, _done) = crate::workspace::jobs::Jobs::channel();
        let mut log = ChangeLog::new(None, jobs);
        let diff = |new: &str| {
            ToolCallContent::Diff(Diff::new("/p/a.rs", new).old_text("old\n".to_string()))
        };
        let started = SessionUpdate::ToolCall(
            ToolCall::new("c1".to_string(), "edit a.rs").content(vec![diff("new\n")]),
        );
        let ended = |new: &str| {
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                "c1".to_string(),
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Completed)
                    .content(vec![diff(new)]),
            ))
        };
        record_changes(&mut log, "s", &started);
        record_changes(&mut log, "s", &ended("new\n"));
        assert_eq!(log.changes("s").len(), 1);
        record_changes(&mut log, "s", &ended("newer\n"));
        let changes = log.changes("s");
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].before.as_deref(), Some("old\n"));
        assert_eq!(changes[0].after.as_deref(), Some("newer\n"));
        assert_eq!(changes[0].path, Path::new("/p/a.rs"));
    }

    fn choice(id: &str, title: Option<&str>) -> SessionChoice {
        SessionChoice {
            id: SessionId::new(id),
            title: title.map(str::to_string),
            updated_at: None,
        }
    }

    #[test]
    fn resume_matches_an_id_a_prefix_or_title_words() {
        let sessions = [
            choice("abc123", Some("Explain the parser")),
            choice("abd456", Some("Fix the parser tests")),
            choice("abc", None),
        ];
        let found = |q: &str| resume_match(&sessions, q).map(|id| id.0.to_string());
        assert_eq!(
            found("abc").unwrap(),
            "abc",
            "an exact id wins over a prefix"
        );
        assert_eq!(found("abd").unwrap(), "abd456");
        assert_eq!(found("EXPLAIN").unwrap(), "abc123");
        assert!(found("parser").unwrap_err().contains("2 sessions match"));
        assert!(found("nothing").unwrap_err().contains("no session"));
    }
}
