//! Commands an agent runs in terminals March owns (ACP `terminal/*`, offered in
//! `initialize`): each on a PTY of its own, shown live in the session's agent shell pane
//! where the user can type into it, and answered to the agent from what its screen shows.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    CreateTerminalResponse, KillTerminalResponse, ReleaseTerminalResponse, TerminalExitStatus,
    TerminalId, TerminalOutputResponse, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
};
use march_panes::shell::{
    AgentShellView, CommandEntry, Commands, ExitInfo, ShellNotice, ShellPane, ShellSpec, Wake,
};
use march_panes::terminal::TerminalEmulator;
use march_runner::client::{AgentRequest, Pending};

use super::Workspace;
use super::pane::Pane;
use super::router::SessionKey;
use super::shells::{ShellSource, shell_spec};

/// Commands kept per session once they ended (older ones are forgotten).
const KEPT_PER_SESSION: usize = 50;

/// Lines of a command's terminal the transcript shows under its tool call at most.
const TRANSCRIPT_TAIL: usize = 20;

/// How long a killed command's programs get after the hang-up.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// One command an agent ran.
pub struct CommandTerminal {
    /// The id the agent knows it by.
    pub id: String,
    /// The session that ran it.
    pub session: SessionKey,
    /// The command line, for the list.
    pub command_line: String,
    /// Where it ran.
    pub cwd: PathBuf,
    /// Its PTY and screen.
    pub pane: ShellPane,
    /// When it started.
    pub started: Instant,
    /// When it ended, once it has.
    pub ended: Option<Instant>,
    /// The most output the agent wants back (the end of it).
    limit: Option<u64>,
    /// The agent let it go: its id means nothing any more, its output stays to be read.
    pub released: bool,
    /// `terminal/wait_for_exit` requests waiting for the end.
    waiters: Vec<Pending<WaitForTerminalExitRequest>>,
    /// A `!command` the user ran from the prompt: recorded in the session when it ends.
    user: Option<UserCommand>,
    /// Its last lines went to the transcript after it ended (nothing more will change).
    tail_taken: bool,
}

impl CommandTerminal {
    /// How long it ran (so far).
    pub fn duration(&self) -> Duration {
        self.ended.unwrap_or_else(Instant::now) - self.started
    }
}

/// A command the user ran from the prompt.
#[derive(Debug, Clone, Copy)]
struct UserCommand {
    /// `!command` (its output goes to the model with the next prompt), not `!!command`.
    send: bool,
}

/// Bytes of a `!command`'s output kept in the session (the end of it), as bash's tool keeps.
const USER_OUTPUT_LIMIT: u64 = 50 * 1024;

/// A terminal request as the app gets it.
pub type TerminalRequest = AgentRequest;

/// The text a terminal shows (its history and screen, wrapped lines joined), the end of it
/// when `limit` cuts it (at a character boundary), and whether it was cut.
pub fn output_text(term: &dyn TerminalEmulator, limit: Option<u64>) -> (String, bool) {
    let mut out = String::new();
    for line in 0..term.line_count() {
        out.push_str(&term.line_text(line));
        if !term.line_wrapped(line) {
            out.push('\n');
        }
    }
    out.truncate(out.trim_end().len());
    if !out.is_empty() {
        out.push('\n');
    }
    let Some(limit) = limit.and_then(|l| usize::try_from(l).ok()) else {
        return (out, false);
    };
    if out.len() <= limit {
        return (out, false);
    }
    let mut start = out.len() - limit;
    while !out.is_char_boundary(start) {
        start += 1;
    }
    (out[start..].to_string(), true)
}

/// The last `n` lines of what a terminal shows, trailing blank lines left out, sanitised.
fn tail_lines(term: &dyn TerminalEmulator, n: usize) -> Vec<String> {
    let mut end = term.line_count();
    while end > 0 && term.line_text(end - 1).is_empty() {
        end -= 1;
    }
    (end.saturating_sub(n)..end)
        .map(|line| march_panes::sanitize::sanitize_line(&term.line_text(line)).into_owned())
        .collect()
}

fn exit_status(exit: &ExitInfo) -> TerminalExitStatus {
    match &exit.signal {
        Some(signal) => TerminalExitStatus::new().signal(signal.clone()),
        None => TerminalExitStatus::new().exit_code(exit.code),
    }
}

fn not_found(id: &str) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(format!("no terminal {id}"))
}

impl Workspace {
    /// Handles a `terminal/*` request of session `key`.
    pub(super) fn terminal_request(&mut self, key: SessionKey, request: TerminalRequest) {
        let result = match request {
            AgentRequest::CreateTerminal(p) => {
                let response = self.create_terminal(key, &p.request);
                match response {
                    Ok(id) => p.respond(CreateTerminalResponse::new(TerminalId::new(id))),
                    Err(e) => p.fail(agent_client_protocol::Error::internal_error().data(e)),
                }
            }
            AgentRequest::TerminalOutput(p) => {
                let id = p.request.terminal_id.0.to_string();
                match self.live_terminal(key, &id) {
                    Some(t) => {
                        let term = t.pane.terminal();
                        let term = term.lock();
                        let (output, truncated) = output_text(&**term, t.limit);
                        drop(term);
                        let status = t.pane.exited().map(exit_status);
                        p.respond(
                            TerminalOutputResponse::new(output, truncated).exit_status(status),
                        )
                    }
                    None => p.fail(not_found(&id)),
                }
            }
            AgentRequest::WaitForTerminalExit(p) => {
                let id = p.request.terminal_id.0.to_string();
                match self.live_terminal(key, &id) {
                    Some(t) => match t.pane.exited().map(exit_status) {
                        Some(status) => p.respond(WaitForTerminalExitResponse::new(status)),
                        None => {
                            t.waiters.push(p);
                            Ok(())
                        }
                    },
                    None => p.fail(not_found(&id)),
                }
            }
            AgentRequest::KillTerminal(p) => {
                let id = p.request.terminal_id.0.to_string();
                match self.live_terminal(key, &id) {
                    Some(t) => {
                        drop(t.pane.hangup(KILL_GRACE));
                        p.respond(KillTerminalResponse::new())
                    }
                    None => p.fail(not_found(&id)),
                }
            }
            AgentRequest::ReleaseTerminal(p) => {
                let id = p.request.terminal_id.0.to_string();
                match self.live_terminal(key, &id) {
                    Some(t) => {
                        if t.pane.exited().is_none() {
                            drop(t.pane.hangup(KILL_GRACE));
                        }
                        t.released = true;
                        p.respond(ReleaseTerminalResponse::new())
                    }
                    None => p.fail(not_found(&id)),
                }
            }
            other => {
                tracing::warn!(method = other.method(), "not a terminal request");
                Ok(())
            }
        };
        if let Err(e) = result {
            tracing::debug!("terminal answer not sent: {e}");
        }
    }

    pub(super) fn create_terminal(
        &mut self,
        key: SessionKey,
        request: &agent_client_protocol::v1::schema::CreateTerminalRequest,
    ) -> Result<String, String> {
        let project = self
            .sessions
            .get(&key)
            .map(|s| s.project.clone())
            .ok_or("the session is gone")?;
        let cwd = request.cwd.clone().unwrap_or(project);
        let mut spec: ShellSpec = shell_spec(&self.launcher.shell, &cwd);
        spec.program.clone_from(&request.command);
        spec.args.clone_from(&request.args);
        spec.env = request
            .env
            .iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect();
        // The agent reads the clipboard of no one.
        spec.osc52 = false;
        let spec = crate::remote::over_ssh(spec, &self.launcher.ssh);
        let serial = self.next_id();
        let events = self.launcher.shell_events.clone();
        let wake: Wake = Arc::new(move |notice: ShellNotice| {
            let _ = events.send((ShellSource::Terminal(serial), notice));
        });
        let pane = ShellPane::spawn(spec, wake, super::shell_output::output_reader())
            .map_err(|e| e.to_string())?;
        let id = format!("term-{serial}");
        let mut command_line = request.command.clone();
        // `bash -c SCRIPT` reads best as the script, also behind March's sandbox launcher
        // (`march sandbox … -- bash -c SCRIPT`).
        if let [.., flag, script] = request.args.as_slice()
            && flag == "-c"
        {
            command_line.clone_from(script);
        } else {
            for arg in &request.args {
                command_line.push(' ');
                command_line.push_str(arg);
            }
        }
        self.terminals.push(CommandTerminal {
            id: id.clone(),
            session: key,
            command_line,
            cwd,
            pane,
            started: Instant::now(),
            ended: None,
            limit: request.output_byte_limit,
            released: false,
            waiters: Vec::new(),
            tail_taken: false,
            user: None,
        });
        self.forget_old_terminals(key);
        Ok(id)
    }

    /// Keeps the newest ended commands of session `key`, within [`KEPT_PER_SESSION`].
    fn forget_old_terminals(&mut self, key: SessionKey) {
        let mine = self.terminals.iter().filter(|t| t.session == key).count();
        let mut excess = mine.saturating_sub(KEPT_PER_SESSION);
        self.terminals.retain(|t| {
            let drop_it = excess > 0 && t.session == key && t.released;
            if drop_it {
                excess -= 1;
            }
            !drop_it
        });
    }

    /// Session `key`'s terminal `id`, while the agent may still use it.
    fn live_terminal(&mut self, key: SessionKey, id: &str) -> Option<&mut CommandTerminal> {
        self.terminals
            .iter_mut()
            .find(|t| t.session == key && t.id == id && !t.released)
    }

    /// A notice from command terminal `serial`: waiters answered when it exited; whether
    /// something shown changed (its output is drawn, and its tail taken, at the next frame).
    pub fn terminal_notice(&mut self, serial: u64, _notice: ShellNotice) -> bool {
        let id = format!("term-{serial}");
        let Some(t) = self.terminals.iter_mut().find(|t| t.id == id) else {
            return false;
        };
        let update = t.pane.take_update();
        let mut record = None;
        if let Some(exit) = update.exited {
            t.ended = Some(Instant::now());
            let status = exit_status(&exit);
            if let Some(user) = t.user {
                let (output, truncated) = {
                    let term = t.pane.terminal();
                    let term = term.lock();
                    output_text(&**term, Some(USER_OUTPUT_LIMIT))
                };
                // A released user command is one the user let go: it stays unrecorded.
                t.released = true;
                record = Some(march_runner::client::RecordBashRequest {
                    session_id: String::new(),
                    command: t.command_line.clone(),
                    output,
                    exit_code: status.exit_code.map(i64::from),
                    cancelled: status.signal.is_some(),
                    truncated,
                    exclude_from_context: !user.send,
                });
            }
            for waiter in t.waiters.drain(..) {
                if let Err(e) = waiter.respond(WaitForTerminalExitResponse::new(status.clone())) {
                    tracing::debug!("exit not sent: {e}");
                }
            }
        }
        let session = t.session;
        if let Some(request) = record
            && let Some(slot) = self.sessions.get(&session)
        {
            slot.driver.record_bash(request);
        }
        self.agent_shell_shows(session) || self.is_visible(session)
    }

    /// Run `command` (a `!command` typed in the prompt; `send` false for `!!command`) in
    /// session `key`'s project, in the agent shell as the agent's commands run; when it ends,
    /// it is recorded in the session and shown in the transcript.
    pub(super) fn run_user_command(&mut self, key: SessionKey, command: &str, send: bool) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if !slot.driver.records_bash() {
            slot.view.notice(
                "This agent does not take commands run from the prompt; run it in a shell pane.",
            );
            return;
        }
        let Some(session) = slot.session_id.clone() else {
            slot.view
                .set_error("the agent is not ready yet".to_string());
            return;
        };
        let shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".to_string());
        let request = agent_client_protocol::v1::schema::CreateTerminalRequest::new(session, shell)
            .args(vec!["-c".to_string(), command.to_string()]);
        match self.create_terminal(key, &request) {
            Ok(id) => {
                if let Some(t) = self.terminals.iter_mut().find(|t| t.id == id) {
                    t.user = Some(UserCommand { send });
                }
                if let Some(slot) = self.sessions.get_mut(&key) {
                    let to = if send {
                        "its output goes to the agent with your next prompt"
                    } else {
                        "its output stays out of the agent's context"
                    };
                    slot.view
                        .notice(format!("$ {command} runs in the agent shell; {to}."));
                }
            }
            Err(e) => {
                if let Some(slot) = self.sessions.get_mut(&key) {
                    slot.view.set_error(format!("cannot run {command}: {e}"));
                }
            }
        }
    }

    /// Gives the transcripts of sessions on screen the last lines of their commands, and lets
    /// those commands wake the app again (once a frame at most).
    pub(super) fn refresh_terminal_tails(&mut self) {
        let shown: Vec<SessionKey> = self
            .terminals
            .iter()
            .map(|t| t.session)
            .filter(|k| self.is_visible(*k) || self.agent_shell_shows(*k))
            .collect();
        for t in self.terminals.iter().filter(|t| shown.contains(&t.session)) {
            t.pane.mark_drawn();
            if t.ended.is_some() && t.tail_taken {
                continue;
            }
            let term = t.pane.terminal();
            let tail = {
                let term = term.lock();
                tail_lines(&**term, TRANSCRIPT_TAIL)
            };
            if let Some(slot) = self.sessions.get_mut(&t.session) {
                slot.view.set_terminal_tail(&t.id, tail);
            }
        }
        for t in self
            .terminals
            .iter_mut()
            .filter(|t| shown.contains(&t.session))
        {
            if t.ended.is_some() {
                t.tail_taken = true;
            }
        }
    }

    /// Session `key`'s commands, oldest first.
    pub fn session_terminals(&self, key: SessionKey) -> impl Iterator<Item = &CommandTerminal> {
        self.terminals.iter().filter(move |t| t.session == key)
    }

    /// Whether an agent shell pane of session `key` shows in the active tab.
    pub(super) fn agent_shell_shows(&self, key: SessionKey) -> bool {
        self.shows(|p| matches!(p, Pane::Commands { session, .. } if *session == key))
    }

    /// Opens the agent shell pane of the focused agent pane's session below it (moving it
    /// from another tab), or closes it when it is open here (from either pane); `None` when
    /// the focused pane shows no session.
    pub fn toggle_agent_shell(&mut self) -> Option<super::UiRequest> {
        let focused = self.focused();
        // From the agent shell pane itself, or its session's pane: a second press closes it.
        if let Some(Pane::Commands { .. }) = self.panes.get(&focused) {
            return Some(self.close_pane(focused));
        }
        let key = self.focused_session()?;
        let existing =
            self.find_pane(|p| matches!(p, Pane::Commands { session, .. } if *session == key));
        if let Some(pane) = existing
            && self.tab().layout.contains(pane)
        {
            return Some(self.close_pane(pane));
        }
        self.focus_or_open(existing, super::layout::Axis::Vertical, |ws, pane| {
            let view = AgentShellView::default();
            ws.panes.insert(pane, Pane::Commands { session: key, view });
        });
        Some(super::UiRequest::None)
    }

    /// The command the agent shell pane `id` shows, to type into.
    pub fn agent_shell_command(&mut self, id: super::layout::PaneId) -> Option<&mut ShellPane> {
        let Some(Pane::Commands { session, view }) = self.panes.get(&id) else {
            return None;
        };
        let key = *session;
        let count = self.session_terminals(key).count();
        let index = view.selected(count)?;
        self.terminals
            .iter_mut()
            .filter(|t| t.session == key)
            .nth(index)
            .map(|t| &mut t.pane)
    }

    /// Shows the previous (`-1`) or next (`1`) command in the focused agent shell pane.
    pub fn agent_shell_select(&mut self, delta: i32) -> bool {
        let id = self.focused();
        let Some(Pane::Commands { session, .. }) = self.panes.get(&id) else {
            return false;
        };
        let count = self.session_terminals(*session).count();
        if let Some(Pane::Commands { view, .. }) = self.panes.get_mut(&id) {
            view.select(delta, count);
        }
        true
    }

    /// Draws agent shell pane `id`.
    pub(super) fn render_agent_shell(
        &mut self,
        id: super::layout::PaneId,
        rect: ratatui::layout::Rect,
        buf: &mut ratatui::buffer::Buffer,
        theme: &march_panes::theme::Theme,
        title: &str,
        focused: bool,
    ) {
        let Some(Pane::Commands { session, view }) = self.panes.get(&id) else {
            return;
        };
        let (key, view) = (*session, view.clone());
        let owned: Vec<(String, PathBuf, Option<ExitInfo>, Duration)> = self
            .session_terminals(key)
            .map(|t| {
                (
                    t.command_line.clone(),
                    t.cwd.clone(),
                    t.pane.exited().cloned(),
                    t.duration(),
                )
            })
            .collect();
        let entries: Vec<CommandEntry<'_>> = owned
            .iter()
            .map(|(command, cwd, exit, duration)| CommandEntry {
                command,
                cwd,
                exit: exit.as_ref(),
                duration: *duration,
            })
            .collect();
        let chosen = view.selected(entries.len()).and_then(|i| {
            self.terminals
                .iter_mut()
                .filter(|t| t.session == key)
                .nth(i)
                .map(|t| &mut t.pane)
        });
        let commands = Commands {
            entries: &entries,
            screen: chosen,
        };
        view.render(rect, buf, theme, title, focused, commands);
    }

    /// Hangs up every command (March is quitting) and waits until their programs are gone.
    pub(super) fn hang_up_all_terminals(&mut self) {
        let waits: Vec<_> = self
            .terminals
            .iter_mut()
            .filter_map(|t| t.pane.hangup(KILL_GRACE))
            .collect();
        for wait in waits {
            let _ = wait.join();
        }
        self.terminals.clear();
    }

    /// Hangs up every command of session `key` (it is going away).
    pub(super) fn end_session_terminals(&mut self, key: SessionKey) {
        for t in self.terminals.iter_mut().filter(|t| t.session == key) {
            drop(t.pane.hangup(KILL_GRACE));
        }
        self.terminals.retain(|t| t.session != key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_panes::terminal::AlacrittyEmulator;

    #[test]
    fn output_is_the_screen_text_cut_from_the_start_at_a_character_boundary() {
        let mut t = AlacrittyEmulator::new(4, 10, 100);
        t.feed("héllo wörld and more\r\nsecond\r\n".as_bytes());
        let (all, cut) = output_text(&t, None);
        assert!(!cut);
        assert_eq!(
            all, "héllo wörld and more\nsecond\n",
            "wrapped lines joined"
        );
        let (end, cut) = output_text(&t, Some(21));
        assert!(cut);
        // 21 bytes from the end would start inside "ö": the cut moves past it.
        assert_eq!(end, "rld and more\nsecond\n");
        let (end, _) = output_text(&t, Some(23));
        assert_eq!(end, "wörld and more\nsecond\n");
    }
}
