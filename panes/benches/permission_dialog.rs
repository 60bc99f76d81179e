//! Frame cost of the permission dialog showing a 5,000-line diff (target: under 8 ms), against
//! the same pane's frame without the dialog, in the same run.
//!
//! The request is an edit of a 5,000-line file in which every tenth line changes, so the diff
//! has about 5,000 lines. Each frame renders the pane into a fresh 200×50 buffer, scrolling
//! the dialog's body a page on every other frame. Opening the dialog (building the diff once)
//! is timed apart. Run: `cargo bench -p march-panes --bench permission_dialog`.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    Diff, PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallContent,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use march_panes::agent::AgentPane;
use march_panes::highlight::Highlighter;
use march_panes::scroll::Scroll;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const FRAMES: usize = 400;

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
        vec![
            PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
        ],
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

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let area = Rect::new(0, 0, 200, 50);
    let mut plain = AgentPane::new("bench");
    plain.turn_started();
    let reference = frames(&mut plain, area, false);

    let mut pane = AgentPane::new("bench");
    pane.turn_started();
    let opened = Instant::now();
    pane.show_permission(request());
    let open = opened.elapsed();
    let dialog = frames(&mut pane, area, true);
    let median = |v: &[Duration]| v[v.len() / 2];
    let p99 = |v: &[Duration]| v[(v.len() - 1) * 99 / 100];
    println!("200x50, {FRAMES} frames each");
    println!(
        "pane without a dialog (reference): median {:.3} ms, p99 {:.3} ms",
        ms(median(&reference)),
        ms(p99(&reference))
    );
    println!(
        "with the 5,000-line diff dialog, scrolling: median {:.3} ms, p99 {:.3} ms, max {:.3} ms (target < 8 ms)",
        ms(median(&dialog)),
        ms(p99(&dialog)),
        ms(*dialog.last().unwrap_or(&Duration::ZERO))
    );
    println!("opening the dialog (diff built once): {:.1} ms", ms(open));
}
