//! A child attached to this process's terminal, as a shell runs a command:
//! stdin, stdout and stderr inherited, in the caller's process group so
//! that Ctrl-C reaches it directly. For wrappers such as ag-sandbox, which
//! must outlive the command to clean up after it (its private `$TMPDIR`):
//! while the child runs, SIGINT, SIGTERM and SIGHUP do not end this
//! process; one sent to it alone is passed on to the child.

use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::run::{io_err, spawn_error, spawn_std, std_command};
use super::{Cancel, Command, Error, Status, TerminationGuard};

/// How often a signal received is checked for, to pass it on.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

pub(super) fn run_attached(cmd: Command) -> Result<Status, Error> {
    let c = std_command(&cmd);
    let cancel = Cancel::new().map_err(io_err("cannot set up signal handling"))?;
    let guard =
        TerminationGuard::install(&cancel).map_err(io_err("cannot set up signal handling"))?;
    let mut child = spawn_std(&cmd, c).map_err(spawn_error(&cmd))?;
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let mut passed_on = false;
    let status = loop {
        match rx.recv_timeout(SIGNAL_POLL) {
            Ok(r) => break r.map_err(io_err("cannot wait for the command"))?,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if !passed_on
                    && let Some(n) = super::termination_signal()
                    && n == libc_sigterm()
                {
                    passed_on = true;
                    if let Ok(sig) = Signal::try_from(n) {
                        let _ = kill(pid, sig);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(io_err("cannot wait for the command")(
                    std::io::Error::other("the waiting thread ended"),
                ));
            }
        }
    };
    drop(guard);
    use std::os::unix::process::ExitStatusExt;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signaled(s),
        (None, None) => Status::Exited(1),
    })
}

/// SIGINT and SIGHUP from a terminal reach the whole foreground group, the
/// child included, so only SIGTERM (sent to this process alone, as by
/// `kill` or a supervisor) is passed on: passing the others would deliver
/// them twice.
fn libc_sigterm() -> i32 {
    Signal::SIGTERM as i32
}
