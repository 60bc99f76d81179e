//! A project on another machine, end to end: the real `march` in a pseudo-terminal opens
//! `ssh://marchtest/PATH`, reached through a real OpenSSH server on 127.0.0.1 (keys made by
//! the test) with the user's own `ssh`. The runner runs on the "remote" side: a scripted turn
//! writes a file there (March's side never writes it: it offers no file writes or terminals
//! to a remote runner), the diff pane shows the change from the runner's reports, a command
//! runs there, a shell pane is a shell there, the supervisor groups the session under its
//! host; killing the ssh connection is a runner crash: reconnected, session reloaded.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/sshd.rs"]
mod sshd;
#[path = "support/workspace.rs"]
mod workspace;

use acp_client::{Harness, bash_call, write_call};
use march_testkit::Turn;
use pty::{PtyMarch, descendants};
use sshd::Sshd;
use workspace::*;

/// The `ssh` client processes `march` (pid `march`) started for its runners (not the ones
/// that read git on the host for the uncommitted-changes pane).
fn ssh_clients(march: u32) -> Vec<u32> {
    descendants(march)
        .into_iter()
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                let words: Vec<&[u8]> = c.split(|&b| b == 0).collect();
                let runs_runner = words
                    .iter()
                    .rev()
                    .find(|w| !w.is_empty())
                    .is_some_and(|w| w.windows(7).any(|x| x == b" runner"));
                words.first().is_some_and(|w| w.ends_with(b"ssh"))
                    && words.iter().any(|w| *w == b"marchtest")
                    && runs_runner
            })
        })
        .collect()
}

/// An sshd for the harness, and March's config made to reach it and run `march` there.
fn reach(h: &Harness, march: &std::path::Path) -> Sshd {
    let server = Sshd::start(&h.dir.path().join("sshd"), &h.march_home());
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(&server.march_config(march));
    std::fs::write(&config, text).unwrap();
    server
}

#[test]
fn a_remote_project_runs_its_agent_over_ssh_and_survives_a_dropped_connection() {
    let h: Harness = tokio_harness(vec![
        Turn::stream(vec![write_call("w1", "remote.txt", "written over there")]),
        Turn::text("Wrote it on the remote side."),
        Turn::stream(vec![bash_call("b1", "pwd > where.txt")]),
        Turn::text("Ran it there."),
        Turn::text("Still here after the reconnect."),
    ]);
    let remote_project = h.dir.path().canonicalize().unwrap().join("remote-project");
    std::fs::create_dir_all(&remote_project).unwrap();
    for args in [
        &["init", "-q"][..],
        &["config", "user.email", "t@example.com"],
        &["config", "user.name", "T"],
        &["commit", "-q", "--allow-empty", "-m", "start"],
    ] {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&remote_project)
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }
    let server = reach(&h, &march_e2e::march_bin());
    assert_eq!(
        server.run("echo $MARCH_HOME").trim(),
        h.march_home().to_str().unwrap()
    );
    let_commands_run_unasked(&h);

    let url = format!("ssh://{}{}", sshd::HOST, remote_project.display());
    let home = h.dir.path().join("home");
    let local = h.project();
    let mut m = PtyMarch::spawn_clean(&[&url], &local, &home, &h.march_home(), &[]);
    m.wait_text("March · marchtest:remote-project");

    m.type_line("write the file");
    m.wait_text("Wrote it on the remote side.");
    assert_eq!(
        std::fs::read_to_string(remote_project.join("remote.txt")).unwrap(),
        "written over there"
    );
    // The diff pane shows the change as the runner reported it.
    m.send(PREFIX);
    m.send(b"v");
    m.wait_for("the remote change in the diff pane", |t| {
        t.contains("remote.txt") && t.contains("written over there")
    });
    m.send(PREFIX);
    m.send(b"x");
    // The uncommitted-changes pane reads git and the files on the host.
    m.send(PREFIX);
    m.send(b"g");
    m.wait_for("the remote project's uncommitted file", |t| {
        t.contains("uncommitted · marchtest:remote-project") && t.contains("remote.txt")
    });
    m.send(PREFIX);
    m.send(b"x");

    // Commands run there, in the project.
    m.type_line("where are you");
    m.wait_text("Ran it there.");
    assert_eq!(
        std::fs::read_to_string(remote_project.join("where.txt"))
            .unwrap()
            .trim(),
        remote_project.to_str().unwrap()
    );

    // A shell pane on the project is a shell there, in its directory.
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("marchtest:remote-project");
    m.type_line("echo shell-in-$(basename \"$PWD\")");
    m.wait_text("shell-in-remote-project");
    m.send(PREFIX);
    m.send(b"x");
    // The supervisor groups the session under its host, connected.
    m.send(PREFIX);
    m.send(b"S");
    m.wait_for("the host and its connection", |t| {
        t.contains("▣ marchtest") && t.contains("connected · 1 runner")
    });
    m.send(ESC);

    // The connection drops: the runner is restarted over a new one and reloads the session.
    let server_pid = m.server_pid();
    let clients = ssh_clients(server_pid);
    assert_eq!(clients.len(), 1, "{clients:?}");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(clients[0] as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    m.wait_text("reloaded the session");
    let now = ssh_clients(server_pid);
    assert!(
        now.len() == 1 && now[0] != clients[0],
        "{clients:?} then {now:?}"
    );
    m.type_line("still there?");
    m.wait_text("Still here after the reconnect.");
    // The reloaded session carried the conversation to the model.
    let last = h.server.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("write the file") && last.contains("where are you"),
        "{last}"
    );
    m.quit();
}

#[test]
fn a_host_without_march_says_so() {
    let h: Harness = tokio_harness(vec![]);
    let remote_project = h.dir.path().canonicalize().unwrap().join("elsewhere");
    std::fs::create_dir_all(&remote_project).unwrap();
    let _server = reach(&h, std::path::Path::new("/nonexistent/march"));
    let url = format!("ssh://{}{}", sshd::HOST, remote_project.display());
    let home = h.dir.path().join("home");
    let mut m = PtyMarch::spawn_clean(&[&url], &h.project(), &home, &h.march_home(), &[]);
    m.wait_text("march is not installed on marchtest");
    m.quit();
}
