"""The odd jobs set of everyday tasks of scripts/realmodel (`--set odd_jobs`).

Written after the old, new, fresh, plain, daily, chores and errands sets
(tasks.py, new_tasks.py, fresh_tasks.py, plain_tasks.py, daily_tasks.py,
chores_tasks.py, errands_tasks.py), unlike all seven in what is broken and
in how it is fixed, and as easy as the last three, by someone who had read
no run of any of them (no transcript, no result, no table): ten one-step
requests, each a project of three to six short files: the order of a
Dockerfile's steps, a column type in a SQL migration, a key missing from
.env.example, a question answered from a CHANGELOG, a git tag on the wrong
commit, a prerequisite missing from a Makefile's pattern rule, a missing
entry in a translation file, a missing await in Node, the Content-Type a
small Python web server sends, and a Python version that YAML reads as a
number. The keys are those of errands_tasks.py, with `setup` where the
project needs a history: the files, the prompt as a person would type it
(nine of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before it
and passes after. Checks run the code, git, make or a reader of the file's
own rules rather than look for one spelling, and use python3 (its sqlite3),
node, bash, git, make and coreutils only.
"""

from new_tasks import unchanged

# --- a Dockerfile that copies the code before installing --------------------------

MENU_DOCKERFILE = """FROM node:20-alpine
WORKDIR /app
COPY . .
RUN npm ci --omit=dev
ENV NODE_ENV=production
EXPOSE 3000
CMD ["node", "server.js"]
"""

MENU_PACKAGE_JSON = """{
  "name": "menu-api",
  "version": "1.4.0",
  "private": true,
  "main": "server.js",
  "scripts": {
    "start": "node server.js"
  },
  "dependencies": {
    "express": "^4.19.2"
  }
}
"""

MENU_PACKAGE_LOCK_JSON = """{
  "name": "menu-api",
  "version": "1.4.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "menu-api",
      "version": "1.4.0",
      "dependencies": {
        "express": "^4.19.2"
      }
    },
    "node_modules/express": {
      "version": "4.19.2",
      "resolved": "https://registry.npmjs.org/express/-/express-4.19.2.tgz",
      "license": "MIT"
    }
  }
}
"""

MENU_SERVER_JS = """// The canteen's menu API: GET /menu, GET /menu/:day
const express = require("express");
const menu = require("./menu.json");

const app = express();
app.get("/menu", (req, res) => res.json(menu));
app.get("/menu/:day", (req, res) => {
  const dishes = menu[req.params.day];
  if (!dishes) return res.status(404).json({ error: "no menu that day" });
  res.json(dishes);
});
app.listen(process.env.PORT || 3000);
"""

MENU_JSON = """{
  "monday": ["lentil soup", "fish and chips"],
  "tuesday": ["tomato soup", "mushroom risotto"],
  "wednesday": ["minestrone", "chicken curry"]
}
"""

DOCKER_FILES = {"Dockerfile": MENU_DOCKERFILE, ".dockerignore": "node_modules\n.git\n",
                "package.json": MENU_PACKAGE_JSON, "package-lock.json": MENU_PACKAGE_LOCK_JSON,
                "server.js": MENU_SERVER_JS, "menu.json": MENU_JSON}

# The Dockerfile built on paper, step by step, as Docker builds it (a line
# continued by a backslash, comments, COPY and ADD of context files by
# name, glob or folder, into a folder or onto a name, relative to WORKDIR,
# and COPY --from another stage, so a multi-stage build counts too): the
# node_modules the app runs with come from `npm ci --omit=dev`, run where
# package.json and its lock file are and before any other file of the
# project got in (so that Docker's cache keeps that step while only the
# code changes), and the image ends with the app's files beside them and
# the same base, environment, port and command. The app itself and the
# manifests are as they were; .dockerignore may grow but still leaves out
# node_modules.
DOCKER_CHECK = unchanged(DOCKER_FILES, "package.json", "package-lock.json", "server.js", "menu.json") + r""" && python3 - <<'EOF'
import json, posixpath, re, shlex

CONTEXT = ["Dockerfile", ".dockerignore", "package.json", "package-lock.json", "server.js", "menu.json"]
MANIFESTS = {"package.json", "package-lock.json", ".npmrc"}

def instructions(text):
    out, buf = [], ""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#") or not s and not buf:
            continue
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        buf += s
        word, _, rest = buf.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    assert not buf.strip(), "a line continues past the end"
    return out

def words(rest):
    return json.loads(rest) if rest.startswith("[") else shlex.split(rest)

def glob(pattern):
    return re.compile("".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern) + r"\Z")

def sources(pattern):
    # The context files a source names, each with its path under the destination.
    p = posixpath.normpath(pattern).lstrip("/")
    if p == ".":
        return {f: f for f in CONTEXT}
    hits = {}
    for f in CONTEXT:
        if glob(p).match(f):
            hits[f] = posixpath.basename(f)
        for i in range(1, f.count("/") + 1):
            folder = "/".join(f.split("/")[:i])
            if glob(p).match(folder):
                hits[f] = f[len(folder) + 1:]
    return hits

def build(text):
    stages, names = [], {}
    for word, rest in instructions(text):
        if word == "FROM":
            parts = rest.split()
            stage = {"image": parts[0], "fs": {}, "workdir": "/", "other": []}
            if parts[0] in names:
                base = stages[names[parts[0]]]
                stage.update(image=base["image"], fs=dict(base["fs"]), workdir=base["workdir"],
                             other=list(base["other"]))
            if len(parts) == 3 and parts[1].upper() == "AS":
                names[parts[2]] = len(stages)
            stages.append(stage)
            continue
        assert stages, "an instruction before FROM"
        st = stages[-1]
        if word == "WORKDIR":
            st["workdir"] = posixpath.normpath(posixpath.join(st["workdir"], rest))
        elif word in ("COPY", "ADD"):
            args = words(rest)
            flags = [a for a in args if a.startswith("--")]
            *srcs, dest = [a for a in args if not a.startswith("--")]
            to = posixpath.join(st["workdir"], dest)
            origin = [f.split("=", 1)[1] for f in flags if f.startswith("--from=")]
            if origin:
                other = stages[names[origin[0]] if origin[0] in names else int(origin[0])]
                for src in srcs:
                    src = posixpath.normpath(posixpath.join(other["workdir"], src))
                    for path, what in other["fs"].items():
                        if path == src or path.startswith(src + "/"):
                            rel = posixpath.relpath(path, src)
                            st["fs"][posixpath.normpath(to if rel == "." else posixpath.join(to, rel))] = what
            else:
                hits = {}
                for src in srcs:
                    assert sources(src), ("copies nothing there is", src)
                    hits.update(sources(src))
                # Onto a name when one file is copied to a path that is not a folder.
                folder = posixpath.normpath(to)
                into = (dest.endswith("/") or len(srcs) > 1 or posixpath.normpath(srcs[0]).lstrip("/") not in CONTEXT
                        or folder in ("/", st["workdir"]) or any(k.startswith(folder + "/") for k in st["fs"]))
                for f, rel in hits.items():
                    st["fs"][posixpath.normpath(posixpath.join(to, rel) if into else to)] = "context " + f
        elif word == "RUN":
            command = re.sub(r"^(--\S+\s+)*", "", rest)
            if re.search(r"\b(npm|yarn|pnpm)\s+(ci|install|i|add)\b", command):
                assert re.search(r"\bnpm ci\b", command) and "--omit=dev" in command, ("installs another way", command)
                wd = st["workdir"]
                assert f"{wd}/package.json" in st["fs"] and f"{wd}/package-lock.json" in st["fs"], \
                    ("npm ci without package.json and its lock file", wd, sorted(st["fs"]))
                before = {what.split(" ", 1)[1] for what in st["fs"].values() if what.startswith("context ")}
                again = sorted(before - MANIFESTS)
                st["fs"][f"{wd}/node_modules"] = f"installed again after {again}" if again else "cached"
        elif word not in ("ARG", "LABEL"):
            st["other"].append((word, tuple(json.loads(rest)) if rest.startswith("[") else " ".join(rest.split())))
    return stages[-1]

before = build('''""" + MENU_DOCKERFILE + r"""''')
after = build(open("Dockerfile").read())
assert after["image"] == before["image"] and after["workdir"] == "/app", (after["image"], after["workdir"])
assert after["other"] == before["other"], after["other"]
assert after["fs"].get("/app/node_modules") == "cached", after["fs"].get("/app/node_modules")
for f in ("server.js", "menu.json", "package.json"):
    assert after["fs"].get(f"/app/{f}") == f"context {f}", (f, sorted(after["fs"]))
ignored = [l.strip().strip("/") for l in open(".dockerignore").read().splitlines()]
assert "node_modules" in ignored, ignored
EOF"""

DOCKER_SOLUTION = r"""python3 - <<'EOF'
text = open("Dockerfile").read()
text = text.replace("COPY . .\nRUN npm ci --omit=dev\n",
                    "COPY package.json package-lock.json ./\nRUN npm ci --omit=dev\nCOPY . .\n")
open("Dockerfile", "w").write(text)
EOF"""

# --- a phone number stored as a number ------------------------------------------------

CREATE_CUSTOMERS_SQL = """CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL
);
"""

ADD_PHONE_SQL = """-- Customers may leave a phone number for delivery questions.
ALTER TABLE customers ADD COLUMN phone INTEGER;
"""

CUSTOMERS_DB_PY = '''"""The customer list of the bakery's delivery service.

python3 db.py add NAME EMAIL PHONE
python3 db.py list
"""
import sqlite3
import sys
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def connect(path="customers.db"):
    """Opens the database, applying the migrations it has not had yet."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS applied (name TEXT PRIMARY KEY)")
    done = {name for (name,) in db.execute("SELECT name FROM applied")}
    for migration in sorted(MIGRATIONS.glob("*.sql")):
        if migration.name not in done:
            db.executescript(migration.read_text())
            db.execute("INSERT INTO applied VALUES (?)", (migration.name,))
    db.commit()
    return db


def add_customer(db, name, email, phone):
    db.execute("INSERT INTO customers (name, email, phone) VALUES (?, ?, ?)", (name, email, phone))
    db.commit()


def customers(db):
    return db.execute("SELECT name, email, phone FROM customers ORDER BY id").fetchall()


if __name__ == "__main__":
    db = connect()
    if sys.argv[1:2] == ["add"]:
        add_customer(db, *sys.argv[2:5])
    for name, email, phone in customers(db):
        print(f"{name} <{email}> {phone or '-'}")
'''

SQL_FILES = {"migrations/001_create_customers.sql": CREATE_CUSTOMERS_SQL,
             "migrations/002_add_phone.sql": ADD_PHONE_SQL,
             "db.py": CUSTOMERS_DB_PY, ".gitignore": "customers.db\n"}

# The code's own migrations applied to a new database, whether 002 was
# corrected or a later migration rebuilds the column: phone numbers come
# back exactly as they were saved, as text, whatever they look like (a
# leading zero or plus, spaces, none of these), also once the database is
# opened again; the table keeps its columns. The Python code is not what is
# wrong, so it stays as it was.
SQL_CHECK = unchanged(SQL_FILES, "db.py") + r""" && python3 - <<'EOF'
import tempfile

import db

phones = ["0301234567", "+4915112345678", "030 1234567", "0049 30 1234567", "5550199", None]
with tempfile.TemporaryDirectory() as d:
    con = db.connect(f"{d}/test.db")
    for i, phone in enumerate(phones):
        db.add_customer(con, f"name{i}", f"name{i}@example.com", phone)
    got = db.customers(con)
    assert got == [(f"name{i}", f"name{i}@example.com", p) for i, p in enumerate(phones)], got
    con.close()
    con = db.connect(f"{d}/test.db")
    db.add_customer(con, "Ida", "ida@example.com", "0201")
    assert db.customers(con)[-1] == ("Ida", "ida@example.com", "0201"), db.customers(con)
    columns = [row[1] for row in con.execute("PRAGMA table_info(customers)")]
    assert sorted(columns) == ["email", "id", "name", "phone"], columns
EOF"""

SQL_SOLUTION = "sed -i 's/ADD COLUMN phone INTEGER;/ADD COLUMN phone TEXT;/' migrations/002_add_phone.sql"

# --- a key missing from .env.example ---------------------------------------------------

ENV_EXAMPLE = """# Copy to .env and change what you need.
DATABASE_URL=sqlite:///newsletter.db
SECRET_KEY=change-me
MAIL_HOST=localhost
DEBUG=1
"""

NEWSLETTER_SETTINGS_PY = '''"""Settings, from the environment or else from a .env file beside this one."""
import os
from pathlib import Path


def load_dotenv(path=Path(__file__).resolve().with_name(".env")):
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                os.environ.setdefault(key.strip(), value.strip().strip("\\"'"))


load_dotenv()

DATABASE_URL = os.environ["DATABASE_URL"]
SECRET_KEY = os.environ["SECRET_KEY"]
MAIL_FROM = os.environ["MAIL_FROM"]
MAIL_HOST = os.environ.get("MAIL_HOST", "localhost")
DEBUG = os.environ.get("DEBUG", "0") == "1"
'''

NEWSLETTER_APP_PY = '''"""Sends the monthly newsletter: python3 app.py"""
import sys

import settings

if "@" not in settings.MAIL_FROM:
    sys.exit(f"MAIL_FROM must be an email address, not {settings.MAIL_FROM!r}")
print(f"newsletter ready: {settings.DATABASE_URL}, sending as {settings.MAIL_FROM} through {settings.MAIL_HOST}")
'''

NEWSLETTER_README = """# newsletter

Sends the monthly newsletter to everyone on the list.

## Setup

    cp .env.example .env
    python3 app.py

.env is yours and is not committed. On the server, set DEBUG=0.
"""

ENV_FILES = {".env.example": ENV_EXAMPLE, "settings.py": NEWSLETTER_SETTINGS_PY, "app.py": NEWSLETTER_APP_PY,
             "README.md": NEWSLETTER_README, ".gitignore": ".env\n__pycache__/\n"}

# The README's setup done in a scratch copy (without any .env the agent
# made for itself, and with none of the settings in the environment): the
# app starts and sends as an email address. Every key the example had keeps
# its value; the code is as it was (a default in the code is not what was
# asked: the example file is what new people start from).
ENV_CHECK = unchanged(ENV_FILES, "settings.py", "app.py") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, sys, tempfile

def keys(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip().strip("\"'")
    return out

before, after = keys('''""" + ENV_EXAMPLE + r"""'''), keys(open(".env.example").read())
for key, value in before.items():
    assert after.get(key) == value, (key, after.get(key))
with tempfile.TemporaryDirectory() as d:
    shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git", ".env", "__pycache__"))
    shutil.copy(f"{d}/p/.env.example", f"{d}/p/.env")
    env = {k: v for k, v in os.environ.items() if k not in {*before, *after, "MAIL_FROM"}}
    r = subprocess.run([sys.executable, "app.py"], cwd=f"{d}/p", env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "sending as " in r.stdout and "@" in r.stdout, (r.stdout, r.stderr)
EOF"""

ENV_SOLUTION = "sed -i 's/^SECRET_KEY=change-me$/&\\nMAIL_FROM=newsletter@example.com/' .env.example"

# --- a question about a CHANGELOG -------------------------------------------------------

TALLY_CHANGELOG = """# Changelog

All notable changes to tally. Dates are release dates.

## Unreleased

### Added
- `export --format xlsx`, for spreadsheets that cannot open CSV.

## 2.6.1 - 2024-09-02

### Fixed
- `export --format json` no longer escapes accented letters.

## 2.6.0 - 2024-08-14

### Added
- `import -` reads entries from standard input.

### Changed
- `export` writes dates as YYYY-MM-DD in every format.

## 2.5.1 - 2024-07-08

### Fixed
- `export --format json` wrote an empty file for a ledger with no entries.

## 2.5.0 - 2024-06-30

### Added
- `export --format json`, one object per entry.
- `--quiet` for every command.

## 2.4.2 - 2024-05-11

### Fixed
- `export` quoted every field, even numbers.

## 2.4.0 - 2024-04-20

### Added
- The `export` command, CSV only for now.

## 2.3.0 - 2024-02-03

### Added
- Settings can be kept in a JSON file, `tally.json`, instead of flags.
"""

TALLY_README = """# tally

Keeps a ledger of small expenses from the command line.

    python3 tally.py add 4.50 coffee
    python3 tally.py export --format csv > ledger.csv

See CHANGELOG.md for what changed in each release.
"""

TALLY_PY = '''"""tally: python3 tally.py add AMOUNT TEXT | export [--format csv|json]"""
import argparse
import csv
import json
import sys

LEDGER = "ledger.json"
__version__ = "2.6.1"


def load():
    try:
        with open(LEDGER) as f:
            return json.load(f)
    except FileNotFoundError:
        return []


def main():
    ap = argparse.ArgumentParser(prog="tally")
    sub = ap.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("amount", type=float)
    add.add_argument("text")
    export = sub.add_parser("export")
    export.add_argument("--format", choices=["csv", "json"], default="csv")
    args = ap.parse_args()
    entries = load()
    if args.command == "add":
        entries.append({"amount": args.amount, "text": args.text})
        with open(LEDGER, "w") as f:
            json.dump(entries, f, indent=1)
    elif args.format == "json":
        json.dump(entries, sys.stdout, ensure_ascii=False)
    else:
        out = csv.writer(sys.stdout)
        out.writerow(["amount", "text"])
        out.writerows([e["amount"], e["text"]] for e in entries)


if __name__ == "__main__":
    main()
'''

# 2.5.0 (or 2.5), not 2.5.1's fix, 2.6.1's nor 2.3.0's JSON settings file;
# naming a version or two more in passing is fine, the whole list is not an
# answer. Nothing changed.
CHANGELOG_QUESTION_CHECK = r"""test -z "$(git status --porcelain)" && python3 - <<'EOF'
import os, re

answer = open(os.environ["AGENT_ANSWER"]).read()
assert re.search(r"(?<![\d.])2\.5(?:\.0)?(?!\d|\.\d)", answer), answer
others = [v for v in ("2.6.1", "2.6.0", "2.5.1", "2.4.2", "2.4.0", "2.3.0")
          if re.search(r"(?<![\d.])" + re.escape(v) + r"(?!\d)", answer)]
assert len(others) < 3, others
EOF"""

# --- a release tag on the wrong commit ----------------------------------------------------

LOGSEARCH_PY = '''"""Prints the lines of a log that contain a word: python3 logsearch.py WORD FILE"""
import sys

word, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    for line in f:
        if word in line:
            print(line, end="")
'''

LOGSEARCH_README = """# logsearch

Finds lines in logs.

    python3 logsearch.py ERROR app.log
"""

# After the first commit (tagged v1.2.0): a feature, the release of 1.3.0,
# the start of 1.4.0, and v1.3.0 made one commit too late.
TAG_SETUP = r"""set -e
git tag v1.2.0
g() { git -c user.name='Mira Holm' -c user.email=mira@example.com "$@"; }
printf '\n    python3 logsearch.py --since 2024-05-01 ERROR app.log\n' >> README.md
g commit -qam 'Add the --since option'
echo 1.3.0 > VERSION
g commit -qam 'Release 1.3.0'
echo 1.4.0.dev0 > VERSION
g commit -qam 'Start 1.4.0 development'
git tag v1.3.0
"""

# git itself: v1.3.0 names the release commit (whose VERSION says 1.3.0),
# lightweight or annotated; v1.2.0 is where it was and there is no other
# tag; the branch is where it was (the commit the reflog first recorded
# for the last commit, so nothing was reset, amended or rebased), and the
# work tree is clean.
TAG_CHECK = r"""test -z "$(git status --porcelain)" && python3 - <<'EOF'
import subprocess

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()

commits = dict(reversed(line.split("\t", 1)) for line in git("log", "--format=%H%x09%s", "HEAD").splitlines())
branch = git("symbolic-ref", "--short", "HEAD")
tip = git("rev-parse", f"refs/heads/{branch}")
reflog = [line.split("\t", 1)
          for line in git("reflog", "show", "--format=%H%x09%gs", f"refs/heads/{branch}").splitlines()]
recorded = [h for h, what in reflog if what == "commit: Start 1.4.0 development"]
assert recorded and recorded[-1] == tip and commits.get("Start 1.4.0 development") == tip, (tip, reflog)
assert sorted(git("tag", "-l").split()) == ["v1.2.0", "v1.3.0"], git("tag", "-l")
release = commits["Release 1.3.0"]
assert git("rev-parse", "v1.3.0^{commit}") == release, git("log", "--oneline", "--decorate", "-5")
assert git("show", "v1.3.0:VERSION") == "1.3.0"
assert git("rev-parse", "v1.2.0^{commit}") == git("rev-list", "--max-parents=0", "HEAD")
EOF"""

# --- a Makefile rule that misses the template --------------------------------------------------

SITE_MAKEFILE = """# make: builds every page of pages/ into public/, inside template.html.
PAGES := $(patsubst pages/%.md,public/%.html,$(wildcard pages/*.md))

.PHONY: all clean
all: $(PAGES)

public/%.html: pages/%.md
\t@mkdir -p public
\tpython3 build.py $< template.html > $@

clean:
\trm -rf public
"""

SITE_BUILD_PY = '''"""Puts a page of pages/ into the template: python3 build.py PAGE.md TEMPLATE > PAGE.html

The first line of a page is its title (# Title); blank lines part paragraphs."""
import html
import sys

page, template = sys.argv[1], sys.argv[2]
with open(page) as f:
    lines = f.read().splitlines()
title = lines[0].lstrip("#").strip()
paragraphs, current = [], []
for line in lines[1:] + [""]:
    if line.strip():
        current.append(line.strip())
    elif current:
        paragraphs.append("<p>" + html.escape(" ".join(current)) + "</p>")
        current = []
with open(template) as f:
    text = f.read()
print(text.replace("{{title}}", html.escape(title)).replace("{{content}}", "\\n".join(paragraphs)), end="")
'''

SITE_TEMPLATE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{title}} | Hill Walkers</title></head>
<body>
<main>
{{content}}
</main>
<footer>Hill Walkers, walking since 1987</footer>
</body>
</html>
"""

SITE_INDEX_MD = """# Welcome

We walk the hills around town every Sunday, whatever the weather.

New walkers are always welcome: just turn up.
"""

SITE_WALKS_MD = """# Walks

Sunday 9:00 from the station car park, about 15 km.

Wednesday evenings in summer, a short walk and a long dinner.
"""

SITE_FILES = {"Makefile": SITE_MAKEFILE, "build.py": SITE_BUILD_PY, "template.html": SITE_TEMPLATE,
              "pages/index.md": SITE_INDEX_MD, "pages/walks.md": SITE_WALKS_MD, ".gitignore": "public/\n"}

# GNU make itself, run for real in a scratch copy (a dry run misses a
# recursive make), with the files' times set by hand so that no two steps
# share a second: the site builds; no page is rebuilt while nothing changed
# (pages made phony, forced, or cleaned away first are no fix); a newer
# template rebuilds every page, into the new look; a newer page rebuilds
# that page alone. The builder, the template and the pages are as they were.
MAKE_CHECK = unchanged(SITE_FILES, "build.py", "template.html", "pages/index.md", "pages/walks.md") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile, time

assert shutil.which("make"), "this check needs GNU make"
with tempfile.TemporaryDirectory() as d:
    p = f"{d}/p"
    shutil.copytree(".", p, ignore=shutil.ignore_patterns(".git", "public", "__pycache__"))
    pages = ["index", "walks"]

    def make(*args):
        r = subprocess.run(["make", *args], cwd=p, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout

    def at(t, *names):
        for name in names:
            os.utime(f"{p}/{name}", (t, t))

    def built(footer):
        for page in pages:
            text = open(f"{p}/public/{page}.html").read()
            assert footer in text and "<main>" in text, (page, text)

    def untouched(t):
        times = {page: os.stat(f"{p}/public/{page}.html").st_mtime for page in pages}
        assert times == {page: t for page in pages}, ("make rebuilt pages that were up to date", times, t)

    t = int(time.time()) - 10000
    outputs = [f"public/{page}.html" for page in pages]
    at(t, *os.listdir(p), *[f"pages/{page}.md" for page in pages])
    make()
    built("walking since 1987")
    at(t + 100, *outputs)
    make()
    untouched(t + 100)
    with open(f"{p}/template.html") as f:
        template = f.read()
    with open(f"{p}/template.html", "w") as f:
        f.write(template.replace("since 1987", "since 1987, every Sunday"))
    at(t + 200, "template.html")
    make()
    built("since 1987, every Sunday")
    at(t + 300, *outputs)
    make()
    untouched(t + 300)
    at(t + 400, "pages/walks.md")
    make()
    assert os.stat(f"{p}/public/walks.html").st_mtime > t + 400, "a newer page was not rebuilt"
    assert os.stat(f"{p}/public/index.html").st_mtime == t + 300, "a page that did not change was rebuilt"
EOF"""

SITE_SOLUTION = "sed -i 's|^public/%.html: pages/%.md$|& template.html|' Makefile"

# --- a translation missing from a language file ----------------------------------------------

EN_JSON = """{
  "checkout": {
    "title": "Your basket",
    "items": "{count} items",
    "pay": "Pay {amount}",
    "back": "Back to the shop"
  },
  "footer": {
    "contact": "Contact us"
  }
}
"""

FR_JSON = """{
  "checkout": {
    "title": "Votre panier",
    "items": "{count} articles",
    "back": "Retour à la boutique"
  },
  "footer": {
    "contact": "Nous contacter"
  }
}
"""

I18N_JS = """// Looks up a text by its key (checkout.title) in locales/LANG.json and fills
// in its {placeholders}; a key it cannot find comes out as the key itself.
const path = require("path");

function t(lang, key, params = {}) {
  const messages = require(path.join(__dirname, "locales", `${lang}.json`));
  const text = key.split(".").reduce((node, part) => (node == null ? undefined : node[part]), messages);
  if (typeof text !== "string") return key;
  return text.replace(/\\{(\\w+)\\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

module.exports = { t };
"""

CHECKOUT_JS = """// Prints the checkout page's texts: node checkout.js [en|fr]
const { t } = require("./i18n");

const lang = process.argv[2] || "en";
const amount = lang === "fr" ? "49,90 €" : "€49.90";
console.log(t(lang, "checkout.title"));
console.log(t(lang, "checkout.items", { count: 3 }));
console.log(`[ ${t(lang, "checkout.pay", { amount })} ]`);
console.log(t(lang, "checkout.back"));
"""

I18N_FILES = {"locales/en.json": EN_JSON, "locales/fr.json": FR_JSON, "i18n.js": I18N_JS, "checkout.js": CHECKOUT_JS}

# Through the app's own lookup: the French pay button has a text that is
# neither its key nor the English one and shows the amount it is given (a
# placeholder renamed in translation shows up as {montant}, not as the
# amount); every English key has French text, the French that was there is
# unchanged, and the page prints no bare key. English and the code are as
# they were.
I18N_CHECK = unchanged(I18N_FILES, "locales/en.json", "i18n.js", "checkout.js") + r""" && python3 - <<'EOF'
import json, subprocess

def flat(tree, prefix=""):
    out = {}
    for key, value in tree.items():
        out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value})
    return out

en, fr = flat(json.load(open("locales/en.json"))), flat(json.load(open("locales/fr.json")))
before = flat(json.loads('''""" + FR_JSON + r"""'''))
for key, text in before.items():
    assert fr.get(key) == text, (key, fr.get(key))
for key in en:
    assert isinstance(fr.get(key), str) and fr[key].strip(), ("no French for", key)

def node(script):
    r = subprocess.run(["node", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout

said = json.loads(node('const { t } = require("./i18n"); const amount = "12,30 €"; '
                       'console.log(JSON.stringify([t("fr", "checkout.pay", { amount }), t("en", "checkout.pay", { amount })]))'))
french, english = said
assert "12,30 €" in french and french != english and "{" not in french and "checkout." not in french, said
page = subprocess.run(["node", "checkout.js", "fr"], capture_output=True, text=True, check=True).stdout
assert "49,90 €" in page and "checkout." not in page, page
EOF"""

I18N_SOLUTION = r"""python3 - <<'EOF'
import json
fr = json.load(open("locales/fr.json"))
fr["checkout"]["pay"] = "Payer {amount}"
open("locales/fr.json", "w").write(json.dumps(fr, indent=2, ensure_ascii=False) + "\n")
EOF"""

# --- a promise used as if it were the list ----------------------------------------------------

USERS_JS = """// Reads the user list that the admin scripts share.
const fs = require("fs/promises");

async function loadUsers(file) {
  const text = await fs.readFile(file, "utf8");
  return JSON.parse(text).users;
}

module.exports = { loadUsers };
"""

COUNT_JS = """// Prints how many users are active: node count.js
const { loadUsers } = require("./users");

function countActive(file) {
  const users = loadUsers(file);
  return users.filter((user) => user.active).length;
}

console.log(`${countActive("users.json")} active users`);
"""

REPORT_JS = """// Lists the users who have not logged in this year: node report.js
const { loadUsers } = require("./users");

async function main() {
  const users = await loadUsers("users.json");
  for (const user of users.filter((u) => u.lastLogin < "2024-01-01")) {
    console.log(`${user.name} (last seen ${user.lastLogin})`);
  }
}

main();
"""

USERS_JSON = """{
  "users": [
    {"name": "Ada", "active": true, "lastLogin": "2024-03-02"},
    {"name": "Ben", "active": false, "lastLogin": "2023-07-19"},
    {"name": "Cleo", "active": true, "lastLogin": "2024-01-15"},
    {"name": "Dev", "active": true, "lastLogin": "2023-11-30"},
    {"name": "Eli", "active": false, "lastLogin": "2022-12-01"}
  ]
}
"""

AWAIT_FILES = {"users.js": USERS_JS, "count.js": COUNT_JS, "report.js": REPORT_JS, "users.json": USERS_JSON}

# node count.js prints the count, without a warning, for its users and
# for another list in a scratch copy (no number written in by hand); the
# other script is as it was and still works, and loadUsers still returns a
# promise, as the scripts that await it expect.
AWAIT_CHECK = unchanged(AWAIT_FILES, "report.js", "users.json") + r""" && python3 - <<'EOF'
import json, shutil, subprocess, tempfile

def node(*args, cwd="."):
    r = subprocess.run(["node", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, (args, r.stdout, r.stderr)
    return r.stdout

assert node("count.js") == "3 active users\n", node("count.js")
assert node("report.js") == "Ben (last seen 2023-07-19)\nDev (last seen 2023-11-30)\nEli (last seen 2022-12-01)\n"
node("-e", 'const p = require("./users").loadUsers("users.json"); '
           'if (!p || typeof p.then !== "function") { console.error("loadUsers no longer returns a promise"); process.exit(1); }')
with tempfile.TemporaryDirectory() as d:
    shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git"))
    users = [{"name": f"u{i}", "active": i % 4 != 0, "lastLogin": "2024-02-02"} for i in range(10)]
    with open(f"{d}/p/users.json", "w") as f:
        json.dump({"users": users}, f)
    got = node("count.js", cwd=f"{d}/p")
    assert got == "7 active users\n", got
EOF"""

AWAIT_SOLUTION = r"""python3 - <<'EOF'
text = open("count.js").read()
text = text.replace("function countActive", "async function countActive")
text = text.replace("const users = loadUsers(file);", "const users = await loadUsers(file);")
text = text.replace('console.log(`${countActive("users.json")} active users`);',
                    'countActive("users.json").then((n) => console.log(`${n} active users`));')
open("count.js", "w").write(text)
EOF"""

# --- a web server that sends every file as a download ------------------------------------------

SERVE_PY = '''"""Serves the site/ folder for a preview: python3 serve.py [PORT], then open http://127.0.0.1:8000/"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "site"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.endswith("/"):
            path += "index.html"
        file = (ROOT / path.lstrip("/")).resolve()
        if not file.is_relative_to(ROOT) or not file.is_file():
            self.send_error(404)
            return
        body = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''

SITE_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Plant swap</title>
  <link rel="stylesheet" href="style.css">
  <script src="app.js" defer></script>
</head>
<body>
  <img src="logo.svg" alt="Plant swap" width="48">
  <h1>Plant swap</h1>
  <p>Bring a cutting, take a cutting. Every first Saturday, 10 to 12.</p>
  <p><a href="about/">Who we are</a></p>
</body>
</html>
"""

SITE_ABOUT_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>About the plant swap</title><link rel="stylesheet" href="../style.css"></head>
<body><h1>Who we are</h1><p>Neighbours with too many spider plants.</p></body>
</html>
"""

SITE_STYLE_CSS = """body { font-family: sans-serif; max-width: 40rem; margin: 2rem auto; }
h1 { color: #2f6b3a; }
"""

SITE_APP_JS = """document.querySelector("h1").title = "Next swap: the first Saturday of the month";
"""

SITE_LOGO_SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 22V10M12 10C12 5 7 3 3 4c0 5 4 7 9 6zm0 0c0-5 5-7 9-6 0 5-4 7-9 6z" fill="#2f6b3a"/></svg>
"""

SERVE_FILES = {"serve.py": SERVE_PY, "site/index.html": SITE_INDEX_HTML, "site/about/index.html": SITE_ABOUT_HTML,
               "site/style.css": SITE_STYLE_CSS, "site/app.js": SITE_APP_JS, "site/logo.svg": SITE_LOGO_SVG}

# The server run on a free port and asked for each file of the site, as a
# browser asks (a folder's address too): each comes with the type of what it
# is (a charset may follow; JavaScript under either of its names) and as it
# is on disk, and a missing page is still a 404. The site is as it was.
SERVE_CHECK = unchanged(SERVE_FILES, "site/index.html", "site/style.css", "site/app.js", "site/logo.svg") + r""" && python3 - <<'EOF'
import socket, subprocess, sys, time, urllib.error, urllib.request

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen([sys.executable, "serve.py", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

def get(path):
    for _ in range(100):
        try:
            with opener.open(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.headers.get("Content-Type") or "", r.read()
        except urllib.error.HTTPError as e:
            return e.code, "", b""
        except OSError:  # not listening yet
            time.sleep(0.1)
    raise SystemExit("the server never answered")

HTML, JS = {"text/html"}, {"text/javascript", "application/javascript", "application/x-javascript"}
try:
    for path, file, types in (("/", "index.html", HTML), ("/index.html", "index.html", HTML),
                              ("/style.css", "style.css", {"text/css"}), ("/app.js", "app.js", JS),
                              ("/logo.svg", "logo.svg", {"image/svg+xml"}), ("/about/", "about/index.html", HTML),
                              ("/style.css?v=2", "style.css", {"text/css"})):
        status, kind, body = get(path)
        assert status == 200 and kind.split(";")[0].strip().lower() in types, (path, status, kind)
        assert body == open(f"site/{file}", "rb").read(), path
    assert get("/missing.html")[0] == 404
finally:
    server.terminate()
    server.wait(timeout=10)
EOF"""

SERVE_SOLUTION = r"""python3 - <<'EOF'
text = open("serve.py").read()
text = text.replace("import sys\n", "import mimetypes\nimport sys\n")
text = text.replace('self.send_header("Content-Type", "application/octet-stream")',
                    'self.send_header("Content-Type", mimetypes.guess_type(file.name)[0] or "application/octet-stream")')
open("serve.py", "w").write(text)
EOF"""

# --- a Python version that YAML reads as a number ---------------------------------------------

TESTS_YML = """name: tests

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        python-version: [3.9, 3.10, 3.11, 3.12]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: pip install -e .
      - run: python -m unittest discover -s tests
"""

CI_PYPROJECT_TOML = """[project]
name = "unitconv"
version = "0.8.0"
requires-python = ">=3.9"

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""

CI_UNITCONV_PY = '''"""Converts between metric and imperial units."""


def km_to_miles(km):
    return km * 0.621371
'''

CI_TEST_PY = """import unittest

from unitconv import km_to_miles


class KmToMilesTest(unittest.TestCase):
    def test_marathon(self):
        self.assertAlmostEqual(km_to_miles(42.195), 26.219, places=3)
"""

CI_FILES = {".github/workflows/tests.yml": TESTS_YML, "pyproject.toml": CI_PYPROJECT_TOML,
            "unitconv.py": CI_UNITCONV_PY, "tests/test_unitconv.py": CI_TEST_PY}

# The workflow read by YAML's rules, as GitHub reads it, for as much of YAML
# as a workflow uses (block mappings and sequences, a sequence at its key's
# indent, flow sequences, quotes, comments, block scalars): a plain 3.10 is
# the number 3.1. The matrix asks for 3.9, 3.10, 3.11 and 3.12, in any order
# and any way of writing them that stays text where it must (3.10.x is
# 3.10 too; 3.10.0 pins an old release and is not); everything else in the
# workflow is as it was.
CI_CHECK = unchanged(CI_FILES, "pyproject.toml", "unitconv.py") + r""" && python3 - <<'EOF'
import re

def strip_comment(line):
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"" and (i == 0 or line[i - 1] in " \t[,:-"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()

NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")

def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if NUMBER.fullmatch(text):
        return ("number", float(text))
    return {"true": True, "false": False, "null": None, "~": None, "": None}.get(text.lower(), text)

def split(text, sep):
    parts, quote, depth, start = [], None, 0, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]

def flow(text):
    if text.startswith("["):
        assert text.endswith("]"), text
        inner = text[1:-1].strip()
        return [flow(item.strip()) for item in split(inner, ",") if item.strip()] if inner else []
    assert not text.startswith("{"), ("a flow mapping this check does not read", text)
    return scalar(text)

KEY = re.compile("(" + r'"[^"]*"' + "|" + r"'[^']*'" + "|" + r"[^\s'\"\[\]{}#&*!|>%@`-][^:]*?|-[^\s:][^:]*?)\s*:(\s+|$)")

def parse(text):
    lines = [(len(l) - len(l.lstrip(" ")), l.strip()) for l in map(strip_comment, text.splitlines()) if l.strip()]

    def value(rest, i, indent):
        # The value after `key:` or `- ` on line i: on that line, or in the lines below it.
        if rest in ("|", ">", "|-", ">-", "|+", ">+"):
            block = []
            while i + 1 < len(lines) and lines[i + 1][0] > indent:
                i += 1
                block.append(lines[i][1])
            return ("\n" if rest[0] == "|" else " ").join(block), i + 1
        if rest:
            while rest.startswith("[") and rest.count("[") > rest.count("]"):
                i += 1
                rest += " " + lines[i][1]
            return flow(rest), i + 1
        below = lines[i + 1] if i + 1 < len(lines) else None
        if below and (below[0] > indent or below[0] == indent and below[1][:1] == "-"):
            return node(i + 1, below[0])
        return None, i + 1

    def node(i, indent):
        if lines[i][1] == "-" or lines[i][1].startswith("- "):
            out = []
            while i < len(lines) and lines[i][0] == indent and (lines[i][1] == "-" or lines[i][1].startswith("- ")):
                rest = lines[i][1][1:].lstrip()
                if KEY.match(rest):
                    lines[i] = (indent + len(lines[i][1]) - len(rest), rest)
                    item, i = node(i, lines[i][0])
                else:
                    item, i = value(rest, i, indent)
                out.append(item)
            return out, i
        out = {}
        while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
            m = KEY.match(lines[i][1])
            assert m, ("not a key", lines[i])
            key = scalar(m.group(1))
            assert key not in out, ("a key twice", key)
            out[key], i = value(lines[i][1][m.end():].strip(), i, indent)
        return out, i

    tree, i = node(0, lines[0][0])
    assert i == len(lines), ("a line out of place", lines[i])
    return tree

def version(v):
    if isinstance(v, tuple):
        return f"{v[1]:g}"
    return re.sub(r"\.x$", "", str(v))

before = parse('''""" + TESTS_YML + r"""''')
after = parse(open(".github/workflows/tests.yml").read())
versions = after["jobs"]["test"]["strategy"]["matrix"]["python-version"]
assert isinstance(versions, list), versions
got = [version(v) for v in versions]
assert sorted(got) == ["3.10", "3.11", "3.12", "3.9"], (versions, got)
after["jobs"]["test"]["strategy"]["matrix"]["python-version"] = "the versions"
before["jobs"]["test"]["strategy"]["matrix"]["python-version"] = "the versions"
assert after == before, after
EOF"""

CI_SOLUTION = """sed -i 's/python-version: \\[3.9, 3.10, 3.11, 3.12\\]/python-version: ["3.9", "3.10", "3.11", "3.12"]/' \\
.github/workflows/tests.yml"""

ODD_JOBS_TASKS = [
    {
        "name": "install packages before copying the code",
        "files": DOCKER_FILES,
        "prompt": "Every time I change a line of code and rebuild the Docker image, it installs all the npm "
                  "packages again from scratch. Make it reuse the installed packages when only our code changed.",
        "check": DOCKER_CHECK,
        "solution": DOCKER_SOLUTION,
    },
    {
        "name": "keep leading zeros in phone numbers",
        "files": SQL_FILES,
        "prompt": "When we save a customer, their phone number loses its leading zero: 0301234567 comes back "
                  "as 301234567. We haven't deployed the phone numbers yet, so no real data is affected.",
        "check": SQL_CHECK,
        "solution": SQL_SOLUTION,
    },
    {
        "name": "complete the example env file",
        "files": ENV_FILES,
        "prompt": "A new teammate followed our setup steps and the app died right away with "
                  "KeyError: 'MAIL_FROM'. Fix the setup so it works for the next person.",
        "check": ENV_CHECK,
        "solution": ENV_SOLUTION,
    },
    {
        "name": "answer from a changelog",
        "files": {"CHANGELOG.md": TALLY_CHANGELOG, "README.md": TALLY_README, "tally.py": TALLY_PY},
        "prompt": "Since which version can tally export to JSON? A user on an old version is asking. "
                  "Just tell me, don't change anything.",
        # 2.5.0, not 2.5.1 (a fix), 2.6.1 (a fix) nor 2.3.0 (a JSON settings file).
        "check": CHANGELOG_QUESTION_CHECK,
        "solution": 'echo "Since 2.5.0 (export --format json); 2.5.1 fixed empty ledgers." > "$AGENT_ANSWER"',
    },
    {
        "name": "move a release tag",
        "files": {"logsearch.py": LOGSEARCH_PY, "README.md": LOGSEARCH_README, "VERSION": "1.2.0\n"},
        "setup": TAG_SETUP,
        "prompt": "I put the v1.3.0 tag on the wrong commit: it's on the one after the release. Move it to the "
                  "actual release commit. Nothing has been pushed yet.",
        "check": TAG_CHECK,
        "solution": "git tag -f v1.3.0 HEAD~1",
    },
    {
        "name": "rebuild pages when the template changes",
        "files": SITE_FILES,
        "prompt": "When I change the page template and run make, it says there is nothing to do and the "
                  "pages keep the old look. I have to touch every page to get them rebuilt.",
        "check": MAKE_CHECK,
        "solution": SITE_SOLUTION,
    },
    {
        "name": "add a missing translation",
        "files": I18N_FILES,
        "prompt": "On the French checkout page the pay button just says checkout.pay instead of a label. "
                  "The English page is fine.",
        "check": I18N_CHECK,
        "solution": I18N_SOLUTION,
    },
    {
        "name": "await a promise",
        "files": AWAIT_FILES,
        "prompt": "node count.js crashes with TypeError: users.filter is not a function. Fix it.",
        "check": AWAIT_CHECK,
        "solution": AWAIT_SOLUTION,
    },
    {
        "name": "send the right content type",
        "files": SERVE_FILES,
        "prompt": "When I open our preview server in the browser, it downloads the page as a file instead "
                  "of showing it. Make the pages show up normally, with their styles and script.",
        "check": SERVE_CHECK,
        "solution": SERVE_SOLUTION,
    },
    {
        "name": "quote a python version in ci",
        "files": CI_FILES,
        "prompt": "One of our CI jobs fails during setup with: The version '3.1' with architecture 'x64' was "
                  "not found. We never asked for Python 3.1; we test on 3.10.",
        "check": CI_CHECK,
        "solution": CI_SOLUTION,
    },
]
