//! The workspace from the outside, as a user's terminal sees it: `march` in a 200×50 PTY with
//! agents answered by the scripted model server.
//!
//! Measures, with tmux measured the same way in the same run as the reference:
//! - first frame: from spawn until the screen shows the prompt (tmux: until its status line);
//! - prompt ready: until the agent's session is open (the pane title turns into the agent's);
//! - idle: bytes written to the terminal (frames) and CPU time of the whole process tree over
//!   30 s with four agent panes (tmux: four windows with an idle shell);
//! - memory: RSS of `march` alone and of `march` with its runners.
//!
//! Run: `cargo bench -p march-e2e --bench workspace_idle` (about 2 minutes).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/term.rs"]
mod term;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use march_testkit::{Script, ScriptedServer, Turn};
use portable_pty::CommandBuilder;
use term::{
    Term, kill_servers, march_command, march_stats, median, ms, proc_stats, streamed_answer,
    tree_stats,
};

const IDLE: Duration = Duration::from_secs(30);
const RUNS: usize = 5;
/// Prompt/answer rounds after which memory and idle cost are measured again.
const ROUNDS: usize = 50;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // First a 2,000-token markdown answer streamed over 30 s, then short answers.
    let mut turns = vec![streamed_answer(60)];
    turns.extend((0..=ROUNDS).map(|i| Turn::text(format!("Answer {i}: **done**."))));
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(turns)))
        .unwrap();
    let (dir, project) = term::bench_home(&server.base_url());
    let have_tmux = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok();
    // Built before anything is timed.
    march_e2e::march_bin();

    // First frame and prompt ready.
    let (mut first, mut ready, mut tmux_first) = (Vec::new(), Vec::new(), Vec::new());
    let mut one_pane_rss = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let term = Term::spawn(march_command(dir.path(), &project));
        term.wait_for("Message the agent", 1);
        first.push(start.elapsed());
        term.wait_for("m · off", 1);
        ready.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(500));
        one_pane_rss.push(tree_stats(term.pid()).1);
        drop(term);
        kill_servers(dir.path());
        if have_tmux {
            let start = Instant::now();
            let mut cmd = CommandBuilder::new("tmux");
            cmd.args(["-L", "march-bench", "-f", "/dev/null", "new-session", "sh"]);
            cmd.env("TERM", "xterm-256color");
            cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
            let term = Term::spawn(cmd);
            term.wait_for("[0] 0:", 1);
            tmux_first.push(start.elapsed());
            drop(term);
            let _ = std::process::Command::new("tmux")
                .args(["-L", "march-bench", "kill-server"])
                .output();
        }
    }

    // Idle with four agent panes.
    let mut term = Term::spawn(march_command(dir.path(), &project));
    term.wait_for("March · project", 1);
    // Ready panes show their model and thinking level on the border.
    for n in 2..=4 {
        term.send(b"\x01%");
        term.wait_for("m · off", n);
    }
    std::thread::sleep(Duration::from_secs(2));
    let pid = term.pid();
    let (march_ticks0, _) = march_stats(dir.path(), pid);
    let (tree_ticks0, _) = tree_stats(pid);
    let bytes0 = term.bytes.load(Ordering::Relaxed);
    std::thread::sleep(IDLE);
    let bytes = term.bytes.load(Ordering::Relaxed) - bytes0;
    let (march_ticks1, march_rss) = march_stats(dir.path(), pid);
    let (tree_ticks1, tree_rss) = tree_stats(pid);
    let tick_ms = 10.0; // USER_HZ = 100 on Linux
    drop(term);
    kill_servers(dir.path());

    // A 2,000-token answer streamed over 30 s, then 50 short rounds: CPU and memory.
    let mut term = Term::spawn(march_command(dir.path(), &project));
    term.wait_for("m · off", 1);
    std::thread::sleep(Duration::from_millis(500));
    let pid = term.pid();
    let (stream_ticks0, _) = tree_stats(pid);
    let (stream_march0, _) = march_stats(dir.path(), pid);
    let start = Instant::now();
    term.send(b"explain the parser changes\r");
    // 500 deltas 60 ms apart: the answer ends after about 30 s.
    std::thread::sleep(Duration::from_secs(31));
    std::thread::sleep(Duration::from_secs(2));
    let stream_wall = start.elapsed();
    let (stream_ticks1, rss_after_first) = tree_stats(pid);
    let (stream_march1, _) = march_stats(dir.path(), pid);
    for i in 0..ROUNDS {
        term.send(format!("round {i}\r").as_bytes());
        term.wait_for(&format!("Answer {i}:"), 1);
    }
    std::thread::sleep(Duration::from_secs(2));
    let (_, rss_after_rounds) = tree_stats(pid);
    let (idle_ticks0, _) = tree_stats(pid);
    let idle_bytes0 = term.bytes.load(Ordering::Relaxed);
    std::thread::sleep(IDLE);
    let (idle_ticks1, _) = tree_stats(pid);
    let idle_bytes = term.bytes.load(Ordering::Relaxed) - idle_bytes0;
    drop(term);
    kill_servers(dir.path());

    // tmux idle, four windows with an idle shell each.
    let mut tmux_idle = None;
    if have_tmux {
        let tmux = |args: &[&str]| {
            std::process::Command::new("tmux")
                .args(["-L", "march-bench-idle", "-f", "/dev/null"])
                .args(args)
                .output()
                .unwrap()
        };
        tmux(&["new-session", "-d", "-x", "200", "-y", "50", "sh"]);
        for _ in 0..3 {
            tmux(&["new-window", "sh"]);
        }
        let out = tmux(&["display-message", "-p", "#{pid}"]);
        let server: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0);
        std::thread::sleep(Duration::from_secs(2));
        let (t0, _) = proc_stats(server);
        std::thread::sleep(IDLE);
        let (t1, rss) = proc_stats(server);
        tmux_idle = Some(((t1 - t0) as f64 * tick_ms, rss));
        tmux(&["kill-server"]);
    }

    println!(
        "first frame: march median {:.1} ms (runs {:?}); tmux median {}",
        ms(median(first.clone())),
        first.iter().map(|d| ms(*d).round()).collect::<Vec<_>>(),
        if tmux_first.is_empty() {
            "n/a".to_string()
        } else {
            format!("{:.1} ms", ms(median(tmux_first)))
        }
    );
    println!(
        "prompt ready (session open in the runner): median {:.1} ms",
        ms(median(ready))
    );
    println!(
        "idle 30 s, four agent panes 200x50: {bytes} bytes written to the terminal; CPU march (server + client) {:.0} ms, march + runners {:.0} ms",
        (march_ticks1 - march_ticks0) as f64 * tick_ms,
        (tree_ticks1 - tree_ticks0) as f64 * tick_ms,
    );
    one_pane_rss.sort_unstable();
    println!(
        "memory, one agent pane: march + runner {:.1} MiB (median)",
        one_pane_rss[one_pane_rss.len() / 2] as f64 / 1024.0
    );
    println!(
        "memory, four agent panes: march (server + client) {:.1} MiB, march + 4 runners {:.1} MiB",
        march_rss as f64 / 1024.0,
        tree_rss as f64 / 1024.0
    );
    println!(
        "2,000-token markdown answer streamed over {:.1} s: CPU march {:.2} s, march + runner {:.2} s",
        stream_wall.as_secs_f64(),
        (stream_march1 - stream_march0) as f64 * tick_ms / 1e3,
        (stream_ticks1 - stream_ticks0) as f64 * tick_ms / 1e3,
    );
    println!(
        "after {ROUNDS} more rounds: march + runner {:.1} MiB (after the first answer {:.1} MiB); idle 30 s then: {idle_bytes} bytes, CPU {:.0} ms",
        rss_after_rounds as f64 / 1024.0,
        rss_after_first as f64 / 1024.0,
        (idle_ticks1 - idle_ticks0) as f64 * tick_ms,
    );
    if let Some((cpu, rss)) = tmux_idle {
        println!(
            "tmux idle 30 s, four windows with a shell: CPU {cpu:.0} ms, server RSS {:.1} MiB",
            rss as f64 / 1024.0
        );
    }
}
