//! `ag-serve`: the broker's set-up (its directory, its lock, the socket,
//! the HTTP server and its token) and its end (SIGTERM, SIGINT or SIGHUP:
//! the sessions are told to finish, then stopped), or a client command.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::args::Args;
use super::broker::{Broker, Settings};
use super::paths::Paths;
use crate::cli::{ExitStatus, error_line, note, warn};
use crate::llm::keys::Redactor;
use crate::proc::sibling;
use crate::session::{Store, ag_home};

const BIN: &str = "ag-serve";

/// How long sessions get to finish when ag-serve stops.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `ag-serve`.
pub fn main() -> ExitCode {
    let (args, runtime) = match crate::cli::start::<Args>(BIN) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let paths = Paths::new(&ag_home(), args.socket.clone());
    let code = match args.command {
        Some(command) => runtime.block_on(super::client::run(command, &paths.socket)),
        None => runtime.block_on(broker(args, paths)),
    };
    runtime.shutdown_timeout(Duration::from_secs(1));
    code.code()
}

/// The HTTP address asked for, checked: loopback unless --allow-remote.
fn http_addr(args: &Args) -> Result<Option<SocketAddr>, String> {
    let Some(text) = &args.http else {
        return Ok(None);
    };
    // `localhost` is the loopback address, spelled as people do.
    let spelled = match text.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => text.clone(),
    };
    let addr: SocketAddr = spelled.parse().map_err(|_| {
        format!(
            "--http `{text}` is not an address and port; give one such as `--http 127.0.0.1:8377`"
        )
    })?;
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(format!(
            "--http {addr} is not a loopback address: anyone who reaches it with the token runs commands as you; add --allow-remote to mean it, or serve `--http 127.0.0.1:{}` and reach it through `ssh -L`",
            addr.port()
        ));
    }
    Ok(Some(addr))
}

async fn broker(args: Args, paths: Paths) -> ExitStatus {
    let http = match http_addr(&args) {
        Ok(a) => a,
        Err(e) => {
            error_line(BIN, &e, Some("Try `ag-serve --help`"));
            return ExitStatus::Input;
        }
    };
    let cwd = match crate::cli::working_dir(BIN) {
        Ok(d) => d,
        Err(status) => return status,
    };
    if let Err(e) = paths.make_dir() {
        error_line(BIN, &e.to_string(), None);
        return ExitStatus::Input;
    }
    let _lock = match paths.lock() {
        Ok(l) => l,
        Err(e) => {
            error_line(
                BIN,
                &e.to_string(),
                Some("its clients connect with `ag-serve list`, `ag-serve attach ID`"),
            );
            return ExitStatus::Input;
        }
    };
    let listener = match super::socket::listen(&paths.socket) {
        Ok(l) => l,
        Err(e) => {
            error_line(BIN, &e.to_string(), None);
            return ExitStatus::Input;
        }
    };
    let shutdown = CancellationToken::new();
    let settings = Settings {
        ag_loop: args.ag_loop.clone().unwrap_or_else(|| sibling("ag-loop")),
        ag_session: sibling("ag-session"),
        client_buffer: args.client_buffer.max(4096),
        default_cwd: cwd,
        registry: paths.registry.clone(),
    };
    let broker = Broker::new(
        settings,
        Store::from_env(),
        Redactor::for_this_machine(),
        shutdown.clone(),
    );
    let stop = CancellationToken::new();
    tokio::spawn(super::socket::serve(listener, broker.clone(), stop.clone()));
    note(BIN, &format!("listening on {}", paths.socket.display()));
    if let Some(addr) = http {
        let site = super::http::Site {
            broker: broker.clone(),
            allow_hosts: args.allow_hosts.clone(),
            fanout: args.fanout.clone().map(absolute),
            limits: http_limits(&args),
        };
        match super::http::start(addr, site, &paths, stop.clone()).await {
            Ok(url) => {
                if !addr.ip().is_loopback() {
                    warn(
                        BIN,
                        &format!(
                            "serving HTTP on {addr}, which is not loopback: anyone who can reach it and holds the token runs commands as you, and the token crosses the network unencrypted"
                        ),
                    );
                }
                // Printed once, as the way in; the token also stays in its file.
                note(BIN, &format!("the web page: {url}"));
            }
            Err(e) => {
                error_line(BIN, &e, None);
                return ExitStatus::Input;
            }
        }
    }
    wait_for_signal().await;
    stop.cancel();
    broker.shut_down(STOP_GRACE).await;
    let _ = std::fs::remove_file(&paths.socket);
    ExitStatus::Success
}

/// The bounds of the HTTP connections: the flags, the number kept to what
/// the open-file limit leaves room for (said when that lowers it).
fn http_limits(args: &Args) -> super::conns::Limits {
    let asked = super::conns::Limits {
        header: Duration::from_secs(args.http_header_timeout.max(1)),
        idle: Duration::from_secs(args.http_idle_timeout.max(1)),
        max: args.http_connections.max(1),
    };
    let nofile = super::conns::open_file_limit();
    let limits = asked.within_open_files(nofile);
    if limits.max < asked.max
        && let Some(n) = nofile
    {
        note(
            BIN,
            &format!(
                "at most {} HTTP connections at once, a quarter of the open-file limit ({n}; raise it with `ulimit -n`)",
                limits.max
            ),
        );
    }
    limits
}

fn absolute(p: PathBuf) -> PathBuf {
    std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        _ = recv(&mut term) => {}
        _ = recv(&mut int) => {}
        _ = recv(&mut hup) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_non_loopback_address_needs_its_flag() {
        let a = Args::try_parse_from(["ag-serve", "--http", "0.0.0.0:80"]).unwrap();
        let e = http_addr(&a).unwrap_err();
        assert!(e.contains("--allow-remote"), "{e}");
        let a =
            Args::try_parse_from(["ag-serve", "--http", "0.0.0.0:80", "--allow-remote"]).unwrap();
        assert!(http_addr(&a).unwrap().is_some());
        let a = Args::try_parse_from(["ag-serve", "--http", "[::1]:0"]).unwrap();
        assert!(http_addr(&a).unwrap().is_some());
        let a = Args::try_parse_from(["ag-serve", "--http", "localhost:0"]).unwrap();
        assert!(http_addr(&a).unwrap().unwrap().ip().is_loopback());
        let a = Args::try_parse_from(["ag-serve", "--http", "localhost"]).unwrap();
        assert!(http_addr(&a).unwrap_err().contains("127.0.0.1:8377"));
    }
}
