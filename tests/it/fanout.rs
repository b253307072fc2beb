//! scripts/fanout: tasks files run through GNU parallel and ag-loop against a
//! model server that answers by the task's prompt (so that tasks running in
//! any order get their own script), the result lines, the summary, the
//! diffs, a kill and `--resume`; and the Kubernetes Job example.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ag::proc::{Signal, signal_process};
use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{Turn, sse};
use crate::util::{Env, Run, run};

/// The repository's root (scripts/fanout, examples/).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// GNU parallel is a test dependency (.ci/run installs the Debian package):
/// without it these tests fail rather than pass having checked nothing.
fn require_parallel() {
    let found = Command::new("parallel")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "GNU parallel is not installed: install it (Debian: apt-get install parallel) to run the scripts/fanout tests"
    );
}

/// Requests of tasks whose prompt starts with `slow ` wait while held.
#[derive(Default)]
struct Hold {
    held: bool,
    waiting: usize,
}

/// A model whose answer depends only on the conversation: `write FILE TEXT`
/// writes the file, `commit` commits a file with bash, `spin` calls a tool
/// for ever; after a tool result it says `done`. Every answer costs $1 with
/// the prices of [`models_json`].
struct PromptServer {
    port: u16,
    hold: Arc<(Mutex<Hold>, Condvar)>,
}

impl PromptServer {
    fn start() -> PromptServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold: Arc<(Mutex<Hold>, Condvar)> = Arc::default();
        let h = hold.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let h = h.clone();
                std::thread::spawn(move || serve(conn, &h));
            }
        });
        PromptServer { port, hold }
    }

    fn set_held(&self, held: bool) {
        let (m, c) = &*self.hold;
        m.lock().unwrap().held = held;
        c.notify_all();
    }

    fn waiting(&self) -> usize {
        self.hold.0.lock().unwrap().waiting
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn answer(request: &Value) -> Turn {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let prompt = messages
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default();
    let prompt = prompt.strip_prefix("slow ").unwrap_or(&prompt).to_string();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    if prompt == "spin" {
        return Turn::Tools(vec![("bash", json!({"command": "true"}))]);
    }
    if after_tool {
        return Turn::Text("done");
    }
    let words: Vec<&str> = prompt.splitn(3, ' ').collect();
    match words.as_slice() {
        ["write", file, text] => Turn::Tools(vec![(
            "write",
            json!({"file_path": file, "content": format!("{text}\n")}),
        )]),
        ["commit"] => Turn::Tools(vec![(
            "bash",
            json!({"command": "echo c > c.txt && git add c.txt && git -c user.name=t -c user.email=t@e commit -qm c"}),
        )]),
        _ => Turn::Text("no script for this prompt"),
    }
}

/// Whether the client closed the connection.
fn gone(conn: &TcpStream) -> bool {
    conn.set_nonblocking(true).unwrap();
    let peeked = conn.peek(&mut [0u8]);
    conn.set_nonblocking(false).unwrap();
    match peeked {
        Ok(n) => n == 0,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

fn serve(conn: TcpStream, hold: &(Mutex<Hold>, Condvar)) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    while let Some((_, path, body)) = crate::util::read_http_request(&mut reader) {
        if !path.ends_with("/chat/completions") {
            let nf = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
            if out.write_all(nf.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let first = request["messages"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["role"] == "user"))
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default();
        if first.starts_with("slow ") {
            let (m, c) = hold;
            let mut h = m.lock().unwrap();
            h.waiting += 1;
            while h.held {
                h = c.wait_timeout(h, Duration::from_millis(50)).unwrap().0;
                // A client that went away is no longer waiting.
                if gone(&out) {
                    h.waiting -= 1;
                    return;
                }
            }
            h.waiting -= 1;
        }
        // n = 0: every answer reports the same usage (100 tokens in).
        let text = sse(&answer(&request), 0);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            text.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(text.as_bytes()).is_err() {
            return;
        }
        let _ = out.flush();
    }
}

/// `fake/m` on the server, at $10,000 per million input tokens: $1 a call.
fn models_json(env: &Env, server: &PromptServer) {
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"fake": {
            "base_url": format!("http://127.0.0.1:{}/v1", server.port),
            "api": "openai-chat",
            "api_key_env": "FAKE_KEY",
            "models": [{"id": "m", "context_window": 100000, "max_output": 4096,
                        "prices": {"input": 10000.0, "output": 0.0}}]
        }}})
        .to_string(),
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A git repository `rel` with one commit of README.md.
fn repo(env: &Env, rel: &str) -> PathBuf {
    env.write(&format!("{rel}/README.md"), "# r\n");
    let dir = env.join(rel);
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "start"]);
    dir
}

/// scripts/fanout with the built binaries first on PATH.
fn fanout(env: &Env, args: &[&str]) -> Command {
    let bins = Path::new(bin!("ag-loop")).parent().unwrap().to_path_buf();
    let mut path = std::ffi::OsString::from(bins);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let mut c = env.cmd("python3");
    c.arg(root().join("scripts/fanout"))
        .args(args)
        .env("PATH", path)
        .env("FAKE_KEY", "k");
    c
}

/// The result lines of a run, by task id, and its summary line.
fn results(stdout: &str) -> (BTreeMap<String, Value>, Option<Value>) {
    let mut by_id = BTreeMap::new();
    let mut summary = None;
    for line in stdout.lines() {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        match v["type"].as_str() {
            Some("result") => {
                let id = v["id"].as_str().unwrap().to_string();
                assert!(by_id.insert(id, v.clone()).is_none(), "twice: {line}");
            }
            Some("summary") => summary = Some(v),
            _ => panic!("unexpected line: {line}"),
        }
    }
    (by_id, summary)
}

fn check_ran(r: &Run) {
    assert!(matches!(r.code(), Some(0 | 1)), "fanout could not run\n{r}");
}

#[test]
fn fanout_reports_every_task_even_broken_ones_with_diffs_and_a_summary() {
    require_parallel();
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    repo(&env, "r1");
    let r2 = repo(&env, "r2");
    // r2 is dirty before its task: that is not the task's diff.
    env.write("r2/README.md", "# r, edited by hand\n");
    repo(&env, "r3");
    env.write("plain/old.txt", "old\n");
    let tasks = [
        json!({"id": "a", "dir": "r1", "prompt": "write hello.txt hi", "model": "fake/m"}).to_string(),
        String::new(),
        json!({"dir": "r2", "prompt": "commit", "model": "fake/m"}).to_string(),
        r#"{"dir": "r3", "prompt": "#.to_string(),
        json!({"id": "gone", "dir": "missing", "prompt": "write a b", "model": "fake/m"}).to_string(),
        json!({"id": "spin", "dir": "r3", "prompt": "spin", "model": "fake/m", "args": ["--max-turns", "2"]}).to_string(),
        json!({"id": "plain", "dir": "plain", "prompt": "write new.txt n", "model": "fake/m"}).to_string(),
        json!({"id": "a", "dir": "r3", "prompt": "write x y", "model": "fake/m"}).to_string(),
        json!({"id": "typo", "dir": "r3", "promt": "write x y"}).to_string(),
        "# a comment".to_string(),
        // A prompt that looks like a flag is still the prompt.
        json!({"id": "dash", "dir": "r3", "prompt": "--version", "model": "fake/m"}).to_string(),
        // Repositories to clone: into a directory that stays, into a
        // temporary one, and one that is not there.
        json!({"id": "cl", "repo": "r1", "dir": "clone1", "prompt": "write cl.txt c", "model": "fake/m"}).to_string(),
        json!({"id": "tmpclone", "repo": "r1", "prompt": "write t.txt t", "model": "fake/m"}).to_string(),
        json!({"id": "badclone", "repo": "no-such-repo", "prompt": "write t.txt t"}).to_string(),
    ];
    env.write("tasks.jsonl", tasks.join("\n") + "\n");

    let r = run(fanout(&env, &["-j", "3", "tasks.jsonl"]), None);
    check_ran(&r);
    r.expect_code(1);
    let (by_id, summary) = results(&r.stdout());
    // Results of lines that are no task are keyed by their line number.
    let ids: Vec<&str> = by_id.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "3", "4", "8", "9", "a", "badclone", "cl", "dash", "gone", "plain", "spin", "tmpclone"
        ],
        "{r}"
    );

    let a = &by_id["a"];
    assert_eq!(a["line"], 1);
    assert_eq!(a["outcome"], "finished", "{a}");
    assert_eq!(a["exit"], 0);
    assert_eq!(a["cost"], 2.0, "{a}");
    assert_eq!(a["model"], "fake/m");
    let diff = a["diff"].as_str().unwrap();
    assert!(
        diff.contains("+++ b/hello.txt") && diff.contains("+hi"),
        "{diff}"
    );
    assert!(!diff.contains("README"), "{diff}");
    // Its session exists, and holds this run.
    let session = a["session"].as_str().unwrap();
    let show = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["show", session]).current_dir(env.join("r1"));
            c
        },
        None,
    );
    show.ok();
    assert!(show.stdout().contains("hello.txt"), "{show}");

    // The task's own commit is in its diff; the hand edit before it is not.
    let c = &by_id["3"];
    assert_eq!(c["outcome"], "finished", "{c}");
    let diff = c["diff"].as_str().unwrap();
    assert!(diff.contains("+++ b/c.txt"), "{diff}");
    assert!(!diff.contains("README"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(r2.join("README.md")).unwrap(),
        "# r, edited by hand\n"
    );

    let bad = &by_id["4"];
    assert_eq!(bad["outcome"], "invalid_task", "{bad}");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .starts_with("line 4: not JSON"),
        "{bad}"
    );

    let gone = &by_id["gone"];
    assert_eq!(gone["outcome"], "no_directory", "{gone}");
    assert!(
        gone["error"].as_str().unwrap().contains("missing"),
        "{gone}"
    );
    assert_eq!(gone["session"], Value::Null);

    let spin = &by_id["spin"];
    assert_eq!(spin["outcome"], "turn_limit", "{spin}");
    assert_eq!(spin["exit"], 1, "{spin}");
    assert_eq!(spin["cost"], 2.0, "{spin}");
    assert_eq!(spin["diff"], "", "{spin}");

    // A directory that is not a repository: its diff through a snapshot,
    // and no .git left behind.
    let plain = &by_id["plain"];
    assert_eq!(plain["outcome"], "finished", "{plain}");
    let diff = plain["diff"].as_str().unwrap();
    assert!(
        diff.contains("+++ b/new.txt") && !diff.contains("old.txt"),
        "{diff}"
    );
    assert!(!env.join("plain/.git").exists());

    let typo = &by_id["9"];
    assert_eq!(typo["outcome"], "invalid_task");
    assert!(
        typo["error"]
            .as_str()
            .unwrap()
            .contains("line 9: unknown field `promt`"),
        "{typo}"
    );

    // Line 8 takes an id that line 1 has: refused, so that results and
    // --summary never mix two tasks up.
    let dup = &by_id["8"];
    assert_eq!(dup["outcome"], "invalid_task");
    assert!(
        dup["error"]
            .as_str()
            .unwrap()
            .contains("id `a` is already the id of line 1"),
        "{dup}"
    );
    assert!(!env.join("r3/x").exists());

    let dash = &by_id["dash"];
    assert_eq!(dash["outcome"], "finished", "{dash}");
    assert_eq!(dash["cost"], 1.0, "{dash}");

    let cl = &by_id["cl"];
    assert_eq!(cl["outcome"], "finished", "{cl}");
    assert!(
        cl["diff"].as_str().unwrap().contains("+++ b/cl.txt"),
        "{cl}"
    );
    assert!(env.join("clone1/cl.txt").exists() && !env.join("r1/cl.txt").exists());
    let tmp = &by_id["tmpclone"];
    assert_eq!(tmp["outcome"], "finished", "{tmp}");
    assert!(
        tmp["diff"].as_str().unwrap().contains("+++ b/t.txt"),
        "{tmp}"
    );
    assert!(!Path::new(tmp["dir"].as_str().unwrap()).exists(), "{tmp}");
    let bad = &by_id["badclone"];
    assert_eq!(bad["outcome"], "clone_failed", "{bad}");
    assert!(
        bad["error"].as_str().unwrap().contains("no-such-repo"),
        "{bad}"
    );

    let summary = summary.unwrap();
    assert_eq!(summary["tasks"], 12, "{summary}");
    assert_eq!(summary["cost"], 13.0, "{summary}");
    assert_eq!(summary["failed"], 6, "{summary}");
    assert_eq!(
        summary["outcomes"],
        json!({"finished": 6, "invalid_task": 3, "no_directory": 1, "turn_limit": 1, "clone_failed": 1}),
        "{summary}"
    );
    assert!(r.stderr().contains("fanout: 12 tasks"), "{}", r.stderr());
}

/// Lines of a file that are JSON results (none when it does not exist).
fn result_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect()
}

/// Waits (for at most two minutes, then fails saying what it waited for).
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn fanout_interrupted_and_resumed_runs_every_task_exactly_once() {
    require_parallel();
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    // Tasks 9 to 20 wait at their first model call until released, so the
    // interrupt comes with 8 tasks done and 4 running.
    let mut tasks = String::new();
    for i in 1..=20 {
        repo(&env, &format!("r{i}"));
        let slow = if i > 8 { "slow " } else { "" };
        let prompt = format!("{slow}write done.txt task-{i}");
        tasks += &json!({"id": format!("t{i}"), "dir": format!("r{i}"), "prompt": prompt, "model": "fake/m"}).to_string();
        tasks += "\n";
    }
    env.write("tasks.jsonl", tasks);
    server.set_held(true);

    let first = env.join("first.jsonl");
    let joblog = env.join("jobs.log");
    let mut c = fanout(&env, &["-j", "4", "--joblog", "jobs.log", "tasks.jsonl"]);
    c.stdout(std::fs::File::create(&first).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let finished = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .count()
    };
    wait_for("8 tasks in the job log and 4 waiting", || {
        finished(&joblog) == 8 && server.waiting() == 4
    });
    assert!(signal_process(child.id(), Signal::SIGTERM));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 15), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    // The running tasks were ended with it: nothing waits at the server.
    wait_for("the interrupted tasks to go", || server.waiting() == 0);
    let done: Vec<Value> = result_lines(&first);
    let ids: Vec<&str> = done.iter().map(|v| v["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_by_key(|id| id[1..].parse::<u32>().unwrap());
    assert_eq!(sorted, (1..=8).map(|i| format!("t{i}")).collect::<Vec<_>>());
    assert_eq!(finished(&joblog), 8);

    server.set_held(false);
    let second = env.join("second.jsonl");
    let c = fanout(
        &env,
        &["-j", "4", "--joblog", "jobs.log", "--resume", "tasks.jsonl"],
    );
    let r = run(c, None);
    r.ok();
    std::fs::write(&second, r.stdout()).unwrap();
    let mut all: Vec<String> = result_lines(&first)
        .into_iter()
        .chain(result_lines(&second))
        .map(|v| {
            assert_eq!(v["outcome"], "finished", "{v}");
            v["id"].as_str().unwrap().to_string()
        })
        .collect();
    all.sort_by_key(|id| id[1..].parse::<u32>().unwrap());
    assert_eq!(all, (1..=20).map(|i| format!("t{i}")).collect::<Vec<_>>());
    // Each task's change was made once, and its diff is exactly it.
    for v in result_lines(&second) {
        let i = &v["id"].as_str().unwrap()[1..];
        assert_eq!(
            std::fs::read_to_string(env.join(&format!("r{i}/done.txt"))).unwrap(),
            format!("task-{i}\n")
        );
        assert!(
            v["diff"].as_str().unwrap().contains(&format!("+task-{i}")),
            "{v}"
        );
    }

    // The summary over both files counts every task once.
    let s = run(
        fanout(
            &env,
            &[
                "--summary",
                first.to_str().unwrap(),
                second.to_str().unwrap(),
            ],
        ),
        None,
    );
    s.ok();
    let summary = s.json();
    assert_eq!(summary["tasks"], 20, "{summary}");
    assert_eq!(summary["outcomes"], json!({"finished": 20}));
    assert_eq!(summary["cost"], 40.0);
}

#[test]
fn fanout_without_gnu_parallel_says_to_install_it() {
    let env = Env::new();
    // A PATH with python3 and nothing else.
    // The interpreter itself, not a wrapper such as pyenv's shim.
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(out.status.success(), "python3 is not installed");
    std::fs::create_dir(env.join("bin")).unwrap();
    std::os::unix::fs::symlink(&python, env.join("bin/python3")).unwrap();
    env.write("tasks.jsonl", "{}\n");
    let mut c = env.cmd(&python);
    c.arg(root().join("scripts/fanout"))
        .args(["-j", "2", "tasks.jsonl"])
        .env("PATH", env.join("bin"));
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("GNU parallel is not installed"), "{r}");
    assert!(r.stderr().contains("apt-get install parallel"), "{r}");
}

/// A reader for the block-style YAML that examples/k8s/fanout-job.yaml is
/// written in (mappings, sequences, `|` blocks, plain and quoted scalars,
/// `{}`), so that the manifest is checked where kubectl is not installed;
/// where it is, kubectl's own reading must agree with it.
mod yaml {
    use serde_json::{Map, Value};

    struct Lines {
        lines: Vec<String>,
        i: usize,
    }

    fn indent(line: &str) -> usize {
        line.len() - line.trim_start_matches(' ').len()
    }

    fn skippable(line: &str) -> bool {
        let t = line.trim();
        t.is_empty() || t.starts_with('#')
    }

    impl Lines {
        /// The next line that is not blank or a comment, and its indent.
        fn peek(&mut self) -> Option<(usize, String)> {
            while self.i < self.lines.len() && skippable(&self.lines[self.i]) {
                self.i += 1;
            }
            let line = self.lines.get(self.i)?;
            Some((indent(line), line.trim_start().to_string()))
        }

        fn node(&mut self, min: usize) -> Value {
            match self.peek() {
                Some((ind, text)) if ind >= min => {
                    if text == "-" || text.starts_with("- ") {
                        self.sequence(ind)
                    } else {
                        self.mapping(ind)
                    }
                }
                _ => Value::Null,
            }
        }

        fn sequence(&mut self, ind: usize) -> Value {
            let mut items = Vec::new();
            while let Some((i, text)) = self.peek() {
                if i != ind || !(text == "-" || text.starts_with("- ")) {
                    break;
                }
                let rest = text[1..].trim_start();
                if rest.is_empty() {
                    self.i += 1;
                    items.push(self.node(ind + 1));
                } else if key_value(rest).is_some() {
                    // `- key: value` opens a mapping indented past the dash.
                    let at = ind + (text.len() - rest.len());
                    self.lines[self.i] = format!("{}{rest}", " ".repeat(at));
                    items.push(self.mapping(at));
                } else {
                    self.i += 1;
                    items.push(self.value(rest, ind));
                }
            }
            Value::Array(items)
        }

        fn mapping(&mut self, ind: usize) -> Value {
            let mut map = Map::new();
            while let Some((i, text)) = self.peek() {
                if i != ind || text.starts_with("- ") {
                    break;
                }
                let (key, rest) =
                    key_value(&text).unwrap_or_else(|| panic!("not `key: value`: {text}"));
                self.i += 1;
                let value = if rest.is_empty() {
                    match self.peek() {
                        Some((j, t)) if j == ind && t.starts_with("- ") => self.sequence(ind),
                        _ => self.node(ind + 1),
                    }
                } else {
                    self.value(&rest, ind)
                };
                assert!(
                    map.insert(key.clone(), value).is_none(),
                    "key `{key}` twice"
                );
            }
            Value::Object(map)
        }

        /// A scalar, or the `|` block that follows a line indented `ind`.
        fn value(&mut self, text: &str, ind: usize) -> Value {
            if text != "|" {
                return scalar(text);
            }
            let mut block: Vec<String> = Vec::new();
            let mut at = None;
            while let Some(line) = self.lines.get(self.i) {
                if !line.trim().is_empty() {
                    if indent(line) <= ind {
                        break;
                    }
                    at.get_or_insert(indent(line));
                }
                block.push(line.clone());
                self.i += 1;
            }
            while block.last().is_some_and(|l| l.trim().is_empty()) {
                block.pop();
            }
            let at = at.unwrap_or(0);
            let text: Vec<&str> = block.iter().map(|l| l.get(at..).unwrap_or("")).collect();
            Value::String(text.join("\n") + "\n")
        }
    }

    fn key_value(text: &str) -> Option<(String, String)> {
        if text.starts_with('"') || text.starts_with('{') {
            return None;
        }
        if let Some(key) = text.strip_suffix(':') {
            return Some((key.to_string(), String::new()));
        }
        text.split_once(": ")
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
    }

    fn scalar(text: &str) -> Value {
        let plain = match text.find(" #") {
            Some(at) if !text.starts_with('"') && !text.starts_with('\'') => text[..at].trim(),
            _ => text,
        };
        match plain {
            "{}" => return Value::Object(Map::new()),
            "[]" => return Value::Array(Vec::new()),
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            _ => {}
        }
        if plain.starts_with('"') {
            return serde_json::from_str(plain).unwrap_or_else(|e| panic!("{plain}: {e}"));
        }
        if let Some(s) = plain.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
            return Value::String(s.replace("''", "'"));
        }
        match plain.parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(plain.to_string()),
        }
    }

    /// The documents of a file.
    pub fn documents(text: &str) -> Vec<Value> {
        text.split("\n---\n")
            .map(|doc| {
                let mut lines = Lines {
                    lines: doc.lines().map(str::to_string).collect(),
                    i: 0,
                };
                let v = lines.node(0);
                assert!(lines.peek().is_none(), "not read: {:?}", lines.peek());
                v
            })
            .collect()
    }
}

/// Enough of a Kubernetes API server for kubectl's discovery, so that
/// `kubectl create --dry-run=client` reads a manifest without a cluster.
fn discovery_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = |name: &str, kind: &str| {
        json!({"name": name, "singularName": kind.to_lowercase(), "namespaced": true,
               "kind": kind, "verbs": ["create", "get", "list"]})
    };
    let answers: BTreeMap<&str, Value> = BTreeMap::from([
        ("/api", json!({"kind": "APIVersions", "versions": ["v1"]})),
        (
            "/apis",
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{"name": "batch",
                "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}]}),
        ),
        (
            "/api/v1",
            json!({"kind": "APIResourceList", "groupVersion": "v1",
                   "resources": [resource("configmaps", "ConfigMap"), resource("secrets", "Secret")]}),
        ),
        (
            "/apis/batch/v1",
            json!({"kind": "APIResourceList", "groupVersion": "batch/v1",
                   "resources": [resource("jobs", "Job")]}),
        ),
    ]);
    let answers = Arc::new(answers);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let answers = answers.clone();
            // kubectl asks over several connections at once.
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut out = conn;
                while let Some((_, path, _)) = crate::util::read_http_request(&mut reader) {
                    let path = path.split('?').next().unwrap_or("");
                    let (status, body) = match answers.get(path) {
                        Some(v) => ("200 OK", v.to_string()),
                        None => ("404 Not Found", String::new()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    if out.write_all(head.as_bytes()).is_err()
                        || out.write_all(body.as_bytes()).is_err()
                    {
                        break;
                    }
                }
            });
        }
    });
    port
}

/// The manifest as kubectl reads it, or `None` without kubectl.
fn kubectl_reads(env: &Env, manifest: &Path) -> Option<Vec<Value>> {
    let present = Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        return None;
    }
    let port = discovery_server();
    env.write(
        "kubeconfig",
        json!({"apiVersion": "v1", "kind": "Config",
               "clusters": [{"name": "none", "cluster": {"server": format!("http://127.0.0.1:{port}")}}],
               "contexts": [{"name": "none", "context": {"cluster": "none", "namespace": "default"}}],
               "current-context": "none", "users": []})
        .to_string(),
    );
    let mut c = env.cmd("kubectl");
    c.args([
        "create",
        "--dry-run=client",
        "--validate=false",
        "-o",
        "json",
        "-f",
    ])
    .arg(manifest)
    .env("KUBECONFIG", env.join("kubeconfig"));
    let r = run(c, None);
    r.ok();
    // One JSON object per document, one after the other.
    let mut items: Vec<Value> = serde_json::Deserializer::from_str(&r.stdout())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    // kubectl fills in the namespace of the kubeconfig's context.
    for item in &mut items {
        item["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
    }
    Some(items)
}

#[test]
fn the_kubernetes_example_is_an_indexed_job_running_one_task_per_index() {
    let env = Env::new();
    let manifest = root().join("examples/k8s/fanout-job.yaml");
    let docs = yaml::documents(&std::fs::read_to_string(&manifest).unwrap());
    match kubectl_reads(&env, &manifest) {
        Some(items) => {
            assert_eq!(items, docs, "kubectl reads the manifest otherwise");
            eprintln!("checked with kubectl create --dry-run=client and the fields below");
        }
        None => eprintln!(
            "kubectl is not installed: the manifest's fields are checked, not kubectl's reading"
        ),
    }
    assert_eq!(docs.len(), 2);
    let (tasks, job) = (&docs[0], &docs[1]);

    assert_eq!(tasks["apiVersion"], "v1");
    assert_eq!(tasks["kind"], "ConfigMap");
    let lines: Vec<Value> = tasks["data"]["tasks.jsonl"]
        .as_str()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for t in &lines {
        // Pods have no checkout: every task clones its repository.
        assert!(
            t["repo"].is_string() && t["prompt"].is_string() && t.get("dir").is_none(),
            "{t}"
        );
    }

    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    // Index I runs line I + 1: one index per line.
    assert_eq!(spec["completions"], lines.len());
    assert!(spec["parallelism"].as_u64().unwrap() >= 1);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let container = &pod["containers"][0];
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(command[..2], ["sh", "-c"]);
    assert!(
        command[2].contains(r#"fanout --task "$((JOB_COMPLETION_INDEX + 1))" /tasks/tasks.jsonl"#),
        "{command:?}"
    );
    // The tasks file is where the command looks for it.
    let mounts = container["volumeMounts"].as_array().unwrap();
    let mount = mounts.iter().find(|m| m["mountPath"] == "/tasks").unwrap();
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    assert_eq!(volume["configMap"]["name"], tasks["metadata"]["name"]);
    // Provider keys come from a Secret, not from the manifest.
    let env_vars = container["env"].as_array().unwrap();
    let key = env_vars
        .iter()
        .find(|e| e["name"] == "ANTHROPIC_API_KEY")
        .unwrap();
    assert!(
        key["valueFrom"]["secretKeyRef"]["name"].is_string(),
        "{key}"
    );
    assert!(key.get("value").is_none());

    // The command's shell: a finished task and an unfinished one (exit 1)
    // both end the pod well, since they printed their result; anything
    // else (fanout itself failing) is an error for the Job to retry.
    for (status, expect) in [(0, 0), (1, 0), (2, 2), (137, 137)] {
        let script = command[2].replace(
            "fanout --task",
            &format!("fanout() {{ return {status}; }}; fanout --task"),
        );
        let mut c = env.cmd("sh");
        c.args(["-c", &script]).env("JOB_COMPLETION_INDEX", "0");
        run(c, None).expect_code(expect);
    }
}

#[test]
fn fanout_passes_options_to_parallel_and_keeps_its_stdout_json() {
    require_parallel();
    let env = Env::new();
    env.write(
        "tasks.jsonl",
        "{\"id\": \"x\", \"dir\": \"nowhere\", \"prompt\": \"p\"}\n[1]\n",
    );
    // `--sshlogin :` is parallel's name for this machine: the jobs run the
    // command as it is sent to a remote one.
    let r = run(fanout(&env, &["--sshlogin", ":", "tasks.jsonl"]), None);
    r.expect_code(1);
    let (by_id, summary) = results(&r.stdout());
    assert_eq!(by_id["x"]["outcome"], "no_directory", "{r}");
    assert_eq!(by_id["2"]["error"], "line 2: not a JSON object", "{r}");
    assert_eq!(summary.unwrap()["failed"], 2);

    // parallel refusing an option is a usage error, and its usage text does
    // not land among the results.
    let r = run(fanout(&env, &["--no-such-option", "tasks.jsonl"]), None);
    r.expect_code(2);
    assert_eq!(r.stdout(), "", "{r}");
    assert!(r.stderr().contains("no-such-option"), "{r}");

    let r = run(fanout(&env, &["--task", "3", "tasks.jsonl"]), None);
    r.expect_code(2);
    assert!(r.stderr().contains("has 2 lines"), "{r}");
}
