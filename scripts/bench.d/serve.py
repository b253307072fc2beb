"""ag-serve: the latency it adds between an event of ag-loop and a client
that is attached, over the Unix socket and as Server-Sent Events. The
session's ag-loop is a stand-in (`--ag-loop`) that does what ag-loop's
emitter does with each event (append it to the session file, then print
it) at 200 events/s, with the moment it was made in the event itself
(CLOCK_MONOTONIC, the same clock in every process), so only ag-serve and
the client's read are measured."""

import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

from harness import Row, fmt_s

STAND_IN = r"""#!/usr/bin/env python3
import glob, json, os, sys, time
args = sys.argv[1:]
sid = args[args.index("--session") + 1]
path = glob.glob(os.path.join(os.environ["AG_HOME"], "sessions", "*", "*_" + sid + ".jsonl"))[0]
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
out = sys.stdout.buffer
while True:
    line = sys.stdin.readline()
    if not line:
        break
    try:
        n = int(json.loads(line)["content"])
    except (ValueError, KeyError, TypeError):
        continue
    for i in range(n):
        e = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "notify", "message": str(time.monotonic_ns()), "level": "info"}
        b = (json.dumps(e) + "\n").encode()
        os.write(fd, b)
        out.write(b)
        out.flush()
        time.sleep(0.005)
"""


def latency(line, into):
    """The time since the stand-in made the event on this line, if it is one."""
    now = time.monotonic_ns()
    try:
        e = json.loads(line)
    except ValueError:
        return
    if e.get("type") == "notify":
        into.append((now - int(e["message"])) / 1e9)


def summary(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[max(0, int(len(xs) * 0.95) - 1)]


def measure(suite):
    events = suite.runs(1000, 300)
    home = suite.tmp / "serve-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    # A short socket path (a Unix socket's path has at most 107 bytes).
    sock_dir = tempfile.mkdtemp(prefix="ag-serve-bench-")
    sock_path = os.path.join(sock_dir, "s")
    stand_in = suite.tmp / "serve-stand-in.py"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    env = dict(suite.env, AG_HOME=str(home))
    broker = subprocess.Popen(
        [suite.bin("ag-serve"), "--socket", sock_path, "--ag-loop", str(stand_in), "--http", "127.0.0.1:0"],
        env=env,
        cwd=str(suite.tmp),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = []
    try:
        url = None
        deadline = time.time() + 20
        while time.time() < deadline and url is None:
            line = broker.stderr.readline()
            if not line:
                break
            if "the web page: " in line:
                url = line.split("the web page: ", 1)[1].strip()
        if url is None:
            return [Row.unavailable("ag-serve event to a client", "ag-serve did not start")]
        port = int(url.split("127.0.0.1:", 1)[1].split("/", 1)[0])
        token = url.split("token=", 1)[1]

        s = socket.socket(socket.AF_UNIX)
        s.connect(sock_path)
        f = s.makefile("rwb", buffering=0)
        f.write(b'{"type":"start","client":"bench"}\n')
        attached = json.loads(f.readline())
        sid = attached["session"]

        # Over the socket.
        lat = []
        f.write(json.dumps({"type": "prompt", "content": str(events)}).encode() + b"\n")
        reader = s.makefile("rb")
        while len(lat) < events:
            line = reader.readline()
            if not line:
                break
            latency(line, lat)
        if lat:
            med, p95 = summary(lat)
            rows.append(Row(
                "ag-serve: an event of ag-loop to a socket client (200 events/s)",
                f"{fmt_s(med)} (p95 {fmt_s(p95)})", "—", None, "< 2 ms", med < 0.002,
                "from the moment the stand-in made the event (before it wrote the file) to the client's read of the line",
            ))
        else:
            rows.append(Row.unavailable("ag-serve event to a socket client", "no event came"))

        # As Server-Sent Events, from the offset the socket client reached.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        conn.request("GET", f"/api/sessions/{sid}/events?from={len(lat)}", headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        sse = []
        buf = b""
        # The attached message first, then the events as they come.
        f.write(json.dumps({"type": "prompt", "content": str(events)}).encode() + b"\n")
        while len(sse) < events:
            chunk = resp.read1(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for l in lines:
                if l.startswith(b"data:"):
                    latency(l[5:].strip(), sse)
        conn.close()
        if sse:
            med, p95 = summary(sse)
            rows.append(Row(
                "ag-serve: an event of ag-loop to an SSE client (200 events/s)",
                f"{fmt_s(med)} (p95 {fmt_s(p95)})", "—", None, "< 5 ms", med < 0.005,
                "the same, read from GET /api/sessions/ID/events over HTTP/1.1 on loopback",
            ))
        else:
            rows.append(Row.unavailable("ag-serve event to an SSE client", "no event came"))
        s.close()
    finally:
        broker.terminate()
        try:
            broker.wait(10)
        except subprocess.TimeoutExpired:
            broker.kill()
        shutil.rmtree(sock_dir, ignore_errors=True)
    return rows
