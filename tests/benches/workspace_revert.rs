//! Nothing slow on the UI loop (issue 16): keystroke-to-echo latency in a shell pane while
//! the uncommitted-changes pane beside it reverts file after file of a repository with 500
//! changed files, against the same echo with nothing else running, in one run.
//!
//! March runs in an outer PTY drained as fast as it comes. The shell pane runs an echo
//! program (`stty raw -echo; exec cat`); each loaded sample first focuses the
//! uncommitted-changes pane, presses `R` twice (revert the file), focuses the shell again,
//! waits 50 ms for the frames of those focus changes, and then types the letter, timed from
//! its write until it is printed back. Each revert
//! reads the repository's status and the file in HEAD, and its pane then diffs all 500
//! files again: before the job bus the loop ran all of that itself.
//!
//! Run: `cargo bench -p march-e2e --bench workspace_revert` (about a minute).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/outer.rs"]
mod outer;
#[path = "support/term.rs"]
mod term;

use std::path::Path;

use march_e2e::git;
use outer::{Outer, describe, quantile};
use term::{kill_servers, march_command, ms};

const PREFIX: &[u8] = b"\x01";
const FILES: usize = 600;
const CHANGED: usize = 500;
/// Loaded samples: each reverts one file.
const REVERTS: usize = 60;

/// A repository of `FILES` files of 200 lines, `CHANGED` of them changed in one line.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.email", "b@example.com"]);
    git(dir, &["config", "user.name", "B"]);
    let text: String = (0..200)
        .map(|n| format!("line {n} of some text\n"))
        .collect();
    for i in 0..FILES {
        std::fs::write(dir.join(format!("f{i:03}.txt")), &text).unwrap();
    }
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "start"]);
    for i in 0..CHANGED {
        let changed = text.replace("line 100 of", "line one hundred of");
        std::fs::write(dir.join(format!("f{i:03}.txt")), changed).unwrap();
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    repository(&project);
    for sub in ["home", "march"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    // An agent pane whose model is never called, and /bin/sh for the shell pane.
    std::fs::write(
        dir.path().join("march/config.toml"),
        "default_model = \"scripted/m\"\n[providers.scripted]\napi = \"openai-completions\"\n\
         base_url = \"http://127.0.0.1:9\"\n[[providers.scripted.models]]\nid = \"m\"\n\
         [shell]\ncommand = \"/bin/sh\"\n",
    )
    .unwrap();
    march_e2e::march_bin();

    let mut m = Outer::spawn(march_command(dir.path(), &project), 50, 200);
    m.wait_text("project");
    // A shell pane to the right, running the echo program.
    m.send(PREFIX);
    m.send(b"t");
    m.send(b"stty raw -echo; printf 'ECHO%s\\n' READY; exec cat\r");
    m.wait_text("ECHOREADY");
    // The uncommitted changes to its right, listed.
    m.send(PREFIX);
    m.send(b"g");
    m.wait_text("f000.txt");
    m.send(PREFIX);
    m.send(b"h");
    // "Nothing else running" means it: the agent's runner and language-server host finish
    // starting first.
    std::thread::sleep(std::time::Duration::from_secs(3));

    let idle = m.latency();
    // The same letters while reverts run: each starts one (focus the pane, `R` twice, focus
    // the shell again), lets the frames of those focus changes go by, then types. The letter
    // lands while the revert's job and the pane's diffing of every changed file run.
    let loaded = m.latency_with(REVERTS, 100, |m| {
        m.send(PREFIX);
        m.send(b"l");
        m.send(b"R");
        m.send(b"R");
        m.send(PREFIX);
        m.send(b"h");
        std::thread::sleep(std::time::Duration::from_millis(50));
    });
    // What one revert ran on the loop before the job bus: the status, then every changed
    // file's text in HEAD and on disk (timed here, on the same repository).
    let stall = {
        let start = std::time::Instant::now();
        git(&project, &["rev-parse", "--show-toplevel"]);
        let status = git(
            &project,
            &["status", "--porcelain=v1", "--untracked-files=all"],
        );
        for line in status.lines() {
            let path = &line[3..];
            git(&project, &["show", &format!("HEAD:{path}")]);
            let _ = std::fs::read(project.join(path));
        }
        start.elapsed()
    };
    // Let the last reverts land before counting them.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let left = git(&project, &["status", "--porcelain"]).lines().count();

    println!("keystroke to echo in a shell pane (outer PTY), {CHANGED} changed files:");
    println!("  nothing else running      {}", describe(&idle));
    println!("  reverting beside it       {}", describe(&loaded));
    println!(
        "  loaded / idle median      {:.2}×",
        ms(quantile(&loaded, 0.5)) / ms(quantile(&idle, 0.5))
    );
    println!(
        "  reverts started / files reverted   {REVERTS} / {} (a press on a file already \
         reverted, before the pane's list came back, reverts nothing)",
        CHANGED - left
    );
    println!(
        "  the git work of one revert, which the loop used to wait for: {:.0} ms ({} files)",
        ms(stall),
        left
    );
    drop(m);
    kill_servers(dir.path());
}
