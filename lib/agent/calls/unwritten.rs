//! A bash command that writes files of the project and leaves each as it
//! was. `sed -i` whose pattern matched nothing exits 0 and prints nothing,
//! and a weak model sent it five times, reading each time only that it
//! returned what it returned before. The files the gate's classifier says
//! the command writes are read before and after it runs; when every one of
//! them was there and holds the same bytes after a run that exited 0, the
//! result says so at once, naming them. The answer's check for the whole
//! prompt (see `run/evidence.rs`) comes too late for the calls between.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fsutil::content_hash;
use crate::protocol::ToolResult;

/// Files larger than this, together, are not compared: each is read
/// before and after the call, which costs more than the note is worth.
const LARGEST: u64 = 8 << 20;

/// A command writing more files than this is not watched.
const MOST: usize = 16;

/// The files a bash call would write, each with its path as shown and
/// what it was before the call ran.
#[derive(Debug)]
pub(in crate::agent) struct Watched {
    files: Vec<(PathBuf, String, Stamp)>,
}

/// A file's content hash and permissions: `sed -i` rewrites a file whose
/// text it leaves as it was (so its time and inode change), and `chmod`
/// changes the mode alone.
#[derive(Debug, PartialEq)]
struct Stamp {
    hash: String,
    mode: u32,
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > LARGEST {
        return None;
    }
    Some(Stamp {
        hash: content_hash(&std::fs::read(path).ok()?),
        mode: meta.permissions().mode(),
    })
}

/// What `bash`'s `args`, run from `cwd`, would write, as the gate reads
/// the command, when each such file is there now; `None` for any other
/// tool, a command that writes no file of `cwd`'s tree, or one that writes
/// a file that is not there yet (its creation is a change to see).
pub(in crate::agent) fn watch(tool: &str, args: &Value, cwd: &Path) -> Option<Watched> {
    if tool != "bash" {
        return None;
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str);
    let command = text("command")?;
    let place = crate::gate::place::Place::new(cwd, None, None);
    let dir = text("cwd").map_or_else(|| place.cwd.clone(), |d| place.resolve(&place.cwd, d));
    let analysis =
        crate::gate::analyse_bash_call(command, text("shell"), text("stdin"), &dir, &place);
    // `touch` is run for the file's times, which the note does not compare:
    // "nothing in it changed" would be said of a command that did its job.
    if analysis
        .segments
        .iter()
        .any(|s| s.split_whitespace().next() == Some("touch"))
    {
        return None;
    }
    let tree = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut files = Vec::new();
    let mut size = 0;
    for path in analysis.paths {
        let Some(rel) = path
            .strip_prefix(cwd)
            .or_else(|_| path.strip_prefix(&tree))
            .ok()
            .filter(|r| !r.as_os_str().is_empty() && !r.starts_with(".git"))
            .map(|r| r.display().to_string())
        else {
            continue;
        };
        if files.len() == MOST {
            return None;
        }
        size += std::fs::metadata(&path).ok()?.len();
        if size > LARGEST {
            return None;
        }
        let before = stamp(&path)?;
        files.push((path, rel, before));
    }
    (!files.is_empty()).then_some(Watched { files })
}

impl Watched {
    /// The note for `r`, the call's result, when it exited 0 and every
    /// watched file holds what it held before.
    pub(in crate::agent) fn note(&self, r: &ToolResult) -> Option<String> {
        if r.is_error || r.details["exit_code"].as_i64() != Some(0) {
            return None;
        }
        let same = self
            .files
            .iter()
            .all(|(path, _, before)| stamp(path).as_ref() == Some(before));
        if !same {
            return None;
        }
        let named: Vec<String> = self
            .files
            .iter()
            .map(|(_, rel, _)| format!("`{rel}`"))
            .collect();
        let (files, it) = if named.len() == 1 {
            (named[0].clone(), "it")
        } else {
            (named.join(", "), "them")
        };
        Some(format!(
            "{files} {} as before: this command writes {it}, but nothing in {it} changed (a pattern that matched nothing, say). Read {it} to see the text as it is, then change it.",
            if named.len() == 1 { "is" } else { "are" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(exit: i64) -> ToolResult {
        ToolResult {
            id: None,
            output: String::new(),
            details: json!({"exit_code": exit}),
            is_error: false,
            error_code: None,
            images: Vec::new(),
        }
    }

    #[test]
    fn a_write_that_changed_nothing_is_named_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.py");
        std::fs::write(&config, "TIMEOUT_SECONDS = 30\n").unwrap();
        let call = |cmd: &str| watch("bash", &json!({"command": cmd}), dir.path());
        let sed = "sed -i 's/TIMEOUT_SECONDS=30/TIMEOUT_SECONDS=60/' config.py";
        let w = call(sed).unwrap();
        // sed rewrites the file with the same text.
        std::fs::write(&config, "TIMEOUT_SECONDS = 30\n").unwrap();
        let note = w.note(&result(0)).unwrap();
        assert!(
            note.starts_with("`config.py` is as before: this command writes it"),
            "{note}"
        );
        // A change, a failed command, a look, a new file: no note.
        let w = call(sed).unwrap();
        std::fs::write(&config, "TIMEOUT_SECONDS = 60\n").unwrap();
        assert_eq!(w.note(&result(0)), None);
        assert_eq!(call(sed).unwrap().note(&result(1)), None);
        assert!(call("grep TIMEOUT config.py").is_none());
        assert!(call("echo x > new.txt").is_none());
        // touch is for the file's times, which are not compared.
        assert!(call("touch config.py").is_none());
        // chmod changes the mode alone: a change too.
        let w = call("chmod +x config.py").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(w.note(&result(0)), None);
        assert!(watch("read", &json!({"command": sed}), dir.path()).is_none());
    }
}
