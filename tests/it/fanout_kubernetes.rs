//! ag-fanout --engine kubernetes against a stand-in cluster
//! (tests/fixtures/fake-kube/fake_kube.py): a `kubectl` on PATH that answers
//! as kubectl does, and a node that runs each pod's command on this machine,
//! the real ag-fanout --task and ag-loop against a scripted model server.
//! The manifests ag-fanout writes are checked against the Kubernetes API's
//! schemas (tests/fixtures/kubernetes-schema). No real cluster runs here:
//! the end-to-end run on one is NOT RUN.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use ag::proc::{Signal, signal_process};
use serde_json::{Value, json};

use crate::bin;
use crate::fanout::{PromptServer, fanout, models_json, repo, result_lines, results, root};
use crate::util::{Env, run, wait_for};

/// The provider key, which must reach the pods through the Secret alone.
const KEY: &str = "key-that-goes-in-a-secret";

/// The stand-in cluster: its state directory, its node, and a bin
/// directory with its `kubectl`.
struct Cluster {
    state: PathBuf,
    bin: PathBuf,
    node: Child,
}

impl Cluster {
    fn start(env: &Env) -> Cluster {
        let script = root().join("tests/fixtures/fake-kube/fake_kube.py");
        let state = env.join("cluster");
        let bin = env.join("cluster-bin");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let kubectl = bin.join("kubectl");
        std::fs::write(
            &kubectl,
            format!(
                "#!/bin/sh\nexec python3 {} kubectl {} \"$@\"\n",
                script.display(),
                state.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The node's PATH: the built ag binaries, as in the image.
        let node = Command::new("python3")
            .arg(&script)
            .arg("node")
            .arg(&state)
            .env("PATH", path_with(bins()))
            .env("FAKE_KUBE_SEED", env.join(".home/.ag"))
            .env_remove("FAKE_KEY")
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the stand-in cluster (scripts/test-setup installs it)");
        Cluster { state, bin, node }
    }

    /// ag-fanout --engine kubernetes with this cluster's kubectl first on
    /// PATH and the key in its environment.
    fn fanout(&self, env: &Env, args: &[&str]) -> Command {
        let mut c = fanout(
            env,
            &[
                &[
                    "--engine",
                    "kubernetes",
                    "--image",
                    "registry.example/ag:1",
                    "--secret-env",
                    "FAKE_KEY",
                ],
                args,
            ]
            .concat(),
        );
        let path = format!(
            "{}:{}",
            self.bin.display(),
            path_with(bins()).to_string_lossy()
        );
        c.env("PATH", path).env("FAKE_KEY", KEY);
        c
    }

    /// Every kubectl call so far, as its arguments.
    fn calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.state.join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The objects of a kind in the cluster now.
    fn objects(&self, kind: &str) -> Vec<String> {
        let mut names = Vec::new();
        let base = self.state.join("objects").join(kind);
        for ns in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(ns.path()).unwrap().flatten() {
                names.push(f.file_name().to_string_lossy().replace(".json", ""));
            }
        }
        names
    }

    /// The pods in the cluster now that ended with success.
    fn pods_succeeded(&self) -> usize {
        let base = self.state.join("objects/Pod");
        let mut n = 0;
        for ns in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(ns.path()).unwrap().flatten() {
                let pod: Value = std::fs::read_to_string(f.path())
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default();
                n += usize::from(pod["status"]["phase"] == "Succeeded");
            }
        }
        n
    }

    /// Orders the node to evict the pod running line `n`.
    fn evict(&self, n: u64) {
        std::fs::write(self.state.join(format!("control/evict-{n}")), "").unwrap();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The node ends the pods still running, then itself.
        let _ = std::fs::write(self.state.join("stop"), "");
        let start = std::time::Instant::now();
        while self.node.try_wait().ok().flatten().is_none() {
            if start.elapsed().as_secs() > 20 {
                let _ = self.node.kill();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.node.wait();
    }
}

fn bins() -> PathBuf {
    Path::new(bin!("ag-loop")).parent().unwrap().to_path_buf()
}

fn path_with(dir: PathBuf) -> std::ffi::OsString {
    let mut p = std::ffi::OsString::from(dir);
    p.push(":");
    p.push(std::env::var_os("PATH").unwrap_or_default());
    p
}

/// `n` tasks, each cloning its own repository (a pod has no checkout)
/// and writing done.txt; those in `slow` wait at the model while it is held.
fn tasks(env: &Env, n: usize, slow: &[usize]) {
    let mut text = String::from("# tasks for the stand-in cluster\n");
    for i in 1..=n {
        let r = repo(env, &format!("r{i}"));
        let hold = if slow.contains(&i) { "slow " } else { "" };
        text += &json!({"id": format!("t{i}"), "repo": r.to_string_lossy(),
                        "prompt": format!("{hold}write done.txt task-{i}"), "model": "fake/m"})
        .to_string();
        text += "\n";
    }
    env.write("tasks.jsonl", text);
}

/// A validator for one of the vendored Kubernetes schemas.
fn schema(name: &str) -> jsonschema::Validator {
    let path = root().join(format!("tests/fixtures/kubernetes-schema/{name}.json"));
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .unwrap()
}

fn valid(validator: &jsonschema::Validator, object: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(object)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{object:#}");
}

/// The manifests ag-fanout wrote into its work directory: each a List of
/// a ConfigMap and a Job, both valid by the API's schemas, the Job an
/// Indexed one. They are returned by Job name.
fn manifests(work: &Path) -> Vec<(String, Value)> {
    let (job_schema, cm_schema) = (schema("job-batch-v1"), schema("configmap-v1"));
    let mut out = Vec::new();
    for e in std::fs::read_dir(work).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(job_name) = name.strip_suffix(".json") else {
            continue;
        };
        let m: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        assert_eq!(m["kind"], "List");
        let (cm, job) = (&m["items"][0], &m["items"][1]);
        assert_eq!(cm["kind"], "ConfigMap");
        valid(&cm_schema, cm);
        assert_eq!(job["kind"], "Job");
        valid(&job_schema, job);
        assert_eq!(job["metadata"]["name"], job_name);
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        assert_eq!(job["spec"]["backoffLimitPerIndex"], 0);
        out.push((job_name.to_string(), m));
    }
    out.sort_by_key(|(_, m)| m["items"][1]["spec"]["completions"].as_u64());
    out
}

/// No file under `dir` holds the key.
fn key_nowhere(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            key_nowhere(&path);
        } else {
            let text = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&text).contains(KEY),
                "the key is in {}",
                path.display()
            );
        }
    }
}

fn ids(lines: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = lines
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn kubernetes_runs_the_tasks_as_one_indexed_job_and_reports_a_deadline_and_an_eviction() {
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    let cluster = Cluster::start(&env);
    // Four tasks that end at once; t5 waits at the model past its pod's
    // deadline, and t6 until its pod is evicted.
    tasks(&env, 6, &[5, 6]);
    server.set_held(true);
    let mut c = cluster.fanout(
        &env,
        &[
            "-j",
            "6",
            "--time",
            "0:08",
            "--namespace",
            "agents",
            "--cpus-per-task",
            "2",
            "--mem",
            "1Gi",
            "tasks.jsonl",
        ],
    );
    let out_path = env.join("first.jsonl");
    c.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for("t5 and t6 at the model", || server.waiting() == 2);
    cluster.evict(7); // t6 is on line 7, after the comment
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let text = std::fs::read_to_string(&out_path).unwrap();
    let (by_id, summary) = results(&text);
    assert_eq!(by_id.len(), 6, "{stderr}\n{text}");
    for i in 1..=4 {
        let v = &by_id[&format!("t{i}")];
        assert_eq!(v["outcome"], "finished", "{v}");
        let diff = v["diff"].as_str().unwrap();
        assert!(
            diff.contains("+++ b/done.txt") && diff.contains(&format!("+task-{i}\n")),
            "{v}"
        );
        assert_eq!(v["line"], i + 1);
    }
    let late = &by_id["t5"];
    assert_eq!(late["outcome"], "killed", "{late}");
    assert_eq!(late["engine_state"], "DeadlineExceeded", "{late}");
    assert!(
        late["error"]
            .as_str()
            .unwrap()
            .contains("longer than the specified deadline"),
        "{late}"
    );
    let evicted = &by_id["t6"];
    assert_eq!(evicted["outcome"], "killed", "{evicted}");
    assert_eq!(evicted["engine_state"], "Evicted", "{evicted}");
    assert!(
        evicted["error"]
            .as_str()
            .unwrap()
            .contains("low on resource"),
        "{evicted}"
    );
    assert_eq!(
        summary.unwrap()["outcomes"],
        json!({"finished": 4, "killed": 2})
    );

    // What was made: one Job of six indexes, in the namespace asked for,
    // with the resources, the deadline and the key's Secret.
    let work = env.join("tasks.jsonl.fanout");
    let made = manifests(&work);
    assert_eq!(made.len(), 1);
    let (name, m) = &made[0];
    let job = &m["items"][1];
    assert_eq!(job["metadata"]["namespace"], "agents");
    assert_eq!(job["spec"]["completions"], 6);
    assert_eq!(job["spec"]["parallelism"], 6);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["activeDeadlineSeconds"], 8);
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "registry.example/ag:1");
    assert_eq!(
        container["resources"],
        json!({"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}})
    );
    assert_eq!(container["envFrom"], json!([{"secretRef": {"name": name}}]));
    // The key went to kubectl on stdin only, and is in no file of the run
    // nor in any result.
    let calls = cluster.calls();
    for call in &calls {
        assert!(!call.join(" ").contains(KEY), "{call:?}");
        assert_eq!(call[..2], ["--namespace", "agents"], "{call:?}");
    }
    assert!(
        calls
            .iter()
            .any(|c| c[2..] == ["create", "-f", "-", "-o", "name"]),
        "{calls:?}"
    );
    key_nowhere(&work);
    assert!(!text.contains(KEY));
    // Nothing of the run is left in the cluster.
    for kind in ["Job", "ConfigMap", "Secret", "Pod"] {
        assert_eq!(cluster.objects(kind), Vec::<String>::new(), "{kind}");
    }

    // --resume makes a Job of only the two tasks without a result.
    server.set_held(false);
    let r = run(
        cluster.fanout(&env, &["--resume", "--namespace", "agents", "tasks.jsonl"]),
        None,
    );
    r.ok();
    let (again, summary) = results(&r.stdout());
    assert_eq!(summary.unwrap()["outcomes"], json!({"finished": 6}), "{r}");
    for i in 1..=4 {
        let id = format!("t{i}");
        assert_eq!(again[&id], by_id[&id], "{id} ran again");
    }
    for i in [5, 6] {
        let v = &again[&format!("t{i}")];
        assert!(
            v["diff"].as_str().unwrap().contains(&format!("+task-{i}")),
            "{v}"
        );
    }
    let made = manifests(&work);
    assert_eq!(made.len(), 2);
    let second = &made[0].1["items"][1];
    assert_eq!(second["spec"]["completions"], 2);
    assert_eq!(
        second["spec"]["template"]["spec"]["containers"][0]["env"][1],
        json!({"name": "AG_FANOUT_LINES", "value": "6 7"})
    );
    // The end of the run deletes what it made, both Jobs' objects.
    let last = cluster.calls().pop().unwrap();
    assert_eq!(last[2], "delete", "{last:?}");
    for (name, _) in &made {
        assert!(last.contains(&format!("secret/{name}")), "{last:?}");
    }
}

#[test]
fn kubernetes_kill_9_then_resume_collects_what_ended_and_ctrl_c_deletes_the_job() {
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    let cluster = Cluster::start(&env);
    tasks(&env, 4, &[3, 4]);
    server.set_held(true);
    let mut c = cluster.fanout(&env, &["-j", "2", "tasks.jsonl"]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let results_dir = env.join("tasks.jsonl.fanout/results");
    let count = || {
        std::fs::read_dir(&results_dir)
            .map(|d| d.count())
            .unwrap_or(0)
    };
    // Two at a time: t1 and t2 end, then t3 and t4 wait at the model.
    wait_for("2 results and 2 tasks at the model", || {
        count() == 2 && server.waiting() == 2
    });
    assert!(signal_process(child.id(), Signal::SIGKILL));
    child.wait().unwrap();
    // The Job goes on without ag-fanout and ends.
    server.set_held(false);
    wait_for("the Job to end", || {
        std::fs::read_dir(cluster.state.join("objects/Job/default"))
            .unwrap()
            .flatten()
            .any(|f| {
                std::fs::read_to_string(f.path())
                    .unwrap()
                    .contains("\"Complete\"")
            })
    });
    let r = run(cluster.fanout(&env, &["--resume", "tasks.jsonl"]), None);
    r.ok();
    let lines: Vec<Value> = r
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["type"] == "result")
        .collect();
    assert_eq!(ids(&lines), ["t1", "t2", "t3", "t4"], "{r}");
    for v in &lines {
        assert_eq!(v["outcome"], "finished", "{v}");
    }
    // Collected from the ended Job's pods, not run again.
    let creates = cluster
        .calls()
        .iter()
        .filter(|c| c[0] == "create" && c[2] != "-")
        .count();
    assert_eq!(creates, 1, "{:?}", cluster.calls());
    // Its entries are named on failure: once, under load, there were five.
    let entries: Vec<String> = std::fs::read_dir(&results_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(count(), 4, "{entries:?}");
    assert_eq!(cluster.objects("Job"), Vec::<String>::new());

    // Ctrl-C of another run deletes its Job, whose pods end with it.
    server.set_held(true);
    let mut c = cluster.fanout(&env, &["--work-dir", "second", "tasks.jsonl"]);
    let out_path = env.join("second.jsonl");
    c.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for("t3 and t4 at the model", || server.waiting() == 2);
    wait_for("t1 and t2 printed", || result_lines(&out_path).len() == 2);
    assert!(signal_process(child.id(), Signal::SIGINT));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    wait_for("the pods to leave the model", || server.waiting() == 0);
    for kind in ["Job", "ConfigMap", "Secret", "Pod"] {
        assert_eq!(cluster.objects(kind), Vec::<String>::new(), "{kind}");
    }
    let last = cluster.calls().pop().unwrap();
    assert_eq!(last[0], "delete", "{last:?}");
    assert!(
        last.iter().any(|a| a.starts_with("job/ag-fanout-")),
        "{last:?}"
    );

    // Ctrl-C after t3 and t4 ended, before ag-fanout looked again (it is
    // stopped meanwhile): their results are read before the Job goes with
    // its pods' logs, so the interrupted run lost no work.
    let mut c = cluster.fanout(&env, &["--work-dir", "third", "tasks.jsonl"]);
    let out_path = env.join("third.jsonl");
    c.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for("t3 and t4 at the model", || server.waiting() == 2);
    wait_for("t1 and t2 printed", || result_lines(&out_path).len() == 2);
    assert!(signal_process(child.id(), Signal::SIGSTOP));
    server.set_held(false);
    wait_for("all four pods to end", || cluster.pods_succeeded() == 4);
    assert!(signal_process(child.id(), Signal::SIGINT));
    assert!(signal_process(child.id(), Signal::SIGCONT));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let lines = result_lines(&out_path);
    assert_eq!(ids(&lines), ["t1", "t2", "t3", "t4"], "{stderr}");
    assert_eq!(
        std::fs::read_dir(env.join("third/results"))
            .unwrap()
            .count(),
        4
    );
    assert_eq!(cluster.objects("Job"), Vec::<String>::new());
}

#[test]
fn kubernetes_refuses_a_missing_image_or_key_before_making_anything() {
    let env = Env::new();
    let cluster = Cluster::start(&env);
    tasks(&env, 1, &[]);
    let mut c = fanout(&env, &["--engine", "kubernetes", "tasks.jsonl"]);
    c.env("PATH", path_with(cluster.bin.clone()));
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("--image IMAGE"), "{r}");
    let mut c = cluster.fanout(&env, &["--secret-env", "NOT_SET_ANYWHERE", "tasks.jsonl"]);
    c.env_remove("NOT_SET_ANYWHERE");
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("`NOT_SET_ANYWHERE` is not set"), "{r}");
    let r = run(
        cluster.fanout(&env, &["--partition", "gpu", "tasks.jsonl"]),
        None,
    );
    r.expect_code(2);
    assert!(
        r.stderr()
            .contains("--partition is an option of the slurm engine"),
        "{r}"
    );
    assert_eq!(cluster.calls(), Vec::<Vec<String>>::new());
}
