//! The editor as the sessions and the editor tools write to it, and where
//! ag-acp finds its sibling binaries.

use std::path::PathBuf;

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

/// `ag-NAME` beside this executable, else on `PATH`.
pub fn sibling(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}
