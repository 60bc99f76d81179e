//! A frame lays out the blocks it shows, however long the transcript; huge messages are cut
//! before layout.

use std::time::{Duration, Instant};

use super::*;
use crate::scroll::Scroll;
use crate::test_support::{dark, rows};

fn long_pane(messages: usize) -> AgentPane {
    let mut pane = AgentPane::new("long");
    for i in 0..messages {
        if i % 2 == 0 {
            pane.submit_local(&format!("question number {i}"));
        } else {
            pane.apply(&agent_id(
                &format!("Answer **{i}** with `code` and a [link](http://x/{i})."),
                &format!("m{i}"),
            ));
        }
    }
    pane
}

#[test]
fn ten_thousand_blocks_lay_out_only_what_is_visible() {
    let mut pane = long_pane(10_000);
    let theme = dark();
    let hl = Highlighter::new();
    let start = Instant::now();
    let t = draw_with(&mut pane, &theme, &hl, 80, 24);
    let first = pane.layout_count();
    assert!(first <= 24, "laid out {first} blocks for one screen");
    assert!(
        rows(t.backend().buffer())
            .iter()
            .any(|r| r.contains("9999"))
    );

    // The next frame is all cache hits.
    draw_with(&mut pane, &theme, &hl, 80, 24);
    assert_eq!(pane.layout_count(), first);

    // Jumping to the top lays out the first screen only.
    pane.scroll(Scroll::Top);
    let t = draw_with(&mut pane, &theme, &hl, 80, 24);
    assert!(
        rows(t.backend().buffer())
            .iter()
            .any(|r| r.contains("question number 0"))
    );
    let after_top = pane.layout_count();
    assert!(after_top - first <= 24, "{} more blocks", after_top - first);

    // Paging down walks a screen at a time.
    for _ in 0..10 {
        pane.scroll(Scroll::Pages(1));
        draw_with(&mut pane, &theme, &hl, 80, 24);
    }
    assert!(pane.layout_count() - after_top <= 10 * 24);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn a_resize_lays_out_the_visible_blocks_again_only() {
    let mut pane = long_pane(2_000);
    let theme = dark();
    let hl = Highlighter::new();
    draw_with(&mut pane, &theme, &hl, 80, 24);
    let before = pane.layout_count();
    draw_with(&mut pane, &theme, &hl, 60, 24);
    assert!(pane.layout_count() - before <= 24);
}

#[test]
fn a_five_megabyte_single_line_message() {
    let mut pane = AgentPane::new("big");
    let huge = "x".repeat(5 * 1024 * 1024);
    pane.apply(&agent(&huge));
    let theme = dark();
    let start = Instant::now();
    let t = draw(&mut pane, &theme, 80, 24);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    let screen = rows(t.backend().buffer());
    assert!(
        screen.iter().any(|r| r.contains("4.8 MB more")),
        "{screen:#?}"
    );
    // Scrolling through it stays cheap: the block is laid out once.
    let count = pane.layout_count();
    for _ in 0..20 {
        pane.scroll(Scroll::Pages(-1));
        draw(&mut pane, &theme, 80, 24);
    }
    assert_eq!(pane.layout_count(), count);
    assert_eq!(pane.last_message_text().map(|t| t.len()), Some(huge.len()));
}

#[test]
fn streaming_into_a_five_megabyte_message_stays_linear() {
    let mut pane = AgentPane::new("stream");
    let theme = dark();
    let hl = Highlighter::new();
    let chunk = "y".repeat(64 * 1024);
    let start = Instant::now();
    for _ in 0..80 {
        pane.apply(&agent(&chunk));
        draw_with(&mut pane, &theme, &hl, 80, 24);
    }
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn paging_back_down_follows_new_output_again() {
    let mut pane = long_pane(60);
    let theme = dark();
    let hl = Highlighter::new();
    draw_with(&mut pane, &theme, &hl, 50, 14);
    for _ in 0..3 {
        pane.scroll(Scroll::Pages(-1));
    }
    let t = draw_with(&mut pane, &theme, &hl, 50, 14);
    assert!(rows(t.backend().buffer()).iter().any(|r| r.contains('%')));
    for _ in 0..10 {
        pane.scroll(Scroll::Pages(1));
    }
    draw_with(&mut pane, &theme, &hl, 50, 14);
    pane.apply(&agent("fresh output"));
    let t = draw_with(&mut pane, &theme, &hl, 50, 14);
    let screen = rows(t.backend().buffer());
    assert!(
        screen.iter().any(|r| r.contains("fresh output")),
        "{screen:#?}"
    );
    assert!(
        !screen.iter().any(|r| r.contains('%')),
        "following, no position shown"
    );
}

#[test]
fn scrolling_above_the_top_stops_at_the_first_line() {
    let mut pane = long_pane(60);
    let theme = dark();
    let hl = Highlighter::new();
    draw_with(&mut pane, &theme, &hl, 50, 14);
    pane.scroll(crate::scroll::Scroll::Lines(-100_000));
    let t = draw_with(&mut pane, &theme, &hl, 50, 14);
    let screen = rows(t.backend().buffer());
    assert!(screen[1].contains("question number 0"), "{screen:#?}");
    pane.scroll(crate::scroll::Scroll::Lines(1));
    let t = draw_with(&mut pane, &theme, &hl, 50, 14);
    assert!(
        rows(t.backend().buffer())[1]
            .trim_matches(['│', ' '])
            .is_empty()
    );
}

#[test]
fn new_blocks_below_count_in_full() {
    let mut pane = long_pane(60);
    let theme = dark();
    let hl = Highlighter::new();
    draw_with(&mut pane, &theme, &hl, 50, 14);
    pane.scroll(Scroll::Pages(-1));
    draw_with(&mut pane, &theme, &hl, 50, 14);
    // A blank line before the block, then three paragraphs with blanks between.
    pane.apply(&agent_id("one\n\ntwo\n\nthree", "fresh"));
    let t = draw_with(&mut pane, &theme, &hl, 50, 14);
    let screen = rows(t.backend().buffer());
    assert!(
        screen.iter().any(|r| r.contains("↓ 6 new lines")),
        "{screen:#?}"
    );
}
