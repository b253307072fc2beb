//! What answers a prompt: the model, reasoning, system prompt, tools and
//! agent identity. The run's own come from set-up and change with the
//! `set_model` and `set_reasoning` commands (each recorded by a `settings`
//! event); a prompt that starts with `@NAME` is answered by the identity
//! NAME, resolved as `--agent NAME` would be (flags still win), for that
//! prompt only, as seed 003 routes `@matt design the API` to Matt. The
//! sandbox, the workspace, gates and limits stay the run's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::calls::toolset::ToolSet;
use crate::agent::config::file::Config;
use crate::agent::setup::args::Args;
use crate::agent::setup::settings::Env;
use crate::protocol::{ContentBlock, Reasoning, UserContent};

/// The part of an agent's settings that an identity decides.
#[derive(Clone)]
pub struct Profile {
    /// The identity, by the name `--agent` takes.
    pub agent: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// Reasoning effort.
    pub reasoning: Option<Reasoning>,
    /// Sampling temperature (`None`: the provider's).
    pub temperature: Option<f64>,
    /// The system prompt.
    pub system: String,
    /// The tools.
    pub tools: Arc<ToolSet>,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
}

/// What set-up knew, kept to resolve an `@NAME` prompt's identity the way
/// set-up resolved the run's, once per identity.
pub struct Router {
    /// The command line.
    pub args: Args,
    /// The config file.
    pub config: Config,
    /// The environment.
    pub env: Env,
    /// The local working directory: where identities are found and tools
    /// asked for their schemas.
    pub cwd: PathBuf,
    /// The directory the model is told of (a workspace's, with --workspace).
    pub prompt_cwd: PathBuf,
    /// The project instruction files.
    pub project_files: Vec<(PathBuf, String)>,
    /// The MEMORY.md files.
    pub memory: Vec<(PathBuf, String)>,
    /// The skills listed in the system prompt.
    pub skills: Vec<crate::agent::config::skills::Skill>,
    /// Where the ag tools run, with --workspace.
    pub workspace: Option<Arc<crate::workspace::Workspace>>,
    /// Profiles built so far, by identity.
    pub cache: HashMap<String, Profile>,
    /// Runs `agent` calls, for an identity whose tools name it.
    pub delegate: Option<Arc<dyn crate::agent::delegation::Delegate>>,
}

/// An `@NAME` at the start of a prompt: the name and the prompt without it.
/// `None` when the prompt does not start with `@` and a name of letters,
/// digits, `_` and `-` (an `@path/to/file` is no identity).
pub fn mention(content: &UserContent) -> Option<(String, UserContent)> {
    let text = match content {
        UserContent::Text(t) => t.as_str(),
        UserContent::Blocks(blocks) => match blocks.first() {
            Some(ContentBlock::Text { text }) => text.as_str(),
            _ => return None,
        },
    };
    let rest = text.strip_prefix('@')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    // `@matt, ...` and `@matt: ...` name him too.
    let after = after.strip_prefix([',', ':']).unwrap_or(after);
    if name.is_empty() || !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    let after = after.trim_start().to_string();
    let stripped = match content {
        UserContent::Text(_) => UserContent::Text(after),
        UserContent::Blocks(blocks) => {
            let mut blocks = blocks.clone();
            blocks[0] = ContentBlock::Text { text: after };
            UserContent::Blocks(blocks)
        }
    };
    Some((name.to_string(), stripped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_is_a_name_at_the_very_start() {
        let text = |s: &str| UserContent::Text(s.to_string());
        assert_eq!(
            mention(&text("@matt design the API")),
            Some(("matt".into(), text("design the API")))
        );
        assert_eq!(
            mention(&text("@dev-2\n\nfix it")),
            Some(("dev-2".into(), text("fix it")))
        );
        assert_eq!(mention(&text("@matt")), Some(("matt".into(), text(""))));
        assert_eq!(
            mention(&text("@matt: hi")),
            Some(("matt".into(), text("hi")))
        );
        for not in [
            " @matt hi",
            "ask @matt",
            "@src/main.rs fix",
            "@a.txt",
            "@",
            "@ hi",
            "@matt:hi",
        ] {
            assert_eq!(mention(&text(not)), None, "{not}");
        }
        let blocks = UserContent::Blocks(vec![
            ContentBlock::Text {
                text: "@anne price it".into(),
            },
            ContentBlock::Image {
                data: "x".into(),
                mime_type: "image/png".into(),
            },
        ]);
        let (name, rest) = mention(&blocks).unwrap();
        assert_eq!(name, "anne");
        assert_eq!(rest.text(), "price it");
    }
}
