//! What confining a command costs (issue 21): the time from spawning to exit of
//! `bash -c true` run as March's runner runs an agent's command in workspace-write mode
//! (`march sandbox --mode workspace-write --write DIR -- bash -c true`) against the bare
//! `bash -c true`, interleaved in one run, and the launcher alone confining `true`.
//!
//! Run: `cargo bench -p march-e2e --bench sandbox_start` (a few seconds).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/samples.rs"]
mod samples;

use samples::report;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 300;

fn time(mut command: Command) -> Duration {
    let start = Instant::now();
    let status = command.status().unwrap();
    let took = start.elapsed();
    assert!(status.success(), "{command:?}");
    took
}

fn main() {
    let march = march_e2e::march_bin();
    let project = tempfile::tempdir().unwrap();
    let confined = |program: &str, args: &[&str]| {
        let mut c = Command::new(&march);
        c.args(["sandbox", "--mode", "workspace-write", "--write"])
            .arg(project.path())
            .arg("--")
            .arg(program)
            .args(args);
        c
    };
    let bare = || {
        let mut c = Command::new("bash");
        c.args(["-c", "true"]);
        c
    };
    // Warm the page cache and the binaries.
    for _ in 0..20 {
        time(bare());
        time(confined("bash", &["-c", "true"]));
    }
    let (mut outside, mut inside, mut launcher) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        outside.push(time(bare()));
        inside.push(time(confined("bash", &["-c", "true"])));
        launcher.push(time(confined("/bin/true", &[])));
    }
    println!(
        "{RUNS} runs each, interleaved; project {}",
        show(project.path())
    );
    let a = report("bash -c true", outside);
    let b = report("march sandbox … bash -c true", inside);
    report("march sandbox … /bin/true", launcher);
    println!(
        "confined start costs {:.2} ms more ({:.2}×)",
        (b.as_secs_f64() - a.as_secs_f64()) * 1e3,
        b.as_secs_f64() / a.as_secs_f64()
    );
}

fn show(path: &Path) -> String {
    path.display().to_string()
}
