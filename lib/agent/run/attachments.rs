//! Attachments as ag-loop takes them: `--attach FILE`, a prompt command's
//! `attachments` and `@path` mentions in a prompt's text, read by
//! [`crate::attach`] after the checks a `read` call of the same file would
//! pass. A file the sandbox keeps from the tools (its deny list: keys,
//! credentials, ag's own model table) is refused, and so is one a gate
//! denies reading; a gate that would ask is answered by the attaching
//! itself, since the person who attached the file is the one it would ask.
//! Images need a model that takes them: otherwise the prompt is refused
//! before any call, with what to do.
//!
//! `@name` at the very start of a prompt that names an agent identity is
//! that identity's (seed 003's routing), never a file mention.
//!
//! What `--show-context` adds after the attachments is prompt_context.rs's.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::runner::Agent;
use crate::agent::calls::gates::Verdict;
use crate::attach::{self, AttachError, Attached, Kind, mentions};
use crate::protocol::{AgentEvent, ContentBlock, GateRequest, UserContent};
use crate::tool_protocol::Context;

impl Agent {
    /// The prompt with its attachments (`paths`, then the files its text
    /// mentions) appended as blocks; the prompt unchanged without any. An
    /// error names the file and what to do; the prompt is then not run.
    pub async fn attach(
        &mut self,
        content: UserContent,
        paths: &[String],
    ) -> Result<UserContent, AttachError> {
        self.own_words = Some(
            content
                .texts()
                .first()
                .copied()
                .unwrap_or_default()
                .to_string(),
        );
        self.attach_with(content, paths, true).await
    }

    /// Checks that `paths` can be attached (as `--attach` is, before the
    /// first event), without a word about what the limits cut: that is
    /// said when they are attached.
    pub async fn check_attachments(&mut self, paths: &[String]) -> Result<(), AttachError> {
        let probe = UserContent::Blocks(Vec::new());
        self.attach_with(probe, paths, false).await.map(|_| ())
    }

    async fn attach_with(
        &mut self,
        content: UserContent,
        paths: &[String],
        say_cuts: bool,
    ) -> Result<UserContent, AttachError> {
        let dir = self.settings.attach_dir.clone();
        let mut wanted: Vec<String> = paths.to_vec();
        for text in content.texts() {
            wanted.extend(mentioned(text, &dir));
        }
        let show = say_cuts && self.settings.shows_context();
        if wanted.is_empty() && !show {
            return Ok(content);
        }
        let ctx = Context {
            cwd: dir.clone(),
            root: None,
        };
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut loaded: Vec<Attached> = Vec::new();
        let mut left = attach::MAX_TOTAL_CHARS;
        for shown in wanted {
            let path = ctx
                .resolve(&shown)
                .map_err(|e| AttachError::new(&shown, "attach.path", e.message))?;
            let real = path
                .canonicalize()
                .map_err(|e| open_error(&shown, &dir, &e))?;
            if seen.contains(&real) {
                continue;
            }
            seen.push(real.clone());
            self.may_read(&shown, &real).await?;
            let file = ctx
                .open_read(&path)
                .map_err(|e| open_error(&shown, &dir, &e))?;
            let budget = left.min(attach::MAX_TEXT_CHARS);
            let a = attach::load(file, &shown, budget)?;
            if budget == 0 && !matches!(a.kind, Kind::Image(_)) {
                return Err(AttachError::new(
                    &shown,
                    "attach.budget",
                    format!(
                        "the files before it already fill the {} characters of text a prompt may carry; attach fewer files, or parts of them",
                        attach::MAX_TOTAL_CHARS
                    ),
                ));
            }
            left -= a.chars.min(left);
            loaded.push(a);
            if loaded
                .iter()
                .filter(|a| matches!(a.kind, Kind::Image(_)))
                .count()
                > attach::MAX_IMAGES
            {
                return Err(AttachError::new(
                    &shown,
                    "attach.too_many",
                    format!(
                        "a prompt may carry at most {} images; attach fewer, or send them over several prompts",
                        attach::MAX_IMAGES
                    ),
                ));
            }
        }
        if let Some(image) = loaded.iter().find(|a| matches!(a.kind, Kind::Image(_)))
            && !self.model.takes_images(&self.settings.model)
        {
            return Err(AttachError::new(
                &image.shown,
                "attach.no_images",
                format!(
                    "the model `{}` does not take images (the model table or models.json says `images: false`); use a model that reads images (`-m`), or send the prompt without the image",
                    self.settings.model
                ),
            ));
        }
        for a in loaded.iter().filter(|_| say_cuts) {
            if let Some(cut) = &a.cut {
                // The block says it too; the person reads it here.
                crate::cli::note(
                    "ag-loop",
                    &format!("attachment `{}` was cut: {cut}", a.shown),
                );
            }
        }
        let context = if show {
            let named: Vec<String> = content
                .texts()
                .into_iter()
                .flat_map(|t| mentions::named(t, |p| dir.join(p).is_file()))
                .collect();
            self.context_blocks(named, &mut seen, left).await
        } else {
            Vec::new()
        };
        if loaded.is_empty() && context.is_empty() {
            return Ok(content);
        }
        let mut blocks = match content {
            UserContent::Text(t) => vec![ContentBlock::Text { text: t }],
            UserContent::Blocks(b) => b,
        };
        blocks.extend(loaded.into_iter().flat_map(|a| a.blocks));
        blocks.extend(context);
        Ok(UserContent::Blocks(blocks))
    }

    /// The directory of the sandbox's deny list that holds `real`.
    pub(super) fn sandbox_denies(&self, real: &Path) -> Option<PathBuf> {
        let sandbox = self.settings.sandbox.as_ref()?;
        sandbox
            .policy()
            .deny_read
            .iter()
            .filter_map(|d| d.canonicalize().ok())
            .find(|d| real.starts_with(d))
    }

    /// What the gates say to a `read` of `real`; their problems are said
    /// as error events.
    pub(super) async fn gate_verdict(&mut self, real: &Path) -> Verdict {
        let request = GateRequest {
            tool: "read".into(),
            arguments: json!({"file_path": real.display().to_string()}),
            cwd: self.settings.attach_dir.display().to_string(),
            session_id: self.settings.session_id.clone(),
            tool_call_id: None,
            interactive: self.settings.someone_answers(),
            sandbox: self.settings.sandbox.as_ref().map(|s| s.gate(None)),
        };
        let (verdict, problems) = self.settings.gates.check(request).await;
        for p in problems {
            let _ = self.emitter.emit(AgentEvent::error(p));
        }
        verdict
    }

    /// Whether the attached file may be read, by the rules a `read` call
    /// of it would meet: the sandbox's deny list, then the gates.
    async fn may_read(&mut self, shown: &str, real: &Path) -> Result<(), AttachError> {
        if let Some(d) = self.sandbox_denies(real) {
            return Err(AttachError::new(
                shown,
                "attach.denied",
                format!(
                    "the sandbox keeps `{}` from the tools (its deny list), so it is not sent to the model either; copy what the model needs into another file",
                    d.display()
                ),
            ));
        }
        if self.settings.gates.before.is_empty() {
            return Ok(());
        }
        match self.gate_verdict(real).await {
            Verdict::Deny(reason) => Err(AttachError::new(
                shown,
                "attach.denied",
                format!("a gate refuses reading it: {reason}"),
            )),
            Verdict::Allow(_) | Verdict::Ask(..) | Verdict::NotAsked(..) => Ok(()),
        }
    }
}

/// The files `text` mentions, relative to `dir`; an identity's `@name` at
/// the start is left alone.
fn mentioned(text: &str, dir: &Path) -> Vec<String> {
    let is_file = |p: &str| {
        let ctx = Context {
            cwd: dir.to_path_buf(),
            root: None,
        };
        ctx.resolve(p).is_ok_and(|path| path.is_file())
    };
    let start = text.len() - text.trim_start().len();
    mentions::find(text, is_file)
        .into_iter()
        .filter(|m| !(m.at == start && names_identity(&m.path, dir)))
        .map(|m| m.path)
        .collect()
}

/// Whether `name` is an agent identity's name here.
fn names_identity(name: &str, dir: &Path) -> bool {
    crate::agent::config::identity::list(dir)
        .iter()
        .any(|i| i.name == name)
}

/// Why a file could not be opened, in the words of what to do.
fn open_error(shown: &str, dir: &Path, e: &std::io::Error) -> AttachError {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => AttachError::new(
            shown,
            "attach.not_found",
            format!(
                "no such file (paths are taken from `{}`); check the name, or give the full path",
                dir.display()
            ),
        ),
        ErrorKind::PermissionDenied => AttachError::new(
            shown,
            "attach.unreadable",
            format!("it cannot be read here ({e}); attach a copy this user can read"),
        ),
        // Context::open_read refuses FIFOs, sockets and devices this way.
        ErrorKind::InvalidInput => AttachError::new(
            shown,
            "attach.not_a_file",
            "it is not a regular file (a FIFO, a socket or a device); attach a regular file",
        ),
        _ => AttachError::new(shown, "attach.io", format!("cannot open it: {e}")),
    }
}
