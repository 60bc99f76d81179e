//! `docs/KEYMAPS.md`, generated from the command registry and the built-in keymap so the
//! page cannot drift from the code (a test compares them).

use std::fmt::Write;

use super::{Command, Key, KeyContext, Keymap};

/// The full text of `docs/KEYMAPS.md` for `keymap` (the built-in one in the repository).
pub fn render_keymaps_doc(keymap: &Keymap) -> String {
    let mut out = String::new();
    let prefix = cell_key(keymap.prefix_key());
    out.push_str(
        "# Keymaps\n\n\
         <!-- Generated from app/src/keymap/commands.rs and keymaps/default.toml. Do not edit:\n     \
         run `MARCH_UPDATE_DOCS=1 cargo test -p march keymaps_doc_is_current` instead. -->\n\n",
    );
    let _ = write!(
        out,
        "Every key in March triggers a named command. The bindings are data: the defaults live in\n\
         `keymaps/default.toml` (built into the binary) and your own file overrides them per key.\n\n\
         ## How keys are read\n\n\
         1. The **prefix key**, {prefix} by default, works like tmux's: press it, then one key from\n   \
         the `[prefix]` table. A hint lists those keys while March waits. Esc or any unbound key\n   \
         cancels. Pressing the prefix twice sends the prefix key itself to the pane. The resize\n   \
         keys (`pane.grow-*`) repeat: for half a second after one, its key works again without\n   \
         the prefix (tmux's repeat-time), each press starting the time again.\n\
         2. **Direct keys** (`[direct]`) work anywhere without the prefix. There are few of them, chosen\n   \
         not to collide with shells, editors or the prompt editor.\n\
         3. The focused pane's table (`[agent]` for an agent pane).\n\
         4. Anything else goes to the pane: for an agent pane, the prompt editor.\n\n"
    );
    out.push_str(
        "## Changing keys\n\n\
         Put a `keymap.toml` in March's config directory (`$MARCH_HOME`, else\n\
         `$XDG_CONFIG_HOME/march`, else `~/.config/march`; see [CONFIG.md](CONFIG.md)). It uses the\n\
         same tables as the default file. A key you bind replaces the default binding for that key\n\
         only; `\"none\"` unbinds a key; `clear-defaults = true` starts from an empty keymap (the\n\
         prefix key stays unless you set `prefix-key`).\n\n\
         ```toml\n\
         prefix-key = \"ctrl-b\"          # tmux's prefix instead of ctrl-a\n\n\
         [prefix]\n\
         v = \"pane.split-right\"\n\
         s = \"pane.split-down\"\n\
         \"%\" = \"none\"                  # unbind\n\n\
         [direct]\n\
         alt-left = \"none\"             # give alt-left back to the pane\n\
         ```\n\n\
         Keys are written `ctrl-a`, `alt-enter`, `shift-tab`, `ctrl-alt-x`, `f1`…`f24`, `pageup`,\n\
         `pagedown`, `home`, `end`, `insert`, `delete`, `backspace`, `esc`, `enter`, `tab`, `space`,\n\
         the arrows `up`/`down`/`left`/`right`, or a single character (`\"%\"`, `\"?\"`, `\"-\"`).\n\
         An uppercase letter means shift: `H` is shift-h. Quote keys that are not plain words.\n\n\
         Mistakes do not stop March: each one is reported with the file and line (for example\n\
         ``keymap.toml:7: [prefix] `q`: unknown command `app.exit` ``), that entry is skipped and\n\
         the default stays.\n\n\
         ## Default bindings\n\n",
    );
    for &context in KeyContext::ALL {
        let _ = writeln!(out, "### `[{}]`\n\n{}\n", context.table(), context.doc());
        out.push_str("| key | command | what it does |\n|---|---|---|\n");
        for (key, command) in keymap.bindings(context) {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} |",
                cell_key(key),
                command.name(),
                command.doc()
            );
        }
        out.push('\n');
    }
    out.push_str(TURN_KEYS);
    out.push_str(LOSING_WORK);
    out.push_str(COPY_MODE);
    out.push_str(
        "## All commands\n\n\
         Every command can be bound in any table. Those without a default key are there for your\n\
         own keymap.\n\n\
         | command | what it does | default keys |\n|---|---|---|\n",
    );
    for &command in Command::ALL {
        let keys: Vec<String> = KeyContext::ALL
            .iter()
            .flat_map(|&context| {
                let prefix = &prefix;
                keymap
                    .keys_for(context, command)
                    .into_iter()
                    .map(move |key| {
                        let key = cell_key(key);
                        match context {
                            KeyContext::Prefix => format!("{prefix} {key}"),
                            _ => key,
                        }
                    })
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            command.name(),
            command.doc(),
            keys.join(", ")
        );
    }
    out
}

/// What the agent pane's keys do while a turn runs, and whose behaviour they follow.
const TURN_KEYS: &str = "## Typing while a turn runs\n\n\
The editor stays yours while the agent works. Enter steers the running turn and Esc stops it\n\
giving back what was queued, as in Claude Code; a follow-up is queued apart from steering, as\n\
Codex's Tab does (`alt-enter` here, since `tab` completes). Each message waits under the\n\
editor, marked with what it waits for, until the agent has it.\n\n\
| key | while a turn runs |\n|---|---|\n\
| `enter` | steer: the message goes into the running turn before the agent's next model call (`steer`); a `!command` waits for the turn's end (`next`) |\n\
| `alt-enter` | follow-up: the message goes to the agent when it would otherwise stop (`follow-up`) |\n\
| `up` | on an empty prompt: the last queued message back into the editor, and back from the agent |\n\
| `esc`, or `ctrl-c` on an empty prompt | cancel the turn: every queued message comes back into the editor, oldest first and before what you were typing, and none runs until you send it again; nothing typed is lost |\n\n\
A message the agent cannot take into its turn (an agent without March's queue extension, or\n\
one the turn ended before delivering) and a prompt `march send` gives a busy session wait as\n\
`next`: each runs as a prompt of its own after a turn that ends normally, and a cancel or a\n\
failed turn gives them back to the editor with the rest.\n\n";

/// How the keys and clicks that could lose work ask first or can be undone.
const LOSING_WORK: &str = "## Keys that could lose work\n\n\
They ask first, or what they did can be undone.\n\n\
| what | how it is kept safe |\n|---|---|\n\
| `pane.close` (`ctrl-a` `x`; `q` in a diff pane) | an idle pane closes at once. When closing it would stop a turn (running, or waiting for a permission answer) of a session no other pane shows, or a program other than the shell in a shell pane's foreground (`vim`, a build), the status bar says what and the same key again goes ahead; any other key, or a click, leaves the pane open. `tab.close` and `app.quit` ask the same way. |\n\
| `diff.revert-hunk`, `diff.revert-file` (`r`, `R` in a diff pane) | each is pressed twice. Reverting a file the session created removes it. `diff.undo-revert` (`U`) undoes the pane's reverts, newest first: the exact bytes the revert replaced come back (a file it removed is made again, with its permissions), unless the file changed since the revert. |\n\
| clicks | the first click on a pane that is not focused only focuses it. A click on an edit in the focused agent pane's transcript shows that file in the session's diff pane (opening it beside) but leaves the focus on the agent pane, so the keys typed next go to the prompt and cannot revert anything; the diff pane's keys work once you focus it (a click on it, or `ctrl-a` and an arrow). |\n\n";

/// Copy mode's keys, the same in shell and agent panes (copy mode takes every key while it
/// is on, so they are not keymap tables).
const COPY_MODE: &str = "## Copy mode\n\n\
`copy.mode` starts it in the focused pane, a shell's history and screen or an agent's\n\
transcript, with a cursor at the last line shown; the status shows where it is.\n\n\
| key | what it does |\n|---|---|\n\
| `h` `j` `k` `l`, arrows | move |\n\
| `w` `b` `e` | next word, word back, word end |\n\
| `0` `^` `$` | line start, first character, line end |\n\
| `g` `G`, `home` `end` | first line, last line |\n\
| `H` `M` `L` | top, middle, bottom of the view |\n\
| `ctrl-u` `ctrl-d`, `ctrl-b` `ctrl-f`, `pageup` `pagedown` | half a page, a page |\n\
| `v`, `V` | select characters, whole lines (again: stop selecting) |\n\
| `/`, `?` | search forward, backward as you type (smart case: a capital letter matches case); every match on screen is marked |\n\
| `n`, `N` | next, previous match |\n\
| `y`, `enter` | copy the selection (OSC 52) and leave |\n\
| `esc` | drop the selection, then leave |\n\
| `q`, `ctrl-c` | leave |\n\
| `o` | in an agent pane: expand or collapse the tool call or thinking under the cursor |\n\n\
In an agent pane what is copied is the text as written: blocks of the agent's answer the\n\
selection covers whole come as their markdown source, a code block's rows as its lines\n\
uncut, wrapped rows of a paragraph joined; the rest as drawn.\n\n\
The mouse in an agent pane: drag to select and copy, double-click copies a word,\n\
triple-click a line; a click on the first row of a tool call, thinking or a compaction\n\
expands or collapses that one block (`transcript.toggle-tools` and\n\
`transcript.toggle-thinking` set them all); a click elsewhere on an edit opens its diff.\n\n";

/// A key as a Markdown table cell: code, with `|` escaped so it does not split the cell.
fn cell_key(key: Key) -> String {
    format!("`{}`", key.to_string().replace('|', "\\|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keymaps_doc_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/KEYMAPS.md");
        let generated = render_keymaps_doc(&Keymap::defaults());
        if std::env::var_os("MARCH_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == generated,
            "docs/KEYMAPS.md is stale; run `MARCH_UPDATE_DOCS=1 cargo test -p march keymaps_doc_is_current`"
        );
    }

    #[test]
    fn doc_lists_every_command_and_escapes_pipes() {
        let doc = render_keymaps_doc(&Keymap::defaults());
        for &command in Command::ALL {
            assert!(
                doc.contains(&format!("| `{}` |", command.name())),
                "{}",
                command.name()
            );
        }
        assert!(doc.contains("| `\\|` | `pane.split-right` |"));
        assert!(doc.contains("`ctrl-a` `%`"));
    }
}
