//! The conversation a leaf move leaves, held so that moving back puts it in place again
//! instead of the agent replaying it: flipping between two branches of a long session costs
//! what differs at the far end, not the whole way back.

use super::Transcript;

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
    /// The agent replays nothing: the conversation the pane holds for `leaf` is the path.
    pub held: bool,
}

/// What the pane showed of the path ending at `leaf` when the leaf left it. A path never
/// changes once written, so it stays what that path shows.
#[derive(Debug)]
pub(crate) struct HeldBranch {
    leaf: String,
    view: Box<Transcript>,
}

impl Transcript {
    /// The leaf moved: the conversation shown is held for the leaf left, and what stays of
    /// it is kept (or, when the agent replays nothing, what was held for the new leaf is
    /// shown again). False, changing nothing, when the view is not what the agent expects
    /// (or holds nothing for the new leaf): the caller clears it and asks for the whole path.
    pub(crate) fn move_branch(&mut self, moved: &BranchMove<'_>) -> bool {
        let next = if moved.held {
            match self.held.take() {
                Some(held) if moved.leaf == Some(held.leaf.as_str()) => *held.view,
                other => {
                    self.held = other;
                    return false;
                }
            }
        } else {
            let cut = match moved.kept {
                Some((kept, of, last)) => match self.user_message_cut(kept, of, last) {
                    Some(cut) => cut,
                    None => return false,
                },
                None => 0,
            };
            self.prefix(cut)
        };
        let facts = std::mem::take(&mut self.facts);
        let mut left = std::mem::replace(self, next);
        left.held = None;
        self.facts = facts;
        self.reset = true;
        self.held = moved.left.map(|leaf| HeldBranch {
            leaf: leaf.to_string(),
            view: Box::new(left),
        });
        true
    }

    /// The leaf whose conversation the pane holds, for a move back.
    pub(crate) fn held_leaf(&self) -> Option<&str> {
        self.held.as_ref().map(|h| h.leaf.as_str())
    }

    /// A copy of the conversation before block `cut`.
    fn prefix(&self, cut: usize) -> Transcript {
        let before = |index: &usize| *index < cut;
        Transcript {
            blocks: self.blocks[..cut.min(self.blocks.len())].to_vec(),
            tools: filtered(&self.tools, before),
            messages: filtered(&self.messages, before),
            compactions: filtered(&self.compactions, before),
            plan: self.plan.filter(before),
            changed: Vec::new(),
            is_changed: vec![false; cut.min(self.blocks.len())],
            reset: true,
            rejected: self.rejected.clone(),
            held: None,
            facts: Default::default(),
        }
    }
}

/// The entries of `index` that `keep` keeps.
fn filtered<K: std::hash::Hash + Eq + Clone>(
    index: &std::collections::HashMap<K, usize>,
    keep: impl Fn(&usize) -> bool,
) -> std::collections::HashMap<K, usize> {
    index
        .iter()
        .filter(|(_, i)| keep(i))
        .map(|(k, i)| (k.clone(), *i))
        .collect()
}
