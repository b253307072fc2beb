//! Scenario folders for what ag-edit and ag-patch land and what they refuse:
//! `tests/fixtures/edit_scenarios/<group>/<name>/` holds `before/` (the
//! input tree), `call.json` (`{"tool": "ag-edit" | "ag-patch", "args":
//! {...}}`, the arguments as the tool reads them on stdin), and either
//! `after/` (the expected tree, every file byte for byte) or `refused` (each
//! non-empty line must appear in the error message, and the tree must be
//! left as it was). An optional `tolerated` lists lines that must each
//! appear in `details.tolerant_matches` (as JSON text), so a scenario pins
//! down what was tolerated, not only the result. For ag-patch, a `patch.txt`
//! beside `call.json` is the `patch` argument, easier to read than a JSON
//! string. The groups are `edit/`, `patch/` and `sketch/`; one test per
//! group names every failing scenario.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bin;
use crate::scenarios::{copy_tree, describe, tree};
use crate::util::{Env, run};

fn tool_bin(name: &str) -> Option<&'static str> {
    match name {
        "ag-edit" => Some(bin!("ag-edit")),
        "ag-patch" => Some(bin!("ag-patch")),
        _ => None,
    }
}

fn lines_of(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Runs one scenario; returns what went wrong, if anything.
fn run_case(case: &Path) -> Option<String> {
    let call: Value = match std::fs::read_to_string(case.join("call.json")) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => return Some(format!("call.json is not JSON: {e}")),
        },
        Err(e) => return Some(format!("no call.json: {e}")),
    };
    let Some(bin) = call["tool"].as_str().and_then(tool_bin) else {
        return Some(format!(
            "call.json names no known tool (ag-edit or ag-patch): {}",
            call["tool"]
        ));
    };
    let mut args = call["args"].clone();
    if !args.is_object() {
        return Some("call.json has no `args` object".into());
    }
    if let Ok(patch) = std::fs::read_to_string(case.join("patch.txt")) {
        args["patch"] = Value::String(patch);
    }
    let refused = lines_of(&case.join("refused"));
    let after = case.join("after");
    match (&refused, after.is_dir()) {
        (Some(_), true) => return Some("has both `after/` and `refused`".into()),
        (None, false) => return Some("has neither `after/` nor `refused`".into()),
        _ => {}
    }

    let env = Env::new();
    let work = env.join("work");
    copy_tree(&case.join("before"), &work);
    let line = format!("{}\n", serde_json::json!({"id": "s", "arguments": args}));
    let mut cmd = env.cmd(bin);
    cmd.current_dir(&work).args(["--root", "."]);
    let r = run(cmd, Some(line.as_bytes()));
    if r.code() != Some(0) {
        return Some(format!("the tool did not exit 0\n{r}"));
    }
    let result = r.json();
    let output = result["output"].as_str().unwrap_or_default();
    let is_error = result["is_error"].as_bool().unwrap_or(false);
    let mut problems = Vec::new();
    let expected_tree = match &refused {
        Some(wanted) => {
            if !is_error {
                problems.push(format!("should be refused, but succeeded: {output}"));
            }
            for w in wanted {
                if !output.contains(w.as_str()) {
                    problems.push(format!("the error lacks {w:?}\nerror: {output}"));
                }
            }
            case.join("before")
        }
        None => {
            if is_error {
                problems.push(format!("should succeed, but was refused: {output}"));
            }
            after
        }
    };
    if let Some(wanted) = lines_of(&case.join("tolerated")) {
        let got = result["details"]["tolerant_matches"].to_string();
        for w in wanted {
            if !got.contains(w.as_str()) {
                problems.push(format!(
                    "details.tolerant_matches lacks {w:?}\ntolerant_matches: {got}\noutput: {output}"
                ));
            }
        }
    }
    let (got, want) = (tree(&work), tree(&expected_tree));
    if got != want {
        problems.push(format!(
            "resulting tree differs\n--- expected\n{}\n--- got\n{}",
            describe(&want),
            describe(&got)
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n"))
}

fn run_group(group: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/edit_scenarios")
        .join(group);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no scenarios in {}", dir.display());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            run_case(c).map(|why| {
                format!(
                    "=== {group}/{}\n{why}",
                    c.file_name().unwrap().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} {group} scenarios failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn edit_scenarios_edit() {
    run_group("edit");
}

#[test]
fn edit_scenarios_patch() {
    run_group("patch");
}

#[test]
fn edit_scenarios_sketch() {
    run_group("sketch");
}
