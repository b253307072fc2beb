//! Agent identities: markdown files whose front matter chooses the name,
//! role, model, reasoning, tools and sandbox, and whose body is put at the
//! top of the system prompt, above the project context. Looked up in the
//! project's `.ag/agents/` (from the working directory up to the
//! repository root), then `$AG_HOME/agents/`; `default.md` is the one used
//! when none is named.
//!
//! The front matter is read as seed 003 writes it as well as in ag's flat
//! form: `model:` as one `provider/id` or as a nested `provider:` and `id:`
//! block, `toolSet:` or `tools:` as a set name, a comma list, `[a, b]` or a
//! block of `- a` lines. That is the part of YAML front matter that
//! identities use; anything else is refused with the line and what to
//! write instead.

use std::path::{Path, PathBuf};

use super::error::SetupError;
use crate::fsutil::SmallTextError;

/// The identity used when none is named, when there is one.
pub const DEFAULT: &str = "default";

/// A loaded identity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    /// What `--agent` and `@NAME` call it: the file's name without `.md`.
    pub stem: String,
    /// The name (the file's stem unless the front matter says otherwise).
    pub name: String,
    /// A one-line role, for `--list-agents`.
    pub role: Option<String>,
    /// `provider/model`.
    pub model: Option<String>,
    /// Reasoning effort (`off`, `low`, `medium`, `high`).
    pub reasoning: Option<String>,
    /// The sampling temperature of its model calls (0 or more).
    pub temperature: Option<f64>,
    /// A tool set name or a list of tool names.
    pub tools: Option<Vec<String>>,
    /// The body: the top of the system prompt.
    pub prompt: String,
    /// Where it was found.
    pub path: PathBuf,
    // The sandbox (issue 19): the front matter's words, checked by
    // `crate::agent::calls::sandbox::resolve`.
    /// `sandbox`: auto, require or off.
    pub sandbox: Option<String>,
    /// `sandbox_mode`: workspace-write or read-only.
    pub sandbox_mode: Option<String>,
    /// `allow_net`: true or false.
    pub allow_net: Option<String>,
    /// Structured output: a JSON Schema file (relative to the identity's
    /// directory) or inline JSON that the final answer must match.
    pub output_schema: Option<String>,
    // Tools in another workspace (issue 22).
    /// `workspace`: a workspace URI; only a personal identity's counts.
    pub workspace: Option<String>,
}

/// The directories searched, first match wins.
pub fn search_dirs(cwd: &Path) -> Vec<PathBuf> {
    places(cwd).into_iter().map(|(d, _)| d).collect()
}

/// The directories searched, each with the directory its files must stay
/// in: the project's (from the working directory up to the repository
/// root) stay in the repository (or, outside one, in the directory whose
/// `.ag` it is), since they come with the code; `$AG_HOME`'s are the
/// person's own and are read wherever they lead. See
/// [`super::reading::read_file`].
fn places(cwd: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let repo = super::reading::repository_root(cwd);
    let mut dirs = Vec::new();
    for d in cwd.ancestors() {
        let within = repo.clone().unwrap_or_else(|| d.to_path_buf());
        dirs.push((d.join(".ag/agents"), Some(within)));
        if repo.as_deref() == Some(d) {
            break;
        }
    }
    dirs.push((crate::session::ag_home().join("agents"), None));
    dirs
}

/// The files that would be the identity `name`, nearest first, each with
/// the directory it must stay in: every one that is there and is not a
/// directory (what cannot be read is said when it is read).
fn candidates(cwd: &Path, name: &str) -> Vec<(PathBuf, Option<PathBuf>)> {
    // A name is a file name, not a path: `@../x` finds nothing.
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Vec::new();
    }
    places(cwd)
        .into_iter()
        .map(|(d, within)| (d.join(format!("{name}.md")), within))
        .filter(|(p, _)| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()))
        .collect()
}

/// The file of the identity `name`, if there is one.
pub fn find(cwd: &Path, name: &str) -> Option<PathBuf> {
    candidates(cwd, name).into_iter().next().map(|(p, _)| p)
}

/// Finds and loads an identity by name. A file that cannot be read (a
/// project's that leads outside it, a FIFO, ...) is passed over, with a
/// warning, for the next place; when none can be read, the first one's
/// reason is the error.
pub fn load(cwd: &Path, name: &str) -> Result<Identity, SetupError> {
    let (found, mut refused) = read_first(cwd, name)?;
    if let Some(id) = found {
        warn_all(&refused);
        return Ok(id);
    }
    if refused.is_empty() {
        return Err(SetupError::NoIdentity {
            name: name.to_string(),
            dirs: search_dirs(cwd),
        });
    }
    let (path, e) = refused.remove(0);
    warn_all(&refused);
    Err(SetupError::IdentityRead {
        path,
        source: match e {
            SmallTextError::Io(io) => io,
            other => std::io::Error::other(other),
        },
    })
}

/// `default.md`, when the project or `$AG_HOME` has one that can be read.
/// One that cannot is passed over with a warning: a cloned repository's
/// `.ag/agents/default.md` is read on every run, and must not keep ag
/// from starting.
pub fn load_default(cwd: &Path) -> Result<Option<Identity>, SetupError> {
    let (found, refused) = read_first(cwd, DEFAULT)?;
    warn_all(&refused);
    Ok(found)
}

/// The first of the identity's files that can be read, parsed, and the
/// ones before it that could not be read.
type Refused = Vec<(PathBuf, SmallTextError)>;

fn read_first(cwd: &Path, name: &str) -> Result<(Option<Identity>, Refused), SetupError> {
    let mut refused = Vec::new();
    for (path, within) in candidates(cwd, name) {
        match super::reading::read_file(&path, within.as_deref()) {
            Ok(text) => return Ok((Some(parse(name, &text, &path)?), refused)),
            Err(e) => refused.push((path, e)),
        }
    }
    Ok((None, refused))
}

fn warn_all(refused: &Refused) {
    for (path, e) in refused {
        super::reading::warn_once(path, &super::reading::not_read(path, e));
    }
}

/// Every identity that can be found, nearest first, each name once.
pub fn list(cwd: &Path) -> Vec<Identity> {
    let mut out: Vec<Identity> = Vec::new();
    for (dir, within) in places(cwd) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        paths.sort();
        for p in paths {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if out.iter().any(|i| i.stem == stem) {
                continue;
            }
            // `--list-agents` prints the stem and the path.
            if stem != super::reading::printable(&stem) {
                super::reading::warn_once(
                    &p,
                    &format!(
                        "the identity `{}` is not read: its name holds control characters",
                        p.display().to_string().escape_debug()
                    ),
                );
                continue;
            }
            if let Some(text) = super::reading::read_or_warn(&p, within.as_deref())
                && let Ok(id) = parse(&stem, &text, &p)
            {
                out.push(id);
            }
        }
    }
    out
}

/// A front matter value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// `key: text`.
    Text(String),
    /// `key: [a, b]`, or `key:` over `- a` lines.
    List(Vec<String>),
    /// `key: {k: v}`, or `key:` over indented `k: v` lines.
    Map(Vec<(String, String)>),
}

/// Parses `---` front matter, then the body.
pub fn parse(stem: &str, text: &str, path: &Path) -> Result<Identity, SetupError> {
    let mut id = Identity {
        stem: stem.to_string(),
        name: stem.to_string(),
        path: path.to_path_buf(),
        ..Default::default()
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        id.prompt = text.trim().to_string();
        return Ok(id);
    };
    let Some(end) = rest.find("\n---") else {
        return Err(SetupError::IdentityUnclosed(path.to_path_buf()));
    };
    let (front, body) = rest.split_at(end);
    id.prompt = body.trim_start_matches("\n---").trim().to_string();
    let bad = |line: usize, why: String| SetupError::IdentityLine {
        path: path.to_path_buf(),
        line,
        why,
    };
    for (line, key, value) in entries(front).map_err(|(line, why)| bad(line, why))? {
        let text = |value: Value| match value {
            Value::Text(t) => Ok(t),
            other => Err(bad(
                line,
                format!(
                    "`{key}` takes one value on its line (`{key}: ...`), not {}",
                    what(&other)
                ),
            )),
        };
        match key.as_str() {
            // `--list-agents` prints them: nothing in them may act on the
            // terminal.
            "name" => id.name = super::reading::printable(&text(value)?),
            "role" | "description" => id.role = Some(super::reading::printable(&text(value)?)),
            "model" => id.model = Some(model(&key, value).map_err(|why| bad(line, why))?),
            "reasoning" => id.reasoning = Some(text(value)?),
            "temperature" => {
                let given = text(value)?;
                let t = given
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|t| crate::llm::cli::is_temperature(*t))
                    .ok_or_else(|| {
                        bad(
                            line,
                            format!(
                                "`temperature` is a number, 0 or more (0 for the most predictable answers), as `temperature: 0.2`, not `{}`",
                                given.trim()
                            ),
                        )
                    })?;
                id.temperature = Some(t);
            }
            "output_schema" => id.output_schema = Some(text(value)?),
            "tools" | "toolset" | "toolSet" | "tool_set" => {
                id.tools = Some(match value {
                    Value::Text(t) => split_list(&t),
                    Value::List(items) => items,
                    Value::Map(_) => {
                        return Err(bad(
                            line,
                            format!(
                                "`{key}` is a set (full, minimal, readonly, chat) or a list of tool names, as `{key}: [read, bash]`, not a map"
                            ),
                        ));
                    }
                })
            }
            "sandbox" => id.sandbox = Some(text(value)?),
            "sandbox_mode" | "sandbox-mode" => id.sandbox_mode = Some(text(value)?),
            "allow_net" | "allow-net" => id.allow_net = Some(text(value)?),
            "workspace" => id.workspace = Some(text(value)?),
            other => {
                return Err(SetupError::IdentityKey {
                    path: path.to_path_buf(),
                    line,
                    key: other.to_string(),
                });
            }
        }
    }
    Ok(id)
}

/// `model: provider/id`, or seed 003's block of `provider:` and `id:`.
fn model(key: &str, value: Value) -> Result<String, String> {
    let pairs = match value {
        Value::Text(t) => return Ok(t),
        Value::List(_) => {
            return Err(format!(
                "`{key}` is one model, as `{key}: anthropic/claude-sonnet-4-5`, not a list"
            ));
        }
        Value::Map(pairs) => pairs,
    };
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if let Some((other, _)) = pairs.iter().find(|(n, _)| n != "provider" && n != "id") {
        return Err(format!(
            "`{key}` takes `provider` and `id`, not `{other}`; or write it on one line, `{key}: PROVIDER/ID`"
        ));
    }
    match (get("provider"), get("id")) {
        (Some(p), Some(i)) if !p.is_empty() && !i.is_empty() => Ok(format!("{p}/{i}")),
        (Some(p), _) => Err(format!(
            "`{key}` has a provider (`{p}`) but no `id`; add `id: MODEL` under it, or write `{key}: {p}/MODEL`"
        )),
        (None, Some(i)) => Err(format!(
            "`{key}` has an id (`{i}`) but no `provider`; add `provider: NAME` under it, or write `{key}: PROVIDER/{i}`"
        )),
        (None, None) => Err(format!(
            "`{key}` is empty; write `{key}: PROVIDER/ID`, or `provider:` and `id:` under it"
        )),
    }
}

fn what(v: &Value) -> &'static str {
    match v {
        Value::Text(_) => "a value",
        Value::List(_) => "a list",
        Value::Map(_) => "a block of keys",
    }
}

/// `read, bash` or `[read, bash]`: the names, unquoted.
fn split_list(text: &str) -> Vec<String> {
    let inner = text.trim();
    let inner = inner
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(inner);
    inner
        .split(',')
        .map(unquote)
        .filter(|s| !s.is_empty())
        .collect()
}

/// A scalar as YAML writes it: quotes taken off, a ` # comment` after an
/// unquoted one dropped.
fn unquote(text: &str) -> String {
    let t = text.trim();
    for q in ['"', '\''] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return t[1..t.len() - 1].to_string();
        }
    }
    match t.find(" #") {
        Some(i) => t[..i].trim_end().to_string(),
        None => t.to_string(),
    }
}

type Entry = (usize, String, Value);

/// The front matter's entries with their line numbers in the file (the
/// front matter starts on line 2). Errors carry the line and what to write.
fn entries(front: &str) -> Result<Vec<Entry>, (usize, String)> {
    let lines: Vec<(usize, &str)> = front
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 2, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    let mut out: Vec<Entry> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = lines[i];
        i += 1;
        if line.starts_with([' ', '\t']) {
            return Err((
                n,
                "an indented line belongs under a `key:` line with nothing after the colon".into(),
            ));
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err((n, format!("expected `key: value`, found `{}`", line.trim())));
        };
        let key = key.trim().to_string();
        let rest = unquote(rest);
        if !rest.is_empty() {
            out.push((n, key, inline(&rest)));
            continue;
        }
        // A block: the indented lines that follow.
        let mut block: Vec<(usize, &str)> = Vec::new();
        while i < lines.len() && lines[i].1.starts_with([' ', '\t']) {
            block.push((lines[i].0, lines[i].1.trim()));
            i += 1;
        }
        out.push((n, key.clone(), block_value(&key, n, &block)?));
    }
    Ok(out)
}

/// `[a, b]`, `{k: v}` or a plain value.
fn inline(text: &str) -> Value {
    if text.starts_with('[') && text.ends_with(']') {
        return Value::List(split_list(text));
    }
    if let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        return Value::Map(
            inner
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| match p.split_once(':') {
                    Some((k, v)) => (unquote(k), unquote(v)),
                    None => (unquote(p), String::new()),
                })
                .collect(),
        );
    }
    Value::Text(text.to_string())
}

/// The lines under `key:`: all `- item`, or all `k: v`.
fn block_value(key: &str, n: usize, block: &[(usize, &str)]) -> Result<Value, (usize, String)> {
    let Some((_, first)) = block.first() else {
        return Ok(Value::Text(String::new()));
    };
    if first.starts_with('-') {
        let mut items = Vec::new();
        for (m, l) in block {
            let Some(item) = l.strip_prefix('-') else {
                return Err((
                    *m,
                    format!("`{key}` is a list: every line under it starts with `- `"),
                ));
            };
            let item = unquote(item);
            if !item.is_empty() {
                items.push(item);
            }
        }
        return Ok(Value::List(items));
    }
    let mut pairs = Vec::new();
    for (m, l) in block {
        match l.split_once(':') {
            Some((k, v)) if !l.starts_with('-') && !unquote(v).is_empty() => {
                pairs.push((k.trim().to_string(), unquote(v)))
            }
            _ => {
                return Err((
                    *m,
                    format!(
                        "under `{key}` (line {n}) ag reads `name: value` lines, or only `- item` lines; found `{l}`"
                    ),
                ));
            }
        }
    }
    Ok(Value::Map(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Identity, String> {
        parse("m", text, Path::new("m.md")).map_err(|e| e.to_string())
    }

    #[test]
    fn front_matter_and_body() {
        let text = "---\nname: reviewer\nrole: reviews diffs\nmodel: openai/gpt-4o\ntools: [read, grep]\n---\nYou review code.\n";
        let id = parse("r", text, Path::new("r.md")).unwrap();
        assert_eq!((id.stem.as_str(), id.name.as_str()), ("r", "reviewer"));
        assert_eq!(id.model.as_deref(), Some("openai/gpt-4o"));
        assert_eq!(id.tools, Some(vec!["read".to_string(), "grep".to_string()]));
        assert_eq!(id.prompt, "You review code.");
        assert!(parse("r", "---\nbogus: 1\n---\nx", Path::new("r.md")).is_err());
        assert_eq!(
            parse("plain", "Just a prompt", Path::new("p.md"))
                .unwrap()
                .prompt,
            "Just a prompt"
        );
    }

    #[test]
    fn seed_003s_identity_is_read_as_written() {
        let text = "---\nname: Matt\nrole: CTO & Systems Architect\nmodel:\n  provider: anthropic\n  id: claude-sonnet-4-20250514\ntoolSet: full\n---\n\n# Matt -- CTO & Systems Architect\n\nYou are Matt.\n";
        let id = parsed(text).unwrap();
        assert_eq!(id.name, "Matt");
        assert_eq!(id.role.as_deref(), Some("CTO & Systems Architect"));
        assert_eq!(
            id.model.as_deref(),
            Some("anthropic/claude-sonnet-4-20250514")
        );
        assert_eq!(id.tools, Some(vec!["full".to_string()]));
        assert!(id.prompt.starts_with("# Matt -- CTO"), "{}", id.prompt);
    }

    #[test]
    fn lists_and_maps_in_every_form_yaml_front_matter_uses() {
        let block = parsed("---\ntools:\n  - read\n  - \"bash\"  \n# a comment\n\nmodel: {provider: openai, id: 'gpt-4o'}\n---\nx").unwrap();
        assert_eq!(block.tools, Some(vec!["read".into(), "bash".into()]));
        assert_eq!(block.model.as_deref(), Some("openai/gpt-4o"));
        let flat =
            parsed("---\ntoolset: read, grep # the readers\nrole: \"a: b\"\n---\nx").unwrap();
        assert_eq!(flat.tools, Some(vec!["read".into(), "grep".into()]));
        assert_eq!(flat.role.as_deref(), Some("a: b"));
        let crlf = parsed("---\r\nmodel:\r\n  provider: p\r\n  id: m\r\n---\r\nx").unwrap();
        assert_eq!(crlf.model.as_deref(), Some("p/m"));
    }

    #[test]
    fn what_cannot_be_read_says_the_line_and_what_to_write() {
        let e = parsed("---\nmodel:\n  id: gpt-4o\n---\nx").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("`model: PROVIDER/gpt-4o`"),
            "{e}"
        );
        let e = parsed("---\nmodel:\n  provider: openai\n  name: gpt-4o\n---\nx").unwrap_err();
        assert!(e.contains("not `name`"), "{e}");
        let e = parsed("---\n  name: x\n---\nx").unwrap_err();
        assert!(e.contains("line 2") && e.contains("indented"), "{e}");
        let e = parsed("---\ntools:\n  - read\n  bash\n---\nx").unwrap_err();
        assert!(e.contains("line 4") && e.contains("`- `"), "{e}");
        let e = parsed("---\nname:\n  - a\n---\nx").unwrap_err();
        assert!(e.contains("`name` takes one value"), "{e}");
        let e = parsed("---\njust words\n---\nx").unwrap_err();
        assert!(e.contains("`key: value`"), "{e}");
        let e = parsed("---\nname: x\ntemperature: -0.5\n---\nx").unwrap_err();
        assert!(
            e.contains("line 3") && e.contains("as `temperature: 0.2`, not `-0.5`"),
            "{e}"
        );
        let e = parsed("---\ntemperature: warm\n---\nx").unwrap_err();
        assert!(e.contains("not `warm`"), "{e}");
        assert_eq!(
            parsed("---\ntemperature: 0.2\n---\nx").unwrap().temperature,
            Some(0.2)
        );
    }

    #[test]
    fn what_list_agents_prints_cannot_act_on_the_terminal() {
        let id =
            parsed("---\nname: \"Ma\u{1b}[2Jtt\"\nrole: CTO\u{1b}]0;pwned\u{7} \u{202e}x\n---\nx")
                .unwrap();
        assert_eq!(id.name, "Ma[2Jtt");
        assert_eq!(id.role.as_deref(), Some("CTO]0;pwned x"));
    }

    #[test]
    fn names_that_are_paths_find_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join(".ag/agents")).unwrap();
        std::fs::write(dir.path().join(".ag/agents/dev.md"), "x").unwrap();
        std::fs::write(dir.path().join(".ag/secret.md"), "x").unwrap();
        assert!(find(dir.path(), "dev").is_some());
        for bad in ["../secret", "", ".hidden", "a/b"] {
            assert!(find(dir.path(), bad).is_none(), "{bad}");
        }
    }
}
