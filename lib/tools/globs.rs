//! The path globs of the search tools (`include_pattern`, `exclude_pattern`,
//! ag-find's `pattern`), with one meaning everywhere: the meaning of a line
//! of `.gitignore` and of `rg -g`. A glob without `/` matches a name at any
//! depth (`*.rs`); a glob with `/` matches the path below the search
//! directory (`src/*.rs`, `src/**/*.rs`); `*` never crosses `/`, `**` does.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::tool_protocol::ToolError;

/// The longest pattern (glob or ag-grep query) accepted, 1 MiB: far more
/// than a real one, and a bound on what compiling it can cost.
pub const MAX_PATTERN_BYTES: usize = 1024 * 1024;

/// A set of globs, any of which may match.
#[derive(Debug, Clone)]
pub struct PathGlobs {
    set: GlobSet,
    /// The globs as given, for messages.
    given: Vec<String>,
}

impl PathGlobs {
    /// Parses a spec: one glob, or several separated by commas outside
    /// braces (`*.ts,*.tsx` is `*.{ts,tsx}`). `field` names the argument in
    /// error messages.
    pub fn parse(spec: &str, field: &str) -> Result<PathGlobs, ToolError> {
        if spec.len() > MAX_PATTERN_BYTES {
            return Err(ToolError::new(
                "glob.too_long",
                format!(
                    "`{field}` is {} bytes long, more than the {} KiB a glob may be; give a shorter one (a few `*.ext` globs, or a directory as `path`).",
                    spec.len(),
                    MAX_PATTERN_BYTES / 1024
                ),
            ));
        }
        let given: Vec<String> = split_top_level(spec)
            .into_iter()
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect();
        if given.is_empty() {
            return Err(ToolError::new(
                "glob.empty",
                format!(
                    "`{field}` is empty; give a glob such as \"*.rs\" or \"src/**/*.ts\", or leave `{field}` out"
                ),
            ));
        }
        let mut builder = GlobSetBuilder::new();
        for glob in &given {
            let compiled = GlobBuilder::new(&expand(glob))
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| {
                    ToolError::new(
                        "glob.invalid",
                        format!(
                            "`{field}` has an invalid glob `{glob}`: {}. Use `*` for any characters within a name, `**` for any directories, `{{a,b}}` for alternatives, for example \"**/*.{{ts,tsx}}\".",
                            e.kind()
                        ),
                    )
                })?;
            builder.add(compiled);
        }
        let set = builder.build().map_err(|e| {
            ToolError::new(
                "glob.invalid",
                format!("`{field}` cannot be compiled: {e}; simplify the globs"),
            )
        })?;
        Ok(PathGlobs { set, given })
    }

    /// Whether a path relative to the search directory matches. A directory
    /// that matches stands for everything inside it: the walkers prune it.
    pub fn is_match(&self, relative: &Path) -> bool {
        self.set.is_match(relative)
    }

    /// The globs as given, joined for messages.
    pub fn shown(&self) -> String {
        self.given.join(",")
    }
}

/// The globset pattern one gitignore-style glob stands for.
fn expand(glob: &str) -> String {
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    // A trailing slash names a directory: the glob matches what is inside.
    let (glob, dir_only) = match glob.strip_suffix('/') {
        Some(g) if !g.is_empty() => (g, true),
        _ => (glob, false),
    };
    let anchored = match glob.strip_prefix('/') {
        Some(rest) => rest.to_string(),
        None if glob.contains('/') => glob.to_string(),
        None => format!("**/{glob}"),
    };
    if dir_only {
        format!("{anchored}/**")
    } else {
        anchored
    }
}

/// Splits at commas that are not inside `{...}` or `[...]`.
fn split_top_level(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_class, mut start, mut escaped) = (0usize, false, 0usize, false);
    for (i, c) in spec.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => depth += 1,
            '}' if !in_class => depth = depth.saturating_sub(1),
            ',' if depth == 0 && !in_class => {
                parts.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&spec[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(spec: &str, path: &str) -> bool {
        PathGlobs::parse(spec, "pattern")
            .unwrap()
            .is_match(Path::new(path))
    }

    #[test]
    fn names_match_at_any_depth_paths_from_the_root() {
        assert!(m("*.rs", "main.rs"));
        assert!(m("*.rs", "src/deep/main.rs"));
        assert!(!m("*.rs", "main.rs.bak"));
        assert!(m("src/*.rs", "src/main.rs"));
        assert!(!m("src/*.rs", "src/a/main.rs"));
        assert!(!m("src/*.rs", "lib/src/main.rs"));
        assert!(m("src/**/*.rs", "src/a/b/main.rs"));
        assert!(m("**/*.rs", "main.rs"));
        assert!(m("/Cargo.toml", "Cargo.toml"));
        assert!(!m("/Cargo.toml", "sub/Cargo.toml"));
        assert!(m("./src/*.rs", "src/x.rs"));
    }

    #[test]
    fn lists_braces_and_directories() {
        assert!(m("*.ts, *.tsx", "a/b.tsx"));
        assert!(m("*.{ts,tsx}", "b.ts"));
        assert!(m("[ab],c", "c"));
        assert!(m("node_modules", "node_modules"));
        assert!(m("node_modules", "web/node_modules"));
        assert!(m("gen/", "src/gen/a.rs"));
        assert!(!m("gen/", "gen"));
        assert!(m("src/gen", "src/gen"));
    }

    #[test]
    fn errors_name_the_field() {
        let e = PathGlobs::parse("a[", "include_pattern").unwrap_err();
        assert_eq!(e.code, "glob.invalid");
        assert!(e.message.contains("include_pattern"), "{}", e.message);
        assert_eq!(
            PathGlobs::parse(" , ", "pattern").unwrap_err().code,
            "glob.empty"
        );
    }
}
