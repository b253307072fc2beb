"""The late train set of everyday tasks of scripts/realmodel (`--set late_train`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break, second cup,
last orders, closing time, last call, small hours and bus stop sets, unlike
all nineteen in what is asked (only their tasks' titles and prompts were
skimmed, to keep clear of their shapes), by someone who had read no run of
any of them (no transcript, no result, no table, no note on one). It is the
kind of request a developer finishes on the late train home: each a
project of two to five short files, each done by changing a few lines, in
as many kinds of work: a JavaScript sign-up check whose `indexOf` taken as
a yes or no calls every name reserved but the first reserved one; a bash
error counter that `set -e` ends at its first `((errors++))`, since that
counts from 0; a C score report that takes `sizeof` of an array parameter
(a pointer) for the number of scores; a CSS button whose background names
a custom property that was never defined (`--brand-colour`, not
`--brand-color`); a .env pointed at the staging database; a Python script
that crashes on the import of a module it no longer uses, cleared of that
import and its other unused ones; a package's patch version bumped in
pyproject.toml and in its `__version__`; an SQL monthly report whose
`BETWEEN` a month's first and last day leaves out the last day after
midnight; a `--since DATE` option added to an argparse error summary; and a
question answered from two files (who is mailed when a nightly job fails:
the team is in the jobs file, its address in the teams file). Eight of the
ten prompts name no file.

The keys are those of bus_stop_tasks.py: the files, the prompt as a person
would type it, a check, and a solution that `scripts/realmodel
--check-tasks` applies to prove the check fails before it and passes after
(and one setup, which makes a script executable). The few helpers (a
file left as it was, a text replaced once in a file, a question answered
with nothing changed, a program made executable) are written
out here rather than taken from the other sets. Checks run the code (the
sign-up check in node on twelve names; the error counter in bash on a copy
with four logs; the score report built with gcc and run on seven lists;
the database line of the .env's reader; the visits summary in Python; the
package's `--version` and `__version__`; the monthly report on a fresh
SQLite database of nineteen orders for seven months; the error summary with
and without --since on a log of three weeks), parse the file (the
stylesheet rule by rule, every custom property resolved, against what it
resolved to before; the .env key by key; the script's syntax tree with
the imports set apart; pyproject.toml with tomllib) or read the answer
(with git to see that nothing changed), rather than look for one spelling,
and use python3 (3.11 or newer, stdlib), node, bash, gcc, git and
coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which.
"""

from checks import left_alone_and_answered, replaced, unchanged  # noqa: F401  (checks.py)


def executable(name):
    """A setup: `name` made executable, in the work tree and in the one commit."""
    return f"""set -e
chmod +x {name}
git add --chmod=+x {name}
git -c user.name=realmodel -c user.email=realmodel@localhost commit -q --amend --no-edit
"""


# --- a username that is not reserved (JavaScript; no file named) ------------------------------

SIGNUP_JS = """// Checks a new username before the account is made: node signup.js NAME
const RESERVED = ["admin", "root", "support", "help", "api", "www"];

function isReserved(name) {
  return RESERVED.indexOf(name.toLowerCase());
}

function checkUsername(name) {
  if (!/^[a-z0-9_]{3,20}$/i.test(name)) {
    return "usernames are 3 to 20 letters, digits or _";
  }
  if (isReserved(name)) {
    return `${name} is reserved`;
  }
  return null;
}

if (require.main === module) {
  const problem = checkUsername(process.argv[2] || "");
  console.log(problem || "ok");
  process.exitCode = problem ? 1 : 0;
}

module.exports = { RESERVED, isReserved, checkUsername };
"""

SIGNUP_README = """# signup

The checks the sign-up form runs before it makes an account.

    node signup.js NAME    # prints ok, or what is wrong with the name
"""

SIGNUP_FILES = {"signup.js": SIGNUP_JS, "README.md": SIGNUP_README}

# node signup.js on twelve names: admin, Admin, root, ROOT, www and help
# reserved (exit 1, "NAME is reserved"); sam_99, alice, administrator,
# helpdesk and rooty ok (exit 0, "ok"); ab too short as before. The
# RESERVED list as it was (node reads it out), README.md as it was. Fails
# `> 0` (admin still let through), `!RESERVED.indexOf(...)` (only admin
# reserved), a match on any part of the name (administrator and helpdesk
# refused), and admin taken off the list or moved down it.
SIGNUP_CHECK = unchanged(SIGNUP_FILES, "README.md") + r""" && python3 - <<'EOF'
import json, subprocess

r = subprocess.run(["node", "-e", "console.log(JSON.stringify(require('./signup.js').RESERVED))"],
                   capture_output=True, text=True, timeout=20)
assert r.returncode == 0 and json.loads(r.stdout) == ["admin", "root", "support", "help", "api", "www"], (r.stdout, r.stderr)
cases = [("admin", "admin is reserved"), ("Admin", "Admin is reserved"), ("root", "root is reserved"),
         ("ROOT", "ROOT is reserved"), ("www", "www is reserved"), ("help", "help is reserved"),
         ("sam_99", "ok"), ("alice", "ok"), ("administrator", "ok"), ("helpdesk", "ok"), ("rooty", "ok"),
         ("ab", "usernames are 3 to 20 letters, digits or _")]
for name, want in cases:
    r = subprocess.run(["node", "signup.js", name], capture_output=True, text=True, timeout=20)
    assert r.stdout.strip() == want, (name, r.stdout, r.stderr)
    assert r.returncode == (0 if want == "ok" else 1), (name, r.returncode)
EOF"""

SIGNUP_SOLUTION = replaced("signup.js", ("return RESERVED.indexOf(name.toLowerCase());",
                                         "return RESERVED.includes(name.toLowerCase());"))

# --- the error counter that stops at the first error (bash; no file named) -----------------

ERRCOUNT_SH = """#!/usr/bin/env bash
# Counts the ERROR lines in each log given: ./errcount.sh app.log worker.log
set -euo pipefail

for log in "$@"; do
  errors=0
  while IFS= read -r line; do
    if [[ $line == *ERROR* ]]; then
      ((errors++))
    fi
  done < "$log"
  echo "$log: $errors errors"
done
"""

ERRCOUNT_README = """# log-tools

- `errcount.sh LOG...`: how many ERROR lines each log has. The nightly cron job mails us what it prints.
"""

ERRCOUNT_FILES = {"errcount.sh": ERRCOUNT_SH, "README.md": ERRCOUNT_README}

# bash errcount.sh on a copy of the project, with four logs (no errors,
# one, three, and seven with lines saying "error" in small letters that
# are not counted): a line per log, in the order given, "LOG: N errors"
# (or "1 error"), exit status 0 and nothing on stderr, the same for one
# log at a time; README.md as it was. Fails `let errors++` (the same
# stop), `errors=$errors+1` (0+1+1), and counting every line that says
# error in any case.
ERRCOUNT_CHECK = unchanged(ERRCOUNT_FILES, "README.md") + r""" && python3 - <<'EOF'
import os, re, shutil, subprocess, tempfile

logs = {
    "quiet.log": ["2025-03-01 10:00:00 INFO started", "2025-03-01 10:05:00 INFO all good"],
    "one.log": ["2025-03-01 10:00:00 INFO started", "2025-03-01 10:01:00 ERROR disk full", "2025-03-01 10:02:00 INFO retry"],
    "three.log": ["2025-03-01 ERROR a", "2025-03-01 ERROR b", "2025-03-01 INFO c", "2025-03-01 ERROR d"],
    "seven.log": ["ERROR x"] * 7 + ["INFO no error here", "WARNING error rate rising"],
}
want = {"quiet.log": 0, "one.log": 1, "three.log": 3, "seven.log": 7}
with tempfile.TemporaryDirectory() as d:
    work = os.path.join(d, "work")
    shutil.copytree(".", work, ignore=shutil.ignore_patterns(".git"))
    for name, lines in logs.items():
        with open(os.path.join(work, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    order = ["one.log", "quiet.log", "seven.log", "three.log"]
    for args in [order] + [[name] for name in order]:
        r = subprocess.run(["bash", "errcount.sh"] + args, cwd=work, capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (args, r.returncode, r.stdout, r.stderr)
        assert not r.stderr.strip(), (args, r.stderr)
        lines = r.stdout.splitlines()
        assert len(lines) == len(args), (args, r.stdout)
        for name, line in zip(args, lines):
            assert re.fullmatch(rf"{re.escape(name)}: {want[name]} errors?", line.strip()), (name, line)
EOF"""

ERRCOUNT_SOLUTION = replaced("errcount.sh", ("((errors++))", "errors=$((errors + 1))"))

# --- the average of only two scores (C; names the program) --------------------------------------

SCORES_C = """/* Prints the average and the best of the scores given: ./scores 7 9 4 */
#include <stdio.h>
#include <stdlib.h>

static void report(const int scores[])
{
    size_t n = sizeof(scores) / sizeof(scores[0]);
    long sum = 0;
    int best = scores[0];

    for (size_t i = 0; i < n; i++) {
        sum += scores[i];
        if (scores[i] > best)
            best = scores[i];
    }
    printf("average: %.2f\\n", (double)sum / n);
    printf("best: %d\\n", best);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCORE...\\n", argv[0]);
        return 2;
    }
    int *scores = malloc((size_t)(argc - 1) * sizeof *scores);
    if (scores == NULL) {
        perror("scores");
        return 1;
    }
    for (int i = 1; i < argc; i++)
        scores[i - 1] = atoi(argv[i]);
    report(scores);
    free(scores);
    return 0;
}
"""

SCORES_MAKEFILE = """CFLAGS ?= -std=c11 -Wall -O2

scores: scores.c
\t$(CC) $(CFLAGS) -o $@ scores.c

.PHONY: clean
clean:
\trm -f scores
"""

SCORES_FILES = {"scores.c": SCORES_C, "Makefile": SCORES_MAKEFILE}

# scores.c built with gcc into a folder of its own and run on seven lists
# (one score, two, four, ten, all negative, a zero among them, 1 to 3): the
# average to two places and the best, as before; with no score, the usage
# on stderr and a failing status. Fails the count written in as 4,
# `sizeof(scores) / sizeof(int)` (the same 2 by another name), and the
# count taken as argc (one score too many, read past the end).
SCORES_CHECK = r"""python3 - <<'EOF'
import os, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    exe = os.path.join(d, "scores")
    r = subprocess.run(["gcc", "-std=c11", "-O2", "-o", exe, "scores.c", "-lm"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    cases = [([10, 20, 30, 90], "37.50", 90), ([7], "7.00", 7), ([3, 5], "4.00", 5),
             (list(range(1, 11)), "5.50", 10), ([-5, -2, -9], "-5.33", -2), ([100, 0, 0], "33.33", 100),
             ([1, 2, 3], "2.00", 3)]
    for scores, average, best in cases:
        r = subprocess.run([exe] + [str(s) for s in scores], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, (scores, r.returncode, r.stderr)
        assert r.stdout.split("\n")[:2] == [f"average: {average}", f"best: {best}"], (scores, r.stdout)
    r = subprocess.run([exe], capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and "usage" in r.stderr.lower() and not r.stdout.strip(), (r.returncode, r.stdout, r.stderr)
EOF"""

SCORES_SOLUTION = replaced("scores.c",
                           ("static void report(const int scores[])\n{\n    size_t n = sizeof(scores) / sizeof(scores[0]);\n",
                            "static void report(const int scores[], size_t n)\n{\n"),
                           ("report(scores);", "report(scores, (size_t)(argc - 1));"))

# --- the buy button's lost background (CSS; no file named) --------------------------------------

PRODUCT_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Walnut desk lamp</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main class="product">
    <h1>Walnut desk lamp</h1>
    <p class="price">&pound;64.00</p>
    <p class="note">Free delivery on orders over &pound;50.</p>
    <button class="buy" type="button">Buy</button>
  </main>
</body>
</html>
"""

PRODUCT_CSS = """:root {
  --brand-color: #2e7d32;
  --brand-dark: #1b5e20;
  --text: #222;
  --muted: #666;
  --radius: 6px;
}

body {
  margin: 0;
  font-family: system-ui, sans-serif;
  color: var(--text);
}

.product {
  max-width: 40rem;
  margin: 2rem auto;
  padding: 0 1rem;
}

.price {
  color: var(--brand-color);
  font-size: 1.5rem;
  font-weight: bold;
}

.note {
  color: var(--muted);
}

.buy {
  background: var(--brand-colour);
  color: #fff;
  border: none;
  border-radius: var(--radius);
  padding: 0.75rem 1.5rem;
  font-size: 1rem;
  cursor: pointer;
}

.buy:hover {
  background: var(--brand-dark);
}
"""

PRODUCT_FILES = {"index.html": PRODUCT_HTML, "style.css": PRODUCT_CSS}

# style.css read rule by rule, each value with its var()s resolved from
# :root (fallbacks too): .buy's background (or background-color, the last
# one given) comes to the brand green, #2e7d32; every other property of
# every rule resolves to what it did before (so .price is still green and
# the hover still the dark green); index.html as it was. Fails the custom
# property renamed to --brand-colour in :root (the price loses its
# colour), the hover's dark green used for the button, and a fix in the
# HTML's markup.
BUY_CHECK = unchanged(PRODUCT_FILES, "index.html") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(PRODUCT_CSS) + r"""


def rules(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        decls = []
        for decl in body.split(";"):
            if ":" in decl:
                prop, value = decl.split(":", 1)
                decls.append((prop.strip().lower(), " ".join(value.split())))
        for selector in selectors.split(","):
            out.setdefault(" ".join(selector.split()), []).extend(decls)
    return out


def resolved(text):
    found = rules(text)
    custom = {p: v for p, v in found.get(":root", []) if p.startswith("--")}

    def resolve(value, depth=0):
        assert depth < 10, value
        def one(m):
            name, fallback = m[1].strip(), m[2]
            if name in custom:
                return resolve(custom[name], depth + 1)
            return resolve(fallback.strip(), depth + 1) if fallback is not None else "<undefined " + name + ">"
        return re.sub(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*))?\)", one, value).strip().lower()

    return {sel: [(p, resolve(v)) for p, v in decls if not p.startswith("--")] for sel, decls in found.items()}


def last(decls):
    out = {}
    for p, v in decls:
        out["background" if p in ("background", "background-color") else p] = v
    return out


before, after = resolved(ORIGINAL), resolved(open("style.css").read())
assert set(after) == set(before), (sorted(after), sorted(before))
for sel in before:
    want, got = last(before[sel]), last(after[sel])
    if sel == ".buy":
        green = got.pop("background", None)
        assert green in ("#2e7d32", "rgb(46, 125, 50)", "rgb(46,125,50)", "rgb(46 125 50)"), (".buy background", green)
        want.pop("background")
    assert got == want, (sel, got, want)
EOF"""

BUY_SOLUTION = replaced("style.css", ("background: var(--brand-colour);", "background: var(--brand-color);"))

# --- point the .env at staging (.env; no file named) --------------------------------------------

DOT_ENV = """# Local settings for the shop app. Not for production.
APP_ENV=development
DEBUG=true

# Database
DB_HOST=localhost
DB_PORT=5432
DB_NAME=shop_dev
DB_USER=shop
DB_PASSWORD=s3cret-Pa55

REDIS_URL=redis://localhost:6379/0
SECRET_KEY=dev-only-not-secret
"""

ENV_EXAMPLE = """# Copy this to .env and fill it in.
APP_ENV=development
DEBUG=true

# Database
DB_HOST=localhost
DB_PORT=5432
DB_NAME=shop_dev
DB_USER=shop
DB_PASSWORD=

REDIS_URL=redis://localhost:6379/0
SECRET_KEY=
"""

DB_PY = '''"""Says which database the app will use: python3 db.py"""
import os


def load_env(path=".env"):
    """The KEY=value lines of `path`, without comments and blank lines."""
    values = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip("\\"'")
    return values


def database():
    env = {**load_env(), **os.environ}
    return {"host": env["DB_HOST"], "port": int(env.get("DB_PORT", 5432)), "name": env["DB_NAME"],
            "user": env["DB_USER"]}


if __name__ == "__main__":
    db = database()
    print(f"database {db['name']} on {db['host']}:{db['port']} as {db['user']}")
'''

STAGING_FILES = {".env": DOT_ENV, ".env.example": ENV_EXAMPLE, "db.py": DB_PY}

# .env read as db.py reads it: the same keys and values as before but for
# DB_HOST (db.staging.internal) and DB_NAME (shop_staging); python3 db.py
# (with no DB_ variable in its environment) then says database
# shop_staging on db.staging.internal:5432 as shop; .env.example and db.py
# as they were. Fails .env.example changed instead, the host given as a
# URL, the port or the password changed, the local database kept beside
# it under the same keys, and db.py's reading changed instead.
STAGING_CHECK = unchanged(STAGING_FILES, ".env.example", "db.py") + r""" && python3 - <<'EOF'
import os, subprocess

from db import load_env

before = {"APP_ENV": "development", "DEBUG": "true", "DB_HOST": "localhost", "DB_PORT": "5432", "DB_NAME": "shop_dev",
          "DB_USER": "shop", "DB_PASSWORD": "s3cret-Pa55", "REDIS_URL": "redis://localhost:6379/0",
          "SECRET_KEY": "dev-only-not-secret"}
assert load_env(".env.example").keys() == before.keys()
lines = [line.split("=", 1)[0].strip() for line in open(".env") if line.strip() and not line.strip().startswith("#")]
assert len(lines) == len(set(lines)), ("a key given twice", lines)
after = load_env()
assert after == {**before, "DB_HOST": "db.staging.internal", "DB_NAME": "shop_staging"}, after
env = {k: v for k, v in os.environ.items() if not k.startswith("DB_")}
r = subprocess.run(["python3", "db.py"], env=env, capture_output=True, text=True, timeout=20)
assert r.returncode == 0, r.stderr
assert r.stdout.strip() == "database shop_staging on db.staging.internal:5432 as shop", r.stdout
EOF"""

STAGING_SOLUTION = replaced(".env", ("DB_HOST=localhost\n", "DB_HOST=db.staging.internal\n"),
                            ("DB_NAME=shop_dev\n", "DB_NAME=shop_staging\n"))

# --- an import of a module no longer used (Python; names the file) ------------------------------

STATS_PY = '''"""Summarises the visits log: python3 stats.py visits.csv"""
import csv
import json
import os
import sys
import yaml
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterable

from helpers import percent, plural


def read_visits(path: Path):
    with path.open(newline="") as f:
        return [(row["page"], datetime.fromisoformat(row["time"])) for row in csv.DictReader(f)]


def summary(visits: Iterable[tuple]) -> list[str]:
    visits = list(visits)
    pages = Counter(page for page, _ in visits)
    days = {time.date() for _, time in visits}
    lines = [f"{len(visits)} {plural(len(visits), 'visit')} on {len(days)} {plural(len(days), 'day')}"]
    for page, count in pages.most_common(3):
        lines.append(f"{page}: {count} ({percent(count, len(visits))})")
    return lines


def main(argv):
    if len(argv) != 2:
        print("usage: python3 stats.py VISITS.CSV", file=sys.stderr)
        return 2
    for line in summary(read_visits(Path(argv[1]))):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

HELPERS_PY = '''"""Small helpers for the reports."""


def plural(n, word):
    return word if n == 1 else word + "s"


def percent(part, whole):
    return f"{100 * part / whole:.0f}%" if whole else "0%"
'''

VISITS_CSV = """page,time
/,2025-03-01T09:12:00
/pricing,2025-03-01T09:15:30
/,2025-03-01T11:02:10
/blog/launch,2025-03-02T08:45:00
/,2025-03-02T10:00:00
/pricing,2025-03-03T14:20:00
/,2025-03-03T16:35:45
/contact,2025-03-03T17:01:00
"""

STATS_OUTPUT = """8 visits on 3 days
/: 4 (50%)
/pricing: 2 (25%)
/blog/launch: 1 (12%)
"""

STATS_FILES = {"stats.py": STATS_PY, "helpers.py": HELPERS_PY, "visits.csv": VISITS_CSV}

# stats.py, parsed: every name an import binds is used, and everything but
# the imports is as it was (the syntax trees compared); python3 stats.py
# visits.csv prints the summary it would have printed; helpers.py and
# visits.csv as they were. Fails yaml alone taken out (json, os,
# defaultdict and timedelta still unused), Iterable taken out too (it is
# used, in a type hint: a NameError), `import yaml` put in a try block,
# and the code changed to use what was imported.
STATS_CHECK = unchanged(STATS_FILES, "helpers.py", "visits.csv") + r""" && python3 - <<'EOF'
import ast, os, subprocess

ORIGINAL = """ + repr(STATS_PY) + r"""


def rest(tree):
    return [ast.dump(node) for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))]


tree = ast.parse(open("stats.py").read())
assert rest(tree) == rest(ast.parse(ORIGINAL)), "only the imports may change"
bound = set()
for node in ast.walk(tree):
    if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
        for alias in node.names:
            bound.add(alias.asname or alias.name.split(".")[0])
used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
assert not bound - used, ("unused imports", sorted(bound - used))
r = subprocess.run(["python3", "stats.py", "visits.csv"], capture_output=True, text=True, timeout=20,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
assert r.returncode == 0 and r.stdout == """ + repr(STATS_OUTPUT) + r""", (r.stdout, r.stderr)
EOF"""

STATS_SOLUTION = replaced("stats.py", ("import json\nimport os\n", ""), ("import yaml\n", ""),
                          ("Counter, defaultdict\n", "Counter\n"), ("datetime, timedelta\n", "datetime\n"))

# --- bump the patch version (pyproject.toml and __init__.py; no file named) ---------------------

SUNDIAL_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "sundial"
version = "2.3.9"
description = "Prints today's sunrise and sunset for a city."
readme = "README.md"
requires-python = ">=3.9"
dependencies = ["tzdata>=2024.1"]

[project.scripts]
sundial = "sundial.__main__:main"
"""

SUNDIAL_INIT = '''"""Sunrise and sunset times."""

__version__ = "2.3.9"
'''

SUNDIAL_MAIN = '''"""The sundial command: sundial CITY"""
import argparse

from sundial import __version__

TIMES = {"london": ("06:12", "17:58"), "oslo": ("06:41", "17:49"), "madrid": ("07:35", "19:20")}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sundial", description="Prints today's sunrise and sunset for a city.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("city")
    args = parser.parse_args(argv)
    times = TIMES.get(args.city.lower())
    if times is None:
        parser.error(f"no times for {args.city}")
    print(f"{args.city}: sunrise {times[0]}, sunset {times[1]}")


if __name__ == "__main__":
    main()
'''

SUNDIAL_CHANGELOG = """# Changelog

## 2.3.9 - 2025-02-11
- Sunset times for cities west of Greenwich were an hour late in winter.

## 2.3.8 - 2025-01-20
- Oslo added.

## 2.3.0 - 2024-11-02
- The --version option.
"""

SUNDIAL_README = """# sundial

Prints today's sunrise and sunset for a city.

    pip install .
    sundial london
"""

SUNDIAL_FILES = {"pyproject.toml": SUNDIAL_PYPROJECT, "src/sundial/__init__.py": SUNDIAL_INIT,
                 "src/sundial/__main__.py": SUNDIAL_MAIN, "CHANGELOG.md": SUNDIAL_CHANGELOG,
                 "README.md": SUNDIAL_README}

# pyproject.toml, read with tomllib: as it was but for project.version,
# now "2.3.10"; sundial.__version__ is "2.3.10" and `python3 -m sundial
# --version` (from src) says sundial 2.3.10; the changelog keeps every
# line it had, in order (a new entry is welcome); README.md and
# __main__.py as they were. Fails 2.4.0 (a minor release), 2.3.91, the
# version bumped in one file only, and 2.3.9 rewritten in the changelog.
SUNDIAL_CHECK = unchanged(SUNDIAL_FILES, "README.md", "src/sundial/__main__.py") + r""" && python3 - <<'EOF'
import os, subprocess, tomllib

before = tomllib.loads(""" + repr(SUNDIAL_PYPROJECT) + r""")
with open("pyproject.toml", "rb") as f:
    after = tomllib.load(f)
before["project"]["version"] = "2.3.10"
assert after == before, after
env = {**os.environ, "PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1"}
r = subprocess.run(["python3", "-c", "import sundial; print(sundial.__version__)"], env=env, capture_output=True,
                   text=True, timeout=20)
assert r.returncode == 0 and r.stdout.strip() == "2.3.10", (r.stdout, r.stderr)
r = subprocess.run(["python3", "-m", "sundial", "--version"], env=env, capture_output=True, text=True, timeout=20)
assert r.returncode == 0 and r.stdout.strip() == "sundial 2.3.10", (r.stdout, r.stderr)
old = """ + repr(SUNDIAL_CHANGELOG) + r""".splitlines()
new = iter(open("CHANGELOG.md").read().splitlines())
assert all(line in new for line in old), "the changelog lost or changed a line"
EOF"""

SUNDIAL_SOLUTION = (replaced("pyproject.toml", ('version = "2.3.9"', 'version = "2.3.10"')) + "\n"
                    + replaced("src/sundial/__init__.py", ('"2.3.9"', '"2.3.10"')))

# --- the month's last day left out (SQL; no file named) -----------------------------------------

SALES_SCHEMA = """CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    product TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    created_at TEXT NOT NULL  -- UTC, as 'YYYY-MM-DD HH:MM:SS'
);
"""

SALES_SQL = """-- Sales per product in one month. :first and :last are the month's first and last days, as YYYY-MM-DD.
SELECT product, COUNT(*) AS orders, SUM(amount_cents) AS total_cents
FROM orders
WHERE created_at BETWEEN :first AND :last
GROUP BY product
ORDER BY total_cents DESC, product;
"""

SALES_REPORT_PY = '''"""Sales per product for one month: python3 report.py 2025-03 [shop.db]"""
import calendar
import sqlite3
import sys
from pathlib import Path


def month_bounds(month):
    """The first and last days of `month` (like 2025-03), as YYYY-MM-DD."""
    year, mon = (int(part) for part in month.split("-"))
    last_day = calendar.monthrange(year, mon)[1]
    return f"{year:04d}-{mon:02d}-01", f"{year:04d}-{mon:02d}-{last_day:02d}"


def monthly_sales(db, month):
    first, last = month_bounds(month)
    query = Path(__file__).with_name("monthly_sales.sql").read_text()
    return db.execute(query, {"first": first, "last": last}).fetchall()


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: python3 report.py YYYY-MM [DATABASE]", file=sys.stderr)
        return 2
    db = sqlite3.connect(argv[2] if len(argv) == 3 else "shop.db")
    print(f"sales in {argv[1]}")
    for product, orders, total_cents in monthly_sales(db, argv[1]):
        print(f"{product}: {orders} orders, {total_cents / 100:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

SALES_FILES = {"schema.sql": SALES_SCHEMA, "monthly_sales.sql": SALES_SQL, "report.py": SALES_REPORT_PY}

# A fresh SQLite database made from schema.sql with nineteen orders, some
# at midnight and in the last second of a month's last day, one at 23:59:30
# and some on the next month's first day, and python3 report.py for
# seven months (a long one, a short one, a leap February, two Decembers a
# year apart, a month with nothing sold, one with a single order on its
# last evening): the
# products, their orders and totals as the month really had them, the
# biggest first; schema.sql as it was. Fails `<= :last || ' 23:59'` (the
# order at 23:59:30 left out), the next month's first day let in
# (`date(created_at) BETWEEN :first AND date(:last, '+1 day')`), and
# months counted by strftime('%m') alone (two years' Decembers run
# together).
SALES_CHECK = unchanged(SALES_FILES, "schema.sql") + r""" && python3 - <<'EOF'
import os, sqlite3, subprocess, tempfile
from collections import defaultdict

orders = [
    ("lamp", 6400, "2025-02-28 23:59:59"), ("desk", 18900, "2025-03-01 00:00:00"),
    ("lamp", 6400, "2025-03-07 12:30:00"), ("chair", 9900, "2025-03-15 08:00:00"),
    ("lamp", 6400, "2025-03-31 00:00:00"), ("chair", 9900, "2025-03-31 09:15:00"),
    ("desk", 18900, "2025-03-31 23:59:30"), ("shelf", 4500, "2025-03-31 23:59:59"),
    ("desk", 18900, "2025-04-01 00:00:00"), ("chair", 9900, "2025-04-30 18:00:00"),
    ("lamp", 6400, "2024-02-29 21:10:00"), ("shelf", 4500, "2024-02-01 00:00:00"),
    ("lamp", 6400, "2024-03-01 00:00:00"), ("desk", 18900, "2024-12-31 22:00:00"),
    ("shelf", 4500, "2024-12-01 10:00:00"), ("lamp", 6400, "2025-12-31 23:00:00"),
    ("chair", 9900, "2026-01-01 00:00:00"), ("shelf", 4500, "2025-06-30 20:45:00"),
    ("chair", 9900, "2025-12-24 10:00:00"),
]


def expected(month):
    totals = defaultdict(lambda: [0, 0])
    for product, cents, when in orders:
        if when[:7] == month:
            totals[product][0] += 1
            totals[product][1] += cents
    lines = [f"sales in {month}"]
    for product, (n, cents) in sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0])):
        lines.append(f"{product}: {n} orders, {cents / 100:.2f}")
    return lines


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "shop.db")
    db = sqlite3.connect(path)
    db.executescript(open("schema.sql").read())
    db.executemany("INSERT INTO orders (product, amount_cents, created_at) VALUES (?, ?, ?)", orders)
    db.commit()
    db.close()
    for month in ("2025-03", "2025-04", "2024-02", "2024-12", "2025-05", "2025-06", "2025-12"):
        r = subprocess.run(["python3", "report.py", month, path], capture_output=True, text=True, timeout=20,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        assert r.returncode == 0, (month, r.stderr)
        assert r.stdout.splitlines() == expected(month), (month, r.stdout, expected(month))
EOF"""

SALES_SOLUTION = replaced("monthly_sales.sql", ("WHERE created_at BETWEEN :first AND :last",
                                                "WHERE date(created_at) BETWEEN :first AND :last"))

# --- a --since option (Python argparse; no file named) ------------------------------------------

ERRSUM_PY = '''"""Counts the errors in a log, by message: python3 errsum.py app.log"""
import argparse
import re
from collections import Counter

LINE = re.compile(r"^(\\d{4}-\\d{2}-\\d{2}) (\\d{2}:\\d{2}:\\d{2}) (ERROR|WARNING|INFO) (.*)$")


def count_errors(lines):
    """How many times each error message comes up in `lines`."""
    counts = Counter()
    for line in lines:
        m = LINE.match(line.rstrip("\\n"))
        if m and m[3] == "ERROR":
            counts[m[4]] += 1
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description="Counts the errors in a log, by message.")
    parser.add_argument("log", help="the log file")
    parser.add_argument("--top", type=int, default=10, help="show this many messages (default 10)")
    args = parser.parse_args(argv)
    with open(args.log) as f:
        counts = count_errors(f)
    for message, n in counts.most_common(args.top):
        print(f"{n:5d}  {message}")
    if not counts:
        print("no errors")


if __name__ == "__main__":
    main()
'''

ERRSUM_README = """# errsum

    python3 errsum.py app.log            # every error message and how often it came up, most first
    python3 errsum.py --top 3 app.log    # only the three most common
"""

ERRSUM_FILES = {"errsum.py": ERRSUM_PY, "README.md": ERRSUM_README}

# python3 errsum.py on a log of three weeks (a message per day or so, with
# INFO and WARNING lines between): without --since, what it printed
# before; with --since on the log's first day, a day before it, a day in
# the middle that has errors (it counts), a day without a line, the last
# day, and a day after it ("no errors"), the counts of the errors from
# that day on only, each message once, most first; with --top 2 as well,
# the two most common of those; and --help names --since. Fails a date
# compared after the day (that day's errors left out), --since taken as
# the end rather than the start, and --top ignored once --since is given.
ERRSUM_CHECK = r"""python3 - <<'EOF'
import os, re, subprocess, tempfile
from collections import Counter

days = [f"2025-03-{d:02d}" for d in range(1, 22) if d not in (9, 10)]
messages = ["db timeout", "disk full", "payment declined", "smtp refused", "cache miss storm"]
lines, errors = [], []
for i, day in enumerate(days):
    lines.append(f"{day} 08:00:00 INFO started")
    for k in range(1 + i % 3):
        message = messages[(i * 2 + k) % len(messages)] if i % 4 else messages[0]
        lines.append(f"{day} {9 + k:02d}:15:00 ERROR {message}")
        errors.append((day, message))
    lines.append(f"{day} 18:00:00 WARNING slow request")


def run(*args):
    r = subprocess.run(["python3", "errsum.py", *args], capture_output=True, text=True, timeout=20,
                       env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def parse(out):
    got = []
    for line in out.splitlines():
        m = re.fullmatch(r"\s*(\d+)\s+(.+?)\s*", line)
        assert m, (line, out)
        got.append((m[2], int(m[1])))
    return got


with tempfile.TemporaryDirectory() as d:
    log = os.path.join(d, "app.log")
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    ORIGINAL = """ + repr(ERRSUM_PY) + r"""
    old = os.path.join(d, "old.py")
    with open(old, "w") as f:
        f.write(ORIGINAL)
    r = subprocess.run(["python3", old, log], capture_output=True, text=True, timeout=20)
    assert run(log) == r.stdout, ("without --since", run(log), r.stdout)
    r = subprocess.run(["python3", old, "--top", "2", log], capture_output=True, text=True, timeout=20)
    assert run("--top", "2", log) == r.stdout, "--top without --since"
    for since in ("2025-03-01", "2025-02-27", "2025-03-12", "2025-03-09", "2025-03-21", "2025-03-22", "2025-03-17"):
        want = Counter(m for day, m in errors if day >= since)
        for top in (None, 2):
            args = (["--top", str(top)] if top else []) + ["--since", since, log]
            out = run(*args)
            if not want:
                assert out.strip() == "no errors", (args, out)
                continue
            got = parse(out)
            counts = [n for _, n in got]
            assert counts == sorted(counts, reverse=True), (args, out)
            if top is None:
                assert dict(got) == dict(want) and len(got) == len(want), (args, got, dict(want))
            else:
                assert len(got) == min(top, len(want)) and all(want[m] == n for m, n in got), (args, got, dict(want))
                assert counts == sorted(want.values(), reverse=True)[:top], (args, got, dict(want))
    r = subprocess.run(["python3", "errsum.py", "--help"], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0 and "--since" in r.stdout, r.stdout
EOF"""

ERRSUM_SOLUTION = replaced(
    "errsum.py",
    ("def count_errors(lines):\n", "def count_errors(lines, since=None):\n"),
    ("        if m and m[3] == \"ERROR\":\n", "        if m and m[3] == \"ERROR\" and (since is None or m[1] >= since):\n"),
    ("    args = parser.parse_args(argv)\n",
     "    parser.add_argument(\"--since\", metavar=\"YYYY-MM-DD\", help=\"only count errors from this day on\")\n"
     "    args = parser.parse_args(argv)\n"),
    ("counts = count_errors(f)", "counts = count_errors(f, args.since)"))

# --- who hears about a failed job (a question; no file named) -----------------------------------

JOBS_TOML = """# The jobs scheduler.py runs. A job without `notify` mails the default team when it fails.
[defaults]
notify = "ops"
retries = 2

[jobs.nightly-import]
schedule = "0 2 * * *"
command = "python3 import_orders.py"
notify = "data"

[jobs.cleanup]
schedule = "30 4 * * *"
command = "bash cleanup.sh"

[jobs.sitemap]
schedule = "0 5 * * 1"
command = "python3 build_sitemap.py"
notify = "web"
"""

TEAMS_INI = """; Who gets mailed for each team.
[ops]
lead = Ali Haddad
email = ops-alerts@example.com

[data]
lead = Priya Shah
email = priya@example.com

[web]
lead = Tom Berg
email = web@example.com
"""

SCHEDULER_PY = '''"""Runs a job from jobs.toml and mails its team if it fails: python3 scheduler.py JOB"""
import configparser
import smtplib
import subprocess
import sys
import tomllib
from email.message import EmailMessage


def load():
    with open("jobs.toml", "rb") as f:
        jobs = tomllib.load(f)
    teams = configparser.ConfigParser()
    teams.read("teams.ini")
    return jobs, teams


def recipient(name, jobs, teams):
    """The address that hears about job `name` failing."""
    team = jobs["jobs"][name].get("notify", jobs["defaults"]["notify"])
    return teams[team]["email"]


def run(name):
    jobs, teams = load()
    job = jobs["jobs"][name]
    for _ in range(1 + jobs["defaults"]["retries"]):
        if subprocess.run(job["command"], shell=True).returncode == 0:
            return 0
    message = EmailMessage()
    message["Subject"] = f"job {name} failed"
    message["From"] = "scheduler@example.com"
    message["To"] = recipient(name, jobs, teams)
    message.set_content(f"{job['command']} failed {1 + jobs['defaults']['retries']} times.")
    with smtplib.SMTP("localhost") as server:
        server.send_message(message)
    return 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
'''

JOBS_README = """# jobs

Our scheduled jobs. cron runs `python3 scheduler.py JOB` for each at the times in jobs.toml.
"""

ONCALL_FILES = {"jobs.toml": JOBS_TOML, "teams.ini": TEAMS_INI, "scheduler.py": SCHEDULER_PY,
                "README.md": JOBS_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer gives Priya (by name or by address). Fails
# an empty answer, "the data team" with no one named (jobs.toml alone),
# the default ops-alerts@example.com alone, and a changed file.
ONCALL_CHECK = left_alone_and_answered(ONCALL_FILES, tuple(ONCALL_FILES), r"""
assert re.search(r"priya", answer, re.I), answer
""")

ONCALL_SOLUTION = r"""echo "Priya (priya@example.com): the nightly import notifies the data team, whose email in teams.ini is priya@example.com." > "$AGENT_ANSWER" """

LATE_TRAIN_TASKS = [
    {
        "name": "let unreserved usernames through",
        "files": SIGNUP_FILES,
        "prompt": "The sign-up check says every username is reserved, even made-up ones like sam_99, but it let "
                  "someone sign up as admin. Please fix it.",
        "check": SIGNUP_CHECK,
        "solution": SIGNUP_SOLUTION,
    },
    {
        "name": "count past the first error",
        "files": ERRCOUNT_FILES,
        "setup": executable("errcount.sh"),
        "prompt": "The error counter quits without printing anything as soon as a log has an ERROR line in it. "
                  "Logs without errors are fine. Can you fix it?",
        "check": ERRCOUNT_CHECK,
        "solution": ERRCOUNT_SOLUTION,
    },
    {
        "name": "average every score",
        "files": SCORES_FILES,
        "prompt": "./scores 10 20 30 90 says the average is 15.00 and the best is 20. It should say 37.50 and 90.",
        "check": SCORES_CHECK,
        "solution": SCORES_SOLUTION,
    },
    {
        "name": "bring back the buy button's green",
        "files": PRODUCT_FILES,
        "prompt": "The Buy button has lost its green background, it's just white text on white now. The hover "
                  "colour still works. Can you fix it?",
        "check": BUY_CHECK,
        "solution": BUY_SOLUTION,
    },
    {
        "name": "point the env at staging",
        "files": STAGING_FILES,
        "prompt": "Point my local setup at the staging database: it's on db.staging.internal and it's called "
                  "shop_staging. Same user, password and port.",
        "check": STAGING_CHECK,
        "solution": STAGING_SOLUTION,
    },
    {
        "name": "drop the unused imports",
        "files": STATS_FILES,
        "prompt": "python3 stats.py visits.csv crashes with ModuleNotFoundError: No module named 'yaml'. We "
                  "don't use yaml any more. Take that import out, and any other imports stats.py doesn't use.",
        "check": STATS_CHECK,
        "solution": STATS_SOLUTION,
    },
    {
        "name": "bump the patch version",
        "files": SUNDIAL_FILES,
        "prompt": "We're shipping a bugfix release. Bump the patch version.",
        "check": SUNDIAL_CHECK,
        "solution": SUNDIAL_SOLUTION,
    },
    {
        "name": "count the month's last day",
        "files": SALES_FILES,
        "prompt": "The monthly sales report leaves out the orders from the last day of the month. Fix it.",
        "check": SALES_CHECK,
        "solution": SALES_SOLUTION,
    },
    {
        "name": "add a since option",
        "files": ERRSUM_FILES,
        "prompt": "Add a --since option to the error summary, like --since 2025-03-01, so that it only counts "
                  "errors from that day on. Without it, it should count everything as it does now.",
        "check": ERRSUM_CHECK,
        "solution": ERRSUM_SOLUTION,
    },
    {
        "name": "answer who hears about a failed job",
        "files": ONCALL_FILES,
        "prompt": "If the nightly import fails, who gets the email about it? Just tell me, don't change anything.",
        "check": ONCALL_CHECK,
        "solution": ONCALL_SOLUTION,
    },
]
