//! One frame of the workspace: the panes of the active tab, the status bar, and the
//! which-key hint or the help overlay on top. Shared by the UI and the snapshot tests.

use march_panes::highlight::Highlighter;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::hints;
use super::layers::Layers;
use crate::keymap::{KeyContext, Keymap};
use crate::workspace::Workspace;
use crate::workspace::status::{self, StatusContext};

/// What the frame shows besides the workspace.
pub(super) struct Overlays<'a> {
    /// The keymap, for the hints.
    pub keymap: &'a Keymap,
    /// The prefix key was pressed.
    pub prefix_pending: bool,
    /// A message for the status bar.
    pub message: Option<String>,
    /// What covers the panes, if anything.
    pub layers: Option<&'a Layers>,
    /// An attached terminal shows pictures: agent panes leave them room.
    pub pictures: bool,
}

/// What a frame drew besides cells.
#[derive(Debug, Default)]
pub(super) struct Drawn {
    /// Where the cursor goes.
    pub cursor: Option<Position>,
    /// The pictures in sight, for the terminals that show them.
    pub pictures: Vec<march_panes::picture::Placement>,
}

/// Draws the workspace into `buf` (all of it): where the cursor goes and the pictures.
pub(super) fn draw(
    buf: &mut Buffer,
    ws: &mut Workspace,
    theme: &Theme,
    highlighter: &Highlighter,
    overlays: &Overlays<'_>,
) -> Drawn {
    let area = buf.area;
    // Nothing fits: draw nothing rather than something broken.
    if area.height < 2 || area.width < 2 {
        return Drawn::default();
    }
    let panes = Rect::new(area.x, area.y, area.width, area.height - 1);
    let mut pictures = ws.render(panes, buf, theme, highlighter, overlays.pictures);
    let (cursor, over) = draw_over(buf, ws, theme, overlays, panes);
    pictures.extend(over);
    Drawn { cursor, pictures }
}

/// The status bar and what covers the panes; where the cursor goes, and the pictures of
/// what covers the panes.
fn draw_over(
    buf: &mut Buffer,
    ws: &mut Workspace,
    theme: &Theme,
    overlays: &Overlays<'_>,
    panes: Rect,
) -> (Option<Position>, Vec<march_panes::picture::Placement>) {
    let ctx = status_context(overlays.prefix_pending, &overlays.message);
    draw_status_bar(buf, ws, theme, &ctx);
    let layers = overlays.layers.filter(|l| !l.is_empty());
    let (hides_cursor, placed) = layers.map_or((false, Vec::new()), |l| {
        l.draw(ws, overlays.keymap, panes, buf, theme, overlays.pictures)
    });
    if layers.is_none() && overlays.prefix_pending {
        hints::render(
            &overlays.keymap.hints(KeyContext::Prefix),
            panes,
            buf,
            theme,
        );
    }
    if hides_cursor {
        return (None, placed);
    }
    (cursor(ws), placed)
}

/// What the status bar shows besides the workspace's state.
pub(super) fn status_context(prefix_pending: bool, message: &Option<String>) -> StatusContext {
    StatusContext {
        prefix_pending,
        message: message.clone(),
    }
}

/// Draws the status bar, the last row of `buf`; its area.
pub(super) fn draw_status_bar(
    buf: &mut Buffer,
    ws: &Workspace,
    theme: &Theme,
    ctx: &StatusContext,
) -> Rect {
    let area = buf.area;
    let bar = Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1);
    status::render(ws, ctx, bar, buf, theme);
    bar
}

/// Where the cursor goes when no list or overlay covers the panes: the focused shell's
/// program's cursor, or the focused agent pane's input cursor.
pub(super) fn cursor(ws: &mut Workspace) -> Option<Position> {
    let focused = ws.focused();
    ws.pane_cursor(focused).map(|(x, y)| Position::new(x, y))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::ui::layers::Layer;
    use crate::ui::supervisor::SupervisorView;
    use crate::workspace::Workspace;
    use crate::workspace::layout::{Axis, Direction};

    /// A workspace whose panes have no agent behind them.
    fn workspace() -> Workspace {
        workspace_on(&["/work/project"])
    }

    /// A workspace with a tab for each of `projects`, no agent behind its panes.
    fn workspace_on(projects: &[&str]) -> Workspace {
        crate::workspace::test_workspace_on(projects).0
    }

    /// [`draw`] in a ratatui frame.
    fn test_draw(
        f: &mut ratatui::Frame<'_>,
        ws: &mut Workspace,
        theme: &Theme,
        hl: &Highlighter,
        overlays: &Overlays<'_>,
    ) {
        if let Some(at) = draw(f.buffer_mut(), ws, theme, hl, overlays).cursor {
            f.set_cursor_position(at);
        }
    }

    fn render(ws: &mut Workspace, overlays: &Overlays<'_>, theme: &Theme) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
        let hl = Highlighter::new();
        terminal
            .draw(|f| test_draw(f, ws, theme, &hl, overlays))
            .unwrap();
        terminal
    }

    /// Layers holding `layer` alone.
    fn with(layer: Layer) -> Layers {
        let mut layers = Layers::default();
        layers.open(layer);
        layers
    }

    fn plain(keymap: &Keymap) -> Overlays<'_> {
        Overlays {
            keymap,
            prefix_pending: false,
            message: None,
            layers: None,
            pictures: false,
        }
    }

    #[test]
    fn the_supervisor_shows_each_sessions_avatar_in_its_state_with_and_without_pictures() {
        use march_panes::attention::Attention;
        use march_panes::avatar::testing;
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let names = ["idle", "working", "needs-you", "done", "error"];
        let dirs: Vec<String> = names.iter().map(|n| format!("/work/{n}")).collect();
        let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        let mut ws = workspace_on(&dirs);
        let avatar = testing::avatar(&theme);
        ws.test_avatar("march", avatar.clone());
        for (i, state) in Attention::ALL.into_iter().enumerate() {
            ws.select_tab(i);
            let key = ws.focused_session().unwrap();
            ws.test_attention(key, state);
        }
        // The idle one is in view: looking at it changes nothing.
        ws.select_tab(0);
        let layers = with(Layer::Supervisor(SupervisorView::default()));
        let mut shown = Vec::new();
        for pictures in [false, true] {
            let overlays = Overlays {
                layers: Some(&layers),
                pictures,
                ..plain(&keymap)
            };
            let mut buf = Buffer::empty(Rect::new(0, 0, 100, 24));
            let drawn = draw(&mut buf, &mut ws, &theme, &Highlighter::new(), &overlays);
            shown.push(format!("pictures {pictures}:"));
            shown.extend(
                (0..24)
                    .map(|y| testing::shown_row(&buf, y, &drawn.pictures, &avatar))
                    .filter(|row| row.contains("(march)")),
            );
        }
        insta::assert_snapshot!(shown.join("\n"));
    }

    #[test]
    fn splits_tabs_and_zoom() {
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        ws.split(Axis::Horizontal);
        ws.split(Axis::Vertical);
        ws.focus_direction(Direction::Left);
        let t = render(&mut ws, &plain(&keymap), &theme);
        insta::assert_snapshot!("three_panes", t.backend());
        ws.layout_mut().toggle_zoom();
        let t = render(&mut ws, &plain(&keymap), &theme);
        insta::assert_snapshot!("zoomed", t.backend());
        ws.new_tab();
        let t = render(&mut ws, &plain(&keymap), &theme);
        insta::assert_snapshot!("second_tab", t.backend());
    }

    #[test]
    fn status_bar_with_prefix_hint_and_message() {
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        let overlays = Overlays {
            keymap: &keymap,
            prefix_pending: true,
            message: Some("copied 12 characters".to_string()),
            layers: None,
            pictures: false,
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("prefix_hint", t.backend());
    }

    #[test]
    fn help_overlay_in_the_light_theme() {
        let theme = Theme::builtin("light").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        let layers = with(Layer::Help(std::cell::Cell::new(0)));
        let overlays = Overlays {
            layers: Some(&layers),
            pictures: false,
            ..plain(&keymap)
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("help_light", t.backend());
    }

    #[test]
    fn the_key_list_fits_80_by_24_and_scrolls_to_its_end() {
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        let layers = with(Layer::Help(std::cell::Cell::new(0)));
        let Some(Layer::Help(scroll)) = layers.top() else {
            unreachable!()
        };
        let overlays = Overlays {
            layers: Some(&layers),
            pictures: false,
            ..plain(&keymap)
        };
        let mut draw_at = |w, h| {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            let hl = Highlighter::new();
            terminal
                .draw(|f| test_draw(f, &mut ws, &theme, &hl, &overlays))
                .unwrap();
            terminal
        };
        let t = draw_at(80, 24);
        insta::assert_snapshot!("key_list_80x24", t.backend());
        // Scrolled far past the end: the view stops at the last line, and says so.
        scroll.set(10_000);
        let t = draw_at(80, 24);
        let text = format!("{:?}", t.backend());
        let total = keymap_line_count(&keymap);
        assert!(text.contains(&format!("of {total} ·")), "{text}");
        assert!(text.contains(&format!("–{total} of")), "{text}");
        assert!(scroll.get() < total, "the scroll was clamped");
        // Every row keeps its border: nothing ran past the box.
        for row in 1..23u16 {
            let line: String = (0..80u16)
                .map(|x| t.backend().buffer()[(x, row)].symbol().to_string())
                .collect();
            assert_eq!(line.chars().filter(|c| *c == '│').count() % 2, 0, "{line}");
        }
    }

    /// Lines of the key list: a heading and a blank per context, a line per binding.
    fn keymap_line_count(keymap: &Keymap) -> usize {
        KeyContext::ALL
            .iter()
            .map(|c| keymap.hints(*c).len() + 2)
            .sum::<usize>()
            - 1
    }

    #[test]
    fn status_bar_badges_and_tab_attention() {
        use agent_client_protocol::v1::schema::{PermissionOptionKind, PromptResponse, StopReason};

        use crate::workspace::agent::AgentEvent;
        use crate::workspace::router::Attention;
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace_on(&["/work/api", "/work/web", "/work/docs"]);
        let key_of_tab = |ws: &mut Workspace, i: usize| {
            ws.select_tab(i);
            ws.focused_session().unwrap()
        };
        let (api, web, docs) = (
            key_of_tab(&mut ws, 0),
            key_of_tab(&mut ws, 1),
            key_of_tab(&mut ws, 2),
        );
        ws.select_tab(0);
        let request = crate::workspace::permission_request();
        ws.agent_event(web, AgentEvent::Permission(request));
        ws.agent_event(
            docs,
            AgentEvent::TurnEnded(Ok(PromptResponse::new(StopReason::EndTurn))),
        );
        ws.agent_event(api, AgentEvent::TurnEnded(Err("boom".into())));
        // The focused session's failure is on screen: no badge for it.
        assert_eq!(ws.take_notifications().len(), 2);
        let t = render(&mut ws, &plain(&keymap), &theme);
        insta::assert_snapshot!("attention_badges", t.backend());
        // The supervisor lists the question and answers it without leaving this pane.
        let rows = ws.supervisor_rows();
        let at = rows.iter().position(|r| r.key == web).unwrap();
        assert_eq!(rows[at].question.as_deref(), Some("a tool call"));
        let mut view = SupervisorView::default();
        let key = |c| crossterm::event::KeyEvent::new(c, crossterm::event::KeyModifiers::NONE);
        let dir = Path::new("/nonexistent");
        for _ in 0..at {
            view.key(key(crossterm::event::KeyCode::Down), &rows, dir);
        }
        // The projects' costs, as read from their transcripts off the loop.
        let spent = |calls, cost| march_core::usage::UsageTotals {
            calls,
            cost,
            ..Default::default()
        };
        ws.job_done(crate::workspace::jobs::JobDone::CostsRead(vec![(
            "/work/api".into(),
            crate::workspace::costs::ProjectCost {
                total: spent(3, 1.5),
                today: spent(1, 0.25),
            },
        )]));
        let layers = with(Layer::Supervisor(view.clone()));
        let overlays = Overlays {
            layers: Some(&layers),
            pictures: false,
            ..plain(&keymap)
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("supervisor_question", t.backend());
        assert_eq!(
            view.key(key(crossterm::event::KeyCode::Char('y')), &rows, dir),
            super::super::supervisor::SupervisorAction::Answer(
                web,
                PermissionOptionKind::AllowOnce
            )
        );
        // The jump key goes to the question first.
        assert!(ws.focus_next_attention());
        assert_eq!(ws.focused_session(), Some(web));
        assert_eq!(ws.tabs().1, 1);
        ws.select_tab(0);
        ws.answer_question(web, PermissionOptionKind::AllowOnce);
        assert_eq!(ws.attention_count(Attention::NeedsYou), 0);
        assert!(ws.supervisor_rows()[at].question.is_none());
        assert_eq!(ws.focused_session(), Some(api), "still where the user was");
    }

    #[test]
    fn streamed_chunks_change_no_attention_and_draw_only_in_sight() {
        use agent_client_protocol::v1::schema::{
            ContentBlock, ContentChunk, SessionNotification, SessionUpdate, TextContent,
        };

        use crate::workspace::agent::AgentEvent;
        use crate::workspace::router::Attention;
        let mut ws = workspace_on(&["/work/api", "/work/web"]);
        ws.select_tab(1);
        let web = ws.focused_session().unwrap();
        ws.select_tab(0);
        let api = ws.focused_session().unwrap();
        let chunk = |text: &str| {
            AgentEvent::Update(SessionNotification::new(
                "s",
                SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                    TextContent::new(text),
                ))),
            ))
        };
        // A replayed or stray chunk is not work: attention stays idle.
        assert!(
            !ws.agent_event(web, chunk("out of sight")),
            "nothing to draw"
        );
        assert_eq!(ws.attention_count(Attention::Idle), 2);
        assert!(
            ws.agent_event(api, chunk("in sight")),
            "the focused pane redraws"
        );
        assert_eq!(ws.attention_count(Attention::Idle), 2);
    }

    #[test]
    fn supervisor_view_lists_sessions_by_project() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

        use super::super::supervisor::SupervisorAction;
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace_on(&["/work/api", "/work/web"]);
        ws.split(Axis::Horizontal);
        let mut view = SupervisorView::default();
        let rows = ws.supervisor_rows();
        assert_eq!(rows.len(), 3);
        let projects: Vec<_> = rows.iter().map(|r| r.project.clone()).collect();
        assert_eq!(projects[0], projects[1], "grouped by project: {projects:?}");
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let dir = Path::new("/nonexistent");
        assert_eq!(
            view.key(key(KeyCode::Down), &rows, dir),
            SupervisorAction::None
        );
        assert_eq!(
            view.key(key(KeyCode::Char('r')), &rows, dir),
            SupervisorAction::Restart(rows[1].key)
        );
        assert_eq!(
            view.key(key(KeyCode::Enter), &rows, dir),
            SupervisorAction::Show(rows[1].key)
        );
        let layers = with(Layer::Supervisor(view.clone()));
        let overlays = Overlays {
            layers: Some(&layers),
            pictures: false,
            ..plain(&keymap)
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("supervisor", t.backend());
        // The browser daemon runs: it and its tabs are listed under the sessions (a session
        // of another workspace by its id), the page's own text made safe.
        use march_runner::browser::{SessionTabs, Status, TabInfo};
        let tab = |tab, title: &str, url: &str, current| TabInfo {
            tab,
            url: url.into(),
            title: title.into(),
            current,
        };
        let status = Status {
            pid: 4242,
            browser: Some("Chrome/156.0.8078.114".into()),
            browser_pid: Some(4250),
            sessions: vec![SessionTabs {
                session: "7f3a9c21-other".into(),
                tabs: vec![
                    tab(
                        1,
                        "Status \x1b[31mboard",
                        "http://127.0.0.1:8080/board",
                        false,
                    ),
                    tab(2, "Docs", "https://docs.rs/", true),
                ],
            }],
        };
        assert!(
            ws.job_done(crate::workspace::jobs::JobDone::BrowserStatus(Ok(Some(
                status
            ))))
        );
        // This machine serves its memory, and the remote one is down with appends waiting.
        use march_runner::memory_server::{MemoryStatus, Reached, ServerState};
        let memory = MemoryStatus {
            local: Some((
                ServerState {
                    pid: 5150,
                    listen: "0.0.0.0:7411".into(),
                    tls: true,
                    dir: "/home/u/.local/share/march/memory".into(),
                },
                Reached {
                    url: "https://0.0.0.0:7411".into(),
                    answer: Ok((3, 12_400)),
                },
            )),
            remote: Some((
                Reached {
                    url: "https://memory.lan:7411".into(),
                    answer: Err("unreachable: connection refused".into()),
                },
                2,
            )),
        };
        assert!(
            ws.job_done(crate::workspace::jobs::JobDone::MemoryStatus(Ok(Some(
                memory
            ))))
        );
        // The gateway runs with a Telegram bot; a message waits for its workspace.
        let gateway = march_gateway::GatewayStatus {
            running: Some(march_gateway::GatewayState {
                pid: 6060,
                listen: "127.0.0.1:7878".into(),
                workspace: Some("api".into()),
                chats: vec!["telegram".into()],
                webhook: false,
            }),
            answered: Ok(()),
            queued: 1,
        };
        assert!(
            ws.job_done(crate::workspace::jobs::JobDone::GatewayStatus(Ok(Some(
                gateway
            ))))
        );
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("supervisor_browser", t.backend());
        // It stopped: the section goes.
        assert!(ws.job_done(crate::workspace::jobs::JobDone::BrowserStatus(Ok(None))));
        let t = render(&mut ws, &overlays, &theme);
        assert!(!format!("{:?}", t.backend()).contains("Browser daemon"));
        // `l` on a runner that never ran says so instead of failing.
        view.key(key(KeyCode::Char('l')), &rows, dir);
        let layers = with(Layer::Supervisor(view.clone()));
        let overlays = Overlays {
            layers: Some(&layers),
            pictures: false,
            ..plain(&keymap)
        };
        let t = render(&mut ws, &overlays, &theme);
        assert!(format!("{:?}", t.backend()).contains("has no log"));
        assert_eq!(
            view.key(key(KeyCode::Esc), &rows, dir),
            SupervisorAction::None
        );
        assert_eq!(
            view.key(key(KeyCode::Esc), &rows, dir),
            SupervisorAction::Close
        );
    }

    #[test]
    fn tiny_sizes_draw_nothing_and_never_panic() {
        let theme = Theme::builtin("dark").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        ws.split(Axis::Horizontal);
        for (w, h) in [(1, 1), (2, 2), (3, 1), (1, 40), (200, 2)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            let hl = Highlighter::new();
            let layers = with(Layer::Help(std::cell::Cell::new(3)));
            let overlays = Overlays {
                keymap: &keymap,
                prefix_pending: true,
                message: Some("x".repeat(500)),
                layers: Some(&layers),
                pictures: false,
            };
            terminal
                .draw(|f| test_draw(f, &mut ws, &theme, &hl, &overlays))
                .unwrap();
        }
    }
}
