//! The UI places a theme styles ([`Slot`]) and their dotted TOML keys.

/// Defines [`Slot`] with its key table, so a variant and its key cannot drift apart.
macro_rules! slots {
    ($($(#[$meta:meta])* $variant:ident = $key:literal,)*) => {
        /// A place in the UI that has a style. Each slot has a dotted TOML key ([`Slot::key`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Slot {
            $($(#[$meta])* $variant,)*
        }

        impl Slot {
            /// Every slot, in the order themes and docs list them.
            pub const ALL: &'static [Slot] = &[$(Slot::$variant,)*];

            /// The slot's dotted key in a theme's `[styles]` table, e.g. `ui.text`.
            pub fn key(self) -> &'static str {
                match self {
                    $(Slot::$variant => $key,)*
                }
            }
        }
    };
}

slots! {
    /// `ui.background`: the workspace background.
    Background = "ui.background",
    /// `ui.text`: ordinary text.
    Text = "ui.text",
    /// `ui.text.dim`: secondary text (timestamps, hints, collapsed blocks).
    TextDim = "ui.text.dim",
    /// `ui.border`: pane borders.
    Border = "ui.border",
    /// `ui.border.focused`: the focused pane's border.
    BorderFocused = "ui.border.focused",
    /// `ui.title`: pane titles.
    Title = "ui.title",
    /// `ui.title.focused`: the focused pane's title.
    TitleFocused = "ui.title.focused",
    /// `ui.statusbar`: the status bar.
    StatusBar = "ui.statusbar",
    /// `ui.statusbar.accent`: highlighted parts of the status bar (mode, active tab).
    StatusBarAccent = "ui.statusbar.accent",
    /// `ui.selection`: selected items in lists and completion menus.
    Selection = "ui.selection",
    /// `ui.hint`: the which-key hint and key names in help.
    Hint = "ui.hint",
    /// `ui.modal`: modal dialogs (permission requests).
    Modal = "ui.modal",
    /// `ui.modal.border`: their border.
    ModalBorder = "ui.modal.border",
    /// `ui.error`.
    Error = "ui.error",
    /// `ui.warning`.
    Warning = "ui.warning",
    /// `ui.success`.
    Success = "ui.success",
    /// `ui.info`.
    Info = "ui.info",
    /// `transcript.user`: the user's prompts.
    User = "transcript.user",
    /// `transcript.user.marker`: the marker before a prompt.
    UserMarker = "transcript.user.marker",
    /// `transcript.agent`: the agent's answer text.
    Agent = "transcript.agent",
    /// `transcript.thinking`: thinking text.
    Thinking = "transcript.thinking",
    /// `transcript.tool`: tool call titles.
    Tool = "transcript.tool",
    /// `transcript.tool.pending`: a tool call waiting (for permission or to start).
    ToolPending = "transcript.tool.pending",
    /// `transcript.tool.running`.
    ToolRunning = "transcript.tool.running",
    /// `transcript.tool.done`.
    ToolDone = "transcript.tool.done",
    /// `transcript.tool.failed`.
    ToolFailed = "transcript.tool.failed",
    /// `transcript.notice`: notices and system lines in a transcript.
    Notice = "transcript.notice",
    /// `markdown.heading`.
    Heading = "markdown.heading",
    /// `markdown.code`: inline code.
    InlineCode = "markdown.code",
    /// `markdown.codeblock`: code block background and unhighlighted code.
    CodeBlock = "markdown.codeblock",
    /// `markdown.link`.
    Link = "markdown.link",
    /// `markdown.quote`.
    Quote = "markdown.quote",
    /// `markdown.list-marker`.
    ListMarker = "markdown.list-marker",
    /// `markdown.emphasis`.
    Emphasis = "markdown.emphasis",
    /// `markdown.strong`.
    Strong = "markdown.strong",
    /// `markdown.rule`.
    Rule = "markdown.rule",
    /// `diff.added`.
    DiffAdded = "diff.added",
    /// `diff.removed`.
    DiffRemoved = "diff.removed",
    /// `diff.context`.
    DiffContext = "diff.context",
    /// `diff.header`: hunk headers and file names.
    DiffHeader = "diff.header",
    /// `prompt.text`: the prompt editor.
    PromptText = "prompt.text",
    /// `prompt.placeholder`: its placeholder.
    PromptPlaceholder = "prompt.placeholder",
    /// `terminal.ansi.0`: ANSI colour 0 (black) in shell panes (its foreground).
    Ansi0 = "terminal.ansi.0",
    /// `terminal.ansi.1`: ANSI colour 1 (red) in shell panes (its foreground).
    Ansi1 = "terminal.ansi.1",
    /// `terminal.ansi.2`: ANSI colour 2 (green) in shell panes (its foreground).
    Ansi2 = "terminal.ansi.2",
    /// `terminal.ansi.3`: ANSI colour 3 (yellow) in shell panes (its foreground).
    Ansi3 = "terminal.ansi.3",
    /// `terminal.ansi.4`: ANSI colour 4 (blue) in shell panes (its foreground).
    Ansi4 = "terminal.ansi.4",
    /// `terminal.ansi.5`: ANSI colour 5 (magenta) in shell panes (its foreground).
    Ansi5 = "terminal.ansi.5",
    /// `terminal.ansi.6`: ANSI colour 6 (cyan) in shell panes (its foreground).
    Ansi6 = "terminal.ansi.6",
    /// `terminal.ansi.7`: ANSI colour 7 (white) in shell panes (its foreground).
    Ansi7 = "terminal.ansi.7",
    /// `terminal.ansi.8`: ANSI colour 8 (bright black) in shell panes (its foreground).
    Ansi8 = "terminal.ansi.8",
    /// `terminal.ansi.9`: ANSI colour 9 (bright red) in shell panes (its foreground).
    Ansi9 = "terminal.ansi.9",
    /// `terminal.ansi.10`: ANSI colour 10 (bright green) in shell panes (its foreground).
    Ansi10 = "terminal.ansi.10",
    /// `terminal.ansi.11`: ANSI colour 11 (bright yellow) in shell panes (its foreground).
    Ansi11 = "terminal.ansi.11",
    /// `terminal.ansi.12`: ANSI colour 12 (bright blue) in shell panes (its foreground).
    Ansi12 = "terminal.ansi.12",
    /// `terminal.ansi.13`: ANSI colour 13 (bright magenta) in shell panes (its foreground).
    Ansi13 = "terminal.ansi.13",
    /// `terminal.ansi.14`: ANSI colour 14 (bright cyan) in shell panes (its foreground).
    Ansi14 = "terminal.ansi.14",
    /// `terminal.ansi.15`: ANSI colour 15 (bright white) in shell panes (its foreground).
    Ansi15 = "terminal.ansi.15",
}

impl Slot {
    /// The slot of ANSI colour `index` (0–15) in shell panes.
    pub fn ansi(index: u8) -> Option<Slot> {
        const ANSI: [Slot; 16] = [
            Slot::Ansi0,
            Slot::Ansi1,
            Slot::Ansi2,
            Slot::Ansi3,
            Slot::Ansi4,
            Slot::Ansi5,
            Slot::Ansi6,
            Slot::Ansi7,
            Slot::Ansi8,
            Slot::Ansi9,
            Slot::Ansi10,
            Slot::Ansi11,
            Slot::Ansi12,
            Slot::Ansi13,
            Slot::Ansi14,
            Slot::Ansi15,
        ];
        ANSI.get(usize::from(index)).copied()
    }

    /// The slot whose key is `key`, if any.
    pub fn from_key(key: &str) -> Option<Slot> {
        Slot::ALL.iter().copied().find(|slot| slot.key() == key)
    }
}

#[cfg(test)]
mod tests {
    use super::Slot;
    use std::collections::HashSet;

    #[test]
    fn keys_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for &slot in Slot::ALL {
            assert!(seen.insert(slot.key()), "duplicate key {}", slot.key());
            assert_eq!(Slot::from_key(slot.key()), Some(slot));
        }
        assert_eq!(Slot::from_key("ui.nope"), None);
    }

    #[test]
    fn ansi_slots_cover_the_sixteen_colours() {
        assert_eq!(Slot::ansi(0), Some(Slot::Ansi0));
        assert_eq!(Slot::ansi(15).map(Slot::key), Some("terminal.ansi.15"));
        assert_eq!(Slot::ansi(16), None);
    }

    #[test]
    fn keys_are_dotted_lowercase() {
        for &slot in Slot::ALL {
            let key = slot.key();
            assert!(key.contains('.'), "{key}");
            // Digits only as a last part (`terminal.ansi.3`).
            let (head, last) = key.rsplit_once('.').unwrap_or((key, ""));
            assert!(
                head.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-'),
                "{key}"
            );
            assert!(
                last.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    || last.chars().all(|c| c.is_ascii_digit()),
                "{key}"
            );
        }
    }
}
