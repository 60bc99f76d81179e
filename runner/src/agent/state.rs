//! March's own state of a runner session (title, timeline, restore data), kept in its own
//! file beside the transcript and never inside it (architecture invariant 7).
//!
//! The transcript stays the record of the conversation, so state writes are best effort: a
//! failure is logged and the session goes on, and a missing or damaged state file is rebuilt
//! from the transcript on the next load.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use march_core::march_session::{MarchSession, MarchSessionError, TimelineKind};
use march_core::message::UserMessage;
use march_core::session::{SessionMessage, SessionStore};
use march_tools::exec::sandbox::SandboxMode;

use super::listing;
use super::options::{Change, PermissionMode, Settings, model_spec};

/// A session's live settings.
type Shared = Arc<Mutex<Settings>>;

/// The state of one open session and the directory its file lives in.
pub(crate) struct SessionState {
    dir: PathBuf,
    inner: Mutex<Inner>,
}

struct Inner {
    state: MarchSession,
    /// Set by `session/delete`: nothing is written after it, so a late event cannot bring
    /// the file back.
    deleted: bool,
}

impl SessionState {
    /// The state of a session just created around `store`.
    pub(crate) fn created(dir: PathBuf, id: &str, cwd: &Path, store: &SessionStore) -> Self {
        let mut state = MarchSession::new(id, cwd, store.path());
        state.created_at = store.header().timestamp.clone();
        Self::with(dir, state)
    }

    /// The state of a session opened from `store`: the saved one brought up to date with the
    /// transcript (its file, its `session_info` name), or one rebuilt from the transcript.
    pub(crate) fn reopened(
        dir: PathBuf,
        saved: Option<MarchSession>,
        id: &str,
        cwd: &Path,
        store: &SessionStore,
    ) -> Self {
        let mut state = saved.unwrap_or_else(|| {
            let mut fresh = MarchSession::new(id, cwd, store.path());
            fresh.created_at = store.header().timestamp.clone();
            fresh.title = first_user_title(store);
            fresh
        });
        state.cwd = cwd.to_path_buf();
        state.transcript = store.path().to_path_buf();
        // A name given in the transcript (pi's `/name`) is explicit and wins.
        if let Some(name) = store.session_name() {
            state.title = Some(name.to_string());
        }
        Self::with(dir, state)
    }

    fn with(dir: PathBuf, state: MarchSession) -> Self {
        SessionState {
            dir,
            inner: Mutex::new(Inner {
                state,
                deleted: false,
            }),
        }
    }

    /// Apply `change`, add an event and save; blocking. A failed save is logged.
    pub(crate) fn record_now(
        &self,
        kind: TimelineKind,
        detail: Option<String>,
        change: impl FnOnce(&mut MarchSession),
    ) {
        let mut inner = self.inner.lock();
        if inner.deleted {
            return;
        }
        change(&mut inner.state);
        inner.state.record(kind, detail);
        match inner.state.save(&self.dir) {
            Ok(path) => tracing::debug!(path = %path.display(), ?kind, "session state saved"),
            Err(e) => tracing::warn!(
                session = %inner.state.id,
                error = %e,
                "cannot save March session state; the transcript still holds the conversation"
            ),
        }
    }

    /// [`SessionState::record_now`] off the async threads; saves run one at a time, in order.
    pub(crate) async fn record(
        self: &Arc<Self>,
        kind: TimelineKind,
        detail: Option<String>,
        change: impl FnOnce(&mut MarchSession) + Send + 'static,
    ) {
        let this = self.clone();
        let saved = tokio::task::spawn_blocking(move || this.record_now(kind, detail, change));
        if let Err(e) = saved.await {
            tracing::warn!(error = %e, "saving March session state failed");
        }
    }

    /// Record a lifecycle event (created, loaded, resumed) with the session's settings.
    pub(crate) async fn opened(self: &Arc<Self>, kind: TimelineKind, settings: &Shared) {
        let settings = settings.clone();
        self.record(kind, None, move |s| apply(s, &settings.lock()))
            .await;
    }

    /// Record a settings change that has been applied to `settings`.
    pub(crate) async fn changed(self: &Arc<Self>, change: &Change, settings: &Shared) {
        let (kind, detail) = match change {
            Change::Model(m) => (TimelineKind::ModelChange, model_spec(m)),
            Change::Thinking(t) => (TimelineKind::ThinkingChange, t.as_str().to_string()),
            Change::Mode(m) => (TimelineKind::PermissionChange, m.as_str().to_string()),
            Change::MaxTurns(n) => (
                TimelineKind::LimitChange,
                format!("max_turns {}", n.map_or("none".into(), |n| n.to_string())),
            ),
            Change::ToolTimeout(t) => (
                TimelineKind::LimitChange,
                format!(
                    "tool_timeout {}",
                    t.map_or("none".into(), |t| format!("{}s", t.as_secs()))
                ),
            ),
            Change::Sandbox(m) => (TimelineKind::SandboxChange, m.as_str().to_string()),
        };
        let settings = settings.clone();
        let sandbox = match change {
            Change::Sandbox(m) => Some(m.as_str().to_string()),
            _ => None,
        };
        // The settings are read at save time, so racing changes cannot save a stale set last.
        self.record(kind, Some(detail), move |s| {
            apply(s, &settings.lock());
            if sandbox.is_some() {
                s.sandbox = sandbox;
            }
        })
        .await;
    }

    /// Record a prompt starting its run; the first one titles an untitled session. Returns
    /// the title when this prompt gave it, and the save still under way. Only that first
    /// record is waited for here (clients are told the title it saved); later ones are saved
    /// while the request goes out, so the model is not kept waiting on this file's fsyncs,
    /// and the turn waits for the save before it answers.
    pub(crate) async fn prompt_started(
        self: &Arc<Self>,
        user: &UserMessage,
    ) -> (Option<String>, Option<tokio::task::JoinHandle<()>>) {
        let untitled = self.title().is_none();
        let title = listing::user_title(&user.content);
        let detail = title.clone();
        let change = move |s: &mut MarchSession| {
            if s.title.is_none() {
                s.title = title;
            }
        };
        if untitled {
            self.record(TimelineKind::Prompt, detail, change).await;
            return (self.title(), None);
        }
        let this = self.clone();
        let saving = tokio::task::spawn_blocking(move || {
            this.record_now(TimelineKind::Prompt, detail, change);
        });
        (None, Some(saving))
    }

    /// The sandbox mode the user chose for the session, if one this runner knows.
    pub(crate) fn saved_sandbox(&self) -> Option<SandboxMode> {
        self.inner.lock().state.sandbox.as_deref()?.parse().ok()
    }

    /// The session's title, if it has one.
    pub(crate) fn title(&self) -> Option<String> {
        self.inner.lock().state.title.clone()
    }

    /// Remove the file and stop writing it; blocking. Whether there was a file.
    pub(crate) fn delete_now(&self) -> Result<bool, MarchSessionError> {
        let mut inner = self.inner.lock();
        inner.deleted = true;
        MarchSession::delete(&self.dir, &inner.state.id)
    }
}

/// Put the session's settings into its state.
fn apply(state: &mut MarchSession, settings: &Settings) {
    state.model = Some(model_spec(&settings.model));
    state.thinking = Some(settings.thinking);
    state.permission_mode = Some(settings.mode.as_str().to_string());
    state.limits = settings.limits.saved();
}

/// The first user message's title, as `session/list` derives it from a file.
fn first_user_title(store: &SessionStore) -> Option<String> {
    store.entries().iter().find_map(|e| match e.message() {
        Some(SessionMessage::User(u)) => Some(listing::user_title(&u.content)),
        _ => None,
    })?
}

/// The saved state of session `id`, read from `dir`; blocking. A damaged file is logged and
/// moved aside (the caller rebuilds the state from the transcript), never fatal.
pub(crate) fn load_saved(dir: &Path, id: &str) -> Option<MarchSession> {
    match MarchSession::load(dir, id) {
        Ok(state) => state,
        Err(e @ MarchSessionError::Corrupt { .. }) => {
            match MarchSession::set_aside(dir, id) {
                Ok(aside) => tracing::warn!(
                    session = %id,
                    error = %e,
                    moved_to = ?aside,
                    "March session state is damaged; rebuilding it from the transcript"
                ),
                Err(aside) => tracing::warn!(
                    session = %id,
                    error = %e,
                    set_aside = %aside,
                    "March session state is damaged and cannot be moved aside; rebuilding it"
                ),
            }
            None
        }
        Err(e) => {
            tracing::warn!(session = %id, error = %e, "cannot read March session state");
            None
        }
    }
}

/// The saved title of session `id`, for `session/list`; blocking. Problems only mean the
/// transcript's title is used.
pub(crate) fn saved_title(dir: &Path, id: &str) -> Option<String> {
    MarchSession::load_title(dir, id).unwrap_or_else(|e| {
        tracing::debug!(session = %id, error = %e, "no title from March session state");
        None
    })
}

/// The permission mode saved for a session, if it is one this runner knows.
pub(crate) fn saved_mode(saved: Option<&MarchSession>) -> Option<PermissionMode> {
    saved?
        .permission_mode
        .as_deref()
        .and_then(PermissionMode::parse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::message::Message;
    use march_core::session::SessionHeader;

    fn store(dir: &Path) -> SessionStore {
        let mut store = SessionStore::create(dir, SessionHeader::new("/work/proj")).unwrap();
        store
            .append_message(Message::user("\n  Fix the parser\nplease"))
            .unwrap();
        store.append_message(Message::user("second")).unwrap();
        store
    }

    #[test]
    fn a_missing_state_is_rebuilt_from_the_transcript() {
        let root = tempfile::tempdir().unwrap();
        let mut store = store(&root.path().join("sessions"));
        let states = root.path().join("march-sessions");
        let id = store.session_id().to_string();
        let cwd = Path::new("/work/proj");

        let state = SessionState::reopened(states.clone(), None, &id, cwd, &store);
        state.record_now(TimelineKind::Loaded, None, |_| {});
        let saved = load_saved(&states, &id).unwrap();
        assert_eq!(saved.title.as_deref(), Some("Fix the parser"));
        assert_eq!(saved.created_at, store.header().timestamp);
        assert_eq!(saved.transcript, store.path());
        assert_eq!(saved_title(&states, &id).as_deref(), Some("Fix the parser"));

        // A name given in the transcript replaces the saved title on the next open.
        store.append_session_info("Named").unwrap();
        let state = SessionState::reopened(states.clone(), Some(saved), &id, cwd, &store);
        state.record_now(TimelineKind::Resumed, None, |_| {});
        let saved = load_saved(&states, &id).unwrap();
        assert_eq!(saved.title.as_deref(), Some("Named"));
        let kinds: Vec<_> = saved.timeline.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [TimelineKind::Loaded, TimelineKind::Resumed]);
    }

    #[test]
    fn nothing_is_written_after_delete_and_damage_is_set_aside() {
        let root = tempfile::tempdir().unwrap();
        let store = store(&root.path().join("sessions"));
        let states = root.path().join("march-sessions");
        let id = store.session_id().to_string();
        let state = SessionState::created(states.clone(), &id, Path::new("/p"), &store);
        state.record_now(TimelineKind::Created, None, |_| {});
        assert!(state.delete_now().unwrap());
        state.record_now(TimelineKind::Prompt, Some("late".into()), |_| {});
        assert!(load_saved(&states, &id).is_none());

        std::fs::write(states.join(format!("{id}.json")), "[1, 2").unwrap();
        assert!(load_saved(&states, &id).is_none());
        assert!(saved_title(&states, &id).is_none());
        let aside = states.join(format!("{id}.json.corrupt"));
        assert_eq!(std::fs::read_to_string(aside).unwrap(), "[1, 2");
    }

    #[test]
    fn only_known_modes_are_restored() {
        let mut saved = MarchSession::new("s", "/p", "/t.jsonl");
        assert_eq!(saved_mode(Some(&saved)), None);
        saved.permission_mode = Some("yolo".into());
        assert_eq!(saved_mode(Some(&saved)), Some(PermissionMode::Yolo));
        saved.permission_mode = Some("sometimes".into());
        assert_eq!(saved_mode(Some(&saved)), None);
        assert_eq!(saved_mode(None), None);
    }
}
