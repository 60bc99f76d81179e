//! The memory part of the `profiles` layer: the project memory file, then the global ones by
//! name, as much as fits in the configured token budget.

use crate::memory::{MAX_READ_BYTES, Memory, MemoryFile, MemoryScope, read_file};

/// A cut file keeps at least this much, or is left out whole: a few words of a file help
/// less than the note that points at it.
const MIN_PART_BYTES: usize = 256;

/// Tokens are estimated as bytes / 4, as the agent loop's budget does.
const BYTES_PER_TOKEN: u64 = 4;

/// A memory file as the context carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryBlock {
    /// Project or global.
    pub scope: MemoryScope,
    /// The name the memory tool knows it by.
    pub name: String,
    /// Its text (trimmed), or the part that fitted.
    pub text: String,
    /// Whether the text is only the start of the file.
    pub cut: bool,
}

/// A memory file that did not fit (wholly or in part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmittedMemory {
    /// Project or global.
    pub scope: MemoryScope,
    /// The name the memory tool knows it by.
    pub name: String,
    /// Bytes of it that were shown (0: left out whole).
    pub shown_bytes: usize,
    /// The file's size in bytes.
    pub total_bytes: u64,
}

/// Memory files within the budget, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryLayer {
    /// The budget the blocks were fitted into, in tokens.
    pub budget_tokens: u64,
    /// What is shown, project file first.
    pub blocks: Vec<MemoryBlock>,
    /// What did not fit.
    pub omitted: Vec<OmittedMemory>,
}

/// `<memory scope="…" file="…">`, the name escaped for an attribute.
fn open_tag(scope: MemoryScope, name: &str) -> String {
    let name = name
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    format!("<memory scope=\"{}\" file=\"{name}\">", scope.as_str())
}

const CLOSE_TAG: &str = "</memory>";
const CUT_MARK: &str = "[… cut here: the rest is over the memory budget]";

/// The bytes a block takes in the prompt, tags and newlines included.
fn block_cost(scope: MemoryScope, name: &str, text_len: usize) -> usize {
    open_tag(scope, name).len() + 1 + text_len + 1 + CLOSE_TAG.len()
}

/// The longest start of `text` within `room` bytes, ending at a line end when there is one.
fn head(text: &str, room: usize) -> &str {
    let mut end = room.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl > 0 => text[..nl].trim_end(),
        _ => &text[..end],
    }
}

impl MemoryLayer {
    /// Read `memory`'s files into the budget: the project file first, then the global files
    /// by name, then the memory server's as mirrored; a file that does not fit is cut at a line end, and later ones are left out.
    /// Unreadable files are logged and skipped.
    pub fn load(memory: &Memory) -> Self {
        let budget = usize::try_from(memory.budget_tokens.saturating_mul(BYTES_PER_TOKEN))
            .unwrap_or(usize::MAX);
        let mut files = vec![memory.project()];
        match memory.global_files() {
            Ok(global) => files.extend(global),
            Err(e) => tracing::warn!("global memory skipped: {e}"),
        }
        match memory.remote_files() {
            Ok(remote) => files.extend(remote),
            Err(e) => tracing::warn!("remote memory skipped: {e}"),
        }
        let mut layer = MemoryLayer {
            budget_tokens: memory.budget_tokens,
            ..MemoryLayer::default()
        };
        let mut left = budget;
        for file in files {
            layer.add(file, &mut left);
        }
        layer
    }

    fn add(&mut self, file: MemoryFile, left: &mut usize) {
        let read = match read_file(&file.path, (*left).min(MAX_READ_BYTES)) {
            Ok(Some(read)) => read,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("memory file skipped: {e}");
                return;
            }
        };
        let text = if read.cut {
            read.text.trim_start()
        } else {
            read.text.trim()
        };
        if !read.cut && text.is_empty() {
            return;
        }
        let cost = block_cost(file.scope, &file.name, text.len());
        if !read.cut && cost <= *left {
            *left -= cost;
            self.blocks.push(MemoryBlock {
                scope: file.scope,
                name: file.name,
                text: text.to_string(),
                cut: false,
            });
            return;
        }
        let overhead = block_cost(file.scope, &file.name, CUT_MARK.len() + 1);
        let room = left.saturating_sub(overhead);
        let part = if room >= MIN_PART_BYTES {
            head(text, room)
        } else {
            ""
        };
        self.omitted.push(OmittedMemory {
            scope: file.scope,
            name: file.name.clone(),
            shown_bytes: part.len(),
            total_bytes: read.total_bytes,
        });
        if !part.is_empty() {
            self.blocks.push(MemoryBlock {
                scope: file.scope,
                name: file.name,
                text: part.to_string(),
                cut: true,
            });
        }
        // Later files must not jump ahead of one that was cut.
        *left = 0;
    }

    /// The memory blocks and, when something was left out, a note naming it; empty without
    /// memory.
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = self
            .blocks
            .iter()
            .map(|b| {
                let mark = if b.cut {
                    format!("\n{CUT_MARK}")
                } else {
                    String::new()
                };
                format!(
                    "{}\n{}{mark}\n{CLOSE_TAG}",
                    open_tag(b.scope, &b.name),
                    b.text
                )
            })
            .collect();
        if !self.omitted.is_empty() {
            let what: Vec<String> = self
                .omitted
                .iter()
                .map(|o| {
                    let how = if o.shown_bytes == 0 {
                        format!("not shown, {} bytes", o.total_bytes)
                    } else {
                        format!("first {} of {} bytes shown", o.shown_bytes, o.total_bytes)
                    };
                    format!("{} {} ({how})", o.scope.as_str(), o.name)
                })
                .collect();
            parts.push(format!(
                "<memory_note>Memory over the budget of {} tokens was left out: {}. The memory \
                 tool reads it (action \"read\" with that scope and file) and searches it \
                 (action \"search\").</memory_note>",
                self.budget_tokens,
                what.join("; ")
            ));
        }
        parts.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn setup(budget_tokens: u64) -> (tempfile::TempDir, Memory) {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory::new(
            tmp.path().join("data/memory"),
            tmp.path().join("proj"),
            Path::new(".march/memory.md"),
            budget_tokens,
        );
        fs::create_dir_all(&memory.global_dir).unwrap();
        fs::create_dir_all(memory.project_file.parent().unwrap()).unwrap();
        (tmp, memory)
    }

    #[test]
    fn no_files_render_nothing() {
        let (_tmp, memory) = setup(4000);
        let layer = MemoryLayer::load(&memory);
        assert!(layer.blocks.is_empty() && layer.omitted.is_empty());
        assert_eq!(layer.render(), "");
        fs::write(&memory.project_file, " \n\n").unwrap();
        assert_eq!(MemoryLayer::load(&memory).render(), "");
    }

    #[test]
    fn project_first_then_global_by_name_within_budget() {
        let (_tmp, memory) = setup(4000);
        fs::write(memory.global_dir.join("b.md"), "B-NOTE\n").unwrap();
        fs::write(memory.global_dir.join("a.md"), "A-NOTE\n").unwrap();
        fs::write(&memory.project_file, "## Build\n- PROJECT-NOTE\n").unwrap();
        let layer = MemoryLayer::load(&memory);
        assert!(layer.omitted.is_empty());
        assert_eq!(
            layer.render(),
            "<memory scope=\"project\" file=\".march/memory.md\">\n## Build\n- PROJECT-NOTE\n\
             </memory>\n\n<memory scope=\"global\" file=\"a.md\">\nA-NOTE\n</memory>\n\n\
             <memory scope=\"global\" file=\"b.md\">\nB-NOTE\n</memory>"
        );
    }

    #[test]
    fn over_budget_the_project_file_wins_and_a_note_says_what_is_missing() {
        // 300 tokens = 1200 bytes: the project file (about 1000 bytes) fits, the first
        // global file is left out, and so is the small one after it.
        let (_tmp, memory) = setup(300);
        let project: String = (0..50)
            .map(|i| format!("- project line {i:04}\n"))
            .collect();
        fs::write(&memory.project_file, &project).unwrap();
        fs::write(memory.global_dir.join("a.md"), "x".repeat(5000)).unwrap();
        fs::write(memory.global_dir.join("b.md"), "small\n").unwrap();
        let layer = MemoryLayer::load(&memory);
        let rendered = layer.render();
        let blocks: String = rendered.split("<memory_note>").next().unwrap().to_string();
        assert!(blocks.len() <= 1200, "{} bytes", blocks.len());
        assert_eq!(layer.blocks.len(), 1);
        assert_eq!(layer.blocks[0].scope, MemoryScope::Project);
        assert!(!layer.blocks[0].cut);
        assert!(!rendered.contains("small"));
        assert!(
            rendered.ends_with(
                "<memory_note>Memory over the budget of 300 tokens was left out: global a.md \
                 (not shown, 5000 bytes); global b.md (not shown, 6 bytes). The memory tool \
                 reads it (action \"read\" with that scope and file) and searches it (action \
                 \"search\").</memory_note>"
            ),
            "{rendered}"
        );
    }

    #[test]
    fn a_file_too_big_for_the_budget_is_cut_at_a_line_end() {
        let (_tmp, memory) = setup(250);
        let project: String = (0..200).map(|i| format!("- line {i:04}\n")).collect();
        fs::write(&memory.project_file, &project).unwrap();
        fs::write(memory.global_dir.join("a.md"), "GLOBAL\n").unwrap();
        let layer = MemoryLayer::load(&memory);
        let rendered = layer.render();
        let blocks = rendered.split("<memory_note>").next().unwrap();
        assert!(blocks.len() <= 1000, "{} bytes", blocks.len());
        let block = &layer.blocks[0];
        assert!(block.cut);
        assert!(block.text.starts_with("- line 0000\n"));
        assert!(
            block.text.ends_with(|c: char| c.is_ascii_digit()),
            "{}",
            block.text
        );
        assert!(rendered.contains(CUT_MARK));
        assert!(!rendered.contains("GLOBAL"));
        assert_eq!(layer.omitted.len(), 2);
        assert_eq!(layer.omitted[0].shown_bytes, block.text.len());
        assert_eq!(layer.omitted[0].total_bytes, project.len() as u64);
        let note = format!(
            "project .march/memory.md (first {} of {} bytes shown); global a.md",
            block.text.len(),
            project.len()
        );
        assert!(rendered.contains(&note), "{rendered}");
    }

    #[test]
    fn a_zero_budget_only_names_the_files() {
        let (_tmp, memory) = setup(0);
        fs::write(&memory.project_file, "P").unwrap();
        let layer = MemoryLayer::load(&memory);
        assert!(layer.blocks.is_empty());
        assert!(layer.render().starts_with("<memory_note>"));
        assert!(
            layer
                .render()
                .contains("project .march/memory.md (not shown, 1 bytes)")
        );
    }

    #[test]
    fn names_are_escaped_in_attributes() {
        assert_eq!(
            open_tag(MemoryScope::Global, "a\"<&.md"),
            "<memory scope=\"global\" file=\"a&quot;&lt;&amp;.md\">"
        );
    }
}
