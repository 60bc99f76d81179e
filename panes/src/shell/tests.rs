//! Shell panes against real programs on real PTYs.

use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::theme::Theme;

/// A pane running `sh -c script` in a temp dir, and the notices it raises.
fn pane(script: &str) -> (ShellPane, mpsc::Receiver<ShellNotice>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let wake: Wake = Arc::new(move |n| {
        let _ = tx.lock().unwrap().send(n);
    });
    let mut spec = ShellSpec::user_shell(dir.path());
    spec.program = "/bin/sh".into();
    spec.args = vec!["-c".into(), script.into()];
    let pane = ShellPane::spawn(spec, wake, OutputReader::Thread).unwrap();
    (pane, rx, dir)
}

/// Draws the pane at 40×10 and returns its rows as text.
fn screen(pane: &mut ShellPane) -> Vec<String> {
    let area = Rect::new(0, 0, 42, 12);
    let mut buf = Buffer::empty(area);
    pane.render(area, &mut buf, &Theme::default(), "t", true);
    (1..11)
        .map(|y| {
            (1..41)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// Waits (on notices, with a generous limit) until `check` holds for the drawn screen.
fn wait_for(
    pane: &mut ShellPane,
    rx: &mpsc::Receiver<ShellNotice>,
    check: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        pane.take_update();
        let rows = screen(pane);
        if check(&rows) {
            return rows;
        }
        assert!(Instant::now() < deadline, "screen never matched: {rows:#?}");
        let _ = rx.recv_timeout(Duration::from_millis(200));
    }
}

#[test]
fn output_reaches_the_screen_in_the_pane_size() {
    let (mut pane, rx, _dir) = pane("stty size; pwd; printf '\\033[31mred\\033[0m\\n'; sleep 30");
    // The first draw resizes the PTY to 10x40; `stty` may have run before that.
    screen(&mut pane);
    let rows = wait_for(&mut pane, &rx, |r| r.iter().any(|l| l == "red"));
    assert!(rows[0] == "10 40" || rows[0] == "24 80", "{rows:?}");
}

#[test]
fn keys_reach_the_program_and_its_exit_is_reported() {
    let (mut pane, rx, _dir) = pane("read line; echo \"got $line\"; exit 3");
    screen(&mut pane);
    for c in "hello".chars() {
        assert_eq!(
            pane.key(KeyEvent::from(crossterm::event::KeyCode::Char(c))),
            ShellKey::Sent
        );
    }
    pane.key(KeyEvent::from(crossterm::event::KeyCode::Enter));
    wait_for(&mut pane, &rx, |r| r.iter().any(|l| l == "got hello"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        // Taken by this loop, or already by `wait_for`'s.
        pane.take_update();
        if let Some(exit) = pane.exited() {
            break exit.clone();
        }
        assert!(Instant::now() < deadline, "no exit reported");
        let _ = rx.recv_timeout(Duration::from_millis(200));
    };
    assert_eq!(exit.code, 3);
    assert!(pane.border_title("p").ends_with("exited 3"));
    assert_eq!(
        pane.key(KeyEvent::from(crossterm::event::KeyCode::Char('x'))),
        ShellKey::Handled
    );
}

#[test]
fn hangup_kills_a_program_that_ignores_it() {
    let (mut pane, rx, _dir) = pane("trap '' HUP; echo ready; while :; do sleep 1; done");
    wait_for(&mut pane, &rx, |r| r.iter().any(|l| l == "ready"));
    let pid = pane.pid().unwrap();
    let started = Instant::now();
    pane.hangup(Duration::from_millis(300))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the grace was given"
    );
    // Reaped by the pane's waiter: no process, not even a zombie.
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "{pid} is still there"
    );
    // Its end is still reported after the hang-up (an agent waiting on a killed command
    // gets its answer).
    let deadline = Instant::now() + Duration::from_secs(20);
    while pane.take_update().exited.is_none() {
        assert!(Instant::now() < deadline, "no exit after the hang-up");
        let _ = rx.recv_timeout(Duration::from_millis(100));
    }
    assert!(
        pane.exited().is_some_and(|e| e.signal.is_some()),
        "ended by a signal"
    );
}

#[test]
fn floods_of_garbage_resizes_and_long_lines_leave_the_pane_working() {
    // Random bytes (escape sequences of every kind among them), a 10 MB line without a
    // newline, and a flood of malformed and unknown sequences; then a reset and a marker.
    let script = "head -c 8000000 /dev/urandom; \
                  head -c 10485760 /dev/zero | tr '\\0' x; \
                  i=0; while [ $i -lt 20000 ]; do printf '\\033[999;999H\\033[?9999h\\033]999;x\\007\\033P\\033[38;2;300;-1m\\033[;;;;;m\\033(0\\033#8'; i=$((i+1)); done; \
                  printf '\\033c'; echo alive-$((40+2)); sleep 30";
    let (mut pane, rx, _dir) = pane(script);
    // A resize storm while it runs.
    let mut size = 7u16;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        pane.take_update();
        size = size.wrapping_mul(31).wrapping_add(17) % 90 + 3;
        let area = Rect::new(0, 0, size + 2, size / 2 + 3);
        let mut buf = Buffer::empty(area);
        pane.render(area, &mut buf, &Theme::default(), "t", true);
        // The marker may have been printed at any width: lines the program wrapped are
        // joined (history is not reflowed when the width changes).
        let text = {
            let term = pane.terminal();
            let term = term.lock();
            let mut text = String::new();
            for line in 0..term.line_count() {
                text.push_str(&term.line_text(line));
                if !term.line_wrapped(line) {
                    text.push('\n');
                }
            }
            text
        };
        if text.contains("alive-42") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never recovered: {:?}",
            screen(&mut pane)
        );
        let _ = rx.recv_timeout(Duration::from_millis(20));
    }
    // The history stayed within its byte limit.
    let term = pane.terminal();
    let term = term.lock();
    assert!(term.scrollback_lines() <= pane.spec().scrollback_lines);
    assert!(term.scrollback_bytes() <= pane.spec().scrollback_bytes);
    drop(term);
    assert_eq!(
        pane.key(KeyEvent::from(crossterm::event::KeyCode::Char('q'))),
        ShellKey::Sent
    );
}

#[test]
fn changed_rows_are_drawn_alone_until_the_title_changes() {
    let (mut pane, rx, _dir) = pane(
        "stty -echo; echo ready; read a; echo one; read b; printf '\\033]2;new title\\007'; sleep 30",
    );
    let theme = Theme::default();
    let mut buf = Buffer::empty(Rect::new(0, 0, 42, 12));
    assert_eq!(
        pane.render_changed_rows(&mut buf, &theme),
        None,
        "never drawn"
    );
    wait_for(&mut pane, &rx, |rows| rows[0] == "ready");
    pane.key(KeyEvent::from(crossterm::event::KeyCode::Enter));
    // Only cells that changed are drawn, where the pane's screen was: "one" on its second
    // row.
    let deadline = Instant::now() + Duration::from_secs(20);
    let row_text =
        |buf: &Buffer| -> String { (1..4).map(|x| buf[(x, 2)].symbol().to_string()).collect() };
    loop {
        assert!(Instant::now() < deadline, "the output never came");
        let _ = rx.recv_timeout(Duration::from_millis(200));
        let mut rows = Buffer::empty(Rect::new(0, 0, 42, 12));
        let drawn = pane.render_changed_rows(&mut rows, &theme).unwrap();
        assert!(
            drawn
                .iter()
                .all(|a| a.x >= 1 && a.right() <= 41 && a.height == 1),
            "{drawn:?}"
        );
        if let Some(one) = drawn.iter().find(|a| a.y == 2)
            && row_text(&rows) == "one"
        {
            // Its three letters, the cursor's cell after them and a column more, not the
            // row's 40.
            assert_eq!((one.x, one.width), (1, 5), "{drawn:?}");
            buf = rows;
            break;
        }
    }
    assert_eq!(buf[(0, 2)].symbol(), " ", "the border is not drawn");
    // A new title is in the border: the pane is drawn whole.
    pane.key(KeyEvent::from(crossterm::event::KeyCode::Enter));
    let deadline = Instant::now() + Duration::from_secs(20);
    while pane.term.lock().title() != Some("new title") {
        assert!(Instant::now() < deadline, "the title never came");
        let _ = rx.recv_timeout(Duration::from_millis(200));
    }
    assert_eq!(pane.render_changed_rows(&mut buf, &theme), None);
}
