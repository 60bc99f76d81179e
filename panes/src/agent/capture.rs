//! A transcript as markdown text, for `march capture`: prompts quoted, answers as the
//! agent wrote them, each tool call one line with how it ended. Thinking is left out, as
//! a reader of the answer would not see it.

use agent_client_protocol::v1::schema::PlanEntryStatus;

use super::transcript::{Block, Role, Severity, ToolState, Transcript};

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
}
