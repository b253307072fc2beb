"""ag-tui in a pseudo-terminal: time from start to a usable prompt, time
from a keypress to the frame that shows it while an answer streams at 200
events/s, and how its memory grows while the conversation scrolls. The
child is a stand-in for ag-loop (`--loop-cmd`) that prints scripted events,
so only the TUI is measured."""

import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import sys
import termios
import time

from harness import Row, fmt_s

# 200 events/s of streamed text, a paragraph every 10 deltas, no capital Z
# (the key the measurement types), until killed.
STREAMER = r"""
import json, sys, time
def out(e):
    sys.stdout.write(json.dumps(e) + "\n"); sys.stdout.flush()
out({"type": "agent_start", "timestamp": "2026-01-01T00:00:00Z"})
n = 0
while True:
    out({"type": "message_start", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": []}})
    for i in range(200):
        d = "streamed words of a long answer, with `code` and *emphasis* " + ("\n\n" if i % 10 == 9 else "")
        out({"type": "message_update", "timestamp": "2026-01-01T00:00:00Z", "event": {"type": "text_delta", "index": 0, "delta": d}})
        time.sleep(0.005)
    out({"type": "message_end", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "streamed words " * 400}], "usage": {}, "stop_reason": "stop"}})
"""


def spawn(suite, loop_cmd):
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(suite.env, TERM="xterm-256color")
        argv = [suite.bin("ag-tui"), "--loop-cmd", loop_cmd]
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    return pid, fd


def read_until(fd, needle, limit):
    """Reads the pty until `needle` shows up; the time it took, or None."""
    start = time.perf_counter()
    seen = b""
    while time.perf_counter() - start < limit:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return None
            seen = (seen + chunk)[-4096:]
            if needle in seen:
                return time.perf_counter() - start
    return None


def drain(fd):
    while select.select([fd], [], [], 0)[0]:
        try:
            os.read(fd, 65536)
        except OSError:
            return


def stop(pid, fd):
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except OSError:
        pass
    os.close(fd)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def measure(suite):
    rows = []
    script = suite.tmp / "tui-streamer.py"
    script.write_text(STREAMER)
    idle = "sleep 600"

    # Start to the first frame with the editor and footer ("ready").
    starts = []
    for _ in range(suite.runs(15, 5)):
        t0 = time.perf_counter()
        pid, fd = spawn(suite, idle)
        took = read_until(fd, b"ready", 5)
        if took is not None:
            starts.append(time.perf_counter() - t0)
        stop(pid, fd)
    if starts:
        med = statistics.median(starts)
        rows.append(Row("ag-tui start to a usable prompt (pty, 80x24)", fmt_s(med), "—", None, "< 50 ms", med < 0.050))
    else:
        rows.append(Row.unavailable("ag-tui start to a usable prompt", "no frame within 5 s"))

    # Keypress to frame while streaming, and memory along the way.
    pid, fd = spawn(suite, f"{sys.executable} {script}")
    read_until(fd, b"working", 5)
    time.sleep(1.0)
    drain(fd)
    rss_start = rss_kib(pid)
    lat = []
    for _ in range(suite.runs(60, 20)):
        drain(fd)
        os.write(fd, b"Z")
        took = read_until(fd, b"Z", 2)
        if took is not None:
            lat.append(took)
        os.write(fd, b"\x7f")
        time.sleep(0.1)
    time.sleep(suite.runs(10, 3))
    drain(fd)
    rss_end = rss_kib(pid)
    stop(pid, fd)
    if lat:
        lat.sort()
        med = statistics.median(lat)
        p95 = lat[int(len(lat) * 0.95) - 1]
        rows.append(Row("ag-tui keypress to frame while streaming 200 events/s", f"{fmt_s(med)} (p95 {fmt_s(p95)})", "—", None, "< 16 ms", p95 < 0.016))
    else:
        rows.append(Row.unavailable("ag-tui keypress to frame", "the key never showed"))
    growth = rss_end - rss_start
    rows.append(
        Row(
            "ag-tui memory while a long answer streams and scrolls",
            f"{rss_start} → {rss_end} KiB",
            "—",
            None,
            "growth < 8 MiB",
            growth < 8 * 1024,
            "the text received is kept (a few hundred KB here); rendered rows are cached per entry and only for what was on screen",
        )
    )
    return rows
