//! `read`: a text file with line numbers like `cat -n`, paginated by line,
//! streamed so that memory stays small whatever the file's size; images
//! returned as image blocks.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use base64::Engine;
use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::fsutil::{ContentHasher, similar_names};
use crate::protocol::ImageData;
use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};

/// Lines shown when no limit is given, and the largest limit accepted.
pub const MAX_LINES: u64 = 5000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Bytes of numbered output before the rest is left for another call.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Bytes examined for a NUL to decide that a file is binary.
const BINARY_PROBE: usize = 8192;
/// Largest image returned as an image block.
const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;
/// Bytes of a long line kept in memory: enough for MAX_LINE_CHARS characters.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4;

/// Arguments of `read`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Path to the file to read, relative to the working directory or absolute.
    #[arg(value_name = "FILE")]
    #[schemars(description = "")]
    pub file_path: String,
    /// Line number to start reading from (1-indexed). Omit to read from the beginning.
    #[arg(long)]
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[schemars(description = "First line, from 1.")]
    pub offset: Option<u64>,
    /// Maximum number of lines to read (at most 5000). Omit to read up to 5000 lines.
    #[arg(long)]
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    #[schemars(description = "")]
    pub limit: Option<u64>,
}

/// The `read` tool.
pub struct ReadTool;

impl Tool for ReadTool {
    type Args = ReadArgs;
    const NAME: &'static str = "read";
    const BIN: &'static str = "ag-read";
    const ABOUT: &'static str = "Read a text file with line numbers, paginated";
    const LABEL: &'static str = "Read File";
    const DESCRIPTION: &'static str = "Read a text file, shown with line numbers like `cat -n`. \
Reads up to 5000 lines; for longer files the output says so, and you read on with `offset` and `limit` \
(for example offset=5001, limit=5000). Lines longer than 2000 characters are cut. \
PNG, JPEG, GIF and WebP files are returned as images.";
    const MODEL_DESCRIPTION: &'static str = "Read a text file, numbered like cat -n; a long one in pages (the output says how to read on). Images come back as images.";

    fn run(ctx: &Context, mut args: ReadArgs) -> Result<ToolOutput, ToolError> {
        let meant = super::fileops::take_path_meant(ctx, &mut args.file_path);
        read_within(ctx, &args, crate::tools::budget::from_env()).map(|out| out.with_notes(meant))
    }
}

#[cfg(test)]
fn read(ctx: &Context, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
    read_within(ctx, args, None)
}

/// Reads a file; with a `budget` (characters, from the caller) the page
/// stops at the last whole line that fits, and says where to read on.
fn read_within(
    ctx: &Context,
    args: &ReadArgs,
    budget: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let path = ctx.resolve(&args.file_path)?;
    let shown = ctx.show(&path);
    check_window(args)?;
    // Opened before anything else is looked at: under --root the open is
    // the check, and a FIFO is refused here without blocking.
    let mut file = ctx
        .open_read(&path)
        .map_err(|e| open_error(ctx, &path, &shown, e))?;
    let meta = file
        .metadata()
        .map_err(|e| open_error(ctx, &path, &shown, e))?;
    if meta.is_dir() {
        return Err(ToolError::new(
            "read.is_directory",
            format!(
                "`{shown}` is a directory, not a file. Use the ls tool to list it (ls path=\"{shown}\")."
            ),
        ));
    }
    if let Some(mime) = image_type(&path) {
        return read_image(&mut file, &shown, mime, meta.len());
    }
    page(&shown, args, &mut file, budget)
}

/// Whether `path` is something `read` shows other than as text: a
/// directory, an image or a binary file (a NUL in its first bytes). Text
/// from elsewhere (an editor's buffer) stands in only for text files.
pub fn not_text(ctx: &Context, path: &Path) -> bool {
    let Ok(mut file) = ctx.open_read(path) else {
        return false;
    };
    if file.metadata().is_ok_and(|m| m.is_dir()) || image_type(path).is_some() {
        return true;
    }
    let mut head = Vec::with_capacity(BINARY_PROBE);
    let _ = (&mut file).take(BINARY_PROBE as u64).read_to_end(&mut head);
    memchr::memchr(0, &head).is_some()
}

/// Checks `offset` and `limit` before anything is read.
fn check_window(args: &ReadArgs) -> Result<(), ToolError> {
    if args.limit == Some(0) || args.limit.is_some_and(|l| l > MAX_LINES) {
        return Err(ToolError::new(
            "read.bad_limit",
            format!(
                "`limit` must be between 1 and {MAX_LINES}; read larger files in several calls"
            ),
        ));
    }
    if args.offset == Some(0) {
        return Err(ToolError::new(
            "read.bad_offset",
            "`offset` is 1-indexed: use offset=1 for the first line",
        ));
    }
    Ok(())
}

/// The page of text that `read` shows for `args`, from text that comes
/// from elsewhere than a file on disk (an editor's buffer, see
/// `crate::acp::editor_fs`): numbered, paginated and noted exactly as a
/// file is. `shown` is the path as the model sees it.
pub fn page_of_text(
    shown: &str,
    args: &ReadArgs,
    text: &[u8],
    budget: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    check_window(args)?;
    page(shown, args, &mut &*text, budget)
}

/// Numbers and pages what `source` holds (see [`render`]).
fn page(
    shown: &str,
    args: &ReadArgs,
    source: &mut dyn Read,
    budget: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(MAX_LINES);
    let max_chars = budget.map_or(usize::MAX, crate::tools::budget::for_body);
    let scan = scan(source, offset - 1, limit, max_chars)
        .map_err(|e| ToolError::new("read.io", format!("cannot read `{shown}`: {e}")))?;
    if scan.binary {
        return Err(ToolError::new(
            "read.binary",
            format!(
                "Cannot read binary file '{shown}'. Use bash tool if you need to inspect: bash(command=\"file {shown}\") or bash(command=\"xxd {shown} | head\")"
            ),
        ));
    }
    let total = scan.total_lines;
    if offset > 1 && offset > total {
        return Err(ToolError::new(
            "read.offset_past_end",
            format!(
                "offset {offset} is past the end of `{shown}`, which has {total} line{}. Use an offset from 1 to {}.",
                plural(total),
                total.max(1)
            ),
        )
        .with_details(json!({"file_path": shown, "total_lines": total})));
    }
    Ok(render(shown, args, offset, scan, budget))
}

fn render(
    shown: &str,
    args: &ReadArgs,
    offset: u64,
    scan: Scan,
    budget: Option<usize>,
) -> ToolOutput {
    let total = scan.total_lines;
    let read = scan.lines.len() as u64;
    let last = offset + read.saturating_sub(1);
    let more_after = offset + read <= total;
    // An explicit limit that stops before the end is what was asked for;
    // only the default limit and the output cap truncate.
    let truncated = scan.capped || scan.over_budget || (more_after && args.limit.is_none());
    let width = 6.max(digits(last));
    let mut body = String::with_capacity(scan.bytes + scan.lines.len() * (width + 1));
    for (i, line) in scan.lines.iter().enumerate() {
        let n = offset + i as u64;
        body.push_str(&format!("{n:>width$}\t"));
        body.push_str(line);
        body.push('\n');
    }
    let mut notes = Vec::new();
    if truncated {
        let next = last + 1;
        if scan.over_budget {
            notes.push(Note::plain(format!(
                "Showing lines {offset}-{last} of {total}: that is what fits in the caller's output budget ({} characters). Use offset={next} to read on.",
                budget.unwrap_or_default()
            )));
        } else if scan.capped {
            notes.push(Note::plain(format!(
                "Output capped at {} KiB: showing lines {offset}-{last} of {total}. Use offset={next} to read on.",
                MAX_OUTPUT_BYTES / 1024
            )));
        } else {
            notes.push(Note::warning(format!(
                "File has {total} lines, showing {}{read}. Use offset and limit parameters to read more (next: offset={next}, limit={MAX_LINES}).",
                if offset == 1 { "first " } else { "" },
            )));
        }
    } else if more_after {
        // Not cut short, but a reader that guessed its limit (a small
        // model sends `limit: 10` to a 23-line file) must still learn
        // that the file goes on, or it edits what it never saw.
        notes.push(Note::plain(format!(
            "Lines {offset}-{last} of {total}, as `limit` asked: {} more after line {last}. Use offset={} to read on, or leave out limit for the whole file.",
            total - last,
            last + 1
        )));
    }
    if scan.cut_lines > 0 {
        notes.push(Note::plain(format!(
            "{} line{} longer than {MAX_LINE_CHARS} characters {} cut; use bash (for example `cut -c2001-4000`) to see the rest.",
            scan.cut_lines,
            plural(scan.cut_lines),
            if scan.cut_lines == 1 { "was" } else { "were" }
        )));
    }
    if scan.lossy {
        notes.push(Note::plain(
            "The file is not valid UTF-8; invalid bytes are shown as U+FFFD (\u{fffd}).",
        ));
    }
    if total == 0 {
        notes.push(Note::plain(format!("`{shown}` is empty.")));
    }
    let mut details = json!({
        "file_path": shown,
        "total_lines": total,
        "lines_read": read,
        "offset": offset,
        "truncated": truncated,
        "hash": scan.hash,
        "size": scan.size,
    });
    if truncated {
        details["next_offset"] = json!(last + 1);
    }
    if scan.lossy {
        details["lossy"] = json!(true);
    }
    if scan.cut_lines > 0 {
        details["cut_lines"] = json!(scan.cut_lines);
    }
    let out = ToolOutput::new(body, details).with_notes(notes);
    // A read cut short by the default limit says so first, so that the
    // model does not take the lines for the whole file; likewise a limit
    // that stopped before the end.
    if (truncated && !scan.capped) || (more_after && args.limit.is_some()) {
        // (A page cut by the budget is such a read too.)
        out.notes_first()
    } else {
        out
    }
}

/// What one pass over the file found.
struct Scan {
    total_lines: u64,
    lines: Vec<String>,
    /// Bytes of text kept in `lines`.
    bytes: usize,
    capped: bool,
    /// The page stopped where the caller's budget was full.
    over_budget: bool,
    cut_lines: u64,
    lossy: bool,
    binary: bool,
    hash: String,
    size: u64,
}

/// One pass: counts lines, hashes the content, keeps the lines of the
/// window `[skip, skip+limit)`; the rest of the file is only counted.
/// `max_chars` bounds the numbered text kept (line numbers included).
fn scan(file: &mut dyn Read, skip: u64, limit: u64, max_chars: usize) -> io::Result<Scan> {
    // 64 KiB: the chunk is still in the CPU's cache when it is hashed and
    // counted after the copy from the page cache; 256 KiB chunks made paging
    // deep into a 440 MB file a quarter slower (measured against `wc -l`).
    let mut buf = vec![0u8; 64 * 1024];
    let mut hasher = ContentHasher::new();
    let mut st = Window {
        skip,
        end: skip + limit,
        line_no: 0,
        current: Vec::new(),
        current_len: 0,
        lines: Vec::new(),
        bytes: 0,
        capped: false,
        chars: 0,
        max_chars,
        over_budget: false,
        cut_lines: 0,
        lossy: false,
    };
    let mut size = 0u64;
    let mut last_byte = b'\n';
    let mut probed = 0usize;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        if probed < BINARY_PROBE {
            let look = (BINARY_PROBE - probed).min(n);
            if memchr::memchr(0, &chunk[..look]).is_some() {
                return Ok(Scan::binary());
            }
            probed += look;
        }
        hasher.update(chunk);
        size += n as u64;
        last_byte = chunk[n - 1];
        st.feed(chunk);
    }
    // A last line without a newline still counts.
    if size > 0 && last_byte != b'\n' {
        st.end_line();
    }
    Ok(Scan {
        total_lines: st.line_no,
        lines: st.lines,
        bytes: st.bytes,
        capped: st.capped,
        over_budget: st.over_budget,
        cut_lines: st.cut_lines,
        lossy: st.lossy,
        binary: false,
        hash: hasher.finish(),
        size,
    })
}

impl Scan {
    fn binary() -> Scan {
        Scan {
            total_lines: 0,
            lines: Vec::new(),
            bytes: 0,
            capped: false,
            over_budget: false,
            cut_lines: 0,
            lossy: false,
            binary: true,
            hash: String::new(),
            size: 0,
        }
    }
}

struct Window {
    skip: u64,
    end: u64,
    /// Index of the line being read (0-based), which is also lines seen so far.
    line_no: u64,
    current: Vec<u8>,
    /// Full length in bytes of the current line, kept or not.
    current_len: usize,
    lines: Vec<String>,
    bytes: usize,
    capped: bool,
    /// Characters of numbered output kept, and the most allowed.
    chars: usize,
    max_chars: usize,
    over_budget: bool,
    cut_lines: u64,
    lossy: bool,
}

impl Window {
    fn collecting(&self) -> bool {
        self.line_no >= self.skip && self.line_no < self.end && !self.capped && !self.over_budget
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            if self.collecting() {
                match memchr::memchr(b'\n', chunk) {
                    Some(i) => {
                        self.keep(&chunk[..i]);
                        self.end_line();
                        chunk = &chunk[i + 1..];
                    }
                    None => {
                        self.keep(chunk);
                        return;
                    }
                }
            } else if self.line_no < self.skip {
                let wanted = (self.skip - self.line_no) as usize;
                let count = bytecount::count(chunk, b'\n');
                if count < wanted {
                    self.line_no += count as u64;
                    return;
                }
                // Jump just past the newline that ends the last skipped line.
                match memchr::memchr_iter(b'\n', chunk).nth(wanted - 1) {
                    Some(i) => {
                        self.line_no += wanted as u64;
                        chunk = &chunk[i + 1..];
                    }
                    None => return,
                }
            } else {
                self.line_no += bytecount::count(chunk, b'\n') as u64;
                return;
            }
        }
    }

    fn keep(&mut self, part: &[u8]) {
        self.current_len += part.len();
        let room = LINE_KEEP_BYTES.saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&part[..part.len().min(room)]);
    }

    fn end_line(&mut self) {
        if self.collecting() {
            let mut raw = std::mem::take(&mut self.current);
            if raw.last() == Some(&b'\r') && self.current_len == raw.len() {
                raw.pop();
            }
            let text = match String::from_utf8(raw) {
                Ok(s) => s,
                Err(e) => {
                    let bytes = e.into_bytes();
                    // A multi-byte character cut by the keep limit is not a fault of the file.
                    let valid_prefix = std::str::from_utf8(&bytes).map_err(|e| e.valid_up_to());
                    if self.current_len == bytes.len()
                        || matches!(valid_prefix, Err(v) if bytes.len() - v > 3)
                    {
                        self.lossy = true;
                    }
                    String::from_utf8_lossy(&bytes).into_owned()
                }
            };
            let text = self.cut(text);
            // The number column is as wide as the window's last line
            // number can make it, the tab and newline beside it.
            let cost = text.chars().count() + 6.max(digits(self.end)) + 2;
            if self.bytes + text.len() > MAX_OUTPUT_BYTES && !self.lines.is_empty() {
                self.capped = true;
            } else if self.chars + cost > self.max_chars && !self.lines.is_empty() {
                self.over_budget = true;
            } else {
                self.bytes += text.len();
                self.chars += cost;
                self.lines.push(text);
            }
        }
        self.current.clear();
        self.current_len = 0;
        self.line_no += 1;
    }

    fn cut(&mut self, text: String) -> String {
        let chars = text.chars().count();
        if chars <= MAX_LINE_CHARS && self.current_len <= LINE_KEEP_BYTES {
            return text;
        }
        self.cut_lines += 1;
        let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
        format!(
            "{kept}… [line cut: {} bytes in all, first {MAX_LINE_CHARS} characters shown]",
            self.current_len
        )
    }
}

fn read_image(
    file: &mut File,
    shown: &str,
    mime: &'static str,
    len: u64,
) -> Result<ToolOutput, ToolError> {
    if len > MAX_IMAGE_BYTES {
        return Err(ToolError::new(
            "read.image_too_large",
            format!(
                "`{shown}` is an image of {len} bytes, more than the {} MiB a model can take; shrink it first, for example with bash(command=\"convert {shown} -resize 1024x1024 small.png\")",
                MAX_IMAGE_BYTES / 1024 / 1024
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::new("read.io", format!("cannot read `{shown}`: {e}")))?;
    let hash = crate::fsutil::content_hash(&bytes);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let mut out = ToolOutput::new(
        format!("Read image file `{shown}` [{mime}, {} bytes]", bytes.len()),
        json!({"file_path": shown, "image": true, "mime_type": mime, "size": bytes.len(), "hash": hash}),
    );
    out.images.push(ImageData {
        data,
        mime_type: mime.to_string(),
    });
    Ok(out)
}

fn image_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

fn open_error(ctx: &Context, path: &Path, shown: &str, err: io::Error) -> ToolError {
    if let Some(problem) = crate::tool_protocol::PathProblem::of(&err) {
        return match problem {
            crate::tool_protocol::PathProblem::Outside(msg) => {
                ToolError::new("path.outside_root", format!("{msg}; use a path inside it"))
            }
            crate::tool_protocol::PathProblem::NotAFile(msg) => ToolError::new(
                "read.not_a_file",
                format!(
                    "{msg}: read reads regular files only. To see what it is, use bash (ls -l {shown})."
                ),
            ),
        };
    }
    match err.kind() {
        io::ErrorKind::NotFound => {
            let near = similar_names(path);
            let elsewhere = if near.is_empty() {
                super::walk::same_name_elsewhere(ctx, path)
            } else {
                Vec::new()
            };
            if !elsewhere.is_empty() {
                let found: Vec<String> = elsewhere
                    .iter()
                    .map(|p| crate::tool_protocol::display_path(&ctx.cwd, p))
                    .collect();
                let listed: Vec<String> = found.iter().map(|f| format!("`{f}`")).collect();
                return ToolError::new(
                    "read.not_found",
                    format!(
                        "File not found: `{shown}`. A file of that name is at {}: use that path.",
                        listed.join(" and ")
                    ),
                )
                .with_details(json!({"file_path": shown, "suggestions": found}));
            }
            let hint = if near.is_empty() {
                "Check the path, or find the file with the find tool.".to_string()
            } else {
                let dir = path.parent().map(|d| d.to_path_buf()).unwrap_or_default();
                let names: Vec<String> = near
                    .iter()
                    .map(|n| {
                        format!(
                            "`{}`",
                            crate::tool_protocol::display_path(
                                &std::env::current_dir().unwrap_or_default(),
                                &dir.join(n),
                            )
                        )
                    })
                    .collect();
                format!("Did you mean {}?", names.join(" or "))
            };
            ToolError::new(
                "read.not_found",
                format!("File not found: `{shown}`. {hint}"),
            )
            .with_details(json!({"file_path": shown, "suggestions": near}))
        }
        io::ErrorKind::PermissionDenied => ToolError::new(
            "read.permission_denied",
            format!("Permission denied reading `{shown}`."),
        ),
        _ => ToolError::new("read.io", format!("cannot open `{shown}`: {err}")),
    }
}

fn digits(n: u64) -> usize {
    n.max(1).ilog10() as usize + 1
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &Path) -> Context {
        Context {
            cwd: dir.to_path_buf(),
            root: None,
        }
    }

    fn args(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadArgs {
        ReadArgs {
            file_path: path.into(),
            offset,
            limit,
        }
    }

    #[test]
    fn text_from_elsewhere_is_paged_as_the_same_file_would_be() {
        let dir = tempfile::tempdir().unwrap();
        let text = "one\ntwo\r\nthree\n".repeat(3000);
        std::fs::write(dir.path().join("f.txt"), &text).unwrap();
        for (offset, limit) in [(None, None), (Some(2), Some(3)), (Some(9000), None)] {
            let a = args("f.txt", offset, limit);
            let file = read(&ctx(dir.path()), &a).map(|o| {
                let d = o.details.clone();
                (o.into_text(), d)
            });
            let page = page_of_text("f.txt", &a, text.as_bytes(), None).map(|o| {
                let d = o.details.clone();
                (o.into_text(), d)
            });
            match (file, page) {
                (Ok(f), Ok(p)) => assert_eq!(f, p),
                (Err(f), Err(p)) => assert_eq!(f.message, p.message),
                (f, p) => panic!("{f:?} / {p:?}"),
            }
        }
        let bad = page_of_text("f.txt", &args("f.txt", Some(0), None), b"x", None);
        assert_eq!(bad.unwrap_err().code, "read.bad_offset");
        let dir_ctx = ctx(dir.path());
        assert!(!not_text(&dir_ctx, &dir.path().join("f.txt")));
        assert!(not_text(&dir_ctx, dir.path()));
        std::fs::write(dir.path().join("b.bin"), b"a\0b").unwrap();
        assert!(not_text(&dir_ctx, &dir.path().join("b.bin")));
        assert!(!not_text(&dir_ctx, &dir.path().join("missing")));
    }

    #[test]
    fn window_across_small_chunks() {
        let mut w = Window {
            skip: 2,
            end: 4,
            line_no: 0,
            current: Vec::new(),
            current_len: 0,
            lines: Vec::new(),
            bytes: 0,
            capped: false,
            chars: 0,
            max_chars: usize::MAX,
            over_budget: false,
            cut_lines: 0,
            lossy: false,
        };
        for b in b"one\ntwo\nthree\r\nfour\nfive\n".chunks(3) {
            w.feed(b);
        }
        assert_eq!(w.lines, vec!["three", "four"]);
        assert_eq!(w.line_no, 5);
    }

    #[test]
    fn numbered_and_paginated() {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("f.txt"), body).unwrap();
        let out = read(&ctx(dir.path()), &args("f.txt", Some(10), Some(2))).unwrap();
        assert_eq!(out.output, "    10\tline 10\n    11\tline 11\n");
        assert_eq!(out.details["total_lines"], 12);
        assert_eq!(out.details["truncated"], false);
        // A limit that stops before the end says that the file goes on.
        assert!(
            out.into_text().starts_with(
                "Lines 10-11 of 12, as `limit` asked: 1 more after line 11. Use offset=12 to read on, or leave out limit for the whole file.\n\n    10\tline 10\n"
            ),
        );
        let to_end = read(&ctx(dir.path()), &args("f.txt", Some(10), Some(3))).unwrap();
        assert_eq!(to_end.clone().into_text(), to_end.output);
        let err = read(&ctx(dir.path()), &args("f.txt", Some(13), None)).unwrap_err();
        assert_eq!(err.code, "read.offset_past_end");
        assert!(err.message.contains("12 lines"), "{}", err.message);
    }

    #[test]
    fn a_budget_ends_the_page_at_a_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=10_000)
            .map(|i| format!("line {i} {}\n", "x".repeat(40)))
            .collect();
        std::fs::write(dir.path().join("f.txt"), body).unwrap();
        let out = read_within(&ctx(dir.path()), &args("f.txt", None, None), Some(20_000)).unwrap();
        let details = out.details.clone();
        let text = out.into_text();
        assert!(text.chars().count() <= 20_000, "{}", text.len());
        let next = details["next_offset"].as_u64().unwrap();
        let last = format!("{:>6}\tline {} {}\n", next - 1, next - 1, "x".repeat(40));
        assert!(text.contains(&last), "{text}");
        assert!(!text.contains(&format!("\tline {next} ")));
        assert!(
            text.contains(&format!("Use offset={next} to read on")),
            "{text}"
        );
        // The next page starts where this one stopped.
        let more = read_within(
            &ctx(dir.path()),
            &args("f.txt", Some(next), None),
            Some(20_000),
        )
        .unwrap();
        assert!(more.output.starts_with(&format!("{next:>6}\tline {next} ")));
    }
}
