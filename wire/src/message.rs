//! The messages of this protocol version, each a [`Frame`] of its own kind. Terminal input
//! and output travel as the bytes they are (the server parses input, see
//! [`crate::input`], so a keystroke costs the client one read and one write, as tmux's
//! does); the rest as JSON, so a field can be added without a new kind.

use serde::{Deserialize, Serialize};

use crate::{Frame, WireError};

/// The version of the client–server protocol this build speaks (terminals attaching).
pub const PROTOCOL_VERSION: u32 = 3;

/// The version of the control messages this build speaks: apart from
/// [`PROTOCOL_VERSION`], so scripts written against docs/CONTROL.md keep working when only
/// the terminals' messages change.
pub const CONTROL_VERSION: u32 = 2;

/// What the client's terminal can show and send, so the server draws for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermCaps {
    /// 24-bit colour.
    #[serde(default)]
    pub truecolor: bool,
    /// The kitty keyboard protocol.
    #[serde(default)]
    pub kitty_keyboard: bool,
    /// Clipboard writes through OSC 52.
    #[serde(default)]
    pub osc52: bool,
    /// An image protocol, by name (`kitty`, `sixel`, `iterm2`), as the terminal answered
    /// when asked.
    #[serde(default)]
    pub graphics: Option<String>,
    /// Its cell size in pixels (width, height), when it said.
    #[serde(default)]
    pub cell_pixels: Option<(u16, u16)>,
    /// Scroll regions (DECSTBM) work: a pane whose text only moved is moved by the
    /// terminal, and only its new rows are sent.
    #[serde(default)]
    pub scroll_regions: bool,
}

/// What a client says to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientMessage {
    /// The first message: who it is and what its terminal is.
    Hello {
        /// The protocol version it speaks.
        version: u32,
        /// Its terminal's size.
        cols: u16,
        /// Its terminal's size.
        rows: u16,
        /// What its terminal supports.
        caps: TermCaps,
        /// It watches only: its keys do nothing.
        read_only: bool,
        /// The path of its terminal (`/dev/pts/3`), which the server may open and write
        /// itself, as tmux does: the output then skips a hop through the client.
        tty: Option<String>,
    },
    /// Its terminal is set up (after the welcome): output may begin.
    Ready,
    /// Bytes read from its terminal (keys, the mouse, pastes, focus reports), as read, when
    /// the server does not read the terminal itself.
    Input {
        /// The bytes.
        bytes: Vec<u8>,
        /// The read filled the client's buffer: a sequence may go on in the next message.
        partial: bool,
    },
    /// Its terminal's new size.
    Resize {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// The client leaves; the workspace goes on.
    Detach,
    /// A request of the control CLI instead of a terminal (the first and only message of
    /// its connection, answered by one [`ServerMessage::Reply`]).
    Control {
        /// The control version it speaks ([`CONTROL_VERSION`]).
        version: u32,
        /// What it asks.
        request: ControlRequest,
    },
}

/// What the control CLI asks a workspace server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum ControlRequest {
    /// What the workspace is ([`WorkspaceInfo`]): `march ls`, and finding the workspace of
    /// some directories.
    Info,
    /// End the workspace, its turns and shells; refused while turns run unless `force`.
    Kill {
        /// End it even while turns run.
        #[serde(default)]
        force: bool,
    },
    /// Every session ([`SessionStatus`]).
    Status,
    /// A prompt for session `session` (queued after the running turn, if one runs).
    Send {
        /// The session's key.
        session: u64,
        /// The prompt.
        text: String,
    },
    /// A new agent pane on `dir` (beside the focused pane of its tab, else in a new tab).
    NewPane {
        /// The project directory.
        dir: std::path::PathBuf,
        /// The agent from the config's `[agents]` (default: the workspace's).
        #[serde(default)]
        agent: Option<String>,
        /// A first prompt, sent once the session is open.
        #[serde(default)]
        prompt: Option<String>,
    },
    /// Session `session`'s transcript as markdown, its last `last` turns only when given.
    Capture {
        /// The session's key.
        session: u64,
        /// How many of the last turns.
        #[serde(default)]
        last: Option<usize>,
    },
    /// Answered when session `session`'s running turn ends (at once when none runs).
    Wait {
        /// The session's key.
        session: u64,
    },
    /// Answers session `session`'s open permission request.
    Answer {
        /// The session's key.
        session: u64,
        /// Allow it (once) or reject it.
        allow: bool,
    },
    /// What session `session` (every session without one) does from now on: answered by a
    /// [`ServerMessage::Reply`] per [`WatchEvent`] until the connection closes.
    Watch {
        /// The session's key; every session when absent.
        #[serde(default)]
        session: Option<u64>,
    },
}

impl ControlRequest {
    /// Whether answering it may change the workspace (a request that only reads does
    /// not make the workspace draw or save).
    pub fn changes_workspace(&self) -> bool {
        match self {
            ControlRequest::Info
            | ControlRequest::Status
            | ControlRequest::Capture { .. }
            | ControlRequest::Wait { .. }
            | ControlRequest::Watch { .. } => false,
            ControlRequest::Kill { .. }
            | ControlRequest::Send { .. }
            | ControlRequest::NewPane { .. }
            | ControlRequest::Answer { .. } => true,
        }
    }
}

/// What a watched session did (the answers to [`ControlRequest::Watch`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum WatchEvent {
    /// What the session wants now: sent for every watched session when the watch begins,
    /// then on each change.
    Attention {
        /// The session's key.
        session: u64,
        /// `idle`, `working`, `needs-you`, `done` or `error`, as in [`SessionStatus`].
        attention: String,
        /// Its title.
        title: String,
        /// The question it asks, while one waits.
        question: Option<String>,
    },
    /// A prompt went to the agent: a turn begins.
    TurnStart {
        /// The session's key.
        session: u64,
        /// The prompt.
        text: String,
    },
    /// Text of the agent's answer, as it streams.
    Text {
        /// The session's key.
        session: u64,
        /// The next piece.
        text: String,
    },
    /// The agent began a tool call.
    Tool {
        /// The session's key.
        session: u64,
        /// What the call does, as the tool describes it.
        title: String,
    },
    /// The agent asks permission; `march answer` (or [`ControlRequest::Answer`]) replies.
    Permission {
        /// The session's key.
        session: u64,
        /// What it asks to do.
        question: String,
    },
    /// The turn ended: its stop reason, or why it failed.
    TurnEnd {
        /// The session's key.
        session: u64,
        /// `end_turn`, `cancelled`, `max_tokens`…, when it ended normally.
        stop_reason: Option<String>,
        /// Why it failed, when it did.
        error: Option<String>,
    },
    /// The session was closed: nothing more comes from it.
    Closed {
        /// The session's key.
        session: u64,
    },
}

impl WatchEvent {
    /// The session it is about.
    pub fn session(&self) -> u64 {
        match self {
            WatchEvent::Attention { session, .. }
            | WatchEvent::TurnStart { session, .. }
            | WatchEvent::Text { session, .. }
            | WatchEvent::Tool { session, .. }
            | WatchEvent::Permission { session, .. }
            | WatchEvent::TurnEnd { session, .. }
            | WatchEvent::Closed { session } => *session,
        }
    }
}

/// One session as `march status --json` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// The workspace it is in.
    pub workspace: String,
    /// How commands name it: `WORKSPACE:KEY`.
    pub target: String,
    /// Its number in the workspace, for the life of the server.
    pub key: u64,
    /// The agent's session id, once the session is open.
    pub session_id: Option<String>,
    /// Its project directory.
    pub project: std::path::PathBuf,
    /// Its title.
    pub title: String,
    /// What it wants: `idle`, `working`, `needs-you`, `done` or `error`.
    pub attention: String,
    /// The question it asks, while one waits.
    pub question: Option<String>,
    /// The model, as the agent names it.
    pub model: Option<String>,
    /// Tokens in its context, from the last usage update.
    pub tokens: Option<u64>,
    /// Its context window.
    pub context_size: Option<u64>,
    /// Its cost so far, in `currency`.
    pub cost: Option<f64>,
    /// The cost's currency.
    pub currency: Option<String>,
    /// Whether a pane shows it.
    pub shown: bool,
}

/// One workspace as `march ls --json` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceInfo {
    /// Its name (`march attach -t NAME`).
    pub name: String,
    /// The project directories it was opened on.
    pub dirs: Vec<std::path::PathBuf>,
    /// The server's process id.
    pub pid: u32,
    /// Terminals attached now.
    pub clients: usize,
    /// Agent sessions in its panes.
    pub sessions: usize,
    /// Of them, those running a turn.
    pub working: usize,
    /// Of them, those waiting for the user (a permission asked, a failure unseen).
    pub needs_you: usize,
    /// When the server started, in seconds since the Unix epoch.
    pub started: u64,
    /// When a client last attached or typed, in milliseconds since the Unix epoch (the
    /// most recent workspace is the one `march attach` picks).
    pub last_active: u64,
}

/// What the server says to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMessage {
    /// The answer to a hello that is taken.
    Welcome {
        /// The protocol version it speaks.
        version: u32,
        /// The workspace attached to.
        workspace: String,
        /// The server writes and reads the client's terminal itself: no
        /// [`ServerMessage::Output`] comes, the client writes nothing until it ends and sends
        /// no [`ClientMessage::Input`] (only its size when it changes).
        direct: bool,
    },
    /// Bytes for the client's terminal.
    Output(Vec<u8>),
    /// The hello is refused, and why (shown to the user as it is).
    Refused(String),
    /// The server ends this client, and why (detached, the server stops).
    Exit(String),
    /// The answer to a [`ClientMessage::Control`]: a JSON value, or what went wrong.
    Reply(Result<serde_json::Value, String>),
}

const HELLO: u8 = 1;
// 2 carried version 2's JSON events.
const DETACH: u8 = 4;
const CONTROL: u8 = 5;
const READY: u8 = 6;
const INPUT: u8 = 7;
const RESIZE: u8 = 8;
const WELCOME: u8 = 101;
const OUTPUT: u8 = 102;
const REFUSED: u8 = 103;
const EXIT: u8 = 104;
const REPLY: u8 = 105;

#[derive(Serialize, Deserialize)]
struct HelloBody {
    version: u32,
    cols: u16,
    rows: u16,
    #[serde(default)]
    caps: TermCaps,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    tty: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct ControlBody {
    version: u32,
    request: ControlRequest,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ReplyBody {
    Ok(serde_json::Value),
    Error(String),
}

#[derive(Serialize, Deserialize)]
struct WelcomeBody {
    version: u32,
    workspace: String,
    #[serde(default)]
    direct: bool,
}

fn json<T: Serialize>(kind: u8, body: &T) -> Frame {
    Frame {
        kind,
        // Plain data structs: serialising cannot fail.
        body: serde_json::to_vec(body).unwrap_or_default(),
    }
}

fn parse<'a, T: Deserialize<'a>>(kind: &'static str, body: &'a [u8]) -> Result<T, WireError> {
    serde_json::from_slice(body).map_err(|e| WireError::Malformed {
        kind,
        why: e.to_string(),
    })
}

fn malformed(kind: &'static str, why: &str) -> WireError {
    WireError::Malformed {
        kind,
        why: why.to_string(),
    }
}

fn text(kind: &'static str, body: Vec<u8>) -> Result<String, WireError> {
    String::from_utf8(body).map_err(|e| WireError::Malformed {
        kind,
        why: e.to_string(),
    })
}

impl ClientMessage {
    /// This message as a frame.
    pub fn to_frame(&self) -> Frame {
        match self {
            ClientMessage::Hello {
                version,
                cols,
                rows,
                caps,
                read_only,
                tty,
            } => json(
                HELLO,
                &HelloBody {
                    version: *version,
                    cols: *cols,
                    rows: *rows,
                    caps: caps.clone(),
                    read_only: *read_only,
                    tty: tty.clone(),
                },
            ),
            ClientMessage::Ready => Frame {
                kind: READY,
                body: Vec::new(),
            },
            ClientMessage::Input { bytes, partial } => {
                let mut body = Vec::with_capacity(bytes.len() + 1);
                body.push(u8::from(*partial));
                body.extend_from_slice(bytes);
                Frame { kind: INPUT, body }
            }
            ClientMessage::Resize { cols, rows } => {
                let mut body = cols.to_be_bytes().to_vec();
                body.extend_from_slice(&rows.to_be_bytes());
                Frame { kind: RESIZE, body }
            }
            ClientMessage::Detach => Frame {
                kind: DETACH,
                body: Vec::new(),
            },
            ClientMessage::Control { version, request } => json(
                CONTROL,
                &ControlBody {
                    version: *version,
                    request: request.clone(),
                },
            ),
        }
    }

    /// The message `frame` carries.
    pub fn from_frame(frame: Frame) -> Result<ClientMessage, WireError> {
        Ok(match frame.kind {
            HELLO => {
                let h: HelloBody = parse("hello", &frame.body)?;
                ClientMessage::Hello {
                    version: h.version,
                    cols: h.cols,
                    rows: h.rows,
                    caps: h.caps,
                    read_only: h.read_only,
                    tty: h.tty,
                }
            }
            READY => ClientMessage::Ready,
            INPUT => match frame.body.split_first() {
                Some((&partial @ (0 | 1), bytes)) => ClientMessage::Input {
                    bytes: bytes.to_vec(),
                    partial: partial == 1,
                },
                _ => return Err(malformed("input", "no partial flag (0 or 1) first")),
            },
            RESIZE => match frame.body[..] {
                [c0, c1, r0, r1] => ClientMessage::Resize {
                    cols: u16::from_be_bytes([c0, c1]),
                    rows: u16::from_be_bytes([r0, r1]),
                },
                _ => return Err(malformed("resize", "not 4 bytes (columns and rows)")),
            },
            DETACH => ClientMessage::Detach,
            CONTROL => {
                let c: ControlBody = parse("control", &frame.body)?;
                ClientMessage::Control {
                    version: c.version,
                    request: c.request,
                }
            }
            other => return Err(WireError::UnknownKind(other)),
        })
    }
}

impl ServerMessage {
    /// This message as a frame.
    pub fn to_frame(&self) -> Frame {
        self.clone().into_frame()
    }

    /// This message as a frame, without copying terminal output.
    pub fn into_frame(self) -> Frame {
        match self {
            ServerMessage::Welcome {
                version,
                workspace,
                direct,
            } => json(
                WELCOME,
                &WelcomeBody {
                    version,
                    workspace,
                    direct,
                },
            ),
            ServerMessage::Output(bytes) => Frame {
                kind: OUTPUT,
                body: bytes,
            },
            ServerMessage::Refused(why) => Frame {
                kind: REFUSED,
                body: why.into_bytes(),
            },
            ServerMessage::Exit(why) => Frame {
                kind: EXIT,
                body: why.into_bytes(),
            },
            ServerMessage::Reply(reply) => json(
                REPLY,
                &match reply {
                    Ok(value) => ReplyBody::Ok(value),
                    Err(why) => ReplyBody::Error(why),
                },
            ),
        }
    }

    /// The message `frame` carries.
    pub fn from_frame(frame: Frame) -> Result<ServerMessage, WireError> {
        Ok(match frame.kind {
            WELCOME => {
                let w: WelcomeBody = parse("welcome", &frame.body)?;
                ServerMessage::Welcome {
                    version: w.version,
                    workspace: w.workspace,
                    direct: w.direct,
                }
            }
            OUTPUT => ServerMessage::Output(frame.body),
            REFUSED => ServerMessage::Refused(text("refused", frame.body)?),
            EXIT => ServerMessage::Exit(text("exit", frame.body)?),
            REPLY => ServerMessage::Reply(match parse("reply", &frame.body)? {
                ReplyBody::Ok(value) => Ok(value),
                ReplyBody::Error(why) => Err(why),
            }),
            other => return Err(WireError::UnknownKind(other)),
        })
    }
}

/// What to tell a user whose client speaks version `client` to a server speaking `server`:
/// plainly, with the way out. `None` when they agree.
pub fn version_mismatch(client: u32, server: u32) -> Option<String> {
    (client != server).then(|| {
        format!(
            "this march speaks workspace protocol {client} and the running server {server} \
             (one of them is from another build): use the march that started the server, or \
             end it with `march kill-server` (its turns and shells end) and run march again"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_comes_back_as_it_went() {
        let client = [
            ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                cols: 200,
                rows: 50,
                caps: TermCaps {
                    truecolor: true,
                    kitty_keyboard: true,
                    osc52: false,
                    graphics: Some("kitty".into()),
                    cell_pixels: Some((9, 18)),
                    scroll_regions: true,
                },
                read_only: true,
                tty: Some("/dev/pts/3".into()),
            },
            ClientMessage::Ready,
            ClientMessage::Input {
                bytes: b"\x01\x1b[200~two\nlines\x1b[201~\xff".to_vec(),
                partial: false,
            },
            ClientMessage::Input {
                bytes: Vec::new(),
                partial: true,
            },
            ClientMessage::Resize {
                cols: 300,
                rows: 24,
            },
            ClientMessage::Detach,
            ClientMessage::Control {
                version: CONTROL_VERSION,
                request: ControlRequest::Kill { force: true },
            },
            ClientMessage::Control {
                version: CONTROL_VERSION,
                request: ControlRequest::Info,
            },
            ClientMessage::Control {
                version: CONTROL_VERSION,
                request: ControlRequest::NewPane {
                    dir: "/src/api".into(),
                    agent: None,
                    prompt: Some("hi".into()),
                },
            },
            ClientMessage::Control {
                version: CONTROL_VERSION,
                request: ControlRequest::Capture {
                    session: 3,
                    last: Some(1),
                },
            },
        ];
        for m in client {
            assert_eq!(ClientMessage::from_frame(m.to_frame()), Ok(m));
        }
        let server = [
            ServerMessage::Welcome {
                version: PROTOCOL_VERSION,
                workspace: "api".into(),
                direct: true,
            },
            ServerMessage::Output(b"\x1b[2J\xe2\x94\x80".to_vec()),
            ServerMessage::Refused("no".into()),
            ServerMessage::Exit("detached".into()),
            ServerMessage::Reply(Ok(serde_json::json!({"name": "api"}))),
            ServerMessage::Reply(Err("turns are running".into())),
        ];
        for m in server {
            assert_eq!(ServerMessage::from_frame(m.to_frame()), Ok(m));
        }
    }

    #[test]
    fn bad_messages_say_what_is_wrong() {
        let bad_hello = Frame {
            kind: HELLO,
            body: b"{\"version\": \"one\"}".to_vec(),
        };
        assert!(matches!(
            ClientMessage::from_frame(bad_hello),
            Err(WireError::Malformed { kind: "hello", .. })
        ));
        let unknown_command = Frame {
            kind: CONTROL,
            body: br#"{"version": 1, "request": {"command": "teleport"}}"#.to_vec(),
        };
        assert!(matches!(
            ClientMessage::from_frame(unknown_command),
            Err(WireError::Malformed {
                kind: "control",
                ..
            })
        ));
        for (kind, body) in [
            (INPUT, &b""[..]),
            (INPUT, b"\x02a"),
            (RESIZE, b"\x00\x50\x00"),
        ] {
            let frame = Frame {
                kind,
                body: body.to_vec(),
            };
            assert!(matches!(
                ClientMessage::from_frame(frame),
                Err(WireError::Malformed { .. })
            ));
        }
        let unknown = Frame {
            kind: 99,
            body: Vec::new(),
        };
        assert_eq!(
            ClientMessage::from_frame(unknown),
            Err(WireError::UnknownKind(99))
        );
        let not_utf8 = Frame {
            kind: REFUSED,
            body: vec![0xff, 0xfe],
        };
        assert!(ServerMessage::from_frame(not_utf8).is_err());
        // A hello from a later client with fields this one does not know is still read.
        let later = Frame {
            kind: HELLO,
            body: br#"{"version": 2, "cols": 1, "rows": 1, "colour_space": "p3"}"#.to_vec(),
        };
        assert!(matches!(
            ClientMessage::from_frame(later),
            Ok(ClientMessage::Hello { version: 2, .. })
        ));
    }

    #[test]
    fn the_documented_control_message_is_what_this_version_reads() {
        // docs/CONTROL.md is what other programs write against: its example must be a
        // request of this version, in the frame kinds it names.
        let doc = include_str!("../../docs/CONTROL.md");
        let start = doc
            .find("`{\"version\":")
            .expect("docs/CONTROL.md shows a control message")
            + 1;
        let example = &doc[start..start + doc[start..].find('`').unwrap()];
        let frame = Frame {
            kind: CONTROL,
            body: example.as_bytes().to_vec(),
        };
        assert_eq!(
            ClientMessage::from_frame(frame),
            Ok(ClientMessage::Control {
                version: CONTROL_VERSION,
                request: ControlRequest::Status,
            }),
            "docs/CONTROL.md's example `{example}` is not a status request of control version \
             {CONTROL_VERSION}"
        );
        assert!(
            doc.contains(&format!("one frame of kind {CONTROL} ")),
            "{doc}"
        );
        assert!(
            doc.contains(&format!("one frame of kind {REPLY}:")),
            "{doc}"
        );
    }

    #[test]
    fn a_version_mismatch_names_the_way_out() {
        assert_eq!(version_mismatch(1, 1), None);
        let said = version_mismatch(1, 2).unwrap();
        assert!(
            said.contains("protocol 1") && said.contains("server 2"),
            "{said}"
        );
        assert!(said.contains("march kill-server"), "{said}");
    }
}
