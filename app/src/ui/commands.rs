//! What each command does: one exhaustive match over the registry's [`Command`], so a
//! command added to the registry cannot be left without an action.

use march_panes::agent::PromptEdit;
use march_panes::scroll::Scroll;

use crate::keymap::Command;
use crate::workspace::UiRequest;
use crate::workspace::layout::{Axis, Direction};
use crate::workspace::work::WorkScope;

use super::Ui;
use super::agents::AgentPicker;
use super::layers::Layer;
use super::projects::ProjectPicker;
use super::supervisor::SupervisorView;
use super::switch::SessionSwitcher;

/// When closing `scope` (the whole workspace, a tab or a pane) would stop work, says what
/// in the status bar and arms `command` to go ahead when pressed again; whether it asked.
fn ask_first(shell: &mut Ui, command: Command, scope: WorkScope) -> bool {
    let work = shell.ws.running_work(scope);
    if work.is_empty() {
        return false;
    }
    let keys = shell
        .keymap
        .keys_for(crate::keymap::KeyContext::Prefix, command)
        .first()
        .map(|k| format!("{} {k}", shell.keymap.prefix_key()))
        .unwrap_or_else(|| command.name().to_string());
    let what = match scope {
        WorkScope::All => "quitting",
        WorkScope::Tab(_) => "closing the tab",
        WorkScope::Pane(_) => "closing the pane",
    };
    // What to press first: a long list of work is cut at the status bar's end.
    shell.message = Some(format!(
        "press {keys} again to go ahead: {what} stops {}",
        work.join(", ")
    ));
    shell.confirm_armed = Some((command, shell.ws.focused()));
    true
}

/// Run `command`; what the UI should do afterwards.
pub(super) async fn run(shell: &mut Ui, command: Command) -> UiRequest {
    use Command as C;
    // A revert waits for the same key again; any other command disarms it.
    let armed = shell.revert_armed.take();
    // Likewise a quit, tab or pane close that asked first, if the focus stayed.
    let confirmed = shell.confirm_armed.take() == Some((command, shell.ws.focused()));
    let ws = &mut shell.ws;
    match command {
        C::AppQuit => {
            if confirmed || !ask_first(shell, command, WorkScope::All) {
                return UiRequest::Quit;
            }
        }
        C::AppDetach => return UiRequest::Detach,
        C::AppHelp => shell.layers.open(Layer::Help(std::cell::Cell::new(0))),
        C::AppSupervisor => {
            ws.refresh_costs();
            ws.refresh_mcp();
            ws.refresh_daemons();
            shell
                .layers
                .open(Layer::Supervisor(SupervisorView::default()));
        }
        // The dispatcher turns it into `Dispatch::SendPrefix` before it gets here.
        C::PrefixSend => {}
        // With more than one agent configured, which one is asked first.
        C::PaneSplitRight | C::PaneNewAgent | C::PaneSplitDown => {
            let axis = if command == C::PaneSplitDown {
                Axis::Vertical
            } else {
                Axis::Horizontal
            };
            match AgentPicker::open(ws, axis) {
                Some(picker) => shell.layers.open(Layer::Agents(picker)),
                None => ws.split(axis),
            }
        }
        C::PaneShellRight | C::PaneShellDown => {
            let axis = if command == C::PaneShellRight {
                Axis::Horizontal
            } else {
                Axis::Vertical
            };
            if let Err(e) = ws.open_shell(axis) {
                shell.message = Some(e);
            }
        }
        C::PaneClose => {
            let pane = ws.focused();
            if confirmed || !ask_first(shell, command, WorkScope::Pane(pane)) {
                return shell.ws.close_focused();
            }
        }
        C::PaneNewWorktree => ws.open_worktree_pane(Axis::Horizontal, None),
        C::PaneZoom => ws.layout_mut().toggle_zoom(),
        C::PaneFocusLeft => ws.focus_direction(Direction::Left),
        C::PaneFocusRight => ws.focus_direction(Direction::Right),
        C::PaneFocusUp => ws.focus_direction(Direction::Up),
        C::PaneFocusDown => ws.focus_direction(Direction::Down),
        C::PaneFocusNext | C::PaneFocusPrev => {
            ws.layout_mut().focus_cycle(command == C::PaneFocusNext);
        }
        C::PaneFocus1
        | C::PaneFocus2
        | C::PaneFocus3
        | C::PaneFocus4
        | C::PaneFocus5
        | C::PaneFocus6
        | C::PaneFocus7
        | C::PaneFocus8
        | C::PaneFocus9 => {
            if let Some(n) = command.pane_number() {
                ws.focus_number(n.saturating_sub(1));
            }
        }
        C::PaneSwapNext | C::PaneSwapPrev => {
            ws.layout_mut().swap(command == C::PaneSwapNext);
        }
        C::PaneGrowLeft => grow(shell, Direction::Left),
        C::PaneGrowRight => grow(shell, Direction::Right),
        C::PaneGrowUp => grow(shell, Direction::Up),
        C::PaneGrowDown => grow(shell, Direction::Down),
        C::TabNew => ws.new_tab(),
        C::TabRename => {
            let rename = super::rename::TabRename::open(ws);
            shell.layers.open(Layer::Rename(rename));
        }
        C::LayoutNext => {
            let preset = ws.layout_mut().next_preset();
            shell.message = Some(format!("layout: {}", preset.name()));
        }
        C::LayoutEvenHorizontal
        | C::LayoutEvenVertical
        | C::LayoutMainHorizontal
        | C::LayoutMainVertical
        | C::LayoutTiled => {
            if let Some(preset) = command.preset() {
                ws.layout_mut().apply_preset(preset);
            }
        }
        C::SessionSwitcher => shell
            .layers
            .open(Layer::Switcher(SessionSwitcher::open(ws))),
        C::ProjectOpen => {
            let near = ws.focused_project();
            let picker = ProjectPicker::open(ws, &shell.data_dir, &near);
            shell.layers.open(Layer::Projects(picker));
        }
        C::SessionNext | C::SessionPrev => ws.cycle_session(command == C::SessionNext),
        C::SessionLast => {
            if !ws.toggle_last_session() {
                shell.message = Some("no earlier session in this pane".to_string());
            }
        }
        C::SessionNextAttention => {
            if !ws.focus_next_attention() {
                shell.message = Some("no session needs you".to_string());
            }
        }
        C::TabNext | C::TabPrev => ws.cycle_tab(command == C::TabNext),
        C::PaneAgentShell => match ws.toggle_agent_shell() {
            Some(request) => return request,
            None => shell.message = Some("focus an agent pane to see its commands".to_string()),
        },
        C::PaneDiff => {
            if !ws.open_diff() {
                shell.message = Some("focus an agent pane to see what it changed".to_string());
            }
        }
        C::PaneDiagnostics => ws.open_diagnostics(),
        C::PaneUncommitted => ws.open_uncommitted_diff(),
        C::DiffRefresh => {
            let id = ws.focused();
            ws.refresh_diff_pane(id);
        }
        C::DiagnosticsFilter => {
            let id = ws.focused();
            match ws.diagnostics_mut(id) {
                Some(view) => view.cycle_filter(),
                None => shell.message = Some("not a diagnostics pane".to_string()),
            }
        }
        C::DiagnosticsEdit => {
            let id = ws.focused();
            shell.message = Some(match ws.edit_diagnostic(id) {
                Ok(done) | Err(done) => done,
            });
        }
        C::DiagnosticsDiff => {
            let id = ws.focused();
            if let Err(why) = ws.diff_of_diagnostic(id) {
                shell.message = Some(why);
            }
        }
        C::DiffRevertHunk | C::DiffRevertFile => {
            let id = ws.focused();
            let whole = command == C::DiffRevertFile;
            if armed != Some((id, whole)) {
                // Nothing is written on the first press: it says what the second would do.
                let what = ws
                    .diff_mut(id)
                    .and_then(|v| v.selected())
                    .map(|f| f.path.clone());
                shell.message = Some(match what {
                    None => "no change here to revert".to_string(),
                    Some(path) => {
                        shell.revert_armed = Some((id, whole));
                        let key = if whole { "R" } else { "r" };
                        let scope = match (whole, ws.is_uncommitted_diff(id)) {
                            (false, _) => "this change in",
                            (true, true) => "every uncommitted change to",
                            (true, false) => "all the session's changes to",
                        };
                        format!("press {key} again to undo {scope} {path}")
                    }
                });
                return UiRequest::None;
            }
            shell.message = Some(match ws.revert(id, whole) {
                Ok(done) | Err(done) => done,
            });
        }
        C::DiffUndoRevert => {
            let id = ws.focused();
            shell.message = Some(match ws.undo_revert(id) {
                Ok(started) | Err(started) => started,
            });
        }
        C::DiffNextHunk | C::DiffPrevHunk | C::DiffNextFile | C::DiffPrevFile | C::DiffLayout => {
            let id = ws.focused();
            let Some(view) = ws.diff_mut(id) else {
                shell.message = Some("not a diff pane".to_string());
                return UiRequest::None;
            };
            match command {
                C::DiffNextHunk => view.jump_hunk(true),
                C::DiffPrevHunk => view.jump_hunk(false),
                C::DiffNextFile => view.select_file(1),
                C::DiffPrevFile => view.select_file(-1),
                _ => view.toggle_layout(),
            }
        }
        C::AgentShellPrev | C::AgentShellNext => {
            let delta = if command == C::AgentShellNext { 1 } else { -1 };
            if !ws.agent_shell_select(delta) {
                shell.message = Some("not an agent shell pane".to_string());
            }
        }
        C::CopyMode => {
            if !ws.pane_enter_copy_mode(ws.focused()) {
                shell.message = Some("nothing to copy from in this pane".to_string());
            }
        }
        C::TabClose => {
            let tab = ws.tabs().1;
            if !confirmed && ask_first(shell, command, WorkScope::Tab(tab)) {
                return UiRequest::None;
            }
            let ws = &mut shell.ws;
            // Closing a tab closes its panes one by one (the last one closes the tab).
            let panes = ws.tab().layout.panes().len();
            for _ in 0..panes {
                if ws.close_focused() == UiRequest::Quit {
                    return UiRequest::Quit;
                }
            }
        }
        C::TabSelect1
        | C::TabSelect2
        | C::TabSelect3
        | C::TabSelect4
        | C::TabSelect5
        | C::TabSelect6
        | C::TabSelect7
        | C::TabSelect8
        | C::TabSelect9 => {
            if let Some(n) = command.tab_number() {
                ws.select_tab(n.saturating_sub(1));
            }
        }
        C::AgentCancel
        | C::AgentCycleMode
        | C::ScrollLineUp
        | C::ScrollLineDown
        | C::ScrollPageUp
        | C::ScrollPageDown
        | C::ScrollTop
        | C::ScrollBottom
        | C::TranscriptToggleTools
        | C::TranscriptToggleThinking
        | C::CopyMessage
        | C::CopyCodeBlock
        | C::PromptSubmit
        | C::PromptNewline
        | C::PromptFollowUp
        | C::PromptHistoryPrev
        | C::PromptHistoryNext
        | C::PromptComplete
        | C::PromptKillLineStart
        | C::PromptKillLineEnd
        | C::PromptKillWordBack
        | C::PromptYank
        | C::PromptWordBack
        | C::PromptWordForward
        | C::PromptUndo
        | C::PromptInterrupt
        | C::PromptHistorySearch => return pane_command(shell, command),
        C::PromptPasteImage => {
            if let Some(key) = ws.focused_session() {
                ws.attach_clipboard(key);
            }
        }
        C::PromptEditExternal => {
            let id = ws.focused();
            match ws.edit_prompt_externally(id) {
                Ok(()) => {}
                Err(e) => shell.message = Some(e),
            }
        }
    }
    UiRequest::None
}

fn grow(shell: &mut Ui, direction: Direction) {
    shell.ws.layout_mut().grow(direction);
}

/// How far a scroll command scrolls (any pane kind takes it).
fn scroll_of(command: Command) -> Option<Scroll> {
    use Command as C;
    Some(match command {
        C::ScrollLineUp => Scroll::Lines(-1),
        C::ScrollLineDown => Scroll::Lines(1),
        C::ScrollPageUp => Scroll::Pages(-1),
        C::ScrollPageDown => Scroll::Pages(1),
        C::ScrollTop => Scroll::Top,
        C::ScrollBottom => Scroll::Bottom,
        _ => return None,
    })
}

/// Commands for the focused pane: scrolling for every kind, the rest for an agent pane.
fn pane_command(shell: &mut Ui, command: Command) -> UiRequest {
    use Command as C;
    let id = shell.ws.focused();
    if let Some(scroll) = scroll_of(command) {
        shell.ws.pane_scroll(id, scroll);
        return UiRequest::None;
    }
    let Some(slot) = shell.ws.focused_slot() else {
        return UiRequest::None;
    };
    let view = &mut slot.view;
    let event = match command {
        C::AgentCancel => view.cancel(),
        C::AgentCycleMode => view.cycle_mode(),
        C::TranscriptToggleTools => view.toggle_tools(),
        C::TranscriptToggleThinking => view.toggle_thinking(),
        C::CopyMessage => {
            return view
                .last_message_text()
                .map_or(UiRequest::None, UiRequest::Copy);
        }
        C::CopyCodeBlock => {
            return view
                .last_code_block()
                .map_or(UiRequest::None, UiRequest::Copy);
        }
        C::PromptSubmit => view.submit(),
        C::PromptNewline => view.newline(),
        C::PromptFollowUp => view.follow_up(),
        C::PromptHistoryPrev => view.history_prev(),
        C::PromptHistoryNext => view.history_next(),
        C::PromptComplete => view.complete(),
        C::PromptKillLineStart => view.edit_prompt(PromptEdit::KillToStart),
        C::PromptKillLineEnd => view.edit_prompt(PromptEdit::KillToEnd),
        C::PromptKillWordBack => view.edit_prompt(PromptEdit::KillWordBack),
        C::PromptYank => view.edit_prompt(PromptEdit::Yank),
        C::PromptWordBack => view.edit_prompt(PromptEdit::WordBack),
        C::PromptWordForward => view.edit_prompt(PromptEdit::WordForward),
        C::PromptUndo => view.edit_prompt(PromptEdit::Undo),
        C::PromptInterrupt => view.interrupt(),
        C::PromptHistorySearch => view.history_search(),
        // Workspace commands are run by `run`.
        _ => return UiRequest::None,
    };
    shell.ws.pane_event(id, event)
}
