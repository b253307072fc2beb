//! `ag-tui --attach ID`: the TUI joins a live session of ag-serve through
//! `ag-serve attach ID --resume` (a bridge: the session's events on its
//! stdout, the TUI's commands on its stdin; quitting closes its stdin, which
//! detaches and leaves the session running). The events are drawn as
//! ag-loop's are; the broker's own lines are taken here.

use crate::protocol::ServeMessage;

use super::state::{NoticeKind, State};

/// The arguments of `ag-serve` for a session (`--session ID` in
/// `session`: attach to it, starting it if it is not running; nothing: a new
/// session), with the model and the ag-loop flags for when ag-serve starts
/// ag-loop.
pub fn bridge_args(session: &[String], model: Option<&str>, loop_args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = match session {
        [flag, id] if flag == "--session" => ["attach", id, "--resume"].map(String::from).to_vec(),
        _ => vec!["start".to_string()],
    };
    out.extend(["--client".to_string(), "ag-tui".to_string()]);
    let mut flags: Vec<String> = Vec::new();
    if let Some(m) = model {
        flags.extend(["-m".to_string(), m.to_string()]);
    }
    flags.extend(loop_args.iter().cloned());
    if !flags.is_empty() {
        out.push("--".to_string());
        out.extend(flags);
    }
    out
}

/// Takes a line of the broker's (not an event) into the conversation's
/// `state`, and the session it attached to into `session`; false for any
/// other line.
pub fn take_line(state: &mut State, session_id: &mut Option<String>, line: &str) -> bool {
    // Events carry a timestamp; the broker's messages never do.
    if line.contains("\"timestamp\"") {
        return false;
    }
    let Ok(message) = serde_json::from_str::<ServeMessage>(line) else {
        return false;
    };
    let s = state;
    match message {
        ServeMessage::Attached {
            session,
            state,
            client,
            ..
        } => {
            let state = serde_json::to_value(state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            s.notice(
                NoticeKind::Info,
                format!("attached to session {session} ({state}) as {client}; quitting leaves it running"),
            );
            *session_id = Some(session);
        }
        ServeMessage::ApprovalAnswered {
            tool_call_id,
            approved,
            by,
            ..
        } => {
            s.answered(&tool_call_id, approved);
            let word = if approved { "approved" } else { "denied" };
            s.notice(NoticeKind::Info, format!("{word} by {by}"));
        }
        ServeMessage::Dropped { offset, .. } => s.notice(
            NoticeKind::Warning,
            format!("this view fell behind the session; it goes on from event {offset}"),
        ),
        ServeMessage::SessionEnded { status, stderr, .. } => {
            let mut text = format!("the session's ag-loop ended ({status})");
            if let Some(e) = stderr {
                text.push('\n');
                text.push_str(&e);
            }
            s.notice(NoticeKind::Warning, text);
        }
        ServeMessage::Refused { message } => s.notice(NoticeKind::Error, message),
        ServeMessage::Ending { session } => s.notice(
            NoticeKind::Info,
            format!("session {session} was told to end"),
        ),
        ServeMessage::Rewound { new_session, .. } => s.notice(
            NoticeKind::Info,
            format!("the session was rewound into {new_session}"),
        ),
        ServeMessage::Detached { .. } | ServeMessage::Sessions { .. } => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_lines_are_taken_and_events_are_left_alone() {
        let mut state = State::default();
        let mut session = None;
        assert!(take_line(
            &mut state,
            &mut session,
            r#"{"type":"attached","session":"s1","path":"/p","from":0,"live_from":3,"state":"idle","client":"ag-tui#2"}"#
        ));
        assert_eq!(session.as_deref(), Some("s1"));
        assert!(!take_line(
            &mut state,
            &mut session,
            r#"{"type":"agent_start","timestamp":"t"}"#
        ));
        state.apply_line(r#"{"type":"approval_request","timestamp":"t","tool_call_id":"c1","tool_name":"bash","arguments":{},"reason":"r"}"#);
        assert_eq!(state.approvals.len(), 1);
        assert!(take_line(
            &mut state,
            &mut session,
            r#"{"type":"approval_answered","session":"s1","tool_call_id":"c1","approved":true,"by":"web#1"}"#
        ));
        assert!(state.approvals.is_empty());
    }

    #[test]
    fn the_bridge_attaches_to_the_session_or_starts_a_new_one() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            bridge_args(
                &v(&["--session", "ab"]),
                Some("x/y"),
                &v(&["--tools", "bash"])
            ),
            v(&[
                "attach", "ab", "--resume", "--client", "ag-tui", "--", "-m", "x/y", "--tools",
                "bash"
            ])
        );
        assert_eq!(
            bridge_args(&[], None, &[]),
            v(&["start", "--client", "ag-tui"])
        );
    }
}
