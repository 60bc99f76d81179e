//! Switching sessions: what the switcher lists (open sessions, and saved ones listed by
//! each project's agent), showing a session in the focused pane or a new split, opening a
//! saved one, next / previous / last session.

use std::path::PathBuf;
use std::time::SystemTime;

use agent_client_protocol::v1::schema::SessionId;
use march_panes::switcher::SwitcherEntry;
use march_panes::theme::Slot;

use super::agent::ListPurpose;
use super::layout::{Axis, PaneId};
use super::pane::Pane;
use super::router::SessionKey;
use super::{Workspace, project_name};

/// A saved session the switcher offers: its project and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedSession {
    /// The project directory.
    pub project: PathBuf,
    /// The agent's session id.
    pub id: SessionId,
}

/// A turn the history index found for the switcher's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundTurn {
    /// The session it is in.
    pub session: SavedSession,
    /// The id of its user message (the transcript entry), to show it.
    pub entry_id: String,
    /// The words searched for, to find it when the agent does not name messages.
    pub query: String,
}

impl Workspace {
    /// Searches the text of every session's turns for `query` off the loop; the turns
    /// come back through [`Self::take_found_turns`].
    pub fn search_turns(&self, query: &str) {
        let Some(paths) = &self.launcher.paths else {
            return;
        };
        let db = paths.history_db();
        let query = query.to_string();
        self.launcher.jobs.blocking(move || {
            let search = march_core::history::SearchQuery {
                limit: 20,
                ..march_core::history::SearchQuery::new(query.clone())
            };
            let hits = march_core::history::HistoryIndex::open(&db)
                .and_then(|index| index.search(&search))
                .unwrap_or_else(|e| {
                    tracing::debug!("switcher search: {e}");
                    Vec::new()
                });
            super::jobs::JobDone::TurnsFound { query, hits }
        });
    }

    /// Drops turns found for a switcher that is gone.
    pub fn drop_found_turns(&mut self) {
        self.found_turns.clear();
    }

    /// Whether a search's turns wait to be taken.
    pub fn has_found_turns(&self) -> bool {
        !self.found_turns.is_empty()
    }

    /// The turns found since the last call, for `query` only, as switcher entries (ids from
    /// `next_id`) and what each stands for.
    pub fn take_found_turns(
        &mut self,
        query: &str,
        next_id: &mut u64,
    ) -> Option<Vec<(SwitcherEntry, FoundTurn)>> {
        // Only the search for what is typed now counts; earlier ones are dropped.
        let found = std::mem::take(&mut self.found_turns);
        let (_, hits) = found
            .into_iter()
            .rev()
            .find(|(searched, _)| searched == query)?;
        let now = SystemTime::now();
        let entries = hits
            .into_iter()
            .map(|hit| {
                let id = *next_id;
                *next_id += 1;
                let project = PathBuf::from(&hit.project);
                let session = SessionId::new(hit.session_id.clone());
                let open = self
                    .sessions
                    .values()
                    .find(|s| s.session_id.as_ref() == Some(&session));
                let title = open
                    .map(|s| s.view.title().to_string())
                    .unwrap_or_else(|| format!("session {}", short(&hit.session_id)));
                let at = u64::try_from(hit.time_ms)
                    .ok()
                    .map(|ms| SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(ms));
                let entry = SwitcherEntry {
                    id,
                    title,
                    project: project_name(&project),
                    glyph: ("≡", Slot::Hint),
                    state: "turn".to_string(),
                    activity: at.map(|t| ago(now, t)),
                    preview: Some(first_line(&hit.snippet)),
                    panes: Vec::new(),
                    avatar: None,
                };
                let turn = FoundTurn {
                    session: SavedSession {
                        project,
                        id: session,
                    },
                    entry_id: hit.entry_id,
                    query: query.to_string(),
                };
                (entry, turn)
            })
            .collect();
        Some(entries)
    }

    /// Shows `turn`'s session (opened when it is not) in the focused pane or a new split,
    /// scrolled to the turn.
    pub fn show_found_turn(&mut self, turn: &FoundTurn, split: bool) {
        let key = match self.open_with_id(&turn.session.id) {
            Some(key) => key,
            None => self.open_saved(&turn.session),
        };
        if split {
            self.show_in_split(key);
        } else {
            self.show_in_focused(key);
        }
        if let Some(slot) = self.sessions.get_mut(&key) {
            slot.view.reveal(Some(&turn.entry_id), &turn.query);
        }
    }

    /// The open sessions as switcher entries (id = the session key), most recently active
    /// first.
    pub fn switcher_entries(&self) -> Vec<SwitcherEntry> {
        let now = SystemTime::now();
        let mut open: Vec<_> = self
            .sessions
            .iter()
            .map(|(key, slot)| {
                let attention = self.sessions.attention(*key);
                let panes = self
                    .tab()
                    .layout
                    .panes()
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| self.agent_session(**p) == Some(*key))
                    .map(|(i, _)| i + 1)
                    .collect();
                let entry = SwitcherEntry {
                    id: key.0,
                    title: slot.view.title().to_string(),
                    project: project_name(&slot.project),
                    glyph: (attention.glyph(), attention.slot()),
                    state: attention.words().to_string(),
                    activity: slot.last_activity.map(|t| ago(now, t)),
                    preview: slot.view.last_message_text().map(|t| first_line(&t)),
                    panes,
                    avatar: self.avatar_badge(*key),
                };
                (slot.last_activity, entry)
            })
            .collect();
        open.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
        open.into_iter().map(|(_, e)| e).collect()
    }

    /// Ask one running agent of each project for its saved sessions; they arrive through
    /// [`Self::take_saved_sessions`]. Returns how many projects were asked.
    pub fn request_saved_sessions(&mut self) -> usize {
        self.listed.clear();
        let mut asked: Vec<PathBuf> = Vec::new();
        for slot in self.sessions.values() {
            if asked.contains(&slot.project) {
                continue;
            }
            if slot
                .driver
                .list_sessions(slot.project.clone(), ListPurpose::Switcher)
            {
                asked.push(slot.project.clone());
            }
        }
        asked.len()
    }

    /// Saved sessions listed since the last call that are not open, as switcher entries
    /// (ids from `next_id` on), with what opening each needs; and how many projects
    /// answered.
    pub fn take_saved_sessions(
        &mut self,
        next_id: &mut u64,
    ) -> (Vec<(SwitcherEntry, SavedSession)>, usize) {
        let listed = std::mem::take(&mut self.listed);
        let answered = listed.len();
        let open: Vec<&SessionId> = self
            .sessions
            .values()
            .filter_map(|s| s.session_id.as_ref())
            .collect();
        let mut out = Vec::new();
        for (project, sessions) in listed {
            for info in sessions {
                if open.contains(&&info.session_id) {
                    continue;
                }
                let id = *next_id;
                *next_id += 1;
                let title = info
                    .title
                    .clone()
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| format!("untitled {}", short(&info.session_id.0)));
                let entry = SwitcherEntry {
                    id,
                    title,
                    project: project_name(&project),
                    glyph: ("○", Slot::TextDim),
                    state: "saved".to_string(),
                    activity: info.updated_at.as_deref().map(short_time),
                    preview: march_preview(&info),
                    panes: Vec::new(),
                    avatar: None,
                };
                let saved = SavedSession {
                    project: project.clone(),
                    id: info.session_id,
                };
                out.push((entry, saved));
            }
        }
        (out, answered)
    }

    /// The open session with agent session id `id`, if any.
    pub(super) fn open_with_id(&self, id: &SessionId) -> Option<SessionKey> {
        self.sessions
            .iter()
            .find_map(|(k, s)| (s.session_id.as_ref() == Some(id)).then_some(*k))
    }

    /// Opens saved session `saved` (replayed from its agent), or finds it open.
    pub fn open_saved(&mut self, saved: &SavedSession) -> SessionKey {
        match self.open_with_id(&saved.id) {
            Some(key) => key,
            None => self.spawn_session(&saved.project, Some(saved.id.clone()), None),
        }
    }

    /// Shows session `key` in the focused pane; the session it showed goes on in the
    /// background.
    pub fn show_in_focused(&mut self, key: SessionKey) {
        if !self.sessions.contains_key(&key) {
            return;
        }
        let pane = self.focused();
        // Any other pane (a shell, a diff…) keeps what it shows: the session opens beside it.
        let Some(old) = self.agent_session(pane) else {
            self.show_in_split(key);
            return;
        };
        self.panes.insert(pane, Pane::Agent(key));
        if old != key {
            self.last_session = Some(old);
        }
        self.wake(key);
    }

    /// Shows session `key` in a new pane split beside the focused one.
    pub fn show_in_split(&mut self, key: SessionKey) {
        if !self.sessions.contains_key(&key) {
            return;
        }
        let pane = PaneId(self.next_id());
        self.panes.insert(pane, Pane::Agent(key));
        self.tab_mut().layout.split(Axis::Horizontal, pane);
        self.wake(key);
    }

    /// Shows the next (or previous) open session in the focused pane, in the order they
    /// were opened.
    pub fn cycle_session(&mut self, forward: bool) {
        let keys: Vec<SessionKey> = self.sessions.keys().copied().collect();
        let Some(current) = self.focused_session() else {
            return;
        };
        let Some(at) = keys.iter().position(|k| *k == current) else {
            return;
        };
        let n = keys.len();
        let next = if forward {
            (at + 1) % n
        } else {
            (at + n - 1) % n
        };
        if keys[next] != current {
            self.show_in_focused(keys[next]);
        }
    }

    /// Shows the session the focused pane showed before the last switch, if it is open.
    pub fn toggle_last_session(&mut self) -> bool {
        match self.last_session {
            Some(key) if self.sessions.contains_key(&key) => {
                self.show_in_focused(key);
                true
            }
            _ => false,
        }
    }
}

/// How long ago `then` was: now, 5m ago, 2h ago, 3d ago.
fn ago(now: SystemTime, then: SystemTime) -> String {
    let secs = now.duration_since(then).map_or(0, |d| d.as_secs());
    match secs {
        0..60 => "now".to_string(),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86400),
    }
}

/// An ISO 8601 time as `YYYY-MM-DD HH:MM` (as it is when it does not look like one).
fn short_time(iso: &str) -> String {
    match (iso.get(..10), iso.get(11..16)) {
        (Some(d), Some(t)) if iso.as_bytes().get(10) == Some(&b'T') => format!("{d} {t}"),
        _ => iso.to_string(),
    }
}

/// The start of the session's last answer, when the agent is March's runner (its
/// `_meta.march.preview`).
fn march_preview(info: &agent_client_protocol::v1::schema::SessionInfo) -> Option<String> {
    info.meta
        .as_ref()?
        .get("march")?
        .get("preview")?
        .as_str()
        .map(str::to_string)
}

/// The first characters of an id.
fn short(id: &str) -> &str {
    id.char_indices().nth(8).map_or(id, |(i, _)| &id[..i])
}

/// The first non-empty line of `text`.
fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn times_read_as_people_say_them() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let before = |s| now - Duration::from_secs(s);
        assert_eq!(ago(now, before(5)), "now");
        assert_eq!(ago(now, before(300)), "5m ago");
        assert_eq!(ago(now, before(7200)), "2h ago");
        assert_eq!(ago(now, before(3 * 86400)), "3d ago");
        assert_eq!(ago(now, now + Duration::from_secs(9)), "now");
        assert_eq!(short_time("2026-11-30T06:12:44Z"), "2026-11-30 06:12");
        assert_eq!(short_time("yesterday"), "yesterday");
        assert_eq!(first_line("\n  Done.\nMore"), "Done.");
    }
}
