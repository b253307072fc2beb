//! Skills as slash commands: each skill ag-loop would list to the model in
//! a session's directory (as `ag-loop --list-skills` and ag-tui's `/skills`
//! show them) is announced in `available_commands_update` under its name,
//! and `/NAME [what to do]` becomes a prompt asking the model to use that
//! skill, naming its SKILL.md as the system prompt's listing does. The
//! skill's body is not pasted: the model reads it, as it would on its own.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};

use super::commands;
use crate::agent::config::skills::{self, Skill};

/// The skills of a session in `cwd`, as ag-loop started with `loop_args`
/// would list them (its `--skills DIR` and `--no-skills`), less those
/// whose name is one of ag-acp's own commands or no command name.
pub fn find(cwd: &Path, loop_args: &[String]) -> Vec<Skill> {
    let mut extra = Vec::new();
    let mut args = loop_args.iter();
    while let Some(a) = args.next() {
        if a == "--no-skills" {
            return Vec::new();
        }
        if a == "--skills" {
            extra.extend(args.next().map(PathBuf::from));
        } else if let Some(dir) = a.strip_prefix("--skills=") {
            extra.push(PathBuf::from(dir));
        }
    }
    let own: Vec<String> = commands::available().into_iter().map(|c| c.name).collect();
    let (found, _) = skills::find(&skills::search_dirs(cwd, &extra));
    found
        .into_iter()
        .filter(|s| {
            !s.name.is_empty() && !s.name.contains(char::is_whitespace) && !own.contains(&s.name)
        })
        .collect()
}

/// The commands the editor shows for them.
pub fn available(skills: &[Skill]) -> Vec<AvailableCommand> {
    skills
        .iter()
        .map(|s| {
            AvailableCommand::new(s.name.clone(), format!("Skill: {}", s.description)).input(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                    "what to do with it (optional)",
                )),
            )
        })
        .collect()
}

/// The prompt a `/NAME ...` text stands for, when NAME is one of `skills`.
pub fn prompt(text: &str, skills: &[Skill]) -> Option<String> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, task) = match rest.split_once(char::is_whitespace) {
        Some((n, t)) => (n, t.trim()),
        None => (rest, ""),
    };
    let skill = skills.iter().find(|s| s.name == name)?;
    let mut out = format!(
        "Use the skill `{}`: read its instructions in {} first, then follow them.",
        skill.name,
        skill.path.display()
    );
    if !task.is_empty() {
        out.push_str("\n\n");
        out.push_str(task);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, name: &str, description: &str) {
        let d = dir.join(".agents/skills").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
    }

    #[test]
    fn skills_become_commands_that_ask_the_model_to_use_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        skill(
            dir.path(),
            "release-notes",
            "Write release notes from git log",
        );
        // ag-acp's own command wins over a skill of its name.
        skill(dir.path(), "compact", "Not this one");
        // (The person's own skills, in HOME, may be found too.)
        let found: Vec<Skill> = find(dir.path(), &[])
            .into_iter()
            .filter(|s| s.path.starts_with(dir.path()))
            .collect();
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["release-notes"]);
        let cmds = serde_json::to_value(available(&found)).unwrap();
        assert_eq!(cmds[0]["name"], "release-notes");
        assert_eq!(
            cmds[0]["description"],
            "Skill: Write release notes from git log"
        );
        let p = prompt("/release-notes  for v2 only ", &found).unwrap();
        assert!(
            p.contains("`release-notes`") && p.contains("SKILL.md"),
            "{p}"
        );
        assert!(p.ends_with("\n\nfor v2 only"), "{p}");
        assert!(prompt("/release-notes", &found).is_some());
        assert!(prompt("/release", &found).is_none());
        assert!(prompt("release-notes", &found).is_none());
        assert!(find(dir.path(), &["--no-skills".into()]).is_empty());
    }

    #[test]
    fn skills_given_to_ag_loop_are_found_too() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let extra = dir.path().join("more");
        let d = extra.join("lint");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            "---\nname: lint\ndescription: Lint it\n---\n",
        )
        .unwrap();
        let args = ["--skills".to_string(), extra.display().to_string()];
        assert_eq!(find(dir.path(), &args)[0].name, "lint");
        let args = [format!("--skills={}", extra.display())];
        assert_eq!(find(dir.path(), &args)[0].name, "lint");
    }
}
