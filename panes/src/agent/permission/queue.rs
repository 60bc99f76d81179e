//! The pane's open permission requests: the first is the dialog on screen, the rest wait
//! behind it. The queue owns the type-ahead guard, so whether a key answers the dialog or
//! goes to the prompt editor is decided in one place.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{RequestPermissionRequest, ToolKind};
use crossterm::event::{KeyCode, KeyEvent};

use super::guard::TypeAheadGuard;
use super::{ModalKey, PermissionId, PermissionModal};

/// Where a key typed while a dialog is open goes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Routed {
    /// The dialog took it.
    Dialog(ModalKey),
    /// The dialog holds its keys (typing has not paused) or the key is not one of its: it
    /// belongs to the prompt editor.
    Editor,
    /// Held, and acting on it would cancel or send something: dropped.
    Dropped,
}

/// Open permission requests, first on screen.
#[derive(Debug, Default)]
pub(crate) struct PermissionQueue {
    open: VecDeque<PermissionModal>,
    next: u64,
    guard: TypeAheadGuard,
}

impl PermissionQueue {
    /// Sets how long a dialog holds its keys after it appears and after typing.
    pub(crate) fn set_hold(&mut self, hold: Duration) {
        self.guard.set_hold(hold);
    }

    /// Adds a request; `known` is the call's title and kind from the transcript.
    pub(crate) fn push(
        &mut self,
        request: RequestPermissionRequest,
        known: Option<(String, ToolKind)>,
    ) -> PermissionId {
        self.next += 1;
        let id = PermissionId(self.next);
        self.open
            .push_back(PermissionModal::new(id, request, known));
        id
    }

    /// Whether none is open.
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// How many are open.
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    /// The dialog on screen.
    pub(crate) fn front(&self) -> Option<&PermissionModal> {
        self.open.front()
    }

    /// The newest request.
    pub(crate) fn back(&self) -> Option<&PermissionModal> {
        self.open.back()
    }

    /// Takes the dialog on screen away (answered); the next one is shown from now.
    pub(crate) fn pop_front(&mut self) -> Option<PermissionModal> {
        let answered = self.open.pop_front();
        if let Some(next) = self.open.front_mut() {
            next.shown = Instant::now();
        }
        answered
    }

    /// Removes a request the agent withdrew; whether it was open.
    pub(crate) fn remove(&mut self, id: PermissionId) -> bool {
        let was_front = self.open.front().is_some_and(|m| m.id == id);
        let before = self.open.len();
        self.open.retain(|m| m.id != id);
        if was_front && let Some(next) = self.open.front_mut() {
            next.shown = Instant::now();
        }
        before != self.open.len()
    }

    /// Removes every request, returning their ids.
    pub(crate) fn drain(&mut self) -> Vec<PermissionId> {
        self.open.drain(..).map(|m| m.id).collect()
    }

    /// Whether the dialog on screen takes answers at `now`.
    pub(crate) fn armed(&self, now: Instant) -> bool {
        self.open
            .front()
            .is_none_or(|m| self.guard.armed(m.shown, now))
    }

    /// When the dialog on screen starts taking answers, while it does not yet: the pane is
    /// drawn again then.
    pub(crate) fn arms_at(&self, now: Instant) -> Option<Instant> {
        let m = self.open.front()?;
        (!self.guard.armed(m.shown, now)).then(|| self.guard.arms_at(m.shown))
    }

    /// A key typed into the pane that no dialog took (it went to the editor).
    pub(crate) fn typed(&mut self, now: Instant) {
        self.guard.typed(now);
    }

    /// Routes `key`, typed at `now`, with a dialog open.
    pub(crate) fn key(&mut self, key: KeyEvent, now: Instant) -> Routed {
        let armed = self.armed(now);
        let Some(modal) = self.open.front_mut() else {
            return Routed::Editor;
        };
        // Reading is never an answer: the body scrolls even while answers are held.
        let reading = matches!(key.code, KeyCode::PageUp | KeyCode::PageDown);
        if armed || reading {
            match modal.key(key) {
                ModalKey::Ignored => {}
                taken => return Routed::Dialog(taken),
            }
        }
        self.guard.typed(now);
        match key.code {
            // Typed ahead, these would send the prompt or cancel the turn: neither was meant
            // for a question that appeared under the fingers.
            KeyCode::Enter | KeyCode::Esc if !armed => Routed::Dropped,
            _ => Routed::Editor,
        }
    }

    /// A paste with a dialog open: the dialog's when it is typing words, else the editor's.
    pub(crate) fn paste(&mut self, text: &str, now: Instant) -> Option<ModalKey> {
        let armed = self.armed(now);
        if armed && self.open.front_mut().is_some_and(|m| m.paste(text)) {
            return Some(ModalKey::Moved);
        }
        self.guard.typed(now);
        None
    }

    /// Scrolls the dialog's body; false when no dialog is open.
    pub(crate) fn scroll(&mut self, scroll: crate::scroll::Scroll) -> bool {
        match self.open.front_mut() {
            Some(m) => {
                m.scroll(scroll);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        PermissionOption, PermissionOptionKind, ToolCallUpdate, ToolCallUpdateFields,
    };

    use super::*;

    fn request() -> RequestPermissionRequest {
        RequestPermissionRequest::new(
            "s",
            ToolCallUpdate::new(
                "c",
                ToolCallUpdateFields::new().title("bash ls".to_string()),
            ),
            vec![
                PermissionOption::new("a", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new("r", "Reject", PermissionOptionKind::RejectOnce),
            ],
        )
    }

    #[test]
    fn keys_typed_while_it_opens_go_to_the_editor() {
        let mut q = PermissionQueue::default();
        q.set_hold(super::super::DEFAULT_HOLD);
        q.push(request(), None);
        let shown = q.front().map(|m| m.shown).unwrap_or_else(Instant::now);
        let ms = |n| shown + Duration::from_millis(n);
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        assert_eq!(q.key(key('1'), ms(10)), Routed::Editor);
        assert_eq!(
            q.key(KeyEvent::from(KeyCode::Enter), ms(20)),
            Routed::Dropped
        );
        assert_eq!(q.arms_at(ms(30)), Some(ms(520)));
        // Typing on holds it; a pause arms it.
        assert_eq!(q.key(key('x'), ms(400)), Routed::Editor);
        assert_eq!(q.key(key('1'), ms(700)), Routed::Editor);
        // A key that is not the dialog's goes to the editor even when armed, and holds it.
        assert_eq!(q.key(key('q'), ms(1300)), Routed::Editor);
        assert_eq!(q.key(key('1'), ms(1400)), Routed::Editor);
        assert!(matches!(
            q.key(key('1'), ms(2000)),
            Routed::Dialog(ModalKey::Answered(_))
        ));
    }
}
