//! What an "always" answer to running a call outside the sandbox covers:
//! the command prefixes of a bash call (`npm install`, `touch`), or the
//! tool. Kept apart from the escalation itself so that the sandbox's
//! session state can ask it without depending on the agent.

use std::path::Path;

use serde_json::Value;

/// What an "always" answer for this call covers: for bash, the command
/// prefix of each simple command it runs (`npm install`, `touch`); for
/// other tools the tool. `None` when a bash command holds code that cannot
/// be read before it runs, which no prefix can vouch for.
pub fn prefixes(tool: &str, arguments: &Value) -> Option<Vec<String>> {
    if tool != "bash" {
        return Some(vec![format!("tool:{tool}")]);
    }
    let command = arguments.get("command").and_then(Value::as_str)?;
    let root = Path::new("/");
    let place = crate::gate::place::Place::new(root, None, None);
    let shell = arguments.get("shell").and_then(Value::as_str);
    let stdin = arguments.get("stdin").and_then(Value::as_str);
    let analysis = crate::gate::analyse_bash_call(command, shell, stdin, root, &place);
    if analysis.findings.iter().any(|f| {
        matches!(
            f.danger,
            crate::gate::Danger::Unchecked
                | crate::gate::Danger::TooDeep
                | crate::gate::Danger::PipedScript
        )
    }) || analysis.segments.is_empty()
    {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for segment in &analysis.segments {
        let p = prefix(segment);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Some(out)
}

/// A simple command's prefix: its program, and the next word when it is a
/// subcommand (`git push`, `npm install`) rather than an option or a path.
fn prefix(segment: &str) -> String {
    let mut words = segment.split_whitespace();
    let program = words.next().unwrap_or_default();
    match words.next() {
        Some(sub)
            if sub
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !sub.starts_with('-') =>
        {
            format!("{program} {sub}")
        }
        _ => program.to_string(),
    }
}

/// True when the approved prefix `approved` covers the prefix `wanted`:
/// the same, or `wanted` is `approved` and a subcommand.
pub fn covers(approved: &str, wanted: &str) -> bool {
    wanted == approved
        || wanted
            .strip_prefix(approved)
            .is_some_and(|rest| rest.starts_with(' '))
}

/// The prefixes an "always" answer names, for the question.
pub fn describe_prefixes(tool: &str, arguments: &Value) -> String {
    match prefixes(tool, arguments) {
        Some(p) => p
            .iter()
            .map(|p| match p.strip_prefix("tool:") {
                Some(t) => format!("every {t} call"),
                None => format!("`{p}`"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        None => "this exact call".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn always_covers_the_command_prefixes_and_nothing_hidden() {
        let bash = |c: &str| json!({ "command": c });
        assert_eq!(
            prefixes("bash", &bash("npm install left-pad && touch /x/y")),
            Some(vec!["npm install".to_string(), "touch".to_string()])
        );
        assert_eq!(prefixes("bash", &bash("eval \"$X\"")), None);
        assert_eq!(
            prefixes("write", &json!({})),
            Some(vec!["tool:write".into()])
        );
        assert!(covers("git push", "git push"));
        assert!(covers("touch", "touch"));
        assert!(!covers("git push", "git pushy"));
        assert!(!covers("npm install", "npm"));
        assert_eq!(
            describe_prefixes("bash", &bash("git push origin main")),
            "`git push`"
        );
        assert_eq!(describe_prefixes("write", &json!({})), "every write call");
    }
}
