"""The agents scripts/realmodel runs: how each is installed, started on one
task, and read. Each agent's log is read into the same measurements:

- turns: model calls;
- calls: tool calls the model made, refused ones included;
- refused: calls that never ran (an unknown tool, arguments the agent would
  not take);
- failed: calls that ran and failed;
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

# The agents by kind; `ag:SET` is ag with a tool set.
KINDS = ("ag", "pi")

# A call refused before it ran: the tool is unknown or the arguments were
# not taken. ag's texts (lib/agent/run/runner.rs, lib/tool_protocol/args_check.rs,
# lib/tools/offer.rs, ag-bash's usage errors) and pi's (pi-ai's
# validateToolArguments, pi-agent-core's unknown tool).
REFUSED = re.compile(
    r"^(There is no tool named|The arguments for `|this call's fields make it|this call gave `command`"
    r"|`stop: true` was given without|nothing to do: give|Validation failed for tool|Tool \S+ not found)"
)


def kind(agent):
    return "ag" if agent == "ag" or agent.startswith("ag:") else agent


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


def ensure(agent, args):
    if kind(agent) == "pi":
        args.pi = npm_install(args.work, "@mariozechner/pi-coding-agent", args.pi)


# --- command lines ---------------------------------------------------------------


def command(agent, args, model, window, where, prompt):
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
    if kind(agent) == "pi":
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
    env["AG_HOME"] = str(home / ".ag")
    argv = [str(args.bin_dir / "ag-loop"), "-m", f"llamacpp/{model}", "--base-url", args.base_url,
            "--max-turns", str(args.max_turns), "--json", "--no-gate", "--no-session"]
    if ":" in agent:
        argv += ["--tools", agent.split(":", 1)[1]]
    return argv + [prompt], env


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
    """Adds one event of a JSON-lines log (ag, pi) to `stats`."""
    t = e.get("type")
    if kind(agent) == "pi":
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
    """For an agent without a turn limit of its own (pi): whether to stop it
    now, after as many model calls as ag-loop's --max-turns allows, the tools
    of the last one run. (A call that ends without tools ends the run by
    itself.)"""
    if stats["turns"] < max_turns:
        return False
    if kind(agent) == "pi":
        return e.get("type") == "turn_end" and bool(e.get("toolResults"))
    return False
