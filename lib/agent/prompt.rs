//! The system prompt: what the built-in tools are for and how to use them
//! well, plus the project's AGENTS.md / CLAUDE.md files. It is short on
//! purpose: every request carries it, and what a call needs when it goes
//! wrong is in the tools' error messages.

use std::path::{Path, PathBuf};

const BASE: &str = "\
You are a coding agent in a repository on the user's machine; every tool call runs for real. \
Work until the task is done, then answer with a short summary of what you did.
- Look before you change: find, grep, ls and read, rather than bash.
- edit: copy old_string exactly as read shows it, without the line numbers.
- Filter long command output (grep, head, tail); start nothing interactive.
- A failed call's error says what to do instead.";

/// The project instruction files found from `cwd` up to the repository
/// root (the first directory holding `.git`), outermost first.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        dirs.push(d.to_path_buf());
        if d.join(".git").exists() {
            break;
        }
        dir = d.parent();
    }
    // Without a repository, only the working directory itself counts.
    if !dirs.last().is_some_and(|d| d.join(".git").exists()) {
        dirs.truncate(1);
    }
    dirs.reverse();
    let mut files = Vec::new();
    for d in dirs {
        for name in ["AGENTS.md", "CLAUDE.md"] {
            let p = d.join(name);
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files
}

/// The project instruction files of `cwd` with their text.
pub fn local_project_files(cwd: &Path) -> Vec<(PathBuf, String)> {
    project_files(cwd)
        .into_iter()
        .filter_map(|f| std::fs::read_to_string(&f).ok().map(|t| (f, t)))
        .collect()
}

/// Builds the system prompt. The tools are not listed: the request carries
/// their definitions, and the prompt only says so when there are none.
pub fn system_prompt(
    cwd: &Path,
    replace: Option<&str>,
    append: Option<&str>,
    tool_names: &[&str],
) -> String {
    let files = local_project_files(cwd);
    system_prompt_with(cwd, &files, replace, append, tool_names)
}

/// [`system_prompt`] with the project files given (read in a workspace
/// elsewhere, `--workspace`).
pub fn system_prompt_with(
    cwd: &Path,
    files: &[(PathBuf, String)],
    replace: Option<&str>,
    append: Option<&str>,
    tool_names: &[&str],
) -> String {
    let mut out = replace.unwrap_or(BASE).to_string();
    out.push_str(&format!(
        "\n\nWorking directory: {}\nToday's date: {}",
        cwd.display(),
        jiff::Zoned::now().date()
    ));
    if tool_names.is_empty() {
        out.push_str("\nNo tools are available in this run: answer from what you know.");
    }
    for (f, text) in files {
        out.push_str(&format!(
            "\n\n# Project instructions from {}\n\n{}",
            f.display(),
            text.trim()
        ));
    }
    if let Some(a) = append {
        out.push_str("\n\n");
        out.push_str(a);
    }
    out
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
        let prompt = system_prompt(&root.join("sub/deeper"), None, Some("extra"), &["read"]);
        assert!(
            prompt.contains("root rules")
                && prompt.contains("sub rules")
                && !prompt.contains("outside")
        );
        assert!(prompt.ends_with("extra"));
        assert!(!prompt.contains("No tools"));
        let bare = system_prompt(&root, None, None, &[]);
        assert!(bare.contains("No tools are available"), "{bare}");
    }
}
