//! The control connection for async programs (the `workspace` tool, the gateway): one
//! request and its answer, or a watch and the events that answer it until either side
//! closes. docs/CONTROL.md describes the messages.

use std::path::Path;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

use crate::{
    CONTROL_VERSION, ClientMessage, ControlRequest, FrameReader, ServerMessage, WatchEvent,
};

/// Why a control request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// No workspace server listens there.
    #[error("cannot reach the workspace at {path}: {source}")]
    Connect {
        /// The socket.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The connection failed or closed before the answer.
    #[error("the workspace did not answer: {0}")]
    Lost(String),
    /// The workspace answered something that is not a control answer.
    #[error("the workspace answered garbage: {0}")]
    Garbage(String),
    /// The workspace refused, and why (a session that does not exist…).
    #[error("{0}")]
    Refused(String),
}

/// A connection that sent one request and reads its answers.
struct Connection {
    stream: UnixStream,
    frames: FrameReader,
}

impl Connection {
    async fn open(socket: &Path, request: ControlRequest) -> Result<Connection, ControlError> {
        let mut stream =
            UnixStream::connect(socket)
                .await
                .map_err(|source| ControlError::Connect {
                    path: socket.display().to_string(),
                    source,
                })?;
        let message = ClientMessage::Control {
            version: CONTROL_VERSION,
            request,
        };
        stream
            .write_all(&message.to_frame().encode())
            .await
            .map_err(|e| ControlError::Lost(e.to_string()))?;
        Ok(Connection {
            stream,
            frames: FrameReader::default(),
        })
    }

    /// The next answer; `None` when the server closed the connection between answers.
    async fn next(&mut self) -> Result<Option<Value>, ControlError> {
        let mut buf = [0u8; 16 << 10];
        loop {
            let frame = self
                .frames
                .next_frame()
                .map_err(|e| ControlError::Garbage(e.to_string()))?;
            if let Some(frame) = frame {
                return match ServerMessage::from_frame(frame) {
                    Ok(ServerMessage::Reply(Ok(value))) => Ok(Some(value)),
                    Ok(ServerMessage::Reply(Err(why)) | ServerMessage::Refused(why)) => {
                        Err(ControlError::Refused(why))
                    }
                    Ok(other) => Err(ControlError::Garbage(format!("{other:?}"))),
                    Err(e) => Err(ControlError::Garbage(e.to_string())),
                };
            }
            let n = self
                .stream
                .read(&mut buf)
                .await
                .map_err(|e| ControlError::Lost(e.to_string()))?;
            if n == 0 {
                if self.frames.pending() > 0 {
                    return Err(ControlError::Lost("the answer was cut short".into()));
                }
                return Ok(None);
            }
            self.frames.push(&buf[..n]);
        }
    }
}

/// Sends `request` to the workspace server at `socket` and returns its answer.
pub async fn ask(socket: &Path, request: ControlRequest) -> Result<Value, ControlError> {
    let mut connection = Connection::open(socket, request).await?;
    connection.next().await?.ok_or_else(|| {
        ControlError::Lost("the workspace closed the connection without answering".into())
    })
}

/// A watch on a workspace's sessions ([`ControlRequest::Watch`]).
pub struct Watch(Connection);

impl Watch {
    /// Starts watching session `session` (every session when `None`) of the workspace at
    /// `socket`. The first events say what each watched session wants now.
    pub async fn start(socket: &Path, session: Option<u64>) -> Result<Watch, ControlError> {
        Ok(Watch(
            Connection::open(socket, ControlRequest::Watch { session }).await?,
        ))
    }

    /// The next event; `None` once the workspace ended the watch (it closes, or the watched
    /// session did).
    pub async fn next(&mut self) -> Result<Option<WatchEvent>, ControlError> {
        match self.0.next().await? {
            None => Ok(None),
            Some(value) => serde_json::from_value(value)
                .map(Some)
                .map_err(|e| ControlError::Garbage(e.to_string())),
        }
    }
}
