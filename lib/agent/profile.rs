//! What answers a prompt: the model, reasoning, system prompt, tools and
//! agent identity. The run's own come from set-up and change with the
//! `set_model` and `set_reasoning` commands (each recorded by a `settings`
//! event); a prompt that starts with `@NAME` is answered by the identity
//! NAME, resolved as `--agent NAME` would be (flags still win), for that
//! prompt only, as seed 003 routes `@matt design the API` to Matt. The
//! sandbox, the workspace, gates and limits stay the run's.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::args::Args;
use super::config::Config;
use super::identity;
use super::prompt::{Head, Parts};
use super::runner::Agent;
use super::setup::{Env, LoopConfig, Resumed};
use super::toolset::ToolSet;
use crate::protocol::{AgentEvent, ContentBlock, Reasoning, UserContent};

/// The part of an agent's settings that an identity decides.
#[derive(Clone)]
pub struct Profile {
    /// The identity, by the name `--agent` takes.
    pub agent: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// Reasoning effort.
    pub reasoning: Option<Reasoning>,
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
    pub skills: Vec<super::skills::Skill>,
    /// Where the ag tools run, with --workspace.
    pub workspace: Option<Arc<crate::workspace::Workspace>>,
    /// Profiles built so far, by identity.
    pub cache: HashMap<String, Profile>,
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

impl Agent {
    /// The run's own profile, as it stands.
    fn own_profile(&self) -> Profile {
        Profile {
            agent: self.settings.agent.clone(),
            model: self.settings.model.clone(),
            reasoning: self.settings.reasoning,
            system: self.settings.system.clone(),
            tools: self.tools.clone(),
            context_window: self.settings.context_window,
        }
    }

    /// Puts `p` in place of the current profile and returns the one it
    /// replaced.
    pub(super) fn swap_profile(&mut self, p: Profile) -> Profile {
        let old = self.own_profile();
        self.settings.agent = p.agent;
        self.settings.model = p.model;
        self.settings.reasoning = p.reasoning;
        self.settings.system = p.system;
        self.tools = p.tools;
        self.settings.context_window = p.context_window;
        old
    }

    /// Who answers `content`: the identity an `@NAME` at its start names,
    /// with the prompt that follows the name, else nobody in particular
    /// (the run's profile) with the prompt as it is. An `@NAME` that names
    /// no identity, while there are identities, is refused with what to
    /// write instead: running it as someone else could do what the person
    /// did not ask for.
    pub async fn route(
        &mut self,
        content: UserContent,
    ) -> Result<(Option<Profile>, UserContent), String> {
        let Some(router) = &self.router else {
            return Ok((None, content));
        };
        let Some((name, rest)) = mention(&content) else {
            return Ok((None, content));
        };
        if identity::find(&router.cwd, &name).is_none() {
            let known: Vec<String> = identity::list(&router.cwd)
                .into_iter()
                .map(|i| format!("@{}", i.stem))
                .collect();
            // Without identities an `@` is just text; a file of that name
            // is for whatever reads mentions of files.
            if known.is_empty() || router.cwd.join(&name).exists() {
                return Ok((None, content));
            }
            return Err(format!(
                "no agent identity `{name}` for `@{name}`, so the prompt was not run; the identities are {} (`ag-loop --list-agents`). Send it again with one of them, or start it with a space to send the `@` as text.",
                known.join(", ")
            ));
        }
        let empty = match &rest {
            UserContent::Text(t) => t.trim().is_empty(),
            UserContent::Blocks(b) => b.len() == 1 && rest.text().trim().is_empty(),
        };
        if empty {
            return Err(format!(
                "`@{name}` with nothing after it, so nothing was run; write the prompt after the name: `@{name} <the task>`"
            ));
        }
        let base = self.tools.clone();
        let profile = self.identity_profile(&name, &base).await?;
        Ok((Some(profile), rest))
    }

    /// The profile of the identity `name`, built once.
    async fn identity_profile(&mut self, name: &str, base: &ToolSet) -> Result<Profile, String> {
        let Some(router) = &mut self.router else {
            return Err("no identities in this run".into());
        };
        if let Some(p) = router.cache.get(name) {
            return Ok(p.clone());
        }
        let ident = identity::load(&router.cwd, name).map_err(|e| e.to_string())?;
        let mut args = router.args.clone();
        args.agent = Some(name.to_string());
        let resolved = LoopConfig::resolve(
            &args,
            &router.config,
            Some(&ident),
            &router.env,
            &Resumed::default(),
        )
        .map_err(|e| e.to_string())?;
        self.model
            .check(&resolved.model)
            .map_err(|e| format!("agent `{name}`: {e}"))?;
        let context_window = match resolved.context_window {
            Some(w) => Some(w),
            None => self.model.context_window(&resolved.model).await,
        };
        let mut tools = ToolSet::load(
            &resolved.tools,
            resolved.tools_explicit,
            &resolved.extra_tools,
            &router.cwd,
        )
        .await
        .map_err(|e| format!("agent `{name}`: {e}"))?;
        tools.share_mcp(base);
        if let Some(ws) = &router.workspace {
            tools.run_in(ws.clone(), &router.cwd);
        }
        let head = match resolved.system_prompt.as_deref() {
            Some(text) => Head::Replace(text),
            None => Head::Identity(&ident.prompt),
        };
        let system = Parts {
            cwd: &router.prompt_cwd,
            files: &router.project_files,
            memory: &router.memory,
            head,
            append: resolved.append_system_prompt.as_deref(),
            tool_names: &tools.names(),
            skills: &router.skills,
        }
        .build();
        let profile = Profile {
            agent: Some(name.to_string()),
            model: resolved.model,
            reasoning: resolved.reasoning,
            system,
            tools: Arc::new(tools),
            context_window,
        };
        router.cache.insert(name.to_string(), profile.clone());
        Ok(profile)
    }

    /// The `set_model` command: the run's model from the next prompt on,
    /// recorded by a `settings` event; a model that cannot be called is
    /// refused with an `error` event and the model stays.
    pub async fn set_model(&mut self, model: String) -> io::Result<()> {
        let model = model.trim().to_string();
        if let Err(why) = self.model.check(&model) {
            let message = format!(
                "set_model: `{model}` cannot be used, so the model stays {}: {why}",
                self.settings.model
            );
            return self.emitter.emit(AgentEvent::error(message));
        }
        let forced = self
            .router
            .as_ref()
            .and_then(|r| r.env.context_window.as_deref());
        self.settings.context_window = match forced.and_then(|w| w.parse().ok()) {
            Some(w) => Some(w),
            None => self.model.context_window(&model).await,
        };
        self.settings.model = model;
        self.emit_settings()
    }

    /// The `set_reasoning` command: the run's reasoning effort from the
    /// next prompt on, recorded by a `settings` event.
    pub fn set_reasoning(&mut self, level: Reasoning) -> io::Result<()> {
        self.settings.reasoning = Some(level);
        self.emit_settings()
    }

    /// Records the run's settings as they now are.
    pub fn emit_settings(&mut self) -> io::Result<()> {
        self.emitter.emit(AgentEvent::Settings {
            model: self.settings.model.clone(),
            reasoning: self.settings.reasoning,
            tools: self.settings.tool_set.clone(),
            agent: self.settings.agent.clone(),
            until: self.settings.checks.config.until.clone(),
        })
    }
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
