//! What a successful change adds to its result. ag-write, ag-edit and
//! ag-patch run the same checks once a file has changed, and this is the
//! one place that knows them: the data file's syntax ([`data_syntax`],
//! in-process and always on), whether git ignores a file the change
//! created, and the new errors its language server finds ([`after_edit`],
//! on in ag-loop and ag-mcp). A tool takes the file's text before the
//! change, makes it, then finishes here.

use std::path::{Path, PathBuf};

use super::data_syntax;
use super::lsp::after_edit;
use crate::tool_protocol::{Context, Note, ToolOutput};

/// One file about to be changed by ag-write or ag-edit, with what each
/// check needs from before the change.
pub struct Watch {
    syntax: Option<data_syntax::Watch>,
    server: Option<after_edit::Watch>,
    /// The file as resolved and as shown, and whether it existed before.
    target: Option<(PathBuf, String, bool)>,
}

impl Watch {
    /// Before a change of `path`, as the call gives it.
    pub fn file(ctx: &Context, path: &str) -> Watch {
        let target = ctx.resolve(path).ok().map(|real| {
            let shown = ctx.show(&real);
            let existed = ctx.metadata(&real).is_ok();
            (real, shown, existed)
        });
        Watch {
            syntax: data_syntax::Watch::file(ctx, path),
            server: after_edit::Watch::file(ctx, path),
            target,
        }
    }

    /// A change refused: `e` with what the file's syntax says of it now
    /// (see [`data_syntax::Watch::on_refusal`]).
    pub fn refused(
        &self,
        ctx: &Context,
        e: crate::tool_protocol::ToolError,
    ) -> crate::tool_protocol::ToolError {
        match &self.syntax {
            Some(s) => s.on_refusal(ctx, e),
            None => e,
        }
    }

    /// After the change: `out` with what the checks found.
    pub fn finish(self, ctx: &Context, out: ToolOutput) -> ToolOutput {
        let mut out = match self.syntax {
            Some(s) => s.finish(ctx, out),
            None => out,
        };
        // A file the change created, or one written again with the text it
        // held: a weak model asked to get an ignored file into git wrote
        // its text back five times, each told only that nothing changed.
        let unchanged = out.details["unchanged"] == serde_json::json!(true);
        if let Some((real, shown, existed)) = &self.target
            && (!existed || unchanged)
            && ctx.metadata(real).is_ok()
            && let Some(note) = ignored(ctx, real, shown)
        {
            out = out.with_note(note);
        }
        match self.server {
            Some(w) => w.finish(out),
            None => out,
        }
    }
}

/// A note for a file the change created, or wrote back unchanged, that
/// git ignores: a weak model asked to fix a project's set-up for the next
/// person wrote the ignored `.env` and never the example file others get;
/// what is ignored stays on this machine.
fn ignored(ctx: &Context, real: &Path, shown: &str) -> Option<Note> {
    let rule = super::git::cmd::ignore_rule(&ctx.cwd, real)?;
    Some(Note::notice(format!(
        "`{shown}` is ignored by git ({rule}): it stays on this machine, and no commit carries it to anyone else."
    )))
}

/// A file a change wrote, whose texts before and after the tool still
/// holds (ag-patch stages them), so nothing is read again.
pub struct Changed<'a> {
    pub real: &'a Path,
    pub shown: &'a str,
    /// `None`: the change created it.
    pub before: Option<&'a [u8]>,
    pub after: &'a [u8],
}

/// After a change of the files `changed`: `out` with what the checks
/// found. A file that is not UTF-8 text is left out of the server's check.
pub fn known(ctx: &Context, mut out: ToolOutput, changed: &[Changed]) -> ToolOutput {
    for c in changed {
        if let Some(note) = data_syntax::broken(c.shown, c.before, c.after) {
            out = out.with_note(note);
        }
        if c.before.is_none()
            && let Some(note) = ignored(ctx, c.real, c.shown)
        {
            out = out.with_note(note);
        }
    }
    let texts = changed.iter().filter_map(|c| {
        let before = match c.before {
            Some(b) => Some(String::from_utf8(b.to_vec()).ok()?),
            None => None,
        };
        Some((c.real.to_path_buf(), before))
    });
    match after_edit::Watch::known(ctx, texts) {
        Some(w) => w.finish(out),
        None => out,
    }
}
