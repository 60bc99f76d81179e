//! The wire between March's workspace server and its clients (issue 17): how messages are
//! framed on the Unix socket, what they say in this protocol version, and where the socket
//! lives and who may use it.
//!
//! Nothing here runs a server or draws: the app's server and client use it. Keeping it
//! apart keeps the boundary small and testable, as the ACP boundary is in the runner.

pub mod control;
pub mod frame;
pub mod input;
pub mod message;
pub mod rendezvous;

pub use frame::{Frame, FrameReader, MAX_FRAME};
pub use input::InputDecoder;
pub use message::{
    CONTROL_VERSION, ClientMessage, ControlRequest, PROTOCOL_VERSION, ServerMessage, SessionStatus,
    TermCaps, WatchEvent, WorkspaceInfo,
};

/// Why a message on the socket cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    /// A frame says it is longer than any March sends.
    #[error("a frame of {0} bytes, over the {MAX_FRAME}-byte limit")]
    TooLarge(usize),
    /// A frame with no kind byte.
    #[error("an empty frame")]
    Empty,
    /// A kind this version does not know.
    #[error("unknown message kind {0}")]
    UnknownKind(u8),
    /// A message whose body does not parse.
    #[error("malformed {kind} message: {why}")]
    Malformed {
        /// Which message.
        kind: &'static str,
        /// What was wrong.
        why: String,
    },
}
