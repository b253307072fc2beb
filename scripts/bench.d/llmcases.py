"""ag-llm and ag-loop against the scripted model server.

- Event latency: the server sends one SSE event, waits until the matching
  line appears on the client's stdout, and only then sends the next; the
  time between is how long the client held the event. Reference: `curl -N`.
- CPU on a long stream: the server sends a long answer as fast as it can;
  the client's CPU time, scaled to a 10 MB/s stream, is the share of one
  core it would use. Reference: `curl` reading the same stream.
- ag-loop: a 50-turn scripted session (one tool call a turn) against the
  reference, which makes the same 50 requests over one keep-alive
  connection and runs the same 49 tool calls (the tool binary, the call on
  its stdin) one after the other, with nothing in between.
"""

import http.client
import json
import os
import subprocess
import threading
import time

import modelserver
import task
from harness import Row, fmt_kib, fmt_s, median, run_once


# ------------------------------------------------------------------ ag-llm


def _latency_handler(count, sent, seen):
    """A stream of `count` text deltas, each sent after the previous one
    was seen on the client's stdout."""

    def handle(method, path, headers, body, n):
        def chunks():
            yield modelserver.chat_chunk({"role": "assistant", "content": ""})
            for i in range(count):
                sent[i] = time.perf_counter()
                yield modelserver.chat_chunk({"content": f"<{i}> "})
                if not seen[i].wait(5):
                    break
            yield modelserver.chat_chunk({}, "stop") + b"data: [DONE]\n\n"

        return modelserver.Response(chunks=chunks())

    return handle


def _measure_latency(argv, count, parse, env):
    sent = [0.0] * count
    got = [0.0] * count
    seen = [threading.Event() for _ in range(count)]
    server = modelserver.ModelServer(_latency_handler(count, sent, seen))
    try:
        argv = [a.replace("{URL}", server.base_url) for a in argv]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        buf = b""
        while True:
            data = p.stdout.read1(65536) if hasattr(p.stdout, "read1") else os.read(p.stdout.fileno(), 65536)
            if not data:
                break
            now = time.perf_counter()
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                i = parse(line)
                if i is not None and 0 <= i < count and not seen[i].is_set():
                    got[i] = now
                    seen[i].set()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    finally:
        server.close()
    lat = sorted(g - s for g, s in zip(got, sent) if g and s)
    return lat


def _index_in(text):
    if text.startswith("<"):
        end = text.find(">")
        if end > 0 and text[1:end].isdigit():
            return int(text[1:end])
    return None


def _parse_ag(line):
    try:
        ev = json.loads(line)
    except ValueError:
        return None
    if ev.get("type") == "text_delta":
        return _index_in(ev.get("delta", ""))
    return None


def _parse_curl(line):
    if not line.startswith(b"data: {"):
        return None
    try:
        ev = json.loads(line[6:])
        return _index_in(ev["choices"][0]["delta"].get("content", ""))
    except (ValueError, KeyError, IndexError):
        return None


def llm_latency(suite, have_curl):
    count = 300 if suite.quick else 2000
    ag = [suite.bin("ag-llm"), "-m", "ollama/scripted", "--base-url", "{URL}/v1", "--json", "hello"]
    lat = _measure_latency(ag, count, _parse_ag, suite.env)
    if len(lat) < count * 0.99:
        return [Row("ag-llm event latency", "broken", "—", None, "< 1 ms", False, f"only {len(lat)} of {count} events seen on stdout")]
    ref_text, ref = "curl -N: not available", None
    if have_curl:
        body = json.dumps({"model": "scripted", "stream": True, "messages": [{"role": "user", "content": "hello"}]})
        curl = ["curl", "-sN", "-H", "content-type: application/json", "-d", body, "{URL}/v1/chat/completions"]
        ref = _measure_latency(curl, count, _parse_curl, suite.env)
        ref_text = f"curl -N: {fmt_s(median(ref))} (p99 {fmt_s(ref[int(len(ref) * 0.99)])})" if ref else "curl -N: no events"
    m, p99 = median(lat), lat[int(len(lat) * 0.99)]
    ratio = m / median(ref) if ref else None
    return [
        Row(
            f"ag-llm event latency, bytes in to line out ({count} events)",
            f"{fmt_s(m)} (p99 {fmt_s(p99)})",
            ref_text,
            ratio,
            "< 1 ms",
            m < 1e-3,
            "median, measured from the server's write to the line read on the pipe: includes loopback TCP, the pipe and the reader",
        )
    ]


def _long_stream(total):
    words = ["alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta "]
    out = [modelserver.chat_chunk({"role": "assistant", "content": ""})]
    size, i = 0, 0
    while size < total:
        c = modelserver.chat_chunk({"content": words[i % 8]})
        out.append(c)
        size += len(c)
        i += 1
    out.append(modelserver.chat_chunk({}, "stop"))
    out.append(b'data: {"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d}}\n\ndata: [DONE]\n\n' % i)
    return b"".join(out), i


def llm_cpu(suite, have_curl):
    """CPU per MB of stream, with start-up taken out: the same call on a
    stream of one event is the baseline."""
    total = 5_000_000 if suite.quick else 20_000_000
    body, events = _long_stream(total)
    tiny, _ = _long_stream(1)
    mb = len(body) / 1e6

    def handle(method, path, headers, req, n):
        return modelserver.Response(tiny if "tiny" in path else body)

    server = modelserver.ModelServer(handle)
    runs = suite.runs(5, 3)
    try:

        def ag(base):
            return [suite.bin("ag-llm"), "-m", "ollama/scripted", "--base-url", server.base_url + base, "--json", "hello"]

        def curl(base):
            return [
                "curl", "-s", "-H", "content-type: application/json", "-d",
                '{"model":"scripted","stream":true,"messages":[]}', server.base_url + base + "/chat/completions",
            ]

        ra, ra0, rb, rb0 = [], [], [], []
        for i in range(runs):
            ra.append(run_once(ag("/v1"), suite.env, limit=120))
            ra0.append(run_once(ag("/tiny/v1"), suite.env, limit=120))
            if have_curl:
                rb.append(run_once(curl("/v1"), suite.env, limit=120))
                rb0.append(run_once(curl("/tiny/v1"), suite.env, limit=120))
    finally:
        server.close()
    cpu = median([r.cpu for r in ra]) - median([r.cpu for r in ra0])
    share = cpu / (mb / 10) * 100
    bad = [r.status for r in ra + ra0 if r.status != 0]
    ref, ratio = "curl: not available", None
    if rb:
        ref_cpu = median([r.cpu for r in rb]) - median([r.cpu for r in rb0])
        ref = f"curl: {fmt_s(ref_cpu)} CPU, {ref_cpu / (mb / 10) * 100:.1f}%"
        ratio = cpu / ref_cpu if ref_cpu > 0 else None
    return [
        Row(
            f"ag-llm CPU on a {mb:.0f} MB stream ({events} events), as a share of one core at 10 MB/s",
            f"{share:.1f}% ({fmt_s(cpu)} CPU; {fmt_kib(max(r.rss for r in ra))} peak)",
            ref,
            ratio,
            "< 5%",
            share < 5 and not bad,
            "CPU time (user + system) of the long stream minus that of a one-event stream (start-up), "
            "over the stream's duration at 10 MB/s; every event is written to stdout as JSONL"
            + (f"; ag-llm exited {bad[0]}" if bad else ""),
        )
    ]


# ------------------------------------------------------------------ ag-loop

TOOL_BIN = {"read": "ag-read", "grep": "ag-grep", "edit": "ag-edit", "ls": "ag-ls", "find": "ag-find", "bash": "ag-bash", "write": "ag-write"}


def _reference(suite, turns, repo, port):
    """The floor: the same requests over one keep-alive connection and the
    same tool calls (the binary, the call on a pipe to its stdin, the result
    read from a pipe, as ag-loop does), back to back."""
    calls = []
    for turn in turns:
        calls.append([(suite.bin(TOOL_BIN[name]), (json.dumps({"id": f"c{i}", "arguments": args}) + "\n").encode()) for i, (name, args) in enumerate(turn.get("calls", []))])
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for turn_calls in calls:
        conn.request("POST", "/v1/chat/completions", body=b'{"model":"scripted","stream":true,"messages":[]}', headers={"content-type": "application/json"})
        conn.getresponse().read()
        for program, line in turn_calls:
            subprocess.run([program], input=line, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=repo, env=suite.env)
    conn.close()
    return time.perf_counter() - start


# Makes ag-loop take every checkpoint through git processes, as before
# they were taken in-process (core/checkpoint/mod.rs, WITH_GIT_ENV).
WITH_GIT = "AG_CHECKPOINT_WITH_GIT"


def loop_turns(suite):
    """The loop's own overhead per turn, then what the per-turn checkpoint
    adds to the same session. The overhead rows run with
    --no-checkpoints: they measure the loop (as on 2026-11-22, before
    checkpoints existed), and the checkpoint has a row of its own, paired
    with the session without checkpoints, spread over the checkpoints it
    took."""
    n = 50
    turns = task.loop_turns(n)
    repo = suite.tmp / "loop-repo"
    task.make_repo(repo)
    out = suite.tmp / "loop-events.jsonl"
    rows = []
    server = modelserver.ModelServer(modelserver.scripted_chat(turns))
    runs = suite.runs(5, 2)

    def ag_loop(extra, extra_env=None):
        argv = [suite.bin("ag-loop"), "-m", "ollama/scripted", "--base-url", server.base_url + "/v1", "--json", *extra, "work through the repository"]
        task.reset_repo(repo)
        server.reset()
        r = run_once(argv, dict(suite.env, **(extra_env or {})), cwd=repo, stdout=out, limit=300)
        events = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        return r, events

    def problems_of(results):
        problems = []
        bad = [r.status for r, _ in results if r.status != 0]
        if bad:
            problems.append(f"ag-loop exited {bad[0]}")
        for _, events in results:
            ends = [e for e in events if e.get("type") == "tool_execution_end"]
            ok = sum(1 for e in ends if not e.get("is_error") and not (e.get("result") or {}).get("is_error"))
            if ok != n - 1:
                first = next((e for e in ends if e.get("is_error") or (e.get("result") or {}).get("is_error")), {})
                problems.append(f"{ok} of {n - 1} tool calls succeeded (first failure: {str(first.get('output', ''))[:160]!r})")
                break
        return problems

    try:
        for label, extra in [("", ["--no-checkpoints"]), (" --no-gate", ["--no-gate", "--no-checkpoints"])]:
            ag, ref, conns = [], [], []
            for i in range(runs + 1):
                for which in (("ag", "ref") if i % 2 == 0 else ("ref", "ag")):
                    if which == "ag":
                        result = ag_loop(extra)
                        if i > 0:
                            ag.append(result)
                            conns.append(server.connections)
                    else:
                        task.reset_repo(repo)
                        server.reset()
                        w = _reference(suite, turns, repo, server.port)
                        if i > 0:
                            ref.append(w)
            problems = problems_of(ag)
            ta, tr = median([r.wall for r, _ in ag]), median(ref)
            if not label:
                reference = tr
            per = (ta - tr) / n
            rows.append(
                Row(
                    f"ag-loop{label} --no-checkpoints: overhead per turn beyond model and tools ({n}-turn session)",
                    f"{fmt_s(per)} ({fmt_s(ta)} in all, {fmt_s(median([r.cpu for r, _ in ag]))} CPU)",
                    f"same requests and tool runs back to back: {fmt_s(tr)}",
                    ta / tr,
                    "< 5 ms",
                    per < 5e-3 and not problems,
                    "; ".join(problems) or "start-up (loading the tool schemas) is spread over the turns"
                    + ("; each call also goes through the default gate (ag-gate's policy, in-process)" if not label else ""),
                )
            )
            if not label:
                peak = max(r.rss for r, _ in ag)
                rows.append(Row(f"ag-loop: peak memory, {n}-turn session", fmt_kib(peak), "—", None, "< 30.0 MiB", peak < 30 * 1024, "maxrss of ag-loop (includes its tool children's if larger)"))
                c = max(conns)
                rows.append(Row(f"ag-loop: connections opened, {n}-turn session", str(c), "—", None, "1", c == 1))
        # The default: a checkpoint before each turn whose tools may change
        # files, paired with the same session without them.
        on, by_git, off = [], [], []
        order = ("on", "git", "off")
        for i in range(runs + 1):
            for which in (order if i % 2 == 0 else tuple(reversed(order))):
                if which == "on":
                    result = ag_loop([])
                elif which == "git":
                    result = ag_loop([], {WITH_GIT: "1"})
                else:
                    result = ag_loop(["--no-checkpoints"])
                if i > 0:
                    {"on": on, "git": by_git, "off": off}[which].append(result)
        problems = problems_of(on + by_git + off)
        taken = [sum(1 for e in events if e.get("type") == "checkpoint") for _, events in on]
        if not taken or min(taken) == 0:
            problems.append("no checkpoint event in the default session")
        count = max(min(taken or [1]), 1)
        t_on, t_off = median([r.wall for r, _ in on]), median([r.wall for r, _ in off])
        t_git = median([r.wall for r, _ in by_git])
        per_cp, per_git = (t_on - t_off) / count, (t_git - t_off) / count
        trouble = "; ".join(problems)
        rows.append(
            Row(
                f"ag-loop: checkpoint per turn, small repository ({count} of {n} turns): in-process (the default)",
                f"{fmt_s(per_cp)} per checkpoint ({fmt_s((t_on - t_off) / n)} per turn; {fmt_s(t_on)} in all)",
                f"git processes ({WITH_GIT}=1): {fmt_s(per_git)} per checkpoint",
                per_cp / per_git if per_git > 0 else None,
                "< 2 ms",
                per_cp < 2e-3 and not problems,
                trouble
                or "a checkpoint before each turn whose tools may change files, and one at the end; after the session's first "
                "(a whole look through git), the watched names are hashed and the trees, commit and ref written in ag-loop; "
                f"--no-checkpoints: {fmt_s(t_off)}",
            )
        )
        rows.append(
            Row(
                f"ag-loop: checkpoint per turn, small repository ({count} of {n} turns): git processes, as before ({WITH_GIT}=1)",
                f"{fmt_s(per_git)} per checkpoint ({fmt_s(t_git)} in all)",
                f"--no-checkpoints: {fmt_s(t_off)}",
                t_git / t_off,
                "< 50 ms",
                per_git < 50e-3 and not problems,
                trouble
                or "six git processes when files changed (status of the watched names, update-index, write-tree, "
                "commit-tree, update-ref, diff-tree), two when none did",
            )
        )
        gap = (t_on - reference) / n
        rows.append(
            Row(
                f"ag-loop: overhead per turn beyond model and tools, checkpoints on (the default, {n}-turn session)",
                f"{fmt_s(gap)} ({fmt_s(t_on)} in all)",
                f"same requests and tool runs back to back: {fmt_s(reference)}",
                t_on / reference,
                "< 5 ms",
                gap < 5e-3 and not problems,
                trouble or "the gap between two model requests that ag-loop adds, its checkpoints and gate included",
            )
        )
    finally:
        server.close()
    return rows


def chat_only(turns):
    """scripted_chat counting chat requests only: ag-loop's other requests
    to the server (the ollama provider asks about the model first) take
    no turn."""
    inner = modelserver.scripted_chat(turns)
    seen = {"n": 0}

    def handle(method, path, headers, body, n):
        if method != "POST" or not path.endswith("/chat/completions"):
            return inner(method, path, headers, body, len(turns))
        i = seen["n"]
        seen["n"] += 1
        return inner(method, path, headers, body, i)

    handle.reset = lambda: seen.update(n=0)
    return handle


def alternating_sessions(suite, turns, variants, cwd, env, runs, expect):
    """Runs one ag-loop session per variant ({name: extra arguments, or
    (extra arguments, extra environment)}),
    alternating which goes first, `runs` times after a warm-up round, on a
    scripted server playing `turns`. `expect(name, events)` returns what
    looks wrong about a run, or None. Returns ({name: [wall times]},
    [problems])."""
    out = suite.tmp / "alternating-events.jsonl"
    handler = chat_only(turns)
    server = modelserver.ModelServer(handler)
    names = list(variants)
    times = {name: [] for name in names}
    problems = []
    try:
        for i in range(runs + 1):
            for name in names if i % 2 == 0 else list(reversed(names)):
                server.reset()
                handler.reset()
                extra, extra_env = variants[name] if isinstance(variants[name], tuple) else (variants[name], {})
                argv = [suite.bin("ag-loop"), "-m", "ollama/scripted", "--base-url", server.base_url + "/v1", "--json", *extra, "go"]
                r = run_once(argv, dict(env, **extra_env), cwd=cwd, stdout=out, limit=300)
                events = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
                wrong = f"exit {r.status}" if r.status != 0 else expect(name, events)
                if wrong:
                    problems.append(f"{name}: {wrong}")
                if i > 0:
                    times[name].append(r.wall)
    finally:
        server.close()
    return times, problems


def loop_sandbox_per_call(suite):
    """What confinement adds to each tool call under ag-loop, which builds
    the ruleset once per session: a session of `n` bash calls of `true`
    with `--sandbox require` against the same with `--sandbox off`, the
    difference spread over the calls (the hooks guard, the confined
    spawn, ag-bash reading its policy and looking for strays)."""
    n = 40
    # Distinct commands: ag-loop stops a model that repeats one call.
    turns = [{"calls": [("bash", {"command": f"true {i}"})]} for i in range(n)]
    turns.append({"text": "done"})
    work = suite.tmp / "loop-sandbox"
    work.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)

    def expect(name, events):
        ok = sum(1 for e in events if e.get("type") == "tool_execution_end" and not e.get("is_error"))
        return None if ok == n else f"{ok} of {n} calls succeeded"

    base = ["--no-session", "--tools", "bash", "--sandbox"]
    times, problems = alternating_sessions(suite, turns, {"require": base + ["require"], "off": base + ["off"]}, work, suite.env, suite.runs(9, 3), expect)
    ta, tb = median(times["require"]), median(times["off"])
    per = (ta - tb) / n
    return [
        Row(
            f"ag-loop --sandbox require: confinement cost per tool call ({n} bash calls)",
            f"{fmt_s(per)} per call ({fmt_s(ta)} in all)",
            f"--sandbox off: {fmt_s(tb)}",
            ta / tb,
            "≤ +1.0 ms",
            per <= 1e-3 and not problems,
            "; ".join(sorted(set(problems))) or "the ruleset is built once per session; each call pays the confined spawn, the hooks guard and ag-bash's checks",
        )
    ]


def loop_checkpoint_per_turn(suite, repo, env):
    """What a checkpoint costs ag-loop per turn in a repository of 10,000
    files: a session of `n` turns, each a bash call that changes one file,
    with checkpoints against the same with `--no-checkpoints`, the
    difference spread over the turns. ag-loop watches the tree, so after
    the session's first checkpoint (a whole look, included here) git is
    asked only about the changed file."""
    n = 30
    turns = [{"calls": [("bash", {"command": f"echo 'change {i}' >> d1/e1/f1.rs"})]} for i in range(n)]
    turns.append({"text": "done"})

    def expect(name, events):
        checkpoints = sum(1 for e in events if e.get("type") == "checkpoint")
        errors = [e.get("message", "") for e in events if e.get("type") == "error"]
        want = 0 if name == "off" else n + 1
        return None if checkpoints == want and not errors else f"{checkpoints} of {want} checkpoints {errors[:1]}"

    base = ["--tools", "bash", "--no-gate"]
    variants = {"on": base, "git": (base, {WITH_GIT: "1"}), "off": base + ["--no-checkpoints"]}
    times, problems = alternating_sessions(suite, turns, variants, repo, env, suite.runs(7, 3), expect)
    ta, tg, tb = median(times["on"]), median(times["git"]), median(times["off"])
    per, per_git = (ta - tb) / n, (tg - tb) / n
    trouble = "; ".join(sorted(set(problems)))
    return [
        Row(
            f"ag-loop: checkpoint per turn, 10,000 files, one changed ({n}-turn session): in-process",
            f"{fmt_s(per)} per turn ({fmt_s(ta)} in all)",
            f"git processes ({WITH_GIT}=1): {fmt_s(per_git)} per turn",
            per / per_git if per_git > 0 else None,
            "< 15 ms",
            per < 0.015 and not problems,
            trouble
            or "inotify watches on the tree's directories; the changed file hashed and written, the trees above it, the commit "
            "and the ref, all in ag-loop (gix-odb); the session's first checkpoint (a whole look through git, over 10,000 files) "
            f"included; --no-checkpoints: {fmt_s(tb)}",
        ),
        Row(
            f"ag-loop: checkpoint per turn, 10,000 files, one changed ({n}-turn session): git processes, as before ({WITH_GIT}=1)",
            f"{fmt_s(per_git)} per turn ({fmt_s(tg)} in all)",
            f"--no-checkpoints: {fmt_s(tb)}",
            tg / tb,
            "< 50 ms",
            per_git < 0.050 and not problems,
            trouble
            or "git status about the changed names only, update-index, write-tree, commit-tree, update-ref, diff-tree; "
            "the session's first checkpoint (a whole look) included",
        ),
    ]
