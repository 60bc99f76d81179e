//! The conversation a leaf move leaves, held so that moving back puts it in place again
//! instead of the agent replaying it: flipping between two branches of a long session costs
//! what differs at the far end, not the whole way back.

use std::collections::HashMap;

use super::{Block, Role, Transcript};

/// A move of the session's leaf, as the agent reported it (`_march/session/branch`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BranchMove<'a> {
    /// `(k, of, text)`: the first `k` of the `of` user messages shown stay, the `k`-th
    /// reading `text`; none: nothing stays.
    pub kept: Option<(usize, usize, Option<&'a str>)>,
    /// The leaf left.
    pub left: Option<&'a str>,
    /// The new leaf.
    pub leaf: Option<&'a str>,
    /// The agent replays nothing: the conversation the pane holds for `leaf` is the path's.
    pub held: bool,
}

/// What the pane showed of the path ending at `leaf` after its first `at` blocks, which it
/// still shows as they were (a path never changes once written, so it stays that path's).
#[derive(Debug)]
pub(crate) struct HeldBranch {
    leaf: String,
    at: usize,
    tail: Tail,
}

/// Blocks cut off the end of a transcript, with their index entries counted from the first.
#[derive(Debug, Default)]
struct Tail {
    blocks: Vec<Block>,
    tools: Vec<(String, usize)>,
    messages: Vec<((Role, String), usize)>,
    compactions: Vec<(String, usize)>,
}

impl Transcript {
    /// The leaf moved: what stays is kept and the rest is held for the leaf left (or, when
    /// the agent replays nothing, the rest is swapped with what was held for the new leaf).
    /// False, changing nothing, when the view is not what the agent expects (or holds
    /// nothing for the new leaf): the caller clears it and asks for the whole path.
    pub(crate) fn move_branch(&mut self, moved: &BranchMove<'_>) -> bool {
        let (at, back) = if moved.held {
            match self.held.take() {
                Some(held) if moved.leaf == Some(held.leaf.as_str()) => (held.at, held.tail),
                other => {
                    self.held = other;
                    return false;
                }
            }
        } else {
            let at = match moved.kept {
                Some((kept, of, last)) => match self.user_message_cut(kept, of, last) {
                    Some(at) => at,
                    None => return false,
                },
                None => 0,
            };
            (at, Tail::default())
        };
        let left = self.split_off(at);
        self.put_back(back);
        self.held = moved.left.map(|leaf| HeldBranch {
            leaf: leaf.to_string(),
            at,
            tail: left,
        });
        true
    }

    /// The leaf whose conversation the pane holds, for a move back.
    pub(crate) fn held_leaf(&self) -> Option<&str> {
        self.held.as_ref().map(|h| h.leaf.as_str())
    }

    /// Block `i` changed: a held conversation that follows it no longer follows what the
    /// pane shows.
    pub(super) fn held_before(&mut self, i: usize) {
        if self.held.as_ref().is_some_and(|h| i < h.at) {
            self.held = None;
        }
    }

    /// The blocks from `at` on, taken out with their index entries.
    fn split_off(&mut self, at: usize) -> Tail {
        let at = at.min(self.blocks.len());
        let tail = Tail {
            blocks: self.blocks.split_off(at),
            tools: split_index(&mut self.tools, at),
            messages: split_index(&mut self.messages, at),
            compactions: split_index(&mut self.compactions, at),
        };
        // A plan replaces itself within one turn; a cut ends that turn.
        self.plan = self.plan.filter(|&i| i < at);
        self.changed.retain(|&i| i < at);
        self.is_changed.truncate(at);
        self.reset = true;
        tail
    }

    /// `tail` at the end, its index entries with it.
    fn put_back(&mut self, tail: Tail) {
        let at = self.blocks.len();
        self.blocks.extend(tail.blocks);
        self.tools.extend(shifted(tail.tools, at));
        self.messages.extend(shifted(tail.messages, at));
        self.compactions.extend(shifted(tail.compactions, at));
        self.is_changed.resize(self.blocks.len(), false);
    }
}

/// Index entries counted from block `at`.
fn shifted<K>(entries: Vec<(K, usize)>, at: usize) -> impl Iterator<Item = (K, usize)> {
    entries.into_iter().map(move |(k, i)| (k, i + at))
}

/// The entries of `index` at or after `at`, counted from `at`; they leave `index`.
fn split_index<K: std::hash::Hash + Eq + Clone>(
    index: &mut HashMap<K, usize>,
    at: usize,
) -> Vec<(K, usize)> {
    let moved: Vec<K> = index
        .iter()
        .filter(|(_, i)| **i >= at)
        .map(|(k, _)| k.clone())
        .collect();
    moved
        .into_iter()
        .filter_map(|k| index.remove(&k).map(|i| (k, i - at)))
        .collect()
}
