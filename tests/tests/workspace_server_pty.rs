//! The workspace server end to end: `march` in real PTYs as its clients, the scripted
//! model server behind its runners. A turn goes on while no terminal is attached; several
//! terminals of different sizes share one workspace; a read-only one only watches; a
//! client or the server killed; bad bytes on the socket; a socket directory open to others;
//! a stale socket; two `march` started at once.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use acp_client::Harness;
use march_testkit::{Event, ScriptStop, Turn};
use pty::PtyMarch;
use workspace::*;

/// Another terminal of `cols`×`rows` running `march ARGS` in the harness's project.
fn terminal(h: &Harness, args: &[&str], cols: u16, rows: u16) -> PtyMarch {
    let home = h.dir.path().join("home");
    PtyMarch::spawn_sized(args, &h.project(), &home, &h.march_home(), &[], cols, rows)
}

/// The directory of the harness's workspace sockets.
fn socket_dir(h: &Harness) -> PathBuf {
    h.march_home().join("run").join("march")
}

/// The socket of the harness's workspace (named after its project directory).
fn socket(h: &Harness) -> PathBuf {
    socket_dir(h).join("project.sock")
}

/// Another project directory beside the harness's, canonical as `march ls` shows it.
fn other_project(h: &Harness) -> PathBuf {
    let dir = h.dir.path().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// Detaches `m` with `Ctrl-a d`; once it has exited the server has let it go.
fn detach(m: &mut PtyMarch, workspace: &str) {
    m.send(PREFIX);
    m.send(b"d");
    assert_eq!(m.wait_exit(), 0);
    m.wait_text(&format!("[detached from {workspace}]"));
}

/// A frame as the wire has it: length, kind, body.
fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 1) as u32).to_be_bytes().to_vec();
    out.push(kind);
    out.extend_from_slice(body);
    out
}

/// A hello of a `cols`×`rows` terminal that the server cannot open (its output comes on
/// the socket), then its ready (its terminal set up), as a client sends them.
fn hello(cols: u16, rows: u16) -> Vec<u8> {
    hello_on(cols, rows, None)
}

/// [`hello`] naming `tty` as the terminal to write.
fn hello_on(cols: u16, rows: u16, tty: Option<&str>) -> Vec<u8> {
    let body = serde_json::json!({ "version": 3, "cols": cols, "rows": rows, "tty": tty });
    let mut out = frame(1, body.to_string().as_bytes());
    out.extend(frame(6, b""));
    out
}

/// Everything the server sends until it closes the connection (or 30 s pass).
fn read_to_end(stream: &mut UnixStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    out
}

#[test]
fn a_turn_streams_on_after_a_hang_up_and_attach_shows_it_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("go-on");
    let h = tokio_harness(vec![Turn::stream(vec![
        Event::text("Part one, "),
        Event::WaitForFile { path: gate.clone() },
        Event::text("part two, "),
        Event::text("streamed to the end."),
    ])]);
    let mut m = start(&h);
    m.type_line("tell me slowly");
    m.wait_text("Part one,");
    // The terminal goes away mid-turn: a detach, not the end.
    m.hang_up();
    let all = m.workspaces();
    assert_eq!(all.len(), 1, "{all:?}");
    let ws = &all[0];
    assert_eq!(ws["name"], "project");
    assert_eq!(ws["clients"], 0, "{ws}");
    assert_eq!(ws["sessions"], 1, "{ws}");
    assert_eq!(ws["working"], 1, "the turn runs on: {ws}");
    assert_eq!(ws["dirs"][0].as_str(), h.project().to_str());
    assert!(ws["pid"].as_u64().unwrap() > 0 && ws["started"].as_u64().unwrap() > 0);
    let (code, table) = m.cli(&["ls"]);
    assert_eq!(code, 0, "{table}");
    let row = table.lines().find(|l| l.starts_with("project")).unwrap();
    assert!(row.contains(h.project().to_str().unwrap()), "{table}");
    // The model goes on; whatever streams while nobody watches is kept.
    std::fs::write(&gate, "").unwrap();
    let mut back = terminal(&h, &["attach"], 120, 40);
    back.wait_text("Part one, part two, streamed to the end.");
    let screen = back.text();
    assert!(screen.contains("tell me slowly"), "{screen}");
    back.quit();
}

#[test]
fn terminals_of_different_sizes_share_one_workspace_and_a_read_only_one_only_watches() {
    let h = tokio_harness(vec![Turn::text("Seen by both.")]);
    let mut big = start(&h);
    let mut small = terminal(&h, &["attach"], 80, 24);
    small.wait_text("March · project");
    // The workspace takes the size of the terminal that came last; the larger one marks
    // what it does not use.
    big.wait_for("the unused part marked", |t| {
        t.lines()
            .nth(30)
            .is_some_and(|l| l.starts_with("··········"))
    });
    small.type_line("typed in the small one");
    big.wait_text("Seen by both.");
    small.wait_text("Seen by both.");
    // Typing in the large one gives the workspace its size again.
    big.send(b"x");
    big.wait_for("the whole terminal used", |t| {
        !t.contains("···") && t.contains("› x")
    });
    // A read-only terminal shows the workspace and its keys do nothing.
    let mut watcher = terminal(&h, &["attach", "-r"], 100, 30);
    watcher.wait_text("Seen by both.");
    watcher.type_line("ignored words");
    watcher.send(PREFIX);
    watcher.send(b"%");
    // A resize comes after those keys on the same connection: once its frame is drawn,
    // the keys were handled.
    watcher.resize(130, 30);
    watcher.wait_for("the resized watcher's frame", |t| {
        t.lines().next().is_some_and(|l| l.ends_with("··········"))
    });
    let screen = big.text();
    assert!(!screen.contains("ignored words"), "{screen}");
    assert_eq!(
        screen.matches("March · project").count(),
        1,
        "no split: {screen}"
    );
    assert_eq!(big.workspaces()[0]["clients"], 3);
    // Detaching is the one thing it can do.
    watcher.send(PREFIX);
    watcher.send(b"d");
    assert_eq!(watcher.wait_exit(), 0);
    watcher.wait_text("[detached from project]");
    small.send(PREFIX);
    small.send(b"d");
    assert_eq!(small.wait_exit(), 0);
    small.wait_text("[detached from project]");
    big.quit();
}

#[test]
fn a_client_killed_leaves_the_others_and_the_server_killed_restores_every_terminal() {
    let h = tokio_harness(vec![
        Turn::text("First answer."),
        Turn::text("Second answer."),
    ]);
    let mut m = start(&h);
    m.type_line("remember this");
    m.wait_text("First answer.");
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · ");
    let mut other = terminal(&h, &["attach"], 120, 40);
    other.wait_text("First answer.");
    other.kill9();
    // The server and the first terminal go on.
    m.send(PREFIX);
    m.send(b"h");
    m.type_line("still there?");
    m.wait_text("Second answer.");
    // The killed client's connection is seen closed (its reader task reports it).
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    while m.workspaces()[0]["clients"] != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the killed client is still counted: {:?}",
            m.workspaces()
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The server is killed: the terminal is restored and told why.
    let server = m.server_pid();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(server as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    assert_ne!(m.wait_exit(), 0);
    let screen = m.wait_text("the workspace server ended unexpectedly");
    assert!(screen.contains("run march again"), "{screen}");
    m.with_screen(|s| {
        assert!(!s.alternate_screen(), "still on the alternate screen");
        assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
        assert!(!s.hide_cursor(), "the cursor stays hidden");
    });
    // The next march restores the layout and the session.
    let mut again = start(&h);
    again.wait_for("the restored split and transcript", |t| {
        t.contains("Second answer.") && t.contains("sh · ")
    });
    again.quit();
}

#[test]
fn bad_bytes_on_the_socket_drop_that_connection_and_a_client_that_stops_reading_slows_nothing() {
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    let path = socket(&h);
    // A frame longer than any March sends.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(b"\xff\xff\xff\xffgarbage").unwrap();
    let said = String::from_utf8_lossy(&read_to_end(&mut s)).into_owned();
    assert!(said.contains("limit"), "{said:?}");
    // Half a hello, then the connection closes.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(&hello(80, 24)[..7]).unwrap();
    drop(s);
    // A hello, then input without its flag byte: that client is dropped.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(&hello(80, 24)).unwrap();
    s.write_all(&frame(7, b"\xff\xfe")).unwrap();
    let got = read_to_end(&mut s);
    assert!(!got.is_empty(), "it was welcomed first");
    // A hello from another protocol version is refused with the way out.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(&frame(1, br#"{"version": 99, "cols": 80, "rows": 24}"#))
        .unwrap();
    let said = String::from_utf8_lossy(&read_to_end(&mut s)).into_owned();
    assert!(said.contains("kill-server"), "{said:?}");

    // A terminal that attaches and never reads, while a shell floods the screen.
    let mut stalled = UnixStream::connect(&path).unwrap();
    stalled.write_all(&hello(200, 60)).unwrap();
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · ");
    m.type_line("seq 1 200000; echo flood-$((40+2))");
    m.wait_text("flood-42");
    m.type_line("echo after-$((1+1))");
    m.wait_text("after-2");
    assert_eq!(m.workspaces()[0]["clients"], 2);
    // Once it reads, it is drawn whole again: what it got ends with a frame that shows
    // the end of the flood.
    stalled
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut parser = vt100::Parser::new(60, 200, 0);
    let mut frames = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    loop {
        let n = stalled.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed the stalled client");
        frames.extend_from_slice(&buf[..n]);
        // Whole frames only: length, kind 102 (output), bytes.
        while frames.len() >= 4 {
            let len = u32::from_be_bytes([frames[0], frames[1], frames[2], frames[3]]) as usize;
            if frames.len() < 4 + len {
                break;
            }
            if frames[4] == 102 {
                parser.process(&frames[5..4 + len]);
            }
            frames.drain(..4 + len);
        }
        if parser.screen().contents().contains("after-2") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the stalled client never caught up: {}",
            parser.screen().contents()
        );
    }
    m.quit();
}

#[test]
fn a_socket_directory_open_to_others_is_refused_and_a_stale_socket_is_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let h = tokio_harness(vec![]);
    let dir = socket_dir(&h);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut m = terminal(&h, &[], 120, 40);
    assert_ne!(m.wait_exit(), 0);
    let screen = m.wait_text("chmod 700");
    assert!(screen.contains(dir.to_str().unwrap()), "{screen}");
    let (code, said) = m.cli(&["ls"]);
    assert_ne!(code, 0);
    assert!(said.contains("chmod 700"), "{said}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A socket left by a server that died: bound, then nobody listens.
    drop(std::os::unix::net::UnixListener::bind(socket(&h)).unwrap());
    assert!(socket(&h).exists());
    let mut m = start(&h);
    assert_eq!(m.workspaces().len(), 1);
    m.quit();
}

#[test]
fn two_march_started_at_once_make_one_server_and_kill_asks_while_a_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("never");
    let h = tokio_harness(vec![Turn::stream(vec![
        Event::text("Thinking it over"),
        Event::WaitForFile { path: gate.clone() },
        Event::text(" done."),
    ])]);
    let mut first = terminal(&h, &[], 120, 40);
    let mut second = terminal(&h, &[], 100, 30);
    first.wait_text("March · project");
    second.wait_text("March · project");
    let all = first.workspaces();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["clients"], 2);
    second.send(PREFIX);
    second.send(b"d");
    assert_eq!(second.wait_exit(), 0);

    first.type_line("take your time");
    first.wait_text("Thinking it over");
    // Without a terminal to ask on, kill says what would stop and how to go ahead.
    let (code, said) = first.cli(&["kill", "-t", "project"]);
    assert_ne!(code, 0);
    assert!(
        said.contains("a turn in") && said.contains("--force"),
        "{said}"
    );
    let (code, said) = first.cli(&["kill", "-t", "nope"]);
    assert_ne!(code, 0);
    assert!(said.contains("running: project"), "{said}");
    let (code, said) = first.cli(&["kill", "-t", "project", "--force"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("closed workspace `project`"), "{said}");
    assert_eq!(first.wait_exit(), 0, "the workspace was closed");
    assert!(first.workspaces().is_empty());
    let (code, said) = first.cli(&["attach"]);
    assert_ne!(code, 0);
    assert!(said.contains("no workspace is running"), "{said}");
    std::fs::write(&gate, "").unwrap();
}

/// Polls `march status --json` until session `target` is in `state`.
fn wait_state(m: &PtyMarch, target: &str, state: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    loop {
        let (code, out) = m.cli(&["status", "--json"]);
        assert_eq!(code, 0, "{out}");
        let found = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|s| s["target"] == target);
        if let Some(s) = found.filter(|s| s["attention"] == state) {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{target} never {state}: {out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_control_cli_sends_waits_captures_answers_and_opens_panes() {
    let h = tokio_harness(vec![
        Turn::text("Answer to the script."),
        Turn::stream(vec![acp_client::bash_call("c1", "echo from-the-tool")]),
        Turn::text("Ran it."),
        Turn::text("Helper answer."),
    ]);
    let mut m = start(&h);
    let (code, out) = m.cli(&["status", "--json"]);
    assert_eq!(code, 0, "{out}");
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let target = first["target"].as_str().unwrap().to_string();
    assert!(target.starts_with("project:"), "{first}");
    assert_eq!(first["workspace"], "project");
    assert_eq!(first["attention"], "idle");
    assert_eq!(first["shown"], true);
    assert_eq!(first["project"].as_str(), h.project().to_str());
    for field in [
        "key",
        "session_id",
        "title",
        "model",
        "tokens",
        "cost",
        "question",
    ] {
        assert!(first.get(field).is_some(), "{field} missing: {first}");
    }

    // A prompt from a script, waited for, and the transcript read back.
    let (code, out) = m.cli(&["send", "-t", &target, "hello", "from a script"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = m.cli(&["wait", "-t", &target]);
    assert_eq!(code, 0, "{out}");
    m.wait_text("Answer to the script.");
    let (code, markdown) = m.cli(&["capture", "-t", &target, "--last", "1"]);
    assert_eq!(code, 0, "{markdown}");
    assert_eq!(markdown, "> hello from a script\n\nAnswer to the script.\n");
    // The session id names it too.
    let id = first["session_id"].as_str().unwrap();
    let (code, again) = m.cli(&["capture", "-t", &id[..8]]);
    assert_eq!(code, 0, "{again}");
    assert!(again.contains("Answer to the script."), "{again}");

    // A tool call that asks: the question shows in status, answered from the CLI.
    let (code, out) = m.cli(&["answer", "-t", &target, "allow"]);
    assert_ne!(code, 0);
    assert!(out.contains("asks nothing"), "{out}");
    m.cli(&["send", "-t", &target, "run the tool"]);
    let asking = wait_state(&m, &target, "needs-you");
    assert!(asking["question"].as_str().is_some(), "{asking}");
    let (code, out) = m.cli(&["answer", "-t", &target, "allow"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = m.cli(&["wait", "-t", &target]);
    assert_eq!(code, 0, "{out}");
    m.wait_text("Ran it.");

    // A new pane with a first prompt: its target printed, waited on, read.
    let project = h.project();
    let (code, out) = m.cli(&["new-pane", project.to_str().unwrap(), "--prompt", "help me"]);
    assert_eq!(code, 0, "{out}");
    let helper = out.trim().to_string();
    assert!(helper.starts_with("project:") && helper != target, "{out}");
    let (code, out) = m.cli(&["wait", "-t", &helper]);
    assert_eq!(code, 0, "{out}");
    let (_, markdown) = m.cli(&["capture", "-t", &helper]);
    assert_eq!(markdown, "> help me\n\nHelper answer.\n");
    m.wait_for("two agent panes", |t| {
        t.matches("March · project").count() == 2
    });
    let (code, table) = m.cli(&["status"]);
    assert_eq!(code, 0);
    assert!(
        table.starts_with("SESSION") && table.contains(&helper),
        "{table}"
    );

    // What cannot be done says why.
    let (code, out) = m.cli(&["send", "-t", "project:99", "x"]);
    assert_ne!(code, 0);
    assert!(out.contains(&target) && out.contains(&helper), "{out}");
    let (code, out) = m.cli(&["new-pane", "--agent", "nobody", project.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(out.contains("no agent `nobody`"), "{out}");
    m.quit();
}

#[test]
fn the_workspace_tool_opens_a_helper_session_and_returns_its_answer() {
    let h = tokio_harness(vec![
        Turn::stream(vec![Event::tool_call(
            "w1",
            "workspace",
            &[&serde_json::json!({ "prompt": "count the modules" }).to_string()],
        )]),
        Turn::text("Helper says 42."),
        Turn::text("The helper counted 42."),
    ]);
    let mut m = start(&h);
    m.type_line("ask a helper");
    // It asks first, as a write does.
    let asking = wait_state(&m, "project:1", "needs-you");
    assert!(
        asking["question"].as_str().unwrap().contains("workspace"),
        "{asking}"
    );
    let (code, out) = m.cli(&["answer", "-t", "project:1", "allow"]);
    assert_eq!(code, 0, "{out}");
    m.wait_text("The helper counted 42.");
    // The helper has a pane of its own with its answer, and the model got that answer.
    let screen = m.wait_text("Helper says 42.");
    assert_eq!(screen.matches("March · project").count(), 2, "{screen}");
    let requests = h.server.requests();
    let last = serde_json::to_string(&requests.last().unwrap().body).unwrap();
    assert!(last.contains("Helper says 42."), "{last}");
    let (_, status) = m.cli(&["status", "--json"]);
    let helper: Vec<serde_json::Value> = status
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|s: &serde_json::Value| s["target"] != "project:1")
        .collect();
    assert_eq!(helper.len(), 1, "{status}");
    let (_, markdown) = m.cli(&["capture", "-t", helper[0]["target"].as_str().unwrap()]);
    assert_eq!(markdown, "> count the modules\n\nHelper says 42.\n");
    m.quit();
}

#[test]
fn a_terminal_that_really_goes_away_detaches_its_client() {
    // A real hang-up: the client runs in a tmux pane, and tmux's server (the terminal) is
    // killed under it. The client must see its input end, not spin on it.
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        return;
    }
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    let socket = format!("march-hangup-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    };
    let runtime = h.march_home().join("run");
    let command = format!(
        "env MARCH_HOME={} XDG_RUNTIME_DIR={} HOME={} {} attach",
        h.march_home().display(),
        runtime.display(),
        h.dir.path().join("home").display(),
        march_e2e::march_bin().display()
    );
    tmux(&["new-session", "-d", "-x", "100", "-y", "30", &command]);
    let pid: u32 = String::from_utf8_lossy(&tmux(&["display-message", "-p", "#{pane_pid}"]).stdout)
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    while m.workspaces()[0]["clients"] != 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the tmux client never attached"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux(&["kill-server"]);
    while march_testkit::process::proc_state(pid).is_some_and(|s| s != 'Z') {
        assert!(
            std::time::Instant::now() < deadline,
            "the client outlived its terminal (state {:?})",
            march_testkit::process::proc_state(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    while m.workspaces()[0]["clients"] != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the server kept the client"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    m.type_line("still here");
    m.wait_text("still here");
    m.quit();
}

/// The next whole frame on `stream`: its kind and body.
fn next_frame(stream: &mut UnixStream) -> (u8, Vec<u8>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = [0u8; 5];
    stream.read_exact(&mut head).unwrap();
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let mut body = vec![0u8; len - 1];
    stream.read_exact(&mut body).unwrap();
    (head[4], body)
}

#[test]
fn the_server_writes_a_terminal_it_can_open_and_sends_output_on_the_socket_otherwise() {
    use portable_pty::{PtySize, native_pty_system};
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    // A terminal of the test's own, named in the hello: the frames arrive on it, and the
    // socket carries only the welcome and, at the end, the exit.
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let tty = pair.master.tty_name().expect("the pty's name");
    let mut reader = pair.master.try_clone_reader().unwrap();
    let (feed, chunks) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if feed.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    let mut s = UnixStream::connect(socket(&h)).unwrap();
    s.write_all(&hello_on(80, 24, tty.to_str())).unwrap();
    let (kind, welcome) = next_frame(&mut s);
    assert_eq!(kind, 101);
    let welcome: serde_json::Value = serde_json::from_slice(&welcome).unwrap();
    assert_eq!(welcome["direct"], true, "{welcome}");
    // Each chunk the terminal gets is waited for; the frame is there when its title is.
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("March · project") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match chunks.recv_timeout(left) {
            Ok(chunk) => seen.extend_from_slice(&chunk),
            Err(_) => panic!(
                "no frame on the terminal: {:?}",
                String::from_utf8_lossy(&seen)
            ),
        }
    }
    // Keys typed on that terminal are read by the server itself: Ctrl-a d detaches. (A
    // client puts its terminal in raw mode; the test does it here.)
    let slave = std::fs::File::open(&tty).unwrap();
    let mut raw = rustix::termios::tcgetattr(&slave).unwrap();
    raw.make_raw();
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &raw).unwrap();
    let mut keys = pair.master.take_writer().unwrap();
    keys.write_all(b"\x01d").unwrap();
    let (kind, body) = next_frame(&mut s);
    assert_eq!((kind, body.as_slice()), (104, b"detached".as_slice()));
    // Once detached the server reads the terminal no more: what is typed next goes to
    // whoever reads it now (here the test, as the shell March was started from would).
    let (line_tx, line) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut got = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(slave), &mut got);
        let _ = line_tx.send(got);
    });
    keys.write_all(b"typed after\n").unwrap();
    assert_eq!(
        line.recv_timeout(pty::SCREEN_LIMIT).as_deref(),
        Ok("typed after\n")
    );
    // Names that are not a terminal this user may write: the output comes on the socket,
    // and the keys too (here Ctrl-a d).
    let file = h.dir.path().join("not-a-terminal");
    std::fs::write(&file, "").unwrap();
    for name in [file.to_str().unwrap(), "/dev/null"] {
        let mut s = UnixStream::connect(socket(&h)).unwrap();
        s.write_all(&hello_on(80, 24, Some(name))).unwrap();
        let (kind, welcome) = next_frame(&mut s);
        assert_eq!(kind, 101);
        let welcome: serde_json::Value = serde_json::from_slice(&welcome).unwrap();
        assert_eq!(welcome["direct"], false, "{name}: {welcome}");
        assert_eq!(next_frame(&mut s).0, 102, "{name}: output on the socket");
        s.write_all(&frame(7, b"\x00\x01d")).unwrap();
        loop {
            match next_frame(&mut s) {
                (102, _) => {}
                (kind, body) => {
                    assert_eq!((kind, body.as_slice()), (104, b"detached".as_slice()));
                    break;
                }
            }
        }
    }
    assert!(std::fs::read(&file).unwrap().is_empty());
    drop(pair.slave);
    m.quit();
}

#[test]
fn kill_server_ends_every_workspace() {
    let h = tokio_harness(vec![]);
    let mut first = start(&h);
    let other = other_project(&h);
    let mut second = terminal(
        &h,
        &["new", "-s", "second", other.to_str().unwrap()],
        120,
        40,
    );
    second.wait_text("March · other");
    let names: Vec<_> = first
        .workspaces()
        .iter()
        .map(|w| w["name"].clone())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let (code, said) = first.cli(&["kill-server", "--force"]);
    assert_eq!(code, 0, "{said}");
    for name in ["project", "second"] {
        assert!(
            said.contains(&format!("closed workspace `{name}`")),
            "{said}"
        );
    }
    // Their terminals are let go, and nothing is left to find.
    assert_eq!(first.wait_exit(), 0);
    assert_eq!(second.wait_exit(), 0);
    assert!(first.workspaces().is_empty());
    let (code, said) = first.cli(&["ls"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("no workspace is running"), "{said}");
    let sockets: Vec<_> = std::fs::read_dir(socket_dir(&h))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sock"))
        .collect();
    assert!(sockets.is_empty(), "{sockets:?}");
}

#[test]
fn a_named_workspace_is_listed_and_attached_by_name_and_attach_picks_the_latest() {
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    let other = other_project(&h);
    let mut alpha = terminal(
        &h,
        &["new", "-s", "alpha", other.to_str().unwrap()],
        120,
        40,
    );
    alpha.wait_text("March · other");
    let (code, table) = m.cli(&["ls"]);
    assert_eq!(code, 0, "{table}");
    let row = table.lines().find(|l| l.starts_with("alpha")).unwrap();
    assert!(row.contains(other.to_str().unwrap()), "{table}");
    // The workspace typed in last is the latest: `project`, whose detach keys come after
    // alpha's.
    detach(&mut alpha, "alpha");
    detach(&mut m, "project");
    let mut latest = terminal(&h, &["attach"], 120, 40);
    let screen = latest.wait_text("March · project");
    assert!(!screen.contains("March · other"), "{screen}");
    detach(&mut latest, "project");
    // By name; then it is the latest.
    let mut named = terminal(&h, &["attach", "-t", "alpha"], 120, 40);
    let screen = named.wait_text("March · other");
    assert!(!screen.contains("March · project"), "{screen}");
    detach(&mut named, "alpha");
    let mut latest = terminal(&h, &["attach"], 120, 40);
    latest.wait_text("March · other");
    let (code, said) = latest.cli(&["attach", "-t", "beta"]);
    assert_ne!(code, 0);
    assert!(said.contains("no workspace named `beta`"), "{said}");
    latest.quit();
}

#[test]
fn a_question_asked_while_nobody_is_attached_rings_on_the_next_attach() {
    let h = tokio_harness(vec![
        Turn::stream(vec![acp_client::bash_call("c1", "echo asked")]),
        Turn::text("Ran it."),
    ]);
    let mut m = start(&h);
    detach(&mut m, "project");
    // The permission request comes while no terminal is attached: nobody sees it, so it
    // notifies, and the bell and the notification wait for a terminal.
    let (code, out) = m.cli(&["send", "-t", "project:1", "run the tool"]);
    assert_eq!(code, 0, "{out}");
    wait_state(&m, "project:1", "needs-you");
    let mut back = terminal(&h, &["attach"], 120, 40);
    // What was held is written before the first frame.
    back.wait_text("March · project");
    let signals = back.signals();
    let notes: Vec<String> = signals
        .iter()
        .filter(|s| s.starts_with(b"\x1b]9;"))
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    assert_eq!(notes.len(), 1, "{signals:?}");
    assert!(notes[0].contains("needs you"), "{notes:?}");
    assert!(signals.contains(&b"\x07".to_vec()), "a bell: {signals:?}");
    // Given once: the next terminal gets none of it.
    let mut watcher = terminal(&h, &["attach", "-r"], 100, 30);
    watcher.wait_text("March · project");
    assert!(watcher.signals().is_empty(), "{:?}", watcher.signals());
    detach(&mut watcher, "project");
    let (code, out) = back.cli(&["answer", "-t", "project:1", "allow"]);
    assert_eq!(code, 0, "{out}");
    back.wait_text("Ran it.");
    back.quit();
}

#[test]
fn wait_exits_with_how_the_turn_ended() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("never");
    let h = tokio_harness(vec![
        Turn::status(400).with_body(
            r#"{"error":{"message":"context too long","type":"invalid_request_error"}}"#,
        ),
        Turn::text("Cut sh").with_stop(ScriptStop::Length),
        Turn::stream(vec![
            Event::text("Taking my time"),
            Event::WaitForFile { path: gate.clone() },
        ]),
    ]);
    let mut m = start(&h);
    let target = "project:1";
    // The model fails: 1, with why.
    let (code, out) = m.cli(&["send", "-t", target, "fail please"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = m.cli(&["wait", "-t", target]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("context too long"), "{out}");
    // It stops at its token limit: 3.
    let (code, out) = m.cli(&["send", "-t", target, "say a lot"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = m.cli(&["wait", "-t", target]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("limit"), "{out}");
    // Cancelled with Esc: 130, whether the wait came before the turn ended or after.
    let (code, out) = m.cli(&["send", "-t", target, "take your time"]);
    assert_eq!(code, 0, "{out}");
    m.wait_text("Taking my time");
    m.send(ESC);
    let (code, out) = m.cli(&["wait", "-t", target]);
    assert_eq!(code, 130, "{out}");
    std::fs::write(&gate, "").unwrap();
    m.quit();
}
