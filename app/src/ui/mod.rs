//! The UI: the workspace server's event loop and the rendering of the workspace for the
//! terminals attached to it.
//!
//! One loop waits on the clients' input, agent events, shells' output, finished jobs and
//! the next frame. Nothing is drawn when nothing changed or nobody is attached; changes
//! within one frame interval are drawn together; each frame is wrapped in synchronized
//! output so a terminal never shows half of one.

mod agents;
mod clients;
mod commands;
mod compose;
mod control;
mod damage;
mod draw;
mod frame;
mod hints;
mod input;
mod layers;
mod mouse;
pub(crate) mod pictures;
mod projects;
mod rename;
mod screen;
mod supervisor;
mod switch;
mod watch;
mod worktree_close;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use march_core::config::{Config, NotificationConfig};
use march_core::paths::MarchPaths;
use march_panes::highlight::Highlighter;
use march_panes::theme::{Theme, load_theme};
use tokio::sync::mpsc;

use crate::keymap::{KeyDispatcher, Keymap};
use crate::server::connection::{Finished, Incoming};
use crate::workspace::agent::{AgentEvent, AgentSpec};
use crate::workspace::jobs::{JobDone, Jobs};
use crate::workspace::layout::PaneId;
use crate::workspace::persist::{Loaded, WorkspaceStore};
use crate::workspace::router::Notify;
use crate::workspace::shells::ShellSource;
use crate::workspace::{AgentLauncher, Notification, UiRequest, Workspace};
use clients::Clients;
use control::Control;
use draw::{FrameStats, Pacing, Redraw};
use layers::{Layer, Layers};

/// Agent events handled in one pass of the loop at most.
const EVENT_BATCH: usize = 256;
/// How long closing waits for the clients to be told.
const LAST_WORDS: Duration = Duration::from_secs(1);
/// How long quitting waits for a revert or a setup save under way.
const JOBS_AT_QUIT: Duration = Duration::from_secs(5);

/// Everything the loop owns besides the terminal.
struct Ui {
    ws: Workspace,
    theme: Theme,
    highlighter: Highlighter,
    keymap: Keymap,
    dispatcher: KeyDispatcher,
    /// Shown in the status bar until the next key.
    message: Option<String>,
    /// A border being dragged with the mouse: where the drag started.
    drag: Option<(u16, u16)>,
    /// The last left press, to tell double and triple clicks.
    last_click: Option<mouse::LastClick>,
    /// A press only focused its pane: its drags and release go to no pane either.
    focusing_click: bool,
    /// What covers the panes for a while (the key list, the supervisor view, the switcher,
    /// the project picker, a tab name being typed): the top one takes the keys.
    layers: Layers,
    /// The data directory (saved workspaces, for recent projects).
    data_dir: PathBuf,
    /// How long a session may sit idle out of sight before its runner stops (0: never).
    stop_idle_after: Duration,
    /// Frame times for a benchmark, when `MARCH_FRAME_STATS` asks for them.
    frame_stats: Option<FrameStats>,
    /// Where the layout is saved (none when another march has this workspace open).
    store: Option<WorkspaceStore>,
    /// The directories this workspace was opened on.
    dirs: Vec<PathBuf>,
    /// Where runner logs are, for the supervisor view.
    log_dir: PathBuf,
    /// How to tell the user a background session needs them.
    notifications: NotificationConfig,
    /// When a key last went to the focused shell: its echo is drawn at once, not at the
    /// next frame tick.
    typed_to_shell: Option<Instant>,
    /// A diff pane's revert pressed once (the pane, whether of the whole file): the same key
    /// again does it.
    revert_armed: Option<(PaneId, bool)>,
    /// Quitting, closing the tab or closing a pane was asked for while work would be lost
    /// (and which pane had the focus): the same command again, on the same pane, goes ahead.
    confirm_armed: Option<(crate::keymap::Command, PaneId)>,
    /// The terminals attached, and what each shows.
    clients: Clients,
    /// What the control CLI asks of this workspace.
    control: Control,
    quit: bool,
}

/// How the server was asked to end, told to its clients.
pub const CLOSED: &str = "the workspace was closed";

/// Serves the workspace of `projects` (canonical directories, a tab for each), as it was
/// left unless `fresh`, to the clients `incoming` brings, until it is closed.
pub async fn serve(
    paths: MarchPaths,
    name: String,
    projects: Vec<PathBuf>,
    fresh: bool,
    mut incoming: mpsc::UnboundedReceiver<Incoming>,
    mut socket_gone: impl std::future::Future<Output = ()> + Unpin,
) -> anyhow::Result<()> {
    anyhow::ensure!(!projects.is_empty(), "a workspace needs a directory");
    let mut problems = Vec::new();
    let config = match Config::load(&paths) {
        Ok(config) => config,
        Err(e) => {
            // The workspace still opens, with defaults; the error stays on screen.
            problems.push(e.to_string());
            Config::default()
        }
    };
    let (theme, theme_errors) = load_theme(
        Some(&paths.config_dir),
        config.theme.as_deref().unwrap_or("dark"),
    );
    problems.extend(theme_errors.iter().map(ToString::to_string));
    let (keymap, keymap_errors) = Keymap::load(&paths.config_dir);
    problems.extend(keymap_errors.iter().map(ToString::to_string));
    for p in &problems {
        tracing::warn!("{p}");
    }
    let mut spec = agent_spec(&config)?;
    if spec.name == "march" {
        // March's own sessions may open helper sessions here (the `workspace` tool).
        let socket = crate::server::rendezvous::socket_of(&name)?;
        spec.command = spec
            .command
            .env(march_wire::rendezvous::WORKSPACE_VAR, socket.as_os_str());
    }
    let (events_tx, mut agent_events) = mpsc::unbounded_channel();
    let (shell_tx, mut shell_events) = mpsc::unbounded_channel();
    let (jobs, mut jobs_done) = Jobs::channel();
    // Read once here, before the loop runs: new panes then know without reading a file.
    let setup_needed = (spec.name == "march")
        .then(|| crate::workspace::setup::reason(&paths))
        .flatten();
    let setup_providers = match setup_needed {
        Some(_) => crate::workspace::setup::providers(&paths),
        None => Vec::new(),
    };
    let agents = config
        .agents
        .iter()
        .map(|(name, agent)| (name.clone(), AgentSpec::configured(name, agent)))
        .collect();
    let launcher = AgentLauncher {
        agents,
        jobs,
        setup_needed,
        setup_providers,
        spec,
        mode: config.permission_mode.map(|m| m.as_str()),
        permission_hold: config.permission_guard_ms.map_or(
            march_panes::agent::PERMISSION_HOLD,
            std::time::Duration::from_millis,
        ),
        events: events_tx,
        paths: Some(paths.clone()),
        shell_events: shell_tx,
        shell: config.shell.clone(),
        worktrees: config.worktrees.root(&paths),
        ssh: config.ssh.clone(),
        remotes: crate::remote::named_projects(&config.remotes),
    };

    // The layout saved for these directories, unless another march has them open.
    let (store, workspace) = match WorkspaceStore::open(&paths.data_dir, &projects, fresh) {
        Ok((store, loaded)) => {
            let ws = match loaded {
                Loaded::Restored(saved) => Workspace::restore(launcher, saved),
                Loaded::Fresh => Workspace::new(launcher, projects.clone()),
                Loaded::Damaged { reason, moved_to } => {
                    problems.insert(
                        0,
                        format!(
                            "the saved layout could not be used ({reason}); moved to {}",
                            moved_to.display()
                        ),
                    );
                    Workspace::new(launcher, projects.clone())
                }
            };
            (Some(store), ws)
        }
        Err(e) => {
            problems.insert(0, e.to_string());
            (None, Workspace::new(launcher, projects.clone()))
        }
    };

    let mut shell = Ui {
        ws: workspace,
        store,
        dirs: projects,
        notifications: config.notifications.clone(),
        theme,
        highlighter: Highlighter::new(),
        dispatcher: KeyDispatcher::new(),
        keymap,
        message: problems.first().cloned(),
        drag: None,
        last_click: None,
        focusing_click: false,
        layers: Layers::default(),
        data_dir: paths.data_dir.clone(),
        frame_stats: FrameStats::from_env(),
        stop_idle_after: Duration::from_secs(config.workspace.stop_idle_after),
        log_dir: paths.log_dir(),
        typed_to_shell: None,
        revert_armed: None,
        confirm_armed: None,
        clients: Clients::new(),
        control: Control::new(name),
        quit: false,
    };
    // Nobody looks until a terminal attaches.
    shell.ws.set_terminal_focused(false);
    let help = hints::help_summary(&shell.keymap);
    shell.ws.set_help_text(help);
    shell.ws.set_avatar_theme(&shell.theme);
    // When to look for idle background sessions whose runners may stop.
    let mut idle_check: Option<tokio::time::Instant> = None;
    let mut redraw = Redraw {
        full: true,
        status: false,
        shells: Vec::new(),
    };
    let mut pacing = Pacing::new();
    while !shell.quit {
        let next_frame = pacing
            .next(&redraw, shell.typed_lately())
            .map(tokio::time::Instant::from_std);
        // Whether this pass changed what is shown on its own, not from the user's input:
        // only such changes are paced (a pass that changed nothing, e.g. a job that saved
        // the prompt history, must not make a pending input frame count as output and hold
        // the next output frame back).
        let mut output_changed = false;
        // A pane counting the seconds of a wait for the model is drawn as they change.
        let wait_tick = shell
            .ws
            .next_wait_tick()
            .map(tokio::time::Instant::from_std);
        tokio::select! {
            biased;
            Some(first) = incoming.recv() => {
                let mut next = Some(first);
                let mut handled = 0;
                let mut attached = false;
                while let Some(message) = next.take() {
                    attached |= matches!(message, Incoming::Attach { .. });
                    match shell.incoming(message, &mut redraw).await {
                        Changed::Nothing => {}
                        Changed::StatusBar => {
                            pacing.only_output = false;
                            redraw.status = true;
                        }
                        Changed::Everything => {
                            pacing.only_output = false;
                            redraw.full = true;
                            // Typing into a program changes no layout: no save (and no
                            // reading of every shell's directory) on that path. A `cd` is
                            // saved with the next change, and at quit.
                            shell.persist();
                            idle_check = shell.stop_idle();
                        }
                    }
                    handled += 1;
                    if handled < EVENT_BATCH && !shell.quit {
                        next = incoming.try_recv().ok();
                    }
                }
                if attached && shell.draw(&mut redraw) {
                    // A terminal that attached sees the workspace at once.
                    pacing.drawn();
                }
            },
            // A due frame goes before more events, so a flood of them cannot hold it back.
            () = sleep_until(next_frame), if next_frame.is_some() => {
                // Only a frame drawn counts: with nobody attached, the next to attach is
                // not kept waiting for an interval that drew nothing.
                if shell.draw(&mut redraw) {
                    pacing.drawn();
                }
                pacing.only_output = false;
            }
            Some(first) = agent_events.recv() => {
                // What else has arrived is handled in the same pass (up to a bound, so
                // input is never starved): one wake-up for a burst of streamed deltas.
                let mut structural = false;
                let mut next = Some(first);
                let mut handled = 0;
                while let Some((key, event)) = next.take() {
                    // Streamed updates change no saved state; everything else may.
                    structural |= !matches!(event, AgentEvent::Update(_));
                    shell.control.watchers.agent_event(key, &event);
                    let changed = shell.ws.agent_event(key, event);
                    // In order with the text around them: a turn that ends, one that begins.
                    shell.turn_events();
                    pacing.only_output &= !changed;
                    redraw.full |= changed;
                    output_changed |= changed;
                    handled += 1;
                    if handled < EVENT_BATCH {
                        next = agent_events.try_recv().ok();
                    }
                }
                shell.layers.absorb(&mut shell.ws);

                if let Some(note) = shell.ws.take_status_note() {
                    shell.message = Some(note);
                    redraw.full = true;
                    output_changed = true;
                }
                shell.notify();
                if structural {
                    shell.persist();
                    idle_check = shell.stop_idle();
                }
            }
            Some(first) = shell_events.recv() => {
                let mut next = Some(first);
                let mut handled = 0;
                let mut urgent = false;
                let panes_before = shell.ws.pane_count();
                while let Some((source, notice)) = next.take() {
                    let (changed, request) = match source {
                        ShellSource::Pane(id) => shell.ws.shell_event(id, notice),
                        ShellSource::Terminal(serial) => {
                            (shell.ws.terminal_notice(serial, notice), UiRequest::None)
                        }
                    };
                    if changed && !redraw.due() {
                        pacing.only_output = true;
                    }
                    output_changed |= changed;
                    if changed {
                        match source {
                            // Its rows alone, when nothing else changed with them.
                            ShellSource::Pane(id) => redraw.shell(id),
                            ShellSource::Terminal(_) => redraw.full = true,
                        }
                    }
                    urgent |= changed && shell.echo_due(source);
                    shell.shell_request(request);
                    handled += 1;
                    if handled < EVENT_BATCH {
                        next = shell_events.try_recv().ok();
                    }
                }
                if urgent {
                    // An echo of what the user typed: drawn now, not at the next tick (a
                    // timer would add up to a millisecond of its own granularity).
                    shell.typed_to_shell = None;
                    if shell.draw(&mut redraw) {
                        pacing.drawn();
                    }
                }
                if shell.ws.pane_count() != panes_before {
                    // A shell that exited closed its pane.
                    shell.persist();
                }
            }
            Some(done) = jobs_done.recv() => {
                let full_before = redraw.full;
                let mut next = Some(done);
                let mut handled = 0;
                while let Some(done) = next.take() {
                    redraw.full |= match done {
                        JobDone::PictureEncoded(picture) => {
                            shell.ws.job_handled();
                            let shown = shell.clients.encoded(picture);
                            shell.start_encodings();
                            shown
                        }
                        done => shell.ws.job_done(done),
                    };
                    handled += 1;
                    if handled < EVENT_BATCH {
                        next = jobs_done.try_recv().ok();
                    }
                }
                if let Some(note) = shell.ws.take_status_note() {
                    shell.message = Some(note);
                    redraw.full = true;
                }
                if let Some(question) = shell.ws.take_close_question() {
                    shell.layers.open(Layer::WorktreeClose(
                        worktree_close::WorktreeCloser::new(question),
                    ));
                    redraw.full = true;
                }
                if let Some(listed) = shell.ws.take_projects_listed() {
                    shell.layers.projects_listed(listed);
                    redraw.full = true;
                }
                // Turns found for the switcher.
                if shell.ws.has_found_turns() {
                    shell.layers.absorb(&mut shell.ws);
                    // Turns no switcher took (it closed meanwhile) are dropped.
                    shell.ws.drop_found_turns();
                    redraw.full = true;
                }
                pacing.only_output &= !redraw.full;
                output_changed = redraw.full && !full_before;
            }
            () = sleep_until(idle_check), if idle_check.is_some() => {
                idle_check = shell.stop_idle();
                redraw.full = true;
                output_changed = true;
            }
            () = sleep_until(wait_tick), if wait_tick.is_some() && !redraw.due() => {
                redraw.full = true;
                output_changed = true;
            }
            () = &mut socket_gone => {
                // Nobody can attach any more: the workspace is saved and ends, and the next
                // march restores it from its file.
                tracing::warn!("the server's socket was removed: the workspace ends");
                break;
            }
        }
        if output_changed && redraw.due() {
            pacing.output();
        }
        // Turns begun by a key or a control request, as by an agent event.
        shell.turn_events();
        if !shell.control.watchers.is_empty() {
            // Attention changes, and sessions closed, whatever the event was.
            let rows = shell.ws.session_states();
            shell.control.watchers.sessions_now(&rows);
        }
        if shell.control.has_waiting() {
            // A session closed by a key or by its agent: whoever waits on it is told.
            let ws = &shell.ws;
            shell
                .control
                .sessions_closed(|key| ws.turn_pending(key).is_some());
        }
    }
    shell.persist();
    if let Some(stats) = &shell.frame_stats {
        stats.write();
    }
    // A revert or a setup save under way finishes before March goes (a bounded wait).
    let deadline = tokio::time::Instant::now() + JOBS_AT_QUIT;
    while shell.ws.jobs_running() > 0 {
        match tokio::time::timeout_at(deadline, jobs_done.recv()).await {
            Ok(Some(done)) => {
                shell.ws.job_done(done);
            }
            Ok(None) | Err(_) => break,
        }
    }
    shell.ws.shutdown().await;
    // The clients restore their terminals now that everything has ended, as March did
    // before it was a server; control requests answered just before are sent too. A
    // client that does not read is not waited for long.
    let mut told = shell.clients.exit_all(CLOSED);
    told.append(&mut shell.control.replies);
    let all_told = futures_util::future::join_all(told.into_iter().map(Finished::wait));
    let _ = tokio::time::timeout(LAST_WORDS, all_told).await;
    Ok(())
}

/// What a terminal event changed on screen, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Changed {
    /// Nothing yet (a key went to a program, which answers on its own).
    Nothing,
    /// The status bar alone (a key to a program cleared the message).
    StatusBar,
    /// Anything.
    Everything,
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// An OSC 9 notification for `n`: printable text only, so a session title cannot end the
/// sequence early or start another.
fn osc9(n: &Notification) -> String {
    let what = match n.kind {
        Notify::NeedsYou => "needs you",
        Notify::Done => "finished",
        Notify::Error => "failed",
    };
    let title: String = n
        .title
        .chars()
        .filter(|c| !c.is_control())
        .take(80)
        .collect();
    format!("\x1b]9;March: {title} {what}\x07")
}

/// The agent new panes run: `default_agent` from the config, else March's own runner.
fn agent_spec(config: &Config) -> anyhow::Result<AgentSpec> {
    let exe = std::env::current_exe().context("cannot find the march executable")?;
    match config.default_agent.as_deref() {
        None | Some("march") => Ok(AgentSpec::march(&exe)),
        Some(name) => match config.agents.get(name) {
            Some(agent) => Ok(AgentSpec::configured(name, agent)),
            None => anyhow::bail!(
                "default_agent = \"{name}\" names no [agents.{name}] table in config.toml"
            ),
        },
    }
}

impl Ui {
    /// Handles what a connection brought; what on screen may have changed.
    async fn incoming(&mut self, message: Incoming, redraw: &mut Redraw) -> Changed {
        match message {
            Incoming::Attach { id, hello, outbox } => {
                tracing::info!(
                    id,
                    cols = hello.cols,
                    rows = hello.rows,
                    read_only = hello.read_only,
                    "a client attached"
                );
                self.clients.attach(id, hello, outbox);
                self.ws.set_terminal_focused(true);
                Changed::Everything
            }
            Incoming::Events { id, events } => {
                let mut changed = Changed::Nothing;
                for event in events {
                    changed = changed.max(self.client_event(id, event, redraw).await);
                    if self.quit {
                        break;
                    }
                }
                changed
            }
            Incoming::Gone { id, why } => {
                tracing::info!(id, "a client left: {why}");
                let resized = self.clients.remove(id, "detached");
                if self.clients.is_empty() {
                    self.ws.set_terminal_focused(false);
                }
                if resized {
                    Changed::Everything
                } else {
                    Changed::Nothing
                }
            }
            Incoming::Drained { id } => {
                self.clients.drained(id);
                // Its pictures are sent again.
                self.start_encodings();
                Changed::Nothing
            }
            Incoming::Watch { session, events } => {
                let rows = self.ws.session_states();
                self.control.watchers.add(session, events, &rows);
                Changed::Nothing
            }
            Incoming::Control {
                request,
                reply,
                written,
            } => {
                let changes = request.changes_workspace();
                control::answer(self, request, reply);
                // A prompt sent begins its turn before anything the agent says of it.
                self.turn_events();
                self.control.answered(written);
                if changes {
                    Changed::Everything
                } else {
                    Changed::Nothing
                }
            }
        }
    }

    /// Stops the runners of sessions idle out of sight for `[workspace] stop_idle_after`;
    /// when the next may be due.
    fn stop_idle(&mut self) -> Option<tokio::time::Instant> {
        if self.stop_idle_after.is_zero() {
            return None;
        }
        let now = std::time::SystemTime::now();
        let due = self.ws.stop_idle_background(now, self.stop_idle_after)?;
        let wait = due.duration_since(now).unwrap_or_default();
        Some(tokio::time::Instant::now() + wait)
    }

    /// Save the layout when it changed since it was last saved.
    fn persist(&mut self) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        if let Err(e) = store.save(&self.ws.saved(&self.dirs)) {
            tracing::warn!(
                "cannot save the workspace to {}: {e}",
                store.path().display()
            );
            self.message = Some(format!("cannot save the layout: {e}"));
        }
    }

    /// What sessions' turns did, to whoever waits on or watches them.
    fn turn_events(&mut self) {
        for (key, event) in self.ws.take_turn_events() {
            self.control.turn_event(key, &event);
        }
    }

    /// Tell the terminals about sessions that need the user: a bell and an OSC 9 desktop
    /// notification, as configured, between frames (kept for the next terminal to attach
    /// when none is).
    fn notify(&mut self) {
        let wanted: Vec<_> = self
            .ws
            .take_notifications()
            .into_iter()
            .filter(|n| n.kind.wanted(self.notifications.on_done))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let mut bytes = String::new();
        for n in &wanted {
            if self.notifications.osc9 {
                bytes.push_str(&osc9(n));
            }
        }
        if self.notifications.bell {
            bytes.push('\x07');
        }
        self.clients.send_all(bytes.as_bytes());
    }

    fn shell_request(&mut self, request: UiRequest) {
        match request {
            UiRequest::None => {}
            UiRequest::Quit => self.quit = true,
            UiRequest::Detach => {
                if let Some(id) = self.clients.current() {
                    self.clients.remove(id, "detached");
                    if self.clients.is_empty() {
                        self.ws.set_terminal_focused(false);
                    }
                }
            }
            UiRequest::Copy(text) => {
                let sequence = march_panes::osc52::osc52_copy(&text);
                self.message = Some(if self.clients.send_clipboard(sequence.as_bytes()) {
                    format!("copied {} characters", text.chars().count())
                } else {
                    "not copied: this terminal takes no clipboard writes (OSC 52)".to_string()
                });
            }
        }
    }
}
