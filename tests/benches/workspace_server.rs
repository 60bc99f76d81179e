//! The workspace server from the outside: attaching, idling attached, and attaching and
//! detaching a thousand times, with tmux 3.x measured the same way in the same run.
//!
//! - attach: a detached workspace of 8 panes (4 agents with open sessions, 4 shells, tmux's
//!   tiled layout) and `march attach` in a 200×50 PTY until its first whole frame is on
//!   screen (every pane's title and the status bar); tmux: `attach` to a window of 8 panes
//!   until its status line shows. 20 runs each.
//! - idle: one terminal attached for 30 s: bytes written to it (frames) and the CPU time of
//!   server + client (and of the whole tree, runners and shells included); tmux: server +
//!   client attached to 8 idle shells.
//! - cycles: 1,000 attaches and detaches through the socket (hello, the first frame, detach,
//!   the connection closed), every other one naming a terminal the server then writes
//!   itself: the server's RSS and open descriptors before, after 100 and after 1,000.
//!
//! Run: `cargo bench -p march-e2e --bench workspace_server` (about 2 minutes).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/term.rs"]
mod term;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use march_testkit::{Script, ScriptedServer};
use portable_pty::CommandBuilder;
use term::{
    Term, cpu_ns, kill_servers, march_args_command, march_command, median, ms, proc_stats,
    runtime_dir, server_pid, tree, write_scripted_config,
};

const PREFIX: &[u8] = b"\x01";
const RUNS: usize = 20;
const IDLE: Duration = Duration::from_secs(30);
const CYCLES: usize = 1000;

fn tmux(args: &[&str]) -> std::process::Output {
    std::process::Command::new("tmux")
        .args(["-L", "march-bench-server", "-f", "/dev/null"])
        .args(args)
        .output()
        .unwrap()
}

fn tmux_attach() -> Term {
    let mut cmd = CommandBuilder::new("tmux");
    cmd.args(["-L", "march-bench-server", "-f", "/dev/null", "attach"]);
    cmd.env("TERM", "xterm-256color");
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    Term::spawn(cmd)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 1) as u32).to_be_bytes().to_vec();
    out.push(kind);
    out.extend_from_slice(body);
    out
}

/// A terminal for the cycles that ask the server to write it: its slave's path, and the
/// bytes read from its master so far.
struct Tty {
    path: String,
    read: Arc<AtomicU64>,
    _pair: portable_pty::PtyPair,
}

impl Tty {
    fn open() -> Tty {
        let pair = portable_pty::native_pty_system()
            .openpty(portable_pty::PtySize {
                rows: 50,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let path = pair.master.tty_name().unwrap().display().to_string();
        let mut reader = pair.master.try_clone_reader().unwrap();
        let read = Arc::new(AtomicU64::new(0));
        let count = read.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                count.fetch_add(n as u64, Ordering::Relaxed);
            }
        });
        Tty {
            path,
            read,
            _pair: pair,
        }
    }
}

/// One attach and detach through the socket, as a client does it; with `tty`, the server
/// writes that terminal and the first frame is awaited there.
fn cycle(socket: &Path, tty: Option<&Tty>) {
    let mut s = UnixStream::connect(socket).unwrap();
    let hello = match tty {
        Some(tty) => format!(
            r#"{{"version":3,"cols":200,"rows":50,"tty":{}}}"#,
            serde_json::to_string(&tty.path).unwrap()
        ),
        None => r#"{"version":3,"cols":200,"rows":50}"#.to_string(),
    };
    let before = tty.map(|t| t.read.load(Ordering::Relaxed));
    s.write_all(&frame(1, hello.as_bytes())).unwrap();
    s.write_all(&frame(6, b"")).unwrap();
    // Read until an output frame (the first whole frame) has come, or with a terminal the
    // welcome and then the frame's bytes on the terminal.
    let mut got = Vec::new();
    let mut buf = [0u8; 1 << 16];
    'frame: loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed the connection");
        got.extend_from_slice(&buf[..n]);
        let mut at = 0;
        while got.len() >= at + 4 {
            let len = u32::from_be_bytes(got[at..at + 4].try_into().unwrap()) as usize;
            if got.len() < at + 4 + len {
                break;
            }
            if got[at + 4] == 102 || (tty.is_some() && got[at + 4] == 101) {
                break 'frame;
            }
            at += 4 + len;
        }
    }
    if let (Some(tty), Some(before)) = (tty, before) {
        let start = Instant::now();
        while tty.read.load(Ordering::Relaxed) == before {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no frame on the terminal"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    s.write_all(&frame(4, b"")).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime
        .block_on(ScriptedServer::start(Script::new(Vec::new())))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    for sub in ["home", "march", "project"] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
    }
    write_scripted_config(&home.join("march"), &model.base_url());
    let project = home.join("project").canonicalize().unwrap();
    march_e2e::march_bin();

    // A workspace of 4 agents and 4 shells, tiled, then detached.
    let config = home.join("march/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[shell]\ncommand = \"/bin/sh\"\n");
    std::fs::write(&config, text).unwrap();
    let whole = |t: &Term| {
        let screen = t.screen.lock().screen().contents();
        screen.matches("March · project").count() == 4
            && screen.matches("sh · project").count() == 4
            && screen.contains("1:project")
    };
    let mut t = Term::spawn(march_command(home, &project));
    t.wait_for("m · off", 1);
    for n in 2..=4 {
        t.send(PREFIX);
        t.send(b"%");
        t.wait_for("m · off", n);
    }
    for _ in 0..4 {
        t.send(PREFIX);
        t.send(b"t");
        std::thread::sleep(Duration::from_millis(300));
    }
    // tmux's tiled layout: every pane big enough for its title.
    t.send(PREFIX);
    t.send(b"\x1b5");
    let start = Instant::now();
    while !whole(&t) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the 8 panes never showed:\n{}",
            t.screen.lock().screen().contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    t.send(PREFIX);
    t.send(b"d");
    assert!(t.wait_exit(Duration::from_secs(10)), "no detach");
    drop(t);
    let server = server_pid(home);

    // Attach until the first whole frame.
    let mut attach = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut t = Term::spawn(march_args_command(home, &project, &["attach"]));
        while !whole(&t) {
            assert!(start.elapsed() < Duration::from_secs(30), "no frame");
            std::thread::sleep(Duration::from_micros(200));
        }
        attach.push(start.elapsed());
        t.send(PREFIX);
        t.send(b"d");
        assert!(t.wait_exit(Duration::from_secs(10)), "no detach");
    }

    // tmux: a window of 8 panes, tiled, detached.
    tmux(&["kill-server"]);
    tmux(&["new-session", "-d", "-x", "200", "-y", "50", "sh"]);
    for _ in 0..7 {
        tmux(&["split-window", "sh"]);
        tmux(&["select-layout", "tiled"]);
    }
    let mut tmux_attach_times = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut t = tmux_attach();
        t.wait_for("[0] 0:", 1);
        tmux_attach_times.push(start.elapsed());
        tmux(&["detach-client"]);
        assert!(t.wait_exit(Duration::from_secs(10)), "tmux did not detach");
    }

    // Idle, attached.
    let t = Term::spawn(march_args_command(home, &project, &["attach"]));
    while !whole(&t) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_secs(2));
    let tree_ns = || tree(server).into_iter().map(cpu_ns).sum::<u64>();
    let (s0, c0, w0) = (cpu_ns(server), cpu_ns(t.pid()), tree_ns());
    let bytes0 = t.bytes.load(Ordering::Relaxed);
    std::thread::sleep(IDLE);
    let march_bytes = t.bytes.load(Ordering::Relaxed) - bytes0;
    let march_cpu = (cpu_ns(server) - s0 + cpu_ns(t.pid()) - c0) as f64 / 1e6;
    let march_tree = (tree_ns() - w0) as f64 / 1e6;
    drop(t);
    let tt = tmux_attach();
    tt.wait_for("[0] 0:", 1);
    std::thread::sleep(Duration::from_secs(2));
    let tmux_server: u32 =
        String::from_utf8_lossy(&tmux(&["display-message", "-p", "#{pid}"]).stdout)
            .trim()
            .parse()
            .unwrap();
    let (s0, c0) = (cpu_ns(tmux_server), cpu_ns(tt.pid()));
    let bytes0 = tt.bytes.load(Ordering::Relaxed);
    std::thread::sleep(IDLE);
    let tmux_bytes = tt.bytes.load(Ordering::Relaxed) - bytes0;
    let tmux_cpu = (cpu_ns(tmux_server) - s0 + cpu_ns(tt.pid()) - c0) as f64 / 1e6;
    drop(tt);
    tmux(&["kill-server"]);

    // A thousand attaches and detaches.
    let socket = runtime_dir(home).join("march").join("project.sock");
    let stats = || (proc_stats(server).1, open_fds(server));
    std::thread::sleep(Duration::from_millis(500));
    let tty = Tty::open();
    let before = stats();
    let start = Instant::now();
    let mut after_100 = before;
    for i in 0..CYCLES {
        cycle(&socket, (i % 2 == 1).then_some(&tty));
        if i + 1 == 100 {
            std::thread::sleep(Duration::from_millis(200));
            after_100 = stats();
        }
    }
    let cycles_wall = start.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let after = stats();
    kill_servers(home);

    let mut sorted = attach.clone();
    sorted.sort();
    println!(
        "attach to 8 panes (4 agents, 4 shells), first whole frame: march median {:.1} ms, p95 {:.1} ms; tmux median {:.1} ms",
        ms(median(attach.clone())),
        ms(sorted[sorted.len() * 95 / 100]),
        ms(median(tmux_attach_times)),
    );
    println!(
        "idle 30 s attached, 8 panes: march {march_bytes} bytes written, CPU server + client {march_cpu:.2} ms (server's tree, runners and shells: {march_tree:.2} ms); tmux {tmux_bytes} bytes, CPU server + client {tmux_cpu:.2} ms"
    );
    println!(
        "{CYCLES} attach/detach cycles (every other one writing its terminal directly) in {:.1} s: server RSS {:.1} / {:.1} / {:.1} MiB and open descriptors {} / {} / {} (before / after 100 / after {CYCLES})",
        cycles_wall.as_secs_f64(),
        before.0 as f64 / 1024.0,
        after_100.0 as f64 / 1024.0,
        after.0 as f64 / 1024.0,
        before.1,
        after_100.1,
        after.1,
    );
}
