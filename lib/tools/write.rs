//! `write`: create a file or replace its whole content, atomically, keeping
//! an existing file's permissions and writing through symlinks.

use std::io::{self, IsTerminal, Read};

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::fileops::{
    check_hash, check_writable, hard_link_note, io_failed, resolve_target, write_failed,
};
use super::write_content;
use crate::fsutil::content_hash;
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};

/// Arguments of `write`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// Path to the file to create or overwrite, relative to the working directory or absolute. Missing parent directories are created.
    #[arg(value_name = "FILE")]
    #[schemars(description = "")]
    pub file_path: String,
    /// The full content of the file. On the command line, leave it out to read the content from stdin.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    #[schemars(required)]
    #[schemars(description = "")]
    pub content: Option<String>,
    /// The `hash` from the read (or the last write or edit) of this file. When given, the write is refused if the file has changed since.
    #[arg(long, value_name = "HASH")]
    #[serde(default)]
    #[schemars(
        description = "The hash read reported (details.hash): refuse if the file changed since."
    )]
    pub expected_hash: Option<String>,
    /// Set only on the command line, where the content may come from stdin; a JSON call must carry its content.
    #[arg(skip = true)]
    #[serde(skip)]
    #[schemars(skip)]
    pub command_line: bool,
}

/// The `write` tool.
pub struct WriteTool;

impl Tool for WriteTool {
    type Args = WriteArgs;
    const NAME: &'static str = "write";
    const BIN: &'static str = "ag-write";
    const ABOUT: &'static str = "Create or replace a file atomically";
    const LABEL: &'static str = "Write File";
    const DESCRIPTION: &'static str = "Create a new file or completely replace an existing file's content. \
Missing parent directories are created. The file is replaced atomically (never left half-written), keeps its \
permissions, and a symlink is written through to its target. Content wrapped whole in a ``` code fence is written \
without the fence, except to a Markdown or text file; so is content wrapped in a chat page's <pre><code> block, \
except to a file that may hold HTML. A .json or .toml file that parses is not replaced \
with text that does not (nothing is written, and the error says where it fails). A line that is one of the \
file's own with its escapes (`\\n`, `\\t`, `\\r`) sent as the characters they stand for is written as the file \
held it, and a file that ends in a line break keeps it. A new file's path that starts with the working directory's own name, \
when no folder of that name is in it and the rest of the path is a file, is refused with the path meant. To change part \
of a file, use edit instead.";
    const MODEL_DESCRIPTION: &'static str = "Create a file or replace all of it; parent directories are created. To change part of a file use edit.";

    fn run(ctx: &Context, args: WriteArgs) -> Result<ToolOutput, ToolError> {
        let watch = crate::tools::after_change::Watch::file(ctx, &args.file_path);
        let out = write(ctx, args)?;
        Ok(watch.finish(ctx, out))
    }
}

fn write(ctx: &Context, args: WriteArgs) -> Result<ToolOutput, ToolError> {
    let content = match args.content {
        Some(c) => c.into_bytes(),
        None if args.command_line => read_stdin()?,
        None => {
            return Err(ToolError::new(
                "write.missing_content",
                "`content` is missing: give the full text of the file (an empty string for an empty file).",
            ));
        }
    };
    if args.file_path.ends_with('/') {
        return Err(ToolError::new(
            "write.is_directory",
            format!(
                "`{}` names a directory; give the path of a file inside it.",
                args.file_path
            ),
        ));
    }
    let target = resolve_target(ctx, &args.file_path, "write")?;
    let shown = target.shown.as_str();
    let meta = match ctx.metadata(&target.real) {
        Ok(m) => Some(m),
        // A file where a parent directory should be: creating the
        // directories below says so clearly.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            None
        }
        Err(e) => return Err(io_failed("write.io", "inspect", shown, e)),
    };
    if let Some(m) = &meta {
        if m.is_dir() {
            return Err(ToolError::new(
                "write.is_directory",
                format!("`{shown}` is a directory; give the path of a file inside it."),
            ));
        }
        if !m.is_file() {
            return Err(ToolError::new(
                "write.not_a_file",
                format!(
                    "`{shown}` is not a regular file (a device, socket or pipe); write only writes regular files."
                ),
            ));
        }
        check_writable("write.read_only", &target.real, shown)?;
    }
    if meta.is_none() {
        super::fileops::refuse_repeated_working_directory(ctx, &target.path, shown)?;
    }
    // What the file holds, when it is small enough to compare with.
    let before = meta
        .as_ref()
        .filter(|m| m.is_file() && m.len() <= write_content::COMPARED_UP_TO)
        .and_then(|_| ctx.read(&target.real).ok());
    let prepared = write_content::prepare(shown, before.as_deref(), content);
    let content = &prepared.content;
    let expected = args.expected_hash.as_deref();
    if expected.is_some() {
        let actual = ctx
            .hash_file(&target.real)
            .map_err(|e| io_failed("write.io", "read", shown, e))?;
        check_hash("write.stale", shown, expected, actual.as_deref())?;
    }
    let holds = |text: &[u8]| {
        meta.as_ref().is_some_and(|m| {
            m.is_file()
                && m.len() == text.len() as u64
                && ctx.hash_file(&target.real).ok().flatten() == Some(content_hash(text))
        })
    };
    if let Some(unchanged) = prepared.unchanged(shown, holds) {
        return Ok(unchanged);
    }
    if let Some(m) = &meta
        && let Some(why) = write_content::elision_mark_over(shown, m.len(), content)
    {
        return Err(ToolError::new("write.elision_mark", why));
    }
    // A data file that would stop being one (see data_syntax).
    if let Some(m) = &meta
        && crate::tools::data_syntax::checked(shown, m.len())
        && let Ok(before) = ctx.read(&target.real)
        && let Some(why) = crate::tools::data_syntax::refused_write(shown, &before, content)
    {
        return Err(ToolError::new("write.breaks_format", why));
    }
    let mut new_directory = false;
    if let Some(dir) = target.real.parent()
        && !dir.as_os_str().is_empty()
        && !ctx.metadata(dir).is_ok_and(|m| m.is_dir())
    {
        new_directory = true;
        ctx.create_dirs(dir).map_err(|e| {
            if crate::tool_protocol::is_outside_root(&e) {
                return io_failed("write.io", "create", shown, e);
            }
            ToolError::new(
                "write.cannot_create_directory",
                format!(
                    "cannot create the directory `{}` for `{shown}`: {e}. Check that no part of the path is an existing file.",
                    ctx.show(dir)
                ),
            )
        })?;
    }
    ctx.write_atomic(&target.real, meta.as_ref(), content, || match expected {
        Some(h) => Ok(ctx.hash_file(&target.real)?.as_deref() == Some(h)),
        None => Ok(true),
    })
    .map_err(|e| write_failed("write.changed_on_disk", "write.io", shown, e))?;

    let (mut output, mut details) = write_content::written(shown, content, meta.is_none());
    prepared.note(
        before.as_deref(),
        meta.as_ref().map(|m| m.len()),
        &mut output,
        &mut details,
    );
    // A new file in directories made for it, when the project has a file
    // of that name: a weak model guesses the directories of the file it
    // was asked to change (`lib/x/slugify.js` for `slugify.js`), and the
    // file meant is still as it was.
    // So is one in a directory below a file of its name (`docs/README.md`
    // made while `README.md` is the file the request is about); a
    // namesake in another branch of the tree (`tests/__init__.py` beside
    // `src/pkg/__init__.py`) is no sign of that.
    if meta.is_none() {
        let elsewhere = if new_directory {
            super::walk::same_name_elsewhere(ctx, &target.real)
        } else {
            super::fileops::namesakes_above(ctx, &target.real)
        };
        if !elsewhere.is_empty() {
            let found: Vec<String> = elsewhere
                .iter()
                .map(|p| crate::tool_protocol::display_path(&ctx.cwd, p))
                .collect();
            let listed: Vec<String> = found.iter().map(|f| format!("`{f}`")).collect();
            let made = if new_directory {
                ", in directories made for it"
            } else {
                ""
            };
            output.push_str(&format!(
                "{made}; a file of that name is at {}, unchanged. If that is the file meant, change it there",
                listed.join(" and ")
            ));
            details["same_name_elsewhere"] = json!(found);
        }
    }
    // A new file whose name is one slip from a file beside it
    // (`styles.css` beside `style.css`): a weak model writes the name it
    // remembers, and the file meant is still as it was.
    if meta.is_none()
        && !new_directory
        && let Some((near, said)) = super::fileops::near_names_beside(&ctx.cwd, &target.real)
    {
        output.push_str(&format!("; {said}"));
        details["near_names_beside"] = json!(near);
    }
    if let Some(real) = target.link_note(ctx) {
        output.push_str(&format!(", through the symlink to {real}"));
        details["symlink_target"] = json!(real);
    }
    Ok(ToolOutput::new(output, details).with_notes(hard_link_note(meta.as_ref())))
}

fn read_stdin() -> Result<Vec<u8>, ToolError> {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(ToolError::new(
            "write.missing_content",
            "no content: give it with --content TEXT or pipe it on stdin (ag-write FILE < source)",
        ));
    }
    let mut buf = Vec::new();
    stdin.lock().read_to_end(&mut buf).map_err(|e| {
        ToolError::new(
            "write.io",
            format!("cannot read the content from stdin: {e}"),
        )
    })?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: WriteArgs,
    }

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn json_calls_cannot_read_stdin() {
        let args: WriteArgs = serde_json::from_value(json!({"file_path": "a"})).unwrap();
        assert!(!args.command_line);
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        let err = write(&ctx, args).unwrap_err();
        assert_eq!(err.code, "write.missing_content");
        assert!(
            serde_json::from_value::<WriteArgs>(
                json!({"file_path": "a", "content": "", "command_line": true})
            )
            .is_err()
        );
    }

    fn context(dir: &tempfile::TempDir) -> Context {
        Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        }
    }

    /// A model's call writing `content` to `path`.
    fn write_to(ctx: &Context, path: &str, content: &str) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs =
            serde_json::from_value(json!({"file_path": path, "content": content})).unwrap();
        write(ctx, args)
    }

    #[test]
    fn writing_the_text_a_file_holds_changes_nothing_and_says_so() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.md");
        std::fs::write(&path, "# Notes\n").unwrap();
        let before = std::fs::metadata(&path).unwrap();
        let ctx = context(&dir);
        let call = |content: &str| write_to(&ctx, "notes.md", content).unwrap();
        let same = call("# Notes\n");
        assert_eq!(
            same.output,
            "notes.md already holds exactly this text (8 bytes): nothing was changed"
        );
        assert_eq!(same.details["unchanged"], true);
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!(after.ino(), before.ino());
        // The same size, other text: written.
        let other = call("# Notez\n");
        assert!(
            other.output.starts_with("Overwrote notes.md"),
            "{}",
            other.output
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Notez\n");
    }

    #[test]
    fn a_json_config_is_not_overwritten_with_text_that_is_not_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cleanup.json");
        let config = "{\"max_age_days\": 30}\n";
        std::fs::write(&path, config).unwrap();
        let ctx = context(&dir);
        let call = |content: &str| write_to(&ctx, "cleanup.json", content);
        let err = call("max_age_hours").unwrap_err();
        assert_eq!(err.code, "write.breaks_format");
        assert!(
            err.message.contains("nothing was written"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), config);
        // JSON, with the change: written.
        call("{\"max_age_days\": 7}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"max_age_days\": 7}\n"
        );
    }

    #[test]
    fn escapes_the_model_sent_as_real_characters_are_written_as_the_file_held_them() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(&dir);
        let held = "const tick = () => {\n  process.stdout.write(`\\r${left} `);\n  console.log(\"\\nTime's up!\");\n};\n";
        std::fs::write(dir.path().join("timer.js"), held).unwrap();
        // The model's JSON had `\r` and `\n` for the file's `\\r` and
        // `\\n`, and it changed the function's name.
        let sent = "const tock = () => {\n  process.stdout.write(`\r${left} `);\n  console.log(\"\nTime's up!\");\n};\n";
        let out = write_to(&ctx, "timer.js", sent).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("timer.js")).unwrap(),
            held.replace("tick", "tock")
        );
        assert_eq!(
            out.details["escapes_restored"],
            json!([2, 3]),
            "{}",
            out.output
        );
        assert!(
            out.output
                .contains("lines 2 and 3 were the file's own lines"),
            "{}",
            out.output
        );
        // Sent again the same way, it is the text the file holds.
        let again = write_to(&ctx, "timer.js", sent).unwrap();
        assert_eq!(again.details["unchanged"], true, "{}", again.output);
    }

    #[test]
    fn a_file_keeps_its_last_line_break_when_the_content_leaves_it_out() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(&dir);
        let path = dir.path().join("backup.sh");
        std::fs::write(&path, "set -e\ntar -czf notes.tgz notes\n").unwrap();
        // Written back without its last line break: nothing changed.
        let same = write_to(&ctx, "backup.sh", "set -e\ntar -czf notes.tgz notes").unwrap();
        assert_eq!(same.details["unchanged"], true, "{}", same.output);
        // A real change keeps the file's ending, CRLF too, and says so.
        let out = write_to(&ctx, "backup.sh", "set -eu\ntar -czf notes.tgz notes").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "set -eu\ntar -czf notes.tgz notes\n"
        );
        assert_eq!(out.details["final_line_break_kept"], true);
        assert!(
            out.output.contains("the file's last one was kept"),
            "{}",
            out.output
        );
        std::fs::write(&path, "a\r\nb\r\n").unwrap();
        write_to(&ctx, "backup.sh", "a\r\nc").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\r\nc\r\n");
        // Content whose lines end in `\n` alone ends its last one so too.
        write_to(&ctx, "backup.sh", "a\nd").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nd\n");
        // A file without one, and a new file, get the content as sent.
        std::fs::write(&path, "x").unwrap();
        write_to(&ctx, "backup.sh", "y").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"y");
        let new = write_to(&ctx, "new.txt", "z").unwrap();
        assert_eq!(std::fs::read(dir.path().join("new.txt")).unwrap(), b"z");
        assert!(new.details.get("final_line_break_kept").is_none());
        // Emptying a file is meant.
        write_to(&ctx, "new.txt", "").unwrap();
        std::fs::write(&path, "x\n").unwrap();
        write_to(&ctx, "backup.sh", "").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_file_written_back_with_only_its_spacing_changed_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(&dir);
        std::fs::write(
            dir.path().join("b.sh"),
            "set -e\n\nmkdir -p out  \ntar c .\n",
        )
        .unwrap();
        let out = write_to(&ctx, "b.sh", "set -e\nmkdir -p out\ntar c .\n").unwrap();
        assert_eq!(out.details["spacing_only"], true, "{}", out.output);
        assert!(
            out.output.contains("only in blank lines and spaces"),
            "{}",
            out.output
        );
        let changed = write_to(&ctx, "b.sh", "set -e\nmkdir -p out\ntar cz .\n").unwrap();
        assert!(
            changed.details.get("spacing_only").is_none(),
            "{}",
            changed.output
        );
    }

    #[test]
    fn a_file_written_back_with_lines_lost_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(&dir);
        let held =
            "#!/usr/bin/env bash\n# notes: shows the last ten.\nset -e\ntail -n 10 notes.txt\n";
        std::fs::write(dir.path().join("notes.sh"), held).unwrap();
        let out = write_to(
            &ctx,
            "notes.sh",
            "# notes: shows the last ten.\n\nset -e\ntail -n 10 notes.txt",
        )
        .unwrap();
        assert_eq!(out.details["lines_taken_out"], json!([1]), "{}", out.output);
        assert!(
            out.output.contains("it only took out lines the file held (line 1 `#!/usr/bin/env bash`): nothing was added or changed"),
            "{}",
            out.output
        );
        // A line changed as well: an edit of its own, said nothing of.
        let changed = write_to(&ctx, "notes.sh", "set -e\ntail -n 20 notes.txt\n").unwrap();
        assert!(
            changed.details.get("lines_taken_out").is_none(),
            "{}",
            changed.output
        );
    }

    #[test]
    fn a_chat_code_fence_around_the_whole_content_is_not_written_into_code() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(&dir);
        let out = write_to(&ctx, "app.py", "```python\nprint('hi')\n```").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
            "print('hi')\n"
        );
        assert!(
            out.output
                .contains("code fence around the content was left out"),
            "{}",
            out.output
        );
        assert_eq!(out.details["unfenced"], true);
        // A README may hold a fence of its own: written as given, unless
        // the text inside is the file's own text.
        let readme = dir.path().join("README.md");
        std::fs::write(&readme, "# forum\n\n    createdb forum\n").unwrap();
        let same = write_to(
            &ctx,
            "README.md",
            "```markdown\n# forum\n\n    createdb forum\n```",
        )
        .unwrap();
        assert_eq!(same.details["unchanged"], true);
        assert!(
            same.output.contains("inside the ``` code fence"),
            "{}",
            same.output
        );
        assert_eq!(
            std::fs::read_to_string(&readme).unwrap(),
            "# forum\n\n    createdb forum\n"
        );
        // A chat page's block: left out of code, kept in a page.
        let pre = "<pre><code>const a = 1;\n</code></pre>\n";
        let js = write_to(&ctx, "a.js", pre).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.js")).unwrap(),
            "const a = 1;\n"
        );
        assert!(
            js.output
                .contains("the <pre><code> block around the content was left out")
        );
        // In a page, even around the page's own text, it is the page's.
        std::fs::write(dir.path().join("a.html"), "const a = 1;\n").unwrap();
        let page = write_to(&ctx, "a.html", pre).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.html")).unwrap(),
            pre
        );
        assert!(page.details.get("unchanged").is_none(), "{}", page.output);
        let block = "```sh\nmake\n```\n";
        write_to(&ctx, "README.md", block).unwrap();
        assert_eq!(std::fs::read_to_string(&readme).unwrap(), block);
    }
}
