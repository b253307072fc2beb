"""The tea break set of everyday tasks of scripts/realmodel (`--set tea_break`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift and early bird sets (tasks.py,
new_tasks.py, fresh_tasks.py, plain_tasks.py, daily_tasks.py,
chores_tasks.py, errands_tasks.py, odd_jobs_tasks.py, side_quests_tasks.py,
back_office_tasks.py, night_shift_tasks.py, early_bird_tasks.py), unlike all
twelve in what is asked, by someone who had read no run of any of them (no
transcript, no result, no table). It is plainer still than the early bird
set: the kind of request a junior developer finishes in a minute or two
between two sips of tea, each a project of one to three short files (under
40 lines each), each done by changing or adding a few lines in one file, in
ten kinds of file: an average() in Python that crashes on an empty list and
should give 0; a JavaScript cart total that ignores how many of each thing
are bought; a shell greeting made to greet the name it is given, with
"world" when there is none; a Node app's port moved from 3000 to 8080 in its
JSON config; production's log level in a YAML settings file turned down to
warnings; the missing `npm install` step added to a README's setup list;
alt text added to the images of an HTML page that have none; a `clean`
target added to a Makefile; black's line length set to 100 in
pyproject.toml; and a question answered from a plain KEY=value config file
(how big an upload may be). The keys are those of early_bird_tasks.py: the
files, the prompt as a person would type it (five of the ten name no file),
a check, and a solution that `scripts/realmodel --check-tasks` applies to
prove the check fails before it and passes after. Checks run the code (the
average in Python, the cart total and the checkout script in node, the
greeting in bash, the app's own call to listen() with node's http stubbed
out, the Makefile's clean recipe in bash on a copy with a built site),
parse the file (the YAML with a small parser of its own, the Markdown's
setup list, the HTML with html.parser, the TOML with tomllib) or read the
answer (with git to see that nothing changed), rather than look for one
spelling, and use python3 (stdlib), node, bash, git and coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: the average
returning None or crashing on other lists, a total that counts the quantity
but not the price, a greeting that breaks without an argument, the port
changed only in the log line, the development level changed too or
production's other settings lost, the install step put after `npm start`,
an empty or file-name alt or a page otherwise changed, a clean recipe
indented with spaces or placed first so that a bare `make` cleans, the
other tool settings lost, and a wrong number in the answer.
"""

from new_tasks import left_alone_and_answered


def replaced(path, *changes):
    """A solution that makes each (old, new) change in `path`, each old text
    there before it is changed."""
    lines = [f"text = open({path!r}).read()"]
    for old, new in changes:
        lines += [f"assert {old!r} in text", f"text = text.replace({old!r}, {new!r})"]
    lines.append(f"open({path!r}, 'w').write(text)")
    return "python3 - <<'EOF'\n" + "\n".join(lines) + "\nEOF"


# --- an average of nothing (Python; names the file) -------------------------------------------

STATS_PY = '''"""Small sums for the weekly sales report."""


def total(numbers):
    return sum(numbers)


def average(numbers):
    return sum(numbers) / len(numbers)


def biggest(numbers):
    return max(numbers) if numbers else None
'''

REPORT_PY = '''"""The weekly sales report: python3 report.py SALES_FILE  (one amount a line)"""
import sys

from stats import average, biggest, total


def main(path):
    with open(path) as f:
        numbers = [float(line) for line in f if line.strip()]
    print(f"sales: {len(numbers)}")
    print(f"total: {total(numbers)}")
    print(f"average: {average(numbers)}")
    print(f"biggest: {biggest(numbers)}")


if __name__ == "__main__":
    main(sys.argv[1])
'''

AVERAGE_FILES = {"stats.py": STATS_PY, "report.py": REPORT_PY}

# average([]) is a number equal to 0 (0 or 0.0, not None or False), the other
# averages are still right, total and biggest are as before, and the report
# runs on an empty week. Fails an average that returns None for an empty
# list, one that catches the error but breaks other lists, and a fix made in
# report.py alone.
AVERAGE_CHECK = r"""python3 - <<'EOF'
import subprocess, tempfile
import stats

result = stats.average([])
assert isinstance(result, (int, float)) and not isinstance(result, bool) and result == 0, repr(result)
assert stats.average([2, 4]) == 3, stats.average([2, 4])
assert stats.average([1.5, 2.5, 3.5]) == 2.5, stats.average([1.5, 2.5, 3.5])
assert stats.average([7]) == 7, stats.average([7])
assert stats.total([1, 2, 3]) == 6 and stats.total([]) == 0
assert stats.biggest([3, 9, 4]) == 9 and stats.biggest([]) is None
with tempfile.NamedTemporaryFile("w", suffix=".txt") as empty:
    r = subprocess.run(["python3", "report.py", empty.name], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
with tempfile.NamedTemporaryFile("w", suffix=".txt") as week:
    week.write("10\n20\n\n30\n")
    week.flush()
    r = subprocess.run(["python3", "report.py", week.name], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "average: 20.0" in r.stdout.splitlines(), r.stdout
EOF"""

AVERAGE_SOLUTION = replaced("stats.py", ("    return sum(numbers) / len(numbers)\n",
                                        "    if not numbers:\n        return 0\n    return sum(numbers) / len(numbers)\n"))

# --- a cart total that ignores quantities (JavaScript; no file named) -------------------------

CART_JS = """// The shopping cart's sums. Prices are in cents.

function cartTotal(items) {
  return items.reduce((sum, item) => sum + item.price, 0);
}

function formatPrice(cents) {
  return "$" + (cents / 100).toFixed(2);
}

module.exports = { cartTotal, formatPrice };
"""

CHECKOUT_JS = """// Prints a sample order: node checkout.js
const { cartTotal, formatPrice } = require("./cart");

const cart = [
  { name: "coffee", price: 300, quantity: 2 },
  { name: "bagel", price: 250, quantity: 1 },
];

for (const item of cart) {
  console.log(`${item.quantity} x ${item.name} at ${formatPrice(item.price)}`);
}
console.log(`total: ${formatPrice(cartTotal(cart))}`);
"""

CART_FILES = {"cart.js": CART_JS, "checkout.js": CHECKOUT_JS}

# cartTotal, called from node, multiplies each price by its quantity and adds
# them up (and is 0 for an empty cart); formatPrice is as before; the sample
# checkout prints "total: $8.50" as its last line. Fails a total that adds up
# the quantities alone, one that multiplies only the first item, and a fix
# made in checkout.js alone.
CART_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");
const { cartTotal, formatPrice } = require("./cart.js");

assert.strictEqual(cartTotal([{ name: "coffee", price: 300, quantity: 2 }]), 600);
assert.strictEqual(cartTotal([
  { name: "tea", price: 275, quantity: 1 },
  { name: "scone", price: 199, quantity: 3 },
  { name: "jam", price: 450, quantity: 2 },
]), 275 + 597 + 900);
assert.strictEqual(cartTotal([]), 0);
assert.strictEqual(formatPrice(850), "$8.50");
const lines = execFileSync("node", ["checkout.js"], { encoding: "utf8" }).trim().split("\n");
assert.strictEqual(lines[lines.length - 1].trim(), "total: $8.50");
EOF"""

CART_SOLUTION = replaced("cart.js", ("sum + item.price, 0", "sum + item.price * item.quantity, 0"))

# --- a greeting that takes a name (shell; names the file) -------------------------------------

GREET_SH = """#!/usr/bin/env bash
# Says hello: greet.sh
set -e

name="world"
echo "Hello, $name!"
"""

GREET_FILES = {"greet.sh": GREET_SH}

# bash greet.sh Sam prints "Hello, Sam!", a name with a space in it is
# greeted whole, and with no argument it still prints "Hello, world!".
# Fails name=$1 with no default (it prints "Hello, !") and a name read from
# the second argument or from stdin.
GREET_CHECK = r"""python3 - <<'EOF'
import subprocess


def greet(*args):
    r = subprocess.run(["bash", "greet.sh", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=10)
    assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r.stdout.strip()


assert greet("Sam") == "Hello, Sam!", greet("Sam")
assert greet("Mary Ann") == "Hello, Mary Ann!", greet("Mary Ann")
assert greet() == "Hello, world!", greet()
EOF"""

GREET_SOLUTION = replaced("greet.sh", ('name="world"\n', 'name="${1:-world}"\n'))

# --- the app's port (JSON; no file named) -----------------------------------------------------

NOTES_SERVER_JS = """// The notes app: node server.js
const http = require("http");
const config = require("./config.json");

const notes = [];

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/notes") {
    res.writeHead(200, { "Content-Type": "application/json" });
    return res.end(JSON.stringify(notes));
  }
  res.writeHead(404);
  res.end();
});

server.listen(config.port, () => {
  console.log(`${config.name} listening on http://localhost:${config.port}`);
});
"""

NOTES_CONFIG_JSON = """{
  "name": "notes",
  "port": 3000,
  "dataDir": "./data",
  "logRequests": true
}
"""

PORT_FILES = {"server.js": NOTES_SERVER_JS, "config.json": NOTES_CONFIG_JSON}

# With node's http.createServer stubbed out (and no PORT in the
# environment), loading server.js calls listen() with 8080 (a number, or a
# string of it, which node takes as the same port); config.json still parses
# and keeps its other settings. Fails the port changed only in the log line,
# a port of "8O80" or 80, and config.json left broken or losing a setting.
PORT_CHECK = r"""python3 -c '
import json
config = json.load(open("config.json"))
rest = {k: v for k, v in config.items() if k != "port"}
assert rest == {"name": "notes", "dataDir": "./data", "logRequests": True}, config
' && node - <<'EOF'
const assert = require("assert");
const http = require("http");
delete process.env.PORT;
let ports = [];
http.createServer = () => ({ listen(port) { ports.push(port); return this; }, on() { return this; } });
require("./server.js");
assert.strictEqual(ports.length, 1, String(ports));
assert.ok(String(ports[0]).trim() === "8080" && Number(ports[0]) === 8080, String(ports[0]));
EOF"""

PORT_SOLUTION = replaced("config.json", ('"port": 3000,', '"port": 8080,'))

# --- production's log level (YAML; no file named) ---------------------------------------------

SETTINGS_YML = """# Settings for each environment; the app picks one with APP_ENV.
development:
  log_level: debug
  database: sqlite:///dev.db
  cache: false

production:
  log_level: debug
  database: postgres://db.internal/shop
  cache: true
"""

SETTINGS_APP_PY = '''"""The shop's web app: loads its settings and sets up logging."""
import logging
import os

import yaml


def load_settings(path="settings.yml"):
    env = os.environ.get("APP_ENV", "development")
    with open(path) as f:
        return yaml.safe_load(f)[env]


settings = load_settings()
logging.basicConfig(level=settings["log_level"].upper())
log = logging.getLogger("shop")
log.info("connecting to %s", settings["database"])
'''

LOGLEVEL_FILES = {"settings.yml": SETTINGS_YML, "app.py": SETTINGS_APP_PY}

# settings.yml, read by a small parser of plain block mappings (quotes and
# comments allowed), has production's log_level warning or warn in any case
# (both names logging knows) and everything else as it was. Fails "error"
# (warnings lost), the development level changed too, and production's
# other settings lost or moved.
LOGLEVEL_CHECK = r"""python3 - <<'EOF'
import re


def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return text


def parse(path):
    root = {}
    stack = [(-1, root)]
    for raw in open(path):
        line = re.sub(r"(^|\s)#.*$", "", raw.rstrip("\n")).rstrip()
        if not line.strip():
            continue
        assert "\t" not in line[: len(line) - len(line.lstrip())], "a tab in the indentation: " + raw
        indent = len(line) - len(line.lstrip(" "))
        key, sep, value = line.strip().partition(":")
        assert sep and key, "not a mapping line: " + raw
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        assert isinstance(parent, dict) and key.strip() not in parent, "bad line: " + raw
        if value.strip():
            parent[scalar(key)] = scalar(value)
        else:
            parent[scalar(key)] = {}
            stack.append((indent, parent[scalar(key)]))
    return root


data = parse("settings.yml")
assert set(data) == {"development", "production"}, data
assert data["development"] == {"log_level": "debug", "database": "sqlite:///dev.db", "cache": False}, data
prod = data["production"]
assert isinstance(prod.get("log_level"), str) and prod["log_level"].lower() in ("warning", "warn"), prod
assert {k: v for k, v in prod.items() if k != "log_level"} == \
    {"database": "postgres://db.internal/shop", "cache": True}, prod
EOF"""

LOGLEVEL_SOLUTION = replaced("settings.yml", ("production:\n  log_level: debug\n", "production:\n  log_level: warning\n"))

# --- the missing install step (Markdown; names the file) --------------------------------------

RECIPES_README = """# recipe-box

A small web app for keeping recipes.

## Setup

1. Install Node.js 20 or newer.
2. Clone this repository and `cd` into it.
3. Copy `.env.example` to `.env`.
4. Run `npm start` and open http://localhost:3000.

## Scripts

- `npm start`: runs the server
- `npm test`: runs the tests
"""

RECIPES_PACKAGE_JSON = """{
  "name": "recipe-box",
  "version": "1.2.0",
  "private": true,
  "scripts": {
    "start": "node server.js",
    "test": "node --test"
  },
  "dependencies": {
    "express": "^4.19.2"
  }
}
"""

RECIPES_SERVER_JS = """const express = require("express");

const app = express();
const recipes = [];

app.get("/recipes", (req, res) => res.json(recipes));

app.listen(3000, () => console.log("recipe-box on http://localhost:3000"));
"""

INSTALL_FILES = {"README.md": RECIPES_README, "package.json": RECIPES_PACKAGE_JSON, "server.js": RECIPES_SERVER_JS}

# README.md: everything outside the Setup section is as it was; the Setup
# section is a numbered list (numbers not checked) that still has the first
# three steps and the `npm start` step, and an `npm install` (or npm i, npm
# ci) that comes after the clone and before `npm start`, as a step of its
# own or in the start step's text. Fails the install put last or first
# (before the clone), a step written as prose outside the list, and the
# Scripts section changed instead.
INSTALL_CHECK = r"""python3 - <<'EOF'
import re

ORIGINAL = """ + repr(RECIPES_README) + r"""


def split(text):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if re.match(r"#+\s*Setup\s*$", l.strip()))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[:start + 1] + ["..."] + lines[end:], lines[start + 1:end]


outside, setup = split(open("README.md").read())
assert outside == split(ORIGINAL)[0], outside
steps = []
for line in setup:
    if not line.strip():
        continue
    m = re.match(r"\s*\d+[.)]\s+(.*)", line)
    if m:
        steps.append(m.group(1).strip())
    else:
        assert steps and line.startswith((" ", "\t")), "not part of the numbered list: " + line
        steps[-1] += " " + line.strip()
for old in ["Install Node.js 20 or newer.", "Clone this repository and `cd` into it.",
            "Copy `.env.example` to `.env`."]:
    assert old in steps, (old, steps)
text = "\n".join(steps)
install = re.search(r"\bnpm\s+(install|i|ci)\b", text)
assert install, steps
clone = text.index("Clone this repository")
start = text.find("npm start")
assert start >= 0, steps
assert clone < install.start() < start, steps
EOF"""

INSTALL_SOLUTION = replaced("README.md", ("4. Run `npm start` and open http://localhost:3000.\n",
                                           "4. Run `npm install`.\n5. Run `npm start` and open http://localhost:3000.\n"))

# --- alt text for the images (HTML; no file named) --------------------------------------------

BAKERY_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Rosie's Bakery</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header>
    <img src="img/logo.png" alt="Rosie's Bakery logo" class="logo">
    <h1>Rosie's Bakery</h1>
  </header>
  <main>
    <p>Fresh bread every morning from 7 until it runs out.</p>
    <img src="img/sourdough.jpg" class="photo">
    <p>Our sourdough takes two days to make.</p>
    <img src="img/shopfront.jpg" class="photo">
    <p>Find us at 12 Mill Lane.</p>
  </main>
  <footer>Open Tuesday to Sunday.</footer>
</body>
</html>
"""

BAKERY_STYLE_CSS = """body {
  font-family: Georgia, serif;
  margin: 0 auto;
  max-width: 40rem;
}

.logo {
  height: 4rem;
}

.photo {
  width: 100%;
  border-radius: 0.5rem;
}
"""

ALT_FILES = {"index.html": BAKERY_INDEX_HTML, "style.css": BAKERY_STYLE_CSS}

# index.html, parsed with html.parser: the same tags with the same
# attributes and the same text as before, except that each img now has an
# alt that says something (not empty, not its file name, not a bare
# "image" or "photo"), and the logo keeps the alt it had. Fails alt="",
# alt="sourdough.jpg", alt="image", one image left out, and the images
# removed or the page otherwise rewritten.
ALT_CHECK = r"""python3 - <<'EOF'
from html.parser import HTMLParser

ORIGINAL = """ + repr(BAKERY_INDEX_HTML) + r"""


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.words, self.alts = [], [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.alts.append((attrs.get("src"), attrs.pop("alt", None)))
        self.tags.append((tag, sorted(attrs.items())))

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self.tags.append(("/" + tag, []))

    def handle_data(self, data):
        self.words += data.split()


before, after = Page(ORIGINAL), Page(open("index.html").read())
assert after.tags == before.tags, after.tags
assert after.words == before.words, after.words
assert [src for src, _ in after.alts] == ["img/logo.png", "img/sourdough.jpg", "img/shopfront.jpg"], after.alts
assert after.alts[0][1] == "Rosie's Bakery logo", after.alts
for src, alt in after.alts:
    text = (alt or "").strip()
    name = src.rsplit("/", 1)[-1]
    assert text and text.lower() not in (name.lower(), name.rsplit(".", 1)[0].lower(), src.lower(), "image",
                                         "img", "picture", "photo", "alt", "alt text"), (src, alt)
EOF"""

ALT_SOLUTION = replaced(
    "index.html",
    ('<img src="img/sourdough.jpg" class="photo">',
     '<img src="img/sourdough.jpg" alt="A loaf of sourdough bread" class="photo">'),
    ('<img src="img/shopfront.jpg" class="photo">',
     '<img src="img/shopfront.jpg" alt="The bakery\'s shop front" class="photo">'),
)

# --- a clean target (Makefile; names the file) ------------------------------------------------

SITE_MAKEFILE = """# Builds the site into build/: run make, then open build/index.html.
SRC := src
BUILD := build

all: $(BUILD)/index.html $(BUILD)/style.css

$(BUILD)/%: $(SRC)/% | $(BUILD)
\tcp $< $@

$(BUILD):
\tmkdir -p $(BUILD)

.PHONY: all
"""

SITE_INDEX_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Hello</title><link rel="stylesheet" href="style.css"></head>
<body><h1>Hello</h1></body>
</html>
"""

SITE_STYLE_CSS = """h1 {
  color: teal;
}
"""

CLEAN_FILES = {"Makefile": SITE_MAKEFILE, "src/index.html": SITE_INDEX_HTML, "src/style.css": SITE_STYLE_CSS}

# The Makefile is read as make reads it, with no make at hand: variables
# (=, :=, ?=, +=, RM's default), backslash continuations, rules, recipe
# lines that start with a tab (with their @ - + prefixes), and `target: ;
# recipe`. The first rule is still `all` (so a bare make still builds), the
# old lines are all still there (.PHONY lines aside), and the clean
# target's recipe, run with bash on a copy holding a built site, leaves no
# build folder (or an empty one) and src/ as it was. Fails a recipe
# indented with spaces (make says "missing separator"), clean put first,
# a recipe that deletes src/ or the Makefile, and a clean with no recipe.
CLEAN_CHECK = r"""python3 - <<'EOF'
import os, re, shutil, subprocess, tempfile

ORIGINAL = """ + repr(SITE_MAKEFILE) + r"""

text = open("Makefile").read()
lines = re.sub(r"\\\n", " ", text).split("\n")
variables = {"RM": "rm -f"}


def expand(s, depth=0):
    assert depth < 20, "a variable that refers to itself: " + s

    def value(m):
        return expand(variables.get(m.group(1), ""), depth + 1)

    return "$".join(re.sub(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]", value, part) for part in s.split("$$"))


rules, i = [], 0
while i < len(lines):
    line = lines[i]
    i += 1
    if not line.strip() or line.lstrip().startswith("#") or line.startswith("\t"):
        continue
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(::?=|\?=|\+=|=)\s*(.*)$", line)
    if m:
        name, op, value = m.groups()
        value = value.strip()
        if op == "?=" and name in variables:
            continue
        if op == "+=":
            value = (variables.get(name, "") + " " + value).strip()
        elif op != "=":
            value = expand(value)
        variables[name] = value
        continue
    m = re.match(r"([^:]+?)\s*::?(?!=)(.*)$", line)
    assert m, "make would not understand: " + line
    targets, rest = m.groups()
    recipe = []
    if ";" in rest:
        recipe.append(rest.split(";", 1)[1])
    while i < len(lines) and (lines[i].startswith("\t") or (not lines[i].strip() and i + 1 < len(lines)
                                                             and lines[i + 1].startswith("\t"))):
        if lines[i].strip():
            recipe.append(lines[i][1:])
        i += 1
    rules.append((expand(targets).split(), recipe))

firsts = [t for t, _ in rules if not t[0].startswith(".")]
assert firsts and firsts[0][0] == "all", "the first rule, which a bare make runs, is not all: %r" % firsts[:1]
kept = [l for l in text.splitlines() if not l.startswith(".PHONY")]
old = iter(kept)
for line in ORIGINAL.splitlines():
    if not line.startswith(".PHONY"):
        assert any(line == k for k in old), "an old line is gone: " + line
recipe = [line for targets, lines_ in rules if "clean" in targets for line in lines_]
assert recipe, "no clean target with a recipe (recipe lines must start with a tab)"

with tempfile.TemporaryDirectory() as d:
    for name in ["Makefile", "src/index.html", "src/style.css"]:
        os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
        shutil.copy(name, os.path.join(d, name))
    os.makedirs(f"{d}/build/img")
    for name in ["index.html", "style.css", "img/logo.png"]:
        open(f"{d}/build/{name}", "w").write("built\n")
    for line in recipe:
        line = expand(line).strip()
        m = re.match(r"[@+\-\s]*", line)
        ignore = "-" in m.group(0)
        r = subprocess.run(["bash", "-c", line[m.end():]], cwd=d, capture_output=True, text=True, timeout=20)
        assert r.returncode == 0 or ignore, (line, r.stderr)
    assert not os.path.exists(f"{d}/build") or not os.listdir(f"{d}/build"), os.listdir(f"{d}/build")
    for name in ["Makefile", "src/index.html", "src/style.css"]:
        assert open(f"{d}/{name}").read() == open(name).read(), name + " was changed or deleted"
EOF"""

CLEAN_SOLUTION = r"""printf '\nclean:\n\trm -rf $(BUILD)\n\n.PHONY: clean\n' >> Makefile"""

# --- black's line length (TOML; names the file) -----------------------------------------------

INVOICE_PYPROJECT = """[project]
name = "invoice-tools"
version = "0.3.0"
requires-python = ">=3.9"
dependencies = ["requests>=2.31"]

[tool.black]
line-length = 88
target-version = ["py39"]

[tool.isort]
profile = "black"
"""

INVOICE_PY = '''"""Sends an invoice to the billing API: python3 invoice.py CUSTOMER AMOUNT"""
import sys

import requests

API = "https://billing.example.com/invoices"


def send(customer, amount):
    r = requests.post(API, json={"customer": customer, "amount": amount}, timeout=10)
    r.raise_for_status()
    return r.json()["id"]


if __name__ == "__main__":
    print(send(sys.argv[1], float(sys.argv[2])))
'''

BLACK_FILES = {"pyproject.toml": INVOICE_PYPROJECT, "invoice.py": INVOICE_PY}

# pyproject.toml, read with tomllib: [tool.black] sets the line length to
# 100 (as line-length, or line_length, which black reads the same), once,
# and everything else is as it was. Fails a second [tool.black] table or
# key (tomllib refuses it), "100" as a string, the setting put under
# [tool.isort] or [project], and the other settings lost.
BLACK_CHECK = r"""python3 - <<'EOF'
import tomllib

data = tomllib.load(open("pyproject.toml", "rb"))
black = dict(data.get("tool", {}).get("black", {}))
lengths = [black.pop(k) for k in ("line-length", "line_length") if k in black]
assert len(lengths) == 1 and type(lengths[0]) is int and lengths[0] == 100, lengths
assert black == {"target-version": ["py39"]}, black
assert data["tool"] == {"black": data["tool"]["black"], "isort": {"profile": "black"}}, data["tool"]
assert data["project"] == {"name": "invoice-tools", "version": "0.3.0", "requires-python": ">=3.9",
                           "dependencies": ["requests>=2.31"]}, data["project"]
assert set(data) == {"project", "tool"}, data
EOF"""

BLACK_SOLUTION = replaced("pyproject.toml", ("line-length = 88\n", "line-length = 100\n"))

# --- a question answered from a config file (plain KEY=value config; no file named) -----------

UPLOAD_CONFIG_ENV = """# Defaults for the upload service; any of them can be overridden in the environment.
APP_NAME=Corner Shop uploads
PORT=5000
SESSION_MINUTES=45
MAX_UPLOAD_MB=8
ALLOWED_TYPES=jpg,png,pdf
"""

UPLOAD_APP_PY = '''"""The upload service: python3 app.py"""
import os
from http.server import BaseHTTPRequestHandler, HTTPServer


def load_config(path="config.env"):
    config = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, value = line.split("=", 1)
                config[key] = os.environ.get(key, value)
    return config


CONFIG = load_config()
MAX_UPLOAD = int(CONFIG["MAX_UPLOAD_MB"]) * 1024 * 1024


class Upload(BaseHTTPRequestHandler):
    def do_POST(self):
        size = int(self.headers.get("Content-Length", 0))
        if size > MAX_UPLOAD:
            self.send_error(413, "file too large")
            return
        self.rfile.read(size)
        self.send_response(201)
        self.end_headers()


if __name__ == "__main__":
    HTTPServer(("", int(CONFIG["PORT"])), Upload).serve_forever()
'''

UPLOAD_FILES = {"config.env": UPLOAD_CONFIG_ENV, "app.py": UPLOAD_APP_PY}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer gives 8 MB: an 8 standing alone ("8 MB",
# "8MB", "8 megabytes", "8 MiB"), "eight", or the 8388608 bytes the code
# works out. Fails an empty answer, another setting's number (45, 5000) given
# instead, and a changed file.
UPLOAD_CHECK = left_alone_and_answered(UPLOAD_FILES, ("config.env", "app.py"), r"""
assert re.search(r"(?<![\d.,])8(?![\d,])|\beight\b|8,?388,?608", answer, re.I), answer
""")

UPLOAD_SOLUTION = r"""echo 'Up to 8 MB (MAX_UPLOAD_MB=8 in config.env).' > "$AGENT_ANSWER" """

TEA_BREAK_TASKS = [
    {
        "name": "average of an empty list",
        "files": AVERAGE_FILES,
        "prompt": "average() in stats.py crashes with ZeroDivisionError when the list is empty. It should just "
                  "return 0 then.",
        "check": AVERAGE_CHECK,
        "solution": AVERAGE_SOLUTION,
    },
    {
        "name": "count quantities in the cart total",
        "files": CART_FILES,
        "prompt": "The cart total ignores quantities: two coffees at $3.00 come to $3.00 instead of $6.00. "
                  "Please fix it.",
        "check": CART_CHECK,
        "solution": CART_SOLUTION,
    },
    {
        "name": "greet the name given",
        "files": GREET_FILES,
        "prompt": "Make greet.sh greet the name it's given: greet.sh Sam should print \"Hello, Sam!\". With no "
                  "name it should still print \"Hello, world!\".",
        "check": GREET_CHECK,
        "solution": GREET_SOLUTION,
    },
    {
        "name": "move the app to port 8080",
        "files": PORT_FILES,
        "prompt": "Change the port the app listens on from 3000 to 8080.",
        "check": PORT_CHECK,
        "solution": PORT_SOLUTION,
    },
    {
        "name": "quieter logs in production",
        "files": LOGLEVEL_FILES,
        "prompt": "The app logs way too much in production. Make it log only warnings and errors there, and "
                  "leave development as it is.",
        "check": LOGLEVEL_CHECK,
        "solution": LOGLEVEL_SOLUTION,
    },
    {
        "name": "add the install step",
        "files": INSTALL_FILES,
        "prompt": "The setup steps in README.md forget to install the dependencies, so new people get \"Cannot "
                  "find module 'express'\". Add the missing step.",
        "check": INSTALL_CHECK,
        "solution": INSTALL_SOLUTION,
    },
    {
        "name": "give the images alt text",
        "files": ALT_FILES,
        "prompt": "Some images on the home page have no alt text. Add a short description to each one that's "
                  "missing it.",
        "check": ALT_CHECK,
        "solution": ALT_SOLUTION,
    },
    {
        "name": "add a make clean",
        "files": CLEAN_FILES,
        "prompt": "Add a clean target to the Makefile that deletes the build folder.",
        "check": CLEAN_CHECK,
        "solution": CLEAN_SOLUTION,
    },
    {
        "name": "set black's line length",
        "files": BLACK_FILES,
        "prompt": "Set black's line length to 100 in pyproject.toml.",
        "check": BLACK_CHECK,
        "solution": BLACK_SOLUTION,
    },
    {
        "name": "answer from a config file",
        "files": UPLOAD_FILES,
        "prompt": "What's the biggest file someone can upload? Just tell me, don't change anything.",
        "check": UPLOAD_CHECK,
        "solution": UPLOAD_SOLUTION,
    },
]
