//! Shell panes end to end: the real `march` in a pseudo-terminal, a real `/bin/sh` in its
//! shell pane, the screen read through `vt100`.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use acp_client::{Harness, bash_call};
use pty::{PtyMarch, descendants};

const PREFIX: &[u8] = b"\x01";
const ENTER: &[u8] = b"\r";

fn harness() -> Harness {
    harness_with(vec![])
}

fn harness_with(turns: Vec<march_testkit::Turn>) -> Harness {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let h = runtime.block_on(Harness::new(turns));
    std::thread::spawn(move || runtime.block_on(std::future::pending::<()>()));
    // Short grace so a program that ignores the hang-up is killed quickly.
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "permission_mode = \"yolo\"\n");
    text.push_str("\n[shell]\ncommand = \"/bin/sh\"\nhangup_grace_ms = 300\n");
    std::fs::write(&config, text).unwrap();
    h
}

/// `march` in the harness's project at 120×40, with a clean environment.
fn start(h: &Harness) -> PtyMarch {
    let home = h.dir.path().join("home");
    let ps1 = [("PS1", OsStr::new("$ "))];
    let m = PtyMarch::spawn_clean(&[], &h.project(), &home, &h.march_home(), &ps1);
    m.wait_text("March · project");
    m
}

/// Opens a shell pane (`Ctrl-a t`) and waits for it.
fn open_shell(m: &mut PtyMarch) {
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · project");
}

/// Live (non-zombie) processes among `pids`.
fn alive(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .collect()
}

/// Waits (generously) until none of `pids` is alive.
fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !alive(pids).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(alive(pids).is_empty(), "still alive: {:?}", alive(pids));
}

/// The live `sh` processes under `march`.
fn shells(march: u32) -> Vec<u32> {
    alive(&descendants(march))
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "sh")
        })
        .collect()
}

#[test]
fn a_shell_pane_runs_commands_and_closes_when_its_shell_exits() {
    let h = harness();
    std::fs::create_dir_all(h.project().join("sub")).unwrap();
    let mut m = start(&h);
    open_shell(&mut m);
    m.type_line("echo $((6*7))");
    m.wait_text("42");
    m.type_line("cd sub && pwd");
    m.wait_text("project/sub");
    // Colours, the program's title in the border.
    m.type_line("printf '\\033]0;my title\\007\\033[1;31mRED\\033[0m\\n'");
    m.wait_text("sh · my title");
    m.wait_text("RED");
    // The prefix pressed twice reaches the program: Ctrl-a is "start of line" nowhere in
    // dash, so it is simply echoed by the terminal as ^A when cat reads it.
    m.type_line("cat -v");
    m.send(PREFIX);
    m.send(PREFIX);
    m.send(ENTER);
    m.wait_text("^A");
    m.send(b"\x04");
    // A failing exit keeps the pane, marked; Enter starts the shell again.
    m.type_line("exit 3");
    m.wait_text("exited 3");
    m.send(ENTER);
    m.wait_for("the shell back", |t| !t.contains("exited 3"));
    m.type_line("echo again-$((1+1))");
    m.wait_text("again-2");
    // A successful exit closes the pane: the agent pane is alone again.
    m.type_line("exit");
    m.wait_for("the shell pane closed", |t| !t.contains("sh · "));
    assert!(shells(m.server_pid()).is_empty(), "the shell was reaped");
    m.quit();
}

#[test]
fn quitting_hangs_up_every_shell_and_kills_what_ignores_it() {
    let h = harness();
    let mut m = start(&h);
    open_shell(&mut m);
    // A foreground program that ignores SIGHUP, and a background job.
    m.type_line("sleep 1000 & trap '' HUP; echo started; sleep 1001");
    m.wait_text("started");
    let march = m.server_pid();
    // `started` shows before the second sleep has started: wait for it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut before = alive(&descendants(march));
    while before.len() < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        before = alive(&descendants(march));
    }
    assert!(before.len() >= 4, "runner, sh and two sleeps: {before:?}");
    // A program runs in the shell's foreground: March says so once, then quits.
    m.quit_confirming("sleep in a shell of project");
    // Everything March started is gone: nothing left running (zombies of orphans are the
    // init's to reap).
    wait_gone(&before);
}

#[test]
fn a_shell_pane_is_restored_in_its_directory() {
    let h = harness();
    std::fs::create_dir_all(h.project().join("deep/er")).unwrap();
    let mut m = start(&h);
    m.send(PREFIX);
    m.send(b"T");
    m.wait_text("sh · project");
    m.type_line("cd deep/er");
    // Typing saves nothing; quitting saves the layout with the shell's directory (once the
    // shell has run the `cd`, which the echo after it shows).
    m.type_line("echo cd-$((1+1))");
    m.wait_text("cd-2");
    m.quit();
    let mut m = start(&h);
    m.wait_text("sh · project");
    m.type_line("pwd");
    m.wait_text("project/deep/er");
    m.quit();
}

#[test]
fn the_wheel_scrolls_a_shells_history_and_typing_returns_to_the_live_screen() {
    let h = harness();
    let mut m = start(&h);
    open_shell(&mut m);
    m.type_line("i=0; while [ $i -lt 200 ]; do echo line-$i; i=$((i+1)); done");
    m.wait_text("line-199");
    // Shift-PageUp scrolls back a page; the position shows in the corner.
    m.send(b"\x1b[5;2~");
    let screen = m.wait_for("the history position", |t| {
        t.contains("/166]") && !t.contains("line-199")
    });
    assert!(screen.contains("line-128"), "a page back: {screen}");
    // Typing goes to the shell and returns to the live screen.
    m.type_line("echo typed");
    m.wait_for("the live screen", |t| {
        t.contains("typed") && t.contains("line-199")
    });
    m.quit();
}

#[test]
fn a_missing_shell_is_reported_and_march_stays_usable() {
    let h = harness();
    let config = h.march_home().join("config.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("/bin/sh", "/nonexistent/shell");
    std::fs::write(&config, text).unwrap();
    let mut m = start(&h);
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("cannot start /nonexistent/shell");
    assert!(!Path::new("/nonexistent/shell").exists());
    m.quit();
}

#[test]
fn copy_mode_searches_the_history_and_copies_the_selection() {
    let h = harness();
    let mut m = start(&h);
    open_shell(&mut m);
    m.type_line(
        "i=0; while [ $i -lt 100 ]; do echo row-$i; i=$((i+1)); done; echo needle-HERE; echo tail",
    );
    m.wait_text("needle-HERE");
    m.send(PREFIX);
    m.send(b"[");
    m.wait_text("copy [");
    // Backwards to "row-30" (in the history, out of view), then select the line's text
    // and copy it.
    m.send(b"?row-30\r");
    m.wait_for("the match scrolled into view", |t| {
        t.lines().any(|l| l.contains("││row-30 "))
    });
    m.send(b"v$y");
    m.wait_text("copied 6 characters");
    // Back to the live screen, typing reaches the shell again.
    m.type_line("echo after-copy");
    m.wait_text("after-copy");
    m.quit();
}

#[test]
fn an_agent_command_runs_live_in_the_agent_shell_and_takes_typed_input() {
    let h = harness_with(vec![
        march_testkit::Turn::stream(vec![bash_call(
            "c1",
            "printf 'name? '; read n; echo \"hello $n\"; exit 3",
        )]),
        march_testkit::Turn::text("The command said hello."),
    ]);
    let mut m = start(&h);
    m.type_line("run the greeting");
    m.send(PREFIX);
    m.send(b"e");
    m.wait_text("commands · ");
    // The command's own screen (the tool call's title holds the words too).
    m.wait_for("the command's prompt", |t| {
        t.lines().any(|l| l.starts_with("│name?"))
    });
    // The command waits for input: the user answers it in the agent shell pane.
    m.type_line("bob");
    m.wait_text("hello bob");
    m.wait_text("✗ 3");
    m.wait_text("The command said hello.");
    let requests = h.server.requests();
    let last = &requests.last().unwrap().raw_body;
    assert!(last.contains("hello bob"), "{last}");
    assert!(
        last.contains('3'),
        "the exit code reaches the model: {last}"
    );
    m.quit();
}

#[test]
fn an_unterminated_synchronized_update_never_freezes_a_pane_or_cuts_a_tool_result() {
    let h = harness_with(vec![
        march_testkit::Turn::stream(vec![bash_call(
            "c1",
            "printf 'S\\033[?2026h'; echo first-$((0+1)); echo second-$((1+1))",
        )]),
        march_testkit::Turn::text("Read it all."),
    ]);
    let mut m = start(&h);
    // The model gets every line of the command's output, whatever sequences it holds.
    m.type_line("run it");
    m.wait_text("Read it all.");
    let requests = h.server.requests();
    let last = &requests.last().unwrap().raw_body;
    assert!(
        last.contains("first-1") && last.contains("second-2"),
        "{last}"
    );
    // A shell pane shows what follows an update that never ends, after the limit.
    open_shell(&mut m);
    m.type_line("printf 'S\\033[?2026h'; echo o''ne-done");
    m.wait_text("one-done");
    m.type_line("echo a''fter");
    m.wait_text("after");
    // A full reset ends an update at once.
    m.type_line("printf '\\033[?2026h'; printf '\\033c'; echo re''set-done");
    m.wait_text("reset-done");
    m.quit();
}

#[test]
fn random_bytes_for_seconds_leave_march_responsive_and_bounded() {
    let h = harness();
    let mut m = start(&h);
    open_shell(&mut m);
    // The noise holds queries, which March answers as it parses them: answers parsed after
    // `cat` ended land in the shell's input, and a terminal that echoes would print them
    // over the marker. The test looks at March, not at that race: no echo while it runs.
    m.type_line(
        "stty -echo; timeout 10 cat /dev/urandom; printf '\\033c'; echo alive-$((40+2)); stty echo",
    );
    m.wait_text("alive-42");
    let status = std::fs::read_to_string(format!("/proc/{}/status", m.server_pid())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(rss_kb < 300 * 1024, "march grew to {rss_kb} KB");
    // Replies to queries in the noise may sit in the shell's input: Ctrl-U drops them.
    m.send(b"\x15");
    m.type_line("echo still-$((2+3))");
    m.wait_text("still-5");
    m.quit();
}
