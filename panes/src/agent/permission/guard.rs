//! The type-ahead guard: a permission dialog that has just opened, or that opened while the
//! user was typing, takes no answer until the keys have paused. Keys typed meanwhile stay
//! in the prompt editor, so text typed for the prompt never answers a question it never saw.

use std::time::{Duration, Instant};

/// How long a dialog holds its answer keys by default: after it appears and after the last
/// key typed into the pane. Fast typists leave 100–250 ms between keys and a reader needs
/// well over a second to take in a question, so half a second separates the two.
pub const DEFAULT_HOLD: Duration = Duration::from_millis(500);

/// When the answer keys of a dialog take effect.
#[derive(Debug, Clone)]
pub(crate) struct TypeAheadGuard {
    hold: Duration,
    /// The last key typed into the pane that no dialog took.
    last_typed: Option<Instant>,
}

/// No hold until the workspace sets its configured one (pane tests answer at once).
impl Default for TypeAheadGuard {
    fn default() -> Self {
        TypeAheadGuard {
            hold: Duration::ZERO,
            last_typed: None,
        }
    }
}

impl TypeAheadGuard {
    /// Sets how long keys are held (zero: never).
    pub(crate) fn set_hold(&mut self, hold: Duration) {
        self.hold = hold;
    }

    /// A key was typed into the pane and not taken by a dialog.
    pub(crate) fn typed(&mut self, now: Instant) {
        self.last_typed = Some(now);
    }

    /// When a dialog shown at `shown` takes answers.
    pub(crate) fn arms_at(&self, shown: Instant) -> Instant {
        let after_typing = self.last_typed.map_or(shown, |t| t + self.hold);
        (shown + self.hold).max(after_typing)
    }

    /// Whether a dialog shown at `shown` takes answers at `now`.
    pub(crate) fn armed(&self, shown: Instant, now: Instant) -> bool {
        self.hold.is_zero() || now >= self.arms_at(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_after_the_dialog_appears_and_after_each_key() {
        let mut g = TypeAheadGuard::default();
        g.set_hold(DEFAULT_HOLD);
        let shown = Instant::now();
        let ms = |n| Duration::from_millis(n);
        assert!(!g.armed(shown, shown));
        assert!(!g.armed(shown, shown + ms(499)));
        assert!(g.armed(shown, shown + ms(500)));
        // Typing goes on: each key pushes the answer keys back.
        g.typed(shown + ms(400));
        assert!(!g.armed(shown, shown + ms(800)));
        assert!(g.armed(shown, shown + ms(900)));
        // A key typed long before the dialog opened holds nothing beyond the opening.
        let later = shown + ms(5000);
        assert_eq!(g.arms_at(later), later + ms(500));
        g.set_hold(Duration::ZERO);
        assert!(g.armed(later, later));
    }
}
