//! Which language server serves a file: the built-in table (Python,
//! TypeScript and JavaScript, Rust, Go, C and C++), changed or added to by
//! `$AG_HOME/lsp.toml`, each used when its program is on the PATH.
//!
//! ```toml
//! wait = 2.0                      # seconds an edit waits for diagnostics
//!
//! [servers.python]                # change a built-in server's command
//! command = ["basedpyright-langserver", "--stdio"]
//!
//! [servers.zig]                   # add one
//! command = ["zls"]
//! extensions = ["zig"]
//! roots = ["build.zig"]
//!
//! [servers.rust]                  # or turn one off
//! disabled = true
//! ```
//!
//! Only the user's own file is read, never one in the project: a server
//! is a program that ag starts by itself after an edit, and a repository
//! someone else wrote must not choose it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The config file's name under `$AG_HOME`.
pub const FILE_NAME: &str = "lsp.toml";

/// How long an edit waits for its diagnostics when nothing says.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(2);

/// How long a server may take to answer `initialize` when its entry does
/// not say: rust-analyzer and clangd index a large project first.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(60);

/// A language server as ag starts it: everything the warm host needs, sent
/// with each request so that the host holds no configuration of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Server {
    /// Its name in the table (`python`).
    pub name: String,
    /// The program, found on the PATH, and its arguments.
    pub command: Vec<String>,
    /// The file extensions it serves, without the dot.
    pub extensions: Vec<String>,
    /// The language id for its documents; empty: from the extension.
    #[serde(default)]
    pub language_id: String,
    /// Files that mark a project's root for it (`pyproject.toml`).
    pub roots: Vec<String>,
    /// Seconds it may take to answer `initialize`.
    pub init_timeout: f64,
    /// Environment for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its `initializationOptions`.
    #[serde(default)]
    pub options: Option<serde_json::Value>,
}

impl Server {
    /// The language id of a file it serves.
    pub fn language_of(&self, path: &Path) -> String {
        if !self.language_id.is_empty() {
            return self.language_id.clone();
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "py" | "pyi" => "python",
            "ts" | "mts" | "cts" => "typescript",
            "tsx" => "typescriptreact",
            "js" | "mjs" | "cjs" => "javascript",
            "jsx" => "javascriptreact",
            "rs" => "rust",
            "go" => "go",
            "c" | "h" => "c",
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
            other => other,
        }
        .to_string()
    }

    /// Whether it serves this file.
    pub fn serves(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions.iter().any(|x| x == e))
    }

    /// The root of the project `file` belongs to for this server: the
    /// nearest directory above it holding one of its root markers, not
    /// above `top` (the workspace); else `top`, or the file's directory
    /// when the file is outside `top`.
    pub fn root_for(&self, file: &Path, top: &Path) -> PathBuf {
        let dir = file.parent().unwrap_or(top);
        if !dir.starts_with(top) {
            return dir.to_path_buf();
        }
        for d in dir.ancestors() {
            if self.roots.iter().any(|m| d.join(m).exists()) {
                return d.to_path_buf();
            }
            if d == top {
                break;
            }
        }
        top.to_path_buf()
    }
}

/// One entry of the built-in table: the commands tried in order.
struct Builtin {
    name: &'static str,
    commands: &'static [&'static [&'static str]],
    extensions: &'static [&'static str],
    roots: &'static [&'static str],
}

const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "python",
        commands: &[
            &["pyright-langserver", "--stdio"],
            &["basedpyright-langserver", "--stdio"],
        ],
        extensions: &["py", "pyi"],
        roots: &[
            "pyrightconfig.json",
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
        ],
    },
    Builtin {
        name: "typescript",
        commands: &[&["typescript-language-server", "--stdio"]],
        extensions: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        roots: &["tsconfig.json", "jsconfig.json", "package.json"],
    },
    Builtin {
        name: "rust",
        commands: &[&["rust-analyzer"]],
        extensions: &["rs"],
        roots: &["Cargo.toml"],
    },
    Builtin {
        name: "go",
        commands: &[&["gopls"]],
        extensions: &["go"],
        roots: &["go.mod", "go.work"],
    },
    Builtin {
        name: "c",
        // No background index: it would write `.cache/clangd` into the
        // project, and the servers write only their own cache.
        commands: &[&["clangd", "--background-index=false"]],
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        roots: &["compile_commands.json", "compile_flags.txt"],
    },
];

/// One `[servers.NAME]` of the config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    command: Option<Vec<String>>,
    extensions: Option<Vec<String>>,
    language_id: Option<String>,
    roots: Option<Vec<String>>,
    init_timeout: Option<f64>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    options: Option<serde_json::Value>,
    #[serde(default)]
    disabled: bool,
}

/// The config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    wait: Option<f64>,
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

/// The server table in force, with the wait for diagnostics.
#[derive(Debug, Clone)]
pub struct Table {
    /// The servers whose program is on the PATH, in the table's order.
    pub servers: Vec<Server>,
    /// The servers configured whose program is not on the PATH: name and
    /// the program looked for.
    pub missing: Vec<(String, String)>,
    /// How long an edit waits for diagnostics, from the file.
    pub wait: Option<Duration>,
}

impl Table {
    /// The table of `$AG_HOME/lsp.toml` (a missing file is the built-in
    /// table), with `PATH` searched for each program.
    pub fn load() -> Result<Table, String> {
        let path = config_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        };
        Table::from_toml(&text, &path, &|p| find_program(p))
    }

    fn from_toml(
        text: &str,
        path: &Path,
        find: &dyn Fn(&str) -> Option<PathBuf>,
    ) -> Result<Table, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            format!(
                "`{}` is not a valid lsp config: {}",
                path.display(),
                e.message()
            )
        })?;
        let mut entries: Vec<(String, Vec<Vec<String>>, Entry)> = BUILTIN
            .iter()
            .map(|b| {
                let entry = Entry {
                    extensions: Some(b.extensions.iter().map(|s| s.to_string()).collect()),
                    roots: Some(b.roots.iter().map(|s| s.to_string()).collect()),
                    ..Entry::default()
                };
                let commands = b
                    .commands
                    .iter()
                    .map(|c| c.iter().map(|s| s.to_string()).collect())
                    .collect();
                (b.name.to_string(), commands, entry)
            })
            .collect();
        for (name, given) in file.servers {
            match entries.iter_mut().find(|(n, _, _)| *n == name) {
                Some((_, commands, entry)) => {
                    if let Some(c) = &given.command {
                        *commands = vec![c.clone()];
                    }
                    merge(entry, given);
                }
                None => {
                    let Some(c) = given.command.clone() else {
                        return Err(format!(
                            "`{}`: [servers.{name}] is not a built-in server, so it needs `command` (the program and its arguments) and `extensions`",
                            path.display()
                        ));
                    };
                    if given.extensions.as_ref().is_none_or(Vec::is_empty) {
                        return Err(format!(
                            "`{}`: [servers.{name}] needs `extensions`, the file extensions it serves without the dot",
                            path.display()
                        ));
                    }
                    entries.push((name, vec![c], given));
                }
            }
        }
        let mut servers = Vec::new();
        let mut missing = Vec::new();
        for (name, commands, entry) in entries {
            if entry.disabled {
                continue;
            }
            if let Some(c) = commands.iter().find(|c| c.is_empty()) {
                return Err(format!(
                    "`{}`: [servers.{name}] has an empty `command` {c:?}; give the program and its arguments",
                    path.display()
                ));
            }
            let found = commands
                .iter()
                .find_map(|c| find(&c[0]).map(|p| (p, c.clone())));
            let Some((program, mut command)) = found else {
                missing.push((name, commands[0][0].clone()));
                continue;
            };
            command[0] = program.to_string_lossy().into_owned();
            servers.push(Server {
                name,
                command,
                extensions: entry.extensions.unwrap_or_default(),
                language_id: entry.language_id.unwrap_or_default(),
                roots: entry.roots.unwrap_or_default(),
                init_timeout: entry
                    .init_timeout
                    .filter(|t| *t > 0.0)
                    .unwrap_or(DEFAULT_INIT_TIMEOUT.as_secs_f64()),
                env: entry.env,
                options: entry.options,
            });
        }
        let wait = match file.wait {
            Some(w) if !(0.0..=600.0).contains(&w) => {
                return Err(format!(
                    "`{}`: `wait = {w}` is out of range; give seconds from 0 to 600",
                    path.display()
                ));
            }
            Some(w) => Some(Duration::from_secs_f64(w)),
            None => None,
        };
        Ok(Table {
            servers,
            missing,
            wait,
        })
    }

    /// The server for this file, if one is on the PATH.
    pub fn for_file(&self, path: &Path) -> Option<&Server> {
        self.servers.iter().find(|s| s.serves(path))
    }

    /// Why no server serves this file, in words, for an error.
    pub fn why_none(&self, path: &Path) -> String {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let configured = BUILTIN
            .iter()
            .find(|b| b.extensions.contains(&ext))
            .map(|b| b.name.to_string());
        match configured.and_then(|n| self.missing.iter().find(|(m, _)| *m == n)) {
            Some((name, program)) if empty_rustup_proxy_on_path(program) => format!(
                "the {name} language server `{program}` on the PATH is rustup's proxy, and no installed toolchain has it; run `rustup component add {program}`, or name another in {} ([servers.{name}] command = [...])",
                config_path().display()
            ),
            Some((name, program)) => format!(
                "the {name} language server `{program}` is not on the PATH; install it, or name another in {} ([servers.{name}] command = [...])",
                config_path().display()
            ),
            None if ext.is_empty() => format!(
                "`{}` has no extension, which is how a language server is chosen",
                path.display()
            ),
            None => format!(
                "no language server is configured for `.{ext}` files; add one to {} ([servers.NAME] with `command` and `extensions`)",
                config_path().display()
            ),
        }
    }
}

fn merge(entry: &mut Entry, given: Entry) {
    if given.extensions.is_some() {
        entry.extensions = given.extensions;
    }
    if given.language_id.is_some() {
        entry.language_id = given.language_id;
    }
    if given.roots.is_some() {
        entry.roots = given.roots;
    }
    if given.init_timeout.is_some() {
        entry.init_timeout = given.init_timeout;
    }
    if given.options.is_some() {
        entry.options = given.options;
    }
    entry.env.extend(given.env);
    entry.disabled = given.disabled;
}

/// `$AG_HOME/lsp.toml`.
pub fn config_path() -> PathBuf {
    crate::session::ag_home().join(FILE_NAME)
}

/// A program by name on the PATH (or a path, as it is), if executable.
///
/// A rustup proxy for a tool that no installed toolchain has is passed
/// over as if it were not there: rustup puts `rust-analyzer` on the PATH
/// of every machine it sets up, component or not, and starting it costs
/// a rustup start that ends in "Unknown binary" (about half a second
/// before the session's first edit of a Rust file could go on).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    let rustup_home = rustup_home();
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| is_executable(p) && !is_empty_rustup_proxy(p, rustup_home.as_deref()))
}

/// Whether the first `program` on the PATH is a rustup proxy that
/// `find_program` passed over.
fn empty_rustup_proxy_on_path(program: &str) -> bool {
    let home = rustup_home();
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
            .is_some_and(|p| is_empty_rustup_proxy(&p, home.as_deref()))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// rustup's home: `$RUSTUP_HOME`, else `~/.rustup`.
fn rustup_home() -> Option<PathBuf> {
    std::env::var_os("RUSTUP_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")))
}

/// Whether `path` is rustup's proxy (the `rustup` beside it, linked under
/// another name) for a tool that no toolchain under `rustup_home` has.
/// When some toolchain has it, the proxy is kept: which toolchain is in
/// force depends on the directory, and a start that fails then is seen
/// once by the host.
fn is_empty_rustup_proxy(path: &Path, rustup_home: Option<&Path>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Some(dir), Some(name), Some(home)) = (path.parent(), path.file_name(), rustup_home) else {
        return false;
    };
    let same_file = match (
        std::fs::metadata(path),
        std::fs::metadata(dir.join("rustup")),
    ) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    if !same_file || name == "rustup" {
        return false;
    }
    let Ok(toolchains) = std::fs::read_dir(home.join("toolchains")) else {
        return false;
    };
    !toolchains
        .flatten()
        .any(|t| is_executable(&t.path().join("bin").join(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str, on_path: &[&str]) -> Result<Table, String> {
        let on: Vec<String> = on_path.iter().map(|s| s.to_string()).collect();
        Table::from_toml(text, Path::new("/h/lsp.toml"), &move |p: &str| {
            on.iter()
                .any(|o| o == p)
                .then(|| PathBuf::from(format!("/bin/{p}")))
        })
    }

    #[test]
    fn builtins_are_used_when_on_the_path_and_the_file_changes_them() {
        let t = table("", &["basedpyright-langserver", "gopls"]).unwrap();
        let py = t.for_file(Path::new("a/b.py")).unwrap();
        assert_eq!(py.command, ["/bin/basedpyright-langserver", "--stdio"]);
        assert_eq!(t.for_file(Path::new("m.go")).unwrap().name, "go");
        assert!(t.for_file(Path::new("x.ts")).is_none());
        assert!(
            t.why_none(Path::new("x.ts"))
                .contains("typescript-language-server")
        );
        let t = table(
            "wait = 0.5\n[servers.python]\ncommand = [\"pylsp\"]\ninit_timeout = 3\n[servers.go]\ndisabled = true\n[servers.zig]\ncommand = [\"zls\"]\nextensions = [\"zig\"]\n",
            &["pylsp", "gopls", "zls"],
        )
        .unwrap();
        assert_eq!(t.wait, Some(Duration::from_millis(500)));
        let py = t.for_file(Path::new("b.py")).unwrap();
        assert_eq!(py.command, ["/bin/pylsp"]);
        assert_eq!(py.init_timeout, 3.0);
        assert_eq!(py.roots[0], "pyrightconfig.json");
        assert!(t.for_file(Path::new("m.go")).is_none());
        assert_eq!(
            t.for_file(Path::new("a.zig"))
                .unwrap()
                .language_of(Path::new("a.zig")),
            "zig"
        );
    }

    #[test]
    fn a_new_server_without_command_or_extensions_is_refused() {
        let e = table("[servers.zig]\nextensions = [\"zig\"]\n", &[]).unwrap_err();
        assert!(e.contains("needs `command`"), "{e}");
        let e = table("[servers.zig]\ncommand = [\"zls\"]\n", &[]).unwrap_err();
        assert!(e.contains("needs `extensions`"), "{e}");
        let e = table("[servers.python]\ncomand = [\"x\"]\n", &[]).unwrap_err();
        assert!(e.contains("comand"), "{e}");
    }

    #[test]
    fn the_root_is_the_nearest_marker_within_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir_all(top.join("svc/src")).unwrap();
        std::fs::write(top.join("svc/pyproject.toml"), "").unwrap();
        let t = table("", &["pyright-langserver"]).unwrap();
        let py = t.for_file(Path::new("a.py")).unwrap();
        assert_eq!(py.root_for(&top.join("svc/src/a.py"), top), top.join("svc"));
        assert_eq!(py.root_for(&top.join("b.py"), top), top);
        assert_eq!(
            py.root_for(Path::new("/elsewhere/c.py"), top),
            Path::new("/elsewhere")
        );
    }

    #[test]
    fn a_rustup_proxy_counts_only_when_some_toolchain_has_its_tool() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("cargo/bin");
        let home = dir.path().join("rustup");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(home.join("toolchains/stable/bin")).unwrap();
        let rustup = bin.join("rustup");
        std::fs::write(&rustup, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).unwrap();
        // rustup makes its proxies as links to itself, hard or symbolic.
        std::os::unix::fs::symlink("rustup", bin.join("rust-analyzer")).unwrap();
        std::fs::hard_link(&rustup, bin.join("rustfmt")).unwrap();
        let plain = bin.join("pyright-langserver");
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
        let h = Some(home.as_path());

        assert!(is_empty_rustup_proxy(&bin.join("rust-analyzer"), h));
        assert!(is_empty_rustup_proxy(&bin.join("rustfmt"), h));
        assert!(!is_empty_rustup_proxy(&plain, h));
        assert!(!is_empty_rustup_proxy(&rustup, h));
        // Unknown where rustup keeps its toolchains: started, as before.
        assert!(!is_empty_rustup_proxy(&bin.join("rust-analyzer"), None));

        let real = home.join("toolchains/stable/bin/rust-analyzer");
        std::fs::write(&real, "").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_empty_rustup_proxy(&bin.join("rust-analyzer"), h));
        assert!(is_empty_rustup_proxy(&bin.join("rustfmt"), h));
    }
}
