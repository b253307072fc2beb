//! `--editor-fs` for `edit`: ag-edit's matching, batches, stale check and
//! diff, on the editor's buffer (`fs/read_text_file`, then
//! `fs/write_text_file`) rather than the file on disk, so that an unsaved
//! buffer the model read can be edited. The shim and the socket are
//! `editor_fs`'s.

use std::fs::Metadata;

use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};
use crate::tools::edit::{self, EditArgs, EditTool, FileIo};
use crate::tools::fileops::Target;

/// The buffer of a file in the editor.
struct Buffer;

impl FileIo for Buffer {
    fn load(
        &self,
        ctx: &Context,
        target: &Target,
    ) -> Result<(Option<Metadata>, Vec<u8>), ToolError> {
        // A directory, an image, a binary file: ag-edit's own refusals.
        if crate::tools::read::not_text(ctx, &target.real) {
            return edit::load(ctx, target).map(|(m, c)| (Some(m), c));
        }
        match super::editor_link::ask_read(&target.real) {
            Ok(text) => Ok((None, text.into_bytes())),
            // Not in the editor and not on disk: ag-edit's message, with
            // the names that are there.
            Err(_) if ctx.metadata(&target.real).is_err() => {
                edit::load(ctx, target).map(|(m, c)| (Some(m), c))
            }
            Err(e) => Err(ToolError::new(
                "edit.editor",
                format!("the editor could not read `{}`: {e}", target.shown),
            )),
        }
    }

    fn commit(
        &self,
        _ctx: &Context,
        target: &Target,
        _meta: Option<&Metadata>,
        original: &[u8],
        new: &[u8],
    ) -> Result<(), ToolError> {
        let shown = &target.shown;
        let editor = |what: &str, e: String| {
            ToolError::new(
                "edit.editor",
                format!("the editor could not {what} `{shown}`: {e}; nothing was written"),
            )
        };
        // The buffer may have changed while the edit was worked out (the
        // person typing): then theirs is kept, as ag-edit keeps a file
        // changed on disk meanwhile.
        let now = super::editor_link::ask_read(&target.real).map_err(|e| editor("read", e))?;
        if now.as_bytes() != original {
            return Err(ToolError::new(
                "edit.changed_in_editor",
                format!(
                    "`{shown}` changed in the editor while the edit was made; nothing was written. Read it again and redo the edit."
                ),
            ));
        }
        let text = String::from_utf8(new.to_vec()).map_err(|_| {
            ToolError::new(
                "edit.not_text",
                format!("the edit would make `{shown}` invalid UTF-8, which the editor cannot hold; nothing was written"),
            )
        })?;
        super::editor_link::ask_write(&target.real, text).map_err(|e| editor("write", e))
    }
}

/// `edit`, on the editor's buffer.
pub struct EditorEdit;

impl Tool for EditorEdit {
    type Args = EditArgs;
    const NAME: &'static str = EditTool::NAME;
    const BIN: &'static str = EditTool::BIN;
    const ABOUT: &'static str = EditTool::ABOUT;
    const LABEL: &'static str = EditTool::LABEL;
    const DESCRIPTION: &'static str = EditTool::DESCRIPTION;
    const MODEL_DESCRIPTION: &'static str = EditTool::MODEL_DESCRIPTION;
    const PROCESS_FLAGS: &'static [&'static str] = EditTool::PROCESS_FLAGS;

    fn run(ctx: &Context, mut args: EditArgs) -> Result<ToolOutput, ToolError> {
        let meant = crate::tools::fileops::take_path_meant(ctx, &mut args.file_path);
        edit::edit_with(ctx, args, &Buffer).map(|out| out.with_notes(meant))
    }
}
