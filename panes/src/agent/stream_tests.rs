//! A message laid out piece by piece while it streams gives the lines a whole layout gives,
//! at every chunk, and the work per chunk is bounded by the open block, not the message.

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate, TextContent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::agent::AgentPane;
use crate::agent::blocks::render_block;
use crate::agent::transcript::Block;
use crate::highlight::Highlighter;
use crate::markdown::piece::RENDERED_BYTES;
use crate::test_support::dark;
use crate::theme::Theme;

/// Markdown blocks of every kind, with the awkward cases: loose and nested lists, blank
/// lines inside fences and indented code, lazy quotes, HTML comments spanning blank lines.
const BLOCKS: &[&str] = &[
    "A paragraph with *emphasis*, **strong**, `code` and ~~struck~~ words\nthat goes on for a second line.\n",
    "# A heading\n",
    "Setext heading\n---\n",
    "- tight\n- list\n",
    "- loose\n\n- list\n",
    "* star\n\n  continued paragraph\n\n* next\n",
    "1. one\n2. two\n   - nested\n   - nested too\n\n     paragraph in nested\n",
    "  1) paren list\n  2) second\n",
    "- [ ] task\n- [x] done\n",
    "> quoted\n> more\n>\n> - list in a quote\n",
    "> quote with\nlazy continuation\n",
    "```rust\nfn a() {}\n\n\nlet x = 1;\n```\n",
    "~~~\n```\n\nnot closed by that\n~~~\n",
    "    indented code\n\n    more of it\n",
    "| a | b |\n|---|:-:|\n| 1 | 2 |\n",
    "---\n",
    "***\n",
    "<div>\nhtml\n</div>\n",
    "<!--\ncomment\n\nstill comment\n-->\n",
    "A [link](http://x.y) and ![an image](a.png).\n",
    "中文字符 and emoji 🎉 and é, wide text to wrap at narrow widths.\n",
    "Hard break  \nafter two spaces.\n",
    "  indented paragraph\n",
    "-\n",
];

const SEPARATORS: &[&str] = &["\n", "\n\n", "\n\n\n", "", "\n  \n"];

/// A small deterministic generator (no dependency needed for this).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() % from.len()]
    }
}

fn document(rng: &mut Rng, blocks: usize) -> String {
    let mut doc = String::new();
    for _ in 0..blocks {
        doc.push_str(rng.pick(BLOCKS));
        doc.push_str(rng.pick(SEPARATORS));
    }
    doc
}

/// `text` cut into chunks of 1 to `max` bytes, on character boundaries.
fn chunks<'a>(text: &'a str, rng: &mut Rng, max: usize) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 1 + rng.next() % max).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

fn ctx<'a>(theme: &'a Theme, hl: &'a Highlighter, width: u16) -> BlockContext<'a> {
    BlockContext {
        theme,
        highlighter: hl,
        width,
        tools_expanded: false,
        thinking_expanded: true,
        expanded: &NO_OVERRIDES,
        pictures: false,
    }
}

static NO_OVERRIDES: std::sync::LazyLock<std::collections::HashMap<usize, bool>> =
    std::sync::LazyLock::new(std::collections::HashMap::new);

fn block(role: Role, text: &str) -> (Block, Message) {
    let m = Message {
        role,
        id: None,
        text: text.to_string(),
    };
    (Block::Message(m.clone()), m)
}

fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// Streams `doc` in `parts` and checks every frame against a whole layout.
fn check_streamed(doc: &str, parts: &[&str], role: Role, width: u16) {
    let theme = dark();
    let hl = Highlighter::new();
    hl.set_theme(&theme);
    let ctx = ctx(&theme, &hl, width);
    let mut stream = Stream::default();
    let mut text = String::new();
    for part in parts {
        text.push_str(part);
        let (whole, m) = block(role, &text);
        let laid = message(&m, true, &ctx, &mut stream);
        let got: Vec<_> = laid.iter().cloned().collect();
        assert_eq!(laid.len(), got.len());
        let want = render_block(&whole, true, &ctx);
        assert_eq!(
            plain(&got),
            plain(&want),
            "width {width}, after {} bytes of\n{doc}",
            text.len()
        );
        assert_eq!(
            got,
            want,
            "width {width}, after {} bytes of\n{doc}",
            text.len()
        );
    }
}

#[test]
fn streamed_layout_equals_whole_layout_at_every_chunk() {
    let mut rng = Rng(7);
    for round in 0..60 {
        let doc = document(&mut rng, 4 + round % 12);
        let parts = chunks(&doc, &mut rng, 1 + round % 40);
        let width = [30, 80, 13][round % 3];
        let role = if round % 4 == 3 {
            Role::Thought
        } else {
            Role::Agent
        };
        check_streamed(&doc, &parts, role, width);
    }
}

#[test]
fn every_block_pair_splits_cleanly() {
    // Each ordered pair of blocks with each separator, streamed a byte at a time: the
    // boundary cases a random document may miss.
    for a in BLOCKS {
        for b in BLOCKS {
            for sep in ["\n", "\n\n", ""] {
                let doc = format!("{a}{sep}{b}{sep}{a}");
                let mut rng = Rng(doc.len() as u64);
                let parts = chunks(&doc, &mut rng, 8);
                check_streamed(&doc, &parts, Role::Agent, 40);
            }
        }
    }
}

#[test]
fn link_definitions_anywhere_still_give_the_whole_layout() {
    let doc = "See [the docs] and [x].\n\nMore text.\n\n```\ncode\n```\n\n[the docs]: http://d.example\n\n[x]: http://x\n\nAfter [x].\n";
    let mut rng = Rng(3);
    let parts = chunks(doc, &mut rng, 5);
    check_streamed(doc, &parts, Role::Agent, 50);
}

/// Realistic answer text: paragraphs, a list, code with blank lines, a table.
fn answer_section(i: usize) -> String {
    format!(
        "## Step {i}\n\nThe parser now keeps **nested** brackets and `Lexer::next` skips comments; \
         this paragraph is long enough to wrap a few times at the width of a pane.\n\n\
         - first point {i}\n- second point\n  - nested\n\n\
         ```rust\nfn step_{i}() {{\n    let x = {i};\n\n    println!(\"{{x}}\");\n}}\n```\n\n\
         | col | value |\n|-----|-------|\n| a   | {i}   |\n\n"
    )
}

#[test]
fn work_per_chunk_is_bounded_while_500_kb_stream() {
    let mut doc = String::new();
    let mut i = 0;
    while doc.len() < 500 * 1024 {
        doc.push_str(&answer_section(i));
        i += 1;
    }
    let theme = dark();
    let hl = Highlighter::new();
    hl.set_theme(&theme);
    let ctx = ctx(&theme, &hl, 100);
    let mut stream = Stream::default();
    let mut rng = Rng(11);
    let mut text = String::new();
    let mut worst = 0;
    for part in chunks(&doc, &mut rng, 400) {
        text.push_str(part);
        let before = RENDERED_BYTES.with(|b| b.get());
        // Past the cap the text laid out stops growing; the stream is fed the full text
        // here so the bound is checked over all 500 KB.
        let laid = stream.lay_out(&text, |t, after| {
            render_piece(
                t,
                ctx.width,
                Style::default(),
                ctx.theme,
                ctx.highlighter,
                after,
            )
        });
        drop(laid);
        worst = worst.max(RENDERED_BYTES.with(|b| b.get()) - before);
    }
    // The open block plus the chunk: sections' blocks are a few hundred bytes.
    assert!(worst < 2048, "{worst} bytes laid out for one chunk");
    // And the result is still the whole layout.
    let (parts, tail, _) = stream.lay_out(&text, |t, after| {
        render_piece(
            t,
            ctx.width,
            Style::default(),
            ctx.theme,
            ctx.highlighter,
            after,
        )
    });
    let got: Vec<_> = parts
        .iter()
        .flat_map(|p| p.iter())
        .chain(&tail)
        .cloned()
        .collect();
    let want = crate::markdown::render_markdown(
        &text,
        ctx.width,
        Style::default(),
        ctx.theme,
        ctx.highlighter,
    );
    assert_eq!(got, want);
}

#[test]
fn a_streaming_pane_lays_out_only_the_open_block_per_frame() {
    let theme = dark();
    let hl = Highlighter::new();
    let mut pane = AgentPane::new("stream");
    pane.submit_local("go");
    let area = Rect::new(0, 0, 100, 30);
    let mut worst = 0;
    let mut sent = 0;
    let mut i = 0;
    while sent < 500 * 1024 {
        let section = answer_section(i);
        i += 1;
        for piece in section.as_bytes().chunks(300) {
            let piece = String::from_utf8_lossy(piece);
            sent += piece.len();
            pane.apply(&SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::Text(TextContent::new(piece.as_ref())),
            )));
            let before = RENDERED_BYTES.with(|b| b.get());
            let mut buf = Buffer::empty(area);
            pane.render(area, &mut buf, &theme, &hl, true);
            worst = worst.max(RENDERED_BYTES.with(|b| b.get()) - before);
        }
    }
    assert!(worst < 2048, "{worst} bytes laid out in one frame");
}
