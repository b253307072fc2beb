//! The protocol every tool binary shares, exercised through ag-read:
//! `--schema`, the JSONL call loop, plain mode with `--json`, exit statuses,
//! `--root`, stderr-only diagnostics.

use crate::bin;
use crate::util::{Env, call_lines, run, run_args};
use serde_json::json;

#[test]
fn schema_is_a_valid_tool_definition() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-read"), &["--schema"]);
    r.ok();
    let def = r.json();
    let typed: ag::protocol::ToolDefinition = serde_json::from_value(def.clone()).unwrap();
    assert_eq!(typed.name, "read");
    assert_eq!(def["parameters"]["type"], "object");
    assert_eq!(def["parameters"]["required"], json!(["file_path"]));
    assert!(def["parameters"].get("$schema").is_none());
    assert!(!def["parameters"].to_string().contains("null"), "{def}");
    // The parameters are themselves a valid JSON Schema.
    jsonschema::validator_for(&def["parameters"]).unwrap();
}

#[test]
fn garbage_line_is_answered_and_the_loop_goes_on() {
    let env = Env::new();
    env.write("a.txt", "alpha\nbeta\n");
    let input = "{\"id\":\"1\",\"arguments\":{\"file_path\":\"a.txt\"}}\n\
                 this is not json\n\
                 [1,2]\n\
                 {\"id\":\"3\",\"arguments\":{\"nope\":1}}\n\
                 \n\
                 {\"file_path\":\"a.txt\",\"offset\":2}\n";
    let out = call_lines(&env, bin!("ag-read"), input);
    assert_eq!(out.len(), 5, "{out:?}");
    assert_eq!(out[0]["id"], "1");
    assert_eq!(out[0]["is_error"], false);
    assert_eq!(out[1]["is_error"], true);
    assert_eq!(out[1]["error_code"], "call.malformed");
    assert_eq!(out[2]["is_error"], true);
    assert_eq!(out[3]["id"], "3");
    assert_eq!(out[3]["error_code"], "call.invalid_arguments");
    assert!(out[3]["output"].as_str().unwrap().contains("nope"));
    assert_eq!(out[4]["output"], "     2\tbeta\n");
}

#[test]
fn plain_mode_statuses_and_streams() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let ok = run_args(&env, bin!("ag-read"), &["a.txt"]);
    ok.ok();
    assert_eq!(ok.stdout(), "     1\tx\n");
    assert_eq!(ok.stderr(), "");

    let missing = run_args(&env, bin!("ag-read"), &["b.txt"]);
    missing.expect_code(1);
    assert_eq!(missing.stdout(), "");
    assert!(
        missing.stderr().starts_with("ag-read: error: "),
        "{missing}"
    );

    let usage = run_args(&env, bin!("ag-read"), &["a.txt", "--bogus"]);
    usage.expect_code(2);
    assert!(usage.stderr().contains("ag-read --help"), "{usage}");

    let as_json = run_args(&env, bin!("ag-read"), &["b.txt", "--json"]);
    as_json.expect_code(1);
    let result = as_json.json();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["error_code"], "read.not_found");

    let help = run_args(&env, bin!("ag-read"), &["--help"]);
    help.ok();
    assert!(help.stdout().contains("Usage: ag-read"));
    let version = run_args(&env, bin!("ag-read"), &["--version"]);
    version.ok();
}

#[test]
fn root_confines_paths() {
    let env = Env::new();
    env.write("inside/a.txt", "in\n");
    env.write("outside.txt", "out\n");
    std::os::unix::fs::symlink(env.join("outside.txt"), env.join("inside/link.txt")).unwrap();
    let mut c = env.cmd(bin!("ag-read"));
    c.args(["--root", "inside"]);
    let input = "{\"file_path\":\"inside/a.txt\"}\n{\"file_path\":\"outside.txt\"}\n{\"file_path\":\"inside/link.txt\"}\n";
    let r = run(c, Some(input.as_bytes()));
    r.ok();
    let out = r.json_lines();
    assert_eq!(out[0]["is_error"], false, "{r}");
    assert_eq!(out[1]["error_code"], "path.outside_root");
    assert_eq!(out[2]["error_code"], "path.outside_root");
}

#[test]
fn closed_stdout_is_a_quiet_exit() {
    let env = Env::new();
    let big: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    env.write("big.txt", big);
    let mut c = env.cmd("sh");
    c.args(["-c", &format!("{} big.txt | head -1", bin!("ag-read"))]);
    let r = run(c, None);
    r.ok();
    assert_eq!(r.stderr(), "");
}
