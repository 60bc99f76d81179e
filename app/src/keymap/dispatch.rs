//! The prefix state machine: turns key events into commands, tmux style.

use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;

use super::{Command, Key, KeyContext, Keymap};

/// What a key event means to the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Run this command.
    Command(Command),
    /// The prefix key was pressed; show the which-key hint and wait for the next key.
    PrefixStarted,
    /// The key after the prefix was Esc or unbound; hide the hint, nothing else happens.
    PrefixCancelled,
    /// Forward the prefix key itself ([`Keymap::prefix`]) to the focused pane.
    SendPrefix,
    /// No binding: forward the key to the focused pane.
    Unbound(KeyEvent),
}

/// How long after a repeating command its key works again without the prefix (tmux's
/// default repeat-time); each repeat starts the time again.
pub const REPEAT_TIME: Duration = Duration::from_millis(500);

/// Tracks whether the prefix key was just pressed. One per workspace.
#[derive(Debug, Clone, Default)]
pub struct KeyDispatcher {
    pending: bool,
    /// Until when a key bound in `[prefix]` to a repeating command runs it without the
    /// prefix.
    repeat_until: Option<Instant>,
}

impl KeyDispatcher {
    /// A dispatcher waiting for an ordinary key.
    pub fn new() -> KeyDispatcher {
        KeyDispatcher::default()
    }

    /// Whether the prefix was pressed and the next key goes to `[prefix]` (hint visible).
    pub fn prefix_pending(&self) -> bool {
        self.pending
    }

    /// Forgets a pending prefix, e.g. when focus moves to a modal.
    pub fn cancel(&mut self) {
        self.pending = false;
        self.repeat_until = None;
    }

    /// Decides what `event` means. `pane` is the focused pane's table (`Agent` for an agent
    /// pane; `Direct` for a pane without one), looked up after `[direct]`. Callers drop key
    /// releases first (terminals with the kitty protocol send them): every event is a press.
    pub fn dispatch(&mut self, keymap: &Keymap, pane: KeyContext, event: KeyEvent) -> Dispatch {
        self.dispatch_at(keymap, pane, event, Instant::now())
    }

    /// [`Self::dispatch`] at time `now` (the repeat time is measured with it).
    pub fn dispatch_at(
        &mut self,
        keymap: &Keymap,
        pane: KeyContext,
        event: KeyEvent,
        now: Instant,
    ) -> Dispatch {
        let key = Key::from_event(&event);
        if let Some(until) = self.repeat_until.take()
            && now < until
            && let Some(command) = keymap
                .lookup_key(KeyContext::Prefix, key)
                .filter(|c| c.repeats())
        {
            self.repeat_until = Some(now + REPEAT_TIME);
            return Dispatch::Command(command);
        }
        if self.pending {
            self.pending = false;
            return match keymap.lookup_key(KeyContext::Prefix, key) {
                Some(Command::PrefixSend) => Dispatch::SendPrefix,
                Some(command) => {
                    if command.repeats() {
                        self.repeat_until = Some(now + REPEAT_TIME);
                    }
                    Dispatch::Command(command)
                }
                // Esc (unless bound) and every unbound key just close the hint, as in tmux.
                None => Dispatch::PrefixCancelled,
            };
        }
        if key == keymap.prefix_key() {
            self.pending = true;
            return Dispatch::PrefixStarted;
        }
        let command = keymap
            .lookup_key(KeyContext::Direct, key)
            .or_else(|| keymap.lookup_key(pane, key));
        match command {
            Some(Command::PrefixSend) => Dispatch::SendPrefix,
            Some(command) => Dispatch::Command(command),
            None => Dispatch::Unbound(event),
        }
    }
}
