"""The fresh set of everyday tasks of scripts/realmodel (`--set fresh`).

Written after the old set (tasks.py) and the new set (new_tasks.py), unlike
both in shape and content, and reported apart. The keys are those of
new_tasks.py: each task is a tiny project (its files), the prompt a person
would type (some name the file, some leave the agent to find it), a check,
and a solution that `scripts/realmodel --check-tasks` applies to prove the
check fails before it and passes after. Checks run the code where they can,
and use python3, node, bash, grep and git (and coreutils) only.
"""

from new_tasks import unchanged

# --- a config key renamed in the config, the code and the docs ----------------

DB_CONFIG_JSON = """{
  "host": "localhost",
  "port": 5432,
  "user": "shop",
  "dbname": "shop_prod",
  "pool": 5
}
"""

DB_PY = '''"""Connects to the database that config.json names."""
import json


def load(path="config.json"):
    with open(path) as f:
        return json.load(f)


def dsn(config):
    return f"postgresql://{config['user']}@{config['host']}:{config['port']}/{config['dbname']}"


def describe(config):
    return f"{dsn(config)} (pool of {config['pool']})"


if __name__ == "__main__":
    print(describe(load()))
'''

DB_SETTINGS_MD = """# Settings

`config.json` holds:

- `host`, `port`: where the database server is.
- `user`: who to log in as.
- `dbname`: the database.
- `pool`: how many connections to keep open (5 is plenty for one worker).
"""

RENAME_FILES = {"config.json": DB_CONFIG_JSON, "db.py": DB_PY, "docs/settings.md": DB_SETTINGS_MD}

RENAME_CHECK = r"""python3 - <<'EOF'
import json, subprocess, sys
config = json.load(open("config.json"))
assert config == {"host": "localhost", "port": 5432, "user": "shop", "dbname": "shop_prod", "pool_size": 5}, config
r = subprocess.run([sys.executable, "db.py"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert r.stdout == "postgresql://shop@localhost:5432/shop_prod (pool of 5)\n", r.stdout
import db
assert db.describe(dict(config, pool_size=12)) == "postgresql://shop@localhost:5432/shop_prod (pool of 12)"
docs = open("docs/settings.md").read()
assert "`pool_size`" in docs and "`pool`" not in docs, docs
EOF"""

RENAME_SOLUTION = (
    "sed -i 's/\"pool\"/\"pool_size\"/' config.json && sed -i \"s/config\\['pool'\\]/config['pool_size']/\" db.py "
    "&& sed -i 's/`pool`/`pool_size`/' docs/settings.md"
)

# --- input validation ------------------------------------------------------------

DISCOUNT_PY = '''"""Prices after a discount."""


def apply_discount(price, percent):
    """The price with `percent` per cent taken off, to the cent."""
    return round(price * (1 - percent / 100), 2)
'''

CART_PY = '''from discount import apply_discount


def total(items, percent=0):
    """What a cart of (price, quantity) pairs costs, after the discount."""
    return apply_discount(sum(price * quantity for price, quantity in items), percent)
'''

DISCOUNT_FIXED = DISCOUNT_PY.replace(
    '    return round(',
    '    if not 0 <= percent <= 100:\n        raise ValueError(f"a discount of {percent}%")\n    return round(',
)

DISCOUNT_CHECK = unchanged({"cart.py": CART_PY}, "cart.py") + r""" && python3 - <<'EOF'
from cart import total
from discount import apply_discount

assert apply_discount(80, 25) == 60 and apply_discount(80, 0) == 80 and apply_discount(80, 100) == 0
assert apply_discount(19.99, 10) == 17.99
assert total([(10, 2), (5, 1)], 20) == 20 and total([(3, 3)]) == 9
for bad in (150, -20, 100.5, -0.01):
    try:
        apply_discount(80, bad)
    except ValueError:
        pass
    else:
        raise SystemExit(f"no ValueError for a discount of {bad}")
try:
    total([(10, 1)], 101)
except ValueError:
    pass
else:
    raise SystemExit("no ValueError from the cart")
EOF"""

# --- a sort that compares the wrong way ------------------------------------------

HIGHSCORES_JS = """// The high-score table: the best five, best first.
const fs = require("node:fs");
const path = require("node:path");

function top(entries, n) {
  return entries.slice().sort((a, b) => (a.points < b.points ? 1 : -1)).slice(0, n);
}

function main() {
  // Exported from the sign-up form, so every field is a string.
  const entries = JSON.parse(fs.readFileSync(path.join(__dirname, "scores.json"), "utf8"));
  top(entries, 5).forEach((e, i) => console.log(`${i + 1}. ${e.name} ${e.points}`));
}

if (require.main === module) main();
module.exports = { top };
"""

SCORES_JSON = """[
  {"name": "Mia", "points": "9"},
  {"name": "Leo", "points": "100"},
  {"name": "Ava", "points": "42"},
  {"name": "Sam", "points": "7"},
  {"name": "Zoe", "points": "1250"},
  {"name": "Ian", "points": "88"}
]
"""

HIGHSCORES_FILES = {"highscores.js": HIGHSCORES_JS, "scores.json": SCORES_JSON}

HIGHSCORES_CHECK = (
    "test \"$(node highscores.js)\" = \"$(printf '1. Zoe 1250\\n2. Leo 100\\n3. Ian 88\\n4. Ava 42\\n5. Mia 9')\" "
    "&& " + unchanged(HIGHSCORES_FILES, "scores.json") + r""" && node -e '
const assert = require("node:assert");
const { top } = require("./highscores");
const e = [{ name: "a", points: "5" }, { name: "b", points: "40" }, { name: "c", points: "300" }, { name: "d", points: "2" }];
assert.deepStrictEqual(top(e, 3).map((x) => x.name), ["c", "b", "a"]);
assert.deepStrictEqual(top(e, 9).map((x) => x.name), ["c", "b", "a", "d"]);
'"""
)

# --- a missing import -------------------------------------------------------------

WORDFREQ_PY = '''"""Prints the most common words of a text file: python3 wordfreq.py FILE [N]."""
import re
import sys


def words(text):
    return re.findall(r"[a-z']+", text.lower())


def most_common(text, n):
    return Counter(words(text)).most_common(n)


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with open(sys.argv[1]) as f:
        for word, count in most_common(f.read(), n):
            print(f"{count} {word}")


if __name__ == "__main__":
    main()
'''

POEM_TXT = "The rain falls on the roof,\nthe roof holds the rain,\nand the night is long.\nRain again.\n"

WORDFREQ_FILES = {"wordfreq.py": WORDFREQ_PY, "poem.txt": POEM_TXT}

WORDFREQ_CHECK = (
    "test \"$(python3 wordfreq.py poem.txt)\" = \"$(printf '5 the\\n3 rain\\n2 roof')\" "
    "&& t=$(mktemp) && printf 'b a b\\nc B a\\n' > \"$t\" && test \"$(python3 wordfreq.py \"$t\" 2)\" = \"$(printf '3 b\\n2 a')\" "
    "&& " + unchanged(WORDFREQ_FILES, "poem.txt")
)

# --- a default in an INI file -----------------------------------------------------

SETTINGS_INI = """[server]
host = 127.0.0.1
port = 8080

[cache]
# seconds
ttl = 300
max_entries = 1000

[session]
# seconds
ttl = 3600
"""

CACHE_PY = '''"""A small in-memory cache whose entries expire, set up in settings.ini."""
import configparser
import os
import time

_config = configparser.ConfigParser()
_config.read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "settings.ini"))
TTL = _config.getint("cache", "ttl", fallback=300)
MAX_ENTRIES = _config.getint("cache", "max_entries", fallback=1000)


class Cache:
    def __init__(self, clock=time.monotonic):
        self._items = {}
        self._clock = clock

    def put(self, key, value):
        if len(self._items) >= MAX_ENTRIES:
            self._items.pop(next(iter(self._items)))
        self._items[key] = (self._clock() + TTL, value)

    def get(self, key, default=None):
        expires, value = self._items.get(key, (0, default))
        return value if self._clock() < expires else default
'''

CACHE_CHECK = r"""python3 - <<'EOF'
import configparser
import cache

now = [1000.0]
c = cache.Cache(clock=lambda: now[0])
c.put("page", "<html>")
now[0] += 599
assert c.get("page") == "<html>", "gone before 10 minutes"
now[0] += 2
assert c.get("page") is None, "still there after 10 minutes"
p = configparser.ConfigParser()
p.read("settings.ini")
assert p.getint("cache", "ttl") == 600, "settings.ini"
assert p.getint("cache", "max_entries") == 1000 and p.getint("session", "ttl") == 3600
assert dict(p["server"]) == {"host": "127.0.0.1", "port": "8080"}
EOF"""

# --- an unused function -----------------------------------------------------------

TEXTUTILS_PY = '''"""Helpers for cleaning up what people type."""
import re
import unicodedata


def _collapse_spaces(text):
    return re.sub(r"\\s+", " ", text).strip()


def normalize(text):
    """Lower case, single spaces, no accents."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return _collapse_spaces(text.lower())


def title_case(text):
    """'the old man' -> 'The Old Man'."""
    return " ".join(word.capitalize() for word in text.split())


def truncate(text, width):
    """text cut to `width` characters, ending in ... when it was longer."""
    return text if len(text) <= width else text[: width - 3] + "..."


def initials(name):
    """'Ada Lovelace' -> 'AL'."""
    return "".join(part[0].upper() for part in name.split())
'''

ROSTER_PY = '''from cards import badge
from textutils import normalize, truncate

NAMES = ["  Zoe   Olsen ", "Grace Hopper", "Bartholomew Featherstonehaugh"]

for name in NAMES:
    print(f"{truncate(normalize(name), 16):<16} {badge(name)}")
'''

CARDS_PY = '''import textutils


def badge(name):
    return "[" + textutils.initials(name.strip()) + "]"
'''

UNUSED_FILES = {"textutils.py": TEXTUTILS_PY, "roster.py": ROSTER_PY, "cards.py": CARDS_PY}

UNUSED_CHECK = unchanged(UNUSED_FILES, "roster.py", "cards.py") + r""" && python3 - <<'EOF'
import ast, subprocess, sys

defs = {n.name for n in ast.parse(open("textutils.py").read()).body if isinstance(n, ast.FunctionDef)}
assert defs == {"_collapse_spaces", "normalize", "truncate", "initials"}, defs
r = subprocess.run([sys.executable, "roster.py"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert r.stdout.splitlines() == ["zoe olsen        [ZO]", "grace hopper     [GH]", "bartholomew f... [BF]"], r.stdout
import textutils
assert textutils.normalize("  Hello   World ") == "hello world"
assert textutils.truncate("abcdefgh", 6) == "abc..." and textutils.truncate("abc", 6) == "abc"
assert textutils.initials("grace brewster hopper") == "GBH"
EOF"""

TITLE_CASE = TEXTUTILS_PY[TEXTUTILS_PY.index("def title_case"):TEXTUTILS_PY.index("def truncate")]
UNUSED_SOLUTION = "cat > textutils.py <<'EOF'\n" + TEXTUTILS_PY.replace(TITLE_CASE, "") + "EOF"

# --- a script's output sorted -----------------------------------------------------

TODOS_SH = """#!/usr/bin/env bash
# How many TODO comments each Python file under src/ has.
for f in src/*.py; do
    echo "$(grep -c TODO "$f") $f"
done
"""

TODOS_FILES = {
    "todos.sh": TODOS_SH,
    "src/api.py": "def get(path):\n    # TODO: retry on timeouts\n    return path\n",
    "src/db.py": (
        "# TODO: a connection pool\n\n\ndef connect():\n    # TODO: read the password from the environment\n    pass\n\n\n"
        "def close():\n    pass  # TODO: flush first\n\n\ndef migrate():\n    pass  # TODO: write it\n"
    ),
    "src/models.py": "class User:\n    name = \"\"\n",
    "src/views.py": "# TODO: templates\n\n\ndef index():\n    return \"hi\"  # TODO: a real page\n",
}

TODOS_CHECK = 'test -z "$(git status --porcelain -- src)" && ' + r"""python3 - <<'EOF'
import os, shutil, subprocess, tempfile

def check(cwd, expected):
    r = subprocess.run(["bash", "todos.sh"], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sorted(lines) == sorted(expected), lines
    counts = [int(line.split()[0]) for line in lines]
    assert counts == sorted(counts, reverse=True), lines

check(".", ["4 src/db.py", "2 src/views.py", "1 src/api.py", "0 src/models.py"])
d = tempfile.mkdtemp()
try:
    shutil.copy("todos.sh", d)
    os.mkdir(os.path.join(d, "src"))
    for name, n in (("a.py", 2), ("b.py", 10), ("c.py", 3)):
        with open(os.path.join(d, "src", name), "w") as f:
            f.write("# TODO\n" * n + "x = 1\n")
    check(d, ["10 src/b.py", "3 src/c.py", "2 src/a.py"])
finally:
    shutil.rmtree(d)
EOF"""

# --- a broken link ---------------------------------------------------------------

WEATHER_README = """# weather-cli

Shows the forecast for your town in the terminal, from [Open-Meteo](https://open-meteo.com).

- [Installing](docs/install.md)
- [Configuration](docs/configuration.md)
- [Contributing](CONTRIBUTING.md)
"""

INSTALL_MD = "# Installing\n\n    pip install weather-cli\n\nThen tell it your town: see [Configuration](config.md).\n"
CONFIG_MD = "# Configuration\n\n`~/.config/weather-cli/town` holds the town's name, one line.\n"
CONTRIBUTING_MD = "# Contributing\n\nOpen an issue first; run `pytest` before you send a pull request.\n"

LINK_FILES = {
    "README.md": WEATHER_README,
    "docs/install.md": INSTALL_MD,
    "docs/config.md": CONFIG_MD,
    "CONTRIBUTING.md": CONTRIBUTING_MD,
}

# Every relative link of every Markdown file leads to a file, the README's
# three links to the pages they name, and nothing else in the README moved:
# the link may be pointed at docs/config.md, or the page renamed after it.
LINK_CHECK = r"""python3 - <<'EOF'
import os, re

LINK = r"\[([^\]]+)\]\(([^)\s]+)\)"
for root, dirs, names in os.walk("."):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in names:
        if name.endswith(".md"):
            page = os.path.join(root, name)
            for _, target in re.findall(LINK, open(page).read()):
                target = target.split("#")[0]
                if target and not re.match(r"[a-z]+:", target):
                    assert os.path.isfile(os.path.join(root, target)), (page, target)
old = '''""" + WEATHER_README + r"""'''
new = open("README.md").read()
links = dict(re.findall(LINK, new))
for text in ("Installing", "Configuration", "Contributing"):
    assert open(links[text].split("#")[0]).readline() == f"# {text}\n", (text, links[text])
assert links["Open-Meteo"] == "https://open-meteo.com"
rest = lambda text: [line for line in text.splitlines() if "](" not in line]
assert rest(new) == rest(old) and len(new.splitlines()) == len(old.splitlines())
EOF"""

# --- a question about the CI ------------------------------------------------------

CI_YML = """name: tests

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, macos-latest]
        # 3.10 is left out until the pinned numpy builds there again.
        python-version: ["3.9", "3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: pip install -e .[test]
      - run: pytest
"""

SETUP_CFG = """[metadata]
name = rainfall
version = 0.7.0

[options]
packages = find:
python_requires = >=3.8
install_requires =
    numpy==1.24.4
"""

CI_FILES = {
    ".github/workflows/tests.yml": CI_YML,
    "setup.cfg": SETUP_CFG,
    "rainfall/__init__.py": '"""Rainfall statistics."""\n',
}

# --- a version in two places ------------------------------------------------------

PACKAGE_JSON = """{
  "name": "tidy-csv",
  "version": "2.3.1",
  "description": "Trims the spaces around every field of a CSV file.",
  "bin": { "tidy-csv": "cli.js" },
  "engines": { "node": ">=18" },
  "license": "MIT"
}
"""

CLI_JS = """#!/usr/bin/env node
// tidy-csv FILE: the file with the spaces around every field trimmed.
const fs = require("node:fs");

const VERSION = "2.3.1";

function tidy(text) {
  return text
    .split("\\n")
    .map((line) => line.split(",").map((field) => field.trim()).join(","))
    .join("\\n");
}

function main(argv) {
  if (argv[0] === "--version") {
    console.log(VERSION);
    return;
  }
  process.stdout.write(tidy(fs.readFileSync(argv[0], "utf8")));
}

if (require.main === module) main(process.argv.slice(2));
module.exports = { tidy };
"""

VERSION_CHECK = (
    'test "$(node cli.js --version)" = 2.4.0 && t=$(mktemp) && printf \' a , b \\n c,d\\n\' > "$t" '
    "&& test \"$(node cli.js \"$t\")\" = \"$(printf 'a,b\\nc,d')\" && "
    + r"""python3 - <<'EOF'
import json
want = json.loads('''""" + PACKAGE_JSON + r"""''')
want["version"] = "2.4.0"
assert json.load(open("package.json")) == want
EOF"""
)

FRESH_TASKS = [
    {
        "name": "rename a config key",
        "files": RENAME_FILES,
        "prompt": 'Rename the "pool" setting to "pool_size" everywhere.',
        "check": RENAME_CHECK,
        "solution": RENAME_SOLUTION,
    },
    {
        "name": "reject bad input",
        "files": {"discount.py": DISCOUNT_PY, "cart.py": CART_PY},
        "prompt": "apply_discount lets a discount of 150% through and the price goes negative. "
                  "It should raise ValueError for any percent outside 0 to 100.",
        "check": DISCOUNT_CHECK,
        "solution": "cat > discount.py <<'EOF'\n" + DISCOUNT_FIXED + "EOF",
    },
    {
        "name": "fix a number sort",
        "files": HIGHSCORES_FILES,
        "prompt": "Our high-score list shows 9 points above 100. Fix the ordering.",
        "check": HIGHSCORES_CHECK,
        "solution": "sed -i 's/(a.points < b.points ? 1 : -1)/Number(b.points) - Number(a.points)/' highscores.js",
    },
    {
        "name": "add a missing import",
        "files": WORDFREQ_FILES,
        "prompt": "wordfreq.py won't run. Fix it.",
        "check": WORDFREQ_CHECK,
        "solution": "sed -i 's/^import re$/import re\\nfrom collections import Counter/' wordfreq.py",
    },
    {
        "name": "change an ini default",
        "files": {"settings.ini": SETTINGS_INI, "cache.py": CACHE_PY},
        "prompt": "Cached entries should last 10 minutes, not 5.",
        "check": CACHE_CHECK,
        "solution": "sed -i 's/^ttl = 300$/ttl = 600/' settings.ini",
    },
    {
        "name": "delete an unused function",
        "files": UNUSED_FILES,
        "prompt": "There's a function in textutils.py that nothing calls any more. Delete it.",
        "check": UNUSED_CHECK,
        "solution": UNUSED_SOLUTION,
    },
    {
        "name": "sort a script's output",
        "files": TODOS_FILES,
        "prompt": "Make todos.sh list the files with the most TODOs first.",
        "check": TODOS_CHECK,
        "solution": "sed -i 's/^done$/done | sort -rn/' todos.sh",
    },
    {
        "name": "fix a broken link",
        "files": LINK_FILES,
        "prompt": "One of the links in the README goes nowhere. Can you fix it?",
        "check": unchanged(LINK_FILES, "CONTRIBUTING.md") + " && " + LINK_CHECK,
        "solution": "sed -i 's|(docs/configuration.md)|(docs/config.md)|' README.md",
    },
    {
        "name": "answer from the ci config",
        "files": CI_FILES,
        "prompt": "Which Python versions do our tests run on in CI? Just tell me, don't change anything.",
        "check": (
            'test -z "$(git status --porcelain)" '
            "&& grep -qw '3\\.9' \"$AGENT_ANSWER\" && grep -qw '3\\.11' \"$AGENT_ANSWER\" "
            "&& grep -qw '3\\.12' \"$AGENT_ANSWER\""
        ),
        "solution": 'echo "CI runs them on Python 3.9, 3.11 and 3.12 (3.10 is left out)." > "$AGENT_ANSWER"',
    },
    {
        "name": "bump a version",
        "files": {"package.json": PACKAGE_JSON, "cli.js": CLI_JS},
        "prompt": "Bump the version to 2.4.0.",
        "check": VERSION_CHECK,
        "solution": "sed -i 's/2\\.3\\.1/2.4.0/' package.json cli.js",
    },
]
