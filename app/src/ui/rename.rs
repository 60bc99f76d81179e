//! Renaming the current tab (`Ctrl-a ,`), as tmux's rename-window: the name is edited in
//! the status bar; Enter keeps it, Esc leaves the old one, an empty name gives the tab back
//! its project's.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use march_panes::sanitize::sanitize_line;

use crate::workspace::Workspace;

/// Tab names are short: the status bar holds them all.
const MAX_CHARS: usize = 40;

/// The name being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TabRename {
    text: String,
}

impl TabRename {
    /// Starts from the current tab's name.
    pub(super) fn open(ws: &Workspace) -> TabRename {
        TabRename {
            text: ws.tab().name.clone(),
        }
    }

    /// What the status bar shows while the name is typed.
    pub(super) fn prompt(&self) -> String {
        format!("rename tab: {}▏ (enter keeps it, esc cancels)", self.text)
    }

    /// Takes a key; true when renaming is over.
    pub(super) fn key(&mut self, key: KeyEvent, ws: &mut Workspace) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => {
                ws.rename_tab(&self.text);
                return true;
            }
            KeyCode::Esc => return true,
            KeyCode::Char('c') if ctrl => return true,
            KeyCode::Char('u') if ctrl => self.text.clear(),
            KeyCode::Char('w') if ctrl => {
                let kept = self.text.trim_end().rfind(' ').map_or(0, |i| i + 1);
                self.text.truncate(kept);
            }
            KeyCode::Backspace => {
                self.text.pop();
            }
            KeyCode::Char(c) if !ctrl => self.push(&c.to_string()),
            _ => {}
        }
        false
    }

    /// Pasted text joins the name (its lines joined by spaces, whatever their line ends,
    /// without control characters).
    pub(super) fn paste(&mut self, text: &str) {
        self.push(&march_panes::paste::paste_lines(text));
    }

    fn push(&mut self, text: &str) {
        let clean = sanitize_line(text);
        for c in clean.chars().filter(|c| !c.is_control()) {
            if self.text.chars().count() >= MAX_CHARS {
                break;
            }
            self.text.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn typing_edits_and_enter_renames_the_tab() {
        let (mut ws, _rx) = crate::workspace::test_workspace_on(&["/work/api", "/other/api"]);
        assert_eq!(
            (ws.tab_label(0), ws.tab_label(1)),
            ("api 1".into(), "api 2".into())
        );
        let mut rename = TabRename::open(&ws);
        assert_eq!(rename.text, "api");
        rename.key(
            KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            &mut ws,
        );
        for c in "backendx".chars() {
            rename.key(key(KeyCode::Char(c)), &mut ws);
        }
        rename.key(key(KeyCode::Backspace), &mut ws);
        assert!(rename.prompt().starts_with("rename tab: backend"));
        assert!(rename.key(key(KeyCode::Enter), &mut ws));
        // The other tab is alone with its project name now.
        assert_eq!(ws.tab_label(ws.tabs().1), "backend");
        let other = 1 - ws.tabs().1;
        assert_eq!(ws.tab_label(other), "api");
    }

    #[test]
    fn esc_keeps_the_name_and_an_empty_one_gives_back_the_projects() {
        let (mut ws, _rx) = crate::workspace::test_workspace_on(&["/work/api"]);
        let mut rename = TabRename::open(&ws);
        rename.paste("new name\nwith a line");
        assert!(rename.key(key(KeyCode::Esc), &mut ws));
        assert_eq!(ws.tab_label(0), "api");
        ws.rename_tab("mine");
        assert_eq!(ws.tab_label(0), "mine");
        let mut rename = TabRename::open(&ws);
        rename.key(
            KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            &mut ws,
        );
        rename.key(key(KeyCode::Enter), &mut ws);
        assert_eq!(ws.tab_label(0), "api");
        let mut long = TabRename::open(&ws);
        long.paste(&"x".repeat(100));
        assert_eq!(long.text.chars().count(), MAX_CHARS);
    }

    #[test]
    fn a_pasted_name_keeps_its_words_apart_whatever_the_line_ends() {
        let (mut ws, _rx) = crate::workspace::test_workspace_on(&["/work/api"]);
        for pasted in ["new\rname", "new\r\nname", "new\nname"] {
            let mut rename = TabRename::open(&ws);
            rename.key(
                KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
                &mut ws,
            );
            rename.paste(pasted);
            assert!(rename.key(key(KeyCode::Enter), &mut ws));
            assert_eq!(ws.tab_label(0), "new name", "{pasted:?}");
        }
    }
}
