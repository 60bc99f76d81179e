//! The session tree and the rewind list in the pane: what they draw, how keys move in them,
//! and the moves and labels they hand the app.

use super::*;
use crate::agent::{BranchMove, PaneEvent, RestoreLine, TreeMove, TreeNode, TreeNodeKind};
use crate::test_support::{dark, rows};

fn node(id: &str, parent: Option<&str>, kind: TreeNodeKind, text: &str) -> TreeNode {
    TreeNode {
        id: id.to_string(),
        parent_id: parent.map(str::to_string),
        kind,
        text: text.to_string(),
        label: None,
        at_ms: Some(1_000),
    }
}

/// u1 · a1 · {branch A: u2 · t2 (tool result) · a2 · u3 (leaf's branch: a3)}, {branch B: u4 · a4}.
fn forked() -> Vec<TreeNode> {
    use TreeNodeKind as K;
    let mut labelled = node("a4", Some("u4"), K::Assistant, "tried an index");
    labelled.label = Some("index".into());
    vec![
        node("u1", None, K::User, "make the parser fast"),
        node("a1", Some("u1"), K::Assistant, "I will profile it first"),
        node("u2", Some("a1"), K::User, "cache the tokens"),
        node("t2", Some("u2"), K::ToolResult, "read: src/lexer.rs"),
        node("a2", Some("t2"), K::Assistant, "cached them \x1b[31mred"),
        node("u4", Some("a1"), K::User, "try an index instead"),
        labelled,
        node("u3", Some("a2"), K::User, "now measure it"),
        node("a3", Some("u3"), K::Assistant, "2.1x faster"),
    ]
}

fn open(nodes: Vec<TreeNode>, leaf: &str, rewind: bool) -> AgentPane {
    let mut pane = AgentPane::new("agent 1");
    assert!(pane.open_tree(nodes, Some(leaf), rewind));
    pane
}

fn screen(pane: &mut AgentPane) -> Vec<String> {
    let t = draw(pane, &dark(), 70, 18);
    rows(t.backend().buffer())
}

#[test]
fn the_tree_shows_branches_the_path_and_labels() {
    let mut pane = open(forked(), "a3", false);
    let t = draw(&mut pane, &dark(), 70, 18);
    insta::assert_snapshot!(t.backend());
    let text = rows(t.backend().buffer()).join("\n");
    assert!(!text.contains('\x1b'), "sanitised");
    assert!(
        !text.contains("src/lexer.rs"),
        "tool results are filtered out"
    );
    assert!(text.contains("◀ here") && text.contains("[index]"));
}

#[test]
fn tab_cycles_the_filters() {
    let mut pane = open(forked(), "a3", false);
    pane.handle_key(key(KeyCode::Tab));
    let users = screen(&mut pane).join("\n");
    assert!(users.contains("your messages"));
    assert!(users.contains("try an index instead") && !users.contains("2.1x faster"));
    pane.handle_key(key(KeyCode::Tab));
    let labelled = screen(&mut pane).join("\n");
    assert!(labelled.contains("tried an index") && !labelled.contains("make the parser"));
    pane.handle_key(key(KeyCode::Tab));
    assert!(
        screen(&mut pane).join("\n").contains("src/lexer.rs"),
        "everything"
    );
}

/// Moves the cursor to the row showing `text`.
fn select(pane: &mut AgentPane, text: &str) {
    pane.handle_key(key(KeyCode::Home));
    for _ in 0..20 {
        let screen = screen(pane);
        // The selected row is the one drawn with the selection style; find by moving until
        // the row under the cursor holds `text` (rows are drawn with the cursor centred).
        if let Some(line) = screen.iter().find(|l| l.contains(text))
            && pane_selected_text(pane).is_some_and(|s| line.contains(&s))
        {
            return;
        }
        pane.handle_key(key(KeyCode::Down));
    }
    panic!("no row `{text}`");
}

/// The text of the selected row, read from the selection style of the drawn buffer.
fn pane_selected_text(pane: &mut AgentPane) -> Option<String> {
    let t = draw(pane, &dark(), 70, 18);
    let buf = t.backend().buffer();
    let selection = dark().style(crate::theme::Slot::Selection).bg;
    (0..buf.area.height).find_map(|y| {
        let cells: Vec<_> = (0..buf.area.width).map(|x| &buf[(x, y)]).collect();
        let selected = cells.iter().filter(|c| Some(c.bg) == selection).count();
        (selected > 30).then(|| cells.iter().map(|c| c.symbol()).collect::<String>())
    })
}

#[test]
fn leaving_a_branch_with_conversation_asks_about_a_summary() {
    let mut pane = open(forked(), "a3", false);
    select(&mut pane, "tried an index");
    assert_eq!(pane.handle_key(key(KeyCode::Enter)), PaneEvent::Redraw);
    let asked = screen(&mut pane).join("\n");
    assert!(asked.contains("Leave this branch") && asked.contains("No summary"));
    pane.handle_key(key(KeyCode::Down));
    assert_eq!(
        pane.submit(),
        PaneEvent::Navigate(TreeMove {
            entry_id: "a4".into(),
            summarize: true,
            instructions: None,
            rewind: false,
            at_ms: Some(1_000),
            restore: false,
        })
    );
    assert!(!pane.tree_open());

    // With a focus typed.
    let mut pane = open(forked(), "a3", false);
    select(&mut pane, "tried an index");
    pane.handle_key(key(KeyCode::Enter));
    pane.handle_key(key(KeyCode::Up));
    pane.handle_key(key(KeyCode::Enter));
    type_text(&mut pane, "perf");
    assert!(
        screen(&mut pane)
            .join("\n")
            .contains("Focus of the summary: perf")
    );
    let PaneEvent::Navigate(chosen) = pane.handle_key(key(KeyCode::Enter)) else {
        panic!("no move")
    };
    assert_eq!(chosen.instructions.as_deref(), Some("perf"));
    assert!(chosen.summarize);
}

#[test]
fn going_up_the_same_path_moves_without_asking_when_nothing_is_left() {
    // The leaf is a user message with no answer: choosing the answer before it leaves only
    // that message, which is conversation; choosing the leaf's own entry changes nothing.
    let mut pane = open(forked(), "a3", false);
    select(&mut pane, "2.1x faster");
    assert_eq!(pane.handle_key(key(KeyCode::Enter)), PaneEvent::Redraw);
    assert!(!pane.tree_open(), "already there: the tree closes");

    let mut nodes = forked();
    nodes.truncate(2);
    let mut pane = open(nodes, "a1", false);
    select(&mut pane, "make the parser fast");
    // Re-editing the first message leaves the answer: asked.
    assert_eq!(pane.handle_key(key(KeyCode::Enter)), PaneEvent::Redraw);
    assert!(pane.tree_open());
    assert_eq!(
        pane.submit(),
        PaneEvent::Navigate(TreeMove {
            entry_id: "u1".into(),
            summarize: false,
            instructions: None,
            rewind: false,
            at_ms: Some(1_000),
            restore: false,
        })
    );
}

#[test]
fn l_sets_a_label_and_esc_closes() {
    let mut pane = open(forked(), "a3", false);
    select(&mut pane, "I will profile");
    pane.handle_key(key(KeyCode::Char('l')));
    type_text(&mut pane, "start");
    assert_eq!(
        pane.handle_key(key(KeyCode::Enter)),
        PaneEvent::LabelEntry {
            entry_id: "a1".into(),
            label: Some("start".into())
        }
    );
    assert!(screen(&mut pane).join("\n").contains("[start]"));
    assert_eq!(pane.cancel(), PaneEvent::Redraw);
    assert!(!pane.tree_open());
}

#[test]
fn the_rewind_list_holds_the_paths_user_messages_newest_selected() {
    let mut pane = open(forked(), "a3", true);
    let text = screen(&mut pane).join("\n");
    assert!(text.contains("Rewind to one of your messages"));
    assert!(text.contains("make the parser fast") && text.contains("now measure it"));
    assert!(!text.contains("try an index"), "another branch");
    assert!(!text.contains("2.1x faster"), "answers are not listed");
    let chosen = TreeMove {
        entry_id: "u3".into(),
        summarize: false,
        instructions: None,
        rewind: true,
        at_ms: Some(1_000),
        restore: false,
    };
    assert_eq!(pane.submit(), PaneEvent::RewindCheck(chosen.clone()));
    assert!(
        screen(&mut pane)
            .join("\n")
            .contains("Looking at the files")
    );

    // The app found files changed since: they are listed before anything is asked.
    pane.offer_restore(
        "u3",
        vec![
            RestoreLine {
                text: "src/a.rs: put back as it was".into(),
                refused: false,
            },
            RestoreLine {
                text: "src/b.rs: left as it is (changed on disk since)".into(),
                refused: true,
            },
        ],
    );
    let asked = screen(&mut pane).join("\n");
    assert!(asked.contains("The session changed files since"), "{asked}");
    assert!(asked.contains("src/a.rs: put back") && asked.contains("src/b.rs: left as it is"));
    assert!(asked.contains("Go back and restore 1 file"));
    assert_eq!(
        pane.submit(),
        PaneEvent::Navigate(TreeMove {
            restore: true,
            ..chosen.clone()
        })
    );

    // Keeping the files goes back in the conversation only; Cancel returns to the list.
    let mut pane = open(forked(), "a3", true);
    pane.submit();
    pane.offer_restore("u3", Vec::new());
    pane.handle_key(key(KeyCode::Up));
    assert_eq!(pane.submit(), PaneEvent::Redraw, "cancel");
    assert!(pane.tree_open());
    pane.submit();
    pane.offer_restore("u3", Vec::new());
    pane.handle_key(key(KeyCode::Down));
    assert_eq!(pane.submit(), PaneEvent::Navigate(chosen));
    assert!(!AgentPane::new("x").open_tree(Vec::new(), None, true));
}

#[test]
fn a_deep_linear_session_opens_without_recursion_and_at_the_leaf() {
    let mut nodes = Vec::new();
    for i in 0..20_000 {
        let parent = (i > 0).then(|| format!("n{}", i - 1));
        let kind = if i % 2 == 0 {
            TreeNodeKind::User
        } else {
            TreeNodeKind::Assistant
        };
        nodes.push(node(
            &format!("n{i}"),
            parent.as_deref(),
            kind,
            &format!("message {i}"),
        ));
    }
    let mut pane = open(nodes, "n19999", false);
    assert!(screen(&mut pane).join("\n").contains("message 19999"));
}

#[test]
fn esc_twice_on_an_empty_prompt_asks_for_the_rewind_list() {
    let mut pane = AgentPane::new("agent 1");
    assert_eq!(pane.cancel(), PaneEvent::Redraw);
    assert!(screen(&mut pane).join("\n").contains("Esc again: go back"));
    assert_eq!(
        pane.cancel(),
        PaneEvent::Slash {
            name: "rewind".into(),
            args: String::new()
        }
    );
    // Another key between the two: no rewind.
    pane.cancel();
    pane.handle_key(key(KeyCode::Left));
    assert!(screen(&mut pane).join("\n").contains("Message the agent"));
    assert_eq!(pane.cancel(), PaneEvent::Redraw);
    // Text in the prompt: Esc does nothing of the kind.
    let mut pane = AgentPane::new("agent 1");
    type_text(&mut pane, "draft");
    assert_eq!(pane.cancel(), PaneEvent::None);
}

fn user(t: &str) -> agent_client_protocol::v1::schema::SessionUpdate {
    use agent_client_protocol::v1::schema::{ContentChunk, SessionUpdate};
    SessionUpdate::UserMessageChunk(ContentChunk::new(text(t)))
}

/// A pane showing these turns: the prompt, the answer and the answer's message id.
fn conversation(turns: &[(&str, &str, &str)]) -> AgentPane {
    let mut pane = AgentPane::new("agent 1");
    for (prompt, answer, id) in turns {
        pane.apply(&user(prompt));
        pane.apply(&agent_id(answer, id));
    }
    pane
}

#[test]
fn a_move_keeps_the_shared_start_of_the_conversation_when_it_matches() {
    let mut pane = conversation(&[
        ("first", "One.", "a1"),
        ("second", "Two.", "a2"),
        ("third", "Three.", "a3"),
    ]);
    // The agent and the pane agree: the first turn stays, the rest goes.
    assert!(pane.branch_moved(&kept(Some((1, 3, Some("first"))))));
    let shown = screen(&mut pane).join("\n");
    assert!(shown.contains("One.") && !shown.contains("second") && !shown.contains("Three."));
    pane.apply(&user("second"));
    pane.apply(&agent_id("Two.", "a2"));
    assert!(screen(&mut pane).join("\n").contains("Two."));

    // They do not (another count, or another text): cleared, and the whole path is asked for.
    assert!(!pane.branch_moved(&kept(Some((1, 5, Some("first"))))));
    assert!(!screen(&mut pane).join("\n").contains("One."));
    let mut pane = conversation(&[("first", "One.", "a1")]);
    assert!(!pane.branch_moved(&kept(Some((1, 1, Some("other"))))));
    let mut pane = conversation(&[("first", "One.", "a1")]);
    assert!(pane.branch_moved(&kept(None)));
    assert!(!screen(&mut pane).join("\n").contains("One."));
}

/// A move that keeps `kept`, from leaf `x` to leaf `y`, replayed.
fn kept(kept: Option<(usize, usize, Option<&str>)>) -> BranchMove<'_> {
    BranchMove {
        kept,
        left: Some("x"),
        leaf: Some("y"),
        held: false,
    }
}

#[test]
fn moving_back_shows_the_conversation_held_for_that_leaf() {
    let mut pane = conversation(&[("first", "One.", "a1"), ("second", "Two.", "a2")]);
    // To another branch: the first turn stays, the other branch's turn is replayed.
    let there = BranchMove {
        kept: Some((1, 2, Some("first"))),
        left: Some("a2"),
        leaf: Some("b2"),
        held: false,
    };
    assert!(pane.branch_moved(&there));
    assert_eq!(pane.held_leaf(), Some("a2"));
    pane.apply(&user("other"));
    pane.apply(&agent_id("Other.", "b2"));
    let shown = screen(&mut pane).join("\n");
    assert!(
        shown.contains("Other.") && !shown.contains("Two."),
        "{shown}"
    );

    // And back, with nothing replayed: the held conversation is shown again, and the one
    // left is held in its turn.
    let back = BranchMove {
        kept: Some((1, 2, Some("first"))),
        left: Some("b2"),
        leaf: Some("a2"),
        held: true,
    };
    assert!(pane.branch_moved(&back));
    let shown = screen(&mut pane).join("\n");
    assert!(shown.contains("One.") && shown.contains("Two."), "{shown}");
    assert!(!shown.contains("Other."), "{shown}");
    assert_eq!(pane.held_leaf(), Some("b2"));
    // A streamed answer still finds its message: the indexes came back with the blocks.
    pane.apply(&agent_id(" More.", "a2"));
    assert!(screen(&mut pane).join("\n").contains("Two. More."));

    // Held for another leaf than the agent's: nothing changes, the whole path is asked for.
    let wrong = BranchMove {
        leaf: Some("zz"),
        ..back
    };
    assert!(!pane.branch_moved(&wrong));
    assert_eq!(pane.held_leaf(), None, "cleared for the whole path");

    // What is held follows the blocks before it as they were: a change there drops it.
    let mut pane = conversation(&[("first", "One.", "a1"), ("second", "Two.", "a2")]);
    assert!(pane.branch_moved(&there));
    pane.apply(&agent_id(" Amended.", "a1"));
    assert_eq!(pane.held_leaf(), None);
}

#[test]
fn an_open_tree_follows_the_session_keeping_its_filter_and_cursor() {
    use TreeNodeKind as K;
    let mut pane = AgentPane::new("agent 1");
    pane.update_tree(0, forked(), &[], Some("a3".into()));
    assert!(pane.open_kept_tree(false));
    pane.handle_key(key(KeyCode::Tab));
    select(&mut pane, "cache the tokens");
    // A turn ended: two entries more, and a label on an old one.
    let more = vec![
        node("u5", Some("a3"), K::User, "and document it"),
        node("a5", Some("u5"), K::Assistant, "documented"),
    ];
    let labels = [("u2".to_string(), "cache".to_string())];
    pane.update_tree(9, more, &labels, Some("a5".into()));
    pane.refresh_open_tree();
    let text = screen(&mut pane).join("\n");
    assert!(text.contains("your messages"), "the filter stays:\n{text}");
    assert!(text.contains("and document it") && !text.contains("documented"));
    assert!(text.contains("[cache]"), "{text}");
    let selected = pane_selected_text(&mut pane).unwrap_or_default();
    assert!(selected.contains("cache the tokens"), "{selected}");

    // A question being asked is left alone.
    pane.handle_key(key(KeyCode::Char('l')));
    let asking = screen(&mut pane).join("\n");
    pane.update_tree(
        11,
        vec![node("u6", Some("a5"), K::User, "ship it")],
        &[],
        None,
    );
    pane.refresh_open_tree();
    assert_eq!(screen(&mut pane).join("\n"), asking);
}
