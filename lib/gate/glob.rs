//! Path patterns for config rules, read the way `.gitignore` reads them: a
//! pattern without a slash matches a file or directory name at any depth,
//! one starting with `/` or `~/` matches absolute paths, any other one
//! matches paths relative to the working directory. `*` and `?` stay within
//! a directory, `**` crosses them, `[abc]` and `{a,b}` choose. A pattern
//! that matches a directory matches everything under it.

use std::path::{Component, Path};

use regex::Regex;

/// A compiled path pattern.
#[derive(Debug, Clone)]
pub struct PathPattern {
    regex: Regex,
    anchor: Anchor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// No slash: any name along the path.
    Name,
    /// Absolute (`/etc/**`, `~/.ssh`).
    Absolute,
    /// Relative to the working directory (`src/**/*.rs`).
    Relative,
}

impl PathPattern {
    /// Compiles `pattern`; `~/` means `home`.
    pub fn new(pattern: &str, home: Option<&Path>) -> Result<PathPattern, String> {
        let mut pattern = pattern.trim().to_string();
        if pattern.is_empty() {
            return Err("the path pattern is empty".into());
        }
        if pattern == "~" || pattern.starts_with("~/") {
            let Some(home) = home else {
                return Err(format!(
                    "`{pattern}` needs a home directory and HOME is not set"
                ));
            };
            pattern = format!("{}{}", home.display(), &pattern[1..]);
        }
        while pattern.len() > 1 && pattern.ends_with('/') {
            pattern.pop();
        }
        let anchor = if pattern.starts_with('/') {
            Anchor::Absolute
        } else if pattern.contains('/') {
            pattern = pattern.trim_start_matches("./").to_string();
            Anchor::Relative
        } else {
            Anchor::Name
        };
        let body = translate(&pattern)?;
        let regex = Regex::new(&format!("^{body}(?:/.*)?$"))
            .map_err(|e| format!("`{pattern}` is not a valid pattern: {e}"))?;
        Ok(PathPattern { regex, anchor })
    }

    /// True when the pattern matches `path` (absolute, normalised) in a
    /// call whose working directory is `cwd`.
    pub fn matches(&self, path: &Path, cwd: &Path) -> bool {
        let relative = path.strip_prefix(cwd).ok();
        match self.anchor {
            Anchor::Absolute => self.regex.is_match(&path.to_string_lossy()),
            Anchor::Relative => relative.is_some_and(|r| self.regex.is_match(&r.to_string_lossy())),
            Anchor::Name => relative.unwrap_or(path).components().any(|c| match c {
                Component::Normal(name) => self.regex.is_match(&name.to_string_lossy()),
                _ => false,
            }),
        }
    }
}

/// Turns a glob into the body of a regex.
fn translate(glob: &str) -> Result<String, String> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::new();
    let mut braces = 0usize;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let after_slash = i == 0 || chars[i - 1] == '/';
                let before_slash = chars.get(i + 2) == Some(&'/');
                if after_slash && before_slash {
                    // `**/` is zero or more directories.
                    out.push_str("(?:.*/)?");
                    i += 3;
                    continue;
                }
                out.push_str(".*");
                i += 2;
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let Some(end) = chars[i + 1..].iter().position(|&c| c == ']') else {
                    return Err(format!("`{glob}` has a `[` without its `]`"));
                };
                let class: String = chars[i + 1..i + 1 + end].iter().collect();
                let class = class
                    .strip_prefix('!')
                    .map_or(class.clone(), |c| format!("^{c}"));
                out.push('[');
                out.push_str(&class.replace('\\', "\\\\").replace('[', "\\["));
                out.push(']');
                i += end + 2;
                continue;
            }
            '{' => {
                braces += 1;
                out.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                out.push(')');
            }
            ',' if braces > 0 => out.push('|'),
            _ => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    if braces > 0 {
        return Err(format!("`{glob}` has a `{{` without its `}}`"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        PathPattern::new(pattern, Some(Path::new("/home/me")))
            .unwrap()
            .matches(Path::new(path), Path::new("/work/proj"))
    }

    #[test]
    fn names_match_at_any_depth_and_cover_directories() {
        assert!(m(".env", "/work/proj/.env"));
        assert!(m(".env*", "/work/proj/app/.env.local"));
        assert!(!m(".env", "/work/proj/.envrc"));
        assert!(m(".git", "/work/proj/.git/config"));
        assert!(m("*.pem", "/etc/ssl/key.pem"));
        assert!(
            !m("proj", "/work/proj/src/a.rs"),
            "the working directory itself is not part of the path"
        );
    }

    #[test]
    fn relative_and_absolute_patterns() {
        assert!(m("src/**/*.rs", "/work/proj/src/a/b/c.rs"));
        assert!(m("src/**/*.rs", "/work/proj/src/c.rs"));
        assert!(!m("src/*.rs", "/work/proj/src/a/c.rs"));
        assert!(!m("src/**", "/other/src/x"));
        assert!(m("./docs", "/work/proj/docs/x.md"));
        assert!(m("/etc/**", "/etc/hosts"));
        assert!(m("/etc", "/etc/ssh/sshd_config"));
        assert!(!m("/etc", "/etcetera"));
        assert!(m("~/.ssh", "/home/me/.ssh/id_ed25519"));
        assert!(m(
            "~/.config/{git,fish}/*",
            "/home/me/.config/fish/config.fish"
        ));
        assert!(!m(
            "~/.config/{git,fish}/*",
            "/home/me/.config/nvim/init.lua"
        ));
        assert!(m("file[0-9].txt", "/work/proj/file3.txt"));
        assert!(m("file[!0-9].txt", "/work/proj/filex.txt"));
        assert!(m("a?c", "/work/proj/abc"));
        assert!(!m("a?c", "/work/proj/a/c"));
        assert!(m("a+b (1).txt", "/work/proj/a+b (1).txt"));
    }

    #[test]
    fn bad_patterns_are_errors() {
        assert!(PathPattern::new("", None).is_err());
        assert!(PathPattern::new("a[b", None).is_err());
        assert!(PathPattern::new("{a,b", None).is_err());
        assert!(PathPattern::new("~/.ssh", None).is_err());
    }
}
