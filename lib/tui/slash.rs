//! Slash commands: their names and help, parsing a line that starts with
//! `/`, and Tab completion of a command's name.

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    /// Lists the commands and keys.
    Help,
    /// Leaves.
    Quit,
    /// Starts a new conversation (a new session).
    Clear,
    /// Tokens and cost so far.
    Cost,
    /// Shows the model, or switches to another from the next prompt on.
    Model(Option<String>),
    /// Shows the reasoning effort, or switches it from the next prompt on.
    Thinking(Option<crate::protocol::Reasoning>),
    /// The tools the session's ag-loop offers.
    Tools,
    /// The skills ag-loop lists to the model here.
    Skills,
    /// Writes the session as markdown to a file.
    Export(Option<String>),
    /// Continues in a copy of the session.
    Fork,
    /// Picks a session of this directory to continue.
    Resume,
    /// Restores the files as they were before turn N and goes on in a fork
    /// of the conversation at that point (`ag-session rewind`); without N,
    /// lists the checkpoints seen.
    Rewind(Option<u64>),
    /// Shortens the conversation now (ag-loop's `compact` command).
    Compact,
    /// Attaches a file to the next prompt; without one, lists what will be.
    Attach(Option<String>),
    /// Drops the files waiting to be attached.
    Detach,
}

/// Every command with its one-line help, in the order the help lists them.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/quit", "leave (also Ctrl+C or Ctrl+D on an empty line)"),
    ("/clear", "start a new conversation in a new session"),
    ("/cost", "tokens and cost so far"),
    (
        "/model",
        "show the model; /model PROVIDER/ID switches from the next prompt on",
    ),
    (
        "/thinking",
        "show the reasoning effort; /thinking off|low|medium|high switches it",
    ),
    ("/tools", "the tools ag-loop offers the model"),
    (
        "/skills",
        "the skills listed to the model (name, description, SKILL.md)",
    ),
    ("/export", "write the session as markdown: /export [FILE]"),
    ("/fork", "continue in a copy of this session"),
    ("/resume", "pick a session of this directory to continue"),
    (
        "/rewind",
        "files and conversation as before turn N: /rewind N",
    ),
    (
        "/compact",
        "summarise the older turns now, keeping the recent ones",
    ),
    (
        "/attach",
        "attach a file (image, PDF, text) to the next prompt: /attach FILE",
    ),
    ("/detach", "drop the files waiting to be attached"),
];

/// The help text: commands, then keys.
pub fn help() -> String {
    let mut s = String::from("commands:\n");
    for (name, what) in COMMANDS {
        s.push_str(&format!("  {name:<9} {what}\n"));
    }
    s.push_str(
        "keys:\n  Enter send (queued while the agent works) · Alt+Enter or Ctrl+J new line\n  \
         Esc interrupt · Ctrl+S send as steer · Ctrl+O expand the last tool call\n  \
         Up/Down history · Ctrl+R search it · Ctrl+A/E/W/U/K edit · Tab complete\n  \
         Shift+Up/Down, PageUp/PageDown scroll · y/n/a answer an approval\n  \
         a question: Up/Down pick a choice and Enter sends it, or type an answer · @FILE in a prompt attaches it",
    );
    s
}

/// A line that is a slash command: `None` when it is not one (a prompt),
/// an error for an unknown command or bad argument.
pub fn parse(line: &str) -> Option<Result<Slash, String>> {
    let line = line.trim();
    let rest = line.strip_prefix('/')?;
    // "/ something" or a path like "/usr/bin is odd" is a prompt.
    let mut words = rest.split_whitespace();
    let name = words.next()?;
    if name.contains('/') {
        return None;
    }
    if name == "attach" {
        // The rest of the line is the path, spaces and all.
        let path = rest[name.len()..].trim();
        return Some(Ok(Slash::Attach(
            (!path.is_empty()).then(|| path.to_string()),
        )));
    }
    let arg = words.next().map(str::to_string);
    let extra = words.next().is_some();
    let command = match name {
        "help" | "?" => Slash::Help,
        "quit" | "exit" => Slash::Quit,
        "clear" | "new" => Slash::Clear,
        "cost" => Slash::Cost,
        "model" => Slash::Model(arg.clone()),
        "thinking" | "reasoning" => match arg.as_deref() {
            None => Slash::Thinking(None),
            Some(word) => {
                match serde_json::from_value(serde_json::Value::String(word.to_lowercase())) {
                    Ok(level) => Slash::Thinking(Some(level)),
                    Err(_) => {
                        return Some(Err(format!(
                            "/thinking takes off, low, medium or high, not `{word}`: /thinking high"
                        )));
                    }
                }
            }
        },
        "tools" => Slash::Tools,
        "skills" => Slash::Skills,
        "export" => Slash::Export(arg.clone()),
        "fork" => Slash::Fork,
        "resume" => Slash::Resume,
        "compact" => Slash::Compact,
        "detach" => Slash::Detach,
        "rewind" => match arg.as_deref().map(str::parse::<u64>) {
            None => Slash::Rewind(None),
            Some(Ok(n)) => Slash::Rewind(Some(n)),
            Some(Err(_)) => return Some(Err("/rewind takes a turn number: /rewind 3".into())),
        },
        other => {
            return Some(Err(format!(
                "unknown command /{other}: /help lists them (start a prompt with a space to send a slash)"
            )));
        }
    };
    let takes_arg = matches!(
        command,
        Slash::Model(_) | Slash::Thinking(_) | Slash::Export(_) | Slash::Rewind(_)
    );
    if extra || (arg.is_some() && !takes_arg) {
        return Some(Err(format!("/{name}: too many arguments")));
    }
    Some(Ok(command))
}

/// The commands a partly typed name could be.
pub fn candidates(text: &str) -> Vec<(&'static str, &'static str)> {
    if !text.starts_with('/') || text.contains(char::is_whitespace) {
        return Vec::new();
    }
    COMMANDS
        .iter()
        .filter(|(name, _)| name.starts_with(text))
        .copied()
        .collect()
}

/// Tab: the name completed as far as it is unambiguous, with a space when
/// only one command fits.
pub fn complete(text: &str) -> Option<String> {
    let found = candidates(text);
    match found.as_slice() {
        [] => None,
        [(one, _)] => Some(format!("{one} ")),
        many => {
            let first = many[0].0;
            let common = (text.len()..=first.len())
                .rev()
                .find(|&n| many.iter().all(|(m, _)| m.starts_with(&first[..n])))
                .unwrap_or(text.len());
            (common > text.len()).then(|| first[..common].to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_commands_and_prompts_stay_prompts() {
        assert_eq!(parse("/help"), Some(Ok(Slash::Help)));
        assert_eq!(
            parse("  /model openai/gpt-5 "),
            Some(Ok(Slash::Model(Some("openai/gpt-5".into()))))
        );
        assert_eq!(parse("/rewind 3"), Some(Ok(Slash::Rewind(Some(3)))));
        assert_eq!(parse("/compact"), Some(Ok(Slash::Compact)));
        assert_eq!(
            parse("/thinking LOW"),
            Some(Ok(Slash::Thinking(Some(crate::protocol::Reasoning::Low))))
        );
        assert_eq!(parse("/thinking"), Some(Ok(Slash::Thinking(None))));
        assert!(matches!(parse("/thinking hard"), Some(Err(_))));
        assert_eq!(
            parse("/attach  my shot.png "),
            Some(Ok(Slash::Attach(Some("my shot.png".into()))))
        );
        assert_eq!(parse("/attach"), Some(Ok(Slash::Attach(None))));
        assert!(matches!(parse("/detach all"), Some(Err(_))));
        assert!(matches!(parse("/compact now"), Some(Err(_))));
        assert!(matches!(parse("/rewind three"), Some(Err(_))));
        assert!(matches!(parse("/cost now"), Some(Err(_))));
        assert!(matches!(parse("/frobnicate"), Some(Err(_))));
        // Paths and plain text are prompts.
        assert_eq!(parse("/usr/bin/env is missing"), None);
        assert_eq!(parse("fix /help page"), None);
        assert_eq!(parse("/"), None);
    }

    #[test]
    fn tab_completes_as_far_as_unambiguous() {
        assert_eq!(complete("/he"), Some("/help ".into()));
        assert_eq!(complete("/re"), None);
        assert_eq!(complete("/res"), Some("/resume ".into()));
        assert_eq!(complete("/c"), None);
        assert_eq!(complete("/cl"), Some("/clear ".into()));
        assert_eq!(complete("/x"), None);
        assert_eq!(complete("/help me"), None);
        assert_eq!(candidates("/re").len(), 2);
    }

    #[test]
    fn every_command_is_in_the_help_and_parses() {
        let h = help();
        for (name, _) in COMMANDS {
            assert!(h.contains(name), "{name}");
            assert!(matches!(parse(name), Some(Ok(_))), "{name}");
        }
    }
}
