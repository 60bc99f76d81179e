//! Every pane kind through the one pane interface: the wheel, the scroll keys and paste in
//! each, and each saved to the workspace file and restored from it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CreateTerminalRequest, SessionId, SessionUpdate, TextContent,
};
use crossterm::event::KeyModifiers;
use march_panes::highlight::Highlighter;
use march_panes::scroll::Scroll;
use march_panes::theme::Theme;
use march_runner::client::{
    Diagnostic, DiagnosticsNotification, FileDiagnostics, HostEvent, Severity,
};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{Pane, PaneInput, PaneKind};
use crate::workspace::changes::FileChange;
use crate::workspace::layout::{Axis, PaneId};
use crate::workspace::persist::{Loaded, SavedPane, WorkspaceStore};
use crate::workspace::{TestBus, Workspace, test_launcher, test_workspace};

/// Lines of content each pane gets: more than any pane shows.
const LINES: usize = 300;

/// A git repository with `big.txt` committed and then changed on every line.
fn changed_repo() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = crate::workspace::test_repo();
    let git = |args: &[&str]| crate::workspace::git_in(&root, args);
    let text = |tag: &str| -> String { (1..=LINES).map(|n| format!("{tag} {n}\n")).collect() };
    std::fs::write(root.join("big.txt"), text("old")).unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one"]);
    std::fs::write(root.join("big.txt"), text("new")).unwrap();
    (dir, root)
}

/// Draws the workspace; the cells of pane `id`, as text (`styled`: each with its style).
fn cells(ws: &mut Workspace, id: PaneId, styled: bool) -> String {
    let area = Rect::new(0, 0, 160, 60);
    let mut buf = Buffer::empty(area);
    ws.render(
        area,
        &mut buf,
        &Theme::default(),
        &Highlighter::new(),
        false,
    );
    let rect = ws
        .tab()
        .layout
        .rects(area)
        .into_iter()
        .find(|(p, _)| *p == id)
        .map(|(_, r)| r)
        .unwrap();
    // A running command's line counts its time: what scrolls is below it.
    let from = match ws.pane_kind(id) {
        Some(PaneKind::Commands) => rect.y + 3,
        _ => rect.y,
    };
    let mut out = String::new();
    for y in from..rect.bottom() {
        for x in rect.x..rect.right() {
            let cell = &buf[(x, y)];
            out.push_str(cell.symbol());
            if styled {
                // A moved selection changes only styles.
                out.push_str(&format!("{:?}", cell.style()));
            }
        }
        out.push('\n');
    }
    out
}

/// Pane `id` as drawn, styles and all.
fn drawn(ws: &mut Workspace, id: PaneId) -> String {
    cells(ws, id, true)
}

/// Pane `id`'s text as drawn.
fn text_of(ws: &mut Workspace, id: PaneId) -> String {
    cells(ws, id, false)
}

/// Draws the workspace as programs write until pane `id` shows `wanted`.
async fn wait_for(ws: &mut Workspace, bus: &mut TestBus, id: PaneId, wanted: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        // Drawing marks the output seen, so the next output is told again.
        if text_of(ws, id).contains(wanted) {
            return;
        }
        match tokio::time::timeout_at(deadline, bus.shells.recv()).await {
            Ok(Some(_)) => {}
            _ => panic!("{wanted:?} never showed:\n{}", text_of(ws, id)),
        }
    }
}

/// A program printing numbered lines, then echoing what it is given.
fn counting_program() -> (String, Vec<String>) {
    (
        "/bin/sh".to_string(),
        vec![
            "-c".to_string(),
            format!("i=1; while [ $i -le {LINES} ]; do echo row $i; i=$((i+1)); done; exec cat"),
        ],
    )
}

/// A workspace with one pane of every kind, each with more content than it shows, and
/// the ids of those panes.
async fn every_kind() -> (
    Workspace,
    TestBus,
    Vec<(PaneKind, PaneId)>,
    tempfile::TempDir,
) {
    let (dir, project) = changed_repo();
    let (mut ws, mut bus) = test_workspace(&project);
    let (program, args) = counting_program();
    ws.launcher.shell.command = Some(program.clone());
    ws.launcher.shell.args = args.clone();

    let agent = ws.focused();
    let key = ws.focused_session().unwrap();
    let slot = ws.focused_slot().unwrap();
    slot.session_id = Some(SessionId::new("s1"));
    let long: String = (1..=LINES).map(|n| format!("said {n}\n\n")).collect();
    slot.view
        .apply(&SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(long)),
        )));

    ws.open_shell(Axis::Horizontal).unwrap();
    let shell = ws.focused();

    ws.focus_number(0);
    let request = CreateTerminalRequest::new(SessionId::new("s1"), program).args(args);
    ws.create_terminal(key, &request).unwrap();
    ws.toggle_agent_shell();
    let commands = ws.focused();

    let before: String = (1..=LINES).map(|n| format!("old {n}\n")).collect();
    let after: String = (1..=LINES).map(|n| format!("new {n}\n")).collect();
    ws.changes.record(
        "s1",
        FileChange::new("c1", &project.join("big.txt"), Some(&before), &after),
    );
    ws.focus_number(0);
    assert!(ws.open_diff());
    let diff = ws.focused();

    ws.open_uncommitted_diff();
    let uncommitted = ws.focused();

    let diagnostics: Vec<Diagnostic> = (1..=LINES as u32)
        .map(|line| Diagnostic {
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            severity: Severity::Error,
            message: format!("problem {line}"),
            source: "test".to_string(),
            code: None,
        })
        .collect();
    ws.diagnostics_event(DiagnosticsNotification {
        project: project.clone(),
        event: HostEvent::Diagnostics(FileDiagnostics {
            path: project.join("big.txt"),
            diagnostics,
        }),
    });
    ws.open_diagnostics();
    let diagnostics = ws.focused();

    bus.settle(&mut ws).await;
    wait_for(&mut ws, &mut bus, shell, &format!("row {LINES}")).await;
    wait_for(&mut ws, &mut bus, commands, &format!("row {LINES}")).await;
    let panes = vec![
        (PaneKind::Agent, agent),
        (PaneKind::Shell, shell),
        (PaneKind::Commands, commands),
        (PaneKind::Diff, diff),
        (PaneKind::Uncommitted, uncommitted),
        (PaneKind::Diagnostics, diagnostics),
    ];
    for (kind, id) in &panes {
        assert_eq!(ws.pane_kind(*id), Some(*kind));
    }
    assert_eq!(ws.pane_count(), panes.len());
    (ws, bus, panes, dir)
}

#[tokio::test]
async fn every_pane_kind_scrolls_one_way_with_the_keys_and_the_wheel() {
    let (mut ws, _bus, panes, _dir) = every_kind().await;
    for (kind, id) in panes {
        ws.pane_scroll(id, Scroll::Top);
        let top = drawn(&mut ws, id);
        // Up from the top goes nowhere: a pane counting the other way would move.
        ws.pane_scroll(id, Scroll::Lines(-3));
        assert_eq!(drawn(&mut ws, id), top, "{kind:?}: up from the top");
        ws.pane_wheel(id, true, 0, 0, KeyModifiers::NONE);
        assert_eq!(drawn(&mut ws, id), top, "{kind:?}: wheel up from the top");
        // Down moves; the wheel down moves as far as three lines do.
        ws.pane_scroll(id, Scroll::Lines(3));
        let three_down = drawn(&mut ws, id);
        assert_ne!(three_down, top, "{kind:?}: three lines down");
        ws.pane_scroll(id, Scroll::Top);
        ws.pane_wheel(id, false, 0, 0, KeyModifiers::NONE);
        assert_eq!(drawn(&mut ws, id), three_down, "{kind:?}: wheel down");
        ws.pane_wheel(id, true, 0, 0, KeyModifiers::NONE);
        assert_eq!(drawn(&mut ws, id), top, "{kind:?}: wheel back up");
        // A page down is further than three lines; the bottom is further still, and down
        // from there goes nowhere.
        ws.pane_scroll(id, Scroll::Pages(1));
        let page = drawn(&mut ws, id);
        assert!(page != top && page != three_down, "{kind:?}: a page down");
        ws.pane_scroll(id, Scroll::Bottom);
        let bottom = drawn(&mut ws, id);
        assert_ne!(bottom, page, "{kind:?}: the bottom");
        ws.pane_wheel(id, false, 0, 0, KeyModifiers::NONE);
        assert_eq!(drawn(&mut ws, id), bottom, "{kind:?}: down from the bottom");
        ws.pane_scroll(id, Scroll::Pages(-1));
        assert_ne!(drawn(&mut ws, id), bottom, "{kind:?}: a page up");
    }
}

#[tokio::test]
async fn every_pane_kind_takes_a_paste_or_says_why_not() {
    let (mut ws, mut bus, panes, _dir) = every_kind().await;
    for (kind, id) in panes {
        let before = text_of(&mut ws, id);
        let input = ws.pane_paste(id, "pasted words");
        match kind {
            PaneKind::Shell | PaneKind::Commands => {
                // The program (cat) gets it, and its terminal echoes it.
                assert_eq!(input, PaneInput::ToProgram, "{kind:?}");
                wait_for(&mut ws, &mut bus, id, "pasted words").await;
            }
            PaneKind::Agent | PaneKind::Setup => {
                assert_eq!(input, PaneInput::Done, "{kind:?}");
                assert!(text_of(&mut ws, id).contains("pasted words"), "{kind:?}");
            }
            PaneKind::Diff | PaneKind::Uncommitted | PaneKind::Diagnostics => {
                assert!(
                    matches!(input, PaneInput::Refused(_)),
                    "{kind:?}: {input:?}"
                );
                assert_eq!(text_of(&mut ws, id), before, "{kind:?}");
            }
        }
    }
}

#[tokio::test]
async fn every_pane_kind_is_saved_and_restored_through_the_workspace_file() {
    let (ws, _bus, panes, _dir) = every_kind().await;
    let home = tempfile::tempdir().unwrap();
    let dirs = vec![ws.tab().project.clone()];
    {
        let (mut store, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
        store.save(&ws.saved(&dirs)).unwrap();
    }
    let (_store, loaded) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
    let Loaded::Restored(saved) = loaded else {
        panic!("the file was not restored: {loaded:?}");
    };
    let project = dirs[0].clone();
    let session = Some("s1".to_string());
    let expected = |kind: PaneKind| match kind {
        PaneKind::Agent | PaneKind::Setup => SavedPane::Agent {
            project: project.clone(),
            session: session.clone(),
            agent: None,
            draft: String::new(),
        },
        PaneKind::Shell => SavedPane::Shell {
            project: project.clone(),
            cwd: project.clone(),
        },
        PaneKind::Commands => SavedPane::Commands {
            project: project.clone(),
            session: session.clone(),
        },
        PaneKind::Diff => SavedPane::Diff {
            project: project.clone(),
            session: session.clone(),
        },
        PaneKind::Uncommitted => SavedPane::Uncommitted {
            project: project.clone(),
        },
        PaneKind::Diagnostics => SavedPane::Diagnostics {
            project: project.clone(),
        },
    };
    for (kind, id) in &panes {
        assert_eq!(saved.panes.get(&id.0), Some(&expected(*kind)), "{kind:?}");
    }

    let (launcher, mut bus) = test_launcher();
    let mut back = Workspace::restore(launcher, saved);
    bus.settle(&mut back).await;
    assert_eq!(back.tab().layout, ws.tab().layout);
    for (kind, id) in &panes {
        assert_eq!(back.pane_kind(*id), Some(*kind), "{kind:?}");
    }
    // The panes that follow a session follow the restored one, with its id.
    let agent = back.agent_session(panes[0].1).unwrap();
    for (kind, id) in &panes[2..4] {
        assert_eq!(
            back.pane(*id).and_then(Pane::session),
            Some(agent),
            "{kind:?}"
        );
    }
    assert_eq!(back.sessions.keys().count(), 1);
    // What it shows comes back too: the uncommitted changes, diffed again.
    let uncommitted = back.diff_mut(panes[4].1).unwrap();
    assert_eq!(uncommitted.files().len(), 1);
}

#[tokio::test]
async fn a_pane_of_a_session_never_opened_is_left_out_not_the_whole_file() {
    let project = Path::new("/work/p");
    let (mut ws, _bus) = test_workspace(project);
    // The session has no id yet: its diff pane cannot be shown again.
    let key = ws.focused_session().unwrap();
    ws.open_diff_of(key, None);
    let saved = ws.saved(&[project.to_path_buf()]);
    let (launcher, _bus) = test_launcher();
    let back = Workspace::restore(launcher, saved);
    assert_eq!(back.pane_count(), 1);
    assert_eq!(back.pane_kind(back.focused()), Some(PaneKind::Agent));
}
