//! Agent Skills: folders holding a `SKILL.md` whose YAML front matter
//! gives a `name` and a `description`, and whose markdown body (with any
//! scripts and files beside it) is the know-how. The system prompt lists
//! each skill in one line (name, description, path); the body costs
//! nothing until the model reads the file with the read tool.
//!
//! Found in `--skills DIR` first, then the project's `.agents/skills/` and
//! `.claude/skills/` (from the working directory up to the repository
//! root), then `~/.agents/skills/` and `$AG_HOME/skills/`; the first skill
//! of a name wins. A skill only adds knowledge: front matter fields that
//! would grant something (`allowed-tools`, `model`, hooks, ...) are
//! ignored, as for a project's identity, so a skill that comes with the
//! code being worked on never loosens the sandbox or the approval policy.
//!
//! A project's skills come with the code too, so they are read as its
//! other files are (see [`super::reading::read_file`]): a bounded read of a
//! regular file that stays inside the repository. What is listed is
//! cleaned of terminal control characters, and a name is one short word,
//! so that a skill can neither fill every request nor rewrite the
//! terminal of whoever lists it.

use std::path::{Path, PathBuf};

use super::reading::printable;

/// The longest description listed, in characters (the Agent Skills
/// format's own limit); a longer one is cut, so one skill cannot fill the
/// prompt.
const MAX_DESCRIPTION: usize = 1024;

/// The longest name, in characters (the Agent Skills format's own limit).
const MAX_NAME: usize = 64;

/// How deep below a skills directory a `SKILL.md` is looked for: skills
/// grouped in folders (`db/migrate/SKILL.md`) are found, a whole tree is
/// not walked.
const MAX_DEPTH: usize = 3;

/// A skill found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The front matter's `name`, else the folder's name.
    pub name: String,
    /// What it is for and when to use it, on one line.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// A skill folder that could not be listed, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// What is wrong and what to write instead.
    pub reason: String,
}

/// A directory searched for skills.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillsDir {
    /// The directory.
    pub path: PathBuf,
    /// For a project's: the directory its skills must stay in (the
    /// repository). `None` for the person's own, which are read wherever
    /// their links lead.
    pub within: Option<PathBuf>,
}

impl SkillsDir {
    /// The person's own directory (`--skills`, `~/.agents/skills`,
    /// `$AG_HOME/skills`).
    pub fn own(path: PathBuf) -> Self {
        SkillsDir { path, within: None }
    }
}

/// The directories searched, in order: `extra` (`--skills`), the
/// project's from `cwd` up to the repository root, then the person's.
pub fn search_dirs(cwd: &Path, extra: &[PathBuf]) -> Vec<SkillsDir> {
    let mut dirs: Vec<SkillsDir> = extra.iter().map(|d| SkillsDir::own(cwd.join(d))).collect();
    let repo = super::reading::repository_root(cwd);
    for d in cwd.ancestors() {
        let within = Some(repo.clone().unwrap_or_else(|| d.to_path_buf()));
        for sub in [".agents/skills", ".claude/skills"] {
            dirs.push(SkillsDir {
                path: d.join(sub),
                within: within.clone(),
            });
        }
        if repo.as_deref() == Some(d) {
            break;
        }
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        dirs.push(SkillsDir::own(PathBuf::from(home).join(".agents/skills")));
    }
    dirs.push(SkillsDir::own(crate::session::ag_home().join("skills")));
    // Working in the home directory names `~/.agents/skills` twice: the
    // first, a project's, keeps its bounds.
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.path.clone()));
    dirs
}

/// Every skill in `dirs`, first of a name wins, and the folders that were
/// passed over with the reason. A file that cannot be read at all is said
/// on stderr when it is met.
pub fn find(dirs: &[SkillsDir]) -> (Vec<Skill>, Vec<Skipped>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut skipped = Vec::new();
    for dir in dirs {
        let within = dir.within.as_deref();
        let mut files = Vec::new();
        collect(&dir.path, within, 0, &mut files);
        files.sort();
        for path in files {
            let Some(text) = super::reading::read_or_warn(&path, within) else {
                continue;
            };
            match parse(&text, &folder_of(&path), &path) {
                Ok(s) if skills.iter().any(|k| k.name == s.name) => {}
                Ok(s) => skills.push(s),
                Err(reason) => skipped.push(Skipped { path, reason }),
            }
        }
    }
    (skills, skipped)
}

/// The `SKILL.md` files of the folders below `dir`; a skill's own folder
/// is not searched further (its files are its own). Inside a project, a
/// folder that leads out of it is passed over, and so is one whose name
/// holds control characters (its path would be printed).
fn collect(dir: &Path, within: Option<&Path>, depth: usize, out: &mut Vec<PathBuf>) {
    if depth >= MAX_DEPTH || !stays_within(dir, within) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !p.is_dir() {
            continue;
        }
        if name != printable(&name) {
            super::reading::warn_once(
                &p,
                &format!(
                    "the skills folder `{}` is not read: its name holds control characters",
                    p.display().to_string().escape_debug()
                ),
            );
            continue;
        }
        let file = p.join("SKILL.md");
        // There at all, whatever it is: what cannot be read is said when
        // it is read.
        if std::fs::symlink_metadata(&file).is_ok() {
            out.push(file);
        } else {
            collect(&p, within, depth + 1, out);
        }
    }
}

/// Whether `dir` stays inside `within` (when given), links and all; one
/// that leads out is said once.
fn stays_within(dir: &Path, within: Option<&Path>) -> bool {
    let Some(root) = within else {
        return true;
    };
    let (Ok(real), Ok(real_root)) = (dir.canonicalize(), root.canonicalize()) else {
        // Not there: nothing to read either way.
        return true;
    };
    if real.starts_with(&real_root) {
        return true;
    }
    let e = crate::fsutil::SmallTextError::Outside(root.to_path_buf());
    super::reading::warn_once(dir, &super::reading::not_read(dir, &e));
    false
}

/// The name of the folder a `SKILL.md` is in.
fn folder_of(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn parse(text: &str, folder: &str, path: &Path) -> Result<Skill, String> {
    let fields = front_matter(text).ok_or_else(|| {
        "has no front matter: start it with a `---` line, then `name:` and `description:`, then `---`"
            .to_string()
    })?;
    let get = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let raw = get("name").unwrap_or_else(|| folder.to_string());
    let name = printable(&raw);
    let length = name.chars().count();
    if length > MAX_NAME {
        return Err(format!(
            "has a name of {length} characters, more than the {MAX_NAME} the Agent Skills format allows: write `name:` as one short word, like `name: {}`",
            slug(&name.chars().take(MAX_NAME).collect::<String>(), folder)
        ));
    }
    if name.is_empty() || raw.contains(char::is_whitespace) {
        return Err(format!(
            "has the name `{}`: write `name:` as one word, like `name: {}`",
            printable_spaced(&raw),
            slug(&printable_spaced(&raw), folder)
        ));
    }
    let description = get("description").ok_or_else(|| {
        "has no `description:`: add one line saying what the skill is for and when to use it"
            .to_string()
    })?;
    let mut description = printable_spaced(&description);
    if let Some((at, _)) = description.char_indices().nth(MAX_DESCRIPTION) {
        description.truncate(at);
        description.push('…');
    }
    Ok(Skill {
        name,
        description,
        path: path.to_path_buf(),
    })
}

/// `text` on one line: its runs of white space (newlines and tabs too)
/// one space each, then [`printable`]: a name and a description are one
/// field of one line each, in the prompt and in `--list-skills`'
/// tab-separated output.
fn printable_spaced(text: &str) -> String {
    printable(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn slug(name: &str, folder: &str) -> String {
    let s = name.split_whitespace().collect::<Vec<_>>().join("-");
    if s.is_empty() {
        folder.to_string()
    } else {
        s.to_lowercase()
    }
}

/// The top-level `key: value` pairs of the front matter, with quoted
/// values unquoted and `>`/`|` block values joined. Nested keys (under
/// `metadata:`, say) are not top-level and are left out.
fn front_matter(text: &str) -> Option<Vec<(String, String)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut body = Vec::new();
    let mut closed = false;
    for l in lines {
        if l.trim_end() == "---" {
            closed = true;
            break;
        }
        body.push(l);
    }
    if !closed {
        return None;
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        i += 1;
        if line.starts_with([' ', '\t', '#', '-']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        // The indented lines after it: a block value, or a nested map.
        let mut block = Vec::new();
        while i < body.len() && (body[i].starts_with([' ', '\t']) || body[i].trim().is_empty()) {
            block.push(body[i].trim());
            i += 1;
        }
        let value = if value.starts_with(['>', '|']) {
            block.retain(|l| !l.is_empty());
            block.join(" ")
        } else if value.is_empty() {
            String::new()
        } else {
            unquote(value)
        };
        out.push((key.trim().to_string(), value));
    }
    Some(out)
}

fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

/// The part of the system prompt that lists the skills, empty when there
/// are none.
pub fn listing(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Skills\n\nWhen a task matches a skill, read its SKILL.md first; paths in it are relative to its folder.",
    );
    for s in skills {
        out.push_str(&format!(
            "\n- {}: {} ({})",
            s.name,
            s.description,
            s.path.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_quoted_values_and_nested_maps() {
        let text = "---\nname: pdf\ndescription: >\n  Extract text\n  from PDFs.\nallowed-tools: Bash(rm:*)\nmetadata:\n  name: other\n---\nbody";
        let s = parse(text, "dir", Path::new("/x/SKILL.md")).unwrap();
        assert_eq!(s.name, "pdf");
        assert_eq!(s.description, "Extract text from PDFs.");
        let q = parse(
            "---\ndescription: 'Quoted: yes'\n---\n",
            "folder",
            Path::new("/x/SKILL.md"),
        )
        .unwrap();
        assert_eq!(
            (q.name.as_str(), q.description.as_str()),
            ("folder", "Quoted: yes")
        );
    }

    #[test]
    fn bad_front_matter_says_what_to_write() {
        let p = Path::new("/x/SKILL.md");
        assert!(
            parse("# no front matter", "d", p)
                .unwrap_err()
                .contains("`---`")
        );
        assert!(
            parse("---\nname: a\n", "d", p)
                .unwrap_err()
                .contains("`---`")
        );
        assert!(
            parse("---\nname: a\n---\n", "d", p)
                .unwrap_err()
                .contains("description")
        );
        assert!(
            parse("---\nname: two words\ndescription: d\n---\n", "d", p)
                .unwrap_err()
                .contains("name: two-words")
        );
        let long = format!("---\ndescription: {}\n---\n", "x".repeat(5000));
        let s = parse(&long, "d", p).unwrap();
        assert_eq!(s.description.chars().count(), MAX_DESCRIPTION + 1);
    }

    #[test]
    fn first_of_a_name_wins_and_own_files_are_not_skills() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        for (d, desc) in [(&a, "first"), (&b, "second")] {
            std::fs::create_dir_all(d.join("same/inner")).unwrap();
            std::fs::write(
                d.join("same/SKILL.md"),
                format!("---\nname: same\ndescription: {desc}\n---\n"),
            )
            .unwrap();
            // A file of the skill's own, not another skill.
            std::fs::write(
                d.join("same/inner/SKILL.md"),
                "---\nname: inner\ndescription: x\n---\n",
            )
            .unwrap();
        }
        std::fs::create_dir_all(b.join("group/broken")).unwrap();
        std::fs::write(b.join("group/broken/SKILL.md"), "no front matter").unwrap();
        let (skills, skipped) = find(&[SkillsDir::own(a), SkillsDir::own(b.clone())]);
        assert_eq!(skills.len(), 1, "{skills:?}");
        assert_eq!(skills[0].description, "first");
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].path, b.join("group/broken/SKILL.md"));
        assert!(listing(&[]).is_empty());
        assert!(listing(&skills).contains("- same: first ("));
    }
}
