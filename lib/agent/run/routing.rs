//! Which profile answers a prompt: the run's own, or the identity that an
//! `@NAME` at its start names (see [`super::profile`]), swapped in for
//! that prompt.

use std::io;
use std::sync::Arc;

use super::profile::{Profile, mention};
use super::runner::Agent;
use crate::agent::calls::toolset::ToolSet;
use crate::agent::config::identity;
use crate::agent::config::prompt::{Head, Parts};
use crate::agent::setup::settings::{LoopConfig, Resumed};
use crate::protocol::{AgentEvent, Reasoning, UserContent};

/// A prompt that routing does not run, with a stable code (`prompt.*`)
/// for whoever must tell a refused prompt from a warning (ag-acp), and
/// what to do instead.
#[derive(Debug)]
pub struct Refusal {
    /// `prompt.unknown_identity`, `prompt.nothing_after_identity` or
    /// `prompt.identity_failed`.
    pub code: &'static str,
    pub message: String,
}

/// An identity that cannot answer: its file, settings, model or tools.
const IDENTITY_FAILED: &str = "prompt.identity_failed";

impl Refusal {
    fn failed(message: String) -> Refusal {
        Refusal {
            code: IDENTITY_FAILED,
            message,
        }
    }
}

impl Agent {
    /// The run's own profile, as it stands.
    fn own_profile(&self) -> Profile {
        Profile {
            agent: self.settings.agent.clone(),
            model: self.settings.model.clone(),
            reasoning: self.settings.reasoning,
            temperature: self.settings.temperature,
            system: self.settings.system.clone(),
            tools: self.tools.clone(),
            context_window: self.settings.context_window,
        }
    }

    /// Puts `p` in place of the current profile and returns the one it
    /// replaced.
    pub(in crate::agent) fn swap_profile(&mut self, p: Profile) -> Profile {
        let old = self.own_profile();
        self.settings.agent = p.agent;
        self.settings.model = p.model;
        self.settings.reasoning = p.reasoning;
        self.settings.temperature = p.temperature;
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
    ) -> Result<(Option<Profile>, UserContent), Refusal> {
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
            return Err(Refusal {
                code: "prompt.unknown_identity",
                message: format!(
                    "no agent identity `{name}` for `@{name}`, so the prompt was not run; the identities are {} (`ag-loop --list-agents`). Send it again with one of them, or start it with a space to send the `@` as text.",
                    known.join(", ")
                ),
            });
        }
        let empty = match &rest {
            UserContent::Text(t) => t.trim().is_empty(),
            UserContent::Blocks(b) => b.len() == 1 && rest.text().trim().is_empty(),
        };
        if empty {
            return Err(Refusal {
                code: "prompt.nothing_after_identity",
                message: format!(
                    "`@{name}` with nothing after it, so nothing was run; write the prompt after the name: `@{name} <the task>`"
                ),
            });
        }
        let base = self.tools.clone();
        let profile = self
            .identity_profile(&name, &base)
            .await
            .map_err(Refusal::failed)?;
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
        let names = crate::agent::config::named_sets::for_window(
            &resolved.tools,
            resolved.tool_set.is_none(),
            context_window,
        );
        let mut tools = ToolSet::load(
            &names,
            resolved.tools_explicit,
            &resolved.extra_tools,
            &router.cwd,
        )
        .await
        .map_err(|e| format!("agent `{name}`: {e}"))?;
        tools.no_deletes = crate::agent::config::named_sets::small_window(
            resolved.tool_set.is_none(),
            context_window,
        );
        tools.share_mcp(base);
        if let Some(ws) = &router.workspace {
            tools.run_in(ws.clone(), &router.cwd);
        }
        if let Some(d) = &router.delegate
            && resolved
                .tools
                .iter()
                .any(|t| t == crate::agent::delegation::NAME)
        {
            tools.add_agent(d.for_profile(&resolved.tools, &resolved.model));
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
            temperature: resolved.temperature,
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
