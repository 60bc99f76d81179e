//! `march server`: the process that owns one workspace and outlives its terminals. Started
//! by a client (`march`, `march new`) when none serves the workspace, it leaves the
//! terminal (a session of its own, stdio on /dev/null, cwd `/`), claims the workspace's
//! socket, tells its starter on the pipe that was its stdout, and serves until the
//! workspace is closed.
//!
//! One server per workspace, as zellij has one per session: a workspace that fails takes no
//! other with it, and a flood in one does not share a thread with another's keystrokes.

pub mod connection;
pub mod rendezvous;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use march_core::paths::MarchPaths;
use march_wire::rendezvous::{Claim, claim};
use tokio::net::UnixListener;
use tokio::sync::mpsc;

use connection::Incoming;

/// What the server tells its starter on its first line.
pub const READY: &str = "ready";
/// Another server has the socket: the starter connects to it.
pub const TAKEN: &str = "taken";

/// How often the server looks whether its socket is still there (each look wakes an idle
/// server: every 2 s cost three times tmux's idle CPU).
const SOCKET_CHECK: Duration = Duration::from_secs(30);

/// Runs the server of workspace `name` on `dirs` (canonical). Its stdout is the starter's
/// pipe until the socket is claimed.
pub fn run(paths: MarchPaths, name: &str, dirs: Vec<PathBuf>, fresh: bool) -> anyhow::Result<()> {
    // Out of the starter's session and process group: a hang-up of its terminal or a
    // Ctrl-C there does not reach the workspace.
    if let Err(e) = rustix::process::setsid() {
        tracing::warn!("setsid: {e}");
    }
    std::env::set_current_dir("/").context("cannot change to /")?;
    let socket = rendezvous::socket_of(name)?;
    let claimed = claim(&socket).with_context(|| format!("cannot listen on {}", socket.display()));
    let (listener, _lock) = match claimed {
        Ok(Claim::Listening { listener, lock }) => (listener, lock),
        Ok(Claim::Taken) => {
            tell_starter(TAKEN);
            return Ok(());
        }
        Err(e) => {
            tell_starter(&format!("error: {e:#}"));
            return Err(e);
        }
    };
    let watched = rendezvous::SocketFile::of(&socket)?;
    tracing::info!(name, socket = %socket.display(), ?dirs, "server listening");
    listener.set_nonblocking(true)?;
    // One thread: the loop, the agents' connections and their forwarders hand events to
    // each other without waking other threads (measured: a third of the CPU of sixteen
    // streaming sessions went to cross-thread wake-ups); nothing here blocks.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        let listener = UnixListener::from_std(listener)?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(accept(listener, name.to_string(), tx));
        tell_starter(READY);
        leave_stdio();
        let gone = Box::pin(watched.removed(SOCKET_CHECK));
        crate::ui::serve(paths, name.to_string(), dirs, fresh, rx, gone).await
    });
    // Agent tasks still winding down must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    if watched.is_ours() {
        let _ = std::fs::remove_file(&socket);
    }
    tracing::info!(name, "server ended");
    result
}

/// Accepts connections, each served on a task of its own; a peer of another user is
/// refused.
async fn accept(listener: UnixListener, name: String, incoming: mpsc::UnboundedSender<Incoming>) {
    let uid = march_wire::rendezvous::current_uid();
    let mut next_id = 0;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, most likely: try again shortly rather than spin.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                tracing::warn!(uid = cred.uid(), "refused a connection of another user");
                continue;
            }
            Err(e) => {
                tracing::warn!("cannot tell who connected ({e}): refused");
                continue;
            }
        }
        next_id += 1;
        tokio::spawn(connection::serve(
            next_id,
            stream,
            name.clone(),
            incoming.clone(),
        ));
        if incoming.is_closed() {
            return;
        }
    }
}

/// The first and only line for whoever started this server.
fn tell_starter(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Puts stdin, stdout and stderr on /dev/null: the starter's pipe closes, and nothing the
/// server or a library prints can reach a terminal.
fn leave_stdio() {
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        Ok(null) => {
            for (what, result) in [
                ("stdin", rustix::stdio::dup2_stdin(&null)),
                ("stdout", rustix::stdio::dup2_stdout(&null)),
                ("stderr", rustix::stdio::dup2_stderr(&null)),
            ] {
                if let Err(e) = result {
                    tracing::warn!("cannot put {what} on /dev/null: {e}");
                }
            }
        }
        Err(e) => tracing::warn!("cannot open /dev/null: {e}"),
    }
}
