//! Slash commands: March's built-ins plus the ones the agent advertises, parsing a submitted
//! prompt into a command, and the completion popup shown while a command name is typed.

use agent_client_protocol::v1::schema::{AvailableCommand, AvailableCommandInput};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Widget};

use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// March's own commands, in the order the popup lists them, with their one-line docs.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("new", "Start a new session in this pane"),
    ("resume", "Resume an earlier session of this project"),
    ("model", "Choose the model"),
    ("mode", "Choose the permission mode (shift-tab cycles it)"),
    ("thinking", "Choose how much the model reasons"),
    (
        "sandbox",
        "Choose how the agent's commands are confined: read-only, workspace-write, full",
    ),
    ("compact", "Summarise the conversation to free context"),
    (
        "tree",
        "Show the session as a tree and continue from any point of it",
    ),
    (
        "rewind",
        "Go back to one of your messages (Esc Esc on an empty prompt)",
    ),
    (
        "fork",
        "Copy the conversation so far into a new session, in a new pane",
    ),
    (
        "merge",
        "Merge this worktree's work into its base branch: /merge [squash|rebase]",
    ),
    (
        "pr",
        "Push this worktree's branch and open a pull request with gh",
    ),
    ("mcp", "Show the MCP servers: state, tools, last error"),
    ("export", "Write the session as markdown: /export [PATH]"),
    ("copy", "Copy the session as markdown to the clipboard"),
    ("image", "Attach an image to the prompt: /image PATH"),
    ("help", "Show keys and commands"),
    ("exit", "Close this pane"),
    ("quit", "Close this pane (same as /exit)"),
];

/// Rows the popup shows at most.
const POPUP_ROWS: usize = 8;

/// A command the popup can offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    pub name: String,
    pub description: String,
    /// What the command expects after its name (the agent's input hint).
    pub hint: Option<String>,
}

/// Every command: built-ins first, then the agent's (an agent command named like a built-in
/// is left out, the built-in answers it).
pub(crate) fn commands(agent: &[AvailableCommand]) -> Vec<Command> {
    let mut out: Vec<Command> = BUILTIN_COMMANDS
        .iter()
        .map(|(name, doc)| Command {
            name: (*name).to_string(),
            description: (*doc).to_string(),
            hint: None,
        })
        .collect();
    for c in agent {
        if out.iter().any(|o| o.name == c.name) || c.name.is_empty() {
            continue;
        }
        let hint = match &c.input {
            Some(AvailableCommandInput::Unstructured(u)) => Some(u.hint.clone()),
            _ => None,
        };
        out.push(Command {
            name: c.name.clone(),
            description: c.description.clone(),
            hint,
        });
    }
    out
}

/// A prompt that is a command: its name (aliases resolved, so `/quit` is `exit`) and the
/// rest of the text. Only known names count, so a prompt starting with a path such as
/// `/etc/hosts` stays a prompt; `//text` sends `/text` as a prompt.
pub(crate) fn parse(text: &str, agent: &[AvailableCommand]) -> Option<(String, String)> {
    let rest = text.strip_prefix('/')?;
    if rest.starts_with('/') {
        return None;
    }
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let known =
        BUILTIN_COMMANDS.iter().any(|(n, _)| *n == name) || agent.iter().any(|c| c.name == name);
    if !known {
        return None;
    }
    let name = if name == "quit" { "exit" } else { name };
    Some((name.to_string(), args.to_string()))
}

/// The popup state: open while the prompt is `/` plus part of a command name.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    items: Vec<Command>,
    selected: usize,
    /// The prompt text the popup was closed for with Esc; it stays closed until it changes.
    dismissed: Option<String>,
}

impl Completion {
    /// Recomputes the matches for the prompt's `text`.
    pub(crate) fn update(&mut self, text: &str, agent: &[AvailableCommand]) {
        let typed = match text.strip_prefix('/') {
            Some(t) if !t.contains(char::is_whitespace) && !t.starts_with('/') => t,
            _ => {
                self.items.clear();
                self.dismissed = None;
                return;
            }
        };
        if self.dismissed.as_deref() == Some(text) {
            return;
        }
        self.dismissed = None;
        let typed = typed.to_lowercase();
        let previous = self.selected().map(|c| c.name.clone());
        self.items = commands(agent)
            .into_iter()
            .filter(|c| c.name.to_lowercase().starts_with(&typed))
            .collect();
        // Typing the whole name leaves nothing to complete.
        if self.items.len() == 1 && self.items[0].name.to_lowercase() == typed {
            self.items.clear();
        }
        self.selected = previous
            .and_then(|p| self.items.iter().position(|c| c.name == p))
            .unwrap_or(0);
    }

    /// Whether the popup shows.
    pub(crate) fn is_open(&self) -> bool {
        !self.items.is_empty()
    }

    /// The highlighted command.
    pub(crate) fn selected(&self) -> Option<&Command> {
        self.items.get(self.selected)
    }

    /// Moves the selection, wrapping around.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let n = self.items.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// Closes the popup until the prompt changes.
    pub(crate) fn dismiss(&mut self, text: &str) {
        self.items.clear();
        self.dismissed = Some(text.to_string());
    }

    /// Closes the popup (its command was taken).
    pub(crate) fn close(&mut self) {
        self.items.clear();
    }

    /// Rows the popup needs.
    pub(crate) fn height(&self) -> u16 {
        self.items.len().min(POPUP_ROWS) as u16
    }

    /// Draws the popup into `area` (the rows just above the prompt).
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        buf.set_style(area, theme.style(Slot::Modal));
        let rows = usize::from(area.height);
        // Keep the selection in view.
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        let name_width = self
            .items
            .iter()
            .map(|c| wrap::width(&c.name) + 1)
            .max()
            .unwrap_or(0)
            .min(24);
        for (row, (i, c)) in self
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .enumerate()
        {
            let selected = i == self.selected;
            let base = if selected {
                theme.style(Slot::Modal).patch(theme.style(Slot::Selection))
            } else {
                theme.style(Slot::Modal)
            };
            let mut b = LineBuilder::new(&[]);
            b.push(" /", base.patch(theme.style(Slot::Hint)));
            b.push(
                &wrap::truncate(&c.name, name_width),
                base.patch(theme.style(Slot::Hint)),
            );
            b.pad_to(name_width + 4, base);
            let mut doc = c.description.clone();
            if let Some(hint) = &c.hint {
                doc = format!("{doc} ({hint})");
            }
            let room = usize::from(area.width).saturating_sub(b.width() + 1);
            b.push(
                &wrap::truncate(&doc, room),
                base.patch(theme.style(Slot::TextDim)),
            );
            b.pad_to(usize::from(area.width), base);
            let line: Line<'static> = b.finish();
            buf.set_line(area.x, area.y + row as u16, &line, area.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent_cmds() -> Vec<AvailableCommand> {
        vec![
            AvailableCommand::new("review", "Review the changes"),
            AvailableCommand::new("new", "Agent's own new"),
        ]
    }

    #[test]
    fn parses_known_commands_only() {
        let a = agent_cmds();
        assert_eq!(parse("/model", &a), Some(("model".into(), String::new())));
        assert_eq!(parse("/quit", &a), Some(("exit".into(), String::new())));
        assert_eq!(
            parse("/review  src/ ", &a),
            Some(("review".into(), "src/".into()))
        );
        assert_eq!(parse("/etc/hosts is odd", &a), None);
        assert_eq!(parse("//model", &a), None);
        assert_eq!(parse("hello", &a), None);
    }

    #[test]
    fn builtins_win_over_agent_commands_of_the_same_name() {
        let all = commands(&agent_cmds());
        assert_eq!(all.iter().filter(|c| c.name == "new").count(), 1);
        assert!(all.iter().any(|c| c.name == "review"));
    }

    #[test]
    fn popup_matches_prefixes_and_closes_on_full_names() {
        let a = agent_cmds();
        let mut c = Completion::default();
        c.update("/", &a);
        assert_eq!(c.items.len(), BUILTIN_COMMANDS.len() + 1);
        c.update("/re", &a);
        let names: Vec<&str> = c.items.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["resume", "rewind", "review"]);
        let mut d = Completion::default();
        d.update("/", &a);
        assert_eq!(d.selected().unwrap().name, "new");
        d.move_by(1);
        assert_eq!(d.selected().unwrap().name, "resume");
        d.move_by(-1);
        assert_eq!(d.selected().unwrap().name, "new");
        c.update("/review", &a);
        assert!(!c.is_open());
        c.update("/model args", &a);
        assert!(!c.is_open());
    }

    #[test]
    fn dismissed_until_the_text_changes() {
        let mut c = Completion::default();
        c.update("/m", &[]);
        assert!(c.is_open());
        c.dismiss("/m");
        c.update("/m", &[]);
        assert!(!c.is_open());
        c.update("/mo", &[]);
        assert!(c.is_open());
    }
}
