//! What a user could paste from the seeds (the design documents), run as
//! written: seed 002's JSON-mode input and command lines and its tools'
//! calls, seed 003's identity file, tool sets and `@name` routing, seed
//! 001's tool calls with their own argument names. The examples are kept
//! verbatim in `tests/fixtures/seeds/`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agent::{request, scripted_model, text_turn, tool_turn};
use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, of_type, run, run_args};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seeds")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The tools offered, but for ag-browser's: `full` adds them where
/// Chromium is found, which these tests do not depend on.
fn tool_names(req: &Value) -> Vec<String> {
    req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|n| !n.starts_with("browser_"))
        .collect()
}

/// Seed 002: `coding-agent --json < prompts.jsonl > results.jsonl` with the
/// three lines of its JSON-mode example, unchanged: the first prompt is
/// interrupted (the `interrupt` line follows it, whenever it is read), the
/// second runs, and the exit status says a prompt was interrupted.
#[test]
fn seed_002s_json_mode_input_runs_as_written() {
    let env = Env::new();
    env.write("src/a.ts", "export const a = 1;\n");
    env.write("src/b.ts", "export const b = 2;\n");
    let input = env.write("prompts.jsonl", fixture("002-json-mode.jsonl"));
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("find", json!({"pattern": "*.ts"}))]),
        Turn::Text("There are 2 TypeScript files."),
    ]);
    let results = env.join("results.jsonl");
    let mut c = server.ag_loop(&env);
    c.arg("--no-gate")
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&results).unwrap());
    c.stderr(std::process::Stdio::piped());
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(130),
        "interrupted: exit 130; {stderr}"
    );
    let events: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(of_type(&events, "error").is_empty(), "{events:?}");
    let ends = of_type(&events, "agent_end");
    assert_eq!(ends.len(), 2, "{events:?}");
    assert_eq!(ends[0]["outcome"], "interrupted");
    assert_eq!(
        ends[0]["messages"][0]["content"],
        "List all TypeScript files"
    );
    assert_eq!(ends[1]["outcome"], "finished");
    assert_eq!(ends[1]["messages"][0]["content"], "Count the files");
    assert_eq!(of_type(&events, "interrupted").len(), 1);
    let found = of_type(&events, "tool_execution_end");
    assert!(
        found[0]["output"].as_str().unwrap().contains("src/b.ts"),
        "{found:?}"
    );
    // The interrupted prompt stays in the conversation, answered by nothing.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let users: Vec<&Value> = reqs[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2, "{}", reqs[0]);
}

/// A `message` line's content as blocks, as seed 002's own types allow.
#[test]
fn a_message_line_takes_content_blocks_too() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("counted")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session"]);
    let line = json!({"type": "message", "content": [{"type": "text", "text": "Count the files"}]});
    let r = run(c, Some(format!("{line}\n").as_bytes()));
    r.ok();
    let req = request(&env, 0);
    assert_eq!(req["messages"][0]["content"][0]["text"], "Count the files");
}

/// Seed 002's command lines, as ag-loop takes them: several prompts,
/// `--continue`, `--model openai/gpt-4 --api-key $KEY` and `--system-prompt`.
#[test]
fn seed_002s_command_lines_work() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            text_turn("validated"),
            text_turn("tested"),
            text_turn("again"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "Add validation", "Write tests"]);
    let r = run(c, None);
    r.ok();
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "agent_end")
        .collect();
    assert_eq!(ends.len(), 2);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--continue",
        "--system-prompt",
        "You are a coding assistant...",
        "Fix the TypeScript errors",
    ]);
    run(c, None).ok();
    let req = request(&env, 2);
    assert_eq!(req["messages"].as_array().unwrap().len(), 5, "{req}");
    assert!(
        req["system"]
            .as_str()
            .unwrap()
            .starts_with("You are a coding assistant...")
    );

    // `--model openai/gpt-4 --api-key $KEY` against a server that answers as
    // OpenAI's does.
    let server = crate::llm_server::Server::start(vec![crate::llm_server::sse(
        crate::llm_server::fixture("openai__responses_multistep_step4_final_text.sse"),
    )]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--model",
        "openai/gpt-4",
        "--api-key",
        "sk-seed-002-example-key",
        "--base-url",
        &server.url("/v1"),
        "--no-session",
        "--json",
        "Fix the TypeScript errors",
    ]);
    let r = run(c, None);
    r.ok();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let body = &seen[0].body;
    assert_eq!(body["model"], "gpt-4");
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer sk-seed-002-example-key")
    );
    assert!(!r.stdout().contains("sk-seed-002-example-key"));
}

/// Seed 002's four tools called as its system prompt shows them.
#[test]
fn seed_002s_tool_calls_work() {
    let env = Env::new();
    let big: String = (1..=10_000)
        .map(|i| format!("const x{i} = {i};\n"))
        .collect();
    env.write("src/large.ts", &big);
    let read = crate::util::call(&env, bin!("ag-read"), json!({"file_path": "src/large.ts"}));
    assert_eq!(read["is_error"], false, "{read}");
    assert_eq!(read["details"]["total_lines"], 10_000, "{read}");
    let page = crate::util::call(
        &env,
        bin!("ag-read"),
        json!({"file_path": "src/large.ts", "offset": 5001, "limit": 5000}),
    );
    assert!(
        page["output"]
            .as_str()
            .unwrap()
            .contains("const x5001 = 5001;"),
        "{page}"
    );
    env.write("src/server.ts", "const port = 3000;\n");
    let edit = crate::util::call(
        &env,
        bin!("ag-edit"),
        json!({"file_path": "src/server.ts", "old_string": "const port = 3000;", "new_string": "const port = process.env.PORT || 3000;"}),
    );
    assert_eq!(edit["is_error"], false, "{edit}");
    let write = crate::util::call(
        &env,
        bin!("ag-write"),
        json!({"file_path": "src/utils/helper.ts", "content": "export {};\n"}),
    );
    assert_eq!(write["is_error"], false, "{write}");
    let bash = crate::util::call(&env, bin!("ag-bash"), json!({"command": "ls src"}));
    assert!(
        bash["output"].as_str().unwrap().contains("server.ts"),
        "{bash}"
    );
}

/// The project seed 001's calls work on.
fn seed_001_project(env: &Env) {
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        "src/app.ts",
        "import { greet } from './greet';\n\nexport function main() {\n  return greet();\n}\n",
    );
    env.write("src/app.test.ts", "function testMain() {}\n");
    env.write("src/old.ts", "function unused() {}\n");
}

fn seed_001_calls() -> Vec<(String, Value)> {
    fixture("001-calls.jsonl")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["tool"].as_str().unwrap().to_string(),
                v["arguments"].clone(),
            )
        })
        .collect()
}

/// The outcome every seed 001 call must have had, in order.
fn check_seed_001_results(env: &Env, outputs: &[String]) {
    assert!(
        outputs[0].contains("app.ts") && outputs[0].contains("old.ts"),
        "{outputs:?}"
    );
    assert!(outputs[1].contains("src/app.ts"), "{}", outputs[1]);
    assert!(!outputs[1].contains("app.test.ts"), "{}", outputs[1]);
    assert!(outputs[2].contains("return greet();"), "{}", outputs[2]);
    let app = String::from_utf8(env.read("src/app.ts")).unwrap();
    assert!(
        app.ends_with("  return greet();\n}\n\nfunction newEdit() {\n  // new code here\n}\n"),
        "{app}"
    );
    assert!(!env.join("src/old.ts").exists());
}

/// Seed 001's calls, with its names for the tools and their arguments
/// (`target_file`, `relative_workspace_path`, `explanation`), straight to
/// the tool binaries.
#[test]
fn seed_001s_calls_work_on_the_tool_binaries() {
    let env = Env::new();
    seed_001_project(&env);
    let binary = |tool: &str| match tool {
        "list_dir" => bin!("ag-ls"),
        "grep_search" => bin!("ag-grep"),
        "read_file" => bin!("ag-read"),
        "edit_file" => bin!("ag-edit"),
        "delete_file" => bin!("ag-delete"),
        other => panic!("no tool for {other}"),
    };
    let mut outputs = Vec::new();
    for (tool, args) in seed_001_calls() {
        let r = crate::util::call(&env, binary(&tool), args);
        assert_eq!(r["is_error"], false, "{tool}: {r}");
        outputs.push(r["output"].as_str().unwrap().to_string());
    }
    check_seed_001_results(&env, &outputs);
}

/// The same calls made by a model through ag-loop, tool names and all.
#[test]
fn seed_001s_calls_work_through_ag_loop() {
    let env = Env::new();
    seed_001_project(&env);
    let mut turns: Vec<Vec<Value>> = seed_001_calls()
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| tool_turn(&[(&format!("c{i}"), tool.as_str(), args.clone())]))
        .collect();
    turns.push(text_turn("done"));
    let model = scripted_model(&env, &turns);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--no-gate",
        "--no-session",
        "tidy the project",
    ]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let ends = of_type(&events, "tool_execution_end");
    assert_eq!(ends.len(), 5, "{events:?}");
    for e in &ends {
        assert_eq!(e["is_error"], false, "{e}");
    }
    // The calls ran as ag's tools, with ag's argument names.
    let starts = of_type(&events, "tool_execution_start");
    assert_eq!(starts[2]["tool_name"], "read");
    assert_eq!(starts[2]["arguments"], json!({"file_path": "src/app.ts"}));
    assert_eq!(starts[0]["arguments"], json!({"path": "src"}));
    let outputs: Vec<String> = ends
        .iter()
        .map(|e| e["output"].as_str().unwrap().to_string())
        .collect();
    check_seed_001_results(&env, &outputs);
    // The model's own names stay in the conversation it reads.
    let last = request(&env, 5);
    let results: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .collect();
    assert_eq!(results[0]["tool_name"], "list_dir");
}

/// Seed 001's code sketch as its instructions print it has nothing to
/// place it by: the error says what to write.
#[test]
fn seed_001s_bare_sketch_example_says_what_to_write() {
    let env = Env::new();
    seed_001_project(&env);
    let r = crate::util::call(
        &env,
        bin!("ag-edit"),
        json!({"target_file": "src/app.ts", "instructions": "add newEdit",
               "code_edit": "// ... existing code ...\nfunction newEdit() {\n  // new code here\n}\n// ... existing code ...\n"}),
    );
    assert_eq!(r["is_error"], true, "{r}");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("Begin it with the unchanged line just before the change"),
        "{out}"
    );
    assert!(out.contains("Nothing was changed"), "{out}");
}

/// Seed 001's edit agent's plan (`start_line`, `end_line`, `replacement`,
/// applied bottom-up) is ag-edit's `line_edits`.
#[test]
fn seed_001s_line_range_plan_is_line_edits() {
    let env = Env::new();
    env.write("f.ts", "one\ntwo\nthree\nfour\n");
    let r = crate::util::call(
        &env,
        bin!("ag-edit"),
        json!({"target_file": "f.ts", "line_edits": [
            {"start_line": 1, "end_line": 1, "replacement": "ONE\none and a half"},
            {"start_line": 3, "end_line": 4, "replacement": "THREE-FOUR"}
        ]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(env.read("f.ts"), b"ONE\none and a half\ntwo\nTHREE-FOUR\n");
}

/// Seed 003's identity file, verbatim: its model and tool set are used,
/// its body opens the system prompt and the project context follows.
#[test]
fn seed_003s_identity_runs_as_written() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(".ag/agents/matt.md", fixture("003-matt.md"));
    env.write("AGENTS.md", "Run the tests with make test.\n");
    env.write(".home/.ag/MEMORY.md", "The user prefers short answers.\n");
    let list = run_args(&env, bin!("ag-loop"), &["--list-agents"]);
    list.ok();
    assert!(
        list.stdout().starts_with("matt\tCTO & Systems Architect\t"),
        "{list}"
    );
    let model = scripted_model(&env, &[text_turn("Here is the API."), text_turn("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--agent",
        "matt",
        "--no-session",
        "design the API",
    ]);
    let r = run(c, None);
    r.ok();
    let start = &of_type(&r.json_lines(), "agent_start")[0].clone();
    assert_eq!(start["agent"], "matt");
    let req = request(&env, 0);
    assert_eq!(req["model"], "anthropic/claude-sonnet-4-20250514");
    let system = req["system"].as_str().unwrap();
    assert!(
        system.starts_with("# Matt -- CTO & Systems Architect"),
        "{system}"
    );
    let at = |s: &str| {
        system
            .find(s)
            .unwrap_or_else(|| panic!("no `{s}` in {system}"))
    };
    assert!(at("Frames technical decisions") < at("every tool call runs for real"));
    assert!(at("runs for real") < at("old_string"));
    assert!(at("old_string") < at("Working directory: "));
    assert!(at("Working directory: ") < at("Run the tests with make test."));
    assert!(at("Run the tests with make test.") < at("The user prefers short answers."));
    // toolSet: full is the core tools (no CLI agent is installed here),
    // without `ask`: nobody can answer this run's questions.
    assert_eq!(
        tool_names(&req),
        [
            "read",
            "write",
            "edit",
            "edit_lines",
            "patch",
            "delete",
            "bash",
            "grep",
            "find",
            "ls",
            "todo",
            "git_status",
            "git_diff",
            "git_log",
            "git_commit",
            "notify"
        ]
    );
}

/// `@matt design the API ...` runs that prompt as Matt and the next one as
/// the run is; `default.md` is who answers when nobody is named.
#[test]
fn at_name_routes_one_prompt_and_default_md_answers_the_rest() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(".ag/agents/matt.md", fixture("003-matt.md"));
    env.write(
        ".home/.ag/agents/default.md",
        "---\nrole: the default assistant\ntoolSet: [read_file, bash, git_status, git_diff, grep, glob, notify_user]\n---\nYou are the default assistant.\n",
    );
    let model = scripted_model(&env, &[text_turn("as Matt"), text_turn("as default")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session", "-m", "test/base"]);
    let r = run(
        c,
        Some(b"@matt design the API for the new billing system\nand now the tests\n"),
    );
    r.ok();
    let events = r.json_lines();
    let starts = of_type(&events, "agent_start");
    assert_eq!(starts[0]["agent"], "matt");
    assert_eq!(starts[1]["agent"], "default");
    let as_matt = request(&env, 0);
    // The flag still wins over the identity's model, as with --agent.
    assert_eq!(as_matt["model"], "test/base");
    assert!(as_matt["system"].as_str().unwrap().starts_with("# Matt"));
    assert_eq!(
        as_matt["messages"][0]["content"],
        "design the API for the new billing system"
    );
    // The core tools (git as four, edit as two) and `ask`: a named set
    // offers it.
    assert_eq!(tool_names(&as_matt).len(), 17);
    let as_default = request(&env, 1);
    assert!(
        as_default["system"]
            .as_str()
            .unwrap()
            .starts_with("You are the default assistant.")
    );
    // Seed 003's tool names, as ag's tools: its `git_status` and
    // `git_diff` are ag's own, and `bash` is all of ag-bash.
    assert_eq!(
        tool_names(&as_default),
        [
            "read",
            "bash",
            "bash_background",
            "job_output",
            "job_stop",
            "job_list",
            "git_status",
            "git_diff",
            "grep",
            "find",
            "notify"
        ]
    );
    // The conversation is one: the second request carries the first answer.
    assert_eq!(as_default["messages"].as_array().unwrap().len(), 3);
}

/// An `@name` that names nobody, while there are identities, is not run
/// as someone else: the error lists who there is.
#[test]
fn an_unknown_at_name_is_not_run_and_says_who_there_is() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(".ag/agents/matt.md", fixture("003-matt.md"));
    let model = scripted_model(&env, &[text_turn("ran")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session"]);
    let r = run(
        c,
        Some(b"@mat design the API\n@matt\n@src/app.ts is plain text here\n"),
    );
    r.expect_code(1);
    let events = r.json_lines();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 2, "{events:?}");
    assert_eq!(errors[0]["code"], "prompt.unknown_identity", "{events:?}");
    assert_eq!(
        errors[1]["code"], "prompt.nothing_after_identity",
        "{events:?}"
    );
    let first = errors[0]["message"].as_str().unwrap();
    assert!(
        first.contains("no agent identity `mat`") && first.contains("@matt"),
        "{first}"
    );
    let second = errors[1]["message"].as_str().unwrap();
    assert!(second.contains("`@matt <the task>`"), "{second}");
    // The third is a prompt as it is.
    let req = request(&env, 0);
    assert_eq!(
        req["messages"][0]["content"],
        "@src/app.ts is plain text here"
    );
}

/// Seed 003's `chat` and `minimal` tool sets, and a tool set named by an
/// identity that is not installed.
#[test]
fn seed_003s_tool_sets_mean_what_it_says() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".ag/agents/chatty.md",
        "---\ntoolSet: chat\n---\nYou talk.\n",
    );
    env.write(
        ".ag/agents/core.md",
        "---\ntoolSet: minimal\n---\nYou code.\n",
    );
    env.write(
        ".ag/agents/browser.md",
        "---\ntoolSet: [read_file, web_search]\n---\nYou browse.\n",
    );
    let model = scripted_model(&env, &[text_turn("hi"), text_turn("hi")]);
    for (agent, n) in [("chatty", 0), ("core", 1)] {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "--llm-cmd",
            &model,
            "--no-session",
            // Someone can answer, so the sets offer `ask` as they list it
            // (unattended, a set leaves it out: tests of settings.rs).
            "--ask-default",
            "no",
            "--agent",
            agent,
            "hello",
        ]);
        run(c, None).ok();
        let req = request(&env, n);
        let names = tool_names(&req);
        match agent {
            "chatty" => {
                assert_eq!(names, ["notify", "ask"]);
                let system = req["system"].as_str().unwrap();
                assert!(
                    system.contains("No tools that read or change files"),
                    "{system}"
                );
            }
            _ => assert_eq!(names.len(), 17, "{names:?}"),
        }
    }
    let r = run_args(
        &env,
        bin!("ag-loop"),
        &[
            "--llm-cmd",
            &model,
            "--agent",
            "browser",
            "--no-session",
            "hi",
        ],
    );
    r.expect_code(2);
    assert!(r.stderr().contains("tool `web_search`"), "{r}");
    assert!(r.stderr().contains("chat = notify and ask"), "{r}");
}

/// Seed 003's identity front matter in the forms YAML allows, and what is
/// said about one ag cannot read.
#[test]
fn identity_front_matter_that_cannot_be_read_says_the_line() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".ag/agents/half.md",
        "---\nname: Half\nmodel:\n  id: claude-sonnet-4-20250514\n---\nx\n",
    );
    let r = run_args(&env, bin!("ag-loop"), &["--agent", "half", "hi"]);
    r.expect_code(2);
    assert!(
        r.stderr().contains("line 3")
            && r.stderr()
                .contains("`model: PROVIDER/claude-sonnet-4-20250514`"),
        "{r}"
    );
}

/// Seed 003's worker messages and pi's RPC names are not ag-loop's
/// commands: the error shows the line to write, with the caller's values.
#[test]
fn other_protocols_lines_get_the_command_to_write_instead() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session"]);
    let r = run(
        c,
        Some(
            b"{\"type\":\"WORKER_STEER\",\"prompt\":\"use the new API\"}\n{\"type\":\"prompt\",\"message\":\"hi\"}\n{\"type\":\"set_thinking_level\",\"level\":\"high\"}\n",
        ),
    );
    r.ok();
    let events = r.json_lines();
    let errors: Vec<String> = of_type(&events, "error")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(errors.len(), 3, "{events:?}");
    assert!(
        errors[0].ends_with(r#"write it as {"type":"steer","content":"use the new API"}"#),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].ends_with(r#"write it as {"type":"prompt","content":"hi"}"#),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].ends_with(r#"write it as {"type":"set_reasoning","level":"high"}"#),
        "{}",
        errors[2]
    );
    assert!(of_type(&events, "agent_start").is_empty());
}

/// Seed 003's tool registry, called by its own names and arguments
/// (`read_file` with `path`, `git_status`, `glob`, `notify_user`) through
/// ag-loop.
#[test]
fn seed_003s_tool_names_and_arguments_work_through_ag_loop() {
    let env = Env::new();
    seed_001_project(&env);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(env.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    std::fs::remove_dir_all(env.join(".git")).unwrap();
    git(&["init", "-q"]);
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[
                ("r", "read_file", json!({"path": "src/app.ts"})),
                ("s", "git_status", json!({})),
                ("g", "glob", json!({"pattern": "*.ts"})),
                ("n", "notify_user", json!({"message": "looking around"})),
            ]),
            text_turn("done"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--no-gate",
        "--no-session",
        "look around",
    ]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let ends = of_type(&events, "tool_execution_end");
    assert_eq!(ends.len(), 4, "{events:?}");
    for e in &ends {
        assert_eq!(e["is_error"], false, "{e}");
    }
    let by = |id: &str| {
        ends.iter().find(|e| e["tool_call_id"] == id).unwrap()["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(by("r").contains("return greet();"));
    assert!(by("s").contains("src/"), "{}", by("s"));
    assert!(by("g").contains("src/app.test.ts"), "{}", by("g"));
    assert_eq!(of_type(&events, "notify")[0]["message"], "looking around");
}

/// Seed 002's session lines wrap each event (`{"type":"event","timestamp",
/// "event":{...}}`): `ag-session append` takes them as the events they hold.
#[test]
fn seed_002s_session_lines_can_be_appended() {
    let env = Env::new();
    let new = run_args(&env, bin!("ag-session"), &["new"]);
    new.ok();
    let id = new.stdout().split('\t').next().unwrap().to_string();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", &id]);
    let lines = "{\"type\":\"event\",\"timestamp\":\"2025-10-12T10:00:01Z\",\"event\":{\"type\":\"turn_start\"}}\n{\"type\":\"event\",\"timestamp\":\"2025-10-12T10:00:02Z\",\"event\":{\"type\":\"message_end\",\"message\":{\"role\":\"user\",\"content\":\"Fix the bug in server.ts\"}}}\n";
    run(c, Some(lines.as_bytes())).ok();
    let show = run_args(&env, bin!("ag-session"), &["show", &id, "--json"]);
    show.ok();
    let records = show.json_lines();
    assert_eq!(
        records[1],
        json!({"timestamp": "2025-10-12T10:00:01Z", "type": "turn_start"})
    );
    let msgs = run_args(&env, bin!("ag-session"), &["messages", &id]);
    assert!(msgs.stdout().contains("Fix the bug in server.ts"), "{msgs}");
}
