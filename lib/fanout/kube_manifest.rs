//! What the `kubernetes` engine gives the cluster: a ConfigMap with the
//! tasks file and an Indexed Job whose index I runs the I-th of the lines
//! it was made for (all the tasks, or on `--resume` only those without a
//! result), one pod each, never retried (`backoffLimitPerIndex: 0`): like
//! a Slurm array task, a pod that Kubernetes ends (its deadline, an
//! eviction) is reported with Kubernetes' reason, and `--resume` runs it
//! again. The provider keys go in a Secret of their own, made from the
//! environment and never written to disk.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::tasks_file::TasksFile;

/// Where the pod finds the tasks file (the ConfigMap's volume).
const TASKS_MOUNT: &str = "/tasks";
/// The key of the tasks file in the ConfigMap.
const TASKS_KEY: &str = "tasks.jsonl";
/// The pod's AG_HOME (an emptyDir: sessions go with the pod).
const AG_HOME: &str = "/var/ag";
/// The variable that maps the completion index to a line of the tasks
/// file: its words are the line numbers, the index picks one.
pub const LINES_VAR: &str = "AG_FANOUT_LINES";
/// The container's name, for `kubectl logs -c`.
pub const CONTAINER: &str = "fanout";
/// A ConfigMap holds at most 1 MiB; what is left for the tasks file.
const MAX_TASKS_BYTES: usize = 1024 * 1024 - 4096;

/// The pod's command: index → line, one task, its result line on stdout.
/// A task that ran, finished or not (ag-fanout's 0 or 1), ends the pod well:
/// its result line is out, and running it again would not change it.
const POD_SCRIPT: &str = r#"set -- $AG_FANOUT_LINES
shift "$JOB_COMPLETION_INDEX"
ag-fanout --task "$1" /tasks/tasks.jsonl
status=$?
if [ "$status" -le 1 ]; then exit 0; fi
exit "$status"
"#;

/// The choices of the caller that shape the Job.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The container image: the ag binaries (ag-fanout among them) and git.
    pub image: String,
    /// The namespace; kubectl's current one when absent.
    pub namespace: Option<String>,
    /// Pods at a time (`parallelism`); all at once when absent.
    pub parallelism: Option<u32>,
    /// Each pod's `activeDeadlineSeconds`.
    pub deadline_seconds: Option<u64>,
    /// CPUs per pod (requests and limits).
    pub cpus: Option<u32>,
    /// Memory per pod (requests and limits), a Kubernetes quantity.
    pub memory: Option<String>,
    /// Whether the pods take their environment from the Secret of the
    /// Job's name.
    pub secret: bool,
}

/// The labels of everything a run makes.
fn labels(name: &str) -> Value {
    json!({"app.kubernetes.io/managed-by": "ag-fanout", "ag-fanout/job": name})
}

fn metadata(name: &str, namespace: Option<&str>) -> Value {
    let mut m = json!({"name": name, "labels": labels(name)});
    if let Some(ns) = namespace {
        m["namespace"] = json!(ns);
    }
    m
}

/// The ConfigMap and the Job, as one `List`, for the lines `lines` of
/// `tasks`; index I runs the I-th of them.
pub fn manifest(
    tasks: &TasksFile,
    name: &str,
    lines: &BTreeSet<u64>,
    spec: &Spec,
) -> Result<Value, String> {
    let mut text = String::new();
    for (i, line) in tasks.lines.iter().enumerate() {
        let line = std::str::from_utf8(line).map_err(|_| {
            format!(
                "line {} of `{}` is not UTF-8, and a ConfigMap holds text",
                i + 1,
                tasks.path.display()
            )
        })?;
        text.push_str(line);
        text.push('\n');
    }
    if text.len() > MAX_TASKS_BYTES {
        return Err(format!(
            "`{}` is {} bytes, more than a ConfigMap holds (1 MiB): split it into several tasks files, each run with its own --work-dir",
            tasks.path.display(),
            text.len()
        ));
    }
    let ns = spec.namespace.as_deref();
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(name, ns),
        "data": {TASKS_KEY: text},
    });
    let count = lines.len() as u64;
    let words: Vec<String> = lines.iter().map(u64::to_string).collect();
    let mut container = json!({
        "name": CONTAINER,
        "image": spec.image,
        "command": ["sh", "-c", POD_SCRIPT],
        "env": [
            {"name": "AG_HOME", "value": AG_HOME},
            {"name": LINES_VAR, "value": words.join(" ")},
        ],
        "volumeMounts": [
            {"name": "tasks", "mountPath": TASKS_MOUNT, "readOnly": true},
            {"name": "ag-home", "mountPath": AG_HOME},
        ],
    });
    if spec.secret {
        container["envFrom"] = json!([{"secretRef": {"name": name}}]);
    }
    let mut resources: BTreeMap<&str, Value> = BTreeMap::new();
    if let Some(c) = spec.cpus {
        resources.insert("cpu", json!(c.to_string()));
    }
    if let Some(m) = &spec.memory {
        resources.insert("memory", json!(m));
    }
    if !resources.is_empty() {
        // Requests and limits alike: what a Slurm allocation means.
        container["resources"] = json!({"requests": resources, "limits": resources});
    }
    let mut pod = json!({
        "restartPolicy": "Never",
        "containers": [container],
        "volumes": [
            {"name": "tasks", "configMap": {"name": name}},
            {"name": "ag-home", "emptyDir": {}},
        ],
    });
    if let Some(s) = spec.deadline_seconds {
        pod["activeDeadlineSeconds"] = json!(s);
    }
    let parallelism = spec.parallelism.map_or(count, |p| u64::from(p).min(count));
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(name, ns),
        "spec": {
            "completionMode": "Indexed",
            "completions": count,
            "parallelism": parallelism,
            // One pod per task: a failed one fails its index alone, and
            // ag-fanout reports it; --resume runs it again.
            "backoffLimitPerIndex": 0,
            "template": {
                "metadata": {"labels": labels(name)},
                "spec": pod,
            },
        },
    });
    Ok(json!({"apiVersion": "v1", "kind": "List", "items": [config_map, job]}))
}

/// The Secret of the provider keys: `keys` are (name, value). Only ever
/// sent to kubectl on stdin.
pub fn secret(name: &str, namespace: Option<&str>, keys: &[(String, String)]) -> Value {
    let data: serde_json::Map<String, Value> = keys
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(name, namespace),
        "type": "Opaque",
        "stringData": data,
    })
}

/// Seconds of a time limit in Slurm's forms: `MINUTES`, `MINUTES:SECONDS`,
/// `HOURS:MINUTES:SECONDS`, `DAYS-HOURS`, `DAYS-HOURS:MINUTES`,
/// `DAYS-HOURS:MINUTES:SECONDS`.
pub fn seconds(time: &str) -> Option<u64> {
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (days, rest) = match time.split_once('-') {
        Some((d, r)) => (Some(num(d)?), r),
        None => (None, time),
    };
    let parts: Vec<u64> = rest.split(':').map(num).collect::<Option<_>>()?;
    let secs = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86400 + h * 3600,
        (Some(d), [h, m]) => d * 86400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86400 + h * 3600 + m * 60 + s,
        _ => return None,
    };
    (secs > 0).then_some(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_in_slurms_forms_become_seconds() {
        for (text, secs) in [
            ("30", Some(1800)),
            ("0:05", Some(5)),
            ("2:00:00", Some(7200)),
            ("1-0", Some(86400)),
            ("1-2:03", Some(93780)),
            ("1-0:0:1", Some(86401)),
            ("0", None),
            ("", None),
            ("1h", None),
            ("1:2:3:4", None),
            ("-5", None),
        ] {
            assert_eq!(seconds(text), secs, "{text}");
        }
    }

    #[test]
    fn index_i_runs_the_ith_line_asked_for() {
        let tasks = TasksFile {
            path: "/t/tasks.jsonl".into(),
            lines: vec![b"{}".to_vec(), b"# note".to_vec(), b"{}".to_vec()],
        };
        let m = manifest(
            &tasks,
            "ag-fanout-x",
            &BTreeSet::from([1, 3]),
            &Spec {
                image: "img".into(),
                parallelism: Some(8),
                ..Spec::default()
            },
        )
        .unwrap();
        let job = &m["items"][1];
        assert_eq!(job["spec"]["completions"], 2);
        assert_eq!(job["spec"]["parallelism"], 2);
        let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env[1], json!({"name": LINES_VAR, "value": "1 3"}));
        assert_eq!(m["items"][0]["data"][TASKS_KEY], "{}\n# note\n{}\n");
    }
}
