//! The runner's way back to the client for one session: updates and permission requests.
//! A trait so the gate and the update flow can be tested without a connection.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification,
    SessionUpdate,
};
use agent_client_protocol::{Client, Error};
use async_trait::async_trait;

/// Sends one session's updates and requests to the client.
#[async_trait]
pub(crate) trait ClientPort: Send + Sync {
    /// The session this port speaks for.
    fn session_id(&self) -> SessionId;

    /// Send a `session/update` (in order with everything else sent through this port).
    fn notify(&self, update: SessionUpdate);

    /// Tell the client what waits in the running turn now (`_march/session/queue_changed`).
    fn queue_changed(&self, queued: Vec<crate::steering::QueuedMessage>) {
        let _ = queued;
    }

    /// Ask the client; dropping the future withdraws the request (`$/cancel_request`).
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionOutcome, Error>;
}

/// The port over a real ACP connection.
pub(crate) struct AcpPort {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
}

impl AcpPort {
    /// A port for `session_id` on the connection `cx`.
    pub(crate) fn new(cx: ConnectionTo<Client>, session_id: impl Into<SessionId>) -> Self {
        AcpPort {
            cx,
            session_id: session_id.into(),
        }
    }
}

#[async_trait]
impl ClientPort for AcpPort {
    fn session_id(&self) -> SessionId {
        self.session_id.clone()
    }

    fn notify(&self, update: SessionUpdate) {
        let note = SessionNotification::new(self.session_id.clone(), update);
        if let Err(e) = self.cx.send_notification(note) {
            // Only fails once the connection is gone; the transcript is on disk regardless.
            tracing::debug!(session = %self.session_id, "session/update not sent: {e}");
        }
    }

    fn queue_changed(&self, queued: Vec<crate::steering::QueuedMessage>) {
        let note = crate::steering::QueueChangedNotification {
            session_id: self.session_id.0.to_string(),
            queued,
        };
        if let Err(e) = self.cx.send_notification(note) {
            tracing::debug!(session = %self.session_id, "queue change not sent: {e}");
        }
    }

    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionOutcome, Error> {
        Ok(self.cx.send_request(request).block_task().await?.outcome)
    }
}
