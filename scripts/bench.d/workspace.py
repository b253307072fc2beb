"""ag-loop --workspace over ssh (issue 22): the cost of a tool call run in
another workspace, against the same call run here. A private sshd on a free
127.0.0.1 port (its own host key, authorized key and config, the remote
HOME set by the config so the copy lands in the bench's own directory)
stands in for the build box; the scripted model asks for N reads.

- per call: (session over ssh - the same session here) / N, with the tools
  already in the remote cache (the next call);
- session start: a one-call session over ssh minus the same here (the
  ControlMaster's handshake and the probe);
- first session: the same with an empty remote cache (the copy of the tool
  binaries, once)."""

import os
import shutil
import socket
import subprocess
import time

import modelserver
from harness import Row, fmt_s, median, run_once


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sshd(d):
    """Starts sshd in d; (process, port, ssh options) or a reason it cannot."""
    sshd = next((p for p in ("/usr/sbin/sshd", "/usr/bin/sshd") if os.path.exists(p)), None)
    if not sshd or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        return None, "sshd, ssh or ssh-keygen is not installed (openssh-server, openssh-client)"
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        os.makedirs("/run/sshd", exist_ok=True)
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True)
    shutil.copy(d / "client.pub", d / "authorized_keys")
    (d / "home").mkdir(exist_ok=True)
    port = _free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
        "PidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"PermitRootLogin yes\nSetEnv HOME={d / 'home'} PATH=/usr/bin:/bin\nLogLevel ERROR\n"
    )
    proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.DEVNULL)
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.02)
    options = f"-F /dev/null -i {d / 'client'} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    return (proc, port, options), None


def measure(suite):
    d = suite.tmp / "workspace-ssh"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    started, why = _sshd(d)
    if started is None:
        return [Row.unavailable("ag-loop --workspace ssh://", why)]
    proc, port, options = started
    work = d / "work"
    work.mkdir()
    (work / "notes.txt").write_text("line\n" * 200)
    n = 20
    # A different file each turn: the same call again and again is what
    # ag-loop's repeat guard stops (repeated_call), which is not the case.
    for i in range(n):
        (work / f"notes{i}.txt").write_text(f"line {i}\n" * 200)
    turns = [{"calls": [("read", {"file_path": f"notes{i}.txt"})]} for i in range(n)] + [{"text": "done"}]
    one = [{"calls": [("read", {"file_path": "notes.txt"})]}, {"text": "done"}]
    env = dict(suite.env, AG_SSH_OPTIONS=options)
    uri = f"ssh://127.0.0.1:{port}{work}"
    out = suite.tmp / "workspace-events.jsonl"
    runs = suite.runs(5, 2)
    rows = []

    def session(script, remote, fresh=False):
        server = modelserver.ModelServer(modelserver.scripted_chat(script))
        try:
            if fresh:
                shutil.rmtree(d / "home" / ".cache", ignore_errors=True)
            argv = [suite.bin("ag-loop"), "-m", "ollama/scripted", "--base-url", server.base_url + "/v1", "--json", "--no-gate", "--no-session"]
            if remote:
                argv += ["--workspace", uri]
            r = run_once(argv + ["read the notes"], env, cwd=work, stdout=out, limit=300)
            errors = sum(1 for line in out.read_text().splitlines() if '"tool_execution_end"' in line and '"is_error":true' in line)
            return r.wall, r.status == 0 and errors == 0
        finally:
            server.close()

    try:
        results = {k: [] for k in ("local", "remote", "local1", "remote1", "first")}
        ok = True
        session(one, True, fresh=True)  # warm: the tools are copied once
        for i in range(runs):
            for key, script, remote, fresh in (
                ("local", turns, False, False),
                ("remote", turns, True, False),
                ("local1", one, False, False),
                ("remote1", one, True, False),
                ("first", one, True, True),
            ):
                t, good = session(script, remote, fresh)
                ok = ok and good
                results[key].append(t)
        m = {k: median(v) for k, v in results.items()}
        per = (m["remote"] - m["local"]) / n
        local_per = m["local"] / n
        note = "" if ok else "a run failed or a tool call was an error"
        rows.append(
            Row(
                f"ag-loop --workspace ssh://127.0.0.1: added per tool call ({n} reads, tools already there)",
                fmt_s(per),
                f"a whole turn here (model + read): {fmt_s(local_per)}",
                None,
                "< 50 ms",
                ok and per < 0.05,
                note or "one ControlMaster connection for the session; each call is a new channel on it plus the remote sh wrapper",
            )
        )
        rows.append(
            Row(
                "ag-loop --workspace ssh://127.0.0.1: added at session start (connection, probe)",
                fmt_s(m["remote1"] - m["local1"]),
                f"the one-call session here: {fmt_s(m['local1'])}",
                None,
                "—",
                None,
                note,
            )
        )
        rows.append(
            Row(
                "ag-loop --workspace ssh://127.0.0.1: first session, tool binaries copied",
                fmt_s(m["first"] - m["local1"]),
                f"the one-call session here: {fmt_s(m['local1'])}",
                None,
                "—",
                None,
                note or "the copy of every ag tool binary over the connection, once per version",
            )
        )
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
    return rows
