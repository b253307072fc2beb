//! Scenario folders for the file-changing tools:
//! `tests/fixtures/<tool>/NNN_name/{input/, call.json, expected/, result.json?}`
//! (for ag-patch, `patch.txt` holds the patch, and `call.json` other
//! arguments if any).
//! Each case copies `input/` to a fresh directory, sends `call.json` to the
//! tool, and compares the whole resulting tree (content, executable bit,
//! symlinks) with `expected/`. `result.json`, when present, lists fields the
//! result must have (a subset), plus `output_contains`: strings the output
//! must contain; without it the call must succeed. Adding a case is adding
//! a folder. `.gitkeep` files only keep empty folders in git and are ignored.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bin;
use crate::util::{Env, run};

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Node {
    Dir,
    File { content: Vec<u8>, executable: bool },
    Link(PathBuf),
}

pub(crate) fn tree(root: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if e.file_name() == ".gitkeep" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let node = if meta.file_type().is_symlink() {
                Node::Link(std::fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                stack.push(path.clone());
                Node::Dir
            } else {
                Node::File {
                    content: std::fs::read(&path).unwrap(),
                    executable: meta.permissions().mode() & 0o111 != 0,
                }
            };
            out.insert(rel, node);
        }
    }
    out
}

/// Copies a tree, keeping symlinks as symlinks and the executable bit.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == ".gitkeep" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&src).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if meta.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
            let mode = if meta.permissions().mode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
}

/// Whether `actual` has every field of `wanted` (recursively for objects,
/// and for arrays of the same length element by element; scalars must be
/// equal).
fn has_subset(actual: &Value, wanted: &Value) -> bool {
    match (actual, wanted) {
        (Value::Object(a), Value::Object(w)) => w
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| has_subset(av, v))),
        (Value::Array(a), Value::Array(w)) => {
            a.len() == w.len() && a.iter().zip(w).all(|(av, wv)| has_subset(av, wv))
        }
        _ => actual == wanted,
    }
}

pub(crate) fn describe(tree: &BTreeMap<String, Node>) -> String {
    tree.iter()
        .map(|(k, v)| match v {
            Node::Dir => format!("  {k}/"),
            Node::Link(t) => format!("  {k} -> {}", t.display()),
            Node::File {
                content,
                executable,
            } => format!(
                "  {k}{} {:?}",
                if *executable { " (x)" } else { "" },
                String::from_utf8_lossy(content)
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one case; returns what went wrong, if anything.
fn run_case(bin: &str, case: &Path) -> Option<String> {
    let env = Env::new();
    let work = env.join("work");
    copy_tree(&case.join("input"), &work);
    let mut call: Value = match std::fs::read_to_string(case.join("call.json")) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => serde_json::json!({"arguments": {}}),
    };
    // A patch is easier to read in a file of its own than in a JSON string.
    if let Ok(patch) = std::fs::read_to_string(case.join("patch.txt")) {
        call["arguments"]["patch"] = Value::String(patch);
    }
    let line = format!(
        "{}\n",
        serde_json::json!({"id": "s", "arguments": call["arguments"]})
    );
    let mut cmd = env.cmd(bin);
    cmd.current_dir(&work);
    let r = run(cmd, Some(line.as_bytes()));
    if r.code() != Some(0) {
        return Some(format!("the tool did not exit 0\n{r}"));
    }
    let result = r.json();
    let wanted: Value = match std::fs::read_to_string(case.join("result.json")) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => serde_json::json!({"is_error": false}),
    };
    let mut problems = Vec::new();
    let mut fields = wanted.clone();
    let contains = fields
        .as_object_mut()
        .and_then(|m| m.remove("output_contains"))
        .unwrap_or(Value::Null);
    if fields.get("is_error").is_none() {
        fields["is_error"] = Value::Bool(false);
    }
    if !has_subset(&result, &fields) {
        problems.push(format!(
            "result lacks {}\nresult: {}",
            serde_json::to_string_pretty(&fields).unwrap(),
            serde_json::to_string_pretty(&result).unwrap()
        ));
    }
    let output = result["output"].as_str().unwrap_or_default();
    for s in contains.as_array().into_iter().flatten() {
        let s = s.as_str().unwrap();
        if !output.contains(s) {
            problems.push(format!("output lacks {s:?}\noutput: {output}"));
        }
    }
    let (got, want) = (tree(&work), tree(&case.join("expected")));
    if got != want {
        problems.push(format!(
            "resulting tree differs\n--- expected\n{}\n--- got\n{}",
            describe(&want),
            describe(&got)
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n"))
}

fn run_all(tool: &str, bin: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(tool);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no scenarios in {}", dir.display());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            run_case(bin, c)
                .map(|why| format!("=== {}\n{why}", c.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} {tool} scenarios failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn edit_scenarios() {
    run_all("edit", bin!("ag-edit"));
}

#[test]
fn write_scenarios() {
    run_all("write", bin!("ag-write"));
}

#[test]
fn patch_scenarios() {
    run_all("patch", bin!("ag-patch"));
}

#[test]
fn delete_scenarios() {
    run_all("delete", bin!("ag-delete"));
}
