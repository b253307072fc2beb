//! The editor as the sessions and the editor tools write to it.
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionNotification, SessionUpdate};

use super::transport::Outbox;

/// The editor, as a session writes to it.
#[derive(Clone)]
pub struct Peer {
    /// The connection.
    pub cx: ConnectionTo<Client>,
    /// What waits to be written.
    pub outbox: Outbox,
}

impl Peer {
    /// Sends one update of a session; false when the editor is gone.
    pub fn update(&self, session: &str, update: SessionUpdate) -> bool {
        self.outbox.add();
        self.cx
            .send_notification(SessionNotification::new(session.to_string(), update))
            .is_ok()
    }
}
