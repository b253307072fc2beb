"""The errands set of everyday tasks of scripts/realmodel (`--set errands`).

Written after the old, new, fresh, plain, daily and chores sets (tasks.py,
new_tasks.py, fresh_tasks.py, plain_tasks.py, daily_tasks.py,
chores_tasks.py), unlike all six in content and in kind of file, and as
easy as the daily and chores sets, by someone who had read no run of any of
them (no transcript, no result, no table): ten one-step requests, each a
project of one to three short files, each in a kind of file or of code
none of the others touches (a Python module's top-level code, awk in a
shell script, a JSON Schema, .npmrc, robots.txt, .mailmap, a git
pre-commit hook, Python type hints, a date formatted in JavaScript, a
LICENSE). The keys are those of
chores_tasks.py, with new_tasks.py's `setup` where the project needs a
history or a git setting: the files, the prompt as a person would type it
(seven of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before it
and passes after. Checks run the code, git or a parser of the file's own
rules rather than look for one spelling, and use python3, node, bash, git
and coreutils only (and the awk the expenses script itself calls).
"""

from new_tasks import unchanged

# --- a module that runs its script when imported ----------------------------------

TEXTSTATS_PY = '''"""Word statistics: python3 textstats.py [FILE] prints how many words FILE
has (sample.txt by default) and its three most common ones."""
import sys
from collections import Counter

PUNCTUATION = ".,;:!?\\"'()"


def words(text):
    """The words of text, lower-cased, without the punctuation around them."""
    return [w.strip(PUNCTUATION).lower() for w in text.split() if w.strip(PUNCTUATION)]


def top_words(text, n=3):
    return Counter(words(text)).most_common(n)


path = sys.argv[1] if len(sys.argv) > 1 else "sample.txt"
with open(path) as f:
    text = f.read()
print(f"{len(words(text))} words in {path}")
for word, count in top_words(text):
    print(f"  {word}: {count}")
'''

HEADLINE_PY = '''"""Suggests a title for a text: python3 headline.py FILE"""
import sys

from textstats import top_words

with open(sys.argv[1]) as f:
    text = f.read()
word = next(w for w, _ in top_words(text, 20) if len(w) > 3)
print(f"Title idea: All about {word.capitalize()}")
'''

SAMPLE_TXT = """The garden in spring. The garden wakes slowly: first the crocus, then the
tulips. Every garden needs patience, and every gardener learns it. Water the
garden in the morning.
"""

GUARD_FILES = {"textstats.py": TEXTSTATS_PY, "headline.py": HEADLINE_PY, "sample.txt": SAMPLE_TXT}

# The report still comes out when textstats.py runs, with or without its
# file; headline.py prints its title and nothing else; and importing the
# module from a folder without sample.txt neither prints nor reads a file
# (a guard around the prints alone, with the open() left at the top, still
# fails there). headline.py is not what is broken, so it stays as it was.
GUARD_CHECK = unchanged(GUARD_FILES, "headline.py", "sample.txt") + r""" && python3 - <<'EOF'
import os, subprocess, sys, tempfile

here = os.getcwd()

def run(args, cwd=here):
    r = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": here})
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout

report = "29 words in sample.txt\n  the: 6\n  garden: 4\n  in: 2\n"
assert run(["textstats.py"]) == report, run(["textstats.py"])
assert run(["textstats.py", "sample.txt"]) == report
assert run(["headline.py", "sample.txt"]) == "Title idea: All about Garden\n", run(["headline.py", "sample.txt"])
with tempfile.TemporaryDirectory() as d:
    with open(f"{d}/tea.txt", "w") as f:
        f.write("Tea and more tea, and cake.\n")
    got = run(["-c", "import textstats; print(textstats.top_words('b a b', 1))"], cwd=d)
    assert got == "[('b', 2)]\n", got
    got = run([f"{here}/headline.py", "tea.txt"], cwd=d)
    assert got == "Title idea: All about More\n", got
EOF"""

GUARD_SOLUTION = r"""python3 - <<'EOF'
text = open("textstats.py").read()
head, sep, tail = text.partition('path = sys.argv[1]')
body = "".join("    " + line if line else line for line in (sep + tail).splitlines(True))
open("textstats.py", "w").write(head + 'if __name__ == "__main__":\n' + body)
EOF"""

# --- awk that splits a CSV on spaces ---------------------------------------------------

EXPENSES_SH = """#!/usr/bin/env bash
# Adds up an expenses file (date,item,amount): bash expenses.sh [FILE]
set -eu
file=${1:-expenses.csv}
awk 'NR > 1 { total += $3 } END { printf "total: %.2f\\n", total }' "$file"
"""

EXPENSES_CSV = """date,item,amount
2024-05-02,train ticket,23.50
2024-05-03,lunch,12.80
2024-05-07,printer paper,8.99
2024-05-15,coffee beans,14.20
"""

# The script run on its own file (with the argument and without) and on
# another one, whose items have spaces or none and whose sum is no other
# column's: one of the numbers it prints is the total, to the cent (the
# other file's total cannot turn up by chance). Any tool may add them up;
# the data stays as it was.
AWK_CHECK = unchanged({"expenses.csv": EXPENSES_CSV}, "expenses.csv") + r""" && python3 - <<'EOF'
import re, subprocess, tempfile

def says_total(want, *args):
    r = subprocess.run(["bash", "expenses.sh", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", r.stdout)]
    assert any(abs(n - want) < 0.005 for n in numbers), (args, want, r.stdout)

says_total(59.49)
says_total(59.49, "expenses.csv")
with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
    f.write("date,item,amount\n2024-06-01,rent,950.00\n2024-06-03,bus pass for june,49.90\n"
            "2024-06-09,books,31.25\n2024-06-30,phone,20.00\n")
    f.flush()
    says_total(1051.15, f.name)
EOF"""

# --- a JSON Schema that lets unknown keys through -------------------------------------------

CONFIG_SCHEMA_JSON = """{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "Bookshelf settings",
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "Shown in the page title"},
    "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 8080},
    "debug": {"type": "boolean", "default": false},
    "database": {
      "type": "object",
      "properties": {
        "path": {"type": "string"},
        "timeout": {"type": "number", "minimum": 0}
      },
      "required": ["path"]
    }
  },
  "required": ["name", "database"]
}
"""

BOOKSHELF_CONFIG_JSON = """{
  "name": "Bookshelf",
  "port": 8080,
  "database": {"path": "books.db", "timeout": 5}
}
"""

BOOKSHELF_README = """# bookshelf

A small web app for the books we own. Its settings are in config.json;
config.schema.json describes them, and editors and CI (check-jsonschema)
check config.json against it.
"""

SCHEMA_FILES = {"config.schema.json": CONFIG_SCHEMA_JSON, "config.json": BOOKSHELF_CONFIG_JSON,
                "README.md": BOOKSHELF_README}

# The schema applied by a small validator of JSON Schema's own rules (the
# keywords it knows: the usual ones, with additionalProperties,
# unevaluatedProperties, patternProperties and propertyNames, any of which
# may do it; a keyword it does not know fails the check rather than be
# ignored): a config with a key the schema does not name is invalid, at the
# top at least (the database block may or may not be as strict), and every
# config that was valid or invalid before still is.
SCHEMA_CHECK = unchanged(SCHEMA_FILES, "config.json") + r""" && python3 - <<'EOF'
import json, re

NOTES = {"$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated"}
KNOWN = NOTES | {"type", "properties", "required", "additionalProperties", "unevaluatedProperties",
                 "patternProperties", "propertyNames", "enum", "const", "minimum", "maximum",
                 "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "items"}

def is_type(x, t):
    number = isinstance(x, (int, float)) and not isinstance(x, bool)
    return {"object": isinstance(x, dict), "array": isinstance(x, list), "string": isinstance(x, str),
            "boolean": isinstance(x, bool), "null": x is None, "number": number,
            "integer": number and float(x).is_integer()}[t]

def valid(s, x):
    if isinstance(s, bool):
        return s
    assert not set(s) - KNOWN, f"a keyword this check does not know: {set(s) - KNOWN}"
    if "type" in s and not any(is_type(x, t) for t in (s["type"] if isinstance(s["type"], list) else [s["type"]])):
        return False
    if "enum" in s and x not in s["enum"] or "const" in s and x != s["const"]:
        return False
    if is_type(x, "number"):
        if "minimum" in s and x < s["minimum"] or "maximum" in s and x > s["maximum"]:
            return False
        if "exclusiveMinimum" in s and x <= s["exclusiveMinimum"]:
            return False
        if "exclusiveMaximum" in s and x >= s["exclusiveMaximum"]:
            return False
    if isinstance(x, str):
        if len(x) < s.get("minLength", 0) or len(x) > s.get("maxLength", len(x)):
            return False
        if "pattern" in s and not re.search(s["pattern"], x):
            return False
    if isinstance(x, list) and "items" in s and not all(valid(s["items"], i) for i in x):
        return False
    if isinstance(x, dict):
        if any(k not in x for k in s.get("required", [])):
            return False
        for k, v in x.items():
            seen = False
            if k in s.get("properties", {}):
                seen = True
                if not valid(s["properties"][k], v):
                    return False
            for pattern, sub in s.get("patternProperties", {}).items():
                if re.search(pattern, k):
                    seen = True
                    if not valid(sub, v):
                        return False
            if "propertyNames" in s and not valid(s["propertyNames"], k):
                return False
            if not seen:
                for rest in ("additionalProperties", "unevaluatedProperties"):
                    if rest in s and not valid(s[rest], v):
                        return False
    return True

schema = json.load(open("config.schema.json"))
db = {"path": "books.db"}
good = [
    json.load(open("config.json")),
    {"name": "Shelf", "database": db},
    {"name": "Shelf", "port": 9000, "debug": True, "database": {"path": "/srv/b.db", "timeout": 2.5}},
]
bad = [
    {"name": "Shelf", "prot": 9000, "database": db},
    {"name": "Shelf", "database": db, "colour": "red"},
    {"database": db},
    {"name": "Shelf"},
    {"name": "Shelf", "port": "9000", "database": db},
    {"name": "Shelf", "port": 0, "database": db},
    {"name": "Shelf", "debug": "yes", "database": db},
    {"name": "Shelf", "database": {"timeout": 1}},
    {"name": "Shelf", "database": {"path": "b.db", "timeout": -1}},
    ["Shelf"],
]
for x in good:
    assert valid(schema, x), ("rejects", x)
for x in bad:
    assert not valid(schema, x), ("accepts", x)
EOF"""

SCHEMA_SOLUTION = """python3 - <<'EOF'
import json
schema = json.load(open("config.schema.json"))
schema["additionalProperties"] = False
open("config.schema.json", "w").write(json.dumps(schema, indent=2) + "\\n")
EOF"""

# --- exact versions from npm install ------------------------------------------------------------

MAILER_PACKAGE_JSON = """{
  "name": "invoice-mailer",
  "version": "1.0.0",
  "private": true,
  "main": "index.js",
  "scripts": {
    "start": "node index.js"
  },
  "dependencies": {
    "dayjs": "^1.11.10",
    "nodemailer": "^6.9.8"
  }
}
"""

MAILER_INDEX_JS = """// Mails last month's invoices to the accountant: npm start
const dayjs = require("dayjs");
const nodemailer = require("nodemailer");

const month = dayjs().subtract(1, "month").format("YYYY-MM");
const mail = nodemailer.createTransport({ sendmail: true });
mail.sendMail({ to: "accounts@example.com", subject: `Invoices ${month}`, text: "Attached." });
"""

NPMRC_FILES = {"package.json": MAILER_PACKAGE_JSON, "index.js": MAILER_INDEX_JS}

# The project's .npmrc read as npm reads it (its ini format: ; and #
# comments, key = value or a bare key for true, quotes, [sections] scoped
# away, the last value winning): save-exact is true, or save-prefix is
# empty, which comes to the same. A setting in the user's ~/.npmrc is not
# this project's. package.json keeps its dependencies, with or without
# their carets.
NPMRC_CHECK = r"""python3 - <<'EOF'
import json

settings, section = {}, None
for line in open(".npmrc").read().splitlines():
    line = line.strip()
    if not line or line[0] in ";#":
        continue
    if line.startswith("[") and line.endswith("]"):
        section = line[1:-1]
        continue
    key, sep, value = line.partition("=")
    key, value = key.strip(), value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    if section is None:
        settings[key] = value if sep else "true"
exact = settings.get("save-exact", "false").lower() == "true" or settings.get("save-prefix") == ""
assert exact, settings

deps = json.load(open("package.json"))["dependencies"]
assert {k: v.lstrip("^") for k, v in deps.items()} == {"dayjs": "1.11.10", "nodemailer": "6.9.8"}, deps
EOF"""

# --- robots.txt for one crawler -----------------------------------------------------------------

ROBOTS_TXT = """# https://shop.example.com/robots.txt
User-agent: *
Disallow: /cart/
Disallow: /checkout/
Disallow: /search
Allow: /search/help

Sitemap: https://shop.example.com/sitemap.xml
"""

SHOP_INDEX_HTML = """<!doctype html>
<html>
<head><title>Teapot Shop</title></head>
<body><h1>Teapots</h1><p><a href="/search/help">How to search</a></p></body>
</html>
"""

ROBOTS_FILES = {"public/robots.txt": ROBOTS_TXT, "public/index.html": SHOP_INDEX_HTML}

# robots.txt read by the rules of RFC 9309, as Google's parser reads it
# (consecutive User-agent lines share the rules after them, blank lines and
# Sitemap lines do not end a group, a crawler takes the groups naming it or
# else those for *, the longest matching path wins and Allow wins a tie):
# GPTBot may fetch nothing, and every other crawler what it could before.
ROBOTS_CHECK = unchanged(ROBOTS_FILES, "public/index.html") + r""" && python3 - <<'EOF'
import re

def groups(text):
    out, after_agent = [], False
    for line in text.splitlines():
        key, sep, value = line.split("#", 1)[0].partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep:
            continue
        if key == "user-agent":
            if not after_agent:
                out.append(([], []))
            token = value.lower() if value == "*" else re.match(r"[A-Za-z_-]*", value).group().lower()
            out[-1][0].append(token)
            after_agent = True
        elif key in ("allow", "disallow"):
            if out and value:
                out[-1][1].append((key, value))
            after_agent = False
    return out

def matches(pattern, path):
    regex = "".join(".*" if c == "*" else "$" if c == "$" and i == len(pattern) - 1 else re.escape(c)
                    for i, c in enumerate(pattern))
    return re.match(regex, path) is not None

def allowed(text, agent, path):
    gs = groups(text)
    rules = [r for agents, rs in gs if agent.lower() in agents for r in rs]
    if not any(agent.lower() in agents for agents, _ in gs):
        rules = [r for agents, rs in gs if "*" in agents for r in rs]
    best = max(((len(p), k == "allow") for k, p in rules if matches(p, path)), default=(0, True))
    return best[1]

text = open("public/robots.txt").read()
for path in ("/", "/index.html", "/products/teapot", "/search/help", "/cart/"):
    assert not allowed(text, "GPTBot", path), ("GPTBot may fetch", path)
for agent in ("Googlebot", "Bingbot", "SomeOtherBot"):
    for path in ("/", "/index.html", "/products/teapot", "/search/help"):
        assert allowed(text, agent, path), (agent, "may not fetch", path)
    for path in ("/cart/", "/checkout/pay", "/search?q=teapot", "/search"):
        assert not allowed(text, agent, path), (agent, "may fetch", path)
assert any(l.split("#")[0].strip().lower().replace(" ", "") == "sitemap:https://shop.example.com/sitemap.xml"
           for l in text.splitlines()), text
EOF"""

# --- one author under two names -----------------------------------------------------------------

CAFE_README = """# cafe-site

The website of Café Lindeberg: menu, opening hours, the way there.
"""

# Commits by Ana under both of her identities, and one by Ben.
MAILMAP_SETUP = r"""set -e
commit() {
  printf '%s\n' "$3" >> CHANGES.md
  git add CHANGES.md
  git -c user.name="$1" -c user.email="$2" commit -qm "$3"
}
commit 'Ana Silva' ana@example.com 'Add the menu page'
commit ana ana@old-laptop.local 'Fix the menu on phones'
commit 'Ben Okafor' ben@example.com 'Translate the opening hours'
commit 'Ana Silva' ana@example.com 'Add the way there'
commit ana ana@old-laptop.local 'Shrink the photos'
"""

# git itself, through its mailmap: every commit of Ana's shows as Ana Silva
# <ana@example.com> and shortlog counts her once; Ben is as he was; and the
# commits keep the authors they were made with (no history rewritten).
MAILMAP_CHECK = r"""python3 - <<'EOF'
import subprocess

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout

ana, old, ben = "Ana Silva <ana@example.com>", "ana <ana@old-laptop.local>", "Ben Okafor <ben@example.com>"
want = {
    "Add the menu page": (ana, ana),
    "Fix the menu on phones": (old, ana),
    "Translate the opening hours": (ben, ben),
    "Add the way there": (ana, ana),
    "Shrink the photos": (old, ana),
}
seen = []
for line in git("log", "--format=%s%x09%an <%ae>%x09%aN <%aE>", "HEAD").splitlines():
    subject, raw, shown = line.split("\t")
    assert "old-laptop" not in shown, line
    if subject in want:
        assert (raw, shown) == want[subject], (subject, raw, shown)
        seen.append(subject)
assert sorted(seen) == sorted(want), seen
counts = {}
for line in git("shortlog", "-sne", "HEAD").splitlines():
    count, who = line.strip().split("\t")
    counts[who] = int(count)
assert counts.get(ana) == 4 and counts.get(ben) == 1, counts
assert not [who for who in counts if who.lower().startswith("ana") and who != ana], counts
EOF"""

# --- a pre-commit hook that never stops a commit --------------------------------------------

PRE_COMMIT = """#!/usr/bin/env bash
# Runs the tests before every commit; a failing test stops the commit.
# Set up once per clone with: git config core.hooksPath hooks
echo "pre-commit: running the tests"
python3 -m unittest discover -s tests 2>&1 | tail -n 3
"""

PRICES_PY = '''def with_vat(net, rate=0.19):
    """The gross price of a net price, rounded to the cent."""
    return round(net * (1 + rate), 2)
'''

TEST_PRICES_PY = """import unittest

from prices import with_vat


class WithVatTest(unittest.TestCase):
    def test_default_rate(self):
        self.assertEqual(with_vat(10), 11.9)

    def test_reduced_rate(self):
        self.assertEqual(with_vat(10, 0.07), 10.7)
"""

HOOK_FILES = {"hooks/pre-commit": PRE_COMMIT, "prices.py": PRICES_PY, "tests/test_prices.py": TEST_PRICES_PY}

# The hook as git runs it (executable, through core.hooksPath, in a scratch
# copy of the project): a commit goes through while the tests pass, is
# refused when a test fails or cannot even load, and goes through again once
# they pass. The code and its tests are as they were.
HOOK_CHECK = unchanged(HOOK_FILES, "prices.py", "tests/test_prices.py") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    p = f"{d}/p"
    shutil.copytree(".", p, ignore=shutil.ignore_patterns(".git", "__pycache__"))

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=check", "-c", "user.email=check@localhost",
                               "-c", "core.hooksPath=hooks", *args], cwd=p, capture_output=True, text=True)

    def commits():
        r = git("rev-list", "--count", "HEAD")
        return int(r.stdout) if r.returncode == 0 else 0

    git("init", "-q")
    git("add", "-A")
    r = git("commit", "-qm", "the tests pass")
    assert r.returncode == 0 and commits() == 1, ("refused while the tests pass", r.stdout, r.stderr)
    for name, text in (("test_broken.py", "import unittest\n\nclass T(unittest.TestCase):\n"
                                          "    def test_it(self):\n        self.assertEqual(1, 2)\n"),
                       ("test_broken.py", "import nothing_by_this_name\n")):
        with open(f"{p}/tests/{name}", "w") as f:
            f.write(text)
        git("add", "-A")
        r = git("commit", "-qm", "a test fails")
        assert r.returncode != 0 and commits() == 1, ("committed with a failing test", text, r.stdout, r.stderr)
    os.remove(f"{p}/tests/test_broken.py")
    git("add", "-A")
    r = git("commit", "-qm", "the tests pass again", "--allow-empty")
    assert r.returncode == 0 and commits() == 2, ("refused once the tests pass again", r.stdout, r.stderr)
EOF"""

# The hook executable in the project's first commit, and switched on, as the
# comment in it says.
HOOK_SETUP = ("chmod +x hooks/pre-commit "
              "&& git -c user.name=realmodel -c user.email=realmodel@localhost commit -q --amend --no-edit -a "
              "&& git config core.hooksPath hooks")

HOOK_SOLUTION = "sed -i 's/^echo \"pre-commit: running the tests\"$/set -o pipefail\\n&/' hooks/pre-commit"

# --- a type hint naming its own class --------------------------------------------------------

VECTOR_PY = '''"""2-D vectors for the plotter."""
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Vector:
    x: float
    y: float

    def __add__(self, other: Vector) -> Vector:
        return Vector(self.x + other.x, self.y + other.y)

    def scaled(self, factor: float) -> Vector:
        return Vector(self.x * factor, self.y * factor)

    def length(self) -> float:
        return math.hypot(self.x, self.y)
'''

PLOT_PY = '''"""Walks the pen along a path and says where it ends: python3 plot.py"""
from vector import Vector

steps = [Vector(3, 4), Vector(1, -2), Vector(-2, 2)]
pen = Vector(0, 0)
for step in steps:
    pen = pen + step.scaled(2)
print(f"pen at ({pen.x}, {pen.y}), {pen.length():.2f} from the start")
'''

# plot.py runs and prints where the pen ends (on Python 3.11 the hint
# `other: Vector` inside the class raises NameError when the class is
# built). The hints are kept and mean what they meant, as typing resolves
# them: a Vector (by a quoted name, `from __future__ import annotations`, or
# typing.Self) where there was one, float where there was float.
HINT_CHECK = unchanged({"plot.py": PLOT_PY}, "plot.py") + r""" && python3 - <<'EOF'
import subprocess, sys, typing

r = subprocess.run([sys.executable, "plot.py"], capture_output=True, text=True)
assert r.returncode == 0 and r.stdout == "pen at (4, 8), 8.94 from the start\n", (r.stdout, r.stderr)

from vector import Vector
me = (Vector, typing.Self)
hints = typing.get_type_hints(Vector.__add__)
assert set(hints) == {"other", "return"} and hints["other"] in me and hints["return"] in me, hints
hints = typing.get_type_hints(Vector.scaled)
assert set(hints) == {"factor", "return"} and hints["factor"] is float and hints["return"] in me, hints
assert typing.get_type_hints(Vector.length) == {"return": float}
assert typing.get_type_hints(Vector) == {"x": float, "y": float}
assert Vector(1, 2) + Vector(3, 4) == Vector(4, 6) and Vector(1, 2).scaled(3) == Vector(3, 6)
EOF"""

HINT_SOLUTION = "sed -i 's/^import math$/from __future__ import annotations\\n\\n&/' vector.py"

# --- a date in the German way ------------------------------------------------------------------------

ORDERS_JS = """// The order list on the account page.
function formatDate(date) {
  return date.toISOString().slice(0, 10);
}

function orderLine(order) {
  return `${formatDate(order.placed)}  Bestellung ${order.id}  ${order.total.toFixed(2)} €`;
}

module.exports = { formatDate, orderLine };
"""

ACCOUNT_JS = """// Prints a customer's orders as the account page shows them: node account.js
const { orderLine } = require("./orders");

const orders = [
  { id: 1042, placed: new Date("2024-03-07T10:15:00Z"), total: 59.9 },
  { id: 1107, placed: new Date("2024-11-21T16:40:00Z"), total: 12.5 },
];
for (const order of orders) console.log(orderLine(order));
"""

DATE_FILES = {"orders.js": ORDERS_JS, "account.js": ACCOUNT_JS}

# Dates at midday UTC (the same day in UTC and in Berlin, so local or UTC
# getters both do), in either time zone: day.month.year with two-digit day
# and month, as asked, from formatDate and in the order lines; the rest of
# a line is as it was.
DATE_CHECK = unchanged(DATE_FILES, "account.js") + r""" && for tz in UTC Europe/Berlin; do TZ=$tz node -e '
const { formatDate, orderLine } = require("./orders");
const cases = [[2024, 3, 7, "07.03.2024"], [2023, 12, 25, "25.12.2023"], [2025, 1, 1, "01.01.2025"],
               [1999, 10, 9, "09.10.1999"], [2024, 2, 29, "29.02.2024"]];
for (const [y, m, d, want] of cases) {
  const got = formatDate(new Date(Date.UTC(y, m - 1, d, 12)));
  if (got !== want) { console.error("formatDate gives", got, "for", want); process.exit(1); }
}
const line = orderLine({ id: 7, placed: new Date(Date.UTC(2020, 5, 4, 12)), total: 3 });
if (line !== "04.06.2020  Bestellung 7  3.00 €") { console.error("orderLine gives", line); process.exit(1); }
' && test "$(TZ=$tz node account.js)" = "07.03.2024  Bestellung 1042  59.90 €
21.11.2024  Bestellung 1107  12.50 €" || exit 1; done"""

DATE_SOLUTION = ("sed -i 's/return date.toISOString().slice(0, 10);/"
                 "return date.toISOString().slice(0, 10).split(\"-\").reverse().join(\".\");/' orders.js")

# --- a question about the license ---------------------------------------------------------------------

MIT_LICENSE = """MIT License

Copyright (c) 2021 Lena Fischer

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

TIDY_README = """# tidytext

Cleans up pasted text: straight quotes, single spaces, no trailing blanks.

    python3 tidy.py < in.txt > out.txt

Maintained by Tom Berg (tom@example.org). Issues and pull requests welcome.
"""

TIDY_PY = '''"""Cleans up pasted text: python3 tidy.py < in.txt > out.txt"""
import re
import sys

QUOTES = str.maketrans({"\\u201c": '"', "\\u201d": '"', "\\u2018": "'", "\\u2019": "'"})

for line in sys.stdin:
    print(re.sub(r" {2,}", " ", line.translate(QUOTES)).rstrip())
'''

LICENSE_FILES = {"LICENSE": MIT_LICENSE, "README.md": TIDY_README, "tidy.py": TIDY_PY}

# MIT, as a word in capitals (not the "mit" of "submit"), and Lena Fischer
# of the copyright line, not the maintainer the README names; nothing
# changed.
LICENSE_QUESTION_CHECK = (
    'test -z "$(git status --porcelain)" '
    "&& grep -Eq '(^|[^A-Za-z])MIT([^A-Za-z]|$)' \"$AGENT_ANSWER\" "
    "&& grep -qi 'fischer' \"$AGENT_ANSWER\""
)

ERRANDS_TASKS = [
    {
        "name": "run a script only as a script",
        "files": GUARD_FILES,
        "prompt": "The headline script prints a whole word count report before its title idea. That report "
                  "should only come out when the word stats script is run by itself, not when it's imported.",
        "check": GUARD_CHECK,
        "solution": GUARD_SOLUTION,
    },
    {
        "name": "sum a csv column in awk",
        "files": {"expenses.sh": EXPENSES_SH, "expenses.csv": EXPENSES_CSV},
        "prompt": "bash expenses.sh says the total is 0.00, but there are expenses in the file. Fix it.",
        "check": AWK_CHECK,
        "solution": "sed -i \"s/^awk '/awk -F, '/\" expenses.sh",
    },
    {
        "name": "reject unknown config keys",
        "files": SCHEMA_FILES,
        "prompt": 'Someone typed "prot": 9000 in their config instead of "port", the schema check said '
                  "nothing, and the app quietly started on 8080. Make the schema reject settings it doesn't know.",
        "check": SCHEMA_CHECK,
        "solution": SCHEMA_SOLUTION,
    },
    {
        "name": "save exact npm versions",
        "files": NPMRC_FILES,
        "prompt": "When I npm install a package in this project, it gets saved with a ^ in front of its "
                  "version. I want the exact version saved instead, for this project only.",
        "check": NPMRC_CHECK,
        "solution": "echo save-exact=true > .npmrc",
    },
    {
        "name": "keep one crawler out",
        "files": ROBOTS_FILES,
        "prompt": "Keep OpenAI's GPTBot crawler off the whole site. Every other crawler should still be "
                  "allowed what it is allowed now.",
        "check": ROBOTS_CHECK,
        "solution": "printf '\\nUser-agent: GPTBot\\nDisallow: /\\n' >> public/robots.txt",
    },
    {
        "name": "merge an author's two names",
        "files": {"README.md": CAFE_README, "CHANGES.md": "# Changes\n"},
        "setup": MAILMAP_SETUP,
        "prompt": 'git shortlog lists Ana twice: as "Ana Silva" and as "ana" with her old laptop\'s address. '
                  "Make git show all her commits as Ana Silva <ana@example.com>, without rewriting any commits.",
        "check": MAILMAP_CHECK,
        "solution": "echo 'Ana Silva <ana@example.com> <ana@old-laptop.local>' > .mailmap",
    },
    {
        "name": "make a hook stop a commit",
        "files": HOOK_FILES,
        "setup": HOOK_SETUP,
        "prompt": "Our pre-commit hook prints FAILED when a test fails, but the commit still goes through. "
                  "Make it stop the commit when the tests fail.",
        "check": HOOK_CHECK,
        "solution": HOOK_SOLUTION,
    },
    {
        "name": "fix a type hint's name error",
        "files": {"vector.py": VECTOR_PY, "plot.py": PLOT_PY},
        "prompt": "python3 plot.py crashes with NameError: name 'Vector' is not defined. Fix it, but keep "
                  "the type hints.",
        "check": HINT_CHECK,
        "solution": HINT_SOLUTION,
    },
    {
        "name": "show german dates",
        "files": DATE_FILES,
        "prompt": "Order dates on the account page show up as 2024-03-07. Our customers are German: "
                  "show them as 07.03.2024 instead.",
        "check": DATE_CHECK,
        "solution": DATE_SOLUTION,
    },
    {
        "name": "answer from a license",
        "files": LICENSE_FILES,
        "prompt": "What license is this code under, and who holds the copyright? Just tell me, don't "
                  "change anything.",
        # MIT, and Lena Fischer (the LICENSE), not Tom Berg (the README's maintainer).
        "check": LICENSE_QUESTION_CHECK,
        "solution": 'echo "MIT (see LICENSE); the copyright is Lena Fischer\'s, since 2021." > "$AGENT_ANSWER"',
    },
]
