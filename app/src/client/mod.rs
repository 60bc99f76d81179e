//! The client: the terminal a user attaches to a workspace server. It is thin: it puts the
//! terminal in workspace mode, sends the server its size, what it supports and the bytes its
//! terminal sends, and writes what the server sends (when the server cannot open the terminal to
//! write it itself). It restores its terminal on every way out: a
//! detach, the workspace closed, the server gone, a hang-up, SIGTERM, an error or a panic.

mod graphics;
mod input;
pub mod servers;
pub mod terminal;

use std::io::{self, Write as _};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use march_wire::{ClientMessage, FrameReader, PROTOCOL_VERSION, ServerMessage, TermCaps};
use tokio::io::unix::AsyncFd;
use tokio::net::UnixStream;
use tokio::signal::unix::{SignalKind, signal};

use input::{Input, TerminalInput};
use terminal::TerminalGuard;

/// How long the server may take to welcome a terminal.
const WELCOME_TIMEOUT: Duration = Duration::from_secs(30);

/// How an attached terminal's session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// It detached (`Ctrl-a d`, `march kill` of another client…): the workspace goes on.
    Detached(String),
    /// The workspace was closed.
    Closed,
    /// The terminal went away (a hang-up, SIGTERM): nobody reads what is printed.
    HungUp,
}

/// Attaches this terminal to the server at `socket` until one of them ends it.
pub fn attach(socket: &Path, read_only: bool) -> anyhow::Result<Ended> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let ended = runtime.block_on(run(socket, read_only));
    runtime.shutdown_background();
    ended
}

async fn run(socket: &Path, read_only: bool) -> anyhow::Result<Ended> {
    let stream = UnixStream::connect(socket).await.with_context(|| {
        format!(
            "cannot connect to the workspace server at {}",
            socket.display()
        )
    })?;
    let connection = Connection::new(stream)?;
    let (cols, rows) = crossterm::terminal::size().context("cannot read the terminal's size")?;
    let mut caps = term_caps(|k| std::env::var(k).ok());
    let pictures = graphics::ask();
    caps.graphics = pictures.graphics;
    caps.cell_pixels = pictures.cell;
    let hello = ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        cols,
        rows,
        caps,
        read_only,
        tty: terminal_path(),
    };
    connection.send(&hello).await?;
    let mut frames = FrameReader::default();
    let mut buf = vec![0u8; 64 << 10];
    // Welcomed before the terminal changes, so a refusal is printed on a normal terminal.
    let (workspace, direct) = match tokio::time::timeout(
        WELCOME_TIMEOUT,
        connection.next_message(&mut frames, &mut buf),
    )
    .await
    {
        Ok(Ok(Some(ServerMessage::Welcome {
            workspace, direct, ..
        }))) => {
            tracing::debug!(direct, "welcomed to {workspace}");
            (workspace, direct)
        }
        Ok(Ok(Some(ServerMessage::Refused(why)))) => bail!("{why}"),
        Ok(Ok(Some(other))) => bail!("the workspace server answered {other:?} to a hello"),
        Ok(Ok(None)) => bail!("the workspace server closed the connection"),
        Ok(Err(e)) => return Err(e),
        Err(_) => bail!("the workspace server did not answer for {WELCOME_TIMEOUT:?}"),
    };
    let guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    connection
        .send(&ClientMessage::Ready)
        .await
        .map_err(|_| server_gone())?;
    // A server that opened the terminal reads its keys itself (one process less on every
    // keystroke's way); this one forwards them otherwise.
    let mut input = TerminalInput::new(!direct).context("cannot read the terminal")?;
    let mut terminated = signal(SignalKind::terminate())?;
    let mut hung_up = signal(SignalKind::hangup())?;
    let mut out = io::stdout().lock();
    let ended = loop {
        tokio::select! {
            biased;
            said = input.next() => {
                let message = match said {
                    Ok(Input::Bytes { bytes, partial }) => ClientMessage::Input {
                        bytes: bytes.to_vec(),
                        partial,
                    },
                    Ok(Input::Resized(cols, rows)) => ClientMessage::Resize { cols, rows },
                    // The terminal is gone (a hang-up reads as an error or the end).
                    Ok(Input::Ended) | Err(_) => break Ok(Ended::HungUp),
                };
                if connection.send(&message).await.is_err() {
                    break Err(server_gone());
                }
            }
            message = connection.next_message(&mut frames, &mut buf) => match message {
                Ok(Some(ServerMessage::Output(bytes))) => {
                    if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
                        break Ok(Ended::HungUp);
                    }
                }
                Ok(Some(ServerMessage::Exit(why))) if why == crate::ui::CLOSED => {
                    break Ok(Ended::Closed);
                }
                Ok(Some(ServerMessage::Exit(why))) => {
                    break Ok(Ended::Detached(format!("{why} from {workspace}")));
                }
                Ok(Some(other)) => {
                    tracing::warn!("unexpected message from the server: {other:?}");
                }
                Ok(None) | Err(_) => break Err(server_gone()),
            },
            _ = terminated.recv() => break Ok(Ended::HungUp),
            _ = hung_up.recv() => break Ok(Ended::HungUp),
        }
    };
    if matches!(ended, Ok(Ended::HungUp)) {
        // Best effort: the server sees the connection close anyway.
        let _ = connection.send(&ClientMessage::Detach).await;
    }
    drop(out);
    drop(guard);
    ended
}

fn server_gone() -> anyhow::Error {
    anyhow::anyhow!(
        "the workspace server ended unexpectedly (its log is march.log in the data \
         directory's logs); run march again to restore the workspace from its saved layout"
    )
}

/// The connection to the server: read through the reactor, written straight away (see
/// [`crate::nonblocking`]: a socket watched for room would wake the client after every key,
/// when the server read it).
struct Connection {
    read: AsyncFd<std::os::unix::net::UnixStream>,
    write: std::os::unix::net::UnixStream,
}

impl Connection {
    fn new(stream: UnixStream) -> io::Result<Connection> {
        let write = stream.into_std()?;
        let read = crate::reactor::watch(write.try_clone()?, tokio::io::Interest::READABLE)?;
        Ok(Connection { read, write })
    }

    async fn send(&self, message: &ClientMessage) -> io::Result<()> {
        crate::nonblocking::write_all(&self.write, &message.to_frame().encode()).await
    }

    /// The next message from the server; `None` when it closed the connection.
    /// Cancel-safe: bytes are pushed only after a read completes.
    async fn next_message(
        &self,
        frames: &mut FrameReader,
        buf: &mut [u8],
    ) -> anyhow::Result<Option<ServerMessage>> {
        loop {
            if let Some(frame) = frames.next_frame()? {
                return Ok(Some(ServerMessage::from_frame(frame)?));
            }
            let mut ready = self.read.readable().await?;
            let n = match ready.try_io(|socket| io::Read::read(&mut socket.get_ref(), buf)) {
                Ok(read) => read?,
                // Nothing after all: readiness was cleared, wait again.
                Err(_would_block) => continue,
            };
            if n == 0 {
                return Ok(None);
            }
            frames.push(&buf[..n]);
        }
    }
}

/// The path of the terminal output goes to, for the server to write it directly.
fn terminal_path() -> Option<String> {
    let stdout = io::stdout();
    if !io::IsTerminal::is_terminal(&stdout) {
        return None;
    }
    let name = rustix::termios::ttyname(&stdout, Vec::new()).ok()?;
    name.into_string().ok()
}

/// What this terminal supports, from its environment: 24-bit colour unless `TERM` names
/// a terminal known to lack it and `COLORTERM` does not say otherwise; scroll regions
/// unless it is `dumb` or `MARCH_NO_SCROLL_REGIONS` is set (for a terminal that gets them
/// wrong).
fn term_caps(var: impl Fn(&str) -> Option<String>) -> TermCaps {
    let term = var("TERM").unwrap_or_default();
    let colorterm = var("COLORTERM").unwrap_or_default();
    let says_truecolor = matches!(colorterm.as_str(), "truecolor" | "24bit");
    let lacks = ["linux", "vt", "ansi", "screen", "cons", "dumb"]
        .iter()
        .any(|p| term.starts_with(p))
        || term.ends_with("-16color")
        || term.ends_with("-8color")
        || term == "xterm-color";
    TermCaps {
        truecolor: says_truecolor || !lacks,
        // Pushed at attach; terminals without it ignore the request.
        kitty_keyboard: true,
        osc52: term != "linux",
        // Asked of the terminal itself (see `graphics`).
        graphics: None,
        cell_pixels: None,
        scroll_regions: !term.is_empty()
            && term != "dumb"
            && var("MARCH_NO_SCROLL_REGIONS").is_none_or(|v| v.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_support_comes_from_term_and_colorterm() {
        let caps = |term: &str, colorterm: &str| {
            let (term, colorterm) = (term.to_string(), colorterm.to_string());
            term_caps(move |k| match k {
                "TERM" => Some(term.clone()),
                "COLORTERM" => Some(colorterm.clone()),
                _ => None,
            })
        };
        assert!(caps("xterm-256color", "").truecolor);
        assert!(caps("xterm-kitty", "").truecolor);
        assert!(!caps("linux", "").truecolor);
        assert!(!caps("screen-256color", "").truecolor);
        assert!(caps("screen-256color", "truecolor").truecolor);
        assert!(!caps("xterm-16color", "").truecolor);
        assert!(caps("tmux-256color", "").scroll_regions);
        assert!(caps("linux", "").scroll_regions);
        assert!(!caps("dumb", "").scroll_regions);
    }

    #[test]
    fn scroll_regions_can_be_turned_off() {
        let caps = term_caps(|k| match k {
            "TERM" => Some("xterm-256color".into()),
            "MARCH_NO_SCROLL_REGIONS" => Some("1".into()),
            _ => None,
        });
        assert!(!caps.scroll_regions);
    }
}
