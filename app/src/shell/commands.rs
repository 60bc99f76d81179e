//! What each named command does. Commands are looked up by name (the registry in
//! `keymap` owns names and docs), so a keymap file and this table always agree.

use crate::keymap::Command;
use crate::workspace::ShellRequest;
use crate::workspace::layout::{Axis, Direction};

use super::Shell;

/// Run `command`; what the Shell should do afterwards.
pub(super) async fn run(shell: &mut Shell, command: Command) -> ShellRequest {
    let name = command.name();
    let ws = &mut shell.ws;
    match name {
        "app.quit" => return ShellRequest::Quit,
        "app.help" => shell.help = true,
        "pane.split-right" => ws.split(Axis::Horizontal),
        "pane.split-down" => ws.split(Axis::Vertical),
        "pane.new-agent" => ws.split(Axis::Horizontal),
        "pane.close" => return ws.close_focused().await,
        "pane.zoom" => ws.layout_mut().toggle_zoom(),
        "pane.focus-left" => ws.focus_direction(Direction::Left),
        "pane.focus-right" => ws.focus_direction(Direction::Right),
        "pane.focus-up" => ws.focus_direction(Direction::Up),
        "pane.focus-down" => ws.focus_direction(Direction::Down),
        "pane.focus-next" => {
            ws.layout_mut().focus_cycle(true);
        }
        "pane.focus-prev" => {
            ws.layout_mut().focus_cycle(false);
        }
        "pane.swap-next" => {
            ws.layout_mut().swap(true);
        }
        "pane.swap-prev" => {
            ws.layout_mut().swap(false);
        }
        "pane.grow-left" => {
            ws.layout_mut().grow(Direction::Left);
        }
        "pane.grow-right" => {
            ws.layout_mut().grow(Direction::Right);
        }
        "pane.grow-up" => {
            ws.layout_mut().grow(Direction::Up);
        }
        "pane.grow-down" => {
            ws.layout_mut().grow(Direction::Down);
        }
        "tab.new" => ws.new_tab(),
        "tab.next" => ws.cycle_tab(true),
        "tab.prev" => ws.cycle_tab(false),
        "tab.close" => {
            // Closing a tab closes its panes one by one (the last one closes the tab).
            let panes = ws.tab().layout.panes().len();
            for _ in 0..panes {
                if ws.close_focused().await == ShellRequest::Quit {
                    return ShellRequest::Quit;
                }
            }
        }
        _ => {
            if let Some(n) = command.pane_number() {
                ws.focus_number(n.saturating_sub(1));
            } else if let Some(n) = command.tab_number() {
                ws.select_tab(n.saturating_sub(1));
            } else {
                return pane_command(shell, name);
            }
        }
    }
    ShellRequest::None
}

/// Commands for the focused agent pane.
fn pane_command(shell: &mut Shell, name: &str) -> ShellRequest {
    let id = shell.ws.focused();
    let Some(slot) = shell.ws.focused_slot() else {
        return ShellRequest::None;
    };
    let view = &mut slot.view;
    use march_panes::agent::ScrollAction;
    let event = match name {
        "agent.cancel" => view.cancel(),
        "scroll.line-up" => view.scroll(ScrollAction::LineUp),
        "scroll.line-down" => view.scroll(ScrollAction::LineDown),
        "scroll.page-up" => view.scroll(ScrollAction::PageUp),
        "scroll.page-down" => view.scroll(ScrollAction::PageDown),
        "scroll.top" => view.scroll(ScrollAction::Top),
        "scroll.bottom" => view.scroll(ScrollAction::Bottom),
        "transcript.toggle-tools" => view.toggle_tools(),
        "transcript.toggle-thinking" => view.toggle_thinking(),
        "copy.message" => {
            return view
                .last_message_text()
                .map_or(ShellRequest::None, ShellRequest::Copy);
        }
        "copy.code-block" => {
            return view
                .last_code_block()
                .map_or(ShellRequest::None, ShellRequest::Copy);
        }
        "prompt.submit" => view.submit(),
        "prompt.newline" => view.newline(),
        "prompt.history-prev" => view.history_prev(),
        "prompt.history-next" => view.history_next(),
        "prompt.complete" => view.complete(),
        other => {
            tracing::warn!(command = other, "command without an action");
            return ShellRequest::None;
        }
    };
    shell.ws.pane_event(id, event)
}
