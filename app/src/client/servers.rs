//! Finding this user's workspace servers, asking them one control request each, and
//! starting one when none serves the workspace asked for.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use march_wire::{
    CONTROL_VERSION, ClientMessage, ControlRequest, FrameReader, ServerMessage, WorkspaceInfo,
};

use crate::server::rendezvous::sockets;
use crate::server::{READY, TAKEN};

/// How long a server that is ending may take to let go of its name.
const ENDING_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a server may take to answer a control request that does not wait.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A running workspace server.
#[derive(Debug, Clone)]
pub struct Server {
    /// Its socket.
    pub socket: PathBuf,
    /// What it said it is.
    pub info: WorkspaceInfo,
}

/// Sends `request` to the server at `socket` and returns its answer.
pub fn ask(socket: &Path, request: ControlRequest) -> anyhow::Result<serde_json::Value> {
    ask_within(socket, request, Some(ANSWER_TIMEOUT))
}

/// [`ask`] for a request answered when something happens (`wait`): no time limit.
pub fn ask_waiting(socket: &Path, request: ControlRequest) -> anyhow::Result<serde_json::Value> {
    ask_within(socket, request, None)
}

fn ask_within(
    socket: &Path,
    request: ControlRequest,
    limit: Option<Duration>,
) -> anyhow::Result<serde_json::Value> {
    let mut stream = UnixStream::connect(socket)
        .with_context(|| format!("cannot connect to {}", socket.display()))?;
    stream.set_read_timeout(limit)?;
    let message = ClientMessage::Control {
        version: CONTROL_VERSION,
        request,
    };
    stream.write_all(&message.to_frame().encode())?;
    let mut frames = FrameReader::default();
    let mut buf = [0u8; 16 << 10];
    loop {
        if let Some(frame) = frames.next_frame()? {
            return match ServerMessage::from_frame(frame)? {
                ServerMessage::Reply(Ok(value)) => Ok(value),
                ServerMessage::Reply(Err(why)) | ServerMessage::Refused(why) => {
                    bail!("{why}")
                }
                other => bail!("the server answered {other:?} to a control request"),
            };
        }
        let n = stream
            .read(&mut buf)
            .context("no answer from the workspace server")?;
        if n == 0 {
            bail!("the workspace server closed the connection without answering");
        }
        frames.push(&buf[..n]);
    }
}

/// Every server that answers, the most recently used first. Sockets nobody serves (a
/// server that died) are skipped; the next server of that name replaces them.
pub fn list() -> anyhow::Result<Vec<Server>> {
    let dir = sockets()?;
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut servers = Vec::new();
    for entry in entries.flatten() {
        let socket = entry.path();
        if socket.extension().is_none_or(|e| e != "sock") {
            continue;
        }
        match ask(&socket, ControlRequest::Info)
            .and_then(|v| serde_json::from_value::<WorkspaceInfo>(v).map_err(Into::into))
        {
            Ok(info) => servers.push(Server { socket, info }),
            Err(e) => tracing::debug!("{}: {e:#}", socket.display()),
        }
    }
    servers.sort_by_key(|s| std::cmp::Reverse(s.info.last_active));
    Ok(servers)
}

/// The server named `name`, among `servers`.
pub fn named<'a>(servers: &'a [Server], name: &str) -> Option<&'a Server> {
    servers.iter().find(|s| s.info.name == name)
}

/// The socket of the workspace of `dirs` (canonical): the running one, else a new server
/// started for them (named `name`, or after the first directory).
pub fn open(dirs: &[PathBuf], name: Option<&str>, fresh: bool) -> anyhow::Result<PathBuf> {
    let servers = list()?;
    if let Some(running) = servers.iter().find(|s| same_dirs(&s.info.dirs, dirs)) {
        if let Some(name) = name.filter(|n| *n != running.info.name) {
            bail!(
                "these directories are open in workspace `{}`: `march attach -t {}` (a \
                 directory belongs to one workspace, not to `{name}` too)",
                running.info.name,
                running.info.name
            );
        }
        if fresh {
            bail!(
                "workspace `{}` of these directories is running: --fresh starts a new one, so \
                 end it first with `march kill -t {}` (its turns and shells end)",
                running.info.name,
                running.info.name
            );
        }
        return Ok(running.socket.clone());
    }
    if let Some(name) = name
        && let Some(other) = named(&servers, name)
    {
        bail!(
            "a workspace named `{name}` is running on {}: pick another name, or `march attach \
             -t {name}`",
            show_dirs(&other.info.dirs)
        );
    }
    let base = name.map_or_else(|| default_name(dirs), str::to_string);
    let mut n = 1;
    let mut waited = false;
    while n < 100 {
        let candidate = match n {
            1 => base.clone(),
            n => format!("{base}-{n}"),
        };
        if named(&servers, &candidate).is_some() {
            n += 1;
            continue;
        }
        let socket = crate::server::rendezvous::socket_of(&candidate)?;
        if let Started::Ready = start(&candidate, dirs, fresh)? {
            return Ok(socket);
        }
        // Another server has the name: one started at the same moment (the same workspace,
        // or the next name for ours, perhaps not listening yet), or one that is ending.
        let info = match info_of(&socket) {
            Ok(info) => Some(info),
            Err(_) if !waited => {
                waited = true;
                answered_or_ended(&socket, ENDING_TIMEOUT)?
            }
            Err(e) => return Err(e.context(format!("workspace `{candidate}` does not answer"))),
        };
        match info {
            Some(info) if same_dirs(&info.dirs, dirs) => return Ok(socket),
            Some(_) if name.is_some() => bail!("a workspace named `{candidate}` just started"),
            Some(_) => n += 1,
            // It ended: the name is free again.
            None => {}
        }
    }
    bail!("no free workspace name after `{base}`-99")
}

/// Waits until the server of `socket` has ended (its lock is free), for `limit` at most.
pub fn wait_ended(socket: &Path, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while !ended(socket)? {
        if Instant::now() >= deadline {
            bail!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// What the server of `socket` says of itself once it answers, or `None` once it has ended,
/// for `limit` at most: a server that holds the name may still be starting, or be ending.
fn answered_or_ended(socket: &Path, limit: Duration) -> anyhow::Result<Option<WorkspaceInfo>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(info) = info_of(socket) {
            return Ok(Some(info));
        }
        if ended(socket)? {
            return Ok(None);
        }
        if Instant::now() >= deadline {
            bail!(
                "a workspace server holds the name, does not answer, and is still running after {limit:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the server of `socket` says of itself.
fn info_of(socket: &Path) -> anyhow::Result<WorkspaceInfo> {
    let value = ask(socket, ControlRequest::Info)?;
    Ok(serde_json::from_value(value)?)
}

/// Whether the server of `socket` has ended: its lock is free (or gone).
fn ended(socket: &Path) -> anyhow::Result<bool> {
    let lock = socket.with_extension("lock");
    match std::fs::File::open(&lock) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e).with_context(|| format!("cannot open {}", lock.display())),
        // Free once the server's process is gone; let go of it at once.
        Ok(file) => Ok(file.try_lock().is_ok()),
    }
}

/// What starting a server found.
enum Started {
    /// It listens.
    Ready,
    /// Another server has the socket.
    Taken,
}

/// Starts `march server` for workspace `name` and waits until it listens.
fn start(name: &str, dirs: &[PathBuf], fresh: bool) -> anyhow::Result<Started> {
    let exe = std::env::current_exe().context("cannot find the march executable")?;
    let mut command = Command::new(exe);
    command.arg("server").arg("--name").arg(name);
    if fresh {
        command.arg("--fresh");
    }
    command
        .arg("--")
        .args(dirs)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .context("cannot start the workspace server")?;
    let Some(out) = child.stdout.take() else {
        bail!("the workspace server has no pipe to tell it is ready");
    };
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .context("cannot read from the workspace server")?;
    // The server lives on after this process; it is not waited for.
    drop(child);
    match line.trim_end() {
        READY => Ok(Started::Ready),
        TAKEN => Ok(Started::Taken),
        "" => {
            bail!("the workspace server ended at start (its log is in the data directory's logs)")
        }
        other => bail!(
            "the workspace server did not start: {}",
            other.trim_start_matches("error: ")
        ),
    }
}

/// Whether two workspaces are of the same directories, in any order.
fn same_dirs(a: &[PathBuf], b: &[PathBuf]) -> bool {
    a.len() == b.len() && a.iter().all(|d| b.contains(d))
}

/// A workspace's name when none is given: its first directory's, made safe for a file name.
fn default_name(dirs: &[PathBuf]) -> String {
    let first = dirs
        .first()
        .and_then(|d| d.file_name())
        .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned());
    match march_wire::rendezvous::safe_name(&first) {
        name if name.is_empty() => "workspace".to_string(),
        name => name,
    }
}

/// Directories for a message.
pub fn show_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_first_directory_made_safe() {
        assert_eq!(default_name(&[PathBuf::from("/src/api")]), "api");
        assert_eq!(
            default_name(&[PathBuf::from("/src/my app"), PathBuf::from("/b")]),
            "my_app"
        );
        assert_eq!(default_name(&[PathBuf::from("/src/.hidden")]), "hidden");
        assert_eq!(default_name(&[PathBuf::from("/")]), "root");
        assert!(same_dirs(
            &[PathBuf::from("/a"), PathBuf::from("/b")],
            &[PathBuf::from("/b"), PathBuf::from("/a")]
        ));
        assert!(!same_dirs(
            &[PathBuf::from("/a")],
            &[PathBuf::from("/a"), PathBuf::from("/b")]
        ));
    }
}
