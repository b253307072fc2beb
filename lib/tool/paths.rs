//! Where a call runs: the working directory that relative paths resolve
//! against, and the optional `--root` every path must stay inside.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// The environment of a call.
#[derive(Debug, Clone)]
pub struct Context {
    /// Relative paths resolve against this directory.
    pub cwd: PathBuf,
    /// When set, every path must lie inside it after symlinks are resolved.
    pub root: Option<PathBuf>,
}

impl Context {
    /// A context for the process's working directory and an optional root.
    pub fn new(root: Option<&Path>) -> Result<Self, String> {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the working directory: {e}"))?;
        let root = match root {
            None => None,
            Some(r) => Some(
                cwd.join(r)
                    .canonicalize()
                    .map_err(|e| format!("cannot use `{}` as --root: {e}", r.display()))?,
            ),
        };
        Ok(Context { cwd, root })
    }

    /// Resolves a path given in a call: relative to the working directory,
    /// `~` expanded, and checked against the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        if path.is_empty() {
            return Err(ToolError::new(
                "path.empty",
                "the path is empty; give a file path, relative to the working directory or absolute",
            ));
        }
        let expanded = expand_home(path);
        let joined = normalize(&self.cwd.join(expanded));
        self.confine(path, &joined)?;
        Ok(joined)
    }

    /// Checks that `resolved` (the path given as `given`) lies inside the
    /// root, if there is one, after symlinks are resolved. Tools that follow
    /// a symlink chain themselves check its end with this too, because a
    /// dangling link can name a file outside the root.
    pub fn confine(&self, given: &str, resolved: &Path) -> Result<(), ToolError> {
        if let Some(root) = &self.root
            && !real_path(resolved).starts_with(root)
        {
            return Err(ToolError::new(
                "path.outside_root",
                format!(
                    "`{given}` is outside the allowed root `{}`; use a path inside it",
                    root.display()
                ),
            ));
        }
        Ok(())
    }

    /// The path as the model should see it: relative to the working
    /// directory when inside it, absolute otherwise.
    pub fn show(&self, path: &Path) -> String {
        display_path(&self.cwd, path)
    }
}

/// A path relative to `base` when it lies inside it, else the path itself.
pub fn display_path(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

fn expand_home(path: &str) -> PathBuf {
    if (path == "~" || path.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    PathBuf::from(path)
}

/// Removes `.` and folds `..` without touching the file system, so that
/// error messages show clean paths. `..` at the root stays at the root, as
/// the kernel has it; a relative path keeps the `..` it cannot fold.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(comp),
            },
            other => out.push(other),
        }
    }
    out
}

/// The path with symlinks resolved as far as it exists; the part that does
/// not exist yet is appended as given.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_confines_paths_after_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
        let ctx = Context {
            cwd: root.clone(),
            root: Some(root.canonicalize().unwrap()),
        };
        assert!(ctx.resolve("a/new/file.txt").is_ok());
        assert_eq!(ctx.resolve("../x").unwrap_err().code, "path.outside_root");
        assert_eq!(
            ctx.resolve("escape/passwd").unwrap_err().code,
            "path.outside_root"
        );
        assert_eq!(
            ctx.resolve("/etc/passwd").unwrap_err().code,
            "path.outside_root"
        );
    }
}
