//! The lines between a tool (ag-lsp, ag-write, ag-edit, ag-patch) and the
//! warm host that keeps the language servers (`host.rs`), over
//! `proc::warm`. Both ends are this library, built together, so these are
//! not part of the published protocol; what reaches a result is
//! ([`crate::protocol::ChangeDiagnostics`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::servers::Server;
use crate::protocol::FileDiagnostics;

/// One request: jobs, done at once, and how long the caller waits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// Milliseconds the caller waits for the answers; a job not done by
    /// then goes on, and a change's diagnostics come with a later reply.
    pub wait_ms: u64,
    /// The work.
    pub jobs: Vec<Job>,
}

/// One job for one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// The server, as the caller's table has it.
    pub server: Server,
    /// The project root it is started in.
    pub root: PathBuf,
    /// The directory it may write (its cache).
    pub cache: PathBuf,
    /// What to do.
    pub work: Work,
}

/// Where in a file: a position, or a name to find.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum At {
    /// A line and column, both from 1, the column in characters.
    Position {
        /// The line.
        line: u32,
        /// The column.
        column: u32,
    },
    /// A symbol's name (`speak`, `Dog.speak`), on or nearest to `line`
    /// when given, else where the file declares it.
    Name {
        /// The name.
        name: String,
        /// The line it is on, or near.
        line: Option<u32>,
    },
}

/// The work of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Work {
    /// A file was changed: its text before (`None`: it is new); the text
    /// now is on disk. Answers with the errors the change brought in.
    Changed {
        /// The file.
        file: PathBuf,
        /// How the caller shows it.
        shown: String,
        /// Its text before.
        before: Option<String>,
    },
    /// A file's diagnostics as it is on disk.
    Diagnostics {
        /// The file.
        file: PathBuf,
        /// How the caller shows it.
        shown: String,
    },
    /// Where the symbol at a place is defined.
    Definition {
        /// The file.
        file: PathBuf,
        /// The place.
        at: At,
    },
    /// Where the symbol at a place is used, its declaration included.
    References {
        /// The file.
        file: PathBuf,
        /// The place.
        at: At,
    },
    /// What the server says of the symbol at a place.
    Hover {
        /// The file.
        file: PathBuf,
        /// The place.
        at: At,
    },
    /// A file's outline.
    DocumentSymbols {
        /// The file.
        file: PathBuf,
    },
    /// The workspace's symbols whose name matches.
    WorkspaceSymbols {
        /// What to look for.
        query: String,
    },
}

/// The host's answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// One answer per job, in order.
    pub answers: Vec<Answer>,
    /// Diagnostics of earlier changes that came after their reply.
    #[serde(default)]
    pub late: Vec<FileDiagnostics>,
}

/// A place in a file, as a result shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub column: u32,
    /// The line's text, trimmed.
    pub text: String,
}

/// A symbol, as a result shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Its kind (`class`, `method`, ...).
    pub kind: String,
    /// What it is declared in (`Dog`), if anything.
    pub container: Option<String>,
    /// How deep it is in the file's outline, from 0.
    pub depth: u32,
    /// Where it is.
    pub place: Place,
}

/// One job's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Answer {
    /// A file's diagnostics.
    Diagnostics(FileDiagnostics),
    /// Places: where the position asked about was found (the symbol's
    /// place in the file asked about), and what the server answered.
    Places {
        /// Where the name or position was taken to be.
        at: Place,
        /// The answer.
        places: Vec<Place>,
    },
    /// Hover text.
    Hover {
        /// Where the name or position was taken to be.
        at: Place,
        /// The server's text; `None`: nothing to say there.
        text: Option<String>,
    },
    /// Symbols.
    Symbols(Vec<Symbol>),
    /// The job failed: why, in words.
    Failed(String),
}
