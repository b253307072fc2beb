"""The scripted work the model server hands out: a small repository, and
turns of tool calls over it (in ag's tool names and arguments).

Edits come in pairs (a - b to a + b, then back), so any number of turns
leaves the repository valid for the next run, and every call succeeds.
"""

import subprocess
from pathlib import Path

LIB_RS = """//! A small calculator.

pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

pub fn mul(a: i32, b: i32) -> i32 {
    a * b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }
}
"""

MAIN_RS = """fn main() {
    println!("{}", calc::add(2, 3));
}
"""


def make_repo(repo, big=False):
    repo = Path(repo)
    (repo / "src").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "lib.rs").write_text(LIB_RS)
    (repo / "src" / "main.rs").write_text(MAIN_RS)
    (repo / "README.md").write_text("# calc\n\nAdds and multiplies.\n")
    (repo / "Cargo.toml").write_text('[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n')
    if big:
        # A 3,000-line file: reading it makes a ~150 KB tool result.
        (repo / "src" / "table.rs").write_text(
            "".join(f"pub const ENTRY_{i:05d}: (&str, u64) = (\"entry number {i} of the table\", {i * 7919});\n" for i in range(3000))
        )
    subprocess.run(["git", "init", "-q"], cwd=repo, check=False)
    (repo / "notes.md").unlink(missing_ok=True)


def reset_repo(repo):
    (Path(repo) / "src" / "lib.rs").write_text(LIB_RS)
    (Path(repo) / "notes.md").unlink(missing_ok=True)


CYCLE = [
    ("read", {"file_path": "src/lib.rs"}),
    ("grep", {"query": "fn \\w+", "path": "src"}),
    ("edit", {"file_path": "src/lib.rs", "old_string": "    a - b", "new_string": "    a + b"}),
    ("ls", {"path": "."}),
    ("find", {"pattern": "*.rs"}),
    ("bash", {"command": "grep -c 'a + b' src/lib.rs"}),
    ("edit", {"file_path": "src/lib.rs", "old_string": "    a + b", "new_string": "    a - b"}),
    ("write", {"file_path": "notes.md", "content": "- checked add\n"}),
]


def _in_pass(call, k):
    """The cycle's call `call` as made in pass `k`: a limit, a comment or a
    note of its own, so that no pass repeats another's call with the same
    result. ag-loop ends a run whose model makes the same successful call
    five times with the same output (`repeated_call`), and a cycle whose
    edits undo each other would be one."""
    name, args = call
    args = dict(args)
    if name in ("read", "ls", "find"):
        args["limit"] = 1000 - k
    elif name == "grep":
        args["max_matches"] = 1000 - k
    elif name == "bash":
        args["command"] += f"  # pass {k}"
    elif name == "write":
        args["content"] += f"- pass {k}\n"
    elif name == "edit" and args["new_string"].endswith("a + b"):
        args["new_string"] += f"  // pass {k}"
    elif name == "edit":
        args["old_string"] += f"  // pass {k}"
    return name, args


def loop_turns(turns):
    """turns - 1 turns of one tool call each, then a text answer."""
    out = [{"calls": [_in_pass(CYCLE[i % len(CYCLE)], i // len(CYCLE))]} for i in range(turns - 1)]
    out.append({"text": "Done: the calculator was checked and the notes written."})
    return out


def heavy_turns():
    """Turns with large results and long streamed answers, for a big session."""
    long_text = "The table holds entries with names and values; " * 80
    return [
        {"calls": [("read", {"file_path": "src/table.rs"})]},
        {"text": long_text},
    ]
