//! Copy mode and mouse selection over the transcript: what is copied is the text as
//! written.

use super::*;
use crate::agent::PaneEvent;
use crate::test_support::dark;

const ANSWER: &str = "Here is a **long** paragraph that the pane has to wrap over several rows, \
with `code` in it and a [link](https://example.com) too.\n\n\
```rust\nfn main() {\n    println!(\"a line far longer than the pane is wide, so it is cut at the edge\");\n}\n```\n\n\
- one\n- two\n";

fn answered() -> AgentPane {
    let mut pane = pane_with(&[]);
    pane.submit_local("question?");
    pane.apply(&agent(ANSWER));
    pane
}

fn keys(pane: &mut AgentPane, keys: &str) -> PaneEvent {
    let mut last = PaneEvent::None;
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            c => KeyCode::Char(c),
        };
        last = pane.handle_key(key(code));
    }
    last
}

/// A mouse drag with the left button from `from` to `to`: what the release gives.
fn drag(pane: &mut AgentPane, from: (u16, u16), to: (u16, u16)) -> PaneEvent {
    pane.mouse_press(from.0, from.1, 1);
    pane.mouse_drag(to.0, to.1);
    pane.mouse_release(to.0, to.1)
}

/// The screen row showing `needle` first, in the last drawn frame of `t`.
fn row_of(t: &Terminal<TestBackend>, needle: &str) -> u16 {
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .find(|&y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            row.contains(needle)
        })
        .unwrap_or_else(|| panic!("{needle:?} is not on screen"))
}

#[test]
fn a_wrapped_paragraph_is_copied_as_written() {
    let theme = dark();
    let mut pane = answered();
    let t = draw(&mut pane, &theme, 40, 40);
    let first = row_of(&t, "Here is");
    let last = row_of(&t, "too.");
    assert!(last > first + 1, "the paragraph wraps");
    pane.enter_copy_mode();
    draw(&mut pane, &theme, 40, 40);
    // To the paragraph's first row, select it whole line-wise, copy.
    keys(&mut pane, "gjj");
    let event = keys(&mut pane, "V");
    assert_eq!(event, PaneEvent::Redraw);
    for _ in first..last {
        keys(&mut pane, "j");
    }
    let expected = ANSWER.split("\n\n").next().unwrap();
    assert_eq!(keys(&mut pane, "y"), PaneEvent::Copy(expected.to_string()));
    assert!(!pane.in_copy_mode());
}

#[test]
fn a_code_block_copies_its_lines_uncut() {
    let theme = dark();
    let mut pane = answered();
    let t = draw(&mut pane, &theme, 40, 40);
    let first = row_of(&t, "fn main");
    let last = first + 2;
    // Dragged with the mouse over its three rows, from the first column to the last.
    assert_eq!(pane.mouse_press(2, first, 1), PaneEvent::Redraw);
    assert_eq!(pane.mouse_drag(37, last), PaneEvent::Redraw);
    let code = "fn main() {\n    println!(\"a line far longer than the pane is wide, so it is cut at the edge\");\n}";
    assert_eq!(
        pane.mouse_release(37, last),
        PaneEvent::Copy(code.to_string())
    );
    assert!(
        !pane.in_copy_mode(),
        "copy mode the mouse started ends with the copy"
    );
}

#[test]
fn the_whole_answer_copies_its_markdown_and_a_part_what_is_drawn() {
    let theme = dark();
    let mut pane = answered();
    let t = draw(&mut pane, &theme, 40, 40);
    let first = row_of(&t, "Here is");
    let last = row_of(&t, "two");
    assert_eq!(
        drag(&mut pane, (2, first), (37, last)),
        PaneEvent::Copy(ANSWER.trim_end().to_string())
    );
    // Part of the paragraph: the words as drawn, rows joined where they wrapped.
    let t = draw(&mut pane, &theme, 40, 40);
    let row = row_of(&t, "Here is");
    match drag(&mut pane, (2, row), (5, row + 1)) {
        PaneEvent::Copy(text) => {
            assert!(text.starts_with("Here is a long"), "{text:?}");
            assert!(!text.contains('\n'), "a wrap is not a line break: {text:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn double_and_triple_clicks_copy_a_word_and_a_line_and_a_click_is_the_apps() {
    let theme = dark();
    let mut pane = answered();
    let t = draw(&mut pane, &theme, 40, 40);
    let row = row_of(&t, "Here is");
    let buf = t.backend().buffer();
    let col = (0..40).find(|&x| buf[(x, row)].symbol() == "H").unwrap();
    assert_eq!(
        pane.mouse_press(col + 1, row, 2),
        PaneEvent::Copy("Here".into())
    );
    match pane.mouse_press(col, row, 3) {
        PaneEvent::Copy(text) => assert!(text.starts_with("Here is a"), "{text:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(pane.mouse_press(col, row, 1), PaneEvent::Redraw);
    assert_eq!(
        pane.mouse_release(col, row),
        PaneEvent::Click { x: col, y: row }
    );
    assert!(!pane.in_copy_mode());
}

#[test]
fn search_marks_every_match_and_n_moves() {
    let theme = dark();
    let mut pane = pane_with(&[]);
    for i in 0..30 {
        pane.apply(&agent_id(
            &format!("answer {i} mentions needle here"),
            &format!("m{i}"),
        ));
    }
    draw(&mut pane, &theme, 50, 12);
    pane.enter_copy_mode();
    // An `o` in a search is the search's, not a block toggle.
    keys(&mut pane, "g/mentions needle\n");
    let t = draw(&mut pane, &theme, 50, 12);
    let buf = t.backend().buffer();
    let found = theme
        .style(crate::theme::Slot::Warning)
        .add_modifier(ratatui::style::Modifier::REVERSED);
    let marked_rows = (0..12)
        .filter(|&y| {
            (0..50).any(|x| {
                buf[(x, y)].style() == found
                    || buf[(x, y)]
                        .modifier
                        .contains(ratatui::style::Modifier::REVERSED)
            })
        })
        .count();
    assert!(
        marked_rows >= 3,
        "every match on screen is marked ({marked_rows} rows)"
    );
    let status_before = pane.copy_status_for_tests();
    keys(&mut pane, "n");
    let status_after = pane.copy_status_for_tests();
    assert_ne!(status_before, status_after, "n moves to the next match");
    assert!(status_after.contains("copy"), "{status_after}");
    keys(&mut pane, "q");
    assert!(!pane.in_copy_mode());
}

#[test]
fn a_streamed_answer_copies_the_same_as_a_whole_one() {
    let theme = dark();
    let mut pane = pane_with(&[]);
    pane.submit_local("question?");
    // Streamed in small pieces with frames between, so finished blocks are kept apart.
    let bytes = ANSWER.as_bytes();
    for piece in bytes.chunks(7) {
        pane.apply(&agent_id(std::str::from_utf8(piece).unwrap(), "m1"));
        draw(&mut pane, &theme, 40, 40);
    }
    let t = draw(&mut pane, &theme, 40, 40);
    let first = row_of(&t, "Here is");
    let last = row_of(&t, "two");
    assert_eq!(
        drag(&mut pane, (2, first), (37, last)),
        PaneEvent::Copy(ANSWER.trim_end().to_string())
    );
    // The code block alone, line-wise in copy mode.
    let t = draw(&mut pane, &theme, 40, 40);
    let code_row = row_of(&t, "fn main");
    pane.enter_copy_mode();
    draw(&mut pane, &theme, 40, 40);
    keys(&mut pane, "H");
    for _ in 0..code_row - 1 {
        keys(&mut pane, "j");
    }
    keys(&mut pane, "Vjj");
    let code = "fn main() {\n    println!(\"a line far longer than the pane is wide, so it is cut at the edge\");\n}";
    assert_eq!(keys(&mut pane, "y"), PaneEvent::Copy(code.to_string()));
}

#[test]
fn a_click_on_a_tool_call_or_o_in_copy_mode_expands_it_alone() {
    let theme = dark();
    let mut pane = pane_with(&[]);
    for id in ["t1", "t2"] {
        pane.apply(&call(
            id,
            &format!("bash run {id}"),
            ToolKind::Execute,
            ToolCallStatus::Completed,
        ));
        pane.apply(&update(
            id,
            ToolCallUpdateFields::new().content(vec![
                agent_client_protocol::v1::schema::ToolCallContent::from(format!(
                    "output line one of {id}\noutput line two of {id}"
                )),
            ]),
        ));
    }
    let t = draw(&mut pane, &theme, 60, 20);
    let screen = |t: &Terminal<TestBackend>| format!("{:?}", t.backend().buffer());
    assert!(
        !screen(&t).contains("output line two of t1"),
        "collapsed at first: {}",
        screen(&t)
    );
    let header = row_of(&t, "run t1");
    assert_eq!(pane.mouse_press(4, header, 1), PaneEvent::Redraw);
    assert_eq!(pane.mouse_release(4, header), PaneEvent::Redraw);
    let t = draw(&mut pane, &theme, 60, 20);
    assert!(screen(&t).contains("output line two of t1"), "t1 expanded");
    assert!(
        !screen(&t).contains("output line two of t2"),
        "t2 still collapsed"
    );
    // In copy mode, `o` on the second call's row.
    pane.enter_copy_mode();
    draw(&mut pane, &theme, 60, 20);
    let t = draw(&mut pane, &theme, 60, 20);
    let row = row_of(&t, "run t2");
    keys(&mut pane, "H");
    for _ in 1..row {
        keys(&mut pane, "j");
    }
    assert_eq!(keys(&mut pane, "o"), PaneEvent::Redraw);
    let t = draw(&mut pane, &theme, 60, 20);
    assert!(
        screen(&t).contains("output line two of t2"),
        "t2 expanded by o"
    );
    // The global toggle puts every block back in line.
    pane.toggle_tools();
    pane.toggle_tools();
    let t = draw(&mut pane, &theme, 60, 20);
    assert!(!screen(&t).contains("output line two of t1"));
}

#[test]
fn an_answer_without_a_final_line_break_copies_its_source_and_rows_below_copy_nothing() {
    let theme = dark();
    let mut pane = pane_with(&[]);
    let text = "A **short** answer.\n\nIts second paragraph, `code` and all.";
    pane.apply(&agent(text));
    let t = draw(&mut pane, &theme, 60, 30);
    let first = row_of(&t, "A short");
    let last = row_of(&t, "second paragraph");
    assert_eq!(
        drag(&mut pane, (2, first), (57, last)),
        PaneEvent::Copy(text.to_string())
    );
    // Below the transcript there is nothing: a double click there copies nothing.
    draw(&mut pane, &theme, 60, 30);
    assert_eq!(pane.mouse_press(10, last + 5, 2), PaneEvent::Redraw);
}
