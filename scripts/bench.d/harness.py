"""Timing and memory of child processes, and the rows of the results table.

Each run is one posix_spawn and one wait4: wall time around both, CPU time
from the child's rusage, peak memory (maxrss) from /usr/bin/time around the
command. Linux reports for a process the larger of its own peak and that of
any child it waited for, so a tool's peak covers the commands it ran.
"""

import json
import os
import shlex
import statistics
import subprocess
import tempfile
import time


class Run:
    def __init__(self, wall, user, sys_, rss_kib, status):
        self.wall = wall
        self.user = user
        self.sys = sys_
        self.cpu = user + sys_
        self.rss = rss_kib
        self.status = status


_RSS_FILE = os.path.join(tempfile.gettempdir(), f"ag-bench-rss-{os.getpid()}")


def run_once(argv, env=None, cwd=None, stdin=None, stdout=None, stderr=None, limit=None):
    """Runs argv to completion (or `limit` seconds, then it is killed and
    the status is 124). stdin/stdout/stderr are paths (default /dev/null).
    Returns a Run.

    The command runs under /usr/bin/time, which forks it from a small
    process: spawned straight from Python (vfork), the child's peak would
    start at the Python process's size, because exec records the size of
    the memory it replaces."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, str(stdin or os.devnull), os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(stdout or os.devnull), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, str(stderr or os.devnull), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    argv = list(argv)
    if limit is not None:
        argv = ["timeout", "-k", "5", str(limit)] + argv
    if cwd is not None:
        # posix_spawn has no chdir action before Python 3.13: env -C does it.
        argv = ["env", "-C", str(cwd)] + argv
    timed = os.access("/usr/bin/time", os.X_OK)
    if timed:
        argv = ["/usr/bin/time", "-f", "%M", "-o", _RSS_FILE, "--"] + argv
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, env if env is not None else os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    rss = ru.ru_maxrss
    code = os.waitstatus_to_exitcode(status)
    if timed:
        try:
            lines = open(_RSS_FILE).read().split()
            rss = int(lines[-1])
            # time reports the command's exit status as its own, and says
            # "Command exited with non-zero status N" first.
        except (OSError, ValueError, IndexError):
            rss = float("nan")
    return Run(wall, ru.ru_utime, ru.ru_stime, rss, code)


def compare(a, b, runs, env=None, cwd=None, stdin=None, stdout=None, prepare=None, warm=1):
    """Runs a and b alternately (a b, b a, a b, ...) `runs` times each after
    `warm` untimed runs of each; `prepare` runs untimed before every run."""
    for _ in range(warm):
        for argv in (b, a):
            if prepare:
                prepare()
            run_once(argv, env, cwd, stdin, stdout)
    ra, rb = [], []
    for i in range(runs):
        order = [(a, ra), (b, rb)] if i % 2 == 0 else [(b, rb), (a, ra)]
        for argv, into in order:
            if prepare:
                prepare()
            into.append(run_once(argv, env, cwd, stdin, stdout))
    return ra, rb


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_s(s):
    if s != s:
        return "?"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_kib(k):
    return f"{k / 1024:.1f} MiB"


class Row:
    """One line of the table. ok is True (pass), False (missed) or None
    (no target, or could not run)."""

    def __init__(self, case, ag, ref, ratio=None, target="—", ok=None, note=""):
        self.case, self.ag, self.ref, self.ratio, self.target, self.ok, self.note = (
            case,
            ag,
            ref,
            ratio,
            target,
            ok,
            note,
        )

    @staticmethod
    def unavailable(case, why):
        return Row(case, "not run", "—", None, "—", None, why)

    @staticmethod
    def timed(case, a, b, ref_label, target, ok_status=(0,), note=""):
        """a, b: lists of Run. target: ("ratio", x) | ("added", seconds) |
        ("abs", seconds) | None."""
        ta = median([r.wall for r in a])
        tb = median([r.wall for r in b])
        return Row.from_times(case, ta, tb, ref_label, target, failures(a, ok_status), note)

    @staticmethod
    def from_times(case, ta, tb, ref_label, target, failed=None, note="", ag_extra="", ref_extra=""):
        ratio = ta / tb if tb > 0 else None
        ok, tgt = judge(target, ta, tb, ratio)
        if failed:
            ok = False
            note = (note + "; " if note else "") + failed
        return Row(case, fmt_s(ta) + ag_extra, f"{ref_label}: {fmt_s(tb)}{ref_extra}", ratio, tgt, ok, note)

    @staticmethod
    def memory(case, a, b, ref_label, limit_kib, note=""):
        pa = max(r.rss for r in a)
        pb = max(r.rss for r in b)
        ok = None if limit_kib is None else pa < limit_kib
        tgt = "—" if limit_kib is None else f"< {fmt_kib(limit_kib)}"
        return Row(case, fmt_kib(pa), f"{ref_label}: {fmt_kib(pb)}", pa / pb if pb else None, tgt, ok, note)

    def line(self):
        return f"{self.case}: ag {self.ag}, ref {self.ref}, ratio {self.ratio_text()}, target {self.target}, {self.result()}"

    def ratio_text(self):
        return "—" if self.ratio is None else f"{self.ratio:.2f}x"

    def result(self):
        return {True: "pass", False: "**FAIL**", None: "—" if self.ag != "not run" else "not run"}[self.ok]

    def markdown(self):
        return f"| {self.case} | {self.ag} | {self.ref} | {self.ratio_text()} | {self.target} | {self.result()} |"


def judge(target, ta, tb, ratio):
    if target is None:
        return None, "—"
    kind, x = target
    if kind == "ratio":
        return (ratio is not None and ratio <= x), f"≤ {x:g}x"
    if kind == "added":
        return (ta - tb <= x), f"≤ +{fmt_s(x)}"
    if kind == "abs":
        return (ta < x), f"< {fmt_s(x)}"
    if kind == "abs_le":
        return (ta <= x), f"≤ {fmt_s(x)}"
    raise ValueError(kind)


def failures(runs, ok_status):
    bad = [r.status for r in runs if r.status not in ok_status]
    return f"{len(bad)} run(s) exited with status {bad[0]}" if bad else None


class realtime:
    """Runs the block at a real-time priority (SCHED_FIFO) when allowed, so
    that the children timed in it are not kept waiting by other load on a
    shared machine: for start-up cases, whose differences are a millisecond
    or two and whose runs are short (a long one at this priority would
    starve the machine). `active` says whether it took."""

    def __enter__(self):
        self.active = False
        try:
            self.old = (os.sched_getscheduler(0), os.sched_getparam(0))
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            self.active = True
        except (OSError, AttributeError):
            pass
        return self

    def __exit__(self, *exc):
        if self.active:
            os.sched_setscheduler(0, self.old[0], self.old[1])
        return False


def hyperfine_compare(case, a, b, runs, env, have_hyperfine, ref_label, target, target_note=""):
    """Start-up cases: timed by hyperfine (-N, no shell) when it is there,
    in rounds that alternate which command goes first; else by run_once.
    Both at a real-time priority where allowed."""
    with realtime() as rt:
        row = _startup_compare(case, a, b, runs, env, have_hyperfine, ref_label, target, target_note)
    if rt.active:
        row.note += "; at real-time priority (SCHED_FIFO), out of the way of other load"
    return row


def _startup_compare(case, a, b, runs, env, have_hyperfine, ref_label, target, target_note):
    note = ""
    if have_hyperfine:
        ta_all, tb_all, bad = [], [], 0
        rounds = 4
        per = max(3, runs // rounds)
        for i in range(rounds):
            pair = (a, b) if i % 2 == 0 else (b, a)
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                cmd = ["hyperfine", "-N", "--style", "none", "--warmup", "3", "--runs", str(per), "--export-json", f.name, "-i"]
                cmd += [shlex.join(pair[0]), shlex.join(pair[1])]
                subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                res = json.load(open(f.name))["results"]
            first, second = res[0], res[1]
            if pair[0] is not a:
                first, second = second, first
            ta_all += first["times"]
            tb_all += second["times"]
            bad += sum(1 for c in first.get("exit_codes", []) if c != 0)
        ta, tb = median(ta_all), median(tb_all)
        failed = f"{bad} run(s) exited non-zero" if bad else None
        note = "timed by hyperfine -N"
    else:
        ra, rb = compare(a, b, runs, env=env, warm=3)
        ta, tb = median([r.wall for r in ra]), median([r.wall for r in rb])
        failed = failures(ra, (0,))
        note = "hyperfine not available: timed by posix_spawn + wait4"
    row = Row.from_times(case, ta, tb, ref_label, target, failed, note)
    if target_note:
        row.target += " " + target_note
    return row
