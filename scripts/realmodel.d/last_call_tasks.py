"""The last call set of everyday tasks of scripts/realmodel (`--set last_call`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break, second cup,
last orders and closing time sets (tasks.py, new_tasks.py, fresh_tasks.py,
plain_tasks.py, daily_tasks.py, chores_tasks.py, errands_tasks.py,
odd_jobs_tasks.py, side_quests_tasks.py, back_office_tasks.py,
night_shift_tasks.py, early_bird_tasks.py, tea_break_tasks.py,
second_cup_tasks.py, last_orders_tasks.py, closing_time_tasks.py), unlike
all sixteen in what is asked, by someone who had read no run of any of them
(no transcript, no result, no table, no note on one). It is as plain as the
closing time set: the kind of request a junior developer finishes in the
five minutes after last call, each a project of one to three short files
(under 40 lines each), each done by changing or adding a few lines in one
file, in ten kinds of file: a Python CSV-to-JSON converter made to send its
error to stderr with exit status 1 instead of into the output; a JavaScript
die that rolls 0 to 5 made to roll 1 to 6; a bash build script made to work
from any folder, not only the project's; a German page's `lang` changed
from English in HTML; a site's header kept at the top of the window while
the page scrolls, in CSS; TypeScript made to catch a null passed for a
string, in tsconfig.json (JSON); a GitHub Actions workflow in YAML made to
run the tests on Windows as well as Ubuntu; an SQL query made to list the
ten newest orders, newest first, instead of the first ten; a diagram shown
in a Markdown README's "How it works" section; and a question answered from
an .editorconfig (how far JavaScript is indented). The keys are those of
closing_time_tasks.py: the files, the prompt as a person would type it
(five of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before it
and passes after. Checks run the code (the converter in Python on a missing
and a real file, the die in node with Math.random stood in for and then
for real, the build script in bash from four folders of a copy whose path
has a space in it, the query in SQLite through the dashboard's own function
and its script), parse the file (the HTML with html.parser, the CSS with a
small cascade of its own, tsconfig.json as tsc reads it, comments and
trailing commas allowed, the workflow with a small YAML reader of its own,
the README's images and sections) or read the answer (with git to see that
nothing changed), rather than look for one spelling, and use python3
(stdlib), node, bash, git and coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: the message
moved to stderr with status 0, or status 1 with the message still in the
output, or Python's traceback; Math.ceil (which can roll 0), Math.round
(0 to 6, unevenly) or `* 5 + 1` (no 6); `cd ..`, `cd` to the script's own
folder, an unquoted path, or this checkout's path written in; lang on the
body, a content-language meta tag, or "ger"; sticky with no top, sticky on
the nav inside the header, or a fixed header the page slides under;
"strict": "true" as a string, strict outside compilerOptions, or
noImplicitAny alone; `runs-on: [ubuntu-latest, windows-latest]` (one runner
with both labels), or a matrix that runs-on never uses; the ten oldest, the
rows in the order they were typed in, or every order; a link instead of an
image, a path from the wrong folder, or the image outside its section; and
4 (the default for other files) given as the answer.
"""

from new_tasks import left_alone_and_answered, unchanged
from tea_break_tasks import replaced
from second_cup_tasks import YAML_READER
from closing_time_tasks import CSS_CASCADE

# --- errors on stderr (Python; names the file) ------------------------------------------------

CSV2JSON_PY = '''"""Turns a CSV file into JSON: python3 csv2json.py FILE > out.json"""
import csv
import json
import sys


def convert(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(path):
    try:
        rows = convert(path)
    except FileNotFoundError:
        print(f"csv2json: no such file: {path}")
        return
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
'''

MEMBERS_CSV = """name,email,joined
Ada Byrne,ada@example.com,2023-04-02
Tomas Ruiz,tomas@example.com,2024-11-19
"""

STDERR_FILES = {"csv2json.py": CSV2JSON_PY, "members.csv": MEMBERS_CSV}

# python3 csv2json.py on a file that is not there: exit status 1, nothing on
# stdout, and a message on stderr that names the file and is no traceback;
# on a real CSV file (with a quoted comma in it): status 0, nothing on
# stderr, and the rows as JSON on stdout, as before. Fails the message moved
# to stderr with status 0, sys.exit(1) with the message still printed to
# stdout, the try taken away so that Python's traceback gives the status 1,
# another status (2), and everything, the JSON too, sent to stderr.
STDERR_CHECK = r"""python3 - <<'EOF'
import json, os, subprocess, tempfile


def run(*args):
    return subprocess.run(["python3", "csv2json.py", *args], capture_output=True, text=True, timeout=20,
                          stdin=subprocess.DEVNULL)


with tempfile.TemporaryDirectory() as d:
    r = run(os.path.join(d, "nothere.csv"))
    assert r.returncode == 1, ("exit status", r.returncode, r.stderr)
    assert r.stdout == "", ("the error is in the output", r.stdout)
    assert "nothere.csv" in r.stderr and "Traceback" not in r.stderr, ("stderr", r.stderr)
    pets = os.path.join(d, "pets.csv")
    with open(pets, "w", newline="") as f:
        f.write('name,kind\nRex,dog\n"Tibbles, Jr.",cat\n')
    r = run(pets)
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    assert json.loads(r.stdout) == [{"name": "Rex", "kind": "dog"}, {"name": "Tibbles, Jr.", "kind": "cat"}], r.stdout
EOF"""

STDERR_SOLUTION = replaced("csv2json.py", ('        print(f"csv2json: no such file: {path}")\n        return\n',
                                           '        print(f"csv2json: no such file: {path}", file=sys.stderr)\n'
                                           '        sys.exit(1)\n'))

# --- a die that rolls 1 to 6 (JavaScript; names the file) -------------------------------------

DICE_JS = """// Rolls dice for the board game: node dice.js [HOW_MANY]
function roll() {
  return Math.floor(Math.random() * 6);
}

function rollMany(n) {
  const rolls = [];
  for (let i = 0; i < n; i++) {
    rolls.push(roll());
  }
  return rolls;
}

if (require.main === module) {
  const rolls = rollMany(Number(process.argv[2] || 2));
  const total = rolls.reduce((sum, r) => sum + r, 0);
  console.log(`${rolls.join(" + ")} = ${total}`);
}

module.exports = { roll, rollMany };
"""

DICE_FILES = {"dice.js": DICE_JS}

# roll(), called from node with Math.random stood in for: the lowest and the
# highest value Math.random can give roll 1 and 6, and 6000 values spread
# evenly over [0, 1) give each face exactly 1000 times (a roll that does not
# use Math.random skips this); then for real, rollMany(60000) gives 60000
# faces, all of 1 to 6 and nothing else, each between 9000 and 11000 times;
# node dice.js 3 prints three faces of 1 to 6 and their sum. Fails
# Math.ceil (a Math.random of 0 rolls 0), Math.round (0 to 6, the ends half
# as often), Math.floor(Math.random() * 5) + 1 (never a 6), * 7 (0 to 6),
# and the 1 added in rollMany alone (roll() still gives 0).
DICE_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");
const dice = require("./dice.js");

const real = Math.random;
let calls = 0;
let next = 0;
Math.random = () => {
  calls++;
  return next;
};
const edges = [0, 1 - 2 ** -53].map((v) => {
  next = v;
  return dice.roll();
});
if (calls > 0) {
  assert.deepStrictEqual(edges, [1, 6], "Math.random() of 0 and of almost 1 roll " + edges);
  const counts = {};
  for (let k = 0; k < 6000; k++) {
    next = (k + 0.5) / 6000;
    const face = dice.roll();
    counts[face] = (counts[face] || 0) + 1;
  }
  assert.deepStrictEqual(counts, { 1: 1000, 2: 1000, 3: 1000, 4: 1000, 5: 1000, 6: 1000 }, JSON.stringify(counts));
}
Math.random = real;
const many = dice.rollMany(60000);
assert.strictEqual(many.length, 60000);
const counts = {};
for (const face of many) {
  counts[face] = (counts[face] || 0) + 1;
}
assert.deepStrictEqual(Object.keys(counts).sort(), ["1", "2", "3", "4", "5", "6"], JSON.stringify(counts));
for (const face of Object.keys(counts)) {
  assert.ok(counts[face] > 9000 && counts[face] < 11000, JSON.stringify(counts));
}
for (let i = 0; i < 5; i++) {
  const out = execFileSync("node", ["dice.js", "3"], { encoding: "utf8", timeout: 20000 }).trim();
  const m = out.match(/^([1-6]) \+ ([1-6]) \+ ([1-6]) = (\d+)$/);
  assert.ok(m && Number(m[4]) === Number(m[1]) + Number(m[2]) + Number(m[3]), out);
}
EOF"""

DICE_SOLUTION = replaced("dice.js", ("  return Math.floor(Math.random() * 6);\n",
                                     "  return Math.floor(Math.random() * 6) + 1;\n"))

# --- a build that runs from any folder (bash; no file named) ----------------------------------

BUILD_SH = """#!/usr/bin/env bash
# Builds the site into public/: one page for each line of pages.txt (file name|title).
set -e

mkdir -p public
while IFS='|' read -r name title; do
  sed "s/{{title}}/$title/g" template.html > "public/$name.html"
done < pages.txt
echo "built $(wc -l < pages.txt) pages into public/"
"""

PAGES_TXT = """index|Home
menu|Our menu
contact|Find us
"""

CAFE_TEMPLATE_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{title}} | Corner Cafe</title>
</head>
<body>
  <h1>{{title}}</h1>
</body>
</html>
"""

BUILD_FILES = {"scripts/build.sh": BUILD_SH, "pages.txt": PAGES_TXT, "template.html": CAFE_TEMPLATE_HTML}

# bash scripts/build.sh, run on a copy of the project in a folder whose name
# has a space in it, with four pages in pages.txt, from the project's
# folder, from scripts/, from a folder elsewhere and from the folder above
# the project: each time it exits 0 and the project's public/ holds exactly
# the four pages, each the template with its title; no public/ is made
# anywhere else; template.html and pages.txt as they were. Fails `cd ..`
# (the build then breaks from the project's folder), a cd to the script's
# own folder alone (pages.txt is not there), `cd $(dirname $0)/..` unquoted
# (the space), this checkout's path written into the script, `git
# rev-parse --show-toplevel` (not a repository everywhere), and pages.txt
# moved into scripts/.
BUILD_CHECK = unchanged(BUILD_FILES, "template.html", "pages.txt") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile

TEMPLATE = """ + repr(CAFE_TEMPLATE_HTML) + r"""
PAGES = {"index": "Home", "menu": "Our menu", "contact": "Find us", "jobs": "Work with us"}

with tempfile.TemporaryDirectory() as d:
    site = os.path.join(d, "corner cafe")
    shutil.copytree(".", site, ignore=shutil.ignore_patterns(".git", "public"))
    with open(os.path.join(site, "pages.txt"), "w") as f:
        f.write("".join(f"{name}|{title}\n" for name, title in PAGES.items()))
    elsewhere = os.path.join(d, "elsewhere")
    os.mkdir(elsewhere)
    runs = [(site, "scripts/build.sh"), (os.path.join(site, "scripts"), "build.sh"),
            (elsewhere, os.path.join(site, "scripts", "build.sh")), (d, os.path.join("corner cafe", "scripts", "build.sh"))]
    for cwd, script in runs:
        shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
        r = subprocess.run(["bash", script], cwd=cwd, capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (cwd, script, r.stderr)
        public = os.path.join(site, "public")
        got = sorted(os.listdir(public)) if os.path.isdir(public) else None
        assert got == sorted(f"{name}.html" for name in PAGES), (cwd, script, got)
        for name, title in PAGES.items():
            with open(os.path.join(public, f"{name}.html")) as f:
                assert f.read() == TEMPLATE.replace("{{title}}", title), (cwd, name)
        for folder in (os.path.join(site, "scripts"), elsewhere, d):
            assert not os.path.exists(os.path.join(folder, "public")), ("a public/ was made in", folder)
EOF"""

BUILD_SOLUTION = replaced("scripts/build.sh", ("set -e\n", "set -e\ncd \"$(dirname \"$0\")/..\"\n"))

# --- a German page said to be English (HTML; no file named) -----------------------------------

BAKERY_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Bäckerei Sommer, Freiburg</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Bäckerei Sommer</h1>
  <p>Frisches Brot, Brezeln und Kuchen, jeden Morgen ab 6 Uhr.</p>
  <h2>Öffnungszeiten</h2>
  <p>Montag bis Samstag 6 bis 18 Uhr, Sonntag 7 bis 11 Uhr.</p>
  <footer>Hauptstraße 12, 79098 Freiburg</footer>
</body>
</html>
"""

BAKERY_STYLE_CSS = """body {
  font-family: Georgia, serif;
  max-width: 40rem;
  margin: 2rem auto;
  color: #3b2a1a;
}

footer {
  margin-top: 2rem;
  font-size: 0.9rem;
}
"""

LANG_FILES = {"index.html": BAKERY_INDEX_HTML, "style.css": BAKERY_STYLE_CSS}

# index.html, parsed with html.parser: the html element's lang is German
# ("de", or "de-" and a country, in any case; an xml:lang beside it must say
# the same); every other tag and attribute as before, the text the same
# words; style.css as it was. Fails lang="de" put on the body with the html
# element still "en", a content-language meta tag, lang="ger", "german" or
# "de_DE", translate="no", and the page's text translated into English.
LANG_CHECK = unchanged(LANG_FILES, "style.css") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

ORIGINAL = """ + repr(BAKERY_INDEX_HTML) + r"""


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.text, self.langs = [], "", []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.langs += [attrs.pop(name) for name in ("lang", "xml:lang") if name in attrs]
        self.tags.append((tag, sorted(attrs.items())))

    def handle_endtag(self, tag):
        self.tags.append(("/" + tag, []))

    def handle_data(self, data):
        self.text += data


before, after = Page(ORIGINAL), Page(open("index.html").read())
assert after.tags == before.tags, after.tags
assert after.text.split() == before.text.split(), after.text
assert after.langs and all(re.fullmatch(r"de(-[a-z]{2})?", (lang or "").strip().lower()) for lang in after.langs), \
    ("the page's language", after.langs)
EOF"""

LANG_SOLUTION = replaced("index.html", ('<html lang="en">\n', '<html lang="de">\n'))

# --- a header that stays at the top (CSS; names the file) -------------------------------------

ALLOTMENT_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Riverside Allotments</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header class="site-header">
    <nav>
      <a href="index.html">Home</a>
      <a href="plots.html">Plots</a>
      <a href="events.html">Events</a>
    </nav>
  </header>
  <main>
    <h1>Riverside Allotments</h1>
    <p>Forty plots by the river, a shared shed and a seed swap every spring.</p>
    <p>Plots come free now and then: put your name on the waiting list at the shed.</p>
  </main>
</body>
</html>
"""

ALLOTMENT_STYLE_CSS = """body {
  margin: 0;
  font-family: system-ui, sans-serif;
}

.site-header {
  background: #2d6a4f;
  color: #fff;
  padding: 0.75rem 1.5rem;
}

.site-header a {
  color: #fff;
  margin-right: 1rem;
}

main {
  padding: 1.5rem;
  line-height: 1.6;
}
"""

STICKY_FILES = {"index.html": ALLOTMENT_INDEX_HTML, "style.css": ALLOTMENT_STYLE_CSS}

# style.css, read with a small cascade of its own (types, classes,
# descendant and child combinators, specificity, order, !important, @media
# queries on min-width and max-width weighed for a screen 1280px wide): the
# header element ends with position sticky and a top of 0 (top, inset or
# inset-block-start), or position fixed with a top of 0 and the body's or
# main's top margin or padding changed to make room for it; every
# element's other properties, all but positions, offsets, z-index, widths,
# margins, paddings, box-sizing and box-shadow, as before; index.html as it
# was. Fails sticky with no top (it never sticks), sticky on the nav inside
# the header (the header takes it away), a fixed header that the page's
# first lines slide under, position: absolute, the header's colours lost,
# and the rule put in index.html.
STICKY_CHECK = unchanged(STICKY_FILES, "index.html") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

ORIGINAL_CSS = """ + repr(ALLOTMENT_STYLE_CSS) + r"""
SCREEN = 1280
FREE = re.compile(r"(position|top|right|bottom|left|inset(-.*)?|z-index|(min-|max-)?width|box-sizing|box-shadow"
                  r"|(margin|padding)(-.*)?)$")


""" + CSS_CASCADE + r"""

def zero(value):
    return bool(re.fullmatch(r"[-+]?0*\.?0+([a-z%]+)?", (value or "").strip()))


def top_of(decls):
    top = None
    for prop, value in decls:
        if prop in ("top", "inset-block-start"):
            top = value
        elif prop in ("inset", "inset-block") and value.split():
            top = value.split()[0]
    return top


def top_space(decls):
    space = {"margin": "0", "padding": "0"}
    for prop, value in decls:
        for kind in space:
            if prop in (kind, kind + "-block") and value.split():
                space[kind] = value.split()[0]
            elif prop in (kind + "-top", kind + "-block-start"):
                space[kind] = value
    return space


css = open("style.css").read()
page = Page(open("index.html").read())
for chain in page.chains:
    old = {p: v for p, v in declarations(ORIGINAL_CSS, chain) if not FREE.match(p)}
    new = {p: v for p, v in declarations(css, chain) if not FREE.match(p)}
    assert new == old, (chain[-1][0], new)
header = next(c for c in page.chains if c[-1][0] == "header")
decls = declarations(css, header)
position = dict(decls).get("position")
assert position in ("sticky", "-webkit-sticky", "fixed"), ("the header scrolls away", position)
assert zero(top_of(decls)), ("the header has no top of 0", top_of(decls))
if position == "fixed":
    room = False
    for chain in page.chains:
        if chain[-1][0] in ("body", "main"):
            old, new = top_space(declarations(ORIGINAL_CSS, chain)), top_space(declarations(css, chain))
            room = room or any(new[k] != old[k] and not zero(new[k]) for k in new)
    assert room, "the page's first lines slide under the fixed header"
EOF"""

STICKY_SOLUTION = replaced("style.css", ("  background: #2d6a4f;\n",
                                         "  position: sticky;\n  top: 0;\n  background: #2d6a4f;\n"))

# --- TypeScript that lets a null through (JSON; no file named) --------------------------------

TSCONFIG_JSON = """{
  "compilerOptions": {
    "target": "ES2020",
    "module": "commonjs",
    "outDir": "dist",
    "rootDir": "src",
    "esModuleInterop": true,
    "skipLibCheck": true
  },
  "include": ["src"]
}
"""

BADGE_TS = """// Name badges for the meetup: the initials in a circle, the name under them.
export function initials(name: string): string {
  return name
    .split(" ")
    .map((part) => part[0].toUpperCase())
    .join("");
}

export function badge(name: string): string {
  return `(${initials(name)}) ${name}`;
}

const guests: (string | null)[] = ["Ada Lovelace", null, "Grace Hopper"];
for (const guest of guests) {
  console.log(badge(guest));
}
"""

BADGE_PACKAGE_JSON = """{
  "name": "badges",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "build": "tsc",
    "start": "node dist/badge.js"
  },
  "devDependencies": {
    "typescript": "^5.4.0"
  }
}
"""

STRICT_FILES = {"tsconfig.json": TSCONFIG_JSON, "src/badge.ts": BADGE_TS, "package.json": BADGE_PACKAGE_JSON}

# tsconfig.json, read as tsc reads it (comments and trailing commas
# allowed): compilerOptions has strictNullChecks true, or strict true
# without strictNullChecks false; every other option and key as before
# (more of strict's own checks may be turned on too); src/badge.ts and
# package.json as they were. Fails "strict": "true" (a string, which tsc
# refuses), strict put beside compilerOptions instead of in it (tsc ignores
# it there), noImplicitAny alone, strict with strictNullChecks false, and
# the null taken out of the code instead.
STRICT_CHECK = unchanged(STRICT_FILES, "src/badge.ts", "package.json") + r""" && python3 - <<'EOF'
import json, re

ORIGINAL = """ + repr(TSCONFIG_JSON) + r"""
STRICT_FAMILY = {"strict", "strictNullChecks", "noImplicitAny", "noImplicitThis", "strictFunctionTypes",
                 "strictBindCallApply", "strictPropertyInitialization", "alwaysStrict",
                 "useUnknownInCatchVariables"}


def load(text):
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


before, after = load(ORIGINAL), load(open("tsconfig.json").read())
assert {k: v for k, v in after.items() if k != "compilerOptions"} == \
    {k: v for k, v in before.items() if k != "compilerOptions"}, after
options = after.get("compilerOptions")
assert isinstance(options, dict), options
assert {k: v for k, v in options.items() if k not in STRICT_FAMILY} == before["compilerOptions"], options
assert all(type(options[k]) is bool for k in STRICT_FAMILY if k in options), options
checked = options["strictNullChecks"] if "strictNullChecks" in options else options.get("strict", False)
assert checked is True, ("null checks are off", options)
EOF"""

STRICT_SOLUTION = replaced("tsconfig.json", ('    "skipLibCheck": true\n',
                                             '    "skipLibCheck": true,\n    "strict": true\n'))

# --- the tests on Windows too (GitHub Actions YAML; names the file) ---------------------------

TEST_YML = """name: tests

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm ci
      - run: npm test
"""

UPLOADER_PACKAGE_JSON = """{
  "name": "photo-uploader",
  "version": "0.9.1",
  "private": true,
  "scripts": {
    "start": "node src/index.js",
    "test": "node --test test/"
  }
}
"""

WINDOWS_FILES = {".github/workflows/test.yml": TEST_YML, "package.json": UPLOADER_PACKAGE_JSON}

# .github/workflows/test.yml, read by a small YAML reader of its own (block
# mappings and lists, flow lists and mappings of plain values, quotes,
# comments): name and on as before; every job has the steps as before, a
# runs-on that is one label, either a runner's name or ${{ matrix.KEY }}
# (the matrix's values for KEY, its include entries too), and nothing but
# name and strategy besides; the runners, over all jobs, are Ubuntu's and
# Windows' (-latest or a version) and nothing else, both there; package.json
# as it was. Fails `runs-on: [ubuntu-latest, windows-latest]` (one runner
# that has both labels, which never comes), a matrix of systems that
# runs-on never uses (both runs on Ubuntu), Windows instead of Ubuntu, a
# misspelt runner (windows-lastest), and the steps changed.
WINDOWS_CHECK = unchanged(WINDOWS_FILES, "package.json") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(TEST_YML) + r"""


""" + YAML_READER + r"""before, after = parse(ORIGINAL), parse(open(".github/workflows/test.yml").read())
assert {k: v for k, v in after.items() if k != "jobs"} == {k: v for k, v in before.items() if k != "jobs"}, after
steps = before["jobs"]["test"]["steps"]
assert isinstance(after.get("jobs"), dict) and after["jobs"], after.get("jobs")
runners = []
for name, job in after["jobs"].items():
    assert isinstance(job, dict) and job.get("steps") == steps, (name, "steps changed", job)
    assert set(job) <= {"name", "runs-on", "strategy", "steps"}, (name, sorted(job))
    runs_on = job.get("runs-on")
    assert isinstance(runs_on, str), (name, "runs-on is not one label", runs_on)
    m = re.fullmatch(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", runs_on.strip())
    if m:
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        assert isinstance(matrix, dict), matrix
        values = matrix.get(m.group(1))
        values = [] if values is None else values if isinstance(values, list) else [values]
        values += [inc[m.group(1)] for inc in matrix.get("include") or [] if isinstance(inc, dict) and m.group(1) in inc]
        assert values, (name, "the matrix has no", m.group(1))
        runners += values
    else:
        runners.append(runs_on)
for runner in runners:
    assert isinstance(runner, str) and re.fullmatch(r"(ubuntu|windows)-(latest|\d+(\.\d+)?)", runner.strip()), \
        ("not a runner", runner)
assert {r.split("-")[0] for r in runners} == {"ubuntu", "windows"}, ("the tests run on", runners)
EOF"""

WINDOWS_SOLUTION = replaced(".github/workflows/test.yml",
                            ("    runs-on: ubuntu-latest\n",
                             "    runs-on: ${{ matrix.os }}\n    strategy:\n      matrix:\n"
                             "        os: [ubuntu-latest, windows-latest]\n"))

# --- the newest orders first (SQL; no file named) ---------------------------------------------

SHOP_SCHEMA_SQL = """CREATE TABLE orders (
  number TEXT PRIMARY KEY,    -- as printed on the receipt, like "B-20418"
  customer TEXT NOT NULL,
  total_cents INTEGER NOT NULL,
  placed_at TEXT NOT NULL     -- when the order was placed, in UTC: "2025-03-14 09:26:53"
);
"""

LATEST_SQL = """-- The "latest orders" box on the dashboard.
SELECT number, customer, total_cents, placed_at
FROM orders
LIMIT 10;
"""

DASHBOARD_PY = '''"""Prints the dashboard's latest orders box: python3 dashboard.py shop.db"""
import sqlite3
import sys
from pathlib import Path

LATEST = (Path(__file__).parent / "latest.sql").read_text()


def latest_orders(db):
    return db.execute(LATEST).fetchall()


def main(path):
    db = sqlite3.connect(path)
    print("Latest orders")
    for number, customer, total_cents, placed_at in latest_orders(db):
        print(f"{placed_at[:16]}  {number}  {customer:<20} {total_cents / 100:>8.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
'''

NEWEST_FILES = {"schema.sql": SHOP_SCHEMA_SQL, "latest.sql": LATEST_SQL, "dashboard.py": DASHBOARD_PY}

# On SQLite databases made from schema.sql, one with 37 orders and one with
# 4, put in in a shuffled order and numbered in no order of time: the
# dashboard's own latest_orders gives the ten newest (all four) as whole
# rows, newest first, and python3 dashboard.py prints them in that order;
# schema.sql and dashboard.py as they were. Fails ORDER BY placed_at
# without DESC (the ten oldest), ORDER BY rowid or number DESC (the order
# the rows were put in, not the time), DESC with no LIMIT (every order), the
# newest ten listed oldest first, and the columns changed.
NEWEST_CHECK = unchanged(NEWEST_FILES, "schema.sql", "dashboard.py") + r""" && python3 - <<'EOF'
import datetime, os, random, sqlite3, subprocess, tempfile

from dashboard import latest_orders

NAMES = ["Ana", "Bo", "Chen", "Dara", "Eli", "Fern", "Gus", "Hana", "Ivo", "Jun"]


def shop(path, count, seed):
    rng = random.Random(seed)
    start = datetime.datetime(2024, 1, 1)
    moments = rng.sample(range(60 * 60 * 24 * 500), count)
    orders = [(f"B-{rng.randrange(10000, 99999)}-{i}", rng.choice(NAMES), rng.randrange(300, 20000),
               (start + datetime.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")) for i, s in enumerate(moments)]
    rng.shuffle(orders)
    db = sqlite3.connect(path)
    db.executescript(open("schema.sql").read())
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
    db.commit()
    return db, sorted(orders, key=lambda o: o[3], reverse=True)[:10]


with tempfile.TemporaryDirectory() as d:
    for count, seed in [(37, 1), (37, 2), (4, 3)]:
        path = os.path.join(d, f"shop-{seed}.db")
        db, want = shop(path, count, seed)
        got = [tuple(row) for row in latest_orders(db)]
        assert got == want, (count, "orders", got)
        r = subprocess.run(["python3", "dashboard.py", path], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr
        printed = [line.split()[2] for line in r.stdout.splitlines()[1:]]
        assert printed == [o[0] for o in want], r.stdout
EOF"""

NEWEST_SOLUTION = replaced("latest.sql", ("FROM orders\nLIMIT 10;\n", "FROM orders\nORDER BY placed_at DESC\nLIMIT 10;\n"))

# --- a diagram in the README (Markdown; names the file) ---------------------------------------

ARCHITECTURE_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="420" height="100" viewBox="0 0 420 100"
     font-family="sans-serif" font-size="14">
  <rect x="10" y="30" width="110" height="40" fill="#e9f5ff" stroke="#1d70b8"/>
  <text x="65" y="55" text-anchor="middle">carriers</text>
  <rect x="155" y="30" width="110" height="40" fill="#e9f5ff" stroke="#1d70b8"/>
  <text x="210" y="55" text-anchor="middle">poller</text>
  <rect x="300" y="30" width="110" height="40" fill="#e9f5ff" stroke="#1d70b8"/>
  <text x="355" y="55" text-anchor="middle">store + page</text>
  <path d="M120 50 H155 M265 50 H300" stroke="#333"/>
</svg>
"""

TRACKER_README = """# parcel-tracker

Follows parcels from several carriers in one list, and tells you when one
is out for delivery.

## How it works

A poller asks each carrier's API for news every ten minutes and keeps what
changed in a small SQLite store. The web page only ever reads from the
store, so a slow carrier never slows it down.

## Running it

    npm install
    npm start

Then open http://localhost:3000.
"""

DIAGRAM_FILES = {"README.md": TRACKER_README, "docs/architecture.svg": ARCHITECTURE_SVG}

# README.md: exactly one image (Markdown's ![...](...), with or without a
# title, a reference-style one, or an HTML <img>), whose path, read from
# the README's folder (or from the repository's top, as GitHub reads a
# leading /), is docs/architecture.svg, between the "How it works" heading
# and the next heading of its level or higher; with the image taken out,
# the README the same words as before; the SVG as it was. Fails a link to
# the diagram instead of an image (GitHub shows a link), architecture.svg
# or ../docs/architecture.svg (no such file there), this machine's path to
# it, the image under the title or at the end, the SVG's markup pasted into
# the README, and the README's text changed.
DIAGRAM_CHECK = unchanged(DIAGRAM_FILES, "docs/architecture.svg") + r""" && python3 - <<'EOF'
import posixpath, re
from urllib.parse import unquote

ORIGINAL = """ + repr(TRACKER_README) + r"""
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)"
                   r"|!\[[^\]]*\]\[([^\]]*)\]"
                   r"|<img\b[^>]*?\bsrc\s*=\s*[\"']([^\"']+)[\"'][^>]*>", re.I)
DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?([^\s>]+)>?.*$", re.M)

text = open("README.md").read()
definitions = {k.lower(): v for k, v in DEFINITION.findall(text)}
images = []
for m in IMAGE.finditer(text):
    path = m.group(1) or m.group(3)
    if m.group(2) is not None:
        path = definitions.get(m.group(2).lower())
    images.append((m.start(), path))
assert len(images) == 1, ("images", images)
start, path = images[0]
path = unquote(path or "")
path = posixpath.normpath(path.lstrip("/") if path.startswith("/docs/") else path)
assert path == "docs/architecture.svg", ("the image's path", path)
heading = re.search(r"^(#{1,6})\s*how it works\s*#*\s*$", text, re.I | re.M)
assert heading, "no How it works heading"
level = len(heading.group(1))
after = re.compile(r"^#{1,%d}\s" % level, re.M).search(text, heading.end())
assert heading.end() < start < (after.start() if after else len(text)), "the image is not in How it works"
rest = DEFINITION.sub(lambda m: "" if m.group(2) == images[0][1] else m.group(0), IMAGE.sub(" ", text))
assert rest.split() == ORIGINAL.split(), rest
EOF"""

DIAGRAM_SOLUTION = replaced("README.md", ("store, so a slow carrier never slows it down.\n",
                                          "store, so a slow carrier never slows it down.\n\n"
                                          "![How the parts fit together](docs/architecture.svg)\n"))

# --- a question answered from .editorconfig (no file named) -----------------------------------

EDITORCONFIG = """# https://editorconfig.org
root = true

[*]
charset = utf-8
end_of_line = lf
insert_final_newline = true
indent_style = space
indent_size = 4

[*.{js,json,yml}]
indent_size = 2

[Makefile]
indent_style = tab
"""

RECIPES_JS = """// Scales a recipe: node scale.js PEOPLE
const recipe = { serves: 4, grams: { flour: 500, butter: 250, sugar: 200 } };

function scale(people) {
  const factor = people / recipe.serves;
  for (const [what, grams] of Object.entries(recipe.grams)) {
    console.log(`${what}: ${Math.round(grams * factor)} g`);
  }
}

scale(Number(process.argv[2] || recipe.serves));
"""

RECIPES_README = """# scale

Scales the shortbread recipe for however many people are coming:

    node scale.js 10
"""

INDENT_FILES = {".editorconfig": EDITORCONFIG, "scale.js": RECIPES_JS, "README.md": RECIPES_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer says 2 (or two). Fails an empty answer, 4
# (the [*] default, which the *.js section overrides), tabs, and a changed
# file.
INDENT_CHECK = left_alone_and_answered(INDENT_FILES, (".editorconfig", "scale.js", "README.md"), r"""
assert re.search(r"(?<![\w.])(2|two)(?!\w|\.\d)", answer, re.I), answer
""")

INDENT_SOLUTION = r"""echo 'Two spaces: .editorconfig sets indent_size = 2 for *.js files.' > "$AGENT_ANSWER" """

LAST_CALL_TASKS = [
    {
        "name": "send errors to stderr",
        "files": STDERR_FILES,
        "prompt": "python3 csv2json.py missing.csv > out.json puts the error message into out.json and still "
                  "exits with status 0. Errors should go to stderr, with exit status 1.",
        "check": STDERR_CHECK,
        "solution": STDERR_SOLUTION,
    },
    {
        "name": "roll one to six",
        "files": DICE_FILES,
        "prompt": "dice.js sometimes rolls a 0 and never a 6. It should roll 1 to 6, each equally likely.",
        "check": DICE_CHECK,
        "solution": DICE_SOLUTION,
    },
    {
        "name": "build from any folder",
        "files": BUILD_FILES,
        "prompt": "The site build only works when I run it from the project folder: from inside scripts/ or "
                  "anywhere else it can't find its files. Make it work whatever folder I run it from, always "
                  "building into the project's public/.",
        "check": BUILD_CHECK,
        "solution": BUILD_SOLUTION,
    },
    {
        "name": "say the page is german",
        "files": LANG_FILES,
        "prompt": "Our bakery's website is in German, but Chrome keeps offering to translate it from English, "
                  "and screen readers read it out with an English voice.",
        "check": LANG_CHECK,
        "solution": LANG_SOLUTION,
    },
    {
        "name": "keep the header at the top",
        "files": STICKY_FILES,
        "prompt": "In style.css, make the header with the menu stay at the top of the window while people "
                  "scroll down the page.",
        "check": STICKY_CHECK,
        "solution": STICKY_SOLUTION,
    },
    {
        "name": "make typescript catch nulls",
        "files": STRICT_FILES,
        "prompt": "npm start crashed with \"Cannot read properties of null (reading 'split')\", but tsc "
                  "compiled the code without a word. Make TypeScript catch a null passed where a string is "
                  "expected. I'll fix the code myself.",
        "check": STRICT_CHECK,
        "solution": STRICT_SOLUTION,
    },
    {
        "name": "run the tests on windows too",
        "files": WINDOWS_FILES,
        "prompt": "Some of our users are on Windows. Make .github/workflows/test.yml run the tests on Windows "
                  "as well as on Ubuntu.",
        "check": WINDOWS_CHECK,
        "solution": WINDOWS_SOLUTION,
    },
    {
        "name": "list the newest orders first",
        "files": NEWEST_FILES,
        "prompt": "The latest orders box on the dashboard shows the first ten orders we ever got. It should "
                  "show the ten newest, newest first.",
        "check": NEWEST_CHECK,
        "solution": NEWEST_SOLUTION,
    },
    {
        "name": "show the diagram in the readme",
        "files": DIAGRAM_FILES,
        "prompt": "I drew a diagram of how the parts fit together: docs/architecture.svg. Show it in the "
                  "README, in the How it works section.",
        "check": DIAGRAM_CHECK,
        "solution": DIAGRAM_SOLUTION,
    },
    {
        "name": "answer from an editorconfig",
        "files": INDENT_FILES,
        "prompt": "How many spaces should I indent a JavaScript file with in this project? Just tell me, don't "
                  "change anything.",
        "check": INDENT_CHECK,
        "solution": INDENT_SOLUTION,
    },
]
