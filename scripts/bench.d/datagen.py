"""The benchmark's data, generated once and kept under target/bench/data
(a stamp file says which version of this generator made it).

- small.rs: a 20 KB source file (a copy of lib/tools/read.rs).
- lines10m.txt: 10,000,000 numbered log lines (about 440 MB).
- big100.txt: 100 MB of source-like lines with one unique marker near the end.
- the search corpus: the cargo registry's sources (not copied).
- sessions: a real ag-loop session recorded against the scripted model
  server, copied 1,000 times (new ids) into one working directory's
  session folder, and a 100 MB session made of a recorded one's events
  repeated (each copy a whole prompt: a valid multi-prompt session).
"""

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import modelserver
import task

VERSION = "3"
SESSIONS = 1000
BIG_SESSION_BYTES = 100_000_000


class Data:
    pass


def prepare(dir_, bin_dir, quick, log):
    dir_ = Path(dir_)
    stamp = dir_ / "STAMP"
    if not (stamp.exists() and stamp.read_text() == VERSION):
        shutil.rmtree(dir_, ignore_errors=True)
    dir_.mkdir(parents=True, exist_ok=True)
    d = Data()
    root = Path(__file__).resolve().parents[2]

    d.small = dir_ / "small.rs"
    if not d.small.exists():
        shutil.copyfile(root / "lib" / "tools" / "read.rs", d.small)

    d.lines10m = dir_ / "lines10m.txt"
    if not d.lines10m.exists():
        log("generating a 10-million-line file")
        tmp = d.lines10m.with_suffix(".part")
        with open(tmp, "w") as f:
            for start in range(0, 10_000_000, 100_000):
                f.write("".join(f"{i:>9} INFO request served in {i % 997} ms\n" for i in range(start, start + 100_000)))
        tmp.rename(d.lines10m)

    d.big100 = dir_ / "big100.txt"
    if not d.big100.exists():
        log("generating a 100 MB file")
        tmp = d.big100.with_suffix(".part")
        with open(tmp, "w") as f:
            for start in range(0, 1_400_000, 100_000):
                f.write("".join(f"    let line_{i:08d} = generated(\"text for the benchmark, nothing here\");\n" for i in range(start, start + 100_000)))
            f.write("const UNIQUE_MARKER: u32 = 1;\n" + "}\n" * 10)
        tmp.rename(d.big100)

    registry = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "registry" / "src"
    d.corpus = registry if registry.is_dir() and any(registry.iterdir()) else None

    stamp.write_text(VERSION)

    d.sessions_home = dir_ / "sessions-home"
    d.sessions_cwd = dir_ / "sessions-cwd"
    d.sessions_dir = d.sessions_home / "sessions" / cwd_dir_name(d.sessions_cwd.resolve())
    d.big_session = dir_ / "big-session" / "big.jsonl"
    d.sessions_problem = None
    if not (d.big_session.exists() and d.sessions_dir.is_dir()):
        try:
            make_sessions(d, dir_, bin_dir, log)
        except Exception as e:  # the other cases still run
            d.sessions_problem = f"could not record a session with ag-loop: {e}"
            d.sessions_cwd = None
    return d


def cwd_dir_name(path):
    """As lib/session/store.rs: /a/b becomes --a-b--."""
    s = str(path).lstrip("/")
    for c in "/\\:":
        s = s.replace(c, "-")
    return f"--{s}--"


def record(bin_dir, turns, repo, home, prompt):
    """Runs ag-loop over `turns` against a scripted server; returns the
    session file it wrote."""
    server = modelserver.ModelServer(modelserver.scripted_chat(turns))
    try:
        env = dict(os.environ, AG_HOME=str(home), NO_COLOR="1")
        r = subprocess.run(
            [str(bin_dir / "ag-loop"), "-m", "ollama/scripted", "--base-url", server.base_url + "/v1", "--json", "--no-gate", prompt],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
        if r.returncode != 0:
            raise RuntimeError(f"ag-loop exited {r.returncode}: {r.stderr.strip()[-300:]}")
    finally:
        server.close()
    files = sorted((home / "sessions").rglob("*.jsonl"))
    if not files:
        raise RuntimeError("ag-loop wrote no session file")
    return files[-1]


def make_sessions(d, dir_, bin_dir, log):
    log("recording sessions with ag-loop")
    rec = dir_ / "recording"
    shutil.rmtree(rec, ignore_errors=True)
    repo = rec / "repo"
    task.make_repo(repo)
    template = record(bin_dir, task.loop_turns(20), repo, rec / "home-a", "work through the repository")

    # 1,000 sessions of one working directory, each the recorded one with
    # its own id and start time.
    shutil.rmtree(d.sessions_home, ignore_errors=True)
    d.sessions_cwd.mkdir(parents=True, exist_ok=True)
    d.sessions_dir.mkdir(parents=True)
    lines = template.read_bytes().split(b"\n", 1)
    header = json.loads(lines[0])
    body = lines[1]
    for i in range(SESSIONS):
        sid = str(uuid.uuid4())
        ts = f"2025-01-{1 + i // 48:02d}T{(i // 2) % 24:02d}:{(i * 7) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        header.update(id=sid, timestamp=ts, cwd=str(d.sessions_cwd.resolve()))
        stamp = ts.replace(":", "-").replace(".", "-")
        with open(d.sessions_dir / f"{stamp}_{sid}.jsonl", "wb") as f:
            f.write(json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)

    # A 100 MB session: a recording with large tool results and long
    # streamed answers, its events repeated.
    repo2 = rec / "repo2"
    task.make_repo(repo2, big=True)
    big = record(bin_dir, task.heavy_turns(), repo2, rec / "home-b", "read everything")
    lines = big.read_bytes().split(b"\n", 1)
    d.big_session.parent.mkdir(parents=True, exist_ok=True)
    with open(d.big_session, "wb") as f:
        f.write(lines[0] + b"\n")
        size = 0
        while size < BIG_SESSION_BYTES:
            f.write(lines[1])
            size += len(lines[1])
    shutil.rmtree(rec, ignore_errors=True)


TREE_FILES = 100_000
TREE_VERSION = "1"


def tree(dir_, log):
    """A source tree of 100,000 files (about 210 MB) for the search cases:
    100 packages of 10 modules of 100 files, each file 30 to 90 lines of
    Rust-like code, with a `.gitignore` in every package that leaves out
    its `target/` (another 10 files each, which a search must skip). Three
    files hold `TREE_RARE_MARKER`; every file has a few `fn name(` lines.
    Generated once, with a fixed seed, under `dir_/tree100k` (its STAMP
    names the generator's version); returns the tree's path."""
    import random

    top = Path(dir_) / "tree100k"
    stamp = top / "STAMP"
    if stamp.exists() and stamp.read_text() == TREE_VERSION:
        return top
    log(f"generating a tree of {TREE_FILES:,} files")
    shutil.rmtree(top, ignore_errors=True)
    part = Path(dir_) / "tree100k.part"
    shutil.rmtree(part, ignore_errors=True)
    rng = random.Random(50)
    words = ["buffer", "index", "count", "state", "reader", "entry", "token", "config", "path", "value", "frame", "limit"]
    rare = {1234, 56_789, 99_001}
    n = 0
    for p in range(100):
        pkg = part / f"pkg{p:03d}"
        (pkg / "target").mkdir(parents=True)
        (pkg / ".gitignore").write_text("/target/\n")
        for t in range(10):
            (pkg / "target" / f"gen{t}.rs").write_text("fn generated() {}\n// TREE_RARE_MARKER in an ignored file\n")
        for m in range(10):
            mod = pkg / "src" / f"mod{m:02d}"
            mod.mkdir(parents=True)
            for f in range(100):
                lines = [f"//! Module {p}/{m}/{f}.", "use std::collections::HashMap;", ""]
                for i in range(rng.randint(6, 18)):
                    a, b = rng.choice(words), rng.choice(words)
                    lines += [
                        f"pub fn {a}_{b}_{i}(input: &[u8], {b}: usize) -> Option<usize> {{",
                        f"    let {a} = input.len().checked_sub({b})?;",
                        f"    if {a} > {rng.randint(1, 9999)} {{ return None; }}",
                        f"    Some({a} + {i})",
                        "}",
                    ]
                if n in rare:
                    lines.append("const TREE_RARE_MARKER: u32 = 7;")
                (mod / f"file{f:03d}.rs").write_text("\n".join(lines) + "\n")
                n += 1
    part.rename(top)
    stamp.write_text(TREE_VERSION)
    return top
