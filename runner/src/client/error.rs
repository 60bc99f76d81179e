//! Errors of the Runner Process Client.

use std::io;
use std::time::Duration;

use super::process::RunnerExit;

/// Why a runner call or start failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The runner command could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: io::Error,
    },
    /// The runner did not answer `initialize` in time.
    #[error("the runner did not answer initialize within {0:?}")]
    InitTimeout(Duration),
    /// The runner answered with a protocol version this client does not speak.
    #[error("the runner speaks ACP protocol version {0}; March speaks version 1")]
    ProtocolVersion(String),
    /// The connection ended before an answer arrived (the runner exited or hung up).
    #[error("the runner closed the connection")]
    Disconnected,
    /// The runner process ended.
    #[error("the runner {exit}{}", tail_suffix(.stderr_tail))]
    Exited {
        /// How it ended.
        exit: RunnerExit,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// The agent did not advertise this method in `initialize`.
    #[error("the runner does not support {0}")]
    Unsupported(&'static str),
    /// The agent answered with a JSON-RPC error (or the SDK failed locally).
    #[error("{}", describe_rpc(.0))]
    Rpc(agent_client_protocol::Error),
    /// The supervisor stopped restarting a crashing runner.
    #[error("the runner kept crashing; gave up after {attempts} restarts: {reason}")]
    GaveUp {
        /// Consecutive restarts tried.
        attempts: u32,
        /// The last failure.
        reason: String,
    },
    /// The supervised runner was shut down.
    #[error("the runner was shut down")]
    ShutDown,
}

impl ClientError {
    /// Classifies an SDK error: a closed connection, or an error answer.
    pub(crate) fn from_rpc(error: agent_client_protocol::Error) -> Self {
        if agent_client_protocol::is_incoming_transport_closed(&error)
            || agent_client_protocol::is_connection_terminated(&error)
        {
            ClientError::Disconnected
        } else {
            ClientError::Rpc(error)
        }
    }

    /// The JSON-RPC error code, for an error answer.
    pub fn rpc_code(&self) -> Option<i32> {
        match self {
            ClientError::Rpc(error) => Some(error.code.value()),
            _ => None,
        }
    }

    /// Whether the runner went away (so a restarted runner may succeed).
    pub fn is_disconnect(&self) -> bool {
        matches!(self, ClientError::Disconnected | ClientError::Exited { .. })
    }
}

fn tail_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{tail}")
    }
}

/// The error's message, with its data when that adds something readable.
fn describe_rpc(error: &agent_client_protocol::Error) -> String {
    match &error.data {
        None | Some(serde_json::Value::Null) => error.message.clone(),
        Some(serde_json::Value::String(data)) if data.is_empty() || *data == error.message => {
            error.message.clone()
        }
        Some(serde_json::Value::String(data)) => format!("{}: {data}", error.message),
        Some(data) => format!("{}: {data}", error.message),
    }
}
