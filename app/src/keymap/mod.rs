//! Keymaps as data: `keymaps/default.toml` built in, `<config dir>/keymap.toml` overriding it
//! per key, every action a named [`Command`] from one registry, and a tmux-style prefix driven
//! by [`KeyDispatcher`].

// Wired into the UI by the workspace UI.

mod commands;
mod dispatch;
// Only the test that keeps docs/KEYMAPS.md current renders it.
#[cfg_attr(not(test), allow(dead_code))]
mod docs;
mod error;
mod keys;
mod load;

use std::collections::HashMap;

use std::path::Path;

use crossterm::event::KeyEvent;

pub use commands::Command;
pub use dispatch::{Dispatch, KeyDispatcher};
pub use error::KeymapError;
pub use keys::Key;
pub use load::{DEFAULT_KEYMAP, apply_toml};

/// A table of bindings: where a key is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyContext {
    /// `[prefix]`: the key pressed right after the prefix key.
    Prefix,
    /// `[direct]`: keys that work anywhere without the prefix.
    Direct,
    /// `[agent]`: keys in a focused agent pane.
    Agent,
    /// `[shell]`: keys in a focused shell pane.
    Shell,
    /// `[diff]`: keys in a focused diff pane.
    Diff,
    /// `[diagnostics]`: keys in a focused diagnostics pane.
    Diagnostics,
}

impl KeyContext {
    /// Every context, in the order files and docs list them.
    pub const ALL: &'static [KeyContext] = &[
        KeyContext::Prefix,
        KeyContext::Direct,
        KeyContext::Agent,
        KeyContext::Shell,
        KeyContext::Diff,
        KeyContext::Diagnostics,
    ];

    /// The TOML table that holds this context's bindings.
    pub fn table(self) -> &'static str {
        match self {
            KeyContext::Prefix => "prefix",
            KeyContext::Direct => "direct",
            KeyContext::Agent => "agent",
            KeyContext::Shell => "shell",
            KeyContext::Diff => "diff",
            KeyContext::Diagnostics => "diagnostics",
        }
    }

    /// The context whose table is called `name`.
    pub fn from_table(name: &str) -> Option<KeyContext> {
        KeyContext::ALL
            .iter()
            .copied()
            .find(|context| context.table() == name)
    }

    /// One line saying when these keys apply.
    #[cfg_attr(not(test), allow(dead_code))] // Used by the generated docs.
    pub fn doc(self) -> &'static str {
        match self {
            KeyContext::Prefix => "Keys pressed after the prefix key.",
            KeyContext::Direct => "Keys that work anywhere, without the prefix.",
            KeyContext::Agent => {
                "Keys in a focused agent pane; other keys go to the prompt editor."
            }
            KeyContext::Shell => "Keys in a focused shell pane; other keys go to its program.",
            KeyContext::Diff => "Keys in a focused diff pane.",
            KeyContext::Diagnostics => "Keys in a focused diagnostics pane.",
        }
    }
}

/// The prefix key of the built-in keymap, also kept when a user file clears the defaults.
const DEFAULT_PREFIX: Key = Key {
    code: crossterm::event::KeyCode::Char('a'),
    modifiers: crossterm::event::KeyModifiers::CONTROL,
};

/// Resolved key bindings: the prefix key and one table per [`KeyContext`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    prefix: Key,
    bindings: HashMap<(KeyContext, Key), Command>,
}

impl Keymap {
    /// A keymap with no bindings and the default prefix.
    pub fn empty() -> Keymap {
        Keymap {
            prefix: DEFAULT_PREFIX,
            bindings: HashMap::new(),
        }
    }

    /// The built-in keymap.
    pub fn defaults() -> Keymap {
        // The built-in file is checked by tests, so its errors cannot happen in a release.
        apply_toml(
            Keymap::empty(),
            DEFAULT_KEYMAP,
            "built-in keymaps/default.toml",
        )
        .0
    }

    /// The built-in keymap with `<config_dir>/keymap.toml` applied on top when it exists.
    /// Never fails: every problem is reported and the default stays for whatever it touched.
    pub fn load(config_dir: &Path) -> (Keymap, Vec<KeymapError>) {
        load::load_keymap(config_dir)
    }

    /// The prefix key as a key press, e.g. to forward it to a pane on
    /// [`Dispatch::SendPrefix`].
    pub fn prefix(&self) -> KeyEvent {
        self.prefix.to_event()
    }

    /// The prefix key.
    pub fn prefix_key(&self) -> Key {
        self.prefix
    }

    /// The keys bound to `command` in `context` (for the generated docs).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn keys_for(&self, context: KeyContext, command: Command) -> Vec<Key> {
        self.bindings(context)
            .into_iter()
            .filter(|(_, bound)| *bound == command)
            .map(|(key, _)| key)
            .collect()
    }

    /// The command `key` triggers in `context`. After the prefix, the prefix key itself means
    /// [`Command::PrefixSend`] unless `[prefix]` binds it to something else.
    pub fn lookup_key(&self, context: KeyContext, key: Key) -> Option<Command> {
        let bound = self.bindings.get(&(context, key)).copied();
        match (bound, context) {
            (None, KeyContext::Prefix) if key == self.prefix => Some(Command::PrefixSend),
            _ => bound,
        }
    }

    /// Every binding of `context`, including the implicit prefix-twice rule, in registry
    /// order (then by key) so help screens are stable.
    pub fn bindings(&self, context: KeyContext) -> Vec<(Key, Command)> {
        let mut list: Vec<(Key, Command)> = self
            .bindings
            .iter()
            .filter(|((ctx, _), _)| *ctx == context)
            .map(|((_, key), command)| (*key, *command))
            .collect();
        if context == KeyContext::Prefix && !self.bindings.contains_key(&(context, self.prefix)) {
            list.push((self.prefix, Command::PrefixSend));
        }
        // Within a command, single characters (`h`) before named keys (`left`).
        list.sort_by_cached_key(|(key, command)| {
            let text = key.to_string();
            (*command, text.chars().count() > 1, text)
        });
        list
    }

    /// The which-key hint for `context`: (key, doc) pairs, sorted like [`Keymap::bindings`].
    pub fn hints(&self, context: KeyContext) -> Vec<(String, &'static str)> {
        self.bindings(context)
            .into_iter()
            .map(|(key, command)| (key.to_string(), command.doc()))
            .collect()
    }

    fn bind(&mut self, context: KeyContext, key: Key, command: Command) {
        self.bindings.insert((context, key), command);
    }

    fn unbind(&mut self, context: KeyContext, key: Key) {
        self.bindings.remove(&(context, key));
    }

    fn clear(&mut self) {
        self.bindings.clear();
    }

    fn set_prefix(&mut self, key: Key) {
        self.prefix = key;
    }
}

impl Default for Keymap {
    /// The built-in keymap.
    fn default() -> Self {
        Keymap::defaults()
    }
}

#[cfg(test)]
mod tests;
