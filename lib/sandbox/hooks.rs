//! Keeping a confined call from planting code that git runs later,
//! outside the sandbox. Landlock cannot take `.git/hooks` back out of a
//! writable workspace (rules only grant, and a grant covers everything
//! beneath), and granting the workspace's entries one by one would forbid
//! creating files at its top. So [`HooksGuard`] takes a snapshot of the
//! hooks directory before a call, and after it undoes every change
//! (added, changed, removed hooks) and reports them. `.git/config` can name
//! commands too (`core.hooksPath`, `core.fsmonitor`, `core.sshCommand`,
//! filters, `!` aliases, includes, ...): a change to one of those keys puts
//! the file back as it was (or, for a repository the call created, drops
//! those lines), while other config changes (`git remote add`) stand.
//! Watched: the workspace's repository and those one level below it, with
//! their submodules and worktree configs. Not covered: repositories deeper
//! down, and files of the project itself that run later (a Makefile,
//! `.husky/`, `package.json` scripts), which a review of the diff catches.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Hook files larger than this are not kept: a change to one is reported
/// but cannot be undone.
const MAX_KEPT: u64 = 4 << 20;

/// What happened to a guarded path during a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookChange {
    /// The path, as found.
    pub path: PathBuf,
    /// `added`, `changed` or `removed`.
    pub change: String,
    /// Whether it was put back as it was.
    pub undone: bool,
    /// Why it could not be undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// A file is known by its inode, size, mode and change time (which no
    /// call can set back), so the check after a call reads no contents;
    /// the contents are kept to put it back, except for git's `*.sample`
    /// files, which git never runs.
    File {
        mode: u32,
        ino: u64,
        len: u64,
        ctime: (i64, i64),
        data: Option<Vec<u8>>,
    },
    Link(PathBuf),
    Dir(BTreeMap<OsString, Node>),
    Other,
}

/// A snapshot of the hooks directories and config files of a workspace's
/// repositories, taken before a call; [`HooksGuard::restore`] after it.
/// Watched: the workspace's own repository and those one level below it
/// (`ws/*/.git`), with their submodules (`.git/modules/...`) and worktree
/// configs; a repository the call creates there is checked too (its hooks
/// all count as added).
#[derive(Debug)]
pub struct HooksGuard {
    workspace: PathBuf,
    hooks: Vec<(PathBuf, Option<Node>)>,
    configs: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl HooksGuard {
    /// Takes the snapshot of the repositories at `workspace` (also when it
    /// has none yet: then hooks that a call creates are removed).
    pub fn snapshot(workspace: &Path) -> HooksGuard {
        let (hooks, configs) = watched(workspace);
        HooksGuard {
            workspace: workspace.to_path_buf(),
            hooks: hooks
                .into_iter()
                .map(|h| {
                    let n = read_node(&h, true);
                    (h, n)
                })
                .collect(),
            configs: configs
                .into_iter()
                .map(|c| {
                    let b = std::fs::read(&c).ok();
                    (c, b)
                })
                .collect(),
        }
    }

    /// Puts back what changed since the snapshot and says what it was.
    pub fn restore(self) -> Vec<HookChange> {
        let mut out = Vec::new();
        let (hooks_now, configs_now) = watched(&self.workspace);
        let mut hooks = self.hooks;
        for h in hooks_now {
            if !hooks.iter().any(|(p, _)| *p == h) {
                hooks.push((h, None));
            }
        }
        for (path, before) in &hooks {
            let after = read_node(path, false);
            diff_undo(path, before.as_ref(), after.as_ref(), &mut out);
        }
        let mut configs = self.configs;
        for c in configs_now {
            if !configs.iter().any(|(p, _)| *p == c) {
                configs.push((c, None));
            }
        }
        for (path, before) in &configs {
            restore_config(path, before.as_deref(), &mut out);
        }
        out
    }
}

fn restore_config(path: &Path, before: Option<&[u8]>, out: &mut Vec<HookChange>) {
    let after = std::fs::read(path).ok();
    if after.as_deref() == before {
        return;
    }
    let risky_before = before.map(risky_entries).unwrap_or_default();
    let Some(after) = after else { return };
    if risky_entries(&after) == risky_before {
        return;
    }
    let fixed = match before {
        Some(b) => b.to_vec(),
        None => drop_risky_lines(&after),
    };
    let result = std::fs::write(path, fixed);
    out.push(HookChange {
        path: path.to_path_buf(),
        change: "changed".to_string(),
        undone: result.is_ok(),
        error: result.err().map(|e| e.to_string()),
    });
}

/// The hooks directories and config files to watch in a workspace.
fn watched(workspace: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut hooks = Vec::new();
    let mut configs = Vec::new();
    repository(&git_dir(workspace), 0, &mut hooks, &mut configs);
    if let Ok(entries) = std::fs::read_dir(workspace) {
        for e in entries.flatten() {
            if e.file_name() == ".git" || !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let sub = e.path();
            if std::fs::symlink_metadata(sub.join(".git")).is_ok() {
                repository(&git_dir(&sub), 0, &mut hooks, &mut configs);
            }
        }
    }
    (hooks, configs)
}

/// One repository's hooks and configs, and its submodules' (nested up to
/// a bound, as `.git/modules/<name>` and deeper for names with slashes).
fn repository(git: &Path, depth: usize, hooks: &mut Vec<PathBuf>, configs: &mut Vec<PathBuf>) {
    if depth > 8 || hooks.iter().any(|h| h.parent() == Some(git)) {
        return;
    }
    hooks.push(git.join("hooks"));
    configs.push(git.join("config"));
    configs.push(git.join("config.worktree"));
    if let Ok(entries) = std::fs::read_dir(git.join("worktrees")) {
        for e in entries.flatten() {
            configs.push(e.path().join("config.worktree"));
        }
    }
    modules(&git.join("modules"), depth, hooks, configs);
}

fn modules(dir: &Path, depth: usize, hooks: &mut Vec<PathBuf>, configs: &mut Vec<PathBuf>) {
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let p = e.path();
        if p.join("HEAD").is_file() {
            repository(&p, depth + 1, hooks, configs);
        } else {
            modules(&p, depth + 1, hooks, configs);
        }
    }
}

/// The repository directory of a workspace: `.git`, or where a `.git` file
/// (a worktree, a submodule) points, and for a worktree its common
/// directory, where hooks and config live.
fn git_dir(workspace: &Path) -> PathBuf {
    let dot = workspace.join(".git");
    let Ok(text) = std::fs::read_to_string(&dot) else {
        return dot;
    };
    let Some(target) = text.trim().strip_prefix("gitdir:") else {
        return dot;
    };
    let dir = workspace.join(target.trim());
    match std::fs::read_to_string(dir.join("commondir")) {
        Ok(common) => dir.join(common.trim()),
        Err(_) => dir,
    }
}

fn read_node(p: &Path, with_data: bool) -> Option<Node> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    let t = meta.file_type();
    Some(if t.is_symlink() {
        Node::Link(std::fs::read_link(p).ok()?)
    } else if t.is_dir() {
        let mut map = BTreeMap::new();
        for e in std::fs::read_dir(p).ok()?.flatten() {
            // git never runs a `*.sample`: not worth a stat per call.
            if inert(&e.path()) {
                continue;
            }
            if let Some(n) = read_node(&e.path(), with_data) {
                map.insert(e.file_name(), n);
            }
        }
        Node::Dir(map)
    } else if t.is_file() {
        use std::os::unix::fs::MetadataExt;
        let keep = with_data && meta.len() <= MAX_KEPT && !inert(p);
        Node::File {
            mode: meta.permissions().mode(),
            ino: meta.ino(),
            len: meta.len(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            data: if keep { std::fs::read(p).ok() } else { None },
        }
    } else {
        Node::Other
    })
}

fn same(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (
            Node::File {
                mode: m1,
                ino: i1,
                len: l1,
                ctime: c1,
                ..
            },
            Node::File {
                mode: m2,
                ino: i2,
                len: l2,
                ctime: c2,
                ..
            },
        ) => (m1, i1, l1, c1) == (m2, i2, l2, c2),
        (Node::Dir(_), Node::Dir(_)) => true,
        _ => a == b,
    }
}

/// Whether a change at this path can matter: git never runs `*.sample`.
fn inert(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "sample")
}

fn diff_undo(p: &Path, before: Option<&Node>, after: Option<&Node>, out: &mut Vec<HookChange>) {
    match (before, after) {
        (None, None) => {}
        (Some(Node::Dir(b)), Some(Node::Dir(a))) => {
            for (name, bn) in b {
                diff_undo(&p.join(name), Some(bn), a.get(name), out);
            }
            for (name, an) in a {
                if !b.contains_key(name) {
                    diff_undo(&p.join(name), None, Some(an), out);
                }
            }
        }
        (Some(b), Some(a)) if same(b, a) => {}
        _ if inert(p) => {}
        // A new directory (a repository made by the call): what matters is
        // what it holds; git's samples may stay.
        (None, Some(Node::Dir(a))) => {
            for (name, an) in a {
                diff_undo(&p.join(name), None, Some(an), out);
            }
        }
        (None, Some(_)) => {
            let r = remove(p);
            push(out, p, "added", r);
        }
        (Some(b), Some(_)) => {
            let r = remove(p).and_then(|()| put(p, b));
            push(out, p, "changed", r);
        }
        (Some(b), None) => {
            let r = put(p, b);
            push(out, p, "removed", r);
        }
    }
}

fn push(out: &mut Vec<HookChange>, p: &Path, change: &str, r: std::io::Result<()>) {
    out.push(HookChange {
        path: p.to_path_buf(),
        change: change.to_string(),
        undone: r.is_ok(),
        error: r.err().map(|e| e.to_string()),
    });
}

fn remove(p: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(p)?;
    if meta.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    }
}

fn put(p: &Path, n: &Node) -> std::io::Result<()> {
    match n {
        Node::File { mode, data, .. } => {
            let Some(data) = data else {
                return Err(std::io::Error::other(
                    "too large to have been kept, so it cannot be put back",
                ));
            };
            std::fs::write(p, data)?;
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(*mode))
        }
        Node::Link(target) => std::os::unix::fs::symlink(target, p),
        Node::Dir(children) => {
            std::fs::create_dir_all(p)?;
            for (name, c) in children {
                put(&p.join(name), c)?;
            }
            Ok(())
        }
        Node::Other => Ok(()),
    }
}

/// The `section.key=value` entries of a git config that make git run a
/// command or read another file.
fn risky_entries(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = section_name(l);
            continue;
        }
        if let Some(entry) = risky_line(&section, l) {
            out.push(entry);
        }
    }
    out.sort();
    out
}

/// The section a `[section "subsection"]` header opens, lower-cased.
fn section_name(header: &str) -> String {
    header
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn risky_line(section: &str, line: &str) -> Option<String> {
    if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
        return None;
    }
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim()),
        None => (line.trim().to_ascii_lowercase(), ""),
    };
    let risky = match section {
        "core" => matches!(
            key.as_str(),
            "hookspath" | "fsmonitor" | "sshcommand" | "pager" | "editor" | "askpass" | "gitproxy"
        ),
        "alias" => value.trim_start_matches('"').starts_with('!'),
        "include" | "includeif" => key == "path",
        "filter" | "diff" | "merge" => true,
        "credential" | "gpg" | "sequence" | "pager" | "browser" | "web" | "sendemail"
        | "uploadpack" | "receive" => true,
        "remote" => matches!(key.as_str(), "uploadpack" | "receivepack"),
        _ => false,
    };
    risky.then(|| format!("{section}.{key}={value}"))
}

fn drop_risky_lines(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut section = String::new();
    let mut out = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = section_name(l);
        } else if risky_line(&section, l).is_some() {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_changed_and_removed_hooks_are_put_back() {
        let t = tempfile::tempdir().unwrap();
        let hooks = t.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\ntrue\n").unwrap();
        std::fs::write(hooks.join("post-merge"), "keep").unwrap();
        std::fs::write(t.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        let g = HooksGuard::snapshot(t.path());
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\ncurl evil\n").unwrap();
        std::fs::remove_file(hooks.join("post-merge")).unwrap();
        std::fs::write(hooks.join("pre-push"), "evil").unwrap();
        std::fs::write(
            t.path().join(".git/config"),
            "[core]\n\tbare = false\n\tfsmonitor = evil\n",
        )
        .unwrap();
        let mut changes: Vec<(String, String, bool)> = g
            .restore()
            .into_iter()
            .map(|c| {
                let name = c.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, c.change, c.undone)
            })
            .collect();
        changes.sort();
        assert_eq!(
            changes,
            vec![
                ("config".into(), "changed".into(), true),
                ("post-merge".into(), "removed".into(), true),
                ("pre-commit".into(), "changed".into(), true),
                ("pre-push".into(), "added".into(), true),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
            "#!/bin/sh\ntrue\n"
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join("post-merge")).unwrap(),
            "keep"
        );
        assert!(!hooks.join("pre-push").exists());
        assert!(
            !std::fs::read_to_string(t.path().join(".git/config"))
                .unwrap()
                .contains("fsmonitor")
        );
    }

    #[test]
    fn nested_repositories_submodules_and_new_repositories_are_watched() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".git/modules/lib/a/hooks")).unwrap();
        std::fs::write(ws.join(".git/modules/lib/a/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(ws.join("other/.git/hooks")).unwrap();
        let g = HooksGuard::snapshot(ws);
        std::fs::write(ws.join(".git/modules/lib/a/hooks/pre-commit"), "evil").unwrap();
        std::fs::write(ws.join("other/.git/hooks/post-checkout"), "evil").unwrap();
        // A repository made during the call, with git's samples and a hook.
        std::fs::create_dir_all(ws.join("fresh/.git/hooks")).unwrap();
        std::fs::write(ws.join("fresh/.git/hooks/pre-push.sample"), "sample").unwrap();
        std::fs::write(ws.join("fresh/.git/hooks/pre-push"), "evil").unwrap();
        std::fs::write(ws.join("fresh/.git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        let mut changed: Vec<String> = g
            .restore()
            .into_iter()
            .map(|c| c.path.strip_prefix(ws).unwrap().display().to_string())
            .collect();
        changed.sort();
        assert_eq!(
            changed,
            vec![
                ".git/modules/lib/a/hooks/pre-commit",
                "fresh/.git/config",
                "fresh/.git/hooks/pre-push",
                "other/.git/hooks/post-checkout",
            ]
        );
        assert!(ws.join("fresh/.git/hooks/pre-push.sample").exists());
        assert!(!ws.join("fresh/.git/hooks/pre-push").exists());
        assert!(
            !std::fs::read_to_string(ws.join("fresh/.git/config"))
                .unwrap()
                .contains("fsmonitor")
        );
    }

    #[test]
    fn a_harmless_config_change_stands() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".git")).unwrap();
        let g = HooksGuard::snapshot(t.path());
        let cfg = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n";
        std::fs::write(t.path().join(".git/config"), cfg).unwrap();
        assert!(g.restore().is_empty());
        assert_eq!(
            std::fs::read_to_string(t.path().join(".git/config")).unwrap(),
            cfg
        );
    }
}
