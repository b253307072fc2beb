//! Resuming a session as it was: which session (`--session ID`,
//! `--continue`), what it recorded (its header's `config`, then its last
//! `settings` event: model, reasoning, tool set, identity), which identity
//! answers, and the note that says what a flag changed.

use std::path::Path;

use serde_json::{Value, json};

use super::args::Args;
use super::settings::{LoopConfig, Resumed, SessionChoice};
use crate::agent::config::error::SetupError;
use crate::agent::config::identity::{self, Identity};
use crate::protocol::{AgentEvent, Reasoning, UntilCheck};
use crate::session::{Reader, SessionFile, Store};

/// The session file to resume, if any: the one asked for (an error when it
/// cannot be found), or the working directory's latest with `--continue`
/// (a new session when there is none).
pub fn existing(
    choice: &SessionChoice,
    store: &Store,
    cwd: &Path,
) -> Result<Option<SessionFile>, SetupError> {
    Ok(match choice {
        SessionChoice::Resume(id) => Some(store.find(id)?),
        SessionChoice::Latest => store.latest(cwd).ok().flatten(),
        SessionChoice::Off | SessionChoice::New => None,
    })
}

/// What a session recorded of itself: its header's `config`, then each
/// `settings` event in turn.
pub fn recorded(path: &Path) -> Result<Resumed, SetupError> {
    let read = |source| SetupError::SessionFile {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = Reader::open(path).map_err(read)?;
    let mut was = Resumed::default();
    if let Some(header) = reader.header().map_err(read)? {
        from_config(&header.config, &mut was);
    }
    reader
        .for_each_event_of(&["\"settings\""], |_, rec| {
            if let AgentEvent::Settings {
                model,
                reasoning,
                tools,
                agent,
                until,
            } = rec.event
            {
                was = Resumed {
                    model: Some(model),
                    reasoning: Some(reasoning),
                    tools: Some(tools),
                    agent: Some(agent),
                    until: Some(until),
                };
            }
        })
        .map_err(read)?;
    Ok(was)
}

/// A header's `config` as ag-loop writes it (see [`header_config`]); a key
/// that is absent was not recorded (a session of an older ag).
fn from_config(config: &Value, was: &mut Resumed) {
    was.model = config
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(r) = config.get("reasoning") {
        was.reasoning =
            Some(serde_json::from_value::<Option<Reasoning>>(r.clone()).unwrap_or(None));
    }
    if let Some(t) = config.get("tool_set") {
        was.tools = Some(serde_json::from_value::<Option<Vec<String>>>(t.clone()).unwrap_or(None));
    }
    if let Some(a) = config.get("agent") {
        was.agent = Some(a.as_str().map(str::to_string));
    }
    if let Some(u) = config.get("until") {
        was.until = Some(serde_json::from_value::<Option<UntilCheck>>(u.clone()).unwrap_or(None));
    }
}

/// The settings a new session's header records, beside the tools it
/// offers and its turn limit.
pub fn header_config(resolved: &LoopConfig, tool_names: &[&str]) -> Value {
    json!({
        "model": resolved.model,
        "reasoning": resolved.reasoning,
        "tool_set": resolved.tool_set,
        "agent": resolved.agent,
        "until": resolved.checks.until,
        "tools": tool_names,
        "max_turns": resolved.max_turns,
    })
}

/// The identity that answers: the one `--agent` names, else the resumed
/// session's, else `default.md` when there is one. A session's identity
/// that is no longer found is left out, with a note saying so.
pub fn identity(
    args: &Args,
    was: &Resumed,
    cwd: &Path,
) -> Result<(Option<Identity>, Option<String>), SetupError> {
    if let Some(name) = &args.agent {
        return Ok((Some(identity::load(cwd, name)?), None));
    }
    match &was.agent {
        Some(Some(name)) => match identity::load(cwd, name) {
            Ok(i) => Ok((Some(i), None)),
            Err(SetupError::NoIdentity { dirs, .. }) => {
                let looked: Vec<String> =
                    dirs.iter().map(|d| format!("`{}`", d.display())).collect();
                Ok((
                    None,
                    Some(format!(
                        "the session's agent identity `{name}` is no longer found (looked for `{name}.md` in {}); going on without one",
                        looked.join(", ")
                    )),
                ))
            }
            Err(e) => Err(e),
        },
        Some(None) => Ok((None, None)),
        None => identity::load_default(cwd).map(|i| (i, None)),
    }
}

/// What the command line changed in a resumed session, one phrase each
/// (`model ollama/a → openai/b (--model)`); empty when it changed nothing.
pub fn changes(was: &Resumed, now: &LoopConfig, args: &Args) -> Vec<String> {
    let by = |flag: bool, name: &str| match (&args.agent, flag) {
        (_, true) => format!("--{name}"),
        (Some(agent), false) => format!("--agent {agent}"),
        (None, false) => "the command line".to_string(),
    };
    let word = |v: Option<&str>, none: &str| v.unwrap_or(none).to_string();
    let mut out = Vec::new();
    if let Some(m) = &was.model
        && *m != now.model
    {
        out.push(format!(
            "model {m} → {} ({})",
            now.model,
            by(args.model.is_some(), "model")
        ));
    }
    if let Some(r) = &was.reasoning
        && *r != now.reasoning
    {
        out.push(format!(
            "reasoning {} → {} ({})",
            word(r.map(Reasoning::word), "default"),
            word(now.reasoning.map(Reasoning::word), "default"),
            by(args.reasoning.is_some(), "reasoning")
        ));
    }
    if let Some(t) = &was.tools
        && *t != now.tool_set
    {
        let show = |t: &Option<Vec<String>>| t.as_ref().map_or("full".to_string(), |l| l.join(","));
        out.push(format!(
            "tools {} → {} ({})",
            show(t),
            show(&now.tool_set),
            by(args.tools.is_some(), "tools")
        ));
    }
    if let Some(a) = &was.agent
        && *a != now.agent
        && args.agent.is_some()
    {
        out.push(format!(
            "agent {} → {} (--agent)",
            word(a.as_deref(), "none"),
            word(now.agent.as_deref(), "none")
        ));
    }
    // Runs that end when a check passes (issue 35).
    if let Some(u) = &was.until
        && *u != now.checks.until
    {
        let show = |u: &Option<UntilCheck>| match u {
            Some(u) => format!("`{}` ({} tries, {} s each)", u.command, u.tries, u.timeout),
            None => "none".to_string(),
        };
        let flag = if args.no_until {
            "--no-until"
        } else if args.until.is_some() {
            "--until"
        } else {
            "--until-tries/--until-timeout"
        };
        out.push(format!(
            "until {} → {} ({flag})",
            show(u),
            show(&now.checks.until)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::agent::config::file::Config;
    use crate::agent::setup::settings::Env;

    fn args(flags: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("ag-loop").chain(flags.iter().copied())).unwrap()
    }

    #[test]
    fn a_header_written_now_reads_back_as_what_it_recorded() {
        let was = Resumed {
            model: Some("a/b".into()),
            reasoning: Some(Some(Reasoning::High)),
            tools: Some(Some(vec!["basic".into()])),
            agent: Some(Some("rev".into())),
            until: Some(Some(UntilCheck {
                command: "python3 -m unittest".into(),
                tries: 3,
                timeout: 60.0,
            })),
        };
        let now = LoopConfig::resolve(&args(&[]), &Config::default(), None, &Env::default(), &was)
            .unwrap();
        let mut back = Resumed::default();
        from_config(&header_config(&now, &["read"]), &mut back);
        assert_eq!(back.model, was.model);
        assert_eq!(back.reasoning, was.reasoning);
        assert_eq!(back.tools, was.tools);
        assert_eq!(back.until, was.until);
        // The identity is the caller's to load; none was given here.
        assert_eq!(back.agent, Some(None));
        // An older header records only the model.
        let mut old = Resumed::default();
        from_config(&json!({"model": "x/y", "tools": ["read"]}), &mut old);
        assert_eq!(
            old,
            Resumed {
                model: Some("x/y".into()),
                ..Resumed::default()
            }
        );
    }

    #[test]
    fn the_changes_name_the_flag_that_made_them() {
        let was = Resumed {
            model: Some("ollama/a".into()),
            reasoning: Some(None),
            tools: Some(None),
            agent: Some(None),
            until: Some(Some(UntilCheck {
                command: "make test".into(),
                tries: 5,
                timeout: 600.0,
            })),
        };
        let flags = args(&[
            "--until",
            "make check",
            "-m",
            "openai/b",
            "--reasoning",
            "high",
            "--tools",
            "read,bash",
        ]);
        let now =
            LoopConfig::resolve(&flags, &Config::default(), None, &Env::default(), &was).unwrap();
        assert_eq!(
            changes(&was, &now, &flags),
            vec![
                "model ollama/a → openai/b (--model)",
                "reasoning default → high (--reasoning)",
                "tools full → read,bash (--tools)",
                "until `make test` (5 tries, 600 s each) → `make check` (5 tries, 600 s each) (--until)",
            ]
        );
        let none = args(&[]);
        let same =
            LoopConfig::resolve(&none, &Config::default(), None, &Env::default(), &was).unwrap();
        assert!(changes(&was, &same, &none).is_empty());
    }
}
