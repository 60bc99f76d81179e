//! The focused pane's cost while many sessions stream out of sight: `march` on 8 projects
//! with 16 sessions (one in the focused pane, fifteen in other tabs), all streaming the same
//! 2,000-token answer from the scripted model server, against `march` with the one session
//! alone, in the same run.
//!
//! Measured while the focused answer streams: the draw time of each frame (wall and the
//! drawing thread's CPU, from `MARCH_FRAME_STATS`), and the CPU time of the `march` process
//! (its runners excluded: they are the agents' cost, not the workspace's).
//!
//! Run: `cargo bench -p march-e2e --bench workspace_background` (about 2 minutes).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/term.rs"]
mod term;

use std::path::Path;
use std::time::{Duration, Instant};

use march_testkit::{Script, ScriptedServer};
use term::{
    ANSWER_END, Term, kill_servers, march_command, march_stats, streamed_answer,
    write_scripted_config,
};

const PROJECTS: usize = 8;
const SESSIONS: usize = 16;
const RUNS: usize = 3;
const PREFIX: &[u8] = b"\x01";

/// Frame draw times from `MARCH_FRAME_STATS`: (wall µs, thread CPU µs) per frame.
fn frame_stats(path: &Path) -> Vec<(u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        })
        .collect()
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Measured {
    /// Median frame draw time, wall, µs.
    wall_median: f64,
    /// 99th percentile of the same.
    wall_p99: f64,
    /// Median frame draw time, drawing thread's CPU, µs.
    cpu_median: f64,
    /// CPU time of the `march` process while the focused answer streamed, ms.
    march_cpu_ms: f64,
    /// Frames drawn in the whole run.
    frames: f64,
}

/// One measured run: `march` on `projects`, `sessions` in all, every one streaming.
fn run(projects: usize, sessions: usize) -> Measured {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // 500 deltas 20 ms apart: each answer streams for about 10 s.
    let turns = (0..sessions).map(|_| streamed_answer(20)).collect();
    let server = rt
        .block_on(ScriptedServer::start(Script::new(turns)))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    write_scripted_config(&home.path().join("march"), &server.base_url());
    let root = home.path().join("projects");
    let mut names = Vec::new();
    for i in 0..projects {
        let name = format!("p{i}");
        std::fs::create_dir_all(root.join(&name)).unwrap();
        names.push(name);
    }
    let stats = home.path().join("frames.txt");
    let mut cmd = march_command(home.path(), &root);
    cmd.args(&names);
    cmd.env("MARCH_FRAME_STATS", &stats);
    let mut t = Term::spawn(cmd);
    t.wait_for("March · p0", 1);

    // Panes in the other tabs until there are `sessions` sessions: tab i gets a second pane
    // while more are needed.
    let mut count = projects;
    let mut tab = 1;
    while count < sessions {
        t.send(PREFIX);
        t.send(format!("{}", tab + 1).as_bytes());
        t.send(PREFIX);
        t.send(b"%");
        count += 1;
        tab = tab % (projects - 1) + 1;
    }
    // Every session ready: each tab's panes show the agent's title once open.
    for i in 1..projects {
        t.send(PREFIX);
        t.send(format!("{}", i + 1).as_bytes());
        let panes = 1
            + (sessions - projects) / (projects - 1)
            + usize::from(i <= (sessions - projects) % (projects - 1));
        t.wait_for(&format!("March · p{i}"), panes.min(sessions));
        // Prompt each pane of the tab.
        for _ in 0..panes {
            t.send(b"go\r");
            t.send(PREFIX);
            t.send(b"o");
        }
    }
    // Back to the first tab: its one session streams in view while the others stream out
    // of sight.
    t.send(PREFIX);
    t.send(b"1");
    t.wait_for("March · p0", 1);
    let before = march_stats(home.path(), t.pid()).0;
    let start = Instant::now();
    t.send(b"go\r");
    t.wait_for(ANSWER_END, 1);
    let elapsed = start.elapsed();
    let cpu_ms = (march_stats(home.path(), t.pid()).0 - before) as f64 * 10.0;
    // Quit so the stats are written.
    t.send(PREFIX);
    t.send(b"Q");
    let _ = t.wait_exit(Duration::from_secs(20));
    kill_servers(home.path());
    let frames = frame_stats(&stats);
    let mut wall: Vec<u64> = frames.iter().map(|f| f.0).collect();
    let mut cpu: Vec<u64> = frames.iter().map(|f| f.1).collect();
    wall.sort_unstable();
    cpu.sort_unstable();
    eprintln!(
        "  {projects} projects, {sessions} sessions: answer in {:.1} s, {} frames",
        elapsed.as_secs_f64(),
        frames.len()
    );
    drop(server);
    Measured {
        wall_median: percentile(&wall, 0.5) as f64,
        wall_p99: percentile(&wall, 0.99) as f64,
        cpu_median: percentile(&cpu, 0.5) as f64,
        march_cpu_ms: cpu_ms,
        frames: frames.len() as f64,
    }
}

/// The median over runs of one measure.
fn med(runs: &[Measured], f: fn(&Measured) -> f64) -> f64 {
    let mut x: Vec<f64> = runs.iter().map(f).collect();
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

fn main() {
    let mut alone = Vec::new();
    let mut busy = Vec::new();
    for i in 0..RUNS {
        eprintln!("run {}", i + 1);
        alone.push(run(1, 1));
        busy.push(run(PROJECTS, SESSIONS));
    }
    let report = |name: &str, v: &[Measured]| {
        println!(
            "{name:<34} frame wall median {:>6.0} µs  p99 {:>6.0} µs  frame CPU median {:>6.0} µs  march CPU {:>6.0} ms  frames {:>5.0}",
            med(v, |r| r.wall_median),
            med(v, |r| r.wall_p99),
            med(v, |r| r.cpu_median),
            med(v, |r| r.march_cpu_ms),
            med(v, |r| r.frames),
        );
    };
    println!("medians of {RUNS} runs, the focused answer streaming 2,000 tokens");
    report("one session", &alone);
    report("8 projects, 16 sessions streaming", &busy);
    let ratio = |f: fn(&Measured) -> f64| med(&busy, f) / med(&alone, f).max(1.0);
    println!(
        "ratios (target ≤ 1.2): frame wall median {:.2}×, frame CPU median {:.2}×, march CPU {:.2}×",
        ratio(|r| r.wall_median),
        ratio(|r| r.cpu_median),
        ratio(|r| r.march_cpu_ms),
    );
}
