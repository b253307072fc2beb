//! examples/k8s/fanout-job.yaml: the Kubernetes indexed Job that runs
//! ag-fanout's tasks one per index, checked field by field and, where
//! kubectl is installed, as kubectl reads it.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::fanout::root;
use crate::util::{Env, run};

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
        command[2]
            .contains(r#"ag-fanout --task "$((JOB_COMPLETION_INDEX + 1))" /tasks/tasks.jsonl"#),
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
    // else (ag-fanout itself failing) is an error for the Job to retry.
    for (status, expect) in [(0, 0), (1, 0), (2, 2), (137, 137)] {
        let script = command[2].replace(
            "ag-fanout --task",
            &format!("ag_fanout() {{ return {status}; }}; ag_fanout --task"),
        );
        let mut c = env.cmd("sh");
        c.args(["-c", &script]).env("JOB_COMPLETION_INDEX", "0");
        run(c, None).expect_code(expect);
    }
}
