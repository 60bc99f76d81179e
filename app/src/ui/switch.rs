//! The open session switcher: the panes crate's [`Switcher`] over the workspace's open
//! sessions, joined by each project's saved sessions as their agents list them.

use std::collections::HashMap;

use crossterm::event::KeyEvent;
use march_panes::switcher::{Switcher, SwitcherKey};

use crate::workspace::Workspace;
use crate::workspace::router::SessionKey;
use crate::workspace::switching::{FoundTurn, SavedSession};

/// Entry ids of saved sessions start here, above any session key.
const SAVED_IDS: u64 = 1 << 48;

/// The switcher and what its saved entries stand for.
pub(super) struct SessionSwitcher {
    pub(super) view: Switcher,
    saved: HashMap<u64, SavedSession>,
    /// Turns of any session whose text matched the query.
    found: HashMap<u64, FoundTurn>,
    next_id: u64,
    /// Projects whose saved sessions are still on their way.
    waiting: usize,
}

impl SessionSwitcher {
    /// Opens over `ws`'s sessions and asks each project's agent for its saved ones.
    pub(super) fn open(ws: &mut Workspace) -> Self {
        let mut view = Switcher::new(ws.switcher_entries());
        let waiting = ws.request_saved_sessions();
        view.set_loading(waiting > 0);
        SessionSwitcher {
            view,
            saved: HashMap::new(),
            found: HashMap::new(),
            next_id: SAVED_IDS,
            waiting,
        }
    }

    /// Takes in saved sessions listed and turns found since the last call.
    pub(super) fn absorb(&mut self, ws: &mut Workspace) {
        if let Some(found) = ws.take_found_turns(self.view.query().trim(), &mut self.next_id) {
            self.found.clear();
            let mut shown = Vec::new();
            for (entry, turn) in found {
                self.found.insert(entry.id, turn);
                shown.push(entry);
            }
            self.view.set_found(shown);
        }
        let (entries, answered) = ws.take_saved_sessions(&mut self.next_id);
        if answered == 0 {
            return;
        }
        self.waiting = self.waiting.saturating_sub(answered);
        self.view.set_loading(self.waiting > 0);
        let mut shown = Vec::new();
        for (entry, saved) in entries {
            self.saved.insert(entry.id, saved);
            shown.push(entry);
        }
        self.view.extend(shown);
    }

    /// Handles a key; true when the switcher should close.
    pub(super) fn key(&mut self, key: KeyEvent, ws: &mut Workspace) -> bool {
        let before = self.view.query().to_string();
        match self.view.key(key) {
            SwitcherKey::Ignored => false,
            SwitcherKey::Changed => {
                self.query_changed(&before, ws);
                false
            }
            SwitcherKey::Closed => true,
            SwitcherKey::Chosen { id, split } if self.found.contains_key(&id) => {
                if let Some(turn) = self.found.get(&id) {
                    ws.show_found_turn(turn, split);
                }
                true
            }
            SwitcherKey::Chosen { id, split } => {
                let key = match self.saved.get(&id) {
                    Some(saved) => ws.open_saved(saved),
                    None => SessionKey(id),
                };
                if split {
                    ws.show_in_split(key);
                } else {
                    ws.show_in_focused(key);
                }
                true
            }
        }
    }

    /// Pasted text goes into the query.
    pub(super) fn paste(&mut self, text: &str, ws: &mut Workspace) {
        let before = self.view.query().to_string();
        if self.view.paste(text) == SwitcherKey::Changed {
            self.query_changed(&before, ws);
        }
    }

    /// The query changed from `before`: the turns' text is searched again (from three
    /// characters on; shorter queries match too much to be worth a search).
    fn query_changed(&mut self, before: &str, ws: &mut Workspace) {
        let query = self.view.query().trim().to_string();
        if query == before.trim() {
            return;
        }
        self.found.clear();
        self.view.set_found(Vec::new());
        if query.chars().count() >= 3 {
            ws.search_turns(&query);
        }
    }
}
