//! What can be wrong with a theme, said with the file and line to fix.

/// A problem found while loading a theme. None is fatal: the loader always returns a usable
/// theme and reports these next to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    /// No built-in or user theme has this name.
    #[error("theme `{name}` not found (built in: {builtins}; user themes: {searched})")]
    NotFound {
        /// The requested name.
        name: String,
        /// The built-in names, comma separated.
        builtins: String,
        /// Where user themes were looked for.
        searched: String,
    },
    /// The name cannot be a file name (path separators, leading dot, empty).
    #[error("`{name}` is not a valid theme name (letters, digits, `-`, `_` and `.` only)")]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// The file exists but could not be read.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The file.
        file: String,
        /// Why not.
        reason: String,
    },
    /// The file is not valid TOML.
    #[error("{file}:{line}: TOML syntax error: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A colour is neither a palette name, `#rrggbb`, an ANSI name nor 0–255.
    #[error("{file}:{line}: unknown color `{color}` in `{key}`")]
    UnknownColor {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The style or palette key holding it.
        key: String,
        /// The colour as written.
        color: String,
    },
    /// A modifier name is not one March knows.
    #[error(
        "{file}:{line}: unknown modifier `{modifier}` in `{key}` (use bold, dim, italic, \
         underlined, reversed, crossed_out, hidden)"
    )]
    UnknownModifier {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The style key.
        key: String,
        /// The modifier as written.
        modifier: String,
    },
    /// A `[styles]` key names no slot; the entry is ignored.
    #[error("{file}:{line}: unknown style key `{key}` (ignored){hint}")]
    UnknownSlot {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The key as written.
        key: String,
        /// Extra advice, e.g. about quoting dotted keys; empty or starting with `; `.
        hint: String,
    },
    /// A key the format does not have; it is ignored.
    #[error("{file}:{line}: unknown field `{key}` (ignored)")]
    UnknownField {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The key as written.
        key: String,
    },
    /// A value has the wrong TOML type.
    #[error("{file}:{line}: `{key}` should be {expected}")]
    WrongType {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The key.
        key: String,
        /// What it should be.
        expected: &'static str,
    },
    /// `syntax` names no bundled syntect theme.
    #[error("{file}:{line}: unknown syntax theme `{name}` (available: {available})")]
    UnknownSyntaxTheme {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The name as written.
        name: String,
        /// The bundled names, comma separated.
        available: String,
    },
    /// `inherits` names a theme that does not exist.
    #[error("{file}:{line}: inherits unknown theme `{name}`")]
    UnknownParent {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The parent as written.
        name: String,
    },
    /// Following `inherits` comes back to a theme already in the chain.
    #[error("{file}:{line}: `inherits` makes a cycle: {chain}")]
    Cycle {
        /// The file whose `inherits` closes the cycle.
        file: String,
        /// 1-based line.
        line: usize,
        /// The chain, e.g. `a -> b -> a`.
        chain: String,
    },
}

impl ThemeError {
    /// Whether the problem only means something was ignored (the theme is otherwise as
    /// written), as opposed to a value that could not be used.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            ThemeError::UnknownSlot { .. } | ThemeError::UnknownField { .. }
        )
    }

    /// The 1-based line the problem is on, when it is about a place in a file.
    pub fn line(&self) -> Option<usize> {
        match self {
            ThemeError::NotFound { .. }
            | ThemeError::InvalidName { .. }
            | ThemeError::Read { .. } => None,
            ThemeError::Syntax { line, .. }
            | ThemeError::UnknownColor { line, .. }
            | ThemeError::UnknownModifier { line, .. }
            | ThemeError::UnknownSlot { line, .. }
            | ThemeError::UnknownField { line, .. }
            | ThemeError::WrongType { line, .. }
            | ThemeError::UnknownSyntaxTheme { line, .. }
            | ThemeError::UnknownParent { line, .. }
            | ThemeError::Cycle { line, .. } => Some(*line),
        }
    }
}
