//! ag-lsp and the diagnostics after a change, with real language servers:
//! pyright and typescript-language-server from npm (scripts/lsp-servers
//! installs them in target/lsp-servers), gopls and clangd from Debian; and
//! fake servers (tests/fixtures/lsp/fake_server.py) that hang, crash or
//! answer late. Every test runs in a session of its own (a `sleep` stands
//! for the session's process), so that the warm host and its servers end
//! when the test does, and the tests check that they do.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent::{scripted_model, text_turn, tool_turn};
use crate::bin;
use crate::util::{Env, run};

/// Where scripts/lsp-servers installed the npm servers.
fn npm_bin() -> PathBuf {
    let dir = std::env::var_os("AG_LSP_SERVERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lsp-servers"));
    let bin = dir.join("node_modules/.bin");
    assert!(
        bin.join("pyright-langserver").exists() && bin.join("typescript-language-server").exists(),
        "pyright and typescript-language-server are not installed in {}: run scripts/lsp-servers, or scripts/test-setup, which runs it",
        dir.display()
    );
    bin
}

fn on_path(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join(program).is_file())
}

fn need(program: &str) {
    assert!(
        on_path(program),
        "`{program}` is not on the PATH: run scripts/test-setup, which installs it from Debian"
    );
}

/// A stand-in for the session's process, and the PATH the servers are on.
struct Session {
    owner: Child,
    path: String,
}

impl Session {
    fn new() -> Session {
        let owner = Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let path = format!(
            "{}:{}",
            npm_bin().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Session { owner, path }
    }

    /// A tool run in this session, with diagnostics on.
    fn cmd(&self, env: &Env, bin: &str) -> Command {
        let mut c = env.cmd(bin);
        c.env("PATH", &self.path)
            .env("AG_SESSION_PID", self.owner.id().to_string())
            .env("AG_LSP_DIAGNOSTICS", "1");
        c
    }

    /// Ends the session; then nothing it started may be left.
    fn end(mut self, env: &Env) {
        let _ = self.owner.kill();
        let _ = self.owner.wait();
        wait_none_left(env);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.owner.kill();
        let _ = self.owner.wait();
    }
}

/// The processes (other than this test's) whose working directory is in
/// the test's directory: the language servers run in the project's root.
fn left_in(env: &Env) -> Vec<String> {
    let me = std::process::id();
    let root = env.path().canonicalize().unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(e.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&root) {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            out.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    out
}

/// Polls until no process is left in the test's directory.
fn wait_none_left(env: &Env) {
    let start = Instant::now();
    loop {
        let left = left_in(env);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "left behind: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn lsp(s: &Session, env: &Env, args: &[&str]) -> crate::util::Run {
    let mut c = s.cmd(env, bin!("ag-lsp"));
    c.args(args);
    run(c, None)
}

const ANIMALS: &str = "class Dog:\n    def speak(self) -> str:\n        return \"woof\"\n\n\nclass Cat:\n    def speak(self) -> str:\n        return \"meow\"\n";
const MAIN: &str = "from animals import Cat, Dog\n\n\ndef chorus() -> str:\n    d = Dog()\n    c = Cat()\n    return d.speak() + c.speak() + d.speak()\n";

/// A Python project of two modules, `animals.py` and `main.py` (its text
/// `main`), that pyright takes as one project.
fn zoo(env: &Env, main: &str) {
    env.write("pyproject.toml", "[project]\nname = \"zoo\"\n");
    env.write("animals.py", ANIMALS);
    env.write("main.py", main);
}

#[test]
fn pyright_definition_references_symbols_and_diagnostics_from_a_shell() {
    let env = Env::new();
    zoo(&env, MAIN);
    env.write("broken.py", "x: int = \"text\"\n");
    let s = Session::new();
    // The `speak` of `c.speak()` (the second on line 7) is Cat's: a grep
    // would find both classes.
    let r = lsp(
        &s,
        &env,
        &["definition", "main.py", "--line", "7", "--column", "26"],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "animals.py:7:9: def speak(self) -> str:\n",
        "{r}"
    );
    // By name and line: the first `speak` on line 7 is Dog's.
    let r = lsp(
        &s,
        &env,
        &["definition", "main.py", "--symbol", "speak", "--line", "7"],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "animals.py:2:9: def speak(self) -> str:\n",
        "{r}"
    );
    // Dog.speak's references: its declaration and the two calls on d, not
    // Cat's.
    let r = lsp(
        &s,
        &env,
        &["references", "animals.py", "--symbol", "Dog.speak"],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "animals.py:2:9: def speak(self) -> str:\nmain.py:7:14: return d.speak() + c.speak() + d.speak()\nmain.py:7:38: return d.speak() + c.speak() + d.speak()\n",
        "{r}"
    );
    let r = lsp(&s, &env, &["symbols", "animals.py"]);
    r.ok();
    assert!(
        r.stdout()
            .contains("    1: class Dog\n    2:   method speak\n"),
        "{r}"
    );
    let r = lsp(&s, &env, &["hover", "main.py", "--symbol", "chorus"]);
    r.ok();
    assert!(r.stdout().contains("def chorus() -> str"), "{r}");
    let r = lsp(&s, &env, &["diagnostics", "broken.py", "main.py"]);
    r.ok();
    assert!(
        r.stdout()
            .starts_with("broken.py:1:10: error: Type \"Literal['text']\""),
        "{r}"
    );
    assert!(
        r.stderr().contains("No errors or warnings in main.py."),
        "{r}"
    );
    // A name the file does not have is refused, naming it.
    let r = lsp(&s, &env, &["definition", "main.py", "--symbol", "bark"]);
    r.expect_code(1);
    assert!(r.stderr().contains("does not contain `bark`"), "{r}");
    s.end(&env);
}

/// ag-loop with a scripted model that breaks a type and then fixes it;
/// returns the two tool results' text.
fn break_and_fix(
    env: &Env,
    s: &Session,
    file: &str,
    broken: (&str, &str),
    fixed: (&str, &str),
) -> (String, String, Value) {
    break_and_fix_with(env, s, file, broken, fixed, &[], None)
}

/// [`break_and_fix`] with more flags for ag-loop, and `$AG_HOME` elsewhere.
fn break_and_fix_with(
    env: &Env,
    s: &Session,
    file: &str,
    broken: (&str, &str),
    fixed: (&str, &str),
    extra: &[&str],
    ag_home: Option<&std::path::Path>,
) -> (String, String, Value) {
    let edit =
        |(old, new): (&str, &str)| json!({"file_path": file, "old_string": old, "new_string": new});
    let model = scripted_model(
        env,
        &[
            tool_turn(&[("c1", "edit", edit(broken))]),
            tool_turn(&[("c2", "edit", edit(fixed))]),
            text_turn("done"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    // The first edit starts the server: a cold start may take a while.
    c.env("PATH", &s.path).args([
        "--llm-cmd",
        &model,
        "--tools",
        "edit",
        "--lsp-wait",
        "60",
        "--json",
    ]);
    c.args(extra).arg("change it");
    if let Some(home) = ag_home {
        c.env("AG_HOME", home);
    }
    let r = run(c, None);
    r.ok();
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2, "{r}");
    for e in &ends {
        assert_eq!(e["is_error"], false, "{e}");
    }
    // ag-loop has ended: so has everything its session started.
    wait_none_left(env);
    (
        ends[0]["output"].as_str().unwrap().to_string(),
        ends[1]["output"].as_str().unwrap().to_string(),
        ends[0]["details"].clone(),
    )
}

#[test]
fn pyright_an_edit_that_breaks_a_type_says_so_and_the_fix_clears_it() {
    let env = Env::new();
    // An error already there is counted, not listed.
    zoo(&env, &format!("{MAIN}\n\nlegacy: int = \"old\"\n"));
    let s = Session::new();
    let (broke, fixed, details) = break_and_fix(
        &env,
        &s,
        "main.py",
        ("d = Dog()", "d = 42"),
        ("d = 42", "d = Dog()"),
    );
    assert!(
        broke.contains("this change brought in 2 errors (python) (1 error already there):\nmain.py:7:14: Cannot access attribute \"speak\" for class \"Literal[42]\" Attribute \"speak\" is unknown [reportAttributeAccessIssue]\nmain.py:7:38: "),
        "{broke}"
    );
    assert!(!broke.contains("legacy"), "{broke}");
    let files = &details["diagnostics"]["files"];
    assert_eq!(files[0]["status"], "checked", "{details}");
    assert_eq!(files[0]["existing"], 1, "{details}");
    assert_eq!(files[0]["new"][0]["line"], 7, "{details}");
    assert!(
        fixed.contains("[python: no new errors (1 error already there)]"),
        "{fixed}"
    );
}

#[test]
fn typescript_an_edit_that_breaks_a_type_says_so_and_the_fix_clears_it() {
    let env = Env::new();
    env.write(
        "tsconfig.json",
        r#"{"compilerOptions": {"strict": true, "noEmit": true}}"#,
    );
    env.write(
        "shapes.ts",
        "export function area(w: number, h: number): number {\n  return w * h;\n}\n\nexport const total: number = area(2, 3);\n",
    );
    let s = Session::new();
    let (broke, fixed, _) = break_and_fix(
        &env,
        &s,
        "shapes.ts",
        ("area(2, 3)", "area(\"2\", 3)"),
        ("area(\"2\", 3)", "area(2, 3)"),
    );
    assert!(
        broke.contains("this change brought in 1 error (typescript):\nshapes.ts:5:35: Argument of type 'string' is not assignable to parameter of type 'number'. [2345]"),
        "{broke}"
    );
    assert!(fixed.contains("[typescript: no new errors]"), "{fixed}");
}

/// A Go project whose edit breaks a type and whose next edit fixes it,
/// under ag-loop with `extra` flags (and `$AG_HOME` at `ag_home`).
fn go_break_and_fix(extra: &[&str], ag_home: Option<&std::path::Path>) {
    need("gopls");
    need("go");
    let env = Env::new();
    env.write("go.mod", "module example.com/shapes\n\ngo 1.19\n");
    env.write(
        "shapes.go",
        "package shapes\n\nfunc Area(w, h int) int {\n\treturn w * h\n}\n\nvar Total int = Area(2, 3)\n",
    );
    let s = Session::new();
    let (broke, fixed, _) = break_and_fix_with(
        &env,
        &s,
        "shapes.go",
        ("Area(2, 3)", "Area(\"2\", 3)"),
        ("Area(\"2\", 3)", "Area(2, 3)"),
        extra,
        ag_home,
    );
    assert!(
        broke.contains("this change brought in 1 error (go):\nshapes.go:7:"),
        "{broke}"
    );
    assert!(broke.contains("\"2\""), "{broke}");
    assert!(fixed.contains("[go: no new errors]"), "{fixed}");
}

#[test]
fn gopls_an_edit_that_breaks_a_type_says_so_and_the_fix_clears_it() {
    go_break_and_fix(&[], None);
}

/// A run without a session keeps its servers' caches in $AG_HOME, which
/// the sandbox of its tool calls must let them write: a write's result had
/// said "permission denied" instead of the errors.
#[test]
fn gopls_without_a_session_under_the_sandbox_still_checks() {
    // $AG_HOME outside the workspace, which the sandbox leaves writable.
    let home = tempfile::tempdir().unwrap();
    go_break_and_fix(&["--no-session", "--sandbox", "require"], Some(home.path()));
}

#[test]
fn clangd_an_edit_that_breaks_a_type_says_so_and_the_fix_clears_it() {
    need("clangd");
    let env = Env::new();
    env.write("compile_flags.txt", "-std=c11\n");
    env.write(
        "area.c",
        "struct box { int w; int h; };\n\nint area(struct box b) {\n  return b.w * b.h;\n}\n\nint total(void) {\n  struct box b = {2, 3};\n  return area(b);\n}\n",
    );
    let s = Session::new();
    let (broke, fixed, _) = break_and_fix(
        &env,
        &s,
        "area.c",
        ("return area(b);", "return area(&b);"),
        ("return area(&b);", "return area(b);"),
    );
    assert!(
        broke.contains("this change brought in 1 error (c):\narea.c:9:"),
        "{broke}"
    );
    assert!(fixed.contains("[c: no new errors]"), "{fixed}");
}

/// `$AG_HOME/lsp.toml` naming the fake server for `.fk` files.
fn fake_config(env: &Env, args: &str, init_timeout: f64) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/fake_server.py");
    env.write(
        ".home/.ag/lsp.toml",
        format!(
            "[servers.fake]\ncommand = [\"python3\", \"{}\", {args}]\nextensions = [\"fk\"]\ninit_timeout = {init_timeout}\n",
            script.display()
        ),
    );
}

fn edit(s: &Session, env: &Env, file: &str, old: &str, new: &str, wait: &str) -> Value {
    let mut c = s.cmd(env, bin!("ag-edit"));
    c.env("AG_LSP_WAIT", wait)
        .arg("--json")
        .args([file, "--old", old, "--new", new]);
    let r = run(c, None);
    r.ok();
    r.json()
}

#[test]
fn a_server_that_hangs_on_initialize_or_crashes_leaves_the_edit_landed_and_says_so() {
    let env = Env::new();
    env.write("a.fk", "fine\n");
    fake_config(&env, "\"hang\"", 1.0);
    let s = Session::new();
    let r = edit(&s, &env, "a.fk", "fine", "BAD", "5");
    assert_eq!(env.read("a.fk"), b"BAD\n");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("[diagnostics unavailable for a.fk: fake (python3): it did not answer `initialize` within 1 s]"),
        "{r}"
    );
    assert_eq!(
        r["details"]["diagnostics"]["files"][0]["status"],
        "unavailable"
    );
    s.end(&env);

    let env = Env::new();
    env.write("a.fk", "fine\n");
    fake_config(&env, "\"crash\"", 10.0);
    let s = Session::new();
    let r = edit(&s, &env, "a.fk", "fine", "BAD", "5");
    assert_eq!(env.read("a.fk"), b"BAD\n");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("[diagnostics unavailable for a.fk: fake (python3): it ended (exit status: 3): fake: crashed on purpose]"),
        "{r}"
    );
    s.end(&env);

    // A server that never gets through `initialize` (rustup's proxy for a
    // component not installed) is not started again on the next edit:
    // each try cost that edit a start.
    let env = Env::new();
    env.write("a.fk", "fine\n");
    fake_config(&env, "\"die\"", 10.0);
    let s = Session::new();
    let r = edit(&s, &env, "a.fk", "fine", "BAD", "5");
    let out = r["output"].as_str().unwrap();
    assert!(out.contains("[diagnostics unavailable for a.fk:"), "{r}");
    let r = edit(&s, &env, "a.fk", "BAD", "fine", "5");
    assert_eq!(env.read("a.fk"), b"fine\n");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("could not be started this session, and is not tried again:")
            && out.contains("exit status: 4")
            && out.contains("fake: not installed"),
        "{r}"
    );
    s.end(&env);
}

#[test]
fn diagnostics_that_come_after_the_wait_come_with_the_next_result() {
    let env = Env::new();
    env.write("a.fk", "fine\n");
    env.write("b.fk", "fine\n");
    // Each publish comes 0.7 s after the change; the edits wait 0.3 s.
    fake_config(&env, "\"slow\", \"0.7\"", 10.0);
    let s = Session::new();
    let r = edit(&s, &env, "a.fk", "fine", "BAD", "0.3");
    let out = r["output"].as_str().unwrap();
    assert!(out.contains("[diagnostics of a.fk not ready:"), "{r}");
    assert_eq!(r["details"]["diagnostics"]["files"][0]["status"], "pending");
    // The before and after texts of a.fk are published in 1.4 s.
    std::thread::sleep(Duration::from_secs(3));
    let r = edit(&s, &env, "b.fk", "fine", "still fine", "0.3");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("WARNING: Late diagnostics for an earlier change of a.fk: this change brought in 1 error (fake):\na.fk:1:1: fake error: BAD is not allowed"),
        "{r}"
    );
    let files = r["details"]["diagnostics"]["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["late"] == true && f["path"] == "a.fk"),
        "{r}"
    );
    s.end(&env);
}

#[test]
fn no_server_is_left_after_kill_9_of_ag_loop() {
    let env = Env::new();
    zoo(&env, MAIN);
    let s = Session::new();
    // The model edits, then takes its time over the next turn.
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "c1",
                "edit",
                json!({"file_path": "main.py", "old_string": "d = Dog()", "new_string": "d = 1"}),
            )]),
            text_turn("done"),
        ],
    );
    env.write(
        ".model/model.sh",
        "d=\"$(dirname \"$0\")\"\nn=$(cat \"$d/count\" 2>/dev/null || echo 0)\necho $((n+1)) > \"$d/count\"\ncat > \"$d/request$n.json\"\n[ \"$n\" = 1 ] && sleep 600\ncat \"$d/turn$n.jsonl\"\n",
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("PATH", &s.path)
        .args([
            "--llm-cmd",
            &model,
            "--tools",
            "edit",
            "--lsp-wait",
            "60",
            "--json",
            "go",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    crate::util::wait_for("the language server", || {
        left_in(&env).iter().any(|p| p.contains("pyright"))
    });
    // std's kill is SIGKILL: nothing of ag-loop's runs after it.
    child.kill().unwrap();
    child.wait().unwrap();
    wait_none_left(&env);
    drop(s);
}

#[test]
fn the_model_finds_references_through_the_offered_tool() {
    let env = Env::new();
    zoo(&env, MAIN);
    let s = Session::new();
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "c1",
                "lsp_references",
                json!({"file_path": "main.py", "symbol": "speak", "line": 7}),
            )]),
            text_turn("done"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("PATH", &s.path).args([
        "--llm-cmd",
        &model,
        "--tools",
        "lsp",
        "--json",
        "who calls speak?",
    ]);
    let r = run(c, None);
    r.ok();
    // The six tools are offered, each with its own fields.
    let req: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    let names: Vec<&str> = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "lsp_diagnostics",
            "lsp_definition",
            "lsp_references",
            "lsp_hover",
            "lsp_symbols",
            "lsp_workspace_symbols"
        ]
    );
    let end = r
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["is_error"], false, "{end}");
    assert_eq!(
        end["output"].as_str().unwrap(),
        "animals.py:2:9: def speak(self) -> str:\nmain.py:7:14: return d.speak() + c.speak() + d.speak()\nmain.py:7:38: return d.speak() + c.speak() + d.speak()\n\n`speak` is at main.py:7:14: return d.speak() + c.speak() + d.speak()\n",
        "{end}"
    );
    wait_none_left(&env);
}
