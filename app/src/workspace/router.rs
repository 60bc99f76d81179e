//! The Workspace Output Router's attention model: per session, what it wants from the user,
//! taken from the protocol only (a prompt sent, a permission request, the prompt's answer,
//! a crash), never guessed from the screen.
//!
//! The router does not draw. The workspace feeds it each event as it routes the event to
//! the session's view, and asks it which sessions need the user, in which order, and when
//! to notify.

use std::collections::BTreeMap;

/// A session as the workspace knows it (stable for the life of the workspace, unlike the
/// agent's session id, which exists only once the session is open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey(pub u64);

pub use march_panes::attention::Attention;

/// Why the user should be told about a session now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    /// It needs an answer.
    NeedsYou,
    /// Its turn ended.
    Done,
    /// Its turn failed or its runner crashed.
    Error,
}

impl Notify {
    /// Whether to notify of this kind; turn ends only when `on_done` asks for them.
    pub fn wanted(self, on_done: bool) -> bool {
        !matches!(self, Notify::Done) || on_done
    }
}

/// One session's attention and the moment it entered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    state: Attention,
    /// Open questions (permission requests) not yet answered.
    pending: u32,
    /// When the state was entered, in router ticks (for oldest-first order).
    since: u64,
    /// The error is the runner's crash alone (no turn failed with it): a successful restart
    /// ends it.
    crash_only: bool,
}

/// Attention per session.
#[derive(Debug, Default)]
pub struct OutputRouter {
    sessions: BTreeMap<SessionKey, Entry>,
    tick: u64,
}

impl OutputRouter {
    /// Starts tracking `key`, idle.
    pub fn add(&mut self, key: SessionKey) {
        let since = self.next_tick();
        self.sessions.insert(
            key,
            Entry {
                state: Attention::Idle,
                pending: 0,
                since,
                crash_only: false,
            },
        );
    }

    /// Stops tracking `key`.
    pub fn remove(&mut self, key: SessionKey) {
        self.sessions.remove(&key);
    }

    /// The attention of `key` (idle when unknown).
    pub fn attention(&self, key: SessionKey) -> Attention {
        self.sessions.get(&key).map_or(Attention::Idle, |e| e.state)
    }

    /// A prompt was sent: a turn runs.
    pub fn prompt_sent(&mut self, key: SessionKey) {
        self.set(key, Attention::Working);
    }

    /// The agent asked a question; `seen` says whether the user is looking at the session.
    /// Returns whether to notify.
    pub fn question_asked(&mut self, key: SessionKey, seen: bool) -> Option<Notify> {
        let entry = self.sessions.get_mut(&key)?;
        entry.pending += 1;
        if entry.state == Attention::NeedsYou {
            return None;
        }
        self.set(key, Attention::NeedsYou);
        (!seen).then_some(Notify::NeedsYou)
    }

    /// One question was answered: back to work when none is left.
    pub fn question_answered(&mut self, key: SessionKey) {
        let Some(entry) = self.sessions.get_mut(&key) else {
            return;
        };
        entry.pending = entry.pending.saturating_sub(1);
        if entry.pending == 0 && entry.state == Attention::NeedsYou {
            self.set(key, Attention::Working);
        }
    }

    /// The user cancelled the turn: open questions are void; the turn still runs until the
    /// agent answers the prompt.
    pub fn cancelled(&mut self, key: SessionKey) {
        let Some(entry) = self.sessions.get_mut(&key) else {
            return;
        };
        entry.pending = 0;
        if entry.state == Attention::NeedsYou {
            self.set(key, Attention::Working);
        }
    }

    /// The prompt was answered (`ok` = the turn ended normally, cancelled included); `seen`
    /// says whether the user is looking. Returns whether to notify.
    pub fn turn_ended(&mut self, key: SessionKey, ok: bool, seen: bool) -> Option<Notify> {
        let entry = self.sessions.get_mut(&key)?;
        entry.pending = 0;
        let (state, notify) = match (ok, seen) {
            (true, true) => (Attention::Idle, None),
            (true, false) => (Attention::Done, Some(Notify::Done)),
            // A failure the user watched is on screen; no badge is needed.
            (false, true) => (Attention::Idle, None),
            (false, false) => (Attention::Error, Some(Notify::Error)),
        };
        self.set(key, state);
        notify
    }

    /// The session's runner ended unexpectedly (or cannot be started).
    pub fn crashed(&mut self, key: SessionKey, seen: bool) -> Option<Notify> {
        let entry = self.sessions.get_mut(&key)?;
        entry.pending = 0;
        // A crash in the middle of a turn (or after one failed) failed that turn too.
        let interrupted = matches!(
            entry.state,
            Attention::Working | Attention::NeedsYou | Attention::Error
        );
        self.set(key, Attention::Error);
        if let Some(entry) = self.sessions.get_mut(&key) {
            entry.crash_only = !interrupted;
        }
        (!seen).then_some(Notify::Error)
    }

    /// The runner was restarted and the session reopened: nothing runs any more, and a
    /// crash that failed no turn is over (the notification about it went out already); a
    /// turn that failed with it stays an error until seen.
    pub fn restarted(&mut self, key: SessionKey) {
        let Some(entry) = self.sessions.get_mut(&key) else {
            return;
        };
        entry.pending = 0;
        let over = match entry.state {
            Attention::Working | Attention::NeedsYou => true,
            Attention::Error => entry.crash_only,
            Attention::Done | Attention::Idle => false,
        };
        if over {
            self.set(key, Attention::Idle);
        }
    }

    /// The user looks at the session (focused pane): what was unseen is seen.
    pub fn seen(&mut self, key: SessionKey) {
        if matches!(
            self.sessions.get(&key).map(|e| e.state),
            Some(Attention::Done | Attention::Error)
        ) {
            self.set(key, Attention::Idle);
        }
    }

    /// The session to go to next: those needing an answer, oldest first, then failed ones,
    /// then finished ones; `skip` (the one on screen) comes last.
    pub fn next_for_user(&self, skip: Option<SessionKey>) -> Option<SessionKey> {
        let rank = |state: Attention| match state {
            Attention::NeedsYou => Some(0),
            Attention::Error => Some(1),
            Attention::Done => Some(2),
            Attention::Idle | Attention::Working => None,
        };
        self.sessions
            .iter()
            .filter_map(|(key, e)| rank(e.state).map(|r| (Some(*key) == skip, r, e.since, *key)))
            .min()
            .map(|(_, _, _, key)| key)
    }

    /// How many sessions are in `state`.
    pub fn count(&self, state: Attention) -> usize {
        self.sessions.values().filter(|e| e.state == state).count()
    }

    fn set(&mut self, key: SessionKey, state: Attention) {
        let since = self.next_tick();
        if let Some(entry) = self.sessions.get_mut(&key) {
            entry.crash_only = false;
            if entry.state != state {
                entry.state = state;
                entry.since = since;
            }
        }
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionKey = SessionKey(1);
    const B: SessionKey = SessionKey(2);

    fn router() -> OutputRouter {
        let mut r = OutputRouter::default();
        r.add(A);
        r.add(B);
        r
    }

    #[test]
    fn a_prompt_makes_a_session_work_and_its_end_is_done_until_seen() {
        let mut r = router();
        assert_eq!(r.attention(A), Attention::Idle);
        r.prompt_sent(A);
        assert_eq!(r.attention(A), Attention::Working);
        assert_eq!(r.turn_ended(A, true, false), Some(Notify::Done));
        assert_eq!(r.attention(A), Attention::Done);
        r.seen(A);
        assert_eq!(r.attention(A), Attention::Idle);
    }

    #[test]
    fn a_turn_ending_while_watched_is_idle_and_not_notified() {
        let mut r = router();
        r.prompt_sent(A);
        assert_eq!(r.turn_ended(A, true, true), None);
        assert_eq!(r.attention(A), Attention::Idle);
        r.prompt_sent(A);
        assert_eq!(r.turn_ended(A, false, true), None);
        assert_eq!(r.attention(A), Attention::Idle);
    }

    #[test]
    fn a_failed_turn_is_an_error_until_seen() {
        let mut r = router();
        r.prompt_sent(A);
        assert_eq!(r.turn_ended(A, false, false), Some(Notify::Error));
        assert_eq!(r.attention(A), Attention::Error);
        r.prompt_sent(A);
        assert_eq!(r.attention(A), Attention::Working, "a new prompt clears it");
        r.turn_ended(A, false, false);
        r.seen(A);
        assert_eq!(r.attention(A), Attention::Idle);
    }

    #[test]
    fn questions_need_the_user_until_all_are_answered() {
        let mut r = router();
        r.prompt_sent(A);
        assert_eq!(r.question_asked(A, false), Some(Notify::NeedsYou));
        assert_eq!(r.question_asked(A, false), None, "already needs you");
        assert_eq!(r.attention(A), Attention::NeedsYou);
        r.question_answered(A);
        assert_eq!(r.attention(A), Attention::NeedsYou, "one still open");
        r.question_answered(A);
        assert_eq!(r.attention(A), Attention::Working);
        // Seeing a session does not answer its question.
        r.question_asked(A, true);
        r.seen(A);
        assert_eq!(r.attention(A), Attention::NeedsYou);
    }

    #[test]
    fn a_question_in_the_watched_session_is_not_notified() {
        let mut r = router();
        r.prompt_sent(A);
        assert_eq!(r.question_asked(A, true), None);
        assert_eq!(r.attention(A), Attention::NeedsYou);
    }

    #[test]
    fn cancel_voids_questions_and_the_turn_end_follows() {
        let mut r = router();
        r.prompt_sent(A);
        r.question_asked(A, false);
        r.cancelled(A);
        assert_eq!(r.attention(A), Attention::Working);
        r.question_answered(A); // a late answer changes nothing
        assert_eq!(r.attention(A), Attention::Working);
        assert_eq!(r.turn_ended(A, true, false), Some(Notify::Done));
    }

    #[test]
    fn a_crash_of_an_idle_session_is_over_once_the_runner_is_back() {
        let mut r = router();
        assert_eq!(r.crashed(A, false), Some(Notify::Error));
        assert_eq!(r.attention(A), Attention::Error);
        r.restarted(A);
        assert_eq!(r.attention(A), Attention::Idle);
        // A turn that failed along with the crash stays an error.
        r.prompt_sent(B);
        r.crashed(B, false);
        r.turn_ended(B, false, false);
        r.restarted(B);
        assert_eq!(r.attention(B), Attention::Error);
    }

    #[test]
    fn a_crash_is_an_error_and_the_restart_keeps_it_until_seen() {
        let mut r = router();
        r.prompt_sent(A);
        r.question_asked(A, false);
        assert_eq!(r.crashed(A, false), Some(Notify::Error));
        assert_eq!(r.attention(A), Attention::Error);
        r.restarted(A);
        assert_eq!(r.attention(A), Attention::Error);
        r.seen(A);
        assert_eq!(r.attention(A), Attention::Idle);
        // A restart of a session that was working (crash seen) leaves it idle.
        r.prompt_sent(B);
        r.restarted(B);
        assert_eq!(r.attention(B), Attention::Idle);
        assert_eq!(r.crashed(B, true), None);
    }

    #[test]
    fn the_next_session_is_the_oldest_needing_you_then_errors_then_done() {
        let mut r = router();
        let c = SessionKey(3);
        r.add(c);
        assert_eq!(r.next_for_user(None), None);
        r.prompt_sent(c);
        r.turn_ended(c, true, false); // done
        r.prompt_sent(B);
        r.question_asked(B, false); // needs you, first
        r.prompt_sent(A);
        r.question_asked(A, false); // needs you, second
        assert_eq!(r.next_for_user(None), Some(B));
        assert_eq!(
            r.next_for_user(Some(B)),
            Some(A),
            "the one on screen goes last"
        );
        r.question_answered(B);
        assert_eq!(r.next_for_user(None), Some(A));
        r.question_answered(A);
        assert_eq!(r.next_for_user(None), Some(c));
        r.turn_ended(A, false, false);
        assert_eq!(r.next_for_user(None), Some(A), "errors before done");
        assert_eq!(r.count(Attention::Done), 1);
        assert_eq!(r.count(Attention::Error), 1);
        r.remove(A);
        assert_eq!(r.attention(A), Attention::Idle);
    }
}
