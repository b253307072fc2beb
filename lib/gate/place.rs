//! Where a path written by a call lands, and whether that is outside the
//! working directory. Temporary directories and the harmless devices
//! (`/dev/null`, `/dev/stderr`, ...) count as inside: writing there is what
//! scripts do all day, and Codex's workspace sandbox allows the same.

use std::path::{Path, PathBuf};

/// Devices that any command may write to.
const HARMLESS_DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

/// The working directory of a call and the places outside it that are fine.
#[derive(Debug, Clone)]
pub struct Place {
    /// The call's working directory, as given (absolute).
    pub cwd: PathBuf,
    /// The same with symlinks resolved, when it exists.
    root: PathBuf,
    /// The home directory `~` stands for.
    pub home: Option<PathBuf>,
    /// Temporary directories, as given and with symlinks resolved.
    temp: Vec<PathBuf>,
}

impl Place {
    /// A place for `cwd` (made absolute against the process's directory),
    /// with the home and extra temporary directory `~` and `$TMPDIR` mean.
    pub fn new(cwd: &Path, home: Option<PathBuf>, tmpdir: Option<PathBuf>) -> Place {
        let cwd = if cwd.is_absolute() {
            normalize(cwd)
        } else {
            let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            normalize(&base.join(cwd))
        };
        let root = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
        let mut temp = vec![
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/dev/shm"),
        ];
        temp.extend(tmpdir.filter(|t| t.is_absolute()));
        let real: Vec<PathBuf> = temp.iter().filter_map(|t| t.canonicalize().ok()).collect();
        temp.extend(real);
        Place {
            cwd,
            root,
            home,
            temp,
        }
    }

    /// A place from the process environment (`HOME`, `TMPDIR`).
    pub fn from_env(cwd: &Path) -> Place {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let tmp = std::env::var_os("TMPDIR")
            .filter(|t| !t.is_empty())
            .map(PathBuf::from);
        Place::new(cwd, home, tmp)
    }

    /// The absolute, lexically normalised path `raw` names when given in
    /// directory `dir`: `~` and `~/x` are the home directory, `~user/x` is
    /// taken as another user's home (outside), the rest joins `dir`.
    pub fn resolve(&self, dir: &Path, raw: &str) -> PathBuf {
        if raw == "~" || raw.starts_with("~/") {
            if let Some(home) = &self.home {
                return normalize(&home.join(raw.trim_start_matches('~').trim_start_matches('/')));
            }
        } else if let Some(user) = raw.strip_prefix('~') {
            // Only some other user's home can be meant; it is never the project.
            return normalize(&Path::new("/home").join(user));
        }
        normalize(&dir.join(raw))
    }

    /// True when writing `path` (absolute, normalised) changes something
    /// outside the working directory, after symlinks are resolved.
    pub fn is_outside(&self, path: &Path) -> bool {
        if is_harmless_device(path) {
            return false;
        }
        let real = real_path(path);
        if real.starts_with(&self.root) || (real == path && path.starts_with(&self.cwd)) {
            return false;
        }
        // Inside a temporary directory (not the directory itself), and not
        // led out of it by a symlink.
        !self
            .temp
            .iter()
            .any(|t| strictly_under(&real, t) || (real == path && strictly_under(path, t)))
    }

    /// `path` as a person reads it: relative when inside the working directory.
    pub fn show(&self, path: &Path) -> String {
        crate::tool_protocol::display_path(&self.cwd, path)
    }
}

/// True for a file that git runs or reads commands from later: anything
/// under a `.git/hooks` directory, and a repository's `.git/config`.
pub fn runs_later(path: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = path.iter().collect();
    parts.windows(2).any(|w| w[0] == ".git" && w[1] == "hooks")
        || parts.ends_with(&[std::ffi::OsStr::new(".git"), std::ffi::OsStr::new("config")])
}

fn strictly_under(path: &Path, dir: &Path) -> bool {
    path != dir && path.starts_with(dir)
}

fn is_harmless_device(path: &Path) -> bool {
    HARMLESS_DEVICES.iter().any(|d| path == Path::new(d))
        || path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd")
}

pub use crate::tool_protocol::{normalize, real_path};

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cwd: &Path) -> Place {
        Place::new(cwd, Some(PathBuf::from("/home/me")), None)
    }

    #[test]
    fn inside_outside_temp_and_devices() {
        let p = place(Path::new("/work/proj"));
        let out = |raw: &str| p.is_outside(&p.resolve(&p.cwd.clone(), raw));
        assert!(!out("src/main.rs"));
        assert!(!out("./a/../b"));
        assert!(out("../other/x"));
        assert!(out("/etc/hosts"));
        assert!(out("~/.bashrc"));
        assert!(out("~root/.ssh/authorized_keys"));
        assert!(!out("/tmp/out.txt"));
        assert!(!out("/var/tmp/x"));
        assert!(out("/tmp/../etc/passwd"));
        assert!(out("/tmp"));
        assert!(!out("/dev/null"));
        assert!(!out("/dev/fd/3"));
        assert!(out("/dev/sda"));
        assert!(out("/work/proj-other/x"));
        assert!(!out("/work/proj"));
    }

    #[test]
    fn git_hooks_and_settings_run_later() {
        assert!(runs_later(Path::new("/p/.git/hooks/pre-commit")));
        assert!(runs_later(Path::new("/p/.git/hooks")));
        assert!(runs_later(Path::new("/p/sub/.git/config")));
        assert!(!runs_later(Path::new("/p/.git/info/exclude")));
        assert!(!runs_later(Path::new("/p/hooks/pre-commit")));
        assert!(!runs_later(Path::new("/p/.github/config")));
        assert!(!runs_later(Path::new("/p/config")));
    }

    #[test]
    fn symlinks_out_of_the_directory_are_outside() {
        // Wherever the temporary directory is: with no temporary places,
        // a sibling of the working directory is outside even under /tmp.
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        std::fs::create_dir(&cwd).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, cwd.join("link")).unwrap();
        let p = Place {
            temp: Vec::new(),
            ..place(&cwd)
        };
        assert!(p.is_outside(&p.resolve(&cwd, "link/file")));
        assert!(!p.is_outside(&p.resolve(&cwd, "new/dir/file")));
        // With the usual temporary places too: a link to `/` leads out of
        // any working directory but `/` itself.
        std::os::unix::fs::symlink("/", cwd.join("root")).unwrap();
        let p = place(&cwd);
        assert!(p.is_outside(&p.resolve(&cwd, "root/etc/x")));
        assert!(!p.is_outside(&p.resolve(&cwd, "new/dir/file")));
        // A working directory reached through a symlink is still inside.
        let alias = dir.path().join("alias");
        std::os::unix::fs::symlink(&cwd, &alias).unwrap();
        let p = Place {
            temp: Vec::new(),
            ..place(&alias)
        };
        assert!(!p.is_outside(&p.resolve(&alias, "x.txt")));
        assert!(!p.is_outside(&cwd.join("x.txt")));
    }
}
