//! The command registry: every action a key can trigger, with its name and a doc line.
//! Keymap files, the which-key hint and `docs/KEYMAPS.md` all read this one table.

use std::fmt;
use std::str::FromStr;

/// Defines [`Command`] and its table, so a variant, its name and its doc cannot drift apart.
macro_rules! commands {
    ($($variant:ident = $name:literal, $doc:literal;)*) => {
        /// An action a key can be bound to, named in keymap files by [`Command::name`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Command {
            $(#[doc = $doc] $variant,)*
        }

        impl Command {
            /// Every command, in presentation order (help and docs list them this way).
            pub const ALL: &'static [Command] = &[$(Command::$variant,)*];

            /// The name keymap files use, e.g. `pane.split-right`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Command::$variant => $name,)*
                }
            }

            /// One line saying what the command does.
            pub fn doc(self) -> &'static str {
                match self {
                    $(Command::$variant => $doc,)*
                }
            }
        }
    };
}

commands! {
    AppQuit = "app.quit", "Close the workspace, stopping every agent and shell.";
    AppHelp = "app.help", "Show the key bindings and commands.";
    AppSupervisor = "app.supervisor", "Show every session's runner: restart, stop, read its log.";
    PrefixSend = "prefix.send", "Send the prefix key itself to the focused pane.";
    AppDetach = "app.detach", "Detach this terminal; the workspace goes on (`march attach`).";
    PaneSplitRight = "pane.split-right", "Split the focused pane, opening a new agent on the right.";
    PaneSplitDown = "pane.split-down", "Split the focused pane, opening a new agent below.";
    PaneClose = "pane.close", "Close the focused pane and stop its agent (the transcript stays on disk).";
    PaneZoom = "pane.zoom", "Zoom the focused pane to the whole tab, or restore the layout.";
    PaneNewAgent = "pane.new-agent", "Start a new agent session in a new pane.";
    PaneNewWorktree = "pane.new-worktree", "Start an agent in a new pane on a new git worktree and branch (march/N).";
    PaneShellRight = "pane.shell-right", "Split the focused pane, opening a shell on the right.";
    PaneShellDown = "pane.shell-down", "Split the focused pane, opening a shell below.";
    PaneAgentShell = "pane.agent-shell", "Show the commands the agent runs, live, below its pane (again: hide them).";
    AgentShellPrev = "agent-shell.prev", "Show the previous command in the agent shell pane.";
    AgentShellNext = "agent-shell.next", "Show the next command in the agent shell pane.";
    PaneDiff = "pane.diff", "Show the files the focused session changed, as diffs, beside its pane.";
    PaneUncommitted = "pane.uncommitted", "Show the project's uncommitted changes as diffs (a worktree's: since its base).";
    DiffRefresh = "diff.refresh", "Diff the diff pane's files again.";
    DiffNextHunk = "diff.next-hunk", "Go to the next change in the diff pane (on into the next file).";
    DiffPrevHunk = "diff.prev-hunk", "Go to the previous change in the diff pane.";
    DiffNextFile = "diff.next-file", "Show the next changed file in the diff pane.";
    DiffPrevFile = "diff.prev-file", "Show the previous changed file in the diff pane.";
    DiffLayout = "diff.layout", "Switch the diff pane between unified and side by side.";
    DiffRevertHunk = "diff.revert-hunk", "Undo the change at the top of the diff pane in its file (press twice).";
    DiffRevertFile = "diff.revert-file", "Put the diff pane's file back as it was before the session (press twice).";
    DiffUndoRevert = "diff.undo-revert", "Undo the diff pane's last revert (a file it removed comes back).";
    PaneDiagnostics = "pane.diagnostics", "Show what the project's language servers report, below the focused pane.";
    DiagnosticsFilter = "diagnostics.filter", "Cycle the diagnostics pane through errors, +warnings, everything.";
    DiagnosticsEdit = "diagnostics.edit", "Open the selected diagnostic in $EDITOR at its line, in a shell pane.";
    DiagnosticsDiff = "diagnostics.diff", "Show the diagnostic's file as a session changed it, in its diff pane.";
    PaneFocusLeft = "pane.focus-left", "Focus the pane to the left.";
    PaneFocusRight = "pane.focus-right", "Focus the pane to the right.";
    PaneFocusUp = "pane.focus-up", "Focus the pane above.";
    PaneFocusDown = "pane.focus-down", "Focus the pane below.";
    PaneFocusNext = "pane.focus-next", "Focus the next pane in layout order.";
    PaneFocusPrev = "pane.focus-prev", "Focus the previous pane in layout order.";
    PaneFocus1 = "pane.focus-1", "Focus pane 1 of the tab.";
    PaneFocus2 = "pane.focus-2", "Focus pane 2 of the tab.";
    PaneFocus3 = "pane.focus-3", "Focus pane 3 of the tab.";
    PaneFocus4 = "pane.focus-4", "Focus pane 4 of the tab.";
    PaneFocus5 = "pane.focus-5", "Focus pane 5 of the tab.";
    PaneFocus6 = "pane.focus-6", "Focus pane 6 of the tab.";
    PaneFocus7 = "pane.focus-7", "Focus pane 7 of the tab.";
    PaneFocus8 = "pane.focus-8", "Focus pane 8 of the tab.";
    PaneFocus9 = "pane.focus-9", "Focus pane 9 of the tab.";
    PaneSwapNext = "pane.swap-next", "Swap the focused pane with the next one.";
    PaneSwapPrev = "pane.swap-prev", "Swap the focused pane with the previous one.";
    PaneGrowLeft = "pane.grow-left", "Move the focused pane's left edge outwards.";
    PaneGrowRight = "pane.grow-right", "Move the focused pane's right edge outwards.";
    PaneGrowUp = "pane.grow-up", "Move the focused pane's top edge outwards.";
    PaneGrowDown = "pane.grow-down", "Move the focused pane's bottom edge outwards.";
    LayoutNext = "layout.next", "Lay the tab's panes out in the next preset (tmux's order).";
    LayoutEvenHorizontal = "layout.even-horizontal", "Lay the tab's panes side by side, equally wide.";
    LayoutEvenVertical = "layout.even-vertical", "Stack the tab's panes, equally high.";
    LayoutMainHorizontal = "layout.main-horizontal", "Focused pane on top, the others side by side below.";
    LayoutMainVertical = "layout.main-vertical", "Focused pane on the left, the others stacked on the right.";
    LayoutTiled = "layout.tiled", "Lay the tab's panes out in a grid, as square as it goes.";
    TabNew = "tab.new", "Open a new tab with one agent pane.";
    TabRename = "tab.rename", "Rename the current tab.";
    TabClose = "tab.close", "Close the current tab and its panes.";
    TabNext = "tab.next", "Go to the next tab.";
    TabPrev = "tab.prev", "Go to the previous tab.";
    TabSelect1 = "tab.select-1", "Go to tab 1.";
    TabSelect2 = "tab.select-2", "Go to tab 2.";
    TabSelect3 = "tab.select-3", "Go to tab 3.";
    TabSelect4 = "tab.select-4", "Go to tab 4.";
    TabSelect5 = "tab.select-5", "Go to tab 5.";
    TabSelect6 = "tab.select-6", "Go to tab 6.";
    TabSelect7 = "tab.select-7", "Go to tab 7.";
    TabSelect8 = "tab.select-8", "Go to tab 8.";
    TabSelect9 = "tab.select-9", "Go to tab 9.";
    ProjectOpen = "project.open", "Open a project directory (recent, nearby or typed) in a new tab.";
    SessionSwitcher = "session.switcher", "Find a session of any project (open or saved) and show it.";
    SessionNext = "session.next", "Show the next open session in the focused pane.";
    SessionPrev = "session.prev", "Show the previous open session in the focused pane.";
    SessionLast = "session.last", "Show the session the focused pane showed before.";
    SessionNextAttention = "session.next-attention", "Go to the session waiting for you longest (questions first, then failures).";
    AgentCancel = "agent.cancel", "Cancel the turn (queued messages come back); twice on an empty prompt, rewind.";
    AgentCycleMode = "agent.cycle-mode", "Switch the session to its next permission mode (ask, auto-edit, yolo).";
    ScrollLineUp = "scroll.line-up", "Scroll the transcript (or a shell's history) up one line.";
    ScrollLineDown = "scroll.line-down", "Scroll the transcript (or a shell's history) down one line.";
    ScrollPageUp = "scroll.page-up", "Scroll the transcript (or a shell's history) up one page.";
    ScrollPageDown = "scroll.page-down", "Scroll the transcript (or a shell's history) down one page.";
    ScrollTop = "scroll.top", "Scroll to the start of the transcript (or a shell's history).";
    ScrollBottom = "scroll.bottom", "Scroll back to the end (a shell: its live screen) and follow new output.";
    TranscriptToggleTools = "transcript.toggle-tools", "Expand or collapse all tool call blocks.";
    TranscriptToggleThinking = "transcript.toggle-thinking", "Expand or collapse thinking.";
    CopyMessage = "copy.message", "Copy the last agent message to the clipboard (OSC 52).";
    CopyCodeBlock = "copy.code-block", "Copy the last code block to the clipboard (OSC 52).";
    CopyMode = "copy.mode", "Copy mode in a shell or agent pane: vi keys move, v selects, y copies.";
    PromptSubmit = "prompt.submit", "Send the prompt (or run the slash command); while a turn runs, steer it.";
    PromptNewline = "prompt.newline", "Insert a line break in the prompt.";
    PromptFollowUp = "prompt.follow-up", "Queue the prompt as a follow-up while a turn runs; else break the line.";
    PromptHistoryPrev = "prompt.history-prev", "Recall the previous prompt (first line); on an empty one, the last queued back.";
    PromptHistoryNext = "prompt.history-next", "Recall the next prompt (on the last line of the prompt).";
    PromptComplete = "prompt.complete", "Complete the slash command or accept the highlighted item.";
    PromptKillLineStart = "prompt.kill-line-start", "Delete to the start of the line (yank brings it back).";
    PromptKillLineEnd = "prompt.kill-line-end", "Delete to the end of the line (yank brings it back).";
    PromptKillWordBack = "prompt.kill-word-back", "Delete the word before the cursor (yank brings it back).";
    PromptYank = "prompt.yank", "Insert the text deleted last.";
    PromptWordBack = "prompt.word-back", "Move the cursor to the start of the previous word.";
    PromptWordForward = "prompt.word-forward", "Move the cursor to the end of the next word.";
    PromptUndo = "prompt.undo", "Undo the last change to the prompt.";
    PromptInterrupt = "prompt.interrupt", "Clear the prompt; on an empty prompt, cancel the running turn.";
    PromptHistorySearch = "prompt.history-search", "Search the project's prompt history as you type (again: older).";
    PromptEditExternal = "prompt.edit-external", "Edit the prompt in $VISUAL or $EDITOR, back when it exits.";
    PromptPasteImage = "prompt.paste-image", "Attach the clipboard's image to the prompt (through wl-paste or xclip).";
}

impl Command {
    /// Whether the key bound to this after the prefix works again without the prefix for
    /// a moment (tmux's repeat-time): resizing takes several presses.
    pub fn repeats(self) -> bool {
        matches!(
            self,
            Command::PaneGrowLeft
                | Command::PaneGrowRight
                | Command::PaneGrowUp
                | Command::PaneGrowDown
        )
    }

    /// For `layout.<preset>`, the preset.
    pub fn preset(self) -> Option<crate::workspace::layout::Preset> {
        use crate::workspace::layout::Preset;
        Some(match self {
            Command::LayoutEvenHorizontal => Preset::EvenHorizontal,
            Command::LayoutEvenVertical => Preset::EvenVertical,
            Command::LayoutMainHorizontal => Preset::MainHorizontal,
            Command::LayoutMainVertical => Preset::MainVertical,
            Command::LayoutTiled => Preset::Tiled,
            _ => return None,
        })
    }

    /// For `pane.focus-N`, the pane number N (1–9).
    pub fn pane_number(self) -> Option<usize> {
        number_in(self, Command::PaneFocus1, Command::PaneFocus9)
    }

    /// For `tab.select-N`, the tab number N (1–9).
    pub fn tab_number(self) -> Option<usize> {
        number_in(self, Command::TabSelect1, Command::TabSelect9)
    }
}

/// The 1-based position of `command` in the contiguous run `first..=last` of [`Command::ALL`].
fn number_in(command: Command, first: Command, last: Command) -> Option<usize> {
    let index = |c: Command| Command::ALL.iter().position(|&other| other == c);
    let (at, start, end) = (index(command)?, index(first)?, index(last)?);
    (start..=end).contains(&at).then(|| at - start + 1)
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCommand(pub String);

impl fmt::Display for UnknownCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown command `{}`", self.0)?;
        let suggestions = suggest(&self.0);
        if !suggestions.is_empty() {
            write!(f, " (did you mean {}?)", suggestions.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownCommand {}

/// Names close to `wrong`: the same group and the same first word of the action
/// (`pane.split-left` → the `pane.split-*` commands), else the whole group when it is small.
fn suggest(wrong: &str) -> Vec<&'static str> {
    let (group, action) = wrong.split_once('.').unwrap_or((wrong, ""));
    let word = action.split('-').next().unwrap_or_default();
    let siblings: Vec<&'static str> = Command::ALL
        .iter()
        .map(|c| c.name())
        .filter(|name| name.split_once('.').is_some_and(|(g, _)| g == group))
        .collect();
    let close: Vec<&'static str> = siblings
        .iter()
        .copied()
        .filter(|name| {
            !word.is_empty()
                && name
                    .split_once('.')
                    .is_some_and(|(_, a)| a.starts_with(word))
        })
        .collect();
    if !close.is_empty() {
        close
    } else if siblings.len() <= 8 {
        siblings
    } else {
        Vec::new()
    }
}

impl FromStr for Command {
    type Err = UnknownCommand;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Command::ALL
            .iter()
            .copied()
            .find(|command| command.name() == name)
            .ok_or_else(|| UnknownCommand(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut seen = HashSet::new();
        for &command in Command::ALL {
            assert!(seen.insert(command.name()), "duplicate {}", command.name());
            assert_eq!(command.name().parse::<Command>(), Ok(command));
            assert_eq!(command.to_string(), command.name());
        }
    }

    #[test]
    fn names_are_group_dot_kebab_and_docs_are_one_sentence() {
        for &command in Command::ALL {
            let name = command.name();
            let (group, action) = name.split_once('.').unwrap();
            for part in [group, action] {
                assert!(!part.is_empty(), "{name}");
                assert!(
                    part.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                    "{name}"
                );
            }
            let doc = command.doc();
            assert!(
                doc.ends_with('.') && !doc.contains('\n') && doc.len() < 80,
                "{name}: {doc}"
            );
        }
    }

    #[test]
    fn numbered_commands() {
        assert_eq!(Command::PaneFocus1.pane_number(), Some(1));
        assert_eq!(Command::PaneFocus9.pane_number(), Some(9));
        assert_eq!(Command::TabSelect4.tab_number(), Some(4));
        assert_eq!(Command::TabSelect4.pane_number(), None);
        assert_eq!(Command::PaneZoom.tab_number(), None);
        for n in 1..=9 {
            let pane: Command = format!("pane.focus-{n}").parse().unwrap();
            let tab: Command = format!("tab.select-{n}").parse().unwrap();
            assert_eq!((pane.pane_number(), tab.tab_number()), (Some(n), Some(n)));
        }
    }

    #[test]
    fn unknown_names_suggest_their_group() {
        let error = "pane.split-left"
            .parse::<Command>()
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "unknown command `pane.split-left` (did you mean pane.split-right, pane.split-down?)"
        );
        let error = "scroll.up".parse::<Command>().unwrap_err().to_string();
        assert!(
            error.contains("scroll.line-up") && error.contains("scroll.bottom"),
            "{error}"
        );
        assert_eq!(
            "bogus".parse::<Command>().unwrap_err().to_string(),
            "unknown command `bogus`"
        );
    }
}
