"""scripts/bench's ag-browser case, beside Playwright's MCP server
(@playwright/mcp from npm, pinned by scripts/bench.d/playwright-mcp/ and
installed by scripts/playwright-mcp) on the same system Chromium, headless.
A test page served on 127.0.0.1 by the bench: a field, and a button that
changes a counter's text.

- cold: the first call of a session, Chromium's start included: for ag an
  `ag-browser navigate` with no warm helper yet (it starts the helper and
  Chromium, opens the page and answers with its snapshot); for Playwright
  from spawning `playwright-mcp` to the answer of `browser_navigate` (MCP
  initialize, then the call, which starts Chromium and answers with the
  snapshot);
- warm snapshot and warm click: one more call on the same live browser.
  For ag that is a whole `ag-browser` process, as every tool call is
  (start-up, the socket to the warm helper, the action, the new snapshot);
  for Playwright one tools/call round trip on its open stdio.

The runs alternate (ag, Playwright, Playwright, ag, ...), each side in a
session of its own. Playwright never downloads a browser: it is given
/usr/bin/chromium (or $AG_BROWSER) with --executable-path, or rather what
Debian's /usr/bin/chromium script execs, which ag-browser starts directly.
"""

import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from harness import Row, fmt_s, median

ROOT = Path(__file__).resolve().parent.parent.parent

PAGE = b"""<!doctype html><html><head><title>Counter</title></head><body>
<h1>Counter</h1>
<label>Name <input id="name"></label>
<button onclick="const o = document.getElementById('out'); o.textContent = 'clicked ' + (Number(o.dataset.n = (Number(o.dataset.n || 0) + 1)))">Count</button>
<p id="out">not clicked</p>
<ul><li><a href="/a">First link</a></li><li><a href="/b">Second link</a></li></ul>
</body></html>"""

REF = re.compile(r'button "Count"[^\n]*?\[ref=(e\d+)\]')


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        try:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a browser gave up a request it no longer needed

    def log_message(self, *args):
        pass


def chromium():
    exe = os.environ.get("AG_BROWSER") or shutil.which("chromium") or shutil.which("google-chrome")
    return exe


def past_wrapper(exe):
    """The browser Debian's /usr/bin/chromium script execs, which ag-browser
    starts directly (lib/tools/browser/launch.rs): Playwright is given the
    same, so that both start the same program."""
    try:
        head = open(exe, "rb").read(4096).decode("utf-8", "replace")
    except OSError:
        return exe
    real = "/usr/lib/chromium/chromium"
    if head.startswith("#!") and "APPNAME=chromium" in head and "LIBDIR=/usr/lib/$APPNAME" in head and os.access(real, os.X_OK):
        return real
    return exe


def playwright_cli(suite):
    d = Path(os.environ.get("AG_PLAYWRIGHT_MCP_DIR") or ROOT / "target" / "playwright-mcp")
    cli = d / "node_modules" / "@playwright" / "mcp" / "cli.js"
    lock = ROOT / "scripts" / "bench.d" / "playwright-mcp" / "package-lock.json"
    installed = d / "installed-lock.json"
    if not cli.exists() or not installed.exists() or installed.read_bytes() != lock.read_bytes():
        suite.log("installing Playwright's MCP server (scripts/playwright-mcp)")
        env = dict(os.environ, AG_PLAYWRIGHT_MCP_DIR=str(d))
        subprocess.run([str(ROOT / "scripts" / "playwright-mcp")], env=env, capture_output=True)
    return cli if cli.exists() else None


# ---------------------------------------------------------------- ag


class AgSession:
    """ag-browser calls of one session: the owner is a process of ours,
    whose end ends the warm helper and its Chromium."""

    def __init__(self, suite, cwd, exe):
        self.suite = suite
        self.cwd = cwd
        self.owner = subprocess.Popen(["sleep", "3600"])
        self.env = dict(suite.env, AG_SESSION_PID=str(self.owner.pid), AG_BROWSER=exe)

    def call(self, *args):
        t = time.perf_counter()
        r = subprocess.run([self.suite.bin("ag-browser"), *args], env=self.env, cwd=self.cwd, capture_output=True, text=True)
        took = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"ag-browser {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()[:500]}")
        return took, r.stdout

    def close(self):
        self.owner.send_signal(signal.SIGTERM)
        self.owner.wait()


# ---------------------------------------------------------------- Playwright


class McpSession:
    """Playwright's MCP server over stdio: newline-delimited JSON-RPC."""

    def __init__(self, suite, cli, exe, cwd):
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                "node",
                str(cli),
                "--headless",
                "--isolated",
                "--no-sandbox",
                "--browser",
                "chromium",
                "--executable-path",
                exe,
                "--output-dir",
                str(cwd / "playwright-output"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=dict(suite.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1"),
            text=True,
            bufsize=1,
        )
        self.next = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ag-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next += 1
        rid = self.next
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"playwright-mcp ended during {method}")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"playwright-mcp {method}: {msg['error']}")
                return msg["result"]

    def call(self, tool, arguments):
        t = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        took = time.perf_counter() - t
        text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        if result.get("isError"):
            raise RuntimeError(f"playwright-mcp {tool} failed: {text[:500]}")
        return took, text

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ref_in(text, who):
    m = REF.search(text)
    if not m:
        raise RuntimeError(f"{who}'s snapshot has no Count button: {text[:500]}")
    return m.group(1)


# ---------------------------------------------------------------- the case


def measure(suite):
    exe = chromium()
    if exe is None:
        return [Row.unavailable("ag-browser", "no Chromium (apt-get install chromium)")]
    cli = playwright_cli(suite)
    if cli is None or shutil.which("node") is None:
        return [Row.unavailable("ag-browser vs Playwright MCP", "scripts/playwright-mcp could not install @playwright/mcp")]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    cwd = suite.tmp / "browser"
    cwd.mkdir(exist_ok=True)
    try:
        return _measure(suite, exe, past_wrapper(exe), cli, url, cwd)
    except RuntimeError as e:
        return [Row.unavailable("ag-browser vs Playwright MCP", str(e))]
    finally:
        server.shutdown()


def _measure(suite, exe, pw_exe, cli, url, cwd):
    n_cold = suite.runs(5, 2)
    n_warm = suite.runs(20, 6)
    # One untimed round of each, so that both start from a warm page cache.
    ag_cold, pw_cold = [], []
    for i in range(n_cold + 1):
        order = ["ag", "pw"] if i % 2 == 0 else ["pw", "ag"]
        for side in order:
            if side == "ag":
                s = AgSession(suite, cwd, exe)
                try:
                    took, out = s.call("navigate", "--url", url)
                    ref_in(out, "ag-browser")
                finally:
                    s.close()
                if i:
                    ag_cold.append(took)
            else:
                s = McpSession(suite, cli, pw_exe, cwd)
                try:
                    s.call("browser_navigate", {"url": url})
                    # Its navigate answers with a link to the snapshot's
                    # file; the text comes with browser_snapshot.
                    _, out = s.call("browser_snapshot", {})
                    took = time.perf_counter() - s.t0
                    ref_in(out, "playwright-mcp")
                finally:
                    s.close()
                if i:
                    pw_cold.append(took)
            # The ended browser's processes leave before the next start.
            time.sleep(0.5)

    ag = AgSession(suite, cwd, exe)
    pw = McpSession(suite, cli, pw_exe, cwd)
    try:
        ag.call("navigate", "--url", url)
        pw.call("browser_navigate", {"url": url})
        ag_snap, pw_snap, ag_click, pw_click = [], [], [], []
        ag_chars, pw_chars = [], []
        for i in range(n_warm + 1):
            sides = ["ag", "pw"] if i % 2 == 0 else ["pw", "ag"]
            for side in sides:
                if side == "ag":
                    t, out = ag.call("snapshot")
                    ref = ref_in(out, "ag-browser")
                    t2, out2 = ag.call("click", "--ref", ref)
                    if "clicked" not in out2:
                        raise RuntimeError(f"ag-browser's click answered without the new text: {out2[:500]}")
                    if i:
                        ag_snap.append(t)
                        ag_click.append(t2)
                        ag_chars.append(len(out))
                else:
                    t, out = pw.call("browser_snapshot", {})
                    ref = ref_in(out, "playwright-mcp")
                    t2, out2 = pw.call("browser_click", {"element": "Count button", "target": ref})
                    # Its click writes the new snapshot to a file and
                    # answers with the file's name.
                    link = re.search(r"\[Snapshot\]\(([^)]+)\)", out2)
                    if link:
                        out2 += (cwd / link.group(1)).read_text()
                    if "clicked" not in out2:
                        raise RuntimeError(f"playwright-mcp's click answered without the new text: {out2[:500]}")
                    if i:
                        pw_snap.append(t)
                        pw_click.append(t2)
                        pw_chars.append(len(out))
    finally:
        ag.close()
        pw.close()

    ref = "Playwright MCP"
    cold_ag, cold_pw = median(ag_cold), median(pw_cold)
    rows = [
        Row.from_times(
            "ag-browser cold first call: navigate + snapshot, Chromium started",
            cold_ag,
            cold_pw,
            ref,
            ("abs", 1.5),
            note=f"{n_cold} runs each; ag: the ag-browser navigate that starts the warm helper and Chromium and answers with the snapshot; Playwright: from spawning the server (MCP initialize, browser_navigate, which links its snapshot's file) to browser_snapshot's answer",
        ),
        Row.from_times(
            "ag-browser warm snapshot",
            median(ag_snap),
            median(pw_snap),
            ref,
            ("abs", 0.15),
            note=f"{n_warm} runs each; ag: a whole ag-browser process per call; Playwright: a tools/call on its open stdio; snapshot sizes {int(median(ag_chars))} and {int(median(pw_chars))} characters",
        ),
        Row.from_times(
            "ag-browser warm click (answers with the new snapshot)",
            median(ag_click),
            median(pw_click),
            ref,
            ("abs", 0.15),
            note=f"{n_warm} runs each; both take the new snapshot: ag puts it in the result, Playwright writes it to a file and answers with its name; Playwright waits after an action for triggered work to settle (--timeout-settle, default 500 ms)",
        ),
    ]
    # The aim: faster than Playwright's MCP server on every row.
    for r, (a, b) in zip(rows, [(cold_ag, cold_pw), (median(ag_snap), median(pw_snap)), (median(ag_click), median(pw_click))]):
        if a >= b:
            r.ok = False
            r.note += f"; slower than Playwright MCP ({fmt_s(a)} vs {fmt_s(b)})"
    return rows
