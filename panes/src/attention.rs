//! What a session wants from the user, as the workspace's Output Router decides it, and how
//! every view shows it: a glyph, a theme slot, words, and an avatar's ring.

use crate::theme::Slot;

/// What a session wants from the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attention {
    /// Nothing runs and nothing is unseen.
    Idle,
    /// A turn runs.
    Working,
    /// A permission request (or another question) waits for an answer.
    NeedsYou,
    /// A turn ended and the user has not looked since.
    Done,
    /// A turn failed or the runner crashed, and the user has not looked since.
    Error,
}

impl Attention {
    /// Every state, in the order of [`Attention::index`].
    pub const ALL: [Attention; 5] = [
        Attention::Idle,
        Attention::Working,
        Attention::NeedsYou,
        Attention::Done,
        Attention::Error,
    ];

    /// Its place in [`Attention::ALL`].
    pub fn index(self) -> usize {
        match self {
            Attention::Idle => 0,
            Attention::Working => 1,
            Attention::NeedsYou => 2,
            Attention::Done => 3,
            Attention::Error => 4,
        }
    }

    /// One character for tab titles and compact badges.
    pub fn glyph(self) -> &'static str {
        match self {
            Attention::Idle => "·",
            Attention::Working => "●",
            Attention::NeedsYou => "!",
            Attention::Done => "✓",
            Attention::Error => "✗",
        }
    }

    /// The theme slot it is drawn in.
    pub fn slot(self) -> Slot {
        match self {
            Attention::NeedsYou => Slot::Warning,
            Attention::Error => Slot::Error,
            Attention::Done => Slot::Success,
            Attention::Working => Slot::Info,
            Attention::Idle => Slot::TextDim,
        }
    }

    /// It in words.
    pub fn words(self) -> &'static str {
        match self {
            Attention::Idle => "idle",
            Attention::Working => "working",
            Attention::NeedsYou => "needs you",
            Attention::Done => "done",
            Attention::Error => "error",
        }
    }
}
