"""The agents scripts/realmodel runs: how each is installed, started on one
task, and read. Each agent's log is read into the same measurements:

- turns: model calls;
- calls: tool calls the model made, refused ones included (mini-swe-agent's
  closing `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, its way of ending,
  is not counted);
- refused: calls that never ran (an unknown tool, arguments the agent would
  not take);
- failed: calls that ran and failed (for a shell command, a non-zero exit);
- tokens in (cache reads included) and out;
- answer: the text of the agent's last message that had any;
- stopped: why the run ended, when not by the agent finishing.

The docstring of scripts/realmodel says how each agent is invoked.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent

# The agents by kind; `ag:SET` is ag with a tool set, and `+FLAG=VALUE`
# after either adds an ag-loop flag (`ag+first-call=auto`), so that one
# mechanism can be measured against its absence.
KINDS = ("ag", "pi", "opencode", "mini-swe-agent", "mini-swe-agent-1")

# The peers kept off the network, and those whose log is a trajectory file
# rather than JSON lines. `mini-swe-agent-1` is its last 1.x release, as the
# issue's own measure ran it (see MINI_1).
OFFLINE = ("opencode", "mini-swe-agent", "mini-swe-agent-1")
TRAJECTORY = ("mini-swe-agent", "mini-swe-agent-1")

# mini-swe-agent's last release before 2.0. 2.0 changed two things a weak
# model feels: the command's fence is ```mswea_bash_command (1.x: ```bash),
# and an answer refused for its format is left out of the conversation (1.x
# keeps it, then the error), so the model next sees the error after its own
# request and, on this model, answers with a copy of the error, whose example
# block runs `<action>` in the shell, to the end of the run.
MINI_1 = "mini-swe-agent==1.17.5"

# A call refused before it ran: the tool is unknown or the arguments were
# not taken. ag's texts (lib/agent/run/runner.rs, lib/tool_protocol/args_check.rs,
# lib/tools/offer.rs, ag-bash's usage errors), pi's (pi-ai's
# validateToolArguments, pi-agent-core's unknown tool), OpenCode's (its
# tool wrapper's ToolInvalidArgumentsError, the AI SDK's InvalidToolInputError,
# its registry's unknown tool; a call it could not parse at all goes to its
# `invalid` tool, counted by name) and mini-swe-agent's format errors for a
# call it would not take.
REFUSED = re.compile(
    r"^(There is no tool named|The arguments for `|this call's fields make it|this call gave `command`"
    r"|`stop: true` was given without|nothing to do: give|Validation failed for tool|Tool \S+ not found"
    r"|The \S+ tool was called with invalid arguments|Invalid input for tool|Unknown tool:"
    r"|The arguments provided to the tool are invalid"
    r"|Error parsing tool call arguments|Unknown tool '|Missing 'command' argument)"
)

# What the runner does when mini-swe-agent's bash ran the command that ends
# its run: the command's output is never recorded.
NOT_EXECUTED = "action was not executed"


def kind(agent):
    return "ag" if agent == "ag" or agent.startswith(("ag:", "ag+")) else agent


def new_stats():
    return {"calls": 0, "refused": 0, "failed": 0, "tokens_in": 0, "tokens_out": 0, "turns": 0,
            "stopped": "", "refusals": [], "answer": ""}


def log(msg):
    print(f"realmodel: {msg}", file=sys.stderr, flush=True)


# --- installing ----------------------------------------------------------------


def npm_install(work, package, path):
    if path.exists():
        return path
    log(f"installing {package} from npm into {work}")
    subprocess.run(["npm", "install", "--prefix", str(work), "--no-audit", "--no-fund", "--loglevel=error", package],
                   check=True)
    if not path.exists():
        sys.exit(f"realmodel: npm installed {package} into {work}, but there is no {path}")
    return path


def ensure_mini(path, requirement="mini-swe-agent"):
    """mini-swe-agent in a venv of its own: `path` is its bin/mini."""
    if path.exists():
        return path
    venv = path.parent.parent
    log(f"installing {requirement} from PyPI into {venv}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", requirement],
                   check=True)
    return path


def ensure(agent, args):
    k = kind(agent)
    if k == "pi":
        args.pi = npm_install(args.work, "@mariozechner/pi-coding-agent", args.pi)
    elif k == "opencode":
        args.opencode = npm_install(args.work, "opencode-ai", args.opencode)
    elif k == "mini-swe-agent":
        args.mini = ensure_mini(args.mini)
    elif k == "mini-swe-agent-1":
        args.mini1 = ensure_mini(args.mini1, MINI_1)


def version(agent, args):
    """The agent's version, as its package says (empty when unknown)."""
    k = kind(agent)
    try:
        if k == "ag":
            r = subprocess.run([str(args.bin_dir / "ag-loop"), "--version"], capture_output=True, text=True, timeout=20)
            return r.stdout.strip().split()[-1] if r.returncode == 0 and r.stdout.strip() else ""
        if k == "pi":
            p = args.work / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
            return json.loads(p.read_text())["version"]
        if k == "opencode":
            return json.loads((args.work / "node_modules" / "opencode-ai" / "package.json").read_text())["version"]
        if k in TRAJECTORY:
            py = (args.mini if k == "mini-swe-agent" else args.mini1).parent / "python"
            r = subprocess.run([str(py), "-c", "import importlib.metadata as m; print(m.version('mini-swe-agent'))"],
                               capture_output=True, text=True, timeout=20)
            return r.stdout.strip()
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        pass
    return ""


# --- no network but the model server -------------------------------------------


def isolation():
    """How the peers are kept off the network: the `unshare` command line
    that gives them a network namespace of their own, or None when this
    machine allows none."""
    for argv in (["unshare", "--user", "--map-root-user", "--net"], ["unshare", "--net"]):
        try:
            if subprocess.run(argv + ["true"], capture_output=True, timeout=20).returncode == 0:
                return argv
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def server_address(base_url):
    u = urlsplit(base_url)
    return u.hostname or "127.0.0.1", u.port or (443 if u.scheme == "https" else 80)


def inside_url(base_url):
    """The base URL as the isolated agent reaches it: the same port on its own
    loopback."""
    u = urlsplit(base_url)
    _, port = server_address(base_url)
    return urlunsplit((u.scheme, f"127.0.0.1:{port}", u.path, u.query, u.fragment))


def offline(argv, unshare, sock, base_url, env):
    """`argv` run with no network but the model server (see offline.py); when
    the machine has no namespaces to give, proxy variables that point
    nowhere, which keep off what honours them, and no more."""
    if unshare:
        _, port = server_address(base_url)
        return unshare + [sys.executable, str(HERE / "offline.py"), str(sock), str(port), "--"] + argv
    host, _ = server_address(base_url)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env[name] = "http://127.0.0.1:9"
    env["NO_PROXY"] = env["no_proxy"] = f"{host},127.0.0.1,localhost"
    return argv


# --- command lines ---------------------------------------------------------------


def command(agent, args, model, window, where, prompt, unshare, sock):
    """argv and environment for one run of `agent` in `where`/project."""
    home = where / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    k = kind(agent)
    if k == "pi":
        cfg = home / ".pi" / "agent"
        cfg.mkdir(parents=True, exist_ok=True)
        entry = {"id": model}
        if window:
            entry["contextWindow"] = window
        (cfg / "models.json").write_text(json.dumps({"providers": {"local": {
            "baseUrl": args.base_url,
            "api": "openai-completions",
            "apiKey": "local",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [entry],
        }}}))
        env["PI_CODING_AGENT_DIR"] = str(cfg)
        return [str(args.pi), "--model", f"local/{model}", "--no-session", "--mode", "json", prompt], env
    if k == "opencode":
        cfg = home / ".config" / "opencode"
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"local": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "local",
                "options": {"baseURL": inside_url(args.base_url) if unshare else args.base_url},
                # OpenCode keeps limit.output free out of the window, and
                # takes 32,000 for a model without one: with a window of
                # 32,768 it would compact the conversation after every call.
                "models": {model: {"name": model, "tool_call": True,
                                   "limit": {"context": window or 0, "output": 4096}}},
            }},
            "model": f"local/{model}",
            "enabled_providers": ["local"],
            "autoupdate": False,
            "share": "disabled",
        }, indent=1))
        env.update({
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_SHARE": "1",
        })
        # --title: a session with a title of its own is not given one by the
        # model (another call to it, not part of the task).
        argv = [str(args.opencode), "run", "--format", "json", "--auto", "--pure", "--title", "realmodel",
                "--model", f"local/{model}", prompt]
        return offline(argv, unshare, sock, args.base_url, env), env
    if k == "mini-swe-agent":
        env.update({
            "MSWEA_CONFIGURED": "true",  # no first-run questions
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm's own copy, not a download
        })
        base = inside_url(args.base_url) if unshare else args.base_url
        argv = [str(args.mini), "--yolo", "--exit-immediately", "--model", f"openai/{model}",
                # Its text-based set-up: the command in a fenced block of
                # the answer, as the model writes it. Its tool-calling one
                # (mini.yaml) depends on the server parsing the model's
                # calls, which llama.cpp does not for this model's output
                # (every reply there was a format error).
                "-c", "mini_textbased.yaml",
                "-c", "model.model_class=litellm_textbased",
                "-c", f"model.model_kwargs.api_base={base}",
                "-c", "model.model_kwargs.api_key=local",
                "-c", "model.cost_tracking=ignore_errors",
                "-c", f"agent.step_limit={args.max_turns}",
                "--output", str(where / "trajectory.json"),
                "--task", prompt]
        return offline(argv, unshare, sock, args.base_url, env), env
    if k == "mini-swe-agent-1":
        env.update({"MSWEA_CONFIGURED": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        # 1.x takes one config file and no overrides: its own mini.yaml
        # with the same four settings as above, written by its own Python
        # (which has PyYAML).
        config = where / "mini.yaml"
        subprocess.run([str(args.mini1.parent / "python"), "-c", MINI_1_CONFIG, str(config),
                        inside_url(args.base_url) if unshare else args.base_url, str(args.max_turns)],
                       env=env, stdout=subprocess.DEVNULL, check=True)
        argv = [str(args.mini1), "--yolo", "--exit-immediately", "--model", f"openai/{model}",
                "-c", str(config), "--output", str(where / "trajectory.json"), "--task", prompt]
        return offline(argv, unshare, sock, args.base_url, env), env
    env["AG_HOME"] = str(home / ".ag")
    argv = [str(args.bin_dir / "ag-loop"), "-m", f"llamacpp/{model}", "--base-url", args.base_url,
            "--max-turns", str(args.max_turns), "--json", "--no-gate", "--no-session"]
    name, *flags = agent.split("+")
    if ":" in name:
        # --agents is a comma-separated list, so a list of tool names
        # separates its names with `;` (`ag:read;edit;bash`).
        argv += ["--tools", name.split(":", 1)[1].replace(";", ",")]
    for f in flags:
        flag, _, value = f.partition("=")
        argv += [f"--{flag}"] + ([value] if value else [])
    return argv + [prompt], env


# mini-swe-agent 1.x's own mini.yaml, with the server, a placeholder key, no
# cost tracking and the turn limit: argv is the file to write, the base URL
# and the limit.
MINI_1_CONFIG = """
import sys, yaml
from minisweagent.config import builtin_config_dir
config = yaml.safe_load((builtin_config_dir / "mini.yaml").read_text())
model = config.setdefault("model", {})
model.setdefault("model_kwargs", {}).update(api_base=sys.argv[2], api_key="local")
model["cost_tracking"] = "ignore_errors"
config.setdefault("agent", {})["step_limit"] = int(sys.argv[3])
open(sys.argv[1], "w").write(yaml.safe_dump(config))
"""


# --- reading the logs --------------------------------------------------------------


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, dict) and b.get("type", "text") == "text")
    return ""


def note(stats, text, tool):
    text = (text or "").strip()
    if REFUSED.match(text):
        stats["refused"] += 1
        stats["refusals"].append(f"{tool}: {text.splitlines()[0][:160]}")
    else:
        stats["failed"] += 1


def answer(stats, text):
    if text and text.strip():
        stats["answer"] = text.strip()


def count(agent, e, stats):
    """Adds one event of a JSON-lines log (ag, pi, OpenCode) to `stats`."""
    kind_ = kind(agent)
    t = e.get("type")
    if kind_ == "pi":
        if t == "turn_end":
            stats["turns"] += 1
        elif t == "tool_execution_end":
            stats["calls"] += 1
            if e.get("isError"):
                note(stats, text_of((e.get("result") or {}).get("content")), e.get("toolName"))
        elif t == "message_end" and (e.get("message") or {}).get("role") == "assistant":
            u = e["message"].get("usage") or {}
            stats["tokens_in"] += u.get("input", 0) + u.get("cacheRead", 0)
            stats["tokens_out"] += u.get("output", 0)
            answer(stats, text_of(e["message"].get("content")))
        return
    if kind_ == "opencode":
        part = e.get("part") or {}
        if t == "step_finish":
            stats["turns"] += 1
            tok = part.get("tokens") or {}
            stats["tokens_in"] += (tok.get("input") or 0) + ((tok.get("cache") or {}).get("read") or 0)
            stats["tokens_out"] += (tok.get("output") or 0) + (tok.get("reasoning") or 0)
        elif t == "tool_use":
            stats["calls"] += 1
            state = part.get("state") or {}
            if part.get("tool") == "invalid":
                stats["refused"] += 1
                err = (state.get("input") or {}).get("error") or state.get("output") or ""
                name = (state.get("input") or {}).get("tool") or "?"
                stats["refusals"].append(f"{name}: {str(err).strip()[:160]}")
            elif state.get("status") == "error":
                note(stats, str(state.get("error") or ""), part.get("tool"))
        elif t == "text":
            answer(stats, part.get("text"))
        elif t == "error":
            err = e.get("error") or {}
            msg = ((err.get("data") or {}).get("message") or err.get("name") or "error") if isinstance(err, dict) else str(err)
            stats["stopped"] = stats["stopped"] or f"error: {str(msg)[:120]}"
        return
    if t == "turn_end":
        stats["turns"] += 1
    elif t == "tool_execution_end":
        stats["calls"] += 1
        if e.get("is_error"):
            note(stats, e.get("output", ""), e.get("tool_name"))
    elif t == "message_end" and (e.get("message") or {}).get("role") == "assistant":
        answer(stats, text_of(e["message"].get("content")))
    elif t == "agent_end":
        u = e.get("usage") or {}
        stats["tokens_in"] += u.get("input", 0) + u.get("cache_read", 0)
        stats["tokens_out"] += u.get("output", 0)
        if e.get("outcome") not in (None, "done", "completed", "finished"):
            stats["stopped"] = stats["stopped"] or str(e.get("outcome"))


def turn_limit_reached(agent, e, stats, max_turns):
    """For an agent without a turn limit of its own (pi, OpenCode): whether to
    stop it now, after as many model calls as ag-loop's --max-turns allows,
    the tools of the last one run. (A call that ends without tools ends the
    run by itself.)"""
    k = kind(agent)
    if stats["turns"] < max_turns:
        return False
    if k == "pi":
        return e.get("type") == "turn_end" and bool(e.get("toolResults"))
    if k == "opencode":
        return e.get("type") == "step_finish" and (e.get("part") or {}).get("reason") == "tool-calls"
    return False


def read_console(path, stats):
    """What a run without a trajectory (1.x stopped at --timeout saves
    none) printed: its steps, the commands run and how they ended, and the
    answers refused for their format. Tokens are not printed."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return
    steps = re.findall(r"^mini-swe-agent \(step (\d+)", text, re.M)
    stats["turns"] = max((int(n) for n in steps), default=0)
    for code, output in re.findall(r"^User:\n<returncode>(-?\d+)</returncode>\n(.*?)(?=^─|\Z)", text,
                                   re.M | re.S):
        stats["calls"] += 1
        if code != "0":
            note(stats, f"<returncode>{code}</returncode>\n{output}", "bash")
    for n in re.findall(r"found (\d+) actions", text):
        if int(n) > 1:
            stats["calls"] += int(n)
            stats["refused"] += int(n)
            stats["refusals"].append(f"bash: {n} commands in one answer")


def read_trajectory(path, stats):
    """mini-swe-agent's trajectory file (saved after every step) into `stats`."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        stats["stopped"] = stats["stopped"] or "no trajectory"
        read_console(Path(path).parent / "output.txt", stats)
        return
    info = data.get("info") or {}
    stats["turns"] = (info.get("model_stats") or {}).get("api_calls", 0)
    for m in data.get("messages") or []:
        role, extra = m.get("role"), m.get("extra") or {}
        response = extra.get("response")
        if isinstance(response, dict):
            u = response.get("usage") or {}
            stats["tokens_in"] += u.get("prompt_tokens") or 0
            stats["tokens_out"] += u.get("completion_tokens") or 0
        if role == "assistant":
            answer(stats, text_of(m.get("content")))
        elif role == "user" and not extra and text_of(m.get("content")).startswith("<returncode>"):
            # 1.x: an observation is a user message with no extra.
            stats["calls"] += 1
            code = re.match(r"<returncode>(-?\d+)</returncode>", text_of(m.get("content")))
            if not code or code.group(1) != "0":
                note(stats, text_of(m.get("content")), "bash")
        elif role == "user" and not extra and (many := re.match(
                r"Please always provide EXACTLY ONE action in triple backticks, found (\d+) actions",
                text_of(m.get("content")))):
            # 1.x's format error: none run; more than one command is
            # counted as that many refused calls, as for 2.x.
            n = int(many.group(1))
            if n > 1:
                stats["calls"] += n
                stats["refused"] += n
                stats["refusals"].append(f"bash: {n} commands in one answer")
        elif role == "tool" or (role == "user" and "returncode" in extra):
            # An observation: a tool message (tool calling), or a user
            # message with the command's return code (text-based).
            if extra.get("exception_info") == NOT_EXECUTED:
                continue
            stats["calls"] += 1
            if extra.get("returncode") != 0:
                note(stats, extra.get("exception_info") or extra.get("raw_output") or "", "bash")
        elif role == "user" and extra.get("interrupt_type") == "FormatError" and (extra.get("n_actions") or 0) > 1:
            # Text-based: more than one command in one answer, none run.
            stats["calls"] += extra["n_actions"]
            stats["refused"] += extra["n_actions"]
            stats["refusals"].append(f"bash: {extra['n_actions']} commands in one answer")
        elif role == "user" and extra.get("interrupt_type") == "FormatError" and isinstance(response, dict):
            # Calls it would not take (an unknown tool, arguments that are not
            # JSON or lack `command`); an answer without a call is no call.
            calls = ((((response.get("choices") or [{}])[0]).get("message") or {}).get("tool_calls")) or []
            if calls:
                stats["calls"] += len(calls)
                stats["refused"] += len(calls)
                error = re.search(r"<error>\s*(.*?)\s*</error>", text_of(m.get("content")), re.S)
                stats["refusals"].append(f"bash: {(error.group(1) if error else '?')[:160]}")
    status = info.get("exit_status", "")
    if status == "LimitsExceeded":
        stats["stopped"] = "turn limit"
    elif status == "EOFError" and stats["turns"] >= 1:
        # 1.x at its step limit asks for a new one on stdin, which is
        # empty here: the run ended at the turn limit.
        stats["stopped"] = "turn limit"
    elif status not in ("Submitted", ""):
        stats["stopped"] = stats["stopped"] or status
