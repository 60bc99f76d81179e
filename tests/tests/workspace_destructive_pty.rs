//! Keys and clicks that could lose work, end to end: the real `march` in a pseudo-terminal
//! against the scripted model server. `Ctrl-a x` asks before it stops a turn (running, or
//! waiting for a permission answer) or a program in a shell pane, and closes an idle pane at
//! once; a first click on a pane only focuses it, and a click on an edit opens the diff pane
//! without handing it the keys; reverting a file the agent created removes it, and `U` brings
//! it back byte for byte.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use acp_client::write_call;
use march_testkit::Turn;
use pty::{PtyMarch, descendants};
use workspace::*;

/// What `Ctrl-a x` says when closing the pane would stop work.
const ASKS: &str = "again to go ahead: closing the pane stops";

/// `Ctrl-a x`.
fn close_pane(m: &mut PtyMarch) {
    m.send(PREFIX);
    m.send(b"x");
}

/// How many agent panes of the project the screen shows side by side (their titles on the
/// top row; the status bar may name one too).
fn agent_panes(screen: &str) -> usize {
    screen
        .lines()
        .next()
        .map_or(0, |top| top.matches("March · project").count())
}

/// The screen position (column, row; 0-based) where `needle` first shows, left to right
/// from column `from`.
fn find_from(m: &PtyMarch, needle: &str, from: u16) -> (u16, u16) {
    m.with_screen(|s| {
        let (rows, cols) = s.size();
        for row in 0..rows {
            let text = s.contents_between(row, from, row, cols);
            if let Some(at) = text.find(needle) {
                return (from + text[..at].chars().count() as u16, row);
            }
        }
        panic!("{needle:?} is not on screen:\n{}", s.contents())
    })
}

/// A left click (press and release, SGR mouse reports) at 0-based column, row.
fn click(m: &mut PtyMarch, (col, row): (u16, u16)) {
    let at = format!("{};{}", col + 1, row + 1);
    m.send(format!("\x1b[<0;{at}M\x1b[<0;{at}m").as_bytes());
}

/// The live (not zombie) processes under `pid` whose command starts with `name`.
fn live_processes(pid: u32, name: &str) -> Vec<u32> {
    descendants(pid)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim().starts_with(name))
        })
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .collect()
}

#[test]
fn closing_a_pane_asks_while_its_turn_runs_or_waits_for_permission_and_not_when_idle() {
    let h = tokio_harness(vec![
        Turn::stream(vec![write_call("w1", "asked.txt", "never written")]),
        Turn::Silent,
    ]);
    // Wide enough for the whole question in the status bar.
    let mut m = PtyMarch::spawn_sized(
        &[],
        &h.project(),
        &h.dir.path().join("home"),
        &h.march_home(),
        &[],
        200,
        40,
    );
    m.wait_text("March · project");

    // A pane waiting for a permission answer: the first Ctrl-a x asks, naming it.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("two agent panes", |t| agent_panes(t) == 2);
    m.type_line("write a file");
    m.wait_text("Allow once");
    close_pane(&mut m);
    let screen = m.wait_text(ASKS);
    let question = screen.lines().find(|l| l.contains(ASKS)).unwrap();
    assert!(
        question.contains("closing the pane stops a turn in March · project"),
        "{question}"
    );
    assert!(
        question.contains("(it asks for permission)"),
        "the question says the turn waits for a permission: {question}"
    );
    assert!(screen.contains("ctrl-a x again"), "{screen}");
    assert_eq!(agent_panes(&screen), 2, "closed without asking: {screen}");
    assert!(screen.contains("Allow once"), "{screen}");
    // The same key again closes it; the write it asked for never ran.
    close_pane(&mut m);
    m.wait_for("the pane closed", |t| {
        agent_panes(t) == 1 && !t.contains("Allow once")
    });
    assert!(!h.project().join("asked.txt").exists());

    // A pane whose turn runs (the model never answers): asks, then closes.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("two agent panes", |t| agent_panes(t) == 2);
    m.type_line("stall");
    m.wait_text("waiting for the model");
    close_pane(&mut m);
    let screen = m.wait_text(ASKS);
    assert!(
        screen.contains("closing the pane stops a turn in March · project"),
        "{screen}"
    );
    assert!(!screen.contains("(it asks for permission)"), "{screen}");
    assert_eq!(agent_panes(&screen), 2, "closed without asking: {screen}");
    close_pane(&mut m);
    m.wait_for("the pane closed", |t| {
        agent_panes(t) == 1 && !t.contains("waiting for the model")
    });

    // An idle pane closes at once: one press (a pane that asked would still be there).
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("two agent panes", |t| agent_panes(t) == 2);
    close_pane(&mut m);
    m.wait_for("the idle pane closed", |t| agent_panes(t) == 1);
    m.quit();
}

#[test]
fn closing_a_shell_pane_asks_while_vim_runs_in_it_and_not_when_the_shell_is_idle() {
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    let server = m.server_pid();

    // vim in a shell pane, with text typed and not saved.
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · ");
    m.type_line("echo shell-$((20+1))");
    m.wait_text("shell-21");
    m.type_line("vim -u NONE -N");
    m.wait_text("~");
    m.send(b"i");
    m.wait_text("-- INSERT --");
    m.send(b"words nobody saved");
    m.wait_text("words nobody saved");
    assert_eq!(live_processes(server, "vim").len(), 1, "vim runs");

    close_pane(&mut m);
    let screen = m.wait_text(ASKS);
    assert!(
        screen.contains("closing the pane stops vim"),
        "the question names vim: {screen}"
    );
    assert!(screen.contains("in a shell of project"), "{screen}");
    // The pane is still there, vim in it.
    assert!(screen.contains("words nobody saved"), "{screen}");
    assert!(screen.contains("sh · "), "{screen}");
    assert_eq!(live_processes(server, "vim").len(), 1, "vim still runs");
    // Again: it closes, and vim with it.
    close_pane(&mut m);
    let screen = m.wait_for("the shell pane closed", |t| {
        !t.contains("sh · ") && !t.contains("words nobody saved")
    });
    assert_eq!(agent_panes(&screen), 1, "{screen}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !live_processes(server, "vim").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        live_processes(server, "vim").is_empty(),
        "vim outlived its pane"
    );

    // A shell with nothing in its foreground closes at once: one press (a pane that asked
    // would still be there).
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · ");
    m.type_line("echo idle-$((40+2))");
    m.wait_text("idle-42");
    close_pane(&mut m);
    m.wait_for("the idle shell pane closed", |t| !t.contains("sh · "));
    m.quit();
}

#[test]
fn a_first_click_only_focuses_and_a_click_on_an_edit_opens_the_diff_keeping_the_focus() {
    let h = tokio_harness(vec![
        Turn::stream(vec![write_call("w1", "clicked.txt", "clicked line")]),
        Turn::text("Wrote clicked.txt."),
    ]);
    let project = h.project();
    let mut m = start(&h);
    m.type_line("write it");
    m.wait_text("Allow once");
    m.send(b"1");
    m.wait_text("Wrote clicked.txt.");
    assert_eq!(
        std::fs::read_to_string(project.join("clicked.txt")).unwrap(),
        "clicked line"
    );
    // A shell beside it takes the focus.
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · ");
    m.type_line("echo shell-$((1+1))");
    m.wait_text("shell-2");

    // A click on the edit in the agent pane, which is not focused: it only focuses the
    // pane. The keys typed next go to its prompt; no diff pane opened.
    let edit = find_from(&m, "clicked line", 0);
    click(&mut m, edit);
    m.send(b"zz");
    let screen = m.wait_text("› zz");
    assert!(
        !screen.contains("changes · project"),
        "the first click opened the diff: {screen}"
    );

    // Clicked again, now focused: the diff pane opens at the file, the focus stays on the
    // agent pane, so `rr` lands in the prompt and reverts nothing.
    click(&mut m, edit);
    m.wait_text("changes · project");
    m.send(b"rr");
    let screen = m.wait_text("› zzrr");
    assert!(!screen.contains("press r again"), "{screen}");
    assert!(!screen.contains("reverted"), "{screen}");
    assert!(!screen.contains("deleted clicked.txt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.join("clicked.txt")).unwrap(),
        "clicked line",
        "the keys after the click reverted the edit"
    );

    // The diff pane's keys work once it is focused: a click on it (it was not focused)
    // hands it the keys, and `r` asks before reverting.
    m.wait_for("the diff pane with the file", |t| {
        t.contains("▸ clicked.txt +1 -0 new") && t.contains("1 +clicked line")
    });
    let (col, row) = find_from(&m, "changes · project", 0);
    click(&mut m, (col, row + 1));
    m.send(b"r");
    m.wait_text("press r again to undo this change in clicked.txt");
    assert_eq!(
        std::fs::read_to_string(project.join("clicked.txt")).unwrap(),
        "clicked line"
    );
    m.quit();
}

#[test]
fn reverting_a_created_file_removes_it_and_u_brings_it_back_byte_for_byte() {
    let h = tokio_harness(vec![
        Turn::stream(vec![write_call(
            "w1",
            "created.txt",
            "first line\\nsecond line\\n",
        )]),
        Turn::text("Created it."),
    ]);
    let path = h.project().join("created.txt");
    let mut m = start(&h);
    m.type_line("create a file");
    m.wait_text("Allow once");
    m.send(b"1");
    m.wait_text("Created it.");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, b"first line\nsecond line\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();

    // The diff pane, focused, shows the new file (the transcript shows its lines too: wait
    // for the pane's list of files and its numbered lines).
    m.send(PREFIX);
    m.send(b"v");
    m.wait_for("the diff pane with the new file", |t| {
        t.contains("changes · project")
            && t.contains("▸ created.txt +2 -0 new")
            && t.contains("2 +second line")
    });
    // `r` asks first; nothing is written yet.
    m.send(b"r");
    m.wait_text("press r again to undo this change in created.txt");
    assert!(path.exists(), "reverted on the first press");
    // Again: the file the session created is gone.
    m.send(b"r");
    m.wait_text("deleted created.txt, which the session created");
    assert!(!path.exists(), "the reverted file is still there");
    // `U` brings it back, the same bytes and permissions.
    m.send(b"U");
    m.wait_text("brought created.txt back");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode(), mode);
    m.quit();
}
