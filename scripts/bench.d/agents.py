"""The established agents beside ag-loop, on the same scripted task.

pi, Codex CLI and Claude Code are installed from the npm registry (into
target/bench/agents, kept between runs) and pointed at the same local model
server as ag-loop: pi through a models.json provider (Chat Completions),
Codex through a config.toml provider (the Responses API), Claude Code
through ANTHROPIC_BASE_URL (Anthropic Messages). The server reads the tools
each agent offers and renders every step of one generic task in that
agent's own tool names and arguments (a step whose tool the agent lacks
becomes a shell command). Requests that offer no tools (titles, summaries)
get a short answer and do not advance the script.

The task, eleven turns: four reads, a grep, two edits, a write, two shell
commands, and a final answer. Each agent runs it a few times; wall time,
CPU time (the process tree's, from wait4) and peak memory are medians.
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import modelserver
import task
from harness import Row, fmt_kib, fmt_s, median, run_once

PACKAGES = {
    "pi": "@mariozechner/pi-coding-agent",
    "codex": "@openai/codex",
    "claude": "@anthropic-ai/claude-code",
}


def steps(repo):
    r = str(repo)
    return [
        ("read", {"path": f"{r}/src/lib.rs"}),
        ("grep", {"pattern": "fn add", "path": r}),
        ("read", {"path": f"{r}/src/main.rs"}),
        ("edit", {"path": f"{r}/src/lib.rs", "old": "    a - b", "new": "    a + b"}),
        ("bash", {"command": f"grep -c 'a + b' {r}/src/lib.rs"}),
        ("read", {"path": f"{r}/README.md"}),
        ("edit", {"path": f"{r}/README.md", "old": "Adds and multiplies.", "new": "Adds and multiplies integers."}),
        ("write", {"path": f"{r}/notes.md", "content": "- add fixed\n- README says integers\n"}),
        ("bash", {"command": f"ls {r}/src"}),
        ("read", {"path": f"{r}/notes.md"}),
    ]


FINAL = "Fixed `add`, noted it in notes.md and said in the README that it works on integers."


def check_repo(repo):
    lib = (Path(repo) / "src" / "lib.rs").read_text()
    readme = (Path(repo) / "README.md").read_text()
    notes = Path(repo) / "notes.md"
    problems = []
    if "a + b" not in lib:
        problems.append("src/lib.rs not edited")
    if "integers" not in readme:
        problems.append("README.md not edited")
    if not notes.exists():
        problems.append("notes.md not written")
    return problems


# ------------------------------------------------ rendering a step as a tool call

NAMES = {
    "read": ["read", "Read", "read_file", "view"],
    "grep": ["grep", "Grep", "grep_search", "search"],
    "edit": ["edit", "Edit", "str_replace", "edit_file"],
    "write": ["write", "Write", "write_file", "create_file"],
    "bash": ["bash", "Bash", "shell", "exec_command", "shell_command", "local_shell"],
}


def _props(schema):
    return (schema or {}).get("properties") or {}


def _pick(props, *names):
    for n in names:
        if n in props:
            return n
    return None


def _shell_call(tools, command):
    for name in NAMES["bash"]:
        if name in tools:
            props = _props(tools[name])
            key = _pick(props, "command", "cmd")
            if key is None:
                continue
            if props[key].get("type") == "array":
                args = {key: ["bash", "-lc", command]}
            else:
                args = {key: command}
            if "description" in props:
                args["description"] = "benchmark step"
            return name, args
    return None


def _patch(kind, path, body):
    return f"*** Begin Patch\n*** {kind} File: {path}\n{body}*** End Patch\n"


def render(step, tools):
    """(tool name, arguments) for a step, given {name: parameters schema}."""
    action, a = step
    for name in NAMES[action]:
        if name not in tools:
            continue
        props = _props(tools[name])
        path = _pick(props, "file_path", "path", "filePath", "absolute_path", "target_file")
        if action == "read" and path:
            return name, {path: a["path"]}
        if action == "grep":
            pat = _pick(props, "pattern", "query", "regex")
            if pat:
                args = {pat: a["pattern"]}
                if path:
                    args[path] = a["path"]
                return name, args
        if action == "edit" and path:
            old = _pick(props, "old_string", "oldText", "old_str", "old")
            new = _pick(props, "new_string", "newText", "new_str", "new")
            if old and new:
                return name, {path: a["path"], old: a["old"], new: a["new"]}
            edits = _pick(props, "edits")
            if edits:
                return name, {path: a["path"], edits: [{"oldText": a["old"], "newText": a["new"]}]}
        if action == "write" and path and "content" in props:
            return name, {path: a["path"], "content": a["content"]}
        if action == "bash":
            call = _shell_call({name: tools[name]}, a["command"])
            if call:
                return call
    if action in ("edit", "write") and "apply_patch" in tools:
        if action == "edit":
            body = f"@@\n-{a['old']}\n+{a['new']}\n"
            text = _patch("Update", a["path"], body)
        else:
            text = _patch("Add", a["path"], "".join(f"+{line}\n" for line in a["content"].splitlines()))
        if tools["apply_patch"] == "custom":
            return "apply_patch", text
        return "apply_patch", {"input": text}
    # No such tool: the same step as a shell command.
    if action == "read":
        cmd = f"cat -n {a['path']}"
    elif action == "grep":
        cmd = f"grep -rn '{a['pattern']}' {a['path']}"
    elif action == "edit":
        cmd = f"python3 -c \"import sys;p=sys.argv[1];s=open(p).read();open(p,'w').write(s.replace(sys.argv[2],sys.argv[3],1))\" {a['path']} '{a['old']}' '{a['new']}'"
    elif action == "write":
        cmd = f"printf '%s' '{a['content']}' > {a['path']}"
    else:
        cmd = a["command"]
    return _shell_call(tools, cmd)


# ------------------------------------------------ the three wire protocols

# Characters of the system prompt and tool definitions in the first request
# of pi and Codex CLI on this task, measured earlier with this server the
# way `prompt_chars` measures ag-loop's; constants, so that the figure needs
# no npm install.
PROMPT_CHARS = {"pi": 8324, "codex": 38663}


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def prompt_chars(api, body):
    """Characters of the system prompt plus the tool definitions (as JSON)
    that one request carries, whatever the protocol."""
    if api == "chat":
        system = "".join(_text(m.get("content")) for m in body.get("messages") or [] if m.get("role") in ("system", "developer"))
    elif api == "responses":
        system = _text(body.get("instructions")) + "".join(
            _text(m.get("content")) for m in body.get("input") or [] if isinstance(m, dict) and m.get("role") in ("system", "developer")
        )
    else:
        system = _text(body.get("system"))
    tools = json.dumps(body.get("tools") or [], separators=(",", ":"), ensure_ascii=False)
    return len(system) + len(tools)


def tools_of(api, body):
    out = {}
    for t in body.get("tools") or []:
        if api == "chat":
            f = t.get("function") or {}
            out[f.get("name")] = f.get("parameters")
        elif api == "responses":
            if t.get("type") == "function":
                out[t.get("name")] = t.get("parameters")
            elif t.get("type") == "custom":
                out[t.get("name")] = "custom"
            elif t.get("type") == "local_shell":
                out["local_shell"] = {"properties": {"command": {"type": "array"}}}
        else:
            out[t.get("name")] = t.get("input_schema")
    return out


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def render_chat(text, call, n):
    if call is None:
        return modelserver.chat_sse({"text": text}, n)
    name, args = call
    return modelserver.chat_sse({"calls": [(name, args)]}, n)


def render_responses(text, call, n):
    rid = f"resp_{n}"
    out = [sse("response.created", {"type": "response.created", "response": {"id": rid}})]
    if call is None:
        item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}
        out.append(sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": dict(item, content=[])}))
        out.append(sse("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": f"msg_{n}", "delta": text}))
    else:
        name, args = call
        if isinstance(args, str):
            item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "name": name, "input": args}
        else:
            item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name, "arguments": json.dumps(args)}
        out.append(sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}))
    out.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}))
    usage = {"input_tokens": 1000 + n, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1020 + n}
    out.append(sse("response.completed", {"type": "response.completed", "response": {"id": rid, "status": "completed", "output": [item], "usage": usage}}))
    return b"".join(out)


def render_anthropic(text, call, n, model):
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "usage": {"input_tokens": 1000 + n, "output_tokens": 1}},
            },
        )
    ]
    if call is None:
        out.append(sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}))
        stop = "end_turn"
    else:
        name, args = call
        out.append(sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": f"toolu_{n:04d}", "name": name, "input": {}}}))
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}}))
        stop = "tool_use"
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class TaskServer:
    """Hands out the task's steps to whichever agent asks, in its protocol."""

    def __init__(self, repo):
        self.steps = steps(repo)
        self.next = 0
        self.model_requests = 0
        self.request_times = []
        self.unmapped = []
        self.shell_steps = []
        self.first_prompt = None
        self.server = modelserver.ModelServer(self.handle)

    def reset(self):
        self.next = 0
        self.model_requests = 0
        self.request_times = []
        self.unmapped = []
        self.shell_steps = []
        self.first_prompt = None
        self.server.reset()

    def handle(self, method, path, headers, raw, n):
        p = path.split("?")[0]
        if method == "GET":
            if p.endswith("/models"):
                return modelserver.Response(b'{"object":"list","data":[{"id":"scripted","object":"model"}],"models":[]}', 200, "application/json")
            return modelserver.Response(b"{}", 200, "application/json")
        if p.endswith("/count_tokens"):
            return modelserver.Response(b'{"input_tokens":1000}', 200, "application/json")
        if p.endswith("/chat/completions"):
            api = "chat"
        elif p.endswith("/responses"):
            api = "responses"
        elif p.endswith("/messages"):
            api = "anthropic"
        else:
            return modelserver.Response(b"{}", 200, "application/json")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        tools = tools_of(api, body)
        text, call = FINAL, None
        if tools:
            if self.first_prompt is None:
                self.first_prompt = prompt_chars(api, body)
            self.model_requests += 1
            self.request_times.append(time.perf_counter())
            if self.next < len(self.steps):
                call = render(self.steps[self.next], tools)
                action = self.steps[self.next][0]
                if call is not None and action != "bash" and call[0] in NAMES["bash"]:
                    self.shell_steps.append(action)
                if call is None:
                    self.unmapped.append(self.steps[self.next][0])
                    text = "I cannot do this step with the tools I have."
                self.next += 1
        else:
            text = "Benchmark task"
        if api == "chat":
            data = render_chat(text, call, n)
        elif api == "responses":
            data = render_responses(text, call, n)
        else:
            data = render_anthropic(text, call, n, body.get("model", "scripted"))
        return modelserver.Response(data)


# ------------------------------------------------ running each agent

PROMPT = "Fix the add function, note it in notes.md and say in the README that it works on integers."


def install(root, log):
    """npm install of the three packages; returns (bins, error)."""
    root = Path(root).resolve()
    bin_dir = root / "node_modules" / ".bin"
    want = {"pi": bin_dir / "pi", "codex": bin_dir / "codex", "claude": bin_dir / "claude"}
    if not all(p.exists() for p in want.values()):
        if shutil.which("npm") is None:
            return {}, "npm is not installed"
        log("installing pi, Codex CLI and Claude Code from npm (kept in target/bench/agents)")
        root.mkdir(parents=True, exist_ok=True)
        try:
            r = subprocess.run(
                ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES.values()],
                capture_output=True,
                text=True,
                timeout=900,
            )
        except subprocess.TimeoutExpired:
            return {k: v for k, v in want.items() if v.exists()}, "npm install did not finish in 15 minutes (no network to the npm registry?)"
        if r.returncode != 0:
            return {k: v for k, v in want.items() if v.exists()}, "npm install failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return {k: v for k, v in want.items() if v.exists()}, None


def agent_command(name, exe, url, home, repo, bin_dir):
    """argv and environment for one agent, configured for the server."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }
    home.mkdir(parents=True, exist_ok=True)
    if name.startswith("ag-loop"):
        # "ag-loop --no-checkpoints": the loop as it was measured before
        # checkpoints existed (2026-11-22).
        env["AG_HOME"] = str(home / ".ag")
        extra = name.split()[1:]
        return [str(bin_dir / "ag-loop"), "-m", "ollama/scripted", "--base-url", url + "/v1", "--json", *extra, PROMPT], env
    if name == "pi":
        cfg = home / ".pi" / "agent"
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "bench": {
                            "baseUrl": url + "/v1",
                            "api": "openai-completions",
                            "apiKey": "bench",
                            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                            "models": [{"id": "scripted"}],
                        }
                    }
                }
            )
        )
        return [str(exe), "--model", "bench/scripted", "--no-session", "--mode", "json", PROMPT], env
    if name == "codex":
        cfg = home / ".codex"
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "config.toml").write_text(
            'model = "scripted"\nmodel_provider = "bench"\n\n[model_providers.bench]\nname = "bench"\n'
            f'base_url = "{url}/v1"\nwire_api = "responses"\nenv_key = "BENCH_API_KEY"\n'
        )
        env["CODEX_HOME"] = str(cfg)
        env["BENCH_API_KEY"] = "bench"
        return [str(exe), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", PROMPT], env
    if name == "claude":
        env.update(
            ANTHROPIC_BASE_URL=url,
            ANTHROPIC_API_KEY="bench",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            IS_SANDBOX="1",
        )
        return [
            str(exe), "-p", "--model", "scripted", "--output-format", "stream-json", "--verbose",
            "--dangerously-skip-permissions", PROMPT,
        ], env
    raise ValueError(name)


def run_agent(name, exe, server, work, bin_dir, runs):
    results, problems = [], []
    for i in range(runs):
        repo = work / f"{name}-repo"
        shutil.rmtree(repo, ignore_errors=True)
        task.make_repo(repo)
        server.steps = steps(repo)
        server.reset()
        home = work / f"{name}-home"
        shutil.rmtree(home, ignore_errors=True)
        argv, env = agent_command(name, exe, server.server.base_url, home, repo, bin_dir)
        log = work / f"{name}.log"
        r = run_once(argv, env, cwd=repo, stdout=log, stderr=work / f"{name}.err", limit=180)
        bad = check_repo(repo)
        if r.status == 124:
            bad.append("timed out after 180 s")
        elif r.status != 0:
            bad.append(f"exited {r.status}")
        if server.next < len(server.steps):
            bad.append(f"stopped after {server.next} of {len(server.steps)} steps")
        if server.unmapped:
            bad.append("no tool for " + ", ".join(server.unmapped))
        gaps = [b - a for a, b in zip(server.request_times, server.request_times[1:])]
        results.append((r, server.model_requests, server.server.connections, gaps))
        if bad:
            problems = bad
            break
    return results, problems


def _summary(results):
    wall = median([r.wall for r, *_ in results])
    cpu = median([r.cpu for r, *_ in results])
    peak = max(r.rss for r, *_ in results)
    gaps = sorted(g for *_, gs in results for g in gs)
    reqs, conns = results[0][1], results[0][2]
    text = f"{fmt_s(wall)} wall, {fmt_s(cpu)} CPU, {fmt_kib(peak)} peak"
    detail = f"{reqs} requests over {conns} connection(s), {fmt_s(median(gaps))} between requests"
    return wall, text, detail


def prompt_size(suite):
    """What every request of ag-loop carries: the system prompt and tool
    definitions of its first request on the 11-turn task, beside pi's and
    Codex CLI's (constants, see PROMPT_CHARS). One run, no npm."""
    work = suite.tmp / "prompt"
    work.mkdir(parents=True, exist_ok=True)
    server = TaskServer(work)
    bin_dir = Path(suite.bin("ag-loop")).parent
    try:
        _, problems = run_agent("ag-loop", None, server, work, bin_dir, 1)
        chars = server.first_prompt
    finally:
        server.server.close()
    case = "11-turn task: first request, system prompt + tool definitions (characters)"
    if chars is None:
        return [Row.unavailable(case, "; ".join(problems) or "ag-loop sent no request with tools")]
    pi, codex = PROMPT_CHARS["pi"], PROMPT_CHARS["codex"]
    note = (
        "characters of the system prompt and the tool definitions (JSON) in the first request the scripted server "
        "received; pi's (7 tools) and Codex CLI's were measured the same way on this task earlier and are constants here"
    )
    return [Row(case, f"{chars:,} (12 tools)", f"pi: {pi:,}; Codex CLI: {codex:,}", chars / pi, f"< pi's {pi:,}", chars < pi, note)]


def compare_agents(suite):
    """ag-loop, then each established agent beside it: one row each."""
    work = suite.tmp / "agents"
    work.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parents[2] / "target" / "bench" / "agents"
    bins, err = install(root, suite.log)
    server = TaskServer(work)
    rows = []
    runs = suite.runs(3, 1)
    bin_dir = Path(suite.bin("ag-loop")).parent
    try:
        results, problems = run_agent("ag-loop", None, server, work, bin_dir, runs)
        if problems:
            return [Row("11-turn task: ag-loop", "could not finish", "—", None, "—", False, "; ".join(problems))]
        ag_wall, ag_text, ag_detail = _summary(results)
        rows.append(Row("11-turn task (4 reads, grep, 2 edits, write, 2 shell commands): ag-loop", ag_text, ag_detail, None, "—", None))
        bare, problems = run_agent("ag-loop --no-checkpoints", None, server, work, bin_dir, runs)
        if not problems:
            bare_wall, bare_text, bare_detail = _summary(bare)
            rows.append(
                Row(
                    "11-turn task: ag-loop --no-checkpoints (as measured before checkpoints existed)",
                    bare_text,
                    f"the default, checkpoints on: {fmt_s(ag_wall)}",
                    bare_wall / ag_wall,
                    "—",
                    None,
                    "the default takes a checkpoint (git) before each of the 5 turns that may change files and at the end, "
                    "the session's first one a look at the whole tree; the rows below compare the default",
                )
            )
        for name in ("pi", "codex", "claude"):
            label = {"pi": "pi", "codex": "Codex CLI", "claude": "Claude Code"}[name]
            case = f"11-turn task: ag-loop vs {label}"
            exe = bins.get(name)
            if exe is None:
                rows.append(Row.unavailable(case, err or f"{PACKAGES[name]} did not install"))
                continue
            results, problems = run_agent(name, exe, server, work, bin_dir, runs)
            if problems:
                errf = work / f"{name}.err"
                tail = errf.read_text(errors="replace").strip().splitlines() if errf.exists() else []
                rows.append(Row(case, "—", f"{label}: could not finish", None, "—", None, "; ".join(problems) + (": " + tail[-1][:200] if tail else "")))
                continue
            wall, text, detail = _summary(results)
            note = f"{label}: {detail}"
            if server.shell_steps:
                note += f"; it has no tool for {', '.join(sorted(set(server.shell_steps)))}, so those steps were shell commands"
            rows.append(Row(case, ag_text, f"{label}: {text}", ag_wall / wall, "—", None, note))
    finally:
        server.server.close()
    return rows
