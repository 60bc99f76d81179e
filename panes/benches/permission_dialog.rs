//! Frame cost of the permission dialog showing a 5,000-line diff and a 2,000-line command
//! (target: under 8 ms), against the same pane's frame without the dialog, in the same run.
//!
//! The edit changes every tenth line of a 5,000-line file, so the diff has about 5,000 lines;
//! the command has 2,000 lines of about 90 characters, so it wraps at either width. Each
//! frame renders the pane into a fresh buffer (200×50, then 80×24), scrolling the dialog's
//! body a page on every other frame. Opening the dialog (building the body once) and its
//! first frame (wrapping the body to the width, once) are timed apart.
//! Run: `cargo bench -p march-panes --bench permission_dialog`.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, PermissionOption, PermissionOptionKind, RequestPermissionRequest,
    TextContent, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use march_panes::agent::AgentPane;
use march_panes::highlight::Highlighter;
use march_panes::scroll::Scroll;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const FRAMES: usize = 400;

fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
    ]
}

fn command_request() -> RequestPermissionRequest {
    let command: String = (0..2_000)
        .map(|i| {
            format!(
                "cargo test --package crate-{i} --features some,more,features -- --nocapture \\ # {i}\n"
            )
        })
        .collect();
    RequestPermissionRequest::new(
        "s1",
        ToolCallUpdate::new(
            "call-2",
            ToolCallUpdateFields::new()
                .title("bash cargo test".to_string())
                .kind(ToolKind::Execute)
                .content(vec![ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(format!("$ {command}\nin /work/proj")),
                ))]),
        ),
        options(),
    )
}

fn request() -> RequestPermissionRequest {
    let old: String = (0..5_000)
        .map(|i| format!("    let value_{i} = compute({i}, \"some text on line {i}\");\n"))
        .collect();
    let new: String = (0..5_000)
        .map(|i| {
            if i % 10 == 0 {
                format!("    let value_{i} = compute_faster({i}, \"changed line {i}\");\n")
            } else {
                format!("    let value_{i} = compute({i}, \"some text on line {i}\");\n")
            }
        })
        .collect();
    RequestPermissionRequest::new(
        "s1",
        ToolCallUpdate::new(
            "call-1",
            ToolCallUpdateFields::new()
                .title("edit src/big.rs".to_string())
                .kind(ToolKind::Edit)
                .content(vec![ToolCallContent::Diff(
                    Diff::new("/work/proj/src/big.rs", new).old_text(old),
                )]),
        ),
        options(),
    )
}

fn frames(pane: &mut AgentPane, area: Rect, scroll: bool) -> Vec<Duration> {
    let theme = Theme::default();
    let hl = Highlighter::new();
    let mut out = Vec::with_capacity(FRAMES);
    for f in 0..FRAMES {
        let start = Instant::now();
        if scroll && f % 2 == 0 {
            pane.scroll(Scroll::Pages(1));
        }
        let mut buf = Buffer::empty(area);
        pane.render(area, &mut buf, &theme, &hl, true);
        out.push(start.elapsed());
    }
    out.sort();
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One case: the dialog opened on `request` in a pane of `area`; its frames printed.
fn case(name: &str, request: RequestPermissionRequest, area: Rect) {
    let theme = Theme::default();
    let hl = Highlighter::new();
    let mut pane = AgentPane::new("bench");
    pane.turn_started();
    let opened = Instant::now();
    pane.show_permission(request);
    let open = opened.elapsed();
    let first = Instant::now();
    pane.render(area, &mut Buffer::empty(area), &theme, &hl, true);
    let first = first.elapsed();
    let dialog = frames(&mut pane, area, true);
    println!(
        "{}x{}, {name}, scrolling: median {:.3} ms, p99 {:.3} ms, max {:.3} ms (target < 8 ms); \
         opening {:.1} ms, first frame (wrapping) {:.2} ms",
        area.width,
        area.height,
        ms(median(&dialog)),
        ms(p99(&dialog)),
        ms(*dialog.last().unwrap_or(&Duration::ZERO)),
        ms(open),
        ms(first),
    );
}

fn median(v: &[Duration]) -> Duration {
    v[v.len() / 2]
}

fn p99(v: &[Duration]) -> Duration {
    v[(v.len() - 1) * 99 / 100]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("{FRAMES} frames each");
    for area in [Rect::new(0, 0, 200, 50), Rect::new(0, 0, 80, 24)] {
        let mut plain = AgentPane::new("bench");
        plain.turn_started();
        let reference = frames(&mut plain, area, false);
        println!(
            "{}x{}, pane without a dialog (reference): median {:.3} ms, p99 {:.3} ms",
            area.width,
            area.height,
            ms(median(&reference)),
            ms(p99(&reference))
        );
        case("5,000-line diff", request(), area);
        case("2,000-line command", command_request(), area);
    }
}
