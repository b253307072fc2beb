//! The slash commands ag announces to editors (`available_commands_update`)
//! and how a prompt that starts with one is read.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};

use crate::protocol::Usage;

/// A slash command in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    /// Shorten the conversation now.
    Compact,
    /// Put the working tree and the conversation back to before a turn:
    /// that turn, or by default the first turn of the last prompt.
    Rewind(Option<u64>),
    /// Tokens and cost so far.
    Cost,
}

/// What the editor shows.
pub fn available() -> Vec<AvailableCommand> {
    vec![
        AvailableCommand::new(
            "compact",
            "Shorten the conversation now: older turns become a summary",
        ),
        AvailableCommand::new(
            "rewind",
            "Put the files and the conversation back to before the last prompt (or before turn N)",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("turn number (default: before the last prompt)"),
        )),
        AvailableCommand::new("cost", "Tokens and cost of this session so far"),
    ]
}

/// The command a prompt's text asks for: None for an ordinary prompt
/// (including `/something` ag does not know, which goes to the model as
/// it is); an error says how to call a known command right.
pub fn parse(text: &str) -> Option<Result<Slash, String>> {
    let t = text.trim();
    let rest = t.strip_prefix('/')?;
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    Some(match name {
        "compact" if arg.is_empty() => Ok(Slash::Compact),
        "compact" => Err(format!(
            "/compact takes no argument: send `/compact`, not `/compact {arg}`"
        )),
        "cost" if arg.is_empty() => Ok(Slash::Cost),
        "cost" => Err(format!(
            "/cost takes no argument: send `/cost`, not `/cost {arg}`"
        )),
        "rewind" if arg.is_empty() => Ok(Slash::Rewind(None)),
        "rewind" => match arg.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Slash::Rewind(Some(n))),
            _ => Err(format!(
                "/rewind takes a turn number from 1 (or nothing, for before the last prompt): `/rewind` or `/rewind 2`, not `/rewind {arg}`"
            )),
        },
        _ => return None,
    })
}

/// `/cost`'s answer.
pub fn cost_text(u: &Usage) -> String {
    format!(
        "This session so far: {} input tokens, {} output tokens, {} read from the cache, {} written to it; cost ${:.4}.",
        u.input, u.output, u.cache_read, u.cache_write, u.cost.total
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_commands_are_read_and_others_go_to_the_model() {
        assert_eq!(parse("/compact"), Some(Ok(Slash::Compact)));
        assert_eq!(parse("  /cost \n"), Some(Ok(Slash::Cost)));
        assert_eq!(parse("/rewind"), Some(Ok(Slash::Rewind(None))));
        assert_eq!(parse("/rewind 3"), Some(Ok(Slash::Rewind(Some(3)))));
        assert_eq!(parse("/usr/bin is odd"), None);
        assert_eq!(parse("fix /compact"), None);
    }

    #[test]
    fn a_wrong_argument_shows_the_call_corrected() {
        let e = parse("/rewind two").unwrap().unwrap_err();
        assert!(
            e.contains("`/rewind 2`") && e.contains("`/rewind two`"),
            "{e}"
        );
        let e = parse("/rewind 0").unwrap().unwrap_err();
        assert!(e.contains("from 1"), "{e}");
        assert!(parse("/cost now").unwrap().is_err());
    }

    #[test]
    fn every_announced_command_is_understood() {
        for c in available() {
            assert!(parse(&format!("/{}", c.name)).is_some(), "{}", c.name);
        }
    }

    #[test]
    fn cost_says_tokens_and_dollars() {
        let mut u = Usage {
            input: 12,
            ..Usage::default()
        };
        u.cost.total = 0.5;
        let t = cost_text(&u);
        assert!(
            t.contains("12 input tokens") && t.contains("$0.5000"),
            "{t}"
        );
    }
}
