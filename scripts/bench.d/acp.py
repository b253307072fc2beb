"""ag-acp: time from `session/prompt` to the first `agent_message_chunk`,
beyond the model's own latency, next to ag-loop's own figure (a prompt
line on its stdin to the first `text_delta` event on its stdout). Both run
warm (the process and its session already started) against the scripted
model server, which notes when each request arrived and when its first
byte went out; that span is the model's latency and is taken off."""

import json
import os
import select
import statistics
import subprocess
import time

import modelserver
from harness import Row, fmt_s


class Timed:
    """A chat handler that answers each request with a short text stream
    and keeps (arrival, first byte) per request."""

    def __init__(self):
        self.spans = []

    def __call__(self, method, path, headers, body, n):
        if method != "POST" or not path.endswith("/chat/completions"):
            return modelserver.Response(b"", status=404, content_type="text/plain")
        arrived = time.perf_counter()
        sse = modelserver.chat_sse({"text": "The answer, in a few pieces."}, n)
        spans = self.spans

        def chunks():
            spans.append((arrived, time.perf_counter()))
            yield sse

        return modelserver.Response(chunks=chunks())


class Lines:
    def __init__(self, proc):
        self.proc = proc
        self.buf = b""

    def next(self, limit=30):
        deadline = time.perf_counter() + limit
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise TimeoutError("no line in time")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the process ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


def _beyond(times, spans):
    """Medians of (client span - model span)."""
    return statistics.median(t - (first - arrived) for t, (arrived, first) in zip(times, spans))


def loop_figure(suite, server, handler, cwd, runs):
    argv = [suite.bin("ag-loop"), "-m", "ollama/scripted", "--base-url", server.base_url + "/v1", "--json", "--approve-on-stdin", "--sandbox", "off"]
    proc = subprocess.Popen(argv, cwd=cwd, env=suite.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = Lines(proc)
    times = []
    handler.spans.clear()
    try:
        for i in range(runs + 1):
            t0 = time.perf_counter()
            proc.stdin.write((json.dumps({"type": "prompt", "content": f"question {i}"}) + "\n").encode())
            proc.stdin.flush()
            first = None
            while True:
                e = lines.next()
                if first is None and e.get("type") == "message_update" and e["event"].get("type") == "text_delta":
                    first = time.perf_counter() - t0
                if e.get("type") == "agent_end":
                    break
            times.append(first)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return _beyond(times[1:], handler.spans[1:])


def acp_figure(suite, server, handler, cwd, runs):
    argv = [suite.bin("ag-acp"), "-m", "ollama/scripted", "--", "--base-url", server.base_url + "/v1", "--sandbox", "off"]
    proc = subprocess.Popen(argv, cwd=cwd, env=suite.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = Lines(proc)

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def answer(id_):
        while True:
            m = lines.next()
            if m.get("id") == id_ and "method" not in m:
                return m

    times = []
    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        answer(0)
        send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}})
        sid = answer(1)["result"]["sessionId"]
        handler.spans.clear()
        for i in range(runs + 1):
            rid = 100 + i
            t0 = time.perf_counter()
            send({"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": f"question {i}"}]}})
            first = None
            while True:
                m = lines.next()
                u = m.get("params", {}).get("update", {})
                if first is None and u.get("sessionUpdate") == "agent_message_chunk":
                    first = time.perf_counter() - t0
                if m.get("id") == rid and "method" not in m:
                    break
            times.append(first)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return _beyond(times[1:], handler.spans[1:])


def measure(suite):
    cwd = suite.tmp / "acp-work"
    cwd.mkdir(exist_ok=True)
    handler = Timed()
    server = modelserver.ModelServer(handler)
    runs = suite.runs(30, 10)
    try:
        loop = loop_figure(suite, server, handler, cwd, runs)
        acp = acp_figure(suite, server, handler, cwd, runs)
    except (TimeoutError, EOFError, OSError, subprocess.SubprocessError) as e:
        return [Row.unavailable("ag-acp: session/prompt to the first agent_message_chunk", str(e))]
    finally:
        server.close()
    return [
        Row(
            "ag-acp: session/prompt to the first agent_message_chunk, beyond the model's latency",
            fmt_s(acp),
            f"ag-loop, prompt line to the first text_delta: {fmt_s(loop)}",
            acp / loop if loop > 0 else None,
            "< 5 ms",
            acp < 5e-3,
            f"warm session, medians of {runs} prompts; the model's span (request arrived to first byte sent) is taken off both; ag-acp's own share is the difference",
        )
    ]
