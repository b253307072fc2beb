//! ag-serve's command line (the man page comes from here): the broker's
//! flags, and the client commands that talk to a running broker.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Keeps ag-loop sessions alive apart from any one client.
///
/// Run without a command, ag-serve is the broker: it runs each session as
/// an `ag-loop --json --approve-on-stdin --session ID` child and outlives
/// its clients, as tmux does for shells. Clients connect to its Unix socket
/// ($AG_HOME/serve/socket, mode 0600) and write JSON lines: {"type":"start"}
/// (a new session; "cwd", "args" with more ag-loop flags, "prompt"),
/// {"type":"attach","session":ID} (by id or unique prefix, "from" an event
/// offset, "resume":true to start ag-loop on a session that is not
/// running), {"type":"detach"}, {"type":"list"}, {"type":"end"},
/// {"type":"rewind","turn":N}; and once attached, ag-loop's own commands
/// (prompt, steer, interrupt, approval, compact, or a plain text line as a
/// prompt). They read the session's events exactly as its file holds them
/// (first the ones they missed, from the file, then the live ones, with no
/// gap and no duplicate between), and the broker's messages: attached,
/// detached, sessions, approval_answered, dropped, session_ended, ending,
/// rewound, refused (schemas/serve-request.json, serve-message.json).
///
/// Several clients may attach to one session: each sees every event; an
/// approval is answered once, and every client is told by whom. A client
/// that falls --client-buffer bytes behind is dropped with a `dropped`
/// message naming the offset to attach again from; the session never waits
/// for it.
///
/// With --http ADDR, the same over HTTP on a loopback address, with a web
/// page: the URL with its token is printed once on stderr.
#[derive(Debug, Parser)]
#[command(
    name = "ag-serve",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Exit status: 0 success (the broker: stopped by SIGTERM or SIGINT; a client: detached, or the \
session ended), 1 the connection to the broker was lost, 2 usage or set-up error (another broker runs, no broker \
to connect to, a request refused).\n\n\
If ag-serve is killed, the sessions it ran end as a kill -9 of ag-loop ends them: their watchdog stops what they \
started, nothing in their files is torn, and each can be resumed (ag-loop --session ID, or attach with \
\"resume\":true). ag-serve started again lists them as ended and resumable.\n\n\
HTTP: every request but those for the page itself (its HTML, script and style) needs the token (kept in \
$AG_HOME/serve/token, mode 0600, made anew at each start): as a Bearer Authorization header or ?token=. No \
cookie is set (a browser would send it to every port of the host); the page keeps the token for its own origin \
and tab. Requests whose Host is not the address served, or whose Origin is another site's, are refused. The page \
never receives a provider key: every line it gets passes the redaction ag-loop's events pass. A connection must \
send a request's head within --http-header-timeout, may sit between requests for --http-idle-timeout, and at \
most --http-connections are open (a new one closes the one that waited longest, those that never carried the \
token first)."
)]
pub struct Args {
    /// A client command; without one, ag-serve runs the broker.
    #[command(subcommand)]
    pub command: Option<ClientCommand>,
    /// Also serve HTTP (JSON endpoints, Server-Sent Events and the web page)
    /// on ADDR, a loopback address and port such as 127.0.0.1:8377 (port 0:
    /// any free port).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow --http on an address that is not loopback. Anyone who can reach
    /// the port and has the token runs commands as you: see docs/frontends.md.
    #[arg(long)]
    pub allow_remote: bool,
    /// A host name (NAME or NAME:PORT) the HTTP server answers to besides
    /// the address it serves, localhost and 127.0.0.1 (repeatable): the name
    /// of this machine that clients use over --allow-remote, or a tunnel's.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
    /// The bytes ag-serve may hold for one client before it drops it: the
    /// session's events it has not read and, on the socket, the replies to
    /// its requests.
    #[arg(long, value_name = "BYTES", default_value_t = 8 << 20)]
    pub client_buffer: usize,
    /// The seconds an HTTP client has to send the head of a request (from
    /// connecting, or from the head's first byte) before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub http_header_timeout: u64,
    /// The seconds an HTTP connection may sit between requests with nothing
    /// sent either way (an event stream sends a keep-alive every 15 s).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub http_idle_timeout: u64,
    /// The most HTTP connections open at once (at most a quarter of the
    /// open-file limit, `ulimit -n`). A new one past it closes the one that
    /// has waited longest without a request, those that never carried the
    /// token first.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub http_connections: usize,
    /// The ag-loop program (default: the one beside ag-serve, else on PATH).
    #[arg(long, value_name = "PROGRAM")]
    pub ag_loop: Option<PathBuf>,
    /// Show this file's result lines of an `ag-fanout` run as a table on
    /// the web page (read again at each look, so a running ag-fanout shows).
    #[arg(long, value_name = "RESULTS")]
    pub fanout: Option<PathBuf>,
    /// The Unix socket (default: $AG_HOME/serve/socket).
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,
}

/// Commands that talk to a running broker.
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// List the sessions: the live ones with their state (working,
    /// waiting_for_approval, idle), then the ended ones ag-serve ran.
    List {
        /// Every session on this machine, not only those ag-serve ran.
        #[arg(long)]
        all: bool,
        /// One JSON object per session instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Start a new session and attach to it: its events on stdout, commands
    /// from stdin (as ag-loop reads them); at the end of stdin it detaches
    /// and the session goes on.
    Start {
        /// The working directory (default: this one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The name other clients see on this one's approvals.
        #[arg(long, value_name = "NAME", default_value = "ag-serve start")]
        client: String,
        /// More ag-loop flags, after `--` (`ag-serve start -- -m openai/gpt-5 --tools readonly`).
        #[arg(last = true, value_name = "AG_LOOP_ARGS")]
        args: Vec<String>,
    },
    /// Attach to a session: its events from --from on (first those it
    /// missed, then the live ones) on stdout, commands from stdin; at the end
    /// of stdin it detaches and the session goes on. A client that falls
    /// behind is attached again where it left off.
    Attach {
        /// The session's id, or a unique prefix or suffix of it.
        session: String,
        /// The offset of the first event wanted (the `offset` of a
        /// `detached` message).
        #[arg(long, value_name = "N", default_value_t = 0)]
        from: u64,
        /// Start ag-loop on the session if it is not running (resume it).
        #[arg(long)]
        resume: bool,
        /// The name other clients see on this one's approvals.
        #[arg(long, value_name = "NAME", default_value = "ag-serve attach")]
        client: String,
        /// With --resume: more ag-loop flags, after `--`.
        #[arg(last = true, value_name = "AG_LOOP_ARGS")]
        args: Vec<String>,
    },
    /// End a running session: its work interrupted, its ag-loop told to
    /// finish. It can be resumed later.
    End {
        /// The session's id, or a unique prefix or suffix of it.
        session: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn the_broker_flags_and_the_client_commands_are_apart() {
        let a = Args::try_parse_from(["ag-serve", "--http", "127.0.0.1:0"]).unwrap();
        assert!(a.command.is_none());
        let a = Args::try_parse_from([
            "ag-serve", "attach", "ab12", "--from", "7", "--", "-m", "x/y",
        ])
        .unwrap();
        match a.command {
            Some(ClientCommand::Attach {
                session,
                from,
                args,
                ..
            }) => {
                assert_eq!((session.as_str(), from), ("ab12", 7));
                assert_eq!(args, ["-m", "x/y"]);
            }
            other => panic!("{other:?}"),
        }
        let a = Args::try_parse_from(["ag-serve", "list", "--socket", "/s"]).unwrap();
        assert_eq!(a.socket.as_deref(), Some(std::path::Path::new("/s")));
        assert!(Args::try_parse_from(["ag-serve", "--http", "x", "list"]).is_err());
    }
}
