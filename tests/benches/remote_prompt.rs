//! A remote project's cost (issue 21): prompt to first token through a runner reached over
//! SSH (`ssh marchtest march runner`, a real OpenSSH server on 127.0.0.1, as March starts a
//! remote project's runner) against a local `march runner`, interleaved in one run, both
//! answered by the same scripted model server; and the start (spawn to `session/new`
//! answered) of each, where the SSH handshake shows, against `ssh HOST true` alone.
//!
//! Run: `cargo bench -p march-e2e --bench remote_prompt` (needs OpenSSH's server, which
//! `.ci/install-test-tools` installs; about a minute).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/samples.rs"]
mod samples;

#[path = "../tests/support/acp_client.rs"]
mod acp_client;
#[path = "../tests/support/sshd.rs"]
mod sshd;

use samples::report;
use std::time::{Duration, Instant};

use acp_client::{AcpClient, Harness, Runner};
use agent_client_protocol::v1::schema::SessionUpdate;
use march_testkit::Turn;

/// Prompts timed per runner.
const PROMPTS: usize = 40;
/// Starts timed per runner.
const STARTS: usize = 8;

/// The runner over SSH, as March starts a remote project's (without the version check's
/// shell line, timed apart in the start).
fn ssh_runner(h: &Harness, server: &sshd::Sshd) -> Runner {
    let mut command = tokio::process::Command::new("ssh");
    command
        .arg("-F")
        .arg(&server.client_config)
        .args(["-T", "-o", "BatchMode=yes", "--", sshd::HOST])
        .arg(format!(
            "sh -c 'exec {} runner'",
            march_e2e::march_bin().display()
        ));
    h.spawn_runner_as(command)
}

/// Spawn to `session/new` answered: the client, its session, and how long it took.
async fn start(
    h: &Harness,
    spawn: impl Fn() -> Runner,
) -> (
    Runner,
    AcpClient,
    agent_client_protocol::v1::schema::SessionId,
    Duration,
) {
    let began = Instant::now();
    let (runner, client) = h.connect_to(spawn()).await;
    let session = client.new_session(&h.project()).await.session_id;
    (runner, client, session, began.elapsed())
}

/// Prompt sent to the first token of the answer.
async fn first_token(
    client: &mut AcpClient,
    session: &agent_client_protocol::v1::schema::SessionId,
) -> Duration {
    let began = Instant::now();
    let answer = client.prompt(session, "ping");
    client
        .wait_update(|u| matches!(u, SessionUpdate::AgentMessageChunk(_)))
        .await;
    let took = began.elapsed();
    answer.await.unwrap().unwrap();
    client.drain();
    took
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns = (0..2 * PROMPTS).map(|_| Turn::text("pong")).collect();
    let h = Harness::new(turns).await;
    let server = sshd::Sshd::start(&h.dir.path().join("sshd"), &h.march_home());
    let local = || h.spawn_runner();
    let remote = || ssh_runner(&h, &server);
    // Built (when needed) and in the page cache before anything is timed.
    march_e2e::march_bin();
    for spawn in [&local as &dyn Fn() -> Runner, &remote] {
        let (_r, c, _s, _) = start(&h, spawn).await;
        c.close().await;
    }

    let (mut local_starts, mut remote_starts, mut bare_ssh) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..STARTS {
        // The floor: OpenSSH connecting and running `true`, nothing of March's.
        let began = Instant::now();
        let ok = std::process::Command::new("ssh")
            .arg("-F")
            .arg(&server.client_config)
            .args(["-T", "-o", "BatchMode=yes", "--", sshd::HOST, "true"])
            .status()
            .unwrap();
        assert!(ok.success());
        bare_ssh.push(began.elapsed());
        let (_r, c, _s, took) = start(&h, local).await;
        local_starts.push(took);
        c.close().await;
        let (_r, c, _s, took) = start(&h, remote).await;
        remote_starts.push(took);
        c.close().await;
    }
    let (_lr, mut lc, ls, _) = start(&h, local).await;
    let (_rr, mut rc, rs, _) = start(&h, remote).await;
    let (mut local_tokens, mut remote_tokens) = (Vec::new(), Vec::new());
    for _ in 0..PROMPTS {
        local_tokens.push(first_token(&mut lc, &ls).await);
        remote_tokens.push(first_token(&mut rc, &rs).await);
    }
    println!("remote_prompt: {PROMPTS} prompts and {STARTS} starts each, interleaved");
    let l = report("local runner: prompt to first token", local_tokens);
    let r = report("ssh runner: prompt to first token", remote_tokens);
    println!(
        "  ssh adds {:.2} ms",
        (r.as_secs_f64() - l.as_secs_f64()) * 1e3
    );
    let l = report("local runner: spawn to session/new", local_starts);
    let r = report("ssh runner: spawn to session/new", remote_starts);
    println!(
        "  ssh adds {:.2} ms",
        (r.as_secs_f64() - l.as_secs_f64()) * 1e3
    );
    let b = report("`ssh marchtest true` (the floor)", bare_ssh);
    println!(
        "  the ssh runner's start over the floor: {:.2} ms",
        (r.as_secs_f64() - b.as_secs_f64()) * 1e3
    );
    lc.close().await;
    rc.close().await;
}
