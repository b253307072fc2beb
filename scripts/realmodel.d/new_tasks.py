"""The new set of everyday tasks of scripts/realmodel (`--set new`).

The old set (tasks.py) is the one ag was tuned on; these were written after,
unlike it in shape, and are reported apart so that a change tuned to the old
set shows whether it carries over. Each is a tiny project in a language and
of a kind a person really asks a coding agent for, the prompt as they would
type it, a check, and a solution that `scripts/realmodel --check-tasks`
applies to prove the check fails before it and passes after.

Besides the keys of tasks.py, a task may have `setup`: a shell command run
in the project after its first commit (to leave changes for the agent to
commit). Every check runs with `$AGENT_ANSWER` naming a file that holds the
agent's final answer (the text of its last message that had any), so that a
question can be checked against what the agent said; a solution may write
to it.

Checks use python3, node, bash, grep and git (and coreutils) only.
"""

import hashlib


def unchanged(files, *names):
    """A check that each of `names` is as the project started with it."""
    parts = []
    for name in names:
        digest = hashlib.sha256(files[name].encode()).hexdigest()
        parts.append(
            f"python3 -c \"import hashlib,sys; sys.exit(hashlib.sha256(open('{name}','rb').read()).hexdigest() != '{digest}')\""
        )
    return " && ".join(parts)


def left_alone_and_answered(files, names, test):
    """A question's check: each of `names` as the project started with it,
    git seeing no change to a tracked file, and `test` (Python lines, with
    `answer` the agent's final answer and `os` and `re` imported) passing."""
    return unchanged(files, *names) + " && git diff --quiet HEAD && python3 - <<'EOF'\n" \
        "import os, re\n\nanswer = open(os.environ[\"AGENT_ANSWER\"]).read()\n" + test + "EOF"


# --- a bug in a shell script ------------------------------------------------

BACKUP_SH = """#!/usr/bin/env bash
# Copies every note (notes/*.txt) into backup/, then says how many.
set -e
mkdir -p backup
for f in $(ls notes/*.txt); do
    cp $f backup/
done
echo "backed up $(ls backup | wc -l) notes"
"""

BACKUP_FILES = {
    "backup.sh": BACKUP_SH,
    "notes/monday.txt": "Call the plumber.\n",
    "notes/shopping list.txt": "eggs\nmilk\n",
    "notes/ideas.md": "# Ideas\n\n- a garden\n",
}

BACKUP_FIXED = BACKUP_SH.replace("for f in $(ls notes/*.txt); do", "for f in notes/*.txt; do").replace(
    "cp $f backup/", 'cp "$f" backup/'
)

# --- a flag for an argparse program -----------------------------------------

CONVERT_PY = '''"""Converts a temperature in degrees Celsius."""
import argparse


def to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("celsius", type=float, help="the temperature in degrees Celsius")
    args = parser.parse_args()
    print(round(to_fahrenheit(args.celsius), 2))


if __name__ == "__main__":
    main()
'''

CONVERT_FIXED = CONVERT_PY.replace(
    '    args = parser.parse_args()\n    print(round(to_fahrenheit(args.celsius), 2))\n',
    '    parser.add_argument("--kelvin", action="store_true", help="print kelvin instead of Fahrenheit")\n'
    "    args = parser.parse_args()\n"
    "    if args.kelvin:\n"
    "        print(round(args.celsius + 273.15, 2))\n"
    "    else:\n"
    "        print(round(to_fahrenheit(args.celsius), 2))\n",
)

CONVERT_CHECK = r"""python3 - <<'EOF'
import subprocess, sys

def run(*args):
    r = subprocess.run([sys.executable, "convert.py", *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout.strip()

def number(text):
    return float(text.split()[0].rstrip("K"))

assert run("100") == "212.0" and run("-40") == "-40.0", "Fahrenheit changed"
assert abs(number(run("--kelvin", "100")) - 373.15) < 0.01
assert abs(number(run("0", "--kelvin")) - 273.15) < 0.01
assert abs(number(run("--kelvin", "-273.15"))) < 0.01
assert "--kelvin" in run("--help")
EOF"""

# --- a failing node test ----------------------------------------------------

SLUGIFY_JS = """// Turns a title into the last part of a URL: "Hello, World!" -> "hello-world".
function slugify(title) {
  return title
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(" ", "-");
}

module.exports = { slugify };
"""

SLUGIFY_TEST_JS = """const assert = require("node:assert");
const { slugify } = require("./slugify");

assert.strictEqual(slugify("Hello, World!"), "hello-world");
assert.strictEqual(slugify("  Trim me  "), "trim-me");
assert.strictEqual(slugify("Node.js in Action"), "nodejs-in-action");
assert.strictEqual(slugify("Two  spaces"), "two-spaces");
console.log("all tests passed");
"""

SLUGIFY_FILES = {"slugify.js": SLUGIFY_JS, "test.js": SLUGIFY_TEST_JS}

# --- a field for a dataclass and its JSON -----------------------------------

BOOKS_PY = '''"""The reading list, kept as JSON."""
import json
from dataclasses import dataclass


@dataclass
class Book:
    title: str
    author: str


def to_json(book):
    return json.dumps({"title": book.title, "author": book.author})


def from_json(text):
    data = json.loads(text)
    return Book(title=data["title"], author=data["author"])
'''

BOOKS_FIXED = (
    BOOKS_PY.replace("    author: str\n", "    author: str\n    year: int | None = None\n")
    .replace('"author": book.author}', '"author": book.author, "year": book.year}')
    .replace('author=data["author"])', 'author=data["author"], year=data.get("year"))')
)

BOOKS_CHECK = r"""python3 - <<'EOF'
import json
from books import Book, from_json, to_json

dune = Book("Dune", "Frank Herbert", year=1965)
assert from_json(to_json(dune)) == dune
assert json.loads(to_json(dune))["year"] == 1965
emma = Book("Emma", "Jane Austen")
assert emma.year is None
assert from_json(to_json(emma)) == emma
assert from_json('{"title": "Emma", "author": "Jane Austen"}') == emma
assert json.loads(to_json(dune))["title"] == "Dune"
EOF"""

# --- a row for a Markdown table ---------------------------------------------

TASKS_CLI_PY = '''"""A small command-line task list."""
import argparse
import json


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=25, metavar="N", help="show at most N tasks")
    parser.add_argument("--sort", choices=["name", "date"], default="name", metavar="KEY")
    parser.add_argument("--reverse", action="store_true", help="show the list in reverse order")
    args = parser.parse_args()
    with open("tasks.json") as f:
        tasks = json.load(f)
    tasks.sort(key=lambda t: t[args.sort], reverse=args.reverse)
    for t in tasks[: args.limit]:
        print(f"{t['date']}  {t['name']}")


if __name__ == "__main__":
    main()
'''

TASKS_README = """# tasks

A small command-line task list.

## Options

| Option | Default | What it does |
| --- | --- | --- |
| `--limit N` | 25 | Show at most N tasks. |
| `--sort KEY` | `name` | Sort by `name` or `date`. |

## Files

Tasks are kept in `tasks.json` next to the script.
"""

TABLE_FILES = {
    "cli.py": TASKS_CLI_PY,
    "README.md": TASKS_README,
    "tasks.json": '[{"name": "water the plants", "date": "2024-05-02"}, {"name": "call Sam", "date": "2024-05-01"}]\n',
}

TABLE_CHECK = r"""python3 - <<'EOF'
old = '''""" + TASKS_README + r"""'''.splitlines()
new = open("README.md").read().splitlines()
added = [line for line in new if line not in old]
assert len(new) == len(old) + 1 and len(added) == 1, "one line added, nothing else changed"
assert [line for line in new if line in old] == old, "the other lines kept, in order"
row = added[0]
i = new.index(row)
table = [j for j, line in enumerate(new) if line.startswith("|")]
assert i in table and table == list(range(table[0], table[-1] + 1)), "the row is in the table"
assert i > new.index("| --- | --- | --- |"), "below the header"
cells = row.strip().strip("|").split("|")
assert len(cells) == 3 and all(c.strip() for c in cells), cells
assert "--reverse" in cells[0], cells
EOF"""

# --- a function moved to another module --------------------------------------

HELPERS_PY = '''"""Small helpers for the timesheet."""


def parse_duration(text):
    """Minutes in "1h30m", "45m" or "2h"."""
    hours, _, rest = text.partition("h")
    if not rest and not text.endswith("h"):
        return int(text.rstrip("m"))
    minutes = int(rest.rstrip("m") or 0)
    return int(hours) * 60 + minutes


def format_minutes(minutes):
    return f"{minutes // 60}h{minutes % 60:02d}m"
'''

TIMEPARSE_PY = '''"""Reading the times people type."""


def parse_clock(text):
    """Minutes since midnight in "09:30"."""
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)
'''

TIMESHEET_PY = '''from helpers import format_minutes, parse_duration
from timeparse import parse_clock

ENTRIES = [("09:00", "1h30m"), ("13:15", "45m"), ("15:00", "2h")]


def main():
    total = 0
    for start, length in ENTRIES:
        minutes = parse_duration(length)
        total += minutes
        print(f"{start} (minute {parse_clock(start)}): {format_minutes(minutes)}")
    print(f"total: {format_minutes(total)}")


if __name__ == "__main__":
    main()
'''

TIMESHEET_OUTPUT = "09:00 (minute 540): 1h30m\n13:15 (minute 795): 0h45m\n15:00 (minute 900): 2h00m\ntotal: 4h15m"

_DURATION = HELPERS_PY[HELPERS_PY.index("def parse_duration") : HELPERS_PY.index("def format_minutes")]

MOVE_SOLUTION = (
    "python3 - <<'EOF'\n"
    "h = open('helpers.py').read()\n"
    f"d = {_DURATION!r}\n"
    "open('helpers.py', 'w').write(h.replace(d, ''))\n"
    "open('timeparse.py', 'a').write('\\n\\n' + d.rstrip() + '\\n')\n"
    "t = open('timesheet.py').read()\n"
    "t = t.replace('from helpers import format_minutes, parse_duration\\nfrom timeparse import parse_clock',\n"
    "              'from helpers import format_minutes\\nfrom timeparse import parse_clock, parse_duration')\n"
    "open('timesheet.py', 'w').write(t)\n"
    "EOF"
)

MOVE_CHECK = (
    "test \"$(python3 timesheet.py)\" = \"$(printf '" + TIMESHEET_OUTPUT.replace("\n", "\\n") + "')\" && "
    + r"""python3 - <<'EOF'
import ast

def defs(path):
    return {n.name for n in ast.parse(open(path).read()).body if isinstance(n, ast.FunctionDef)}

assert "parse_duration" not in defs("helpers.py") and "format_minutes" in defs("helpers.py")
assert {"parse_duration", "parse_clock"} <= defs("timeparse.py")
import timeparse
assert [timeparse.parse_duration(t) for t in ("1h30m", "45m", "2h")] == [90, 45, 120]
assert timeparse.parse_clock("09:30") == 570
EOF"""
)

# --- tests for an untested function ------------------------------------------

LIMITS_PY = '''"""Keeping numbers within bounds."""


def clamp(value, low, high):
    """value, or low if it is below low, or high if it is above high."""
    if low > high:
        raise ValueError("low is above high")
    return max(low, min(value, high))
'''

TEST_LIMITS_SOLUTION = """cat > test_limits.py <<'EOF'
import unittest

from limits import clamp


class ClampTest(unittest.TestCase):
    def test_inside(self):
        self.assertEqual(clamp(5, 0, 10), 5)

    def test_below(self):
        self.assertEqual(clamp(-3, 0, 10), 0)

    def test_above(self):
        self.assertEqual(clamp(42, 0, 10), 10)

    def test_bounds_the_wrong_way(self):
        with self.assertRaises(ValueError):
            clamp(1, 10, 0)


if __name__ == "__main__":
    unittest.main()
EOF"""

# The tests must run, pass, and fail on a clamp that is broken in either
# direction: a test file that never tries a value out of bounds proves
# nothing.
TEST_LIMITS_CHECK = (
    unchanged({"limits.py": LIMITS_PY}, "limits.py")
    + r""" && test -f test_limits.py && out=$(python3 -m unittest -v test_limits 2>&1) && echo "$out" | grep -q '^Ran [1-9]' && python3 - <<'EOF'
import os, shutil, subprocess, sys, tempfile

broken = {
    "no upper bound": "return max(low, value)",
    "no lower bound": "return min(value, high)",
}
source = open("limits.py").read()
for name, body in broken.items():
    d = tempfile.mkdtemp()
    try:
        shutil.copy("test_limits.py", d)
        with open(os.path.join(d, "limits.py"), "w") as f:
            f.write(source.replace("return max(low, min(value, high))", body))
        r = subprocess.run([sys.executable, "-m", "unittest", "test_limits"], cwd=d, capture_output=True)
    finally:
        shutil.rmtree(d)
    if r.returncode == 0:
        sys.exit(f"test_limits.py passes with a clamp that has {name}")
EOF"""
)

# --- an off-by-one in a loop --------------------------------------------------

PAGES_JS = """// Splits a list into pages of `size` items: pages([1, 2, 3, 4, 5], 2) -> [[1, 2], [3, 4], [5]].
function pages(items, size) {
  const out = [];
  for (let start = 0; start < items.length - 1; start += size) {
    out.push(items.slice(start, start + size));
  }
  return out;
}

module.exports = { pages };
"""

PAGES_CHECK = r"""node -e '
const assert = require("node:assert");
const { pages } = require("./pages");
assert.deepStrictEqual(pages([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
assert.deepStrictEqual(pages([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
assert.deepStrictEqual(pages(["a"], 3), [["a"]]);
assert.deepStrictEqual(pages([], 2), []);
assert.deepStrictEqual(pages([1, 2, 3, 4, 5, 6, 7], 3), [[1, 2, 3], [4, 5, 6], [7]]);
'"""

# --- a CSV header ------------------------------------------------------------

TOTAL_PY = '''"""Prints the total of the amount column of a sales CSV file."""
import csv
import sys


def total(path):
    s = 0.0
    with open(path, newline="") as f:
        for row in csv.reader(f):
            s += float(row[2])
    return s


if __name__ == "__main__":
    print(f"{total(sys.argv[1]):.2f}")
'''

SALES_CSV = """date,item,amount
2024-03-01,coffee,3.50
2024-03-01,bagel,2.25
2024-03-02,coffee,3.50
2024-03-03,"muffin, blueberry",2.75
"""

CSV_FILES = {"total.py": TOTAL_PY, "sales.csv": SALES_CSV}

# --- an .editorconfig --------------------------------------------------------

EDITORCONFIG_FILES = {
    "app.py": 'def main():\n    print("hi")\n\n\nif __name__ == "__main__":\n    main()\n',
    "Makefile": "run:\n\tpython3 app.py\n",
    "README.md": "# app\n\nSays hi. `make run` runs it.\n",
}

# What an editor that reads .editorconfig would use for each of a few files:
# sections in order, the later winning, each glob matched as the
# EditorConfig format says (a glob without a slash matches the name in any
# folder; *, **, ?, [...] and {a,b}).
EDITORCONFIG_CHECK = r"""test -f .editorconfig && python3 - <<'EOF'
import re

def glob_re(glob):
    anchored = "/" in glob
    glob = glob.lstrip("/")
    out, i = "", 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            out += ".*"; i += 2; continue
        out += {"*": "[^/]*", "?": "[^/]", "{": "(?:", "}": ")", ",": "|"}.get(c) or (c if c in "[]!-" else re.escape(c))
        i += 1
    out = out.replace("[!", "[^")
    return out if anchored else "(?:.*/)?" + out

sections, current = [], None
for line in open(".editorconfig"):
    line = line.strip()
    if not line or line[0] in "#;":
        continue
    if line.startswith("[") and line.endswith("]"):
        current = (glob_re(line[1:-1]), {})
        sections.append(current)
    elif "=" in line and current is not None:
        k, v = line.split("=", 1)
        current[1][k.strip().lower()] = v.strip().lower()

def props(path):
    p = {}
    for pattern, values in sections:
        if re.fullmatch(pattern, path):
            p.update(values)
    return p

for path in ("app.py", "lib/util.py"):
    p = props(path)
    assert p.get("indent_style") == "space" and p.get("indent_size") == "4", (path, p)
assert props("Makefile").get("indent_style") == "tab", props("Makefile")
for path in ("app.py", "Makefile", "README.md", "data/notes.txt"):
    assert props(path).get("insert_final_newline") == "true", (path, props(path))
EOF"""

# --- a commit --------------------------------------------------------------

CHANGELOG_BEFORE = "# Changes\n\n## 1.1.0\n\n- Starts faster.\n"
CHANGELOG_AFTER = "# Changes\n\n## 1.2.0\n\n- Exports the list as CSV.\n\n## 1.1.0\n\n- Starts faster.\n"

# The agent's environment has no git identity (a fresh HOME); how it commits
# anyway is its business. One new commit on the branch, with the message
# asked for, holding both changed files, and nothing left uncommitted.
COMMIT_CHECK = (
    'test "$(git rev-list --count HEAD)" -eq 2 && test "$(git log -1 --format=%s)" = "Release 1.2.0" '
    '&& test "$(git show HEAD:VERSION)" = 1.2.0 && git show HEAD:CHANGELOG.md | grep -qx "## 1.2.0" '
    '&& test "$(git diff --name-only HEAD~1 HEAD | tr \'\\n\' \' \')" = "CHANGELOG.md VERSION " '
    '&& test -z "$(git status --porcelain)"'
)

# --- a question --------------------------------------------------------------

SETTINGS_PY = '''"""Settings, read once at start."""
import os

# The port the first version used; the old health check still knocks there.
LEGACY_PORT = 8000
DEFAULT_PORT = 5177


def port():
    return int(os.environ.get("APP_PORT", DEFAULT_PORT))
'''

SERVER_PY = '''from http.server import HTTPServer, SimpleHTTPRequestHandler

import settings


def main():
    server = HTTPServer(("127.0.0.1", settings.port()), SimpleHTTPRequestHandler)
    server.serve_forever()


if __name__ == "__main__":
    main()
'''

# --- an environment variable -------------------------------------------------

NOTES_PY = '''"""Keeps notes, one file a day, in ./data."""
import datetime
import os
import sys

DATA_DIR = "data"


def add(text):
    os.makedirs(DATA_DIR, exist_ok=True)
    day = datetime.date.today().isoformat()
    with open(os.path.join(DATA_DIR, day + ".txt"), "a") as f:
        f.write(text + "\\n")


if __name__ == "__main__":
    add(" ".join(sys.argv[1:]))
'''

NOTES_FIXED = NOTES_PY.replace('DATA_DIR = "data"', 'DATA_DIR = os.environ.get("NOTES_DIR", "data")')

# --- a traceback -------------------------------------------------------------

USERS_PY = '''USERS = [
    {"name": "Ada", "email": "ada@example.com"},
    {"name": "Grace"},
    {"name": "Linus", "email": "linus@example.com"},
]


def contact_lines(users):
    return [f"{u['name']}: {u['email']}" for u in users]


if __name__ == "__main__":
    print("\\n".join(contact_lines(USERS)))
'''


NEW_TASKS = [
    {
        "name": "fix a shell script",
        "files": BACKUP_FILES,
        "prompt": 'Running bash backup.sh fails on "notes/shopping list.txt". Fix the script so that it backs up every note.',
        "check": (
            'rm -rf backup && test "$(bash backup.sh 2>/dev/null)" = "backed up 2 notes" '
            '&& test -f "backup/shopping list.txt" && test -f backup/monday.txt && test ! -e backup/ideas.md '
            '&& test -z "$(git status --porcelain -- notes)" '
            '&& t=$(mktemp -d) && mkdir "$t/notes" && cp backup.sh "$t/" && echo a > "$t/notes/a b  c.txt" '
            '&& echo b > "$t/notes/x.txt" && (cd "$t" && bash backup.sh >/dev/null 2>&1) '
            '&& cmp -s "$t/notes/a b  c.txt" "$t/backup/a b  c.txt" && test -f "$t/backup/x.txt"'
        ),
        "solution": "cat > backup.sh <<'EOF'\n" + BACKUP_FIXED + "EOF",
    },
    {
        "name": "add a command-line flag",
        "files": {"convert.py": CONVERT_PY},
        "prompt": "Add a --kelvin flag to convert.py: with it, the script prints the temperature in kelvin instead of Fahrenheit.",
        "check": CONVERT_CHECK,
        "solution": "cat > convert.py <<'EOF'\n" + CONVERT_FIXED + "EOF",
    },
    {
        "name": "make a node test pass",
        "files": SLUGIFY_FILES,
        "prompt": "node test.js fails. Fix slugify.js so that the tests pass.",
        "check": (
            "node test.js >/dev/null 2>&1 && " + unchanged(SLUGIFY_FILES, "test.js")
            + """ && node -e 'const a = require("node:assert"); const { slugify } = require("./slugify");
a.strictEqual(slugify("Make  it   work"), "make-it-work"); a.strictEqual(slugify("ABC 123"), "abc-123");'"""
        ),
        "solution": "sed -i 's|.replace(\" \", \"-\")|.replace(/ +/g, \"-\")|' slugify.js",
    },
    {
        "name": "add a dataclass field",
        "files": {"books.py": BOOKS_PY},
        "prompt": (
            "Add an optional year field to the Book dataclass in books.py (None when we don't know it), "
            "and make to_json and from_json keep it. JSON saved before, without a year, must still load."
        ),
        "check": BOOKS_CHECK,
        "solution": "cat > books.py <<'EOF'\n" + BOOKS_FIXED + "EOF",
    },
    {
        "name": "add a table row",
        "files": TABLE_FILES,
        "prompt": "cli.py has a --reverse option that the options table in README.md doesn't list. Add it to the table.",
        "check": unchanged(TABLE_FILES, "cli.py") + " && " + TABLE_CHECK,
        "solution": "sed -i '/^| `--sort KEY`/a | `--reverse` | off | Show the list in reverse order. |' README.md",
    },
    {
        "name": "move a function",
        "files": {"helpers.py": HELPERS_PY, "timeparse.py": TIMEPARSE_PY, "timesheet.py": TIMESHEET_PY},
        "prompt": "Move parse_duration from helpers.py to timeparse.py, where the other parsing lives, and fix the imports.",
        "check": MOVE_CHECK,
        "solution": MOVE_SOLUTION,
    },
    {
        "name": "write a unit test",
        "files": {"limits.py": LIMITS_PY},
        "prompt": "limits.py has no tests. Write test_limits.py with unittest tests for clamp.",
        "check": TEST_LIMITS_CHECK,
        "solution": TEST_LIMITS_SOLUTION,
    },
    {
        "name": "fix an off-by-one",
        "files": {"pages.js": PAGES_JS},
        "prompt": "pages() in pages.js loses the last page: pages([1, 2, 3, 4, 5], 2) gives [[1, 2], [3, 4]] without [5]. Fix it.",
        "check": PAGES_CHECK,
        "solution": "sed -i 's/start < items.length - 1;/start < items.length;/' pages.js",
    },
    {
        "name": "skip a csv header",
        "files": CSV_FILES,
        "prompt": "python3 total.py sales.csv crashes with a ValueError on the header line. Make it skip the header.",
        "check": (
            'test "$(python3 total.py sales.csv)" = 12.00 && t=$(mktemp) '
            "&& printf 'date,item,amount\\n2024-04-01,tea,1.25\\n2024-04-02,cake,4.00\\n' > \"$t\" "
            '&& test "$(python3 total.py "$t")" = 5.25 && ' + unchanged(CSV_FILES, "sales.csv")
        ),
        "solution": "sed -i 's/        for row in csv.reader(f):/        rows = csv.reader(f)\\n        next(rows)\\n        for row in rows:/' total.py",
    },
    {
        "name": "add an editorconfig",
        "files": EDITORCONFIG_FILES,
        "prompt": "Add an .editorconfig: Python files are indented with 4 spaces, the Makefile with tabs, and every file ends with a newline.",
        "check": EDITORCONFIG_CHECK,
        "solution": (
            "printf 'root = true\\n\\n[*]\\ninsert_final_newline = true\\n\\n[*.py]\\nindent_style = space\\n"
            "indent_size = 4\\n\\n[Makefile]\\nindent_style = tab\\n' > .editorconfig"
        ),
    },
    {
        "name": "commit a change",
        "files": {"VERSION": "1.1.0\n", "CHANGELOG.md": CHANGELOG_BEFORE, "list.py": "print('the list')\n"},
        "setup": "printf '1.2.0\\n' > VERSION && printf '" + CHANGELOG_AFTER.replace("\n", "\\n") + "' > CHANGELOG.md",
        "prompt": 'I bumped the version and wrote the changelog. Commit the changes with the message "Release 1.2.0".',
        "check": COMMIT_CHECK,
        "solution": "git -c user.name=someone -c user.email=someone@localhost commit -qam 'Release 1.2.0'",
    },
    {
        "name": "answer a question",
        "files": {"settings.py": SETTINGS_PY, "server.py": SERVER_PY},
        "prompt": "Which port does server.py listen on when APP_PORT is not set? Just tell me; don't change any files.",
        "check": 'test -z "$(git status --porcelain | grep -v __pycache__)" && grep -qw 5177 "$AGENT_ANSWER"',
        "solution": 'echo "It listens on 5177, settings.DEFAULT_PORT." > "$AGENT_ANSWER"',
    },
    {
        "name": "read an environment variable",
        "files": {"notes.py": NOTES_PY},
        "prompt": "Let the NOTES_DIR environment variable choose where notes.py keeps its notes; without it, keep using ./data.",
        "check": (
            'rm -rf data && t=$(mktemp -d) && NOTES_DIR="$t/n" python3 notes.py hello there '
            '&& grep -qx "hello there" "$t"/n/*.txt && test ! -e data '
            "&& python3 notes.py plain && grep -qx plain data/*.txt && rm -rf data"
        ),
        "solution": "cat > notes.py <<'EOF'\n" + NOTES_FIXED + "EOF",
    },
    {
        "name": "fix a crash from a traceback",
        "files": {"users.py": USERS_PY},
        "prompt": "python3 users.py crashes with KeyError: 'email' because Grace has no email. Show - for people without one instead.",
        "check": (
            "test \"$(python3 users.py)\" = \"$(printf 'Ada: ada@example.com\\nGrace: -\\nLinus: linus@example.com')\" "
            "&& python3 -c 'import users; assert \"email\" not in users.USERS[1]; "
            "assert users.contact_lines([{\"name\": \"X\"}, {\"name\": \"Y\", \"email\": \"y@z\"}]) == [\"X: -\", \"Y: y@z\"]'"
        ),
        "solution": "sed -i \"s/{u\\['email'\\]}/{u.get('email', '-')}/\" users.py",
    },
]
