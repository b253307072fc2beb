//! Whose session a process started from a tool call belongs to: the
//! process whose end ends what the call leaves running (background jobs,
//! warm helpers). One answer for all of them, so that a job and a browser
//! started by the same session end at the same moment.

/// The process whose end ends the session's long-lived helpers:
/// `$AG_SESSION_PID` (ag-loop sets it for every tool it runs), else, inside
/// an agent session (`$AG_SESSION_DIR` set: ag-loop runs the tool binaries
/// directly), the parent process; outside a session, none.
pub fn session_owner() -> Option<u32> {
    if let Some(pid) = std::env::var("AG_SESSION_PID")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
    {
        return Some(pid);
    }
    let in_session = std::env::var_os("AG_SESSION_DIR").is_some_and(|d| !d.is_empty());
    let parent = u32::try_from(nix::unistd::getppid().as_raw()).ok();
    in_session.then_some(parent).flatten().filter(|&p| p > 1)
}
