//! The session modes an editor can switch between, each a set of ag-loop
//! flags over ag's own approval and sandbox policies: nothing is decided
//! here that ag-gate and the sandbox do not already decide.

use std::path::Path;

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};

/// A mode of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// ag-gate's default policy: the editor is asked about risky calls
    /// (recursive deletes, force pushes, writes outside the workspace...).
    Ask,
    /// Every call that changes something is asked about; reading and
    /// searching are not.
    AskAlways,
    /// Nobody is asked: what no rule denies runs, confined by the sandbox
    /// to the workspace (what it blocks stays blocked).
    Auto,
    /// Only the read-only tools, confined read-only.
    ReadOnly,
}

/// Every mode, in the order editors list them.
pub const ALL: [Mode; 4] = [Mode::Ask, Mode::AskAlways, Mode::Auto, Mode::ReadOnly];

/// The tools `ask-always` lets run without asking.
const READ_TOOLS: &str = "read,ls,grep,find,todo,notify";

impl Mode {
    /// The mode's ACP id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AskAlways => "ask-always",
            Mode::Auto => "auto",
            Mode::ReadOnly => "read-only",
        }
    }

    /// The mode with this id.
    pub fn from_id(id: &str) -> Option<Mode> {
        ALL.into_iter().find(|m| m.id() == id)
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask when risky",
            Mode::AskAlways => "Ask before changes",
            Mode::Auto => "Auto in workspace",
            Mode::ReadOnly => "Read-only",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mode::Ask => {
                "ag-gate's policy: risky calls (recursive deletes, force pushes, writes outside the workspace) are asked about; the sandbox confines the rest to the workspace"
            }
            Mode::AskAlways => {
                "every call that can change something is asked about; reading and searching run"
            }
            Mode::Auto => {
                "nobody is asked: what no rule denies runs, confined by the sandbox to the workspace"
            }
            Mode::ReadOnly => "only the read-only tools, confined read-only",
        }
    }

    /// The tools the mode offers, by name (None: ag-loop's default).
    pub fn tools(self) -> Option<Vec<String>> {
        match self {
            Mode::ReadOnly => crate::agent::named_set("readonly", &[]),
            _ => None,
        }
    }

    /// The ag-loop flags of the mode. `gate` is the ag-gate to run for
    /// `ask-always`; `tools_given`: the caller passes `--tools` itself
    /// (from [`Mode::tools`]).
    pub fn loop_flags(self, gate: &Path, tools_given: bool) -> Vec<String> {
        let mut flags = Vec::new();
        if self != Mode::Auto {
            // Without it and without a terminal, ag-gate's approval mode
            // is `never`: nobody is asked (that is `auto`).
            flags.push("--approve-on-stdin".to_string());
        }
        match self {
            Mode::Ask | Mode::Auto => {}
            Mode::AskAlways => {
                flags.push("--gate".into());
                flags.push(format!(
                    "{} --approval always --allow {READ_TOOLS}",
                    shell_quote(&gate.display().to_string())
                ));
            }
            Mode::ReadOnly => {
                if !tools_given {
                    flags.extend(["--tools", "readonly"].map(String::from));
                }
                flags.extend(["--sandbox-mode", "read-only"].map(String::from));
            }
        }
        flags
    }
}

/// `s` as one word for `sh -c`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The modes as ACP announces them, with the current one.
pub fn state(current: Mode) -> SessionModeState {
    SessionModeState::new(
        SessionModeId::new(current.id()),
        ALL.into_iter()
            .map(|m| {
                SessionMode::new(SessionModeId::new(m.id()), m.name())
                    .description(m.description().to_string())
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for m in ALL {
            assert_eq!(Mode::from_id(m.id()), Some(m));
        }
        assert_eq!(Mode::from_id("yolo"), None);
    }

    #[test]
    fn only_auto_leaves_nobody_to_ask() {
        let gate = Path::new("/opt/ag bin/ag-gate");
        for m in ALL {
            let flags = m.loop_flags(gate, false);
            assert_eq!(
                flags.contains(&"--approve-on-stdin".to_string()),
                m != Mode::Auto,
                "{m:?}"
            );
        }
        let f = Mode::AskAlways.loop_flags(gate, false);
        assert_eq!(
            f[2],
            "'/opt/ag bin/ag-gate' --approval always --allow read,ls,grep,find,todo,notify"
        );
        assert!(
            Mode::ReadOnly
                .loop_flags(gate, false)
                .contains(&"readonly".to_string())
        );
    }

    #[test]
    fn quoting_keeps_one_word() {
        assert_eq!(shell_quote("/usr/bin/ag-gate"), "/usr/bin/ag-gate");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
