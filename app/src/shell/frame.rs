//! One frame of the workspace: the panes of the active tab, the status bar, and the
//! which-key hint or the help overlay on top. Shared by the Shell and the snapshot tests.

use march_panes::highlight::Highlighter;
use march_panes::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::hints;
use crate::keymap::{KeyContext, Keymap};
use crate::workspace::Workspace;
use crate::workspace::status::{self, StatusContext};

/// What the frame shows besides the workspace.
pub(super) struct Overlays<'a> {
    /// The keymap, for the hints.
    pub keymap: &'a Keymap,
    /// The prefix key was pressed.
    pub prefix_pending: bool,
    /// The key list is open.
    pub help: bool,
    /// A message for the status bar.
    pub message: Option<String>,
}

/// Draw the workspace into `frame`.
pub(super) fn draw(
    frame: &mut Frame<'_>,
    ws: &mut Workspace,
    theme: &Theme,
    highlighter: &Highlighter,
    overlays: &Overlays<'_>,
) {
    let area = frame.area();
    // Nothing fits: draw nothing rather than something broken.
    if area.height < 2 || area.width < 2 {
        return;
    }
    let panes = Rect::new(area.x, area.y, area.width, area.height - 1);
    let bar = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    let buf = frame.buffer_mut();
    ws.render(panes, buf, theme, highlighter);
    let ctx = StatusContext {
        prefix_pending: overlays.prefix_pending,
        message: overlays.message.clone(),
    };
    status::render(ws, &ctx, bar, buf, theme);
    if overlays.help {
        hints::render_help(overlays.keymap, panes, buf, theme);
    } else if overlays.prefix_pending {
        hints::render(
            &overlays.keymap.hints(KeyContext::Prefix),
            panes,
            buf,
            theme,
        );
    }
    if let Some((x, y)) = ws.slot(ws.focused()).and_then(|s| match &s.setup {
        Some(setup) => setup.cursor_position(),
        None => s.view.cursor_position(),
    }) {
        frame.set_cursor_position((x, y));
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::workspace::agent::AgentSpec;
    use crate::workspace::layout::{Axis, Direction};
    use crate::workspace::{AgentLauncher, Workspace};

    /// A workspace whose panes have no agent behind them.
    fn workspace() -> Workspace {
        let (events, _rx) = tokio::sync::mpsc::unbounded_channel();
        Workspace::new(AgentLauncher {
            spec: AgentSpec::march(Path::new("/usr/bin/march")),
            cwd: "/work/project".into(),
            mode: None,
            events,
            paths: None,
        })
    }

    fn render(ws: &mut Workspace, overlays: &Overlays<'_>, theme: &Theme) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
        let hl = Highlighter::new();
        terminal
            .draw(|f| draw(f, ws, theme, &hl, overlays))
            .unwrap();
        terminal
    }

    fn plain(keymap: &Keymap) -> Overlays<'_> {
        Overlays {
            keymap,
            prefix_pending: false,
            help: false,
            message: None,
        }
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
            help: false,
            message: Some("copied 12 characters".to_string()),
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("prefix_hint", t.backend());
    }

    #[test]
    fn help_overlay_in_the_light_theme() {
        let theme = Theme::builtin("light").unwrap();
        let keymap = Keymap::defaults();
        let mut ws = workspace();
        let overlays = Overlays {
            keymap: &keymap,
            prefix_pending: false,
            help: true,
            message: None,
        };
        let t = render(&mut ws, &overlays, &theme);
        insta::assert_snapshot!("help_light", t.backend());
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
            let overlays = Overlays {
                keymap: &keymap,
                prefix_pending: true,
                help: true,
                message: Some("x".repeat(500)),
            };
            terminal
                .draw(|f| draw(f, &mut ws, &theme, &hl, &overlays))
                .unwrap();
        }
    }
}
