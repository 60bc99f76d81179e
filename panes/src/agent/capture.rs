//! A transcript as markdown text. For `march capture`: prompts quoted, answers as the
//! agent wrote them, each tool call one line with how it ended; thinking is left out, as
//! a reader of the answer would not see it. For an export (`/export`, `march export`):
//! the whole session, each tool call's result collapsed under a summary (`<details>`) and
//! its file changes as diff blocks.

use agent_client_protocol::v1::schema::PlanEntryStatus;

use super::diff::{DiffLineKind, unified};
use super::transcript::{Block, Role, Severity, ToolBody, ToolCallView, ToolState, Transcript};

/// Lines of a tool's output an export keeps.
const EXPORT_OUTPUT_LINES: usize = 200;

impl Transcript {
    /// The transcript as markdown; only its last `last_turns` turns (a prompt and what
    /// followed it) when given.
    pub(crate) fn markdown(&self, last_turns: Option<usize>) -> String {
        let blocks = self.blocks();
        let prompts: Vec<usize> = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, Block::Message(m) if m.role == Role::User))
            .map(|(i, _)| i)
            .collect();
        let from = match last_turns {
            Some(0) => blocks.len(),
            Some(n) if n < prompts.len() => prompts[prompts.len() - n],
            _ => 0,
        };
        let mut out = String::new();
        for block in &blocks[from..] {
            let part = block_markdown(block);
            if part.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(part.trim_end());
            out.push('\n');
        }
        out
    }
}

impl Transcript {
    /// The whole session as a markdown document titled `title`.
    pub(crate) fn export(&self, title: &str) -> String {
        let mut out = format!(
            "# {}
",
            one_line(title)
        );
        for block in self.blocks() {
            let part = match block {
                Block::Message(m) if m.role == Role::User => {
                    format!("## Prompt\n\n{}", m.text.trim_end())
                }
                Block::Message(m) if m.role == Role::Thought => format!(
                    "<details><summary>Thinking</summary>\n\n{}\n\n</details>",
                    m.text.trim_end()
                ),
                Block::Tool(t) => tool_export(t),
                other => block_markdown(other),
            };
            if part.trim().is_empty() {
                continue;
            }
            out.push('\n');
            out.push_str(part.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `text` on one line (a title).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

/// A tool call for an export: its diffs as diff blocks, its output collapsed under a
/// summary line saying how it ended.
fn tool_export(t: &ToolCallView) -> String {
    let how = match t.state {
        ToolState::Pending => "waiting",
        ToolState::Running => "running",
        ToolState::Done => "done",
        ToolState::Failed => "failed",
        ToolState::Rejected => "rejected",
        ToolState::Cancelled => "cancelled",
    };
    // A call the user let out of the sandbox says so wherever its result is read.
    let how = if t.outside {
        format!("{how} · ran outside the sandbox")
    } else {
        how.to_string()
    };
    let mut out = String::new();
    // The whole command, which the one-line summary may cut.
    if let Some(command) = t
        .command
        .as_deref()
        .filter(|c| c.contains('\n') || !t.title.ends_with(c))
    {
        let text = format!("$ {command}\n");
        let f = fence(&text);
        out.push_str(&format!("\n{f}sh\n{text}{f}\n"));
    }
    let mut output = String::new();
    for body in &t.body {
        match body {
            ToolBody::Diff { path, old, new } => {
                let diff = unified(old.as_deref(), new);
                let mut text = format!("--- {path}\n+++ {path}\n");
                for (kind, line) in &diff.lines {
                    let mark = match kind {
                        DiffLineKind::Hunk => "",
                        DiffLineKind::Added => "+",
                        DiffLineKind::Removed => "-",
                        DiffLineKind::Context => " ",
                    };
                    text.push_str(mark);
                    text.push_str(line);
                    text.push('\n');
                }
                let f = fence(&text);
                out.push_str(&format!("\n{f}diff\n{text}{f}\n"));
            }
            ToolBody::Text(text) => {
                output.push_str(text);
                output.push('\n');
            }
            ToolBody::Terminal(_) => {}
        }
    }
    if output.trim().is_empty()
        && let Some(raw) = &t.raw_output
    {
        output = raw.clone();
    }
    let summary = format!("**{}** · {how}", one_line(&t.title));
    let output = output.trim_end();
    if output.is_empty() {
        return format!("{summary}\n{out}");
    }
    let lines: Vec<&str> = output.lines().collect();
    let mut shown = lines[..lines.len().min(EXPORT_OUTPUT_LINES)].join("\n");
    if lines.len() > EXPORT_OUTPUT_LINES {
        shown.push_str(&format!(
            "\n… {} more lines",
            lines.len() - EXPORT_OUTPUT_LINES
        ));
    }
    let f = fence(&shown);
    format!(
        "<details><summary>{} · {how} · {} line{}</summary>\n\n{f}\n{shown}\n{f}\n\n</details>\n{out}",
        html_escape(&one_line(&t.title)),
        lines.len(),
        if lines.len() == 1 { "" } else { "s" }
    )
}

/// `text` safe inside HTML (a summary line).
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn block_markdown(block: &Block) -> String {
    match block {
        Block::Message(m) => match m.role {
            Role::User => m.text.lines().map(|l| format!("> {l}\n")).collect(),
            Role::Agent => m.text.clone(),
            Role::Thought => String::new(),
        },
        Block::Tool(t) => {
            let how = match t.state {
                ToolState::Pending => "… waiting",
                ToolState::Running => "… running",
                ToolState::Done => "✓",
                ToolState::Failed => "✗ failed",
                ToolState::Rejected => "✗ rejected",
                ToolState::Cancelled => "cancelled",
            };
            format!("- {how} {}", t.title)
        }
        Block::Plan(items) => items
            .iter()
            .map(|i| {
                let mark = match i.status {
                    PlanEntryStatus::Completed => "[x]",
                    PlanEntryStatus::InProgress => "[~]",
                    _ => "[ ]",
                };
                format!("- {mark} {}\n", i.text)
            })
            .collect(),
        Block::Notice {
            severity,
            title,
            detail,
        } => {
            let what = match severity {
                Severity::Info => "",
                Severity::Warning => "warning: ",
                Severity::Error => "error: ",
            };
            match detail {
                Some(d) => format!("_{what}{title}_\n{d}"),
                None => format!("_{what}{title}_"),
            }
        }
        Block::Compaction(_) => "_The context was compacted._".to_string(),
        Block::Image(i) => i.picture.label(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use agent_client_protocol::v1::schema::{
        ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus,
        ToolCallUpdate, ToolCallUpdateFields,
    };

    use super::*;

    fn chunk(s: &str) -> ContentChunk {
        ContentChunk::new(ContentBlock::Text(TextContent::new(s)))
    }

    #[test]
    fn prompts_are_quoted_answers_kept_tools_one_line_and_thinking_left_out() {
        let now = Instant::now();
        let mut t = Transcript::default();
        t.push_user("first question\nin two lines");
        t.apply(&SessionUpdate::AgentThoughtChunk(chunk("pondering")), now);
        t.apply(
            &SessionUpdate::AgentMessageChunk(chunk("First **answer**.")),
            now,
        );
        t.end_turn(false, now);
        t.push_user("run it");
        t.apply(
            &SessionUpdate::ToolCall(ToolCall::new("t1", "Run `make test`")),
            now,
        );
        t.apply(
            &SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                "t1",
                ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
            )),
            now,
        );
        t.apply(&SessionUpdate::AgentMessageChunk(chunk("All passed.")), now);
        let all = t.markdown(None);
        assert_eq!(
            all,
            "> first question\n> in two lines\n\nFirst **answer**.\n\n> run it\n\n\
             - ✓ Run `make test`\n\nAll passed.\n"
        );
        assert!(!all.contains("pondering"));
        assert_eq!(
            t.markdown(Some(1)),
            "> run it\n\n- ✓ Run `make test`\n\nAll passed.\n"
        );
        assert_eq!(t.markdown(Some(5)), all);
        assert_eq!(t.markdown(Some(0)), "");
    }

    #[test]
    fn an_export_has_every_block_outputs_collapsed_and_diffs_as_diff_blocks() {
        use agent_client_protocol::v1::schema::{Diff, ToolCallContent};
        let now = Instant::now();
        let mut t = Transcript::default();
        t.push_user("fix it");
        t.apply(&SessionUpdate::AgentThoughtChunk(chunk("pondering")), now);
        t.apply(
            &SessionUpdate::ToolCall(ToolCall::new("t1", "bash cargo test").content(vec![
                ToolCallContent::from("test a ... ok\ntest b ... FAILED"),
            ])),
            now,
        );
        t.apply(
            &SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                "t1",
                ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
            )),
            now,
        );
        t.apply(
            &SessionUpdate::ToolCall(ToolCall::new("t2", "edit src/a.rs").content(vec![
                ToolCallContent::Diff(
                    Diff::new("src/a.rs", "fn a() {}\n").old_text("fn b() {}\n".to_string()),
                ),
            ])),
            now,
        );
        t.apply(
            &SessionUpdate::AgentMessageChunk(chunk("Fixed **b**.")),
            now,
        );
        let doc = t.export("A <session>");
        assert!(
            doc.starts_with("# A <session>\n\n## Prompt\n\nfix it\n"),
            "{doc}"
        );
        assert!(
            doc.contains("<details><summary>Thinking</summary>\n\npondering"),
            "{doc}"
        );
        assert!(
            doc.contains("<details><summary>bash cargo test · failed · 2 lines</summary>\n\n```\ntest a ... ok\ntest b ... FAILED\n```"),
            "{doc}"
        );
        assert!(
            doc.contains(
                "```diff\n--- src/a.rs\n+++ src/a.rs\n@@ -1 +1 @@\n-fn b() {}\n+fn a() {}\n```"
            ),
            "{doc}"
        );
        assert!(doc.trim_end().ends_with("Fixed **b**."), "{doc}");
    }
}
