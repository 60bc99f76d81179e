//! One connection to the workspace server: the first message says what it is (a terminal
//! attaching, or one request of the control CLI), then a reader hands the client's input to
//! the loop as [`Incoming`] and a writer sends what the loop queued in its [`Outbox`].
//!
//! A terminal's output goes straight to the terminal when the server can open it (as
//! tmux does: one process hop fewer for every echo and every frame), else through the
//! socket for the client to write.
//!
//! The loop never waits on a socket or a terminal: it queues frames and goes on. A client that stops
//! reading fills its queue up to [`BEHIND_AT`]; then its frames are dropped (the loop is told
//! when it reads again, and draws it whole), so it slows neither the server nor the others.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crossterm::event::Event;
use march_wire::{
    ClientMessage, ControlRequest, Frame, FrameReader, InputDecoder, ServerMessage, TermCaps,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot, watch};

use crate::tty_reader::{self, TtyRead, TtyReader};

/// A client of this server, numbered from 1 in the order they connected.
pub type ClientId = u64;

/// Bytes queued for a client past which it is behind: its frames are dropped until it has
/// read them (a few whole frames of a large terminal).
pub const BEHIND_AT: usize = 1 << 20;

/// How long a new connection may take to say what it is.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// A terminal attaching, as its hello described it.
#[derive(Debug, Clone)]
pub struct Hello {
    /// Its size.
    pub cols: u16,
    /// Its size.
    pub rows: u16,
    /// What it can show.
    pub caps: TermCaps,
    /// It only watches.
    pub read_only: bool,
}

/// What the connections tell the loop.
pub enum Incoming {
    /// A terminal attached.
    Attach {
        /// Which.
        id: ClientId,
        /// What it is.
        hello: Hello,
        /// Where its output goes.
        outbox: Outbox,
    },
    /// What a terminal reported: keys, the mouse, pastes, focus, resizes.
    Events {
        /// Which.
        id: ClientId,
        /// In order.
        events: Vec<Event>,
    },
    /// A terminal left (detached, closed, or sent what cannot be read).
    Gone {
        /// Which.
        id: ClientId,
        /// Why, for the log.
        why: String,
    },
    /// A client that was behind has read everything queued: draw it whole.
    Drained {
        /// Which.
        id: ClientId,
    },
    /// A control connection watches a session (every session without one): what it does
    /// goes to `events` until the connection or the session closes.
    Watch {
        /// The session's key.
        session: Option<u64>,
        /// Where the events go; an error ends the watch (no such session).
        events: WatchEvents,
    },
    /// A request of the control CLI, answered on `reply`.
    Control {
        /// What it asks.
        request: ControlRequest,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<serde_json::Value, String>>,
        /// Done once the answer is written.
        written: Finished,
    },
}

/// A watch's events, as the loop sends them to its connection.
pub type WatchEvents = mpsc::Sender<Result<march_wire::WatchEvent, String>>;

/// Events a watch may have queued and not yet written: a watcher that stops reading is
/// dropped past it, so it never holds the loop or its memory.
pub const WATCH_BEHIND_AT: usize = 4096;

/// Done when what was queued for a connection has been written (or it is gone): a
/// server that ends waits on it so its last words arrive.
pub struct Finished(watch::Receiver<bool>);

impl Finished {
    /// A pair: the side that says so, and this.
    fn channel() -> (watch::Sender<bool>, Finished) {
        let (tx, rx) = watch::channel(false);
        (tx, Finished(rx))
    }

    /// Whether it is done.
    pub fn is_done(&self) -> bool {
        *self.0.borrow() || self.0.has_changed().is_err()
    }

    /// Waits until it is done.
    pub async fn wait(mut self) {
        // An error means the sender is gone, which is done too.
        let _ = self.0.wait_for(|done| *done).await;
    }
}

/// Sends the loop's frames to one client without waiting on its socket.
pub struct Outbox {
    frames: mpsc::UnboundedSender<ServerMessage>,
    /// Bytes queued and not yet written.
    queued: Arc<AtomicUsize>,
    /// Output was dropped: the writer says when the queue is empty again.
    stalled: Arc<AtomicBool>,
    /// Done when the writer has ended.
    finished: Finished,
    /// The client's terminal, when the server writes it: output goes straight there while
    /// nothing is queued before it (a hop through the writer task fewer for every echo).
    terminal: Option<Arc<OwnedFd>>,
}

impl Outbox {
    /// Queues terminal output; `false` when the client is behind and it was dropped.
    pub fn output(&self, bytes: Vec<u8>) -> bool {
        let queued = self.queued.load(Ordering::SeqCst);
        if queued >= BEHIND_AT {
            self.stalled.store(true, Ordering::SeqCst);
            // The writer may have emptied the queue after the load and found no stall to
            // report; then nothing would ever say it drained, so take the stall back and send.
            if !(self.queued.load(Ordering::SeqCst) == 0
                && self.stalled.swap(false, Ordering::SeqCst))
            {
                return false;
            }
        }
        if queued == 0
            && let Some(terminal) = &self.terminal
        {
            // Whatever is not taken now (a full terminal, an error) goes to the writer,
            // which waits for room or reports the error.
            match rustix::io::write(terminal, &bytes) {
                Ok(n) if n == bytes.len() => return true,
                Ok(n) => return self.send_output(&bytes[n..]),
                Err(_) => {}
            }
        }
        self.send_output(&bytes)
    }

    /// Sends `bytes` as output frames of at most [`OUTPUT_FRAME`] bytes each (a frame with
    /// pictures can be larger than a frame may be).
    fn send_output(&self, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return self.send(ServerMessage::Output(Vec::new()));
        }
        bytes
            .chunks(OUTPUT_FRAME)
            .all(|chunk| self.send(ServerMessage::Output(chunk.to_vec())))
    }

    /// Queues the last message: the writer closes the connection after it (then the
    /// returned [`Finished`] is done).
    pub fn exit(self, why: &str) -> Finished {
        self.send(ServerMessage::Exit(why.to_string()));
        self.finished
    }

    fn send(&self, message: ServerMessage) -> bool {
        self.queued
            .fetch_add(queued_size(&message), Ordering::AcqRel);
        // A closed writer means the client is gone; the writer or reader says so.
        self.frames.send(message).is_ok()
    }
}

/// The most output bytes one frame carries, well under the wire's limit.
const OUTPUT_FRAME: usize = 1 << 20;

/// What `message` counts for in a client's queue: its output's bytes (the rest is small).
fn queued_size(message: &ServerMessage) -> usize {
    match message {
        ServerMessage::Output(bytes) => bytes.len(),
        _ => 1,
    }
}

#[cfg(test)]
impl Outbox {
    /// An outbox with no connection: what is queued stays in the receiver, as with a
    /// client that does not read.
    pub fn unread() -> (Outbox, mpsc::UnboundedReceiver<ServerMessage>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (_, finished) = Finished::channel();
        let outbox = Outbox {
            frames: tx,
            queued: Arc::new(AtomicUsize::new(0)),
            stalled: Arc::new(AtomicBool::new(false)),
            finished,
            terminal: None,
        };
        (outbox, rx)
    }

    /// The client has read everything queued; whether output had been dropped.
    pub fn read_all(&self) -> bool {
        self.queued.store(0, Ordering::Release);
        self.stalled.swap(false, Ordering::AcqRel)
    }
}

/// Serves connection `id` on `stream`: refused when its peer is another user; otherwise
/// whatever its first message asks.
pub async fn serve(
    id: ClientId,
    stream: UnixStream,
    workspace: String,
    incoming: mpsc::UnboundedSender<Incoming>,
) {
    let (mut read, mut write) = stream.into_split();
    let mut frames = FrameReader::default();
    let first =
        match tokio::time::timeout(HELLO_TIMEOUT, next_message(&mut read, &mut frames)).await {
            Ok(Ok(Some(message))) => message,
            Ok(Ok(None)) => return,
            Ok(Err(why)) => {
                tracing::warn!("client {id}: {why}");
                refuse(&mut write, &why).await;
                return;
            }
            Err(_) => {
                tracing::warn!("client {id} said nothing for {HELLO_TIMEOUT:?}: dropped");
                return;
            }
        };
    match first {
        ClientMessage::Hello {
            version,
            cols,
            rows,
            caps,
            read_only,
            tty,
        } => {
            if let Some(why) =
                march_wire::message::version_mismatch(version, march_wire::PROTOCOL_VERSION)
            {
                refuse(&mut write, &why).await;
                return;
            }
            let terminal = tty.as_deref().and_then(|path| open_terminal(id, path));
            let welcome = ServerMessage::Welcome {
                version: march_wire::PROTOCOL_VERSION,
                workspace,
                direct: terminal.is_some(),
            };
            if write
                .write_all(&welcome.into_frame().encode())
                .await
                .is_err()
            {
                return;
            }
            // Nothing is drawn before the client has set its terminal up: a frame written
            // before it enters the alternate screen would be lost.
            match tokio::time::timeout(HELLO_TIMEOUT, next_message(&mut read, &mut frames)).await {
                Ok(Ok(Some(ClientMessage::Ready))) => {}
                Ok(Ok(None)) => return,
                Ok(Ok(Some(other))) => {
                    tracing::warn!("client {id} sent {other:?} before it was ready; dropped");
                    return;
                }
                Ok(Err(why)) => {
                    tracing::warn!("client {id}: {why}; dropped");
                    return;
                }
                Err(_) => {
                    tracing::warn!("client {id} was not ready in {HELLO_TIMEOUT:?}; dropped");
                    return;
                }
            }
            let hello = Hello {
                cols,
                rows,
                caps,
                read_only,
            };
            let output = Output {
                write,
                terminal: terminal.map(Arc::new),
            };
            attach(id, hello, read, output, frames, incoming).await;
        }
        ClientMessage::Control { version, request } => {
            if let Some(why) =
                march_wire::message::version_mismatch(version, march_wire::CONTROL_VERSION)
            {
                reply(&mut write, Err(why)).await;
                return;
            }
            if let ControlRequest::Watch { session } = request {
                watch(session, read, write, incoming).await;
                return;
            }
            let (tx, rx) = oneshot::channel();
            let (written_tx, written) = Finished::channel();
            let asked = Incoming::Control {
                request,
                reply: tx,
                written,
            };
            let answer = match incoming.send(asked) {
                Ok(()) => rx
                    .await
                    .unwrap_or_else(|_| Err("the workspace is closing".to_string())),
                Err(_) => Err("the workspace is closing".to_string()),
            };
            reply(&mut write, answer).await;
            let _ = written_tx.send(true);
        }
        ClientMessage::Input { .. }
        | ClientMessage::Resize { .. }
        | ClientMessage::Ready
        | ClientMessage::Detach => {
            refuse(&mut write, "a connection starts with a hello").await;
        }
    }
}

/// Opens the client's terminal at `path` to write its output; `None` (the output goes
/// through the socket) when it is not a terminal device this user may write.
fn open_terminal(id: ClientId, path: &str) -> Option<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    // A terminal device and nothing else is opened, and never as this process's
    // controlling terminal; writes never block the loop's thread.
    if !path.starts_with("/dev/") {
        tracing::warn!("client {id} named {path} as its terminal: not a device; ignored");
        return None;
    }
    let flags = OFlags::RDWR | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let opened = rustix::fs::open(path, flags, Mode::empty())
        .map_err(io::Error::from)
        .and_then(|fd| {
            if rustix::termios::isatty(&fd) {
                Ok(fd)
            } else {
                Err(io::Error::other("not a terminal"))
            }
        });
    match opened {
        Ok(fd) => Some(fd),
        Err(e) => {
            tracing::info!("client {id}: {path} cannot be written ({e}); output goes through it");
            None
        }
    }
}

/// Where a client's messages go: the connection, and its terminal when the server writes
/// that itself.
struct Output {
    write: OwnedWriteHalf,
    /// Non-blocking, and watched for room only while it is full: a terminal watched for
    /// room wakes the loop every time it is read.
    terminal: Option<Arc<OwnedFd>>,
}

impl Output {
    /// Sends `message`: terminal output to the terminal when it is open, the rest (and all
    /// of it otherwise) on the connection, in the order queued.
    async fn send(&mut self, message: ServerMessage) -> io::Result<()> {
        match (message, &self.terminal) {
            (ServerMessage::Output(bytes), Some(terminal)) => {
                crate::nonblocking::write_all(terminal, &bytes).await
            }
            (message, _) => self.write.write_all(&message.into_frame().encode()).await,
        }
    }
}

/// The attached terminal's life: its writer and its reader, until either ends.
async fn attach(
    id: ClientId,
    hello: Hello,
    mut read: OwnedReadHalf,
    output: Output,
    mut frames: FrameReader,
    incoming: mpsc::UnboundedSender<Incoming>,
) {
    let reader = output
        .terminal
        .as_deref()
        .map(|fd| fd.try_clone().and_then(TtyReader::new));
    let mut tty = match reader {
        Some(Ok(reader)) => Some(reader),
        Some(Err(e)) => {
            tracing::warn!("client {id}: its terminal cannot be watched ({e}); dropped");
            return;
        }
        None => None,
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let (finished_tx, finished) = Finished::channel();
    let mut closed = finished_tx.subscribe();
    let outbox = Outbox {
        frames: tx,
        queued: Arc::new(AtomicUsize::new(0)),
        stalled: Arc::new(AtomicBool::new(false)),
        finished,
        terminal: output.terminal.clone(),
    };
    let (queued, stalled) = (outbox.queued.clone(), outbox.stalled.clone());
    if incoming
        .send(Incoming::Attach { id, hello, outbox })
        .is_err()
    {
        return;
    }
    let drained = incoming.clone();
    tokio::spawn(async move {
        write_frames(id, output, rx, queued, stalled, drained).await;
        let _ = finished_tx.send(true);
    });
    // The terminal's bytes become events here, read from it directly when the server opened
    // it (as tmux's server does: the client is then not on a keystroke's way), else as the
    // client forwards them.
    let mut input = InputDecoder::default();
    let why = loop {
        tokio::select! {
            // The loop ended this client (its outbox dropped, the last frame written).
            _ = closed.wait_for(|done| *done) => return,
            read = tty_reader::read_if(&mut tty) => match read {
                Ok(TtyRead::Bytes { bytes, partial }) => {
                    let events = input.decode(bytes, partial);
                    if !events.is_empty() && incoming.send(Incoming::Events { id, events }).is_err() {
                        return;
                    }
                }
                Ok(TtyRead::Ended) => break "its terminal hung up".to_string(),
                Err(e) => break format!("reading its terminal failed ({e})"),
            },
            message = next_message(&mut read, &mut frames) => match message {
                Ok(Some(ClientMessage::Input { bytes, partial })) => {
                    let events = input.decode(&bytes, partial);
                    if !events.is_empty() && incoming.send(Incoming::Events { id, events }).is_err() {
                        return;
                    }
                }
                Ok(Some(ClientMessage::Resize { cols, rows })) => {
                    let events = vec![Event::Resize(cols, rows)];
                    if incoming.send(Incoming::Events { id, events }).is_err() {
                        return;
                    }
                }
                Ok(Some(ClientMessage::Detach)) => break "detached".to_string(),
                Ok(Some(ClientMessage::Ready)) => {}
                Ok(Some(_)) => break "sent a second hello".to_string(),
                Ok(None) => break "closed its connection".to_string(),
                Err(why) => {
                    tracing::warn!("client {id}: {why}; dropped");
                    break why;
                }
            },
        }
    };
    let _ = incoming.send(Incoming::Gone { id, why });
}

/// Writes queued messages until the outbox is dropped, then closes the connection.
async fn write_frames(
    id: ClientId,
    mut output: Output,
    mut rx: mpsc::UnboundedReceiver<ServerMessage>,
    queued: Arc<AtomicUsize>,
    stalled: Arc<AtomicBool>,
    incoming: mpsc::UnboundedSender<Incoming>,
) {
    while let Some(message) = rx.recv().await {
        let size = queued_size(&message);
        if let Err(e) = output.send(message).await {
            // The reader may wait on a connection still open (its terminal is what failed).
            let why = format!("writing to it failed ({e})");
            tracing::info!("client {id}: {why}; it is gone");
            let _ = incoming.send(Incoming::Gone { id, why });
            return;
        }
        // Sequentially consistent with `Outbox::output`'s stall and its second look.
        let left = queued.fetch_sub(size, Ordering::SeqCst) - size;
        if left == 0 && stalled.swap(false, Ordering::SeqCst) {
            let _ = incoming.send(Incoming::Drained { id });
        }
    }
    let _ = output.write.shutdown().await;
}

/// The next message from the client; `None` when it closed the connection.
async fn next_message(
    read: &mut OwnedReadHalf,
    frames: &mut FrameReader,
) -> Result<Option<ClientMessage>, String> {
    let mut buf = [0u8; 16 << 10];
    loop {
        match frames.next_frame() {
            Ok(Some(frame)) => {
                return ClientMessage::from_frame(frame)
                    .map(Some)
                    .map_err(|e| e.to_string());
            }
            Ok(None) => {}
            Err(e) => return Err(e.to_string()),
        }
        match read.read(&mut buf).await {
            Ok(0) if frames.pending() > 0 => {
                return Err("the connection closed in the middle of a message".to_string());
            }
            Ok(0) => return Ok(None),
            Ok(n) => frames.push(&buf[..n]),
            Err(e) => return Err(format!("read failed: {e}")),
        }
    }
}

/// Writes what the loop says session `session` does as replies, until the client closes
/// the connection or the loop ends the watch.
async fn watch(
    session: Option<u64>,
    mut read: OwnedReadHalf,
    mut write: OwnedWriteHalf,
    incoming: mpsc::UnboundedSender<Incoming>,
) {
    let (events, mut rx) = mpsc::channel(WATCH_BEHIND_AT);
    if incoming.send(Incoming::Watch { session, events }).is_err() {
        reply(&mut write, Err("the workspace is closing".to_string())).await;
        return;
    }
    let mut buf = [0u8; 1024];
    loop {
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                let failed = event.is_err();
                let frame = ServerMessage::Reply(event.and_then(|e| {
                    serde_json::to_value(e).map_err(|e| e.to_string())
                }))
                .to_frame();
                if write.write_all(&frame.encode()).await.is_err() || failed {
                    break;
                }
            }
            // The watcher sends nothing more: a read that ends or fails is it leaving.
            read = read.read(&mut buf) => {
                if !matches!(read, Ok(n) if n > 0) {
                    return;
                }
            }
        }
    }
    let _ = write.shutdown().await;
}

async fn refuse(write: &mut OwnedWriteHalf, why: &str) {
    send_now(write, &ServerMessage::Refused(why.to_string()).to_frame()).await;
}

async fn reply(write: &mut OwnedWriteHalf, answer: Result<serde_json::Value, String>) {
    send_now(write, &ServerMessage::Reply(answer).to_frame()).await;
}

async fn send_now(write: &mut OwnedWriteHalf, frame: &Frame) {
    let _ = write.write_all(&frame.encode()).await;
    let _ = write.shutdown().await;
}
