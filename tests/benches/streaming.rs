//! Streaming close to the limit (issue 23): the real `march` in a tmux pane of 200×50,
//! answered by the scripted model server. Every process that carries this run's
//! `MARCH_HOME` counts as March's (client, workspace server, runners, language-server
//! hosts); CPU is the scheduler's own count from `/proc/PID/task/*/schedstat`, bytes are what
//! March wrote to its pane's PTY (tmux `pipe-pane`).
//!
//! - idle 5–30 s after start, one agent pane in a project without source files: CPU, bytes
//!   written, and which processes run;
//! - a 2,000-token markdown answer streamed over 30 s (500 deltas 60 ms apart): CPU of all of
//!   March's processes and bytes written, and the screen at the end against a full repaint
//!   (the window resized away and back), cell by cell with colours;
//! - four panes stacked (each as wide as the window), the answer streaming into each at
//!   once (each paragraph tagged with its session, so the panes do not show the same rows): CPU and bytes per pane against the one-pane answer;
//! - 50 short rounds: from Enter to the answer's bytes leaving March for the pane, minus
//!   nothing (the server answers at once, so its own time is the HTTP exchange).
//!
//! Run: `cargo bench -p march-e2e --bench streaming` (about two minutes after the build);
//! `-- answer` (or `idle`, `rounds`, `four`) runs that part alone; `MARCH_BENCH_KEEP_OUTPUT=FILE`
//! keeps the bytes March wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/term.rs"]
mod term;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use march_testkit::{Script, ScriptedServer, Turn};
use term::{ANSWER_END, cpu_ns, kill_servers, ms, runtime_dir, streamed_answer};

/// The tmux socket the bench's server listens on.
const SOCKET: &str = "march-streaming-bench";
/// Short rounds.
const ROUNDS: usize = 50;

fn tmux(args: &[&str]) -> Output {
    Command::new("tmux")
        .args(["-L", SOCKET, "-f", "/dev/null"])
        .args(args)
        .output()
        .unwrap()
}

fn screen(escapes: bool) -> String {
    let mut args = vec!["capture-pane", "-p", "-t", "bench"];
    if escapes {
        args.push("-e");
    }
    String::from_utf8_lossy(&tmux(&args).stdout).into_owned()
}

/// Polls the pane until its screen holds `needle` (within a minute).
fn wait_screen(needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !screen(false).contains(needle) {
        assert!(Instant::now() < deadline, "never on screen: {needle}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes of this run: every one whose environment names its `MARCH_HOME`.
fn march_processes(march_home: &Path) -> Vec<(u32, String)> {
    let wanted = format!("MARCH_HOME={}", march_home.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes()) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            found.push((pid, cmd.trim().to_string()));
        }
    }
    found
}

/// What a process of this run is, from its command line: `server`, `runner`, `lsp-host`, or
/// `client` (plain `march`).
fn role(cmd: &str) -> String {
    cmd.split(' ')
        .nth(1)
        .filter(|a| !a.starts_with('-'))
        .unwrap_or("client")
        .to_string()
}

/// CPU of each of this run's processes so far, in nanoseconds, with its role.
fn march_cpu(march_home: &Path) -> HashMap<u32, (String, u64)> {
    march_processes(march_home)
        .into_iter()
        .map(|(pid, cmd)| (pid, (role(&cmd), cpu_ns(pid))))
        .collect()
}

type Samples = HashMap<u32, (String, u64)>;

/// CPU spent between two [`march_cpu`] samples, in nanoseconds, per process: what the
/// processes alive at the second spent since the first (a process that ended between them
/// is not counted).
fn spent_each(before: &Samples, after: &Samples) -> Vec<(String, u64)> {
    after
        .iter()
        .map(|(pid, (role, ns))| {
            let was = before.get(pid).map_or(0, |(_, ns)| *ns);
            (role.clone(), ns.saturating_sub(was))
        })
        .collect()
}

/// [`spent_each`] summed.
fn spent(before: &Samples, after: &Samples) -> u64 {
    spent_each(before, after).iter().map(|(_, ns)| ns).sum()
}

/// [`spent_each`] as `server 0.31 s, runner 0.08 s, …`, the largest first.
fn spent_by_role(before: &Samples, after: &Samples) -> String {
    let mut each = spent_each(before, after);
    each.sort_by_key(|e| std::cmp::Reverse(e.1));
    each.iter()
        .map(|(role, ns)| format!("{role} {:.2} s", *ns as f64 / 1e9))
        .collect::<Vec<_>>()
        .join(", ")
}

fn bytes(out: &Path) -> u64 {
    std::fs::metadata(out).map(|m| m.len()).unwrap_or(0)
}

/// Waits until March answered a resize (its output grew past `from`) and then wrote
/// nothing for 200 ms: the frame after the resize is whole on screen.
fn settled(out: &Path, from: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while bytes(out) == from {
        assert!(Instant::now() < deadline, "no repaint after the resize");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut last = bytes(out);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = bytes(out);
        if now == last {
            return;
        }
        last = now;
    }
}

/// Waits until the pane's output file holds `needle` after byte `from`; returns when.
fn wait_output(out: &Path, from: u64, needle: &[u8]) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let all = std::fs::read(out).unwrap_or_default();
        let fresh = all.get(from as usize..).unwrap_or(&[]);
        if fresh.windows(needle.len()).any(|w| w == needle) {
            return Instant::now();
        }
        assert!(Instant::now() < deadline, "never written: {needle:?}");
        std::thread::sleep(Duration::from_micros(500));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    // Parts named on the command line run alone (`--bench` and other flags aside).
    let named: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let runs = |part: &str| named.is_empty() || named.iter().any(|a| *a == part);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut turns = Vec::new();
    if runs("answer") {
        turns.push(streamed_answer(60));
    }
    if runs("rounds") {
        turns.extend((0..ROUNDS).map(|i| Turn::text(format!("Answer{i} done."))));
    }
    if runs("four") {
        // Four sessions answering apart: each paragraph says whose it is.
        turns.extend((1..=4).map(|i| term::streamed_answer_tagged(60, &format!("Session {i}. "))));
    }
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(turns)))
        .unwrap();
    let (dir, project) = term::bench_home(&server.base_url());
    let march_home = dir.path().join("march");
    let out: PathBuf = dir.path().join("pane.out");
    let bin = march_e2e::march_bin();
    let _ = tmux(&["kill-server"]);

    // Frame times, when asked (see `MARCH_FRAME_STATS` in the UI).
    let stats = std::env::var("MARCH_FRAME_STATS")
        .map(|f| format!("MARCH_FRAME_STATS='{f}'"))
        .unwrap_or_default();
    let command = format!(
        "env -i {stats} PATH='{}' TERM=tmux-256color HOME='{}' MARCH_HOME='{}' \
         XDG_RUNTIME_DIR='{}' '{}' --fresh",
        std::env::var("PATH").unwrap_or_default(),
        dir.path().join("home").display(),
        march_home.display(),
        runtime_dir(dir.path()).display(),
        bin.display(),
    );
    let started = Instant::now();
    let made = tmux(&[
        "new-session",
        "-d",
        "-s",
        "bench",
        "-x",
        "200",
        "-y",
        "50",
        "-c",
        &project.to_string_lossy(),
        &command,
    ]);
    assert!(made.status.success(), "{made:?}");
    tmux(&[
        "pipe-pane",
        "-o",
        "-t",
        "bench",
        &format!("cat >> '{}'", out.display()),
    ]);
    wait_screen("m · off");

    if runs("idle") {
        idle(started, &march_home, &out);
    }
    let one = runs("answer").then(|| answer(&march_home, &out));
    if runs("rounds") {
        short_rounds(&out);
    }
    if runs("four") {
        four_panes(&march_home, &out, one);
    }
    let _ = tmux(&["kill-server"]);
    kill_servers(dir.path());
    // What March wrote, kept for a look at its bytes when asked.
    if let Some(keep) = std::env::var_os("MARCH_BENCH_KEEP_OUTPUT") {
        std::fs::copy(&out, keep).unwrap();
    }
}

/// Idle from 5 to 30 s after start.
fn idle(started: Instant, march_home: &Path, out: &Path) {
    std::thread::sleep(Duration::from_secs(5).saturating_sub(started.elapsed()));
    let (cpu0, bytes0) = (march_cpu(march_home), bytes(out));
    std::thread::sleep(Duration::from_secs(25));
    let (cpu1, bytes1) = (march_cpu(march_home), bytes(out));
    let processes = march_processes(march_home);
    println!(
        "idle 5–30 s after start: CPU {:.1} ms, {} bytes written; processes: {}",
        spent(&cpu0, &cpu1) as f64 / 1e6,
        bytes1 - bytes0,
        processes
            .iter()
            .map(|(_, cmd)| role(cmd))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Types the prompt every answer part asks into the focused pane.
fn ask() {
    tmux(&[
        "send-keys",
        "-t",
        "bench",
        "explain the parser changes",
        "Enter",
    ]);
}

/// A 2,000-token answer over 30 s: the CPU seconds and KiB it cost.
fn answer(march_home: &Path, out: &Path) -> (f64, f64) {
    let (cpu0, bytes0) = (march_cpu(march_home), bytes(out));
    let start = Instant::now();
    ask();
    wait_screen(ANSWER_END);
    let streamed = start.elapsed();
    std::thread::sleep(Duration::from_secs(1));
    let (cpu1, bytes1) = (march_cpu(march_home), bytes(out));
    let cost = (
        spent(&cpu0, &cpu1) as f64 / 1e9,
        (bytes1 - bytes0) as f64 / 1024.0,
    );
    let shown = screen(true);
    // A full repaint: the window made narrower and then as wide again.
    let from = bytes(out);
    tmux(&["resize-window", "-t", "bench", "-x", "150"]);
    settled(out, from);
    let from = bytes(out);
    tmux(&["resize-window", "-t", "bench", "-x", "200"]);
    settled(out, from);
    let repainted = screen(true);
    let differing = shown
        .lines()
        .zip(repainted.lines())
        .filter(|(a, b)| a != b)
        .count();
    println!(
        "2,000-token answer ({:.1} s): CPU {:.2} s for all of March's processes ({}), {:.0} \
         KiB written; screen against a full repaint: {}",
        streamed.as_secs_f64(),
        cost.0,
        spent_by_role(&cpu0, &cpu1),
        cost.1,
        if differing == 0 {
            "identical".to_string()
        } else {
            format!("{differing} rows differ")
        }
    );
    cost
}

/// Short rounds, one after the other.
fn short_rounds(out: &Path) {
    let mut rounds = Vec::new();
    for i in 0..ROUNDS {
        let from = bytes(out);
        tmux(&["send-keys", "-t", "bench", &format!("round {i}")]);
        std::thread::sleep(Duration::from_millis(50));
        // `send-keys` returns once tmux wrote the key to the pane: March has it from here.
        tmux(&["send-keys", "-t", "bench", "Enter"]);
        let sent = Instant::now();
        let shown = wait_output(out, from, format!("Answer{i} done.").as_bytes());
        rounds.push(shown - sent);
        if std::env::var_os("MARCH_BENCH_EACH_ROUND").is_some() {
            eprintln!("round {i}: {:.1} ms", ms(shown - sent));
        }
        // The turn's end (the prompt free again) before the next round.
        std::thread::sleep(Duration::from_millis(100));
    }
    let median = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "short round, Enter to the answer written: median {:.1} ms (rounds 1–10 {:.1} ms, \
         41–50 {:.1} ms)",
        ms(median(&rounds)),
        ms(median(&rounds[..10])),
        ms(median(&rounds[ROUNDS - 10..]))
    );
}

/// How many times `needle` shows on the screen.
fn on_screen(needle: &str) -> usize {
    screen(false).matches(needle).count()
}

/// Polls the screen until `needle` shows `n` times (within two minutes).
fn wait_screen_times(needle: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while on_screen(needle) < n {
        assert!(
            Instant::now() < deadline,
            "{needle} never on screen {n} times"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Four agent panes stacked, the answer streaming into each at once: the cost per pane
/// against `one` (the one-pane answer's CPU seconds and KiB), when it ran.
fn four_panes(march_home: &Path, out: &Path, one: Option<(f64, f64)>) {
    // Three splits below (prefix `-`), then the panes stacked equally high (prefix alt-2).
    for _ in 0..3 {
        tmux(&["send-keys", "-t", "bench", "C-a", "-"]);
    }
    tmux(&["send-keys", "-t", "bench", "C-a", "M-2"]);
    wait_screen_times("m · off", 4);
    let (cpu0, bytes0) = (march_cpu(march_home), bytes(out));
    for _ in 0..4 {
        ask();
        // The next pane (prefix `o`).
        tmux(&["send-keys", "-t", "bench", "C-a", "o"]);
    }
    wait_screen_times(ANSWER_END, 4);
    std::thread::sleep(Duration::from_secs(1));
    let (cpu1, bytes1) = (march_cpu(march_home), bytes(out));
    let cpu = spent(&cpu0, &cpu1) as f64 / 1e9 / 4.0;
    let kib = (bytes1 - bytes0) as f64 / 1024.0 / 4.0;
    let against = one.map_or(String::new(), |(c, k)| {
        format!(" ({:.2}× and {:.2}× one pane)", cpu / c, kib / k)
    });
    println!(
        "four panes streaming at once: per pane CPU {cpu:.2} s, {kib:.0} KiB written{against}; \
         all together {}",
        spent_by_role(&cpu0, &cpu1)
    );
}
