//! Diff panes: what an agent changed, file by file, to review (and revert).

pub mod model;
pub mod view;

pub use model::{DiffLine, FileDiff, Hunk, LineKind, NoDiff};
pub use view::{DiffLayout, DiffView};

#[cfg(test)]
mod tests;
