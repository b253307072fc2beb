//! The classifier for tools other than bash: the paths a call names (its
//! `file_path`, `path` or `paths` arguments, and the files a patch touches),
//! and for the tools that change files (`write`, `edit`, `delete`, `patch`)
//! whether any of them lies outside the working directory, and whether a
//! delete is recursive.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::place::{Place, runs_later};
use super::{Analysis, Danger, Finding};

/// Tools that create, change or delete the files they name.
const WRITING_TOOLS: [&str; 7] = [
    "write",
    "edit",
    "multi_edit",
    "delete",
    "patch",
    "apply_patch",
    "notebook_edit",
];
/// Arguments holding a path.
const PATH_KEYS: [&str; 3] = ["file_path", "path", "paths"];
/// Arguments holding a patch text whose headers name files.
const PATCH_KEYS: [&str; 3] = ["patch", "input", "diff"];

/// Classifies a call of `tool` (not bash) with its arguments.
pub fn analyse_file_call(tool: &str, args: &Map<String, Value>, place: &Place) -> Analysis {
    let mut named: Vec<String> = Vec::new();
    for key in PATH_KEYS {
        match args.get(key) {
            Some(Value::String(s)) => named.push(s.clone()),
            Some(Value::Array(items)) => {
                named.extend(items.iter().filter_map(Value::as_str).map(str::to_string));
            }
            _ => {}
        }
    }
    for key in PATCH_KEYS {
        if let Some(Value::String(text)) = args.get(key) {
            named.extend(patch_paths(text));
        }
    }
    let mut out = Analysis::default();
    let writes = WRITING_TOOLS.contains(&tool);
    let danger = if tool == "delete" {
        Danger::DeleteOutside
    } else {
        Danger::WriteOutside
    };
    for raw in named.iter().filter(|r| !r.is_empty()) {
        let path = place.resolve(&place.cwd, raw);
        if writes && place.is_outside(&path) {
            push(&mut out, danger, raw, Some(path.clone()));
        } else if writes && tool != "delete" && runs_later(&path) {
            push(&mut out, Danger::GitHooks, raw, Some(path.clone()));
        }
        out.paths.push(path);
    }
    // ag-browser's `evaluate` (`browser_evaluate` as the model sees it):
    // the page's JavaScript, with all the page may do.
    if tool == "browser" && args.get("action").and_then(Value::as_str) == Some("evaluate") {
        let code = args
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let shown: String = code.chars().take(200).collect();
        push(&mut out, Danger::PageScript, &shown, None);
    }
    if tool == "delete" && args.get("recursive") == Some(&Value::Bool(true)) {
        let shown = named.first().map_or("", String::as_str);
        let path = out.paths.first().cloned();
        push(&mut out, Danger::RecursiveDelete, shown, path);
    }
    out
}

fn push(out: &mut Analysis, danger: Danger, detail: &str, path: Option<PathBuf>) {
    out.findings.push(Finding {
        danger,
        detail: detail.to_string(),
        segment: None,
        path,
    });
}

/// The files a patch names: begin/end patch headers (`*** Update File: x`)
/// and unified diff headers (`--- a/x` directly followed by `+++ b/x`).
fn patch_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        for prefix in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(p) = line.strip_prefix(prefix) {
                paths.push(p.trim().to_string());
            }
        }
        if let (Some(old), Some(new)) = (
            line.strip_prefix("--- "),
            lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")),
        ) {
            for (header, git_prefix) in [(old, "a/"), (new, "b/")] {
                // A timestamp may follow the name after a tab.
                let name = header.split('\t').next().unwrap_or(header).trim();
                if name != "/dev/null" {
                    paths.push(name.strip_prefix(git_prefix).unwrap_or(name).to_string());
                }
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn analyse(tool: &str, args: Value) -> Analysis {
        let place = Place::new(
            Path::new("/work/proj"),
            Some(PathBuf::from("/home/me")),
            None,
        );
        let Value::Object(map) = args else { panic!() };
        analyse_file_call(tool, &map, &place)
    }

    fn dangers(a: &Analysis) -> Vec<Danger> {
        a.findings.iter().map(|f| f.danger).collect()
    }

    #[test]
    fn javascript_in_the_browser_is_flagged_and_the_other_browser_calls_not() {
        let a = analyse(
            "browser",
            json!({"action": "evaluate", "expression": "document.cookie"}),
        );
        assert_eq!(dangers(&a), vec![Danger::PageScript]);
        assert_eq!(
            a.findings[0].describe(),
            "runs JavaScript in the browser's page: `document.cookie`"
        );
        let a = analyse("browser", json!({"action": "click", "ref": "e1"}));
        assert!(a.findings.is_empty());
    }

    #[test]
    fn writes_outside_are_found_after_resolution() {
        let a = analyse("write", json!({"file_path": "/etc/hosts"}));
        assert_eq!(
            a.findings[0].describe(),
            "write outside the working directory: `/etc/hosts`"
        );
        let a = analyse("write", json!({"file_path": "../x"}));
        assert_eq!(
            a.findings[0].describe(),
            "write outside the working directory: `../x` (`/work/x`)"
        );
        for p in ["/etc/hosts", "../x", "~/.bashrc", "sub/../../x", "~other/x"] {
            let a = analyse("write", json!({"file_path": p, "content": ""}));
            assert_eq!(dangers(&a), vec![Danger::WriteOutside], "{p}");
            let reason = a.findings[0].describe();
            assert!(
                reason.starts_with(&format!("write outside the working directory: `{p}`")),
                "{reason}"
            );
        }
        for p in ["src/x.rs", "./a/../b", "/work/proj/x", "/tmp/scratch.txt"] {
            let a = analyse("edit", json!({"file_path": p}));
            assert!(a.findings.is_empty(), "{p}");
            assert_eq!(a.paths.len(), 1);
        }
        // Reading is not writing.
        assert!(
            analyse("read", json!({"file_path": "/etc/hosts"}))
                .findings
                .is_empty()
        );
        assert_eq!(
            analyse("read", json!({"file_path": "/etc/hosts"})).paths,
            vec![PathBuf::from("/etc/hosts")]
        );
    }

    #[test]
    fn deletes_and_patches() {
        let a = analyse("delete", json!({"path": "/etc/x"}));
        assert_eq!(dangers(&a), vec![Danger::DeleteOutside]);
        let a = analyse("delete", json!({"path": "build", "recursive": true}));
        assert_eq!(dangers(&a), vec![Danger::RecursiveDelete]);
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: /etc/cron.d/job\n+* * * * * x\n*** End Patch\n";
        let a = analyse("patch", json!({"patch": patch}));
        assert_eq!(dangers(&a), vec![Danger::WriteOutside]);
        assert_eq!(a.findings[0].detail, "/etc/cron.d/job");
        let diff = "--- a/src/a.rs\t2024-01-01\n+++ b/src/a.rs\n@@ -1 +1 @@\n--- sql comment\n+new\n--- /dev/null\n+++ b/../outside.txt\n";
        let a = analyse("patch", json!({"patch": diff}));
        assert_eq!(dangers(&a), vec![Danger::WriteOutside]);
        assert_eq!(a.findings[0].detail, "../outside.txt");
        let a = analyse("write", json!({"paths": ["ok.txt", "/usr/bin/x"]}));
        assert_eq!(dangers(&a), vec![Danger::WriteOutside]);
    }
}
