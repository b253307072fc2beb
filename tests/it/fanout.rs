//! ag-fanout: tasks files run through GNU parallel and ag-loop against a
//! model server that answers by the task's prompt (so that tasks running in
//! any order get their own script), the result lines, the summary, the
//! diffs, an interrupt and `--resume`.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use ag::proc::{Signal, signal_process};
use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{Conversation, Turn, conversation_server};
use crate::util::{Env, git, run, wait_for};

/// The repository's root (examples/).
pub fn root() -> PathBuf {
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
        "GNU parallel is not installed: install it (Debian: apt-get install parallel) to run the ag-fanout tests"
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
pub struct PromptServer {
    port: u16,
    hold: Arc<(Mutex<Hold>, Condvar)>,
}

impl PromptServer {
    pub fn start() -> PromptServer {
        let hold: Arc<(Mutex<Hold>, Condvar)> = Arc::default();
        let h = hold.clone();
        let port = conversation_server(move |c, conn| {
            if c.first.starts_with("slow ") && !wait_while_held(&h, conn) {
                return None;
            }
            Some(answer(c))
        });
        PromptServer { port, hold }
    }

    pub fn set_held(&self, held: bool) {
        let (m, c) = &*self.hold;
        m.lock().unwrap().held = held;
        c.notify_all();
    }

    pub fn waiting(&self) -> usize {
        self.hold.0.lock().unwrap().waiting
    }
}

fn answer(c: &Conversation) -> Turn {
    let prompt = c
        .first
        .strip_prefix("slow ")
        .unwrap_or(&c.first)
        .to_string();
    if prompt == "spin" {
        return Turn::Tools(vec![("bash", json!({"command": "true"}))]);
    }
    if c.after_tool {
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

/// Waits while the server is held; false when the client went away
/// meanwhile.
fn wait_while_held(hold: &(Mutex<Hold>, Condvar), conn: &TcpStream) -> bool {
    let (m, c) = hold;
    let mut h = m.lock().unwrap();
    h.waiting += 1;
    while h.held {
        h = c.wait_timeout(h, Duration::from_millis(50)).unwrap().0;
        // A client that went away is no longer waiting.
        if gone(conn) {
            h.waiting -= 1;
            return false;
        }
    }
    h.waiting -= 1;
    true
}

/// `fake/m` on the server, at $10,000 per million input tokens: $1 a call.
pub fn models_json(env: &Env, server: &PromptServer) {
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

/// A git repository `rel` with one commit of README.md.
pub fn repo(env: &Env, rel: &str) -> PathBuf {
    env.write(&format!("{rel}/README.md"), "# r\n");
    let dir = env.join(rel);
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "start"]);
    dir
}

/// ag-fanout with the built binaries first on PATH (GNU parallel's jobs
/// and remote commands find them there).
pub fn fanout(env: &Env, args: &[&str]) -> Command {
    let bins = Path::new(bin!("ag-loop")).parent().unwrap().to_path_buf();
    let mut path = std::ffi::OsString::from(bins);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let mut c = env.cmd(bin!("ag-fanout"));
    c.args(args).env("PATH", path).env("FAKE_KEY", "k");
    c
}

/// The result lines of a run, by task id, and its summary line.
pub fn results(stdout: &str) -> (BTreeMap<String, Value>, Option<Value>) {
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
pub fn result_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect()
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
    std::fs::create_dir(env.join("bin")).unwrap();
    env.write("tasks.jsonl", "{}\n");
    let mut c = env.cmd(bin!("ag-fanout"));
    c.args(["-j", "2", "tasks.jsonl"])
        .env("PATH", env.join("bin"));
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("GNU parallel is not installed"), "{r}");
    assert!(r.stderr().contains("apt-get install parallel"), "{r}");
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

// Runs that end when a check passes (issue 35).
#[test]
fn fanout_runs_each_tasks_check_and_says_pass_or_fail() {
    require_parallel();
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    repo(&env, "r1");
    repo(&env, "r2");
    repo(&env, "r3");
    let tasks = [
        json!({"id": "pass", "dir": "r1", "prompt": "write hello.txt hi", "model": "fake/m",
               "check": "grep -q hi hello.txt"}),
        json!({"id": "fail", "dir": "r2", "prompt": "write x.txt y", "model": "fake/m",
               "check": "echo nope; exit 4", "check_tries": 2}),
        // The run ends at the turn limit before any check: fanout runs it.
        json!({"id": "spin-pass", "dir": "r3", "prompt": "spin", "model": "fake/m",
               "args": ["--max-turns", "2"], "check": "test -f README.md"}),
        json!({"id": "spin-fail", "dir": "r3", "prompt": "spin", "model": "fake/m",
               "args": ["--max-turns", "2"], "check": "test -f nothing.txt", "check_timeout": 30}),
        json!({"id": "none", "dir": "r3", "prompt": "write n.txt n", "model": "fake/m"}),
        json!({"id": "zero", "dir": "r3", "prompt": "x", "check": "true", "check_tries": 0}),
        json!({"id": "alone", "dir": "r3", "prompt": "x", "check_timeout": 5}),
        json!({"id": "empty", "dir": "r3", "prompt": "x", "check": ""}),
    ];
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    env.write("tasks.jsonl", lines.join("\n") + "\n");
    let r = run(fanout(&env, &["-j", "2", "tasks.jsonl"]), None);
    r.expect_code(1);
    let (by_id, summary) = results(&r.stdout());

    let pass = &by_id["pass"];
    assert_eq!(
        (&pass["outcome"], &pass["check"], &pass["check_exit"]),
        (&json!("finished"), &json!("pass"), &json!(0)),
        "{pass}"
    );
    let fail = &by_id["fail"];
    assert_eq!(
        (&fail["outcome"], &fail["check"], &fail["check_exit"]),
        (&json!("check_failed"), &json!("fail"), &json!(4)),
        "{fail}"
    );
    assert!(
        fail["check_output"].as_str().unwrap().contains("nope"),
        "{fail}"
    );
    assert!(
        fail["error"].as_str().unwrap().contains("--until-tries"),
        "{fail}"
    );
    let spin = &by_id["spin-pass"];
    assert_eq!(
        (&spin["outcome"], &spin["check"], &spin["check_exit"]),
        (&json!("turn_limit"), &json!("pass"), &json!(0)),
        "{spin}"
    );
    let spin = &by_id["spin-fail"];
    assert_eq!(
        (&spin["outcome"], &spin["check"], &spin["check_exit"]),
        (&json!("turn_limit"), &json!("fail"), &json!(1)),
        "{spin}"
    );
    let none = &by_id["none"];
    assert_eq!(none["outcome"], "finished", "{none}");
    assert!(none.get("check").is_none(), "{none}");
    // A task that is refused is known by its line number.
    for (id, says) in [
        (
            "6",
            "`check_tries` must be a whole number, 1 or more (got 0)",
        ),
        ("7", "`check_timeout` goes with `check`"),
        ("8", "`check` must be a non-empty string"),
    ] {
        let t = &by_id[id];
        assert_eq!(t["outcome"], "invalid_task", "{t}");
        assert!(t["error"].as_str().unwrap().contains(says), "{t}");
    }
    let summary = summary.unwrap();
    assert_eq!(summary["outcomes"]["check_failed"], 1, "{summary}");
}
