"""scripts/bench's ag-lsp case: diagnostics after an edit, on a small
Python project (pyright) and a small TypeScript project
(typescript-language-server), from target/lsp-servers (scripts/lsp-servers).

- warm: an ag-edit that breaks a type and one that fixes it, in a session
  whose server already runs, beside the same edits with diagnostics off:
  the edit's whole time, process start included (target: under 0.5 s);
- cold: the first such edit of a session, which starts the warm host and
  the server and waits for its first answer;
- characters: what the diagnostics add to the edit's result for the model.
"""

import os
import signal
import subprocess
import time
from pathlib import Path

from harness import Row, median

ROOT = Path(__file__).resolve().parent.parent.parent

PROJECTS = {
    "Python": {
        "files": {
            "pyproject.toml": '[project]\nname = "zoo"\n',
            "animals.py": "class Dog:\n    def speak(self) -> str:\n        return 'woof'\n",
            "main.py": "from animals import Dog\n\n\ndef chorus() -> str:\n    d = Dog()\n    return d.speak()\n",
        },
        "file": "main.py",
        "good": "d = Dog()",
        "bad": "d = 42",
    },
    "TypeScript": {
        "files": {
            "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true}}',
            "shapes.ts": "export function area(w: number, h: number): number {\n  return w * h;\n}\n",
            "main.ts": "import { area } from './shapes';\n\nexport const total: number = area(2, 3);\n",
        },
        "file": "main.ts",
        "good": "area(2, 3)",
        "bad": "area('2', 3)",
    },
}


def servers_bin(suite):
    d = Path(os.environ.get("AG_LSP_SERVERS_DIR") or ROOT / "target" / "lsp-servers") / "node_modules" / ".bin"
    if not (d / "pyright-langserver").exists():
        suite.log("installing the language servers (scripts/lsp-servers)")
        subprocess.run([str(ROOT / "scripts" / "lsp-servers")], capture_output=True)
    return d if (d / "pyright-langserver").exists() else None


def edit(suite, env, cwd, file, old, new):
    t = time.perf_counter()
    r = subprocess.run(
        [suite.bin("ag-edit"), "--json", file, "--old", old, "--new", new],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t
    out = ""
    if r.returncode == 0:
        import json

        out = json.loads(r.stdout)["output"]
    return took, out


def measure(suite):
    bin_dir = servers_bin(suite)
    if bin_dir is None:
        return [Row.unavailable("ag-lsp diagnostics after an edit", "scripts/lsp-servers could not install the servers")]
    rows = []
    n = suite.runs(10, 3)
    for lang, p in PROJECTS.items():
        cwd = suite.tmp / f"lsp-{lang.lower()}"
        cwd.mkdir(exist_ok=True)
        for name, text in p["files"].items():
            (cwd / name).write_text(text)
        owner = subprocess.Popen(["sleep", "3600"])
        env = dict(suite.env, PATH=f"{bin_dir}:{suite.env.get('PATH', '')}", AG_SESSION_PID=str(owner.pid))
        on = dict(env, AG_LSP_DIAGNOSTICS="1", AG_LSP_WAIT="60")
        off = dict(env, AG_LSP_DIAGNOSTICS="0")
        try:
            cold, _ = edit(suite, on, cwd, p["file"], p["good"], p["bad"])
            edit(suite, on, cwd, p["file"], p["bad"], p["good"])
            warm, plain, chars = [], [], []
            for _ in range(n):
                t, with_diag = edit(suite, on, cwd, p["file"], p["good"], p["bad"])
                warm.append(t)
                t2, _ = edit(suite, on, cwd, p["file"], p["bad"], p["good"])
                warm.append(t2)
                t3, without = edit(suite, off, cwd, p["file"], p["good"], p["bad"])
                plain.append(t3)
                t4, _ = edit(suite, off, cwd, p["file"], p["bad"], p["good"])
                plain.append(t4)
                chars.append(len(with_diag) - len(without))
        finally:
            owner.send_signal(signal.SIGTERM)
            owner.wait()
        rows.append(
            Row.from_times(
                f"ag-edit with {lang} diagnostics, server warm",
                median(warm),
                median(plain),
                "ag-edit, diagnostics off",
                ("abs", 0.5),
                note="the whole edit, process start included; half the edits break a type, half fix it",
            )
        )
        rows.append(
            Row(
                f"ag-edit with {lang} diagnostics, cold start",
                f"{cold:.2f} s",
                "—",
                None,
                "—",
                None,
                "the session's first edit: starts the warm host and the server, waits for its first answer",
            )
        )
        rows.append(
            Row(
                f"characters {lang} diagnostics add to a breaking edit's result",
                str(int(median(chars))),
                "—",
                None,
                "—",
                None,
                "the new errors with their lines; a fixing edit adds a one-line note",
            )
        )
    return rows
