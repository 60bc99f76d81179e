//! The supervisor view: an overlay listing every session's runner by project (state, pid,
//! restarts, attention, model, context, cost, the last stderr lines of a crashed one), where
//! the user shows a session, restarts or stops its runner, or reads its log.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::PermissionOptionKind;
use crossterm::event::{KeyCode, KeyEvent};
use march_panes::avatar::AvatarBadge;
use march_panes::chrome::draw_modal;
use march_panes::picture::Placement;
use march_panes::sanitize::sanitize_line;
use march_panes::theme::{Slot, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use march_runner::browser::Status;

use crate::logging;
use crate::workspace::Workspace;
use crate::workspace::agent::RunnerState;
use crate::workspace::costs::ProjectCosts;
use crate::workspace::router::SessionKey;
use crate::workspace::supervisor::SessionRow;

/// Lines of a runner's log shown at most.
const LOG_LINES: usize = 500;

/// What a key in the view asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SupervisorAction {
    /// Nothing for the workspace (the view may have changed).
    None,
    /// Close the view.
    Close,
    /// Show this session (and close the view).
    Show(SessionKey),
    /// Restart its runner.
    Restart(SessionKey),
    /// Stop its runner.
    Stop(SessionKey),
    /// Answer its open permission request with the option of this kind.
    Answer(SessionKey, PermissionOptionKind),
}

/// The open view: the selected row and, when reading one, a runner's log.
#[derive(Debug, Default, Clone)]
pub(super) struct SupervisorView {
    selected: usize,
    /// The log being read: its title and last lines, and how far up it is scrolled.
    log: Option<(String, Vec<String>, usize)>,
}

impl SupervisorView {
    /// Handles a key against the current `rows`.
    pub(super) fn key(
        &mut self,
        key: KeyEvent,
        rows: &[SessionRow],
        log_dir: &Path,
    ) -> SupervisorAction {
        if let Some((_, lines, scroll)) = self.log.as_mut() {
            match key.code {
                KeyCode::Up | KeyCode::Char('k') => *scroll = (*scroll + 1).min(lines.len()),
                KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_sub(1),
                KeyCode::PageUp => *scroll = (*scroll + 20).min(lines.len()),
                KeyCode::PageDown => *scroll = scroll.saturating_sub(20),
                _ => self.log = None,
            }
            return SupervisorAction::None;
        }
        self.selected = self.selected.min(rows.len().saturating_sub(1));
        let row = rows.get(self.selected);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => SupervisorAction::Close,
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                SupervisorAction::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(rows.len().saturating_sub(1));
                SupervisorAction::None
            }
            KeyCode::Enter => row.map_or(SupervisorAction::None, |r| SupervisorAction::Show(r.key)),
            KeyCode::Char('r') => {
                row.map_or(SupervisorAction::None, |r| SupervisorAction::Restart(r.key))
            }
            KeyCode::Char('x') => {
                row.map_or(SupervisorAction::None, |r| SupervisorAction::Stop(r.key))
            }
            // Answers for the selected session's question, the letters of its pane's dialog:
            // y allow once, Y always, n reject once, N reject always.
            KeyCode::Char(c @ ('y' | 'Y' | 'n' | 'N')) => match row {
                // An allow counts only for a question read whole: one with more than its
                // first line (a command, a diff) opens in its pane's dialog instead.
                Some(r)
                    if matches!(c, 'y' | 'Y')
                        && r.question.as_deref().is_some_and(|q| q.contains('\n')) =>
                {
                    SupervisorAction::Show(r.key)
                }
                Some(r) if r.question.is_some() => {
                    let kind = match c {
                        'y' => PermissionOptionKind::AllowOnce,
                        'Y' => PermissionOptionKind::AllowAlways,
                        'n' => PermissionOptionKind::RejectOnce,
                        _ => PermissionOptionKind::RejectAlways,
                    };
                    SupervisorAction::Answer(r.key, kind)
                }
                _ => SupervisorAction::None,
            },
            KeyCode::Char('l') => {
                if let Some(r) = row {
                    self.log = Some(read_log(r, log_dir));
                }
                SupervisorAction::None
            }
            _ => SupervisorAction::None,
        }
    }

    /// Draws the view over `area`.
    pub(super) fn render(
        &self,
        ws: &Workspace,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        pictures: bool,
    ) -> Vec<Placement> {
        let rows = &ws.supervisor_rows();
        let daemons = ws.daemons();
        let (costs, browser) = (ws.costs(), daemons.browser.status());
        let mut placed = Vec::new();
        if area.width < 20 || area.height < 6 {
            return placed;
        }
        let rect = Rect::new(
            area.x + 1,
            area.y + 1,
            area.width.saturating_sub(2),
            area.height.saturating_sub(2),
        );
        let body = theme.style(Slot::Modal);
        let projects = {
            let mut p: Vec<&PathBuf> = rows.iter().map(|r| &r.project).collect();
            p.dedup();
            p.len()
        };
        let title = match &self.log {
            Some((name, _, _)) => name.clone(),
            None => {
                let today = costs.today();
                let mut title = format!(
                    "Supervisor · {projects} project{} · {} session{}",
                    plural(projects),
                    rows.len(),
                    plural(rows.len())
                );
                let hosts = {
                    let mut h: Vec<&Option<String>> = rows.iter().map(|r| &r.host).collect();
                    h.dedup();
                    h.len()
                };
                if rows.iter().any(|r| r.host.is_some()) {
                    title.push_str(&format!(" · {hosts} machine{}", plural(hosts)));
                }
                if today.calls > 0 {
                    title.push_str(&format!(" · today {}", dollars(today.cost)));
                }
                title
            }
        };
        let inner = draw_modal(rect, &title, buf, theme);
        let width = usize::from(inner.width);
        let footer = match &self.log {
            Some(_) => "↑↓ PgUp PgDn scroll · any other key back",
            None => "↑↓ select · enter show · r restart · x stop · l log · y/n answer · esc close",
        };
        // Each line, with the avatar a session's row starts with.
        let mut lines: Vec<(Line<'static>, Option<&AvatarBadge>)> = match &self.log {
            Some((_, log, scroll)) => {
                let room = usize::from(inner.height.saturating_sub(1));
                let end = log.len().saturating_sub(*scroll);
                let start = end.saturating_sub(room);
                log[start..end]
                    .iter()
                    .map(|l| (Line::styled(clip(l, width), body), None))
                    .collect()
            }
            None => {
                let mut lines = self.row_lines(rows, costs, width, theme);
                lines.extend(
                    browser_lines(browser, rows, width, theme)
                        .into_iter()
                        .chain(memory_lines(daemons.memory.status(), width, theme))
                        .chain(gateway_lines(daemons.gateway.status(), width, theme))
                        .map(|l| (l, None)),
                );
                lines
            }
        };
        let room = usize::from(inner.height.saturating_sub(1));
        if lines.len() > room {
            // Keep the selection in view.
            let at = lines
                .iter()
                .position(|(l, _)| l.spans.first().is_some_and(|s| s.content.starts_with(" ›")))
                .unwrap_or(0);
            let skip = (at + 1).saturating_sub(room);
            lines = lines.into_iter().skip(skip).take(room).collect();
        }
        for (i, (line, avatar)) in lines.into_iter().enumerate() {
            let y = inner.y + i as u16;
            buf.set_line(inner.x, y, &line, inner.width);
            // In the glyph's two cells, after the selection mark.
            if let Some(badge) = avatar {
                let base = buf[(inner.x, y)].style();
                placed.extend(badge.draw((inner.x + 3, y), buf, theme, base, pictures));
            }
        }
        buf.set_line(
            inner.x,
            inner.bottom().saturating_sub(1),
            &Line::styled(clip(footer, width), theme.style(Slot::Hint)),
            inner.width,
        );
        placed
    }

    fn row_lines<'r>(
        &self,
        rows: &'r [SessionRow],
        costs: &ProjectCosts,
        width: usize,
        theme: &Theme,
    ) -> Vec<(Line<'static>, Option<&'r AvatarBadge>)> {
        let body = theme.style(Slot::Modal);
        let dim = theme.style(Slot::TextDim);
        let mut lines = Vec::new();
        let mut project: Option<&PathBuf> = None;
        let mut host: Option<Option<&String>> = None;
        // Hosts are named once another machine is in the list.
        let many_hosts = rows.iter().any(|r| r.host.is_some());
        if rows.is_empty() {
            lines.push((Line::styled(" No sessions.", dim), None));
        }
        for (i, row) in rows.iter().enumerate() {
            if many_hosts && host != Some(row.host.as_ref()) {
                host = Some(row.host.as_ref());
                let on_host: Vec<&SessionRow> =
                    rows.iter().filter(|r| r.host == row.host).collect();
                let (name, (state, slot)) = match &row.host {
                    None => (
                        "this machine".to_string(),
                        ("local".to_string(), Slot::TextDim),
                    ),
                    Some(h) => (h.clone(), connection(&on_host)),
                };
                lines.push((
                    Line::from(vec![
                        Span::styled(
                            format!(" ▣ {} ", sanitize_line(&name)),
                            body.patch(theme.style(Slot::TitleFocused)),
                        ),
                        Span::styled(
                            clip(&state, width.saturating_sub(name.len() + 4)),
                            theme.style(slot),
                        ),
                    ]),
                    None,
                ));
            }
            if project != Some(&row.project) {
                project = Some(&row.project);
                let name = crate::workspace::project_name(&row.project);
                // The project's cost over all its sessions (open or not), from the transcripts.
                let cost = costs
                    .of(&row.project)
                    .filter(|c| c.total.calls > 0)
                    .map(|c| {
                        format!(
                            " {} total · {} today",
                            dollars(c.total.cost),
                            dollars(c.today.cost)
                        )
                    })
                    .unwrap_or_default();
                let used = march_panes::wrap::width(&name) + 2 + march_panes::wrap::width(&cost);
                lines.push((
                    Line::from(vec![
                        Span::styled(
                            format!(" {} ", sanitize_line(&name)),
                            body.patch(theme.style(Slot::TitleFocused)),
                        ),
                        Span::styled(
                            clip(
                                &sanitize_line(&row.project.to_string_lossy()),
                                width.saturating_sub(used),
                            ),
                            dim,
                        ),
                        Span::styled(cost, body),
                    ]),
                    None,
                ));
            }
            let selected = i == self.selected;
            let style = if selected {
                body.patch(theme.style(Slot::Selection))
            } else {
                body
            };
            let (glyph, glyph_style) = (row.attention.glyph(), theme.style(row.attention.slot()));
            let state_style = match row.runner.state {
                RunnerState::Ready => theme.style(Slot::Success),
                RunnerState::Crashed(_) => theme.style(Slot::Error),
                RunnerState::Restarting | RunnerState::Starting => theme.style(Slot::Warning),
                RunnerState::Stopped => dim,
            };
            let mut facts = Vec::new();
            if let Some(pid) = row.runner.pid {
                facts.push(format!("pid {pid}"));
            }
            facts.push(format!("restarts {}", row.runner.restarts));
            facts.push(row.attention.words().to_string());
            let mcp = crate::workspace::mcp::summary(&row.runner.mcp);
            if let Some((fact, _)) = &mcp {
                facts.push(fact.clone());
            }
            if let Some(model) = &row.pane.model {
                facts.push(sanitize_line(model).into_owned());
            }
            if let Some(sandbox) = &row.pane.sandbox {
                facts.push(sandbox.clone());
            }
            if let Some(used) = row.pane.context_used {
                facts.push(format!("{} tok", tokens(used)));
            }
            if let Some(total) = row.pane.total_tokens {
                facts.push(format!("Σ {} tok", tokens(total)));
            }
            if let Some((amount, currency)) = &row.pane.cost {
                facts.push(if currency == "USD" {
                    format!("${amount:.2}")
                } else {
                    format!("{amount:.2} {}", sanitize_line(currency))
                });
            }
            if !row.shown {
                facts.push("background".to_string());
            }
            let title = format!(
                "{} ({})",
                sanitize_line(&row.title),
                sanitize_line(&row.runner.agent)
            );
            let title_width = 34.min(width / 2);
            let spans = vec![
                Span::styled(if selected { " › " } else { "   " }.to_string(), style),
                Span::styled(format!("{glyph}  "), style.patch(glyph_style)),
                Span::styled(pad(&clip(&title, title_width), title_width + 1), style),
                Span::styled(
                    format!("{:<10} ", row.runner.state.label()),
                    style.patch(state_style),
                ),
                Span::styled(
                    clip(&facts.join(" · "), width.saturating_sub(title_width + 16)),
                    style,
                ),
            ];
            lines.push((Line::from(spans), row.avatar.as_ref()));
            let trouble = match &row.runner.state {
                RunnerState::Crashed(why) => Some(why.clone()),
                _ => None,
            };
            if let Some(why) = trouble {
                lines.push((
                    Line::styled(
                        format!(
                            "       {}",
                            clip(&sanitize_line(&why), width.saturating_sub(7))
                        ),
                        theme.style(Slot::Error),
                    ),
                    None,
                ));
            }
            for line in mcp.iter().flat_map(|(_, trouble)| trouble) {
                lines.push((
                    Line::styled(
                        format!(
                            "       {}",
                            clip(&sanitize_line(line), width.saturating_sub(7))
                        ),
                        theme.style(Slot::Warning),
                    ),
                    None,
                ));
            }
            if let Some(question) = &row.question {
                let mut rest = question.lines();
                let first = rest.next().unwrap_or_default();
                let text = match rest.count() {
                    0 => format!(
                        "       ? {} — y allow · Y always · n reject · N never",
                        sanitize_line(first)
                    ),
                    more => format!(
                        "       ? {} (+{more} lines) — y read it whole · n reject · N never",
                        sanitize_line(first)
                    ),
                };
                lines.push((
                    Line::styled(clip(&text, width), theme.style(Slot::Warning)),
                    None,
                ));
            }
            if !matches!(row.runner.state, RunnerState::Ready) && !row.runner.stderr_tail.is_empty()
            {
                for l in row
                    .runner
                    .stderr_tail
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    lines.push((
                        Line::styled(
                            format!(
                                "       stderr: {}",
                                clip(&sanitize_line(l), width.saturating_sub(15))
                            ),
                            dim,
                        ),
                        None,
                    ));
                }
            }
        }
        lines
    }
}

/// The browser daemon and its tabs, by session (the workspace's own by their titles), when
/// it runs.
/// This machine's memory server and the remote memory, when either runs or is configured.
fn memory_lines(
    status: Option<&march_runner::memory_server::MemoryStatus>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let Some(status) = status else {
        return Vec::new();
    };
    let title = theme
        .style(Slot::Modal)
        .patch(theme.style(Slot::TitleFocused));
    let answered = |reached: &march_runner::memory_server::Reached| match &reached.answer {
        Ok((files, bytes)) => (
            format!("{files} file{} · {}", plural(*files as usize), size(*bytes)),
            theme.style(Slot::TextDim),
        ),
        Err(e) => (sanitize_line(e).into_owned(), theme.style(Slot::Error)),
    };
    let mut lines = vec![Line::default()];
    let mut line = |name: &str, facts: String, (state, style): (String, ratatui::style::Style)| {
        let text = clip(
            &format!("{facts} · {state}"),
            width.saturating_sub(name.len()),
        );
        lines.push(Line::from(vec![
            Span::styled(name.to_string(), title),
            Span::styled(text, style),
        ]));
    };
    if let Some((state, reached)) = &status.local {
        let facts = format!(
            "pid {} · {} · {}",
            state.pid,
            sanitize_line(&reached.url),
            sanitize_line(&state.dir.to_string_lossy())
        );
        line(" Memory server ", facts, answered(reached));
    }
    if let Some((reached, queued)) = &status.remote {
        let mut facts = sanitize_line(&reached.url).into_owned();
        if *queued > 0 {
            facts.push_str(&format!(" · {queued} append{} waiting", plural(*queued)));
        }
        line(" Remote memory ", facts, answered(reached));
    }
    lines
}

/// The gateway, when it runs or messages wait in its queue.
fn gateway_lines(
    status: Option<&march_gateway::GatewayStatus>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let Some(status) = status else {
        return Vec::new();
    };
    let name = " Gateway ";
    let title = theme
        .style(Slot::Modal)
        .patch(theme.style(Slot::TitleFocused));
    let mut facts = match &status.running {
        Some(state) => {
            let mut adapters = vec![format!("http://{}", state.listen)];
            adapters.extend(state.chats.iter().cloned());
            if state.webhook {
                adapters.push("webhook".into());
            }
            format!("pid {} · {}", state.pid, adapters.join(", "))
        }
        None => "not running".to_string(),
    };
    if status.queued > 0 {
        facts.push_str(&format!(
            " · {} message{} waiting",
            status.queued,
            plural(status.queued)
        ));
    }
    let (state, style) = match (&status.running, &status.answered) {
        (Some(_), Ok(())) => ("answers".to_string(), theme.style(Slot::TextDim)),
        (None, _) => (
            "start it: march gateway".to_string(),
            theme.style(Slot::Warning),
        ),
        (Some(_), Err(e)) => (sanitize_line(e).into_owned(), theme.style(Slot::Error)),
    };
    let text = clip(
        &sanitize_line(&format!("{facts} · {state}")),
        width.saturating_sub(name.len()),
    );
    vec![
        Line::default(),
        Line::from(vec![
            Span::styled(name.to_string(), title),
            Span::styled(text, style),
        ]),
    ]
}

/// Bytes as people read them: 900 B, 12 KB, 3.4 MB.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{} KB", bytes / 1_000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

fn browser_lines(
    status: Option<&Status>,
    rows: &[SessionRow],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let Some(status) = status else {
        return Vec::new();
    };
    let body = theme.style(Slot::Modal);
    let dim = theme.style(Slot::TextDim);
    let tabs: usize = status.sessions.iter().map(|s| s.tabs.len()).sum();
    let mut facts = vec![format!("pid {}", status.pid)];
    match (&status.browser, status.browser_pid) {
        (Some(browser), Some(pid)) => facts.push(format!("{} (pid {pid})", sanitize_line(browser))),
        (Some(browser), None) => facts.push(format!("{} (yours)", sanitize_line(browser))),
        (None, _) => facts.push("no browser yet".to_string()),
    }
    facts.push(format!("{tabs} tab{}", plural(tabs)));
    let name = " Browser daemon ";
    let mut lines = vec![
        Line::default(),
        Line::from(vec![
            Span::styled(name, body.patch(theme.style(Slot::TitleFocused))),
            Span::styled(
                clip(&facts.join(" · "), width.saturating_sub(name.len())),
                dim,
            ),
        ]),
    ];
    for session in &status.sessions {
        let title = rows
            .iter()
            .find(|r| r.session_id.as_deref() == Some(session.session.as_str()))
            .map(|r| sanitize_line(&r.title).into_owned())
            .unwrap_or_else(|| {
                let id: String = session.session.chars().take(8).collect();
                format!("session {}", sanitize_line(&id))
            });
        for tab in &session.tabs {
            let mark = if tab.current { "▸" } else { " " };
            let text = format!(
                "   {mark} {title} · tab {}: {} — {}",
                tab.tab,
                sanitize_line(&tab.title),
                sanitize_line(&tab.url)
            );
            lines.push(Line::styled(clip(&text, width), body));
        }
    }
    lines
}

/// The last lines of `row`'s runner log, made safe to draw.
fn read_log(row: &SessionRow, log_dir: &Path) -> (String, Vec<String>, usize) {
    let Some(pid) = row.runner.log_pid else {
        return (
            "no log".to_string(),
            vec!["This runner never started, so it has no log.".to_string()],
            0,
        );
    };
    let name = logging::runner_log(pid);
    let path = log_dir.join(&name);
    let lines = match std::fs::read(&path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            let start = all.len().saturating_sub(LOG_LINES);
            let mut lines: Vec<String> = all[start..]
                .iter()
                .map(|l| sanitize_line(l).into_owned())
                .collect();
            if lines.is_empty() {
                lines.push("The log is empty.".to_string());
            }
            lines
        }
        Err(e) => vec![format!("cannot read {}: {e}", path.display())],
    };
    (name, lines, 0)
}

/// `$0.12`: cents for sums of a cent or more, more places below, so a small spend is seen.
fn dollars(amount: f64) -> String {
    if amount > 0.0 && amount < 0.01 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// A host's connection, from its runners: connected while one runs, connecting while one
/// starts, else why the last one ended.
fn connection(rows: &[&SessionRow]) -> (String, Slot) {
    let states = || rows.iter().map(|r| &r.runner.state);
    let ready = states().filter(|s| **s == RunnerState::Ready).count();
    if ready > 0 {
        return (
            format!("connected · {ready} runner{}", plural(ready)),
            Slot::Success,
        );
    }
    if states().any(|s| matches!(s, RunnerState::Starting | RunnerState::Restarting)) {
        return ("connecting…".to_string(), Slot::Warning);
    }
    match states().find_map(|s| match s {
        RunnerState::Crashed(why) => Some(why),
        _ => None,
    }) {
        Some(why) => (
            format!(
                "disconnected: {}",
                sanitize_line(why.lines().next().unwrap_or_default())
            ),
            Slot::Error,
        ),
        None => ("not connected".to_string(), Slot::TextDim),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `n` tokens, shortened (12.3k).
fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// `s` cut to `width` columns.
fn clip(s: &str, width: usize) -> String {
    march_panes::wrap::truncate(s, width)
}

/// `s` padded with spaces to `width` columns.
fn pad(s: &str, width: usize) -> String {
    let w = march_panes::wrap::width(s);
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}
