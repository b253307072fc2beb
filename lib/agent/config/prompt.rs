//! The system prompt: what the built-in tools are for and how to use them
//! well, plus the project's AGENTS.md / CLAUDE.md files and the MEMORY.md
//! files of `$AG_HOME` and the project. It is short on purpose: every
//! request carries it, and what a call needs when it goes wrong is in the
//! tools' error messages.
//!
//! An agent identity's body comes first and the same context follows it
//! (seed 003's order: the identity, the session, the capabilities, the
//! project, the memory), so "You are Matt, a CTO" still knows where it
//! works and how its tools behave.

use std::path::{Path, PathBuf};

use super::reading::{read_or_warn, repository_root};

/// Who the agent is, when no identity says.
const ROLE: &str = "\
You are a coding agent in a repository on the user's machine; every tool call runs for real. \
Work until the task is done, then answer with a short summary of what you did.";

/// Where an identity works, said after its own words.
const PLACE: &str =
    "You work in a repository on the user's machine; every tool call runs for real.";

/// How to use the tools well.
const GUIDANCE: &str = "\
- Look before you change: find, grep, ls and read, rather than bash.
- edit: copy old_string exactly as read shows it, without the line numbers.
- Filter long command output (grep, head, tail); start nothing interactive.
- A failed call's error says what to do instead.";

/// What the system prompt starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head<'a> {
    /// ag's own words.
    Builtin,
    /// `--system-prompt`: the caller's words in place of ag's.
    Replace(&'a str),
    /// An agent identity's body, then where it works and how the tools go.
    Identity(&'a str),
}

/// The project instruction files found from `cwd` up to the repository
/// root (the first directory holding `.git`), outermost first.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    files_named(cwd, &["AGENTS.md", "CLAUDE.md"])
}

/// The files of these names in the directories from the repository root
/// (else the working directory alone) down to `cwd`, outermost first.
/// A name that is there at all counts, whatever it is: what cannot be
/// read is said when it is read.
fn files_named(cwd: &Path, names: &[&str]) -> Vec<PathBuf> {
    let root = project_root(cwd);
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();
    let mut files = Vec::new();
    for d in dirs {
        for name in names {
            let p = d.join(name);
            if std::fs::symlink_metadata(&p).is_ok() {
                files.push(p);
            }
        }
    }
    files
}

/// The directory a project's files must stay in: the repository root,
/// else the working directory (where, without a repository, they are
/// looked for).
fn project_root(cwd: &Path) -> PathBuf {
    repository_root(cwd).unwrap_or_else(|| cwd.to_path_buf())
}

/// The project instruction files of `cwd` with their text.
pub fn local_project_files(cwd: &Path) -> Vec<(PathBuf, String)> {
    let root = project_root(cwd);
    read_all(project_files(cwd), Some(&root))
}

/// The MEMORY.md files with their text: `$AG_HOME`'s (the person's), then
/// the project's from the repository root down to `project` (none when the
/// project is in another workspace).
pub fn memory_files(project: Option<&Path>) -> Vec<(PathBuf, String)> {
    let own = crate::session::ag_home().join("MEMORY.md");
    let mut out = read_all(vec![own.clone()], None);
    if let Some(cwd) = project {
        let root = project_root(cwd);
        let mut files = files_named(cwd, &["MEMORY.md"]);
        // Working in `$AG_HOME` itself names it twice.
        files.retain(|f| *f != own);
        out.extend(read_all(files, Some(&root)));
    }
    out
}

fn read_all(files: Vec<PathBuf>, within: Option<&Path>) -> Vec<(PathBuf, String)> {
    files
        .into_iter()
        .filter_map(|f| read_or_warn(&f, within).map(|t| (f, t)))
        .collect()
}

/// Builds the system prompt for `cwd` with its own project and memory
/// files. The tools are not listed: the request carries their definitions.
pub fn system_prompt(
    cwd: &Path,
    head: Head<'_>,
    append: Option<&str>,
    tool_names: &[&str],
) -> String {
    let parts = Parts {
        cwd,
        files: &local_project_files(cwd),
        memory: &memory_files(Some(cwd)),
        head,
        append,
        tool_names,
        skills: &[],
    };
    parts.build()
}

/// What a system prompt is made of.
pub struct Parts<'a> {
    /// The working directory the model is told of.
    pub cwd: &'a Path,
    /// The project instruction files with their text.
    pub files: &'a [(PathBuf, String)],
    /// The MEMORY.md files with their text.
    pub memory: &'a [(PathBuf, String)],
    /// What it starts with.
    pub head: Head<'a>,
    /// `--append-system-prompt`.
    pub append: Option<&'a str>,
    /// The tools offered.
    pub tool_names: &'a [&'a str],
    /// The skills, listed when the read tool can load them.
    pub skills: &'a [super::skills::Skill],
}

impl Parts<'_> {
    /// The prompt: the head, where and when, the project's instructions,
    /// the memory, then what `--append-system-prompt` adds.
    pub fn build(&self) -> String {
        // `notify` and `ask` (the `chat` set) read and change nothing.
        let working = self
            .tool_names
            .iter()
            .any(|n| *n != "notify" && *n != "ask");
        let mut out = match self.head {
            Head::Builtin if working => format!("{ROLE}\n{GUIDANCE}"),
            Head::Builtin => ROLE.to_string(),
            Head::Replace(text) => text.to_string(),
            Head::Identity(body) if working => format!("{}\n\n{PLACE}\n{GUIDANCE}", body.trim()),
            Head::Identity(body) => body.trim().to_string(),
        };
        out.push_str(&format!(
            "\n\nWorking directory: {}\nToday's date: {}",
            self.cwd.display(),
            jiff::Zoned::now().date()
        ));
        if !working {
            out.push_str("\nNo tools that read or change files are available in this run: answer from what you know.");
        }
        for (f, text) in self.files {
            out.push_str(&format!(
                "\n\n# Project instructions from {}\n\n{}",
                f.display(),
                text.trim()
            ));
        }
        for (f, text) in self.memory {
            out.push_str(&format!(
                "\n\n# Memory from {}\n\n{}",
                f.display(),
                text.trim()
            ));
        }
        // A skill's body is loaded with read, so without read the list
        // would only cost tokens.
        if self.tool_names.contains(&"read") && !self.skills.is_empty() {
            out.push_str("\n\n");
            out.push_str(&super::skills::listing(self.skills));
        }
        if let Some(a) = self.append {
            out.push_str("\n\n");
            out.push_str(a);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_agents_files_up_to_the_repo_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "outside").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("sub/CLAUDE.md"), "sub rules").unwrap();
        let files = project_files(&root.join("sub/deeper"));
        assert_eq!(
            files,
            vec![root.join("AGENTS.md"), root.join("sub/CLAUDE.md")]
        );
        let prompt = system_prompt(
            &root.join("sub/deeper"),
            Head::Builtin,
            Some("extra"),
            &["read"],
        );
        assert!(
            prompt.contains("root rules")
                && prompt.contains("sub rules")
                && !prompt.contains("outside")
        );
        assert!(prompt.ends_with("extra"));
        assert!(!prompt.contains("No tools"));
        let bare = system_prompt(&root, Head::Builtin, None, &[]);
        assert!(
            bare.contains("No tools that read or change files"),
            "{bare}"
        );
        let chat = system_prompt(&root, Head::Builtin, None, &["notify"]);
        assert!(
            chat.contains("No tools that read") && !chat.contains("old_string"),
            "{chat}"
        );
    }

    #[test]
    fn an_identity_comes_first_and_keeps_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let files = vec![(root.join("AGENTS.md"), "Run make test.".to_string())];
        let memory = vec![(root.join("MEMORY.md"), "Prefers short answers.".to_string())];
        let parts = Parts {
            cwd: root,
            files: &files,
            memory: &memory,
            head: Head::Identity("You are Matt, a CTO.\n"),
            append: Some("Added."),
            tool_names: &["read", "notify"],
            skills: &[],
        };
        let p = parts.build();
        let at = |s: &str| p.find(s).unwrap_or_else(|| panic!("no `{s}` in {p}"));
        assert_eq!(at("You are Matt"), 0);
        assert!(!p.contains("You are a coding agent"), "{p}");
        assert!(at("You are Matt") < at("every tool call runs for real"));
        assert!(at("runs for real") < at("old_string"));
        assert!(at("old_string") < at("Working directory:"));
        assert!(at("Working directory:") < at("Run make test."));
        assert!(at("Run make test.") < at("# Memory from"));
        assert!(at("Prefers short answers.") < at("Added."));
    }

    #[test]
    fn memory_comes_from_the_project_up_to_its_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), "outside").unwrap();
        std::fs::write(root.join("MEMORY.md"), "team notes").unwrap();
        let found = memory_files(Some(&root.join("sub")));
        assert!(
            found
                .iter()
                .any(|(p, t)| *p == root.join("MEMORY.md") && t == "team notes")
        );
        assert!(!found.iter().any(|(_, t)| t == "outside"));
        assert!(!memory_files(None).iter().any(|(_, t)| t == "team notes"));
    }
}
