//! ag-fanout --engine slurm on a real one-node Slurm cluster that each test
//! starts for itself: munged with its own key and socket, slurmctld and
//! slurmd with a generated slurm.conf in a temporary directory, on free
//! ports (proctrack/linuxproc and task/none: no systemd, no cgroups), all
//! stopped afterwards. The tasks run ag-loop against a scripted model
//! server. A missing Slurm or munge program is a failure (scripts/test
//! installs them); where the tests do not run as root (slurmd starts the
//! tasks as their user), each says "NOT RUN ... (not a pass)" on stderr,
//! and with `AG_REQUIRE_SLURM_TESTS` set that is a failure instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ag::proc::{Signal, signal_process};
use serde_json::{Value, json};

use crate::fanout::{PromptServer, fanout, models_json, repo, result_lines, results};
use crate::util::{Env, run, wait_for};

/// Set (to anything) to turn "NOT RUN" into a failure.
const REQUIRE_ENV: &str = "AG_REQUIRE_SLURM_TESTS";

/// A provider key the tasks need, which must appear in none of the run's
/// files.
const KEY: &str = "key-that-stays-in-the-environment";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn sbin(name: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("{name} is not installed: scripts/test-setup installs slurmctld, slurmd, munge and slurm-client")
        })
}

/// A one-node cluster of this test's own.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        Cluster::start_with("")
    }

    /// A cluster whose slurm.conf also has the lines `extra`.
    fn start_with(extra: &str) -> Option<Cluster> {
        if !nix::unistd::geteuid().is_root() {
            let line = "NOT RUN: Slurm end-to-end test of ag-fanout: slurmd must run as root to start tasks (not a pass)";
            assert!(
                std::env::var_os(REQUIRE_ENV).is_none(),
                "{line}; {REQUIRE_ENV} is set"
            );
            eprintln!("{line}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let p = |rel: &str| dir.path().join(rel);
        for d in ["munge", "spool", "state"] {
            std::fs::create_dir(p(d)).unwrap();
        }
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let p = |rel: &str| cluster.dir.path().join(rel);
        let st = Command::new(sbin("mungekey"))
            .arg("--create")
            .arg("--keyfile")
            .arg(p("munge/key"))
            .status()
            .unwrap();
        assert!(st.success(), "mungekey failed");
        let munged = Command::new(sbin("munged"))
            .args(["--foreground", "--force"])
            .arg(format!("--key-file={}", p("munge/key").display()))
            .arg(format!("--socket={}", p("munge/socket").display()))
            .arg(format!("--pid-file={}", p("munge/pid").display()))
            .arg(format!("--seed-file={}", p("munge/seed").display()))
            .arg(format!("--log-file={}", p("munge/log").display()))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        cluster.daemons.push(munged);
        wait_for("munged's socket", || p("munge/socket").exists());
        let (ctld_port, node_port) = (free_port(), free_port());
        let conf = format!(
            "ClusterName=ag\n\
             SlurmctldHost=localhost(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={node_port}\n\
             AuthType=auth/munge\n\
             AuthInfo=socket={sock}\n\
             CredType=cred/munge\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             StateSaveLocation={state}\n\
             SlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             SlurmdParameters=config_overrides\n\
             MpiDefault=none\n\
             ReturnToService=2\n\
             KillWait=2\n\
             MinJobAge=300\n\
             {extra}\
             NodeName=agnode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 State=UNKNOWN\n\
             PartitionName=main Nodes=agnode Default=YES MaxTime=INFINITE State=UP\n",
            sock = p("munge/socket").display(),
            state = p("state").display(),
            spool = p("spool").display(),
            d = cluster.dir.path().display(),
        );
        std::fs::write(p("slurm.conf"), conf).unwrap();
        let ctld = Command::new(sbin("slurmctld"))
            .args(["-D", "-i", "-f"])
            .arg(p("slurm.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        cluster.daemons.push(ctld);
        let node = Command::new(sbin("slurmd"))
            .args(["-D", "-N", "agnode", "-f"])
            .arg(p("slurm.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        cluster.daemons.push(node);
        let start = Instant::now();
        loop {
            let out = cluster
                .client("sinfo")
                .args(["-h", "-o", "%T"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the cluster did not come up: {}",
                std::fs::read_to_string(p("slurmctld.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(cluster)
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm client command of this cluster.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }

    /// ag-fanout on this cluster.
    fn fanout(&self, env: &Env, args: &[&str]) -> Command {
        let mut c = fanout(env, &[&["--engine", "slurm"], args].concat());
        c.env("SLURM_CONF", self.conf()).env("FAKE_KEY", KEY);
        c
    }

    /// The states of the cluster's jobs, by array task.
    fn states(&self) -> String {
        let out = self
            .client("squeue")
            .args(["-h", "-r", "--states=all", "-o", "%i %T"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The jobs first, so that no task outlives the cluster.
        let _ = self.client("scancel").args(["--user", "root"]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            let out = self
                .client("squeue")
                .args(["-h", "-t", "PENDING,RUNNING,COMPLETING,CONFIGURING"])
                .output();
            if out.is_ok_and(|o| o.stdout.is_empty()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for d in self.daemons.iter_mut().rev() {
            signal_process(d.id(), Signal::SIGTERM);
            let start = Instant::now();
            while d.try_wait().ok().flatten().is_none() {
                if start.elapsed() > Duration::from_secs(10) {
                    let _ = d.kill();
                    let _ = d.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// `n` tasks, each writing done.txt in its own repository; those in `slow`
/// wait at their first model call while the server is held.
fn tasks(env: &Env, n: usize, slow: &[usize]) {
    let mut text = String::new();
    for i in 1..=n {
        repo(env, &format!("r{i}"));
        let hold = if slow.contains(&i) { "slow " } else { "" };
        text += &json!({"id": format!("t{i}"), "dir": format!("r{i}"),
                        "prompt": format!("{hold}write done.txt task-{i}"), "model": "fake/m"})
        .to_string();
        text += "\n";
    }
    env.write("tasks.jsonl", text);
}

/// The result files in the work directory.
fn result_files(env: &Env) -> usize {
    std::fs::read_dir(env.join("tasks.jsonl.fanout/results"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

/// No file of the run holds the provider key.
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
    ids.sort_by_key(|id| id[1..].parse::<u32>().unwrap());
    ids
}

fn expected(range: impl Iterator<Item = usize>) -> Vec<String> {
    range.map(|i| format!("t{i}")).collect()
}

#[test]
fn slurm_runs_every_task_once_as_one_array_and_reports_a_timeout() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    // Twenty tasks that end at once, and one that waits at the model
    // (held for good) until Slurm ends it at its time limit.
    tasks(&env, 21, &[21]);
    server.set_held(true);
    let r = run(
        cluster.fanout(&env, &["-j", "6", "--time", "1", "tasks.jsonl"]),
        None,
    );
    r.expect_code(1);
    let (by_id, summary) = results(&r.stdout());
    assert_eq!(by_id.len(), 21, "{r}");
    for i in 1..=20 {
        let v = &by_id[&format!("t{i}")];
        assert_eq!(v["outcome"], "finished", "{v}");
        let diff = v["diff"].as_str().unwrap();
        assert!(
            diff.contains("+++ b/done.txt") && diff.contains(&format!("+task-{i}\n")),
            "{v}"
        );
        assert_eq!(
            std::fs::read_to_string(env.join(&format!("r{i}/done.txt"))).unwrap(),
            format!("task-{i}\n")
        );
    }
    let late = &by_id["t21"];
    assert_eq!(late["outcome"], "killed", "{late}");
    assert_eq!(late["engine_state"], "TIMEOUT", "{late}");
    assert!(
        late["error"].as_str().unwrap().contains("TIMEOUT"),
        "{late}"
    );
    let summary = summary.unwrap();
    assert_eq!(summary["tasks"], 21, "{summary}");
    assert_eq!(summary["outcomes"], json!({"finished": 20, "killed": 1}));
    // One array, and the key only ever in the environment.
    let jobs = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    assert_eq!(jobs.lines().count(), 1, "{jobs}");
    key_nowhere(&env.join("tasks.jsonl.fanout"));
    assert!(!r.stdout().contains(KEY));

    // A run again without --resume is refused, with the call that goes on.
    let again = run(cluster.fanout(&env, &["tasks.jsonl"]), None);
    again.expect_code(2);
    assert!(
        again.stderr().contains("--resume --engine slurm"),
        "{again}"
    );
    server.set_held(false);
}

#[test]
fn slurm_scancel_mid_run_keeps_the_finished_results_and_resume_runs_the_rest() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    tasks(&env, 10, &[6, 7, 8, 9, 10]);
    server.set_held(true);
    let first = env.join("first.jsonl");
    let mut c = cluster.fanout(&env, &["-j", "7", "tasks.jsonl"]);
    c.stdout(std::fs::File::create(&first).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for("5 results and 5 tasks at the model", || {
        result_files(&env) == 5 && server.waiting() == 5
    });
    let job = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    let st = cluster.client("scancel").arg(job.trim()).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    wait_for("the cancelled tasks to leave the model", || {
        server.waiting() == 0
    });
    let lines = result_lines(&first);
    assert_eq!(ids(&lines), expected(1..=10), "{stderr}");
    for v in &lines {
        let i: usize = v["id"].as_str().unwrap()[1..].parse().unwrap();
        if i <= 5 {
            assert_eq!(v["outcome"], "finished", "{v}");
        } else {
            assert_eq!(v["outcome"], "killed", "{v}");
            assert_eq!(v["engine_state"], "CANCELLED", "{v}");
        }
    }

    server.set_held(false);
    let r = run(cluster.fanout(&env, &["--resume", "tasks.jsonl"]), None);
    r.ok();
    let (by_id, summary) = results(&r.stdout());
    assert_eq!(summary.unwrap()["outcomes"], json!({"finished": 10}), "{r}");
    let before: Vec<&Value> = lines
        .iter()
        .filter(|v| v["outcome"] == "finished")
        .collect();
    for v in before {
        // The same line as before: the task did not run again.
        assert_eq!(&by_id[v["id"].as_str().unwrap()], v);
    }
    for i in 6..=10 {
        let v = &by_id[&format!("t{i}")];
        assert!(
            v["diff"].as_str().unwrap().contains(&format!("+task-{i}")),
            "{v}"
        );
    }
    // The second array held only the five.
    let jobs = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    let second = jobs.lines().nth(1).unwrap().to_string();
    let states = cluster.states();
    let mine: BTreeSet<&str> = states
        .lines()
        .filter(|l| l.starts_with(&format!("{second}_")))
        .collect();
    assert_eq!(mine.len(), 5, "{states}");
}

#[test]
fn slurm_kill_9_of_ag_fanout_loses_nothing_and_resume_collects_the_rest() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    tasks(&env, 8, &[5, 6, 7, 8]);
    server.set_held(true);
    let mut c = cluster.fanout(&env, &["tasks.jsonl"]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    wait_for("4 results and 4 tasks at the model", || {
        result_files(&env) == 4 && server.waiting() == 4
    });
    assert!(signal_process(child.id(), Signal::SIGKILL));
    child.wait().unwrap();
    // The array goes on without it; the resumed run follows it rather
    // than submitting the tasks again.
    let mut c = cluster.fanout(&env, &["--resume", "tasks.jsonl"]);
    let out_path = env.join("resumed.jsonl");
    c.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::piped());
    let resumed = c.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    server.set_held(false);
    let out = resumed.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}\n{}",
        std::fs::read_to_string(&out_path).unwrap()
    );
    let lines = result_lines(&out_path);
    assert_eq!(ids(&lines), expected(1..=8), "{stderr}");
    for v in &lines {
        assert_eq!(v["outcome"], "finished", "{v}");
    }
    let jobs = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    assert_eq!(jobs.lines().count(), 1, "nothing submitted again: {jobs}");
    for i in 1..=8 {
        assert_eq!(
            std::fs::read_to_string(env.join(&format!("r{i}/done.txt"))).unwrap(),
            format!("task-{i}\n")
        );
    }
}

#[test]
fn slurm_ctrl_c_of_ag_fanout_cancels_its_array_and_keeps_what_ended() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    tasks(&env, 4, &[3, 4]);
    server.set_held(true);
    let out_path = env.join("first.jsonl");
    let mut c = cluster.fanout(&env, &["tasks.jsonl"]);
    c.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_for("2 results and 2 tasks at the model", || {
        result_files(&env) == 2 && server.waiting() == 2
    });
    assert!(signal_process(child.id(), Signal::SIGINT));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let job = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    let job = job.trim();
    assert!(
        stderr.contains(&format!("interrupted; job arrays {job} cancelled")),
        "{stderr}"
    );
    // The array did not outlive the run that owned it.
    wait_for("the cancelled tasks to leave the model", || {
        server.waiting() == 0
    });
    wait_for("no task of the array to be left", || {
        !cluster.states().lines().any(|l| {
            l.starts_with(&format!("{job}_")) && (l.ends_with("RUNNING") || l.ends_with("PENDING"))
        })
    });
    // The two that ended were printed and counted; the summary closes the
    // output.
    let text = std::fs::read_to_string(&out_path).unwrap();
    let (by_id, summary) = results(&text);
    assert_eq!(by_id.len(), 2, "{text}");
    assert_eq!(
        summary.unwrap()["outcomes"],
        json!({"finished": 2}),
        "{text}"
    );
    server.set_held(false);
}

#[test]
fn slurm_splits_lines_past_max_array_size_into_several_arrays() {
    // Array indexes must stay below MaxArraySize: here 4, so lines 2-8 of
    // the tasks file (after a comment) go into three arrays.
    let Some(cluster) = Cluster::start_with("MaxArraySize=4\n") else {
        return;
    };
    let env = Env::new();
    let server = PromptServer::start();
    models_json(&env, &server);
    tasks(&env, 7, &[]);
    let text = std::fs::read_to_string(env.join("tasks.jsonl")).unwrap();
    env.write("tasks.jsonl", format!("# seven tasks\n{text}"));
    let r = run(cluster.fanout(&env, &["-j", "2", "tasks.jsonl"]), None);
    r.ok();
    let (by_id, summary) = results(&r.stdout());
    assert_eq!(summary.unwrap()["outcomes"], json!({"finished": 7}), "{r}");
    for i in 1..=7 {
        let v = &by_id[&format!("t{i}")];
        assert_eq!(v["line"], i + 1, "{v}");
        assert!(
            v["diff"].as_str().unwrap().contains(&format!("+task-{i}")),
            "{v}"
        );
    }
    let jobs = std::fs::read_to_string(env.join("tasks.jsonl.fanout/jobs")).unwrap();
    let bases: Vec<&str> = jobs
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap_or("0"))
        .collect();
    assert_eq!(bases, ["0", "3", "6"], "{jobs}");
}
