"""ag-fanout at scale on Slurm: 1,000 tasks as one job array on a one-node
cluster of the bench's own (slurm_cluster.py), each task one ag-loop session
against a scripted model (write a file, then answer), all 1,000 result lines
checked; then what ag-fanout adds to each task beyond ag-loop's own run:
`ag-fanout --task N` (read the line, snapshot the directory, run ag-loop,
take the diff, write the result whole) against the same ag-loop call alone,
alternating, in the same repository. Needs root (slurmd starts the tasks)
and Slurm's packages; opt-in: `scripts/bench --only fanout`."""

import json
import shutil
import subprocess
import time

import modelserver
import slurm_cluster
from harness import Row, compare, fmt_s, median, run_once

TASKS = 1000


def _handler():
    """Any session: the first call writes done.txt, the one after the tool
    result answers."""

    def handle(method, path, headers, body, n):
        if method != "POST" or not path.endswith("/chat/completions"):
            return modelserver.Response(b'{"error":{"message":"not found"}}', 404, "application/json")
        if b'"role":"tool"' in body:
            return modelserver.Response(modelserver.chat_sse({"text": "done"}, n))
        return modelserver.Response(modelserver.chat_sse({"calls": [("write", {"file_path": "done.txt", "content": "done\n"})]}, n))

    return handle


def _repo(path):
    path.mkdir(parents=True)
    (path / "README.md").write_text("# r\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@e"]
    subprocess.run(git + ["init", "-q"], cwd=path, check=True)
    subprocess.run(git + ["add", "."], cwd=path, check=True)
    subprocess.run(git + ["commit", "-qm", "start"], cwd=path, check=True)


def _reset(path):
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=path, check=True)
    subprocess.run(["git", "clean", "-fdq"], cwd=path, check=True)


def measure(suite):
    case = f"ag-fanout --engine slurm: {TASKS:,} tasks on a one-node cluster"
    why = slurm_cluster.missing()
    if why:
        return [Row.unavailable(case, why)]
    rows = []
    root = suite.tmp / "fanout"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    server = modelserver.ModelServer(_handler())
    base = server.base_url + "/v1"
    model_args = ["--base-url", base, "--max-turns", "4"]
    try:
        # One repository, copied: 1,000 git init would measure git.
        _repo(root / "template")
        lines = []
        for i in range(1, TASKS + 1):
            shutil.copytree(root / "template", root / f"r{i}", symlinks=True)
            lines.append(json.dumps({"id": f"t{i}", "dir": f"r{i}", "prompt": "write done.txt", "model": "ollama/scripted", "args": model_args}))
        (root / "tasks.jsonl").write_text("\n".join(lines) + "\n")

        # What ag-fanout adds to one task: --task N against ag-loop alone.
        _repo(root / "solo")
        (root / "solo.jsonl").write_text(json.dumps({"id": "solo", "dir": "solo", "prompt": "write done.txt", "model": "ollama/scripted", "args": model_args}) + "\n")
        runs = suite.runs(20, 6)
        a = [suite.bin("ag-fanout"), "--task", "1", str(root / "solo.jsonl")]
        b = [suite.bin("ag-loop"), "-m", "ollama/scripted", *model_args, "--json", "write done.txt"]
        ra, rb = compare(a, b, runs, env=suite.env, cwd=root / "solo", prepare=lambda: _reset(root / "solo"))
        ta, tb = median([r.wall for r in ra]), median([r.wall for r in rb])
        bad = [r.status for r in ra + rb if r.status not in (0,)]
        per = ta - tb
        rows.append(
            Row(
                "ag-fanout --task: overhead per task beyond ag-loop's own run",
                f"{fmt_s(per)} ({fmt_s(ta)} a task)",
                f"the same ag-loop call alone: {fmt_s(tb)}",
                ta / tb if tb else None,
                "< 50 ms",
                per < 0.05 and not bad,
                (f"exit statuses {bad[:3]}; " if bad else "")
                + "reading the line, the session, the snapshot before and the diff after (git), the result written whole",
            )
        )

        with slurm_cluster.SlurmCluster(cpus=8) as cluster:
            env = cluster.env(suite.env)
            out = root / "results.jsonl"
            err = root / "stderr.txt"
            argv = [suite.bin("ag-fanout"), "--engine", "slurm", "-j", "8", str(root / "tasks.jsonl")]
            start = time.perf_counter()
            r = run_once(argv, env, cwd=root, stdout=out, stderr=err, limit=3600)
            wall = time.perf_counter() - start
        results = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
        done = [x for x in results if x.get("type") == "result"]
        finished = sum(1 for x in done if x.get("outcome") == "finished")
        ids = {x["id"] for x in done}
        diffs = sum(1 for x in done if "+done" in (x.get("diff") or ""))
        problems = []
        if r.status != 0:
            problems.append(f"ag-fanout exited {r.status}: {err.read_text()[-300:]!r}")
        if len(done) != TASKS or len(ids) != TASKS:
            problems.append(f"{len(done)} result lines for {len(ids)} ids")
        if finished != TASKS or diffs != TASKS:
            problems.append(f"{finished} finished, {diffs} with the diff")
        rows.append(
            Row(
                case,
                f"{fmt_s(wall)} in all, {fmt_s(wall / TASKS)} a task ({finished:,}/{TASKS:,} finished with their diff)",
                "—",
                None,
                f"all {TASKS:,} results",
                not problems,
                "; ".join(problems)
                or f"-j 8 on 8 Slurm CPUs of a 2-core machine; ag-fanout following the array used {fmt_s(r.cpu)} CPU in all "
                f"({fmt_s(r.cpu / TASKS)} a task, its squeue calls included); Slurm's own scheduling is in the wall time",
            )
        )
    finally:
        server.close()
    return rows
