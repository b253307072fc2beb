//! One output budget: under ag-loop, read, bash and grep fit their default
//! output in the budget ag-loop gives them (`AG_OUTPUT_BUDGET`), whole
//! lines and no hole in the middle, and say how to get the rest.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, run};

/// ag-loop's budget: what it lets into the conversation.
const BUDGET: usize = 60_000;

fn loop_run(env: &Env, turns: Vec<Turn>) -> (Run, ModelServer) {
    let server = ModelServer::start(turns);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "go"]);
    // ag-bash whole: its background-job tools too.
    c.args(["--tools", "full,bash"]);
    let r = run(c, None);
    r.ok();
    (r, server)
}

fn ends(r: &Run) -> Vec<Value> {
    r.json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect()
}

fn assert_within_budget(out: &str) {
    assert!(
        out.chars().count() <= BUDGET,
        "{} characters",
        out.chars().count()
    );
    assert!(!out.contains("cut by ag-loop"), "the loop had to cut");
}

#[test]
fn a_long_file_read_is_whole_lines_within_budget_with_the_next_offset() {
    let env = Env::new();
    let body: String = (1..=20_000)
        .map(|i| format!("line {i:05} {}\n", "abcdefghij".repeat(3)))
        .collect();
    env.write("big.txt", body);
    let (r, server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![("read", json!({"file_path": "big.txt"}))]),
            Turn::Tools(vec![(
                "read",
                json!({"file_path": "big.txt", "offset": 1500}),
            )]),
            Turn::Text("done"),
        ],
    );
    let ends = ends(&r);
    let first = ends[0]["output"].as_str().unwrap();
    assert_within_budget(first);
    let next = ends[0]["details"]["next_offset"].as_u64().unwrap();
    assert!(next > 1000 && next < 5000, "{next}");
    // Every line from 1 to next-1, whole and in order: no hole.
    let numbered: Vec<&str> = first.lines().filter(|l| l.contains('\t')).collect();
    assert_eq!(numbered.len() as u64, next - 1, "{first}");
    for (i, l) in numbered.iter().enumerate() {
        let n = i + 1;
        assert_eq!(
            *l,
            format!("{n:>6}\tline {n:05} {}", "abcdefghij".repeat(3))
        );
    }
    assert!(first.contains(&format!("offset={next}")), "{first}");
    assert!(!first.contains("showing first 5000"), "{first}");
    // The model read exactly that.
    let sent = server.requests()[1].to_string();
    assert!(sent.contains(&serde_json::to_string(first).unwrap()[1..100]));
    // A page from the middle is budgeted the same way.
    let second = ends[1]["output"].as_str().unwrap();
    assert_within_budget(second);
    assert!(second.contains("  1500\tline 01500 "), "{second}");
}

#[test]
fn long_bash_output_fits_and_points_to_the_full_log() {
    let env = Env::new();
    let (r, _server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![("bash", json!({"command": "seq 1 200000"}))]),
            Turn::Text("done"),
        ],
    );
    let ends = ends(&r);
    let out = ends[0]["output"].as_str().unwrap();
    assert_within_budget(out);
    assert!(out.starts_with("1\n2\n3\n"), "{out}");
    assert!(out.contains("\n200000\n"), "{out}");
    assert!(out.contains("exit code: 0"), "{out}");
    let path = ends[0]["details"]["full_output"].as_str().unwrap();
    assert!(out.contains(path), "{out}");
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.lines().count(), 200_000);
    // Whole lines on both sides of the tool's own cut.
    let cut = out.find("[...").unwrap();
    let head = &out[..cut];
    assert!(head.ends_with('\n'));
    let n: Vec<u64> = head.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(n, (1..=n.len() as u64).collect::<Vec<_>>());
}

#[test]
fn grep_pages_within_budget_and_the_next_page_follows_on() {
    let env = Env::new();
    // 40 files, each with 5 long matching lines among long other lines:
    // 50 matches with 10 lines of context around each would be about
    // 300,000 characters.
    for f in 0..40 {
        let mut text = String::new();
        for i in 0..60 {
            let word = if i % 12 == 6 { "needle" } else { "hay" };
            text.push_str(&format!("{word} {f:02}-{i:02} {}\n", "z".repeat(270)));
        }
        env.write(&format!("src/f{f:02}.txt"), text);
    }
    let (r, server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![("grep", json!({"query": "needle", "context": 10}))]),
            Turn::Text("next"),
        ],
    );
    let first_page = ends(&r);
    let out = first_page[0]["output"].as_str().unwrap();
    assert_within_budget(out);
    let shown = first_page[0]["details"]["matches"]
        .as_array()
        .unwrap()
        .len();
    assert!(shown > 0 && shown < 50, "{shown}");
    assert!(
        out.contains(&format!("Next page: the same call with skip={shown}")),
        "{out}"
    );
    drop(server);
    // The next page starts with the match after the last one shown.
    let (r, _server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![(
                "grep",
                json!({"query": "needle", "context": 10, "skip": shown}),
            )]),
            Turn::Text("done"),
        ],
    );
    let page = &ends(&r)[0];
    let first = &page["details"]["matches"][0];
    let (file, line) = (shown / 5, (shown % 5) * 12 + 7);
    assert_eq!(first["path"], format!("src/f{file:02}.txt"), "{page}");
    assert_eq!(first["line"], line as u64, "{page}");
    assert_within_budget(page["output"].as_str().unwrap());
}

#[test]
fn standalone_tools_keep_their_defaults() {
    let env = Env::new();
    let body: String = (1..=20_000).map(|i| format!("line {i}\n")).collect();
    env.write("big.txt", body);
    let line = json!({"id": "1", "arguments": {"file_path": "big.txt"}}).to_string() + "\n";
    let r = run(env.cmd(bin!("ag-read")), Some(line.as_bytes()));
    r.ok();
    let result = r.json();
    assert_eq!(result["details"]["lines_read"], 5000);
    // And a budget given by hand is honoured the same way as under ag-loop.
    let mut c = env.cmd(bin!("ag-read"));
    c.env("AG_OUTPUT_BUDGET", "5000");
    let r = run(c, Some(line.as_bytes()));
    r.ok();
    let result = r.json();
    assert!(result["output"].as_str().unwrap().chars().count() <= 5000);
    assert!(result["details"]["lines_read"].as_u64().unwrap() < 5000);
}

#[test]
fn grep_skip_leaves_out_earlier_matches_but_not_their_neighbours_context() {
    let env = Env::new();
    let text: String = (1..=25)
        .map(|i| {
            if [3, 5, 20].contains(&i) {
                format!("match {i}\n")
            } else {
                format!("other {i}\n")
            }
        })
        .collect();
    env.write("a.txt", text);
    let call = |skip: u64| {
        let line = json!({"id": "1", "arguments": {"query": "match", "context": 1, "skip": skip, "max_matches": 1}})
            .to_string()
            + "\n";
        let r = run(env.cmd(bin!("ag-grep")), Some(line.as_bytes()));
        r.ok();
        r.json()
    };
    let page = call(1);
    let out = page["output"].as_str().unwrap();
    assert!(
        out.starts_with("a.txt-4- other 4\na.txt:5: match 5\na.txt-6- other 6\n"),
        "{out}"
    );
    assert!(
        !out.contains("match 3") && !out.contains("match 20"),
        "{out}"
    );
    assert!(out.contains("Showing 2-2 of 3 matching lines"), "{out}");
    assert!(out.contains("skip=2"), "{out}");
    let last = call(2);
    assert_eq!(last["details"]["matches"][0]["line"], 20);
    assert_eq!(last["details"]["truncated"], false);
    // The last page says what its skip passed over, as a model's skip=1
    // on its first search would otherwise hide a match without a word.
    assert!(
        last["output"]
            .as_str()
            .unwrap()
            .contains("Showing 3-3 of 3 matching lines: skip=2 passed over the first 2. The same call with skip=0 (or without skip) shows them all."),
        "{last}"
    );
    let past = call(3);
    assert!(
        past["output"]
            .as_str()
            .unwrap()
            .contains("No matching lines after skip=3: there are 3 in all, and skip=3 passes over them. The same call with skip=0 (or without skip) shows them."),
        "{past}"
    );
}

#[test]
fn a_background_jobs_log_tail_fits_the_budget() {
    let env = Env::new();
    let body: String = (1..=1000)
        .map(|i| format!("{i:04} {}\n", "y".repeat(295)))
        .chain(std::iter::once("END\n".to_string()))
        .collect();
    env.write("big.txt", body);
    let (r, _server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![("bash_background", json!({"command": "cat big.txt"}))]),
            // Wait until the job has written everything.
            Turn::Tools(vec![(
                "bash",
                json!({"command": "for i in $(seq 100); do find .home -name output.log -exec grep -q '^END$' {} \\; -print | grep -q . && break; sleep 0.1; done"}),
            )]),
            Turn::Tools(vec![("job_output", json!({"job": "1", "lines": 1000}))]),
            Turn::Text("done"),
        ],
    );
    let ends = ends(&r);
    let out = ends[2]["output"].as_str().unwrap();
    assert_within_budget(out);
    assert!(out.contains("output.log"), "{out}");
    assert!(
        out.contains("\n1000 yyy") && out.contains("\nEND\n"),
        "{out}"
    );
    assert!(!out.contains("\n0001 yyy"), "{out}");
}

#[test]
fn a_larger_explicit_limit_still_fits_the_budget() {
    let env = Env::new();
    let (r, _server) = loop_run(
        &env,
        vec![
            Turn::Tools(vec![(
                "bash",
                json!({"command": "seq 1 300000", "max_output": 4_000_000}),
            )]),
            Turn::Text("done"),
        ],
    );
    let ends = ends(&r);
    let out = ends[0]["output"].as_str().unwrap();
    assert_within_budget(out);
    assert!(out.contains("\n300000\n"), "{out}");
    assert!(out.contains(ends[0]["details"]["full_output"].as_str().unwrap()));
}
