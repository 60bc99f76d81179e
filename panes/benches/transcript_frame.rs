//! Frame cost of the agent pane: a transcript of 10,000 messages against one of 10 (target:
//! at most 1.2×), and four panes each streaming 2,000 tokens/s (target: p99 under 8 ms).
//!
//! Each frame is what the Shell does when an update arrives: apply it, then render the pane
//! into a fresh buffer of the terminal's size. Run: `cargo bench -p march-panes --bench
//! transcript_frame`.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, MessageId, SessionUpdate, TextContent,
};
use march_panes::agent::AgentPane;
use march_panes::highlight::Highlighter;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const ANSWER: &str = "Here is what changed:\n\n- the parser now keeps **nested** brackets\n- `Lexer::next` skips comments\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n";

fn chunk(text: &str, id: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(
        ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
            .message_id(MessageId::new(id.to_string())),
    )
}

fn pane_with(messages: usize) -> AgentPane {
    let mut pane = AgentPane::new("bench");
    for i in 0..messages / 2 {
        pane.submit_local(&format!("question {i}: what changed in the parser?"));
        pane.apply(&chunk(ANSWER, &format!("m{i}")));
    }
    pane
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and p99 of `frames` frames: append a streamed chunk, render.
fn stream_frames(
    panes: &mut [AgentPane],
    area: Rect,
    frames: usize,
    chunk_text: &str,
) -> (Duration, Duration) {
    let theme = Theme::default();
    let hl = Highlighter::new();
    let rects: Vec<Rect> = match panes.len() {
        1 => vec![area],
        _ => {
            let (w, h) = (area.width / 2, area.height / 2);
            vec![
                Rect::new(0, 0, w, h),
                Rect::new(w, 0, area.width - w, h),
                Rect::new(0, h, w, area.height - h),
                Rect::new(w, h, area.width - w, area.height - h),
            ]
        }
    };
    // Warm up: lay out what is visible once.
    let mut buf = Buffer::empty(area);
    for (pane, rect) in panes.iter_mut().zip(&rects) {
        pane.submit_local("stream now");
        pane.render(*rect, &mut buf, &theme, &hl, true);
    }
    let mut times = Vec::with_capacity(frames);
    for f in 0..frames {
        let start = Instant::now();
        let mut buf = Buffer::empty(area);
        // A paragraph ends every tenth chunk, as in real answers.
        let text = if f % 10 == 9 {
            format!("{chunk_text}\n\n")
        } else {
            chunk_text.to_string()
        };
        for (pane, rect) in panes.iter_mut().zip(&rects) {
            pane.apply(&chunk(&text, "streaming"));
            pane.render(*rect, &mut buf, &theme, &hl, f % 2 == 0);
        }
        times.push(start.elapsed());
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let area = Rect::new(0, 0, 120, 40);
    // About 8 tokens per chunk, as providers stream.
    let word = "parser ";
    let small = stream_frames(&mut [pane_with(10)], area, 2_000, &word.repeat(4));
    let large = stream_frames(&mut [pane_with(10_000)], area, 2_000, &word.repeat(4));
    println!(
        "one pane 120x40, streaming: 10 messages median {:.3} ms p99 {:.3} ms; 10,000 messages median {:.3} ms p99 {:.3} ms; ratio of medians {:.2}",
        ms(small.0),
        ms(small.1),
        ms(large.0),
        ms(large.1),
        large.0.as_secs_f64() / small.0.as_secs_f64()
    );
    // Four panes at 2,000 tokens/s each, drawn at 60 frames/s: ~33 tokens (~8 chunks) per
    // pane per frame, applied as one chunk each.
    let mut four: Vec<AgentPane> = (0..4).map(|_| pane_with(200)).collect();
    let (median, p99) = stream_frames(&mut four, Rect::new(0, 0, 200, 50), 1_800, &word.repeat(33));
    println!(
        "four panes 200x50, each 2,000 tokens/s at 60 fps: frame median {:.3} ms, p99 {:.3} ms",
        ms(median),
        ms(p99)
    );
}
