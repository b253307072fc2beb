"""The plain set of everyday tasks of scripts/realmodel (`--set plain`).

Written after the old, new and fresh sets (tasks.py, new_tasks.py,
fresh_tasks.py), unlike all three in content, and easier than the fresh
set: twelve small one-step requests, each a project of one to three short
files in the languages and file kinds a person really works in (Python,
Node, shell, Markdown, TOML, YAML, a Makefile, HTML, CSS, package.json).
The keys are those of new_tasks.py: the files, the prompt as a person would
type it (half name the file, half leave the agent to find it), a check, and
a solution that `scripts/realmodel --check-tasks` applies to prove the check
fails before it and passes after. Checks run the code where they can, accept
any reasonable fix rather than one text, and use python3, node, bash, grep
and git (and coreutils) only; the Makefile's check asks make too when it is
there.
"""

from new_tasks import unchanged

# --- money shown with two decimals ------------------------------------------------

INVOICE_PY = '''"""Prints what the order costs: python3 invoice.py"""

ITEMS = [("notebook", 3.30, 2), ("pen", 0.70, 3), ("stapler", 4.60, 1)]


def total(items):
    return sum(price * quantity for _, price, quantity in items)


def main():
    for name, price, quantity in ITEMS:
        print(f"{name:<10} {quantity} x {price}")
    print(f"Total: {total(ITEMS)}")


if __name__ == "__main__":
    main()
'''

# The total of the project's items is 13.299999999999999; other items are
# swapped in too, so that printing "13.30" by hand does not pass. The item
# lines may keep their prices as they were or show them to the cent.
INVOICE_CHECK = r"""python3 - <<'EOF'
import contextlib, io, re, subprocess, sys

r = subprocess.run([sys.executable, "invoice.py"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
lines = r.stdout.splitlines()
assert len(lines) == 4 and re.fullmatch(r"Total: \$?13\.30", lines[-1].strip()), lines
for line, (name, price, quantity) in zip(lines, [("notebook", 3.3, 2), ("pen", 0.7, 3), ("stapler", 4.6, 1)]):
    words = line.split()
    assert words[:3] == [name, str(quantity), "x"] and float(words[3].lstrip("$")) == price, line
import invoice
for items, want in (([("tea", 0.1, 1), ("milk", 0.2, 1)], "0.30"), ([("mug", 3.5, 2)], "7.00")):
    invoice.ITEMS = items
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        invoice.main()
    assert re.fullmatch(r"Total: \$?" + re.escape(want), out.getvalue().splitlines()[-1].strip()), out.getvalue()
EOF"""

# --- a yes that ignores case ------------------------------------------------------

CONFIRM_PY = '''"""Asks before doing something that cannot be undone."""


def is_yes(answer):
    """True when the answer means yes."""
    return answer.strip() in ("y", "yes")


def confirm(question):
    return is_yes(input(f"{question} [y/N] "))


if __name__ == "__main__":
    if confirm("Delete all drafts?"):
        print("deleted")
    else:
        print("kept")
'''

# Run as a person would, answering at the prompt; what is not a yes in any
# case stays a no (a fix that takes any word starting with y is not asked
# for, but is not failed either: none of the noes below starts with one).
CONFIRM_CHECK = r"""python3 - <<'EOF'
import subprocess, sys

def run(answer):
    r = subprocess.run([sys.executable, "confirm.py"], input=answer + "\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[-1]

for answer in ("Y", "YES", "Yes", "yEs", " Y ", "y", "yes"):
    assert run(answer) == "deleted", answer
for answer in ("", "n", "N", "No", "NO", "nope", "maybe"):
    assert run(answer) == "kept", answer
from confirm import is_yes
assert is_yes("Yes") and is_yes("y") and not is_yes("No")
EOF"""

# --- a plural ------------------------------------------------------------------------

COPY_JS = """// Copies files into a folder and says how many: node copy.js DEST FILE...
const fs = require("node:fs");
const path = require("node:path");

function main([dest, ...files]) {
  fs.mkdirSync(dest, { recursive: true });
  for (const f of files) fs.copyFileSync(f, path.join(dest, path.basename(f)));
  console.log(`${files.length} files copied`);
}

main(process.argv.slice(2));
"""

# Run from the command line only, so that the fix may live anywhere.
PLURAL_CHECK = (
    'd=$(mktemp -d) && printf a > "$d/a.txt" && printf b > "$d/b.txt" && printf c > "$d/c.txt" '
    '&& test "$(node copy.js "$d/one" "$d/a.txt")" = "1 file copied" && cmp -s "$d/a.txt" "$d/one/a.txt" '
    '&& test "$(node copy.js "$d/none")" = "0 files copied" '
    '&& test "$(node copy.js "$d/two" "$d/a.txt" "$d/b.txt")" = "2 files copied" '
    '&& test "$(node copy.js "$d/three" "$d/a.txt" "$d/b.txt" "$d/c.txt")" = "3 files copied" '
    '&& test -f "$d/three/c.txt"'
)

# --- an npm script --------------------------------------------------------------------

TIPS_PACKAGE_JSON = """{
  "name": "terminal-tips",
  "version": "1.0.0",
  "description": "Prints tips for working at the terminal.",
  "main": "index.js",
  "scripts": {
    "test": "node test.js"
  },
  "license": "ISC"
}
"""

TIPS_INDEX_JS = """// Prints every tip, numbered.
const TIPS = [
  "Ctrl-R searches your shell history.",
  "cd - goes back to the previous directory.",
  "!! repeats the last command.",
];

if (require.main === module) {
  TIPS.forEach((tip, i) => console.log(`${i + 1}. ${tip}`));
}
module.exports = { TIPS };
"""

TIPS_TEST_JS = """const assert = require("node:assert");
const { TIPS } = require("./index");

assert.ok(TIPS.length > 0);
assert.ok(TIPS.every((tip) => tip.endsWith(".")));
console.log("ok");
"""

TIPS_FILES = {"package.json": TIPS_PACKAGE_JSON, "index.js": TIPS_INDEX_JS, "test.js": TIPS_TEST_JS}

# npm runs a script with sh -c in the package's folder: so does the check
# (npm itself may not be installed), and the script must print what
# node index.js prints; package.json is otherwise as it was.
NPM_SCRIPT_CHECK = unchanged(TIPS_FILES, "index.js") + r""" && python3 - <<'EOF'
import json, subprocess

want = json.loads('''""" + TIPS_PACKAGE_JSON + r"""''')
got = json.load(open("package.json"))
start = got.get("scripts", {}).pop("start", None)
assert isinstance(start, str), got
assert got == want, got
expected = subprocess.run(["node", "index.js"], capture_output=True, text=True, check=True).stdout
r = subprocess.run(["sh", "-c", start], capture_output=True, text=True)
assert r.returncode == 0 and r.stdout == expected, (start, r.stdout, r.stderr)
EOF"""

NPM_SCRIPT_SOLUTION = (
    "python3 -c 'import json; p = json.load(open(\"package.json\")); p[\"scripts\"][\"start\"] = \"node index.js\"; "
    "open(\"package.json\", \"w\").write(json.dumps(p, indent=2) + \"\\n\")'"
)

# --- a script that cannot be run ------------------------------------------------------

BUILD_SH = """#!/usr/bin/env bash
# Copies the site into dist/, ready to upload.
set -e
mkdir -p dist
cp -r site/. dist/
echo "built $(ls dist | wc -l) files"
"""

BUILD_FILES = {
    "build.sh": BUILD_SH,
    "site/index.html": "<!doctype html>\n<title>Home</title>\n<p>Hello.</p>\n",
    "site/style.css": "body { font-family: sans-serif; }\n",
}

# The project is written without the executable bit (files get 0644), so
# ./build.sh is refused until someone sets it.
BUILD_CHECK = (
    'test -x build.sh && test -z "$(git status --porcelain -- site)" && test "$(./build.sh)" = "built 2 files" '
    "&& cmp -s site/index.html dist/index.html"
)

# --- a folder that is not there yet ---------------------------------------------------

EXPORT_SH = """#!/usr/bin/env bash
# Puts every note into one file, exports/all-notes.md.
cat notes/*.md > exports/all-notes.md
echo "exported $(ls notes/*.md | wc -l) notes to exports/all-notes.md"
"""

EXPORT_FILES = {
    "export.sh": EXPORT_SH,
    "notes/groceries.md": "# Groceries\n\n- oat milk\n- lemons\n",
    "notes/ideas.md": "# Ideas\n\n- a bird feeder on the balcony\n",
}

# Run in a copy with no exports/ (an exports/ the agent made in the project
# does not count: git keeps no empty folder), and twice, since the folder is
# there the second time; neither run may complain (a bare mkdir would,
# the second time, though the script has no set -e to stop it).
EXPORT_CHECK = (
    'test -z "$(git status --porcelain -- notes)" && d=$(mktemp -d) && mkdir "$d/p" && cp -r export.sh notes "$d/p" '
    '&& (cd "$d/p" && bash export.sh > /dev/null 2>> "$d/err" && rm exports/all-notes.md '
    '&& bash export.sh > /dev/null 2>> "$d/err") '
    '&& test ! -s "$d/err" && cat notes/*.md | cmp -s - "$d/p/exports/all-notes.md"'
)

# --- a code block left open -------------------------------------------------------------

QUICKNOTE_README = """# quicknote

Jot a note from the terminal; it lands in ~/notes under today's date.

## Usage

```sh
quicknote "Buy oat milk"
quicknote --list

## Options

- `--list`: show today's notes.
- `--edit`: open today's notes in $EDITOR.

## License

MIT
"""

QUICKNOTE_FIXED = QUICKNOTE_README.replace('--list\n\n## Options', '--list\n```\n\n## Options')

# Fences read as CommonMark reads them: a closing fence is the opening's
# character, at least as long, with nothing after it. The two commands are
# the only code, and every other line is still there, in order.
README_FENCE_CHECK = r"""python3 - <<'EOF'
import re

def parts(text):
    fence, code, prose = None, [], []
    for line in text.splitlines():
        if fence is None:
            m = re.match(r" {0,3}(`{3,}|~{3,})", line)
            if m:
                fence = m.group(1)
                continue
        elif re.fullmatch(r" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*", line):
            fence = None
            continue
        if line.strip():
            (prose if fence is None else code).append(line)
    return fence, code, prose

fence, code, prose = parts(open("README.md").read())
assert fence is None, "a code block is still open"
assert code == ['quicknote "Buy oat milk"', "quicknote --list"], code
old = '''""" + QUICKNOTE_README + r"""'''.splitlines()
assert prose == [line for line in old if line.strip() and not line.startswith(("```", "quicknote "))], prose
EOF"""

# --- a dependency ---------------------------------------------------------------------

PYPROJECT_TOML = """[project]
name = "weatherbot"
version = "0.3.0"
requires-python = ">=3.9"
dependencies = [
    "click>=8.1",
]

[project.scripts]
weatherbot = "weatherbot.cli:main"

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"
"""

WEATHERBOT_CLI_PY = '''"""weatherbot TOWN: today's forecast for a town."""
import click
import requests


@click.command()
@click.argument("town")
def main(town):
    r = requests.get("https://wttr.in/" + town, params={"format": "3"}, timeout=10)
    r.raise_for_status()
    click.echo(r.text.strip())
'''

# Any requirement on requests counts (with or without a version); nothing
# else in pyproject.toml changes. tomllib is Python 3.11's.
DEPENDENCY_CHECK = r"""python3 - <<'EOF'
import re, tomllib

want = tomllib.loads('''""" + PYPROJECT_TOML + r"""''')
got = tomllib.load(open("pyproject.toml", "rb"))
deps = got["project"]["dependencies"]
ours = [d for d in deps if re.match(r"\s*requests\s*($|[\[(<>=!~;])", d, re.I)]
assert len(ours) == 1, deps
got["project"]["dependencies"] = [d for d in deps if d not in ours]
assert got == want, got
EOF"""

# --- the goal make runs when given none -----------------------------------------------

SITE_MAKEFILE = """# make deploy: publish the site; make test: run the tests; make lint: check the style.
.PHONY: deploy test lint

deploy: test
\trsync -az --delete public/ www@example.org:/srv/site/

test:
\tpython3 -m unittest discover -s tests

lint:
\tpython3 -m pyflakes tests
"""

SITE_TEST_PY = '''import unittest


class TestPages(unittest.TestCase):
    def test_home_page_exists(self):
        with open("public/index.html") as f:
            self.assertIn("<title>", f.read())
'''

# make may not be installed, so the check reads the Makefile as GNU make
# would for this much (rules, prerequisites, recipes, .DEFAULT_GOAL) and
# works out what a bare `make`, `make deploy` and `make test` would run;
# where make is there, `make -n` must agree. Either way of fixing it counts:
# .DEFAULT_GOAL, test moved first, or a first rule (all:) that runs test.
MAKE_CHECK = r"""python3 - <<'EOF'
import re, shutil, subprocess

rules, first, goal, current = {}, None, None, None
for line in open("Makefile").read().splitlines():
    if line.startswith("\t"):
        if current:
            for target in current:
                rules[target][1].append(line.strip())
        continue
    current = None
    line = line.split("#")[0].rstrip()
    m = re.match(r"\s*\.DEFAULT_GOAL\s*(?::{1,3}|\?|\+)?=\s*(\S+)", line)
    if m:
        goal = m.group(1)
        continue
    m = re.match(r"([^:=]+?)\s*::?(?!=)(.*)$", line)
    if m:
        rest = m.group(2).split(";", 1)
        current = m.group(1).split()
        for target in current:
            prereqs, recipe = rules.setdefault(target, ([], []))
            prereqs += rest[0].split()
            if len(rest) > 1 and rest[1].strip():
                recipe.append(rest[1].strip())
            if first is None and not target.startswith(".") and "%" not in target:
                first = target

def runs(target, seen=None):
    seen = set() if seen is None else seen
    if target in seen or target not in rules:
        return []
    seen.add(target)
    prereqs, recipe = rules[target]
    return [line for p in prereqs for line in runs(p, seen)] + recipe

default = " ".join(runs(goal or first))
assert "unittest" in default and "rsync" not in default, (goal or first, default)
assert "rsync" in " ".join(runs("deploy")) and "unittest" in " ".join(runs("test"))
if shutil.which("make"):
    for args, present, absent in (([], "unittest", "rsync"), (["deploy"], "rsync", None), (["test"], "unittest", "rsync")):
        r = subprocess.run(["make", "-n"] + args, capture_output=True, text=True)
        assert r.returncode == 0 and present in r.stdout and not (absent and absent in r.stdout), (args, r.stdout, r.stderr)
EOF"""

# --- a required form field ----------------------------------------------------------------

SIGNUP_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>The Allotment Newsletter</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Get the newsletter</h1>
  <p>One email a month about what to sow and when.</p>
  <form action="/subscribe" method="post">
    <label>Name <input type="text" name="name"></label>
    <label>Email <input type="email" name="email"></label>
    <button type="submit">Subscribe</button>
  </form>
</body>
</html>
"""

SIGNUP_CSS = """body { font-family: Georgia, serif; max-width: 32rem; margin: 2rem auto; }
label { display: block; margin-bottom: 0.75rem; }
"""

SIGNUP_FILES = {"index.html": SIGNUP_HTML, "style.css": SIGNUP_CSS}

# The browser's own check: the email input carries `required` (bare or
# with a value). The form and its other fields stay as they were, save that
# the name may be made required too.
REQUIRED_CHECK = r"""python3 - <<'EOF'
from html.parser import HTMLParser

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        if tag in ("form", "input", "button"):
            self.tags.append((tag, dict(attrs)))

def tags(text):
    p = Tags()
    p.feed(text)
    return p.tags

got = tags(open("index.html").read())
emails = [a for tag, a in got if tag == "input" and a.get("name") == "email"]
assert len(emails) == 1 and "required" in emails[0] and emails[0].get("type") == "email", got
strip = lambda ts: [(tag, {k: v for k, v in a.items() if k != "required"}) for tag, a in ts]
assert strip(got) == strip(tags('''""" + SIGNUP_HTML + r"""''')), got
EOF"""

# --- rounded corners ------------------------------------------------------------------------

BUTTONS_CSS = """body {
  font-family: system-ui, sans-serif;
  margin: 2rem auto;
  max-width: 40rem;
}

.button {
  display: inline-block;
  background: #2563eb;
  color: white;
  padding: 0.5rem 1rem;
  border: none;
  text-decoration: none;
}

.button:hover {
  background: #1d4ed8;
}
"""

BUTTONS_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Downloads</title><link rel="stylesheet" href="style.css"></head>
<body>
  <h1>Downloads</h1>
  <a class="button" href="/files/app-linux.tar.gz">Linux</a>
  <a class="button" href="/files/app-mac.dmg">macOS</a>
  <button class="button" onclick="history.back()">Back</button>
</body>
</html>
"""

BUTTONS_FILES = {"style.css": BUTTONS_CSS, "index.html": BUTTONS_HTML}

# The buttons are `.button` links and a <button>: a rule for `.button` (in
# the old block or a new one, alone or in a list of selectors) must give a
# border-radius that is not zero, and every declaration there was stays.
ROUNDED_CHECK = unchanged(BUTTONS_FILES, "index.html") + r""" && python3 - <<'EOF'
import re

def rules(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        decls = dict((k.strip().lower(), v.strip()) for k, v in (d.split(":", 1) for d in body.split(";") if ":" in d))
        out.append(([s.strip() for s in selectors.split(",")], decls))
    return out

got = rules(open("style.css").read())
radii = [d["border-radius"] for s, d in got if ".button" in s and "border-radius" in d]
assert radii and not re.fullmatch(r"(0+(\.0*)?[a-z%]*\s*)+(!important)?|none|initial|unset", radii[-1]), radii
for selectors, decls in rules('''""" + BUTTONS_CSS + r"""'''):
    for k, v in decls.items():
        assert any(selectors[0] in s and d.get(k) == v for s, d in got), (selectors, k, v)
EOF"""

ROUNDED_SOLUTION = "sed -i 's/^  border: none;$/  border: none;\\n  border-radius: 6px;/' style.css"

# --- a question about a YAML config -----------------------------------------------------------

LEDGER_CONFIG_YML = """app:
  name: ledger
  port: 8040

session:
  cookie: ledger_sid
  # minutes; the bank asked for short sessions
  lifetime: 20
  renew_on_activity: true

uploads:
  max_size_mb: 25
  lifetime: 7   # days, then they are deleted
"""

LEDGER_SESSION_PY = '''"""Login sessions, as config.yml sets them up."""
from datetime import datetime, timedelta

import yaml

with open("config.yml") as f:
    SESSION = yaml.safe_load(f)["session"]


def expires(started, last_seen):
    """When a session started at `started`, last used at `last_seen`, runs out."""
    since = last_seen if SESSION["renew_on_activity"] else started
    return since + timedelta(minutes=SESSION["lifetime"])
'''

PLAIN_TASKS = [
    {
        "name": "show two decimals",
        "files": {"invoice.py": INVOICE_PY},
        "prompt": "The invoice total prints as 13.299999999999999. Make it show two decimals, like 13.30.",
        "check": INVOICE_CHECK,
        "solution": "sed -i 's/{total(ITEMS)}/{total(ITEMS):.2f}/' invoice.py",
    },
    {
        "name": "accept any case",
        "files": {"confirm.py": CONFIRM_PY},
        "prompt": "In confirm.py, answering Y or YES counts as no. Make the answer case-insensitive.",
        "check": CONFIRM_CHECK,
        "solution": "sed -i 's/answer.strip() in/answer.strip().lower() in/' confirm.py",
    },
    {
        "name": "fix a plural",
        "files": {"copy.js": COPY_JS},
        "prompt": 'Copying one file prints "1 files copied". It should say "1 file copied".',
        "check": PLURAL_CHECK,
        "solution": "cat > copy.js <<'EOF'\n" + COPY_JS.replace(
            "${files.length} files copied", '${files.length} file${files.length === 1 ? "" : "s"} copied'
        ) + "EOF",
    },
    {
        "name": "add an npm script",
        "files": TIPS_FILES,
        "prompt": "Add a start script to package.json so that npm start runs index.js.",
        "check": NPM_SCRIPT_CHECK,
        "solution": NPM_SCRIPT_SOLUTION,
    },
    {
        "name": "make a script runnable",
        "files": BUILD_FILES,
        "prompt": "./build.sh says Permission denied. Fix it.",
        "check": BUILD_CHECK,
        "solution": "chmod +x build.sh",
    },
    {
        "name": "create a missing folder",
        "files": EXPORT_FILES,
        "prompt": "export.sh fails when there's no exports folder yet. Make it create the folder.",
        "check": EXPORT_CHECK,
        "solution": "sed -i 's|^cat notes|mkdir -p exports\\ncat notes|' export.sh",
    },
    {
        "name": "close a code block",
        "files": {"README.md": QUICKNOTE_README},
        "prompt": "In the README, everything after the usage example shows up as code. Fix it.",
        "check": README_FENCE_CHECK,
        "solution": "cat > README.md <<'EOF'\n" + QUICKNOTE_FIXED + "EOF",
    },
    {
        "name": "add a dependency",
        "files": {"pyproject.toml": PYPROJECT_TOML, "weatherbot/cli.py": WEATHERBOT_CLI_PY},
        "prompt": "Installing weatherbot doesn't install requests, and it needs it. Add it to the dependencies.",
        "check": unchanged({"weatherbot/cli.py": WEATHERBOT_CLI_PY}, "weatherbot/cli.py") + " && " + DEPENDENCY_CHECK,
        "solution": "sed -i 's/^    \"click>=8.1\",$/    \"click>=8.1\",\\n    \"requests>=2.31\",/' pyproject.toml",
    },
    {
        "name": "change make's default",
        "files": {"Makefile": SITE_MAKEFILE, "tests/test_pages.py": SITE_TEST_PY},
        "prompt": "Running make with no target deploys the site! Make plain make run the tests instead.",
        "check": unchanged({"tests/test_pages.py": SITE_TEST_PY}, "tests/test_pages.py") + " && " + MAKE_CHECK,
        "solution": "sed -i 's/^\\.PHONY: deploy test lint$/&\\n.DEFAULT_GOAL := test/' Makefile",
    },
    {
        "name": "require a form field",
        "files": SIGNUP_FILES,
        "prompt": "People can submit the signup form without an email. Make the email field required.",
        "check": unchanged(SIGNUP_FILES, "style.css") + " && " + REQUIRED_CHECK,
        "solution": "sed -i 's/name=\"email\"/name=\"email\" required/' index.html",
    },
    {
        "name": "round the buttons",
        "files": BUTTONS_FILES,
        "prompt": "Give the buttons in style.css rounded corners.",
        "check": ROUNDED_CHECK,
        "solution": ROUNDED_SOLUTION,
    },
    {
        "name": "answer from a yaml config",
        "files": {"config.yml": LEDGER_CONFIG_YML, "session.py": LEDGER_SESSION_PY},
        "prompt": "How long does a login session last before it expires? Just tell me, don't change anything.",
        # 20, with its unit: the 7 next to the other `lifetime` is days.
        "check": (
            'test -z "$(git status --porcelain | grep -v __pycache__)" '
            "&& grep -qw 20 \"$AGENT_ANSWER\" && grep -qi 'min' \"$AGENT_ANSWER\""
        ),
        "solution": 'echo "20 minutes (config.yml, session.lifetime), renewed while the user is active." > "$AGENT_ANSWER"',
    },
]
