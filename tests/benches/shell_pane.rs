//! Shell panes against tmux, side by side in one run (issue 8). Both are driven from the
//! outside, through a PTY whose output is read as fast as it comes (an infinitely fast
//! terminal), so each renders to a real PTY:
//!
//! - memory: RSS growth of `march` (resp. the tmux server) when a fresh 200×50 pane takes
//!   10,050 lines of 200 random letters (10,000 of them go to its history);
//! - throughput: `cat` of 64 MiB of mixed output, of 64 MiB of plain text, and
//!   `seq 1 5000000` in a 200×50 pane; March's pane is zoomed in a 202×53 terminal, tmux's
//!   session is 200×50 with a client attached at 200×51. Timed from typing the command until
//!   it ends (March: it writes to a FIFO; tmux: `wait-for`, as `perf-anchors.md` did);
//! - keystroke latency: one letter written to the outer PTY until the echo program in the
//!   pane (`stty raw -echo; exec cat`) has it drawn back there; idle (600 keys each, in three
//!   rounds that take turns), and while a pane in another tab (window) floods `cat` of plain
//!   text in a loop.
//!
//! Run: `cargo bench -p march-e2e --bench shell_pane` (about 6 minutes). `SHELL_PANE_PARTS`
//! picks parts (a comma list of `memory`, `throughput`, `latency`; all when unset).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/outer.rs"]
mod outer;
#[path = "support/term.rs"]
mod term;

use outer::{Outer, SAMPLES, describe, quantile};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use march_testkit::workload;
use portable_pty::CommandBuilder;
use term::{cpu_ns, kill_servers, march_command, median, ms, proc_stats, server_pid};

const RUNS: usize = 3;

/// Rounds of idle keystrokes, March's and tmux's taking turns.
const IDLE_ROUNDS: usize = 3;

const SOCKET: &str = "march-bench-shell";
const PREFIX: &[u8] = b"\x01";

/// Whether part `name` of the bench runs (`SHELL_PANE_PARTS`, all when unset).
fn part(name: &str) -> bool {
    std::env::var("SHELL_PANE_PARTS").map_or(true, |parts| parts.split(',').any(|p| p == name))
}

/// Context switches of every thread of `pid` so far, voluntary and not.
fn switches(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .flat_map(|s| {
            s.lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// Times keystrokes on `outer` as [`Outer::latency`] does, with the CPU (µs) and context
/// switches each cost the processes `pids`.
fn latency_cost(outer: &mut Outer, pids: &[u32]) -> (Vec<Duration>, f64, f64) {
    let cpu = || pids.iter().map(|p| cpu_ns(*p)).sum::<u64>();
    let ctx = || pids.iter().map(|p| switches(*p)).sum::<u64>();
    let (c0, s0) = (cpu(), ctx());
    let samples = outer.latency();
    let n = samples.len().max(1) as f64;
    let per_key = (cpu() - c0) as f64 / 1000.0 / n;
    let switches_per_key = (ctx() - s0) as f64 / n;
    (samples, per_key, switches_per_key)
}

fn rss_kb(pid: u32) -> u64 {
    proc_stats(pid).1
}

fn tmux(args: &[&str]) -> std::process::Output {
    std::process::Command::new("tmux")
        .args(["-L", SOCKET, "-f"])
        .arg(tmux_conf())
        .args(args)
        .output()
        .unwrap()
}

fn tmux_conf() -> PathBuf {
    std::env::temp_dir().join("march-bench-tmux.conf")
}

fn tmux_client(session: &str, rows: u16) -> Outer {
    let mut cmd = CommandBuilder::new("tmux");
    cmd.args(["-L", SOCKET, "-f"]);
    cmd.arg(tmux_conf());
    cmd.args(["attach", "-t", session]);
    cmd.env("TERM", "xterm-256color");
    Outer::spawn(cmd, rows, 200)
}

fn tmux_server_pid() -> u32 {
    let out = tmux(&["display-message", "-p", "#{pid}"]);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Runs `cmd` in pane `target` (respawned) and waits for it to end; the wall time.
fn tmux_time(target: &str, cmd: &str) -> Duration {
    tmux(&["clear-history", "-t", target]);
    let start = Instant::now();
    tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        target,
        &format!("{cmd}; tmux -L {SOCKET} wait-for -S done"),
    ]);
    tmux(&["wait-for", "done"]);
    start.elapsed()
}

/// Types `cmd` into March's focused shell followed by a write to `fifo`, and waits for that
/// write; the wall time from the Enter.
fn march_time(m: &mut Outer, cmd: &str, fifo: &Path) -> Duration {
    let line = format!("{cmd}; echo > {}\r", fifo.display());
    let start = Instant::now();
    m.send(line.as_bytes());
    let mut f = std::fs::File::open(fifo).unwrap();
    let mut sink = Vec::new();
    f.read_to_end(&mut sink).unwrap();
    start.elapsed()
}

/// The CPU seconds (user + system) of a shell's children, from the output of its `times`.
fn children_cpu(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let children = text.lines().nth(1).unwrap();
    children
        .split_whitespace()
        .map(|t| {
            let (m, s) = t.trim_end_matches('s').split_once('m').unwrap();
            m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
        })
        .sum()
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let have_tmux = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have_tmux,
        "this bench compares with tmux, which is not installed"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mixed = data.join("mixed.txt");
    let plain = data.join("plain.txt");
    let lines = data.join("lines200.txt");
    std::fs::write(&mixed, workload::mixed(64 << 20, b"\n")).unwrap();
    std::fs::write(&plain, workload::plain(64 << 20, b"\n")).unwrap();
    std::fs::write(&lines, workload::full_lines(10_050, 200)).unwrap();
    let fifo = dir.path().join("done.fifo");
    mkfifo(&fifo);
    let seq_times = dir.path().join("seq.times");
    let workloads = [
        ("cat mixed", format!("cat {}", mixed.display())),
        ("cat plain", format!("cat {}", plain.display())),
        // `times` gives `seq`'s own CPU time, the rate it could reach if its pane never made
        // it wait.
        (
            "seq 1 5000000",
            format!("sh -c 'seq 1 5000000; times > {}'", seq_times.display()),
        ),
    ];
    let sizes = [
        std::fs::metadata(&mixed).unwrap().len(),
        std::fs::metadata(&plain).unwrap().len(),
        workload::seq(b"\n").len() as u64,
    ];
    march_e2e::march_bin();

    // March: an agent pane (its model never called) and a zoomed shell pane.
    for sub in ["home", "march", "project"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::write(
        dir.path().join("march/config.toml"),
        "default_model = \"scripted/m\"\n[providers.scripted]\napi = \"openai-completions\"\n\
         base_url = \"http://127.0.0.1:9\"\n[[providers.scripted.models]]\nid = \"m\"\n\
         [shell]\ncommand = \"/bin/sh\"\nscrollback_bytes = 268435456\n",
    )
    .unwrap();
    let project = dir.path().join("project").canonicalize().unwrap();
    let mut cmd = march_command(dir.path(), &project);
    cmd.env("PS1", "$ ");
    let mut m = Outer::spawn(cmd, 53, 202);
    m.wait_text("March · project");
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · project");
    m.send(PREFIX);
    m.send(b"z");
    std::thread::sleep(Duration::from_millis(500));

    // tmux: a detached server, one session of 200x50 with a client attached.
    std::fs::write(
        tmux_conf(),
        "set -g history-limit 10000\nset -g remain-on-exit on\n\
         set -g default-terminal \"screen-256color\"\nset -g default-shell /bin/sh\n",
    )
    .unwrap();
    tmux(&["kill-server"]);
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "att",
        "-x",
        "200",
        "-y",
        "50",
        "sleep 1000000",
    ]);
    let t = tmux_client("att", 51);
    std::thread::sleep(Duration::from_millis(800));
    let server = tmux_server_pid();
    // March's work is done in its workspace server; its client relays.
    let march_server = server_pid(dir.path());

    if part("memory") {
        // Memory: 10,050 full-width lines into a fresh pane.
        let before = rss_kb(march_server);
        march_time(&mut m, &format!("cat {}", lines.display()), &fifo);
        std::thread::sleep(Duration::from_millis(500));
        let march_mem = rss_kb(march_server).saturating_sub(before);
        tmux(&["new-window", "-d", "-t", "att:5", "sleep 1000000"]);
        std::thread::sleep(Duration::from_millis(300));
        let before = rss_kb(server);
        tmux_time("att:5.0", &format!("cat {}", lines.display()));
        std::thread::sleep(Duration::from_millis(500));
        let tmux_mem = rss_kb(server).saturating_sub(before);
        tmux(&["kill-window", "-t", "att:5"]);
        println!(
            "memory per pane, 10,000 lines of 200 columns: march {:.1} MB, tmux {:.1} MB, ratio {:.2}x (target <= 2x)",
            march_mem as f64 / 1024.0,
            tmux_mem as f64 / 1024.0,
            march_mem as f64 / tmux_mem.max(1) as f64
        );
    }

    if part("throughput") {
        // Throughput, interleaved runs.
        m.parsing.store(false, Ordering::Relaxed);
        let mut results: Vec<(Vec<Duration>, Vec<Duration>, Vec<f64>)> =
            workloads.iter().map(|_| Default::default()).collect();
        let mut cpu: Vec<(Vec<f64>, Vec<f64>)> =
            workloads.iter().map(|_| Default::default()).collect();
        // `seq`'s own CPU seconds in March's runs and in tmux's.
        let (mut seq_march, mut seq_tmux) = (Vec::new(), Vec::new());
        let tick = 0.01;
        // CPU of server and client on both sides.
        let (march_client, tmux_client_pid) = (m.pid(), t.pid());
        let march_cpu = || proc_stats(march_server).0 + proc_stats(march_client).0;
        let tmux_cpu = || proc_stats(server).0 + proc_stats(tmux_client_pid).0;
        for _ in 0..RUNS {
            for (i, (_, command)) in workloads.iter().enumerate() {
                let c0 = march_cpu();
                let a = march_time(&mut m, command, &fifo);
                cpu[i].0.push((march_cpu() - c0) as f64 * tick);
                if command.contains("times") {
                    seq_march.push(children_cpu(&seq_times));
                }
                std::thread::sleep(Duration::from_millis(400));
                let c0 = tmux_cpu();
                let b = tmux_time("att:0.0", command);
                cpu[i].1.push((tmux_cpu() - c0) as f64 * tick);
                if command.contains("times") {
                    seq_tmux.push(children_cpu(&seq_times));
                }
                std::thread::sleep(Duration::from_millis(400));
                results[i].0.push(a);
                results[i].1.push(b);
                results[i].2.push(b.as_secs_f64() / a.as_secs_f64());
            }
        }
        println!(
            "throughput through a 200x50 pane rendered to a PTY; medians of {RUNS} interleaved runs"
        );
        println!(
            "{:<14} {:>8} {:>12} {:>12} {:>10} {:>10} {:>8}",
            "workload", "MB", "march MB/s", "tmux MB/s", "march cpu", "tmux cpu", "ratio"
        );
        let mid = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        for (i, (name, _)) in workloads.iter().enumerate() {
            let mb = sizes[i] as f64 / 1e6;
            let (a, b, r) = &results[i];
            let mut r = r.clone();
            r.sort_by(f64::total_cmp);
            println!(
                "{name:<14} {mb:>8.1} {:>12.1} {:>12.1} {:>9.2}s {:>9.2}s {:>7.2}x",
                mb / median(a.clone()).as_secs_f64(),
                mb / median(b.clone()).as_secs_f64(),
                mid(&cpu[i].0),
                mid(&cpu[i].1),
                r[r.len() / 2]
            );
        }
        let seq_mb = sizes[2] as f64 / 1e6;
        let (own_march, own_tmux) = (mid(&seq_march), mid(&seq_tmux));
        println!(
            "seq's own CPU (user + system): {own_march:.2}s in march's runs ({:.1} MB/s if never kept waiting), {own_tmux:.2}s in tmux's ({:.1} MB/s)",
            seq_mb / own_march,
            seq_mb / own_tmux
        );
    }

    if part("latency") {
        // Latency: the echo program in the zoomed pane, then with another tab flooding.
        m.parsing.store(true, Ordering::Relaxed);
        m.send(b"stty raw -echo; exec cat\r");
        std::thread::sleep(Duration::from_millis(800));
        m.parsing.store(false, Ordering::Relaxed);
        tmux(&[
            "new-session",
            "-d",
            "-s",
            "lat",
            "-x",
            "200",
            "-y",
            "50",
            "stty raw -echo; exec cat",
        ]);
        tmux(&["set", "-t", "lat", "status", "off"]);
        tmux(&["new-window", "-d", "-t", "lat:9", "sleep 1000000"]);
        let mut tl = tmux_client("lat", 50);
        std::thread::sleep(Duration::from_millis(800));
        tl.parsing.store(false, Ordering::Relaxed);
        // Idle, in rounds that take turns, so a machine that is slower for a while is
        // slower for both.
        let (march_pids, tmux_pids) = ([march_server, m.pid()], [server, tl.pid()]);
        let (mut march_idle, mut tmux_idle) = (Vec::new(), Vec::new());
        let (mut march_key_cpu, mut march_key_ctx) = (0.0, 0.0);
        let (mut tmux_key_cpu, mut tmux_key_ctx) = (0.0, 0.0);
        for _ in 0..IDLE_ROUNDS {
            let (samples, cpu, ctx) = latency_cost(&mut m, &march_pids);
            march_idle.extend(samples);
            march_key_cpu += cpu / IDLE_ROUNDS as f64;
            march_key_ctx += ctx / IDLE_ROUNDS as f64;
            let (samples, cpu, ctx) = latency_cost(&mut tl, &tmux_pids);
            tmux_idle.extend(samples);
            tmux_key_cpu += cpu / IDLE_ROUNDS as f64;
            tmux_key_ctx += ctx / IDLE_ROUNDS as f64;
        }

        // The flood: a shell in a second tab (window) cats plain text in a loop.
        m.parsing.store(true, Ordering::Relaxed);
        m.send(PREFIX);
        m.send(b"c");
        m.wait_text("2:project");
        m.send(PREFIX);
        m.send(b"t");
        std::thread::sleep(Duration::from_millis(800));
        m.send(format!("while :; do cat {}; done\r", plain.display()).as_bytes());
        std::thread::sleep(Duration::from_millis(300));
        m.send(PREFIX);
        m.send(b"1");
        std::thread::sleep(Duration::from_millis(800));
        m.parsing.store(false, Ordering::Relaxed);
        let march_load = m.latency();
        tmux(&[
            "respawn-pane",
            "-k",
            "-t",
            "lat:9.0",
            &format!("while :; do cat {}; done", plain.display()),
        ]);
        std::thread::sleep(Duration::from_millis(1000));
        let tmux_load = tl.latency();
        println!(
            "keystroke to echo on the outer PTY, {} samples each idle ({IDLE_ROUNDS} rounds taking turns), {SAMPLES} under the flood:",
            IDLE_ROUNDS * SAMPLES
        );
        println!("  march idle:          {}", describe(&march_idle));
        println!("  tmux idle:           {}", describe(&tmux_idle));
        println!("  march, other floods: {}", describe(&march_load));
        println!("  tmux, other floods:  {}", describe(&tmux_load));
        println!(
            "  median ratio tmux/march: idle {:.2}x, flooding {:.2}x",
            ms(quantile(&tmux_idle, 0.5)) / ms(quantile(&march_idle, 0.5)),
            ms(quantile(&tmux_load, 0.5)) / ms(quantile(&march_load, 0.5))
        );
        println!(
            "  idle, per key (server + client): march {march_key_cpu:.0} µs CPU, {march_key_ctx:.1} context switches; tmux {tmux_key_cpu:.0} µs, {tmux_key_ctx:.1}"
        );
        println!(
            "outer bytes: march {} MB, tmux {} MB",
            m.bytes.load(Ordering::Relaxed) / 1_000_000,
            t.bytes.load(Ordering::Relaxed) / 1_000_000
        );
        drop(tl);
    }
    drop(t);
    tmux(&["kill-server"]);
    drop(m);
    kill_servers(dir.path());
}
