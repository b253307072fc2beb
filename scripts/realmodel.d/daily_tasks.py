"""The daily set of everyday tasks of scripts/realmodel (`--set daily`).

Written after the old, new, fresh and plain sets (tasks.py, new_tasks.py,
fresh_tasks.py, plain_tasks.py), unlike all four in content and as easy as
the plain set, and without reading any run of them: ten one-step requests,
each a project of one to three short files, each in another language or
kind of file (SQL, .dockerignore, shell and git tags, JSON, TOML, ES
modules, Python, git's index, a crontab, Go). The keys are those of
plain_tasks.py: the files, the prompt as a person would type it (six of the
ten name no file), a check, and a solution that `scripts/realmodel
--check-tasks` applies to prove the check fails before it and passes after.
Checks run the code or parse the file rather than look for one spelling,
and use python3 (its sqlite3 and tomllib), node, bash, git and coreutils
only.
"""

from new_tasks import unchanged

# --- cancelled orders in a SQL report ---------------------------------------------

SHOP_SCHEMA_SQL = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  total_cents INTEGER NOT NULL,
  status TEXT NOT NULL  -- 'paid', 'shipped' or 'cancelled'
);

INSERT INTO customers VALUES (1, 'Ada'), (2, 'Ben'), (3, 'Cleo'), (4, 'Dev'), (5, 'Eli'), (6, 'Fay'), (7, 'Gus');
INSERT INTO orders VALUES
  (1, 1, 12000, 'paid'), (2, 1, 3000, 'shipped'),
  (3, 2, 4000, 'paid'), (4, 2, 25000, 'cancelled'),
  (5, 3, 9000, 'shipped'),
  (6, 4, 6000, 'paid'), (7, 4, 2000, 'paid'),
  (8, 5, 3500, 'paid'), (9, 5, 18000, 'cancelled'),
  (10, 6, 7000, 'paid'),
  (11, 7, 5000, 'shipped');
"""

TOP_CUSTOMERS_SQL = """-- The five customers who spent the most, for the monthly report.
-- sqlite3 shop.db < top_customers.sql
SELECT c.name, SUM(o.total_cents) / 100.0 AS spent
FROM customers c
JOIN orders o ON o.customer_id = c.id
GROUP BY c.id
ORDER BY spent DESC
LIMIT 5;
"""

# The query runs on the project's data and again with more rows, and must
# give what Python reckons: the five biggest spenders, cancelled orders left
# out, in dollars (a customer with nothing but cancelled orders would show
# 0 or not at all, and is never in the five either way). schema.sql stays.
SQL_CHECK = unchanged({"schema.sql": SHOP_SCHEMA_SQL}, "schema.sql") + r""" && python3 - <<'EOF'
import sqlite3

db = sqlite3.connect(":memory:")
db.executescript(open("schema.sql").read())
query = open("top_customers.sql").read()

def want():
    spent = {}
    for name, cents, status in db.execute("SELECT c.name, o.total_cents, o.status FROM customers c JOIN orders o ON o.customer_id = c.id"):
        if status != "cancelled":
            spent[name] = spent.get(name, 0) + cents
    return sorted(((n, c / 100) for n, c in spent.items()), key=lambda r: -r[1])[:5]

def got():
    rows = db.execute(query).fetchall()
    return [(r[0], float(r[1])) for r in rows]

for more in (True, False):
    w, g = want(), got()
    assert [n for n, _ in g] == [n for n, _ in w] and all(abs(a[1] - b[1]) < 0.005 for a, b in zip(g, w)), (g, w)
    if more:
        db.executescript("INSERT INTO customers VALUES (8, 'Hal'), (9, 'Ivy');"
                         "INSERT INTO orders VALUES (12, 8, 20000, 'paid'), (13, 8, 1000, 'cancelled'), "
                         "(14, 9, 90000, 'cancelled'), (15, 9, 500, 'paid'), (16, 3, 40000, 'cancelled');")
EOF"""

SQL_SOLUTION = "sed -i 's/^GROUP BY c.id$/WHERE o.status <> '\"'\"'cancelled'\"'\"'\\n&/' top_customers.sql"

# --- a .dockerignore ------------------------------------------------------------------

PASTE_DOCKERFILE = """FROM node:20-slim
WORKDIR /app
COPY package.json ./
RUN npm install --omit=dev
COPY . .
EXPOSE 3000
CMD ["node", "server.js"]
"""

PASTE_SERVER_JS = """// A tiny pastebin: POST text to /, GET /ID to read it back.
const http = require("node:http");
const pastes = new Map();

http.createServer((req, res) => {
  if (req.method === "POST") {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const id = Math.random().toString(36).slice(2, 8);
      pastes.set(id, body);
      res.end(id + "\\n");
    });
  } else {
    const text = pastes.get(req.url.slice(1));
    res.statusCode = text === undefined ? 404 : 200;
    res.end(text ?? "not found\\n");
  }
}).listen(3000);
"""

PASTE_PACKAGE_JSON = """{
  "name": "pastebin",
  "version": "0.3.0",
  "main": "server.js",
  "license": "MIT"
}
"""

PASTE_FILES = {"Dockerfile": PASTE_DOCKERFILE, "server.js": PASTE_SERVER_JS, "package.json": PASTE_PACKAGE_JSON}

# .dockerignore read as Docker reads it: each line a path pattern (leading
# / and ./ dropped, * and ? within a name, ** across folders, ! for an
# exception, the last matching line deciding), and a folder that matches
# leaves out everything in it.
DOCKERIGNORE_CHECK = unchanged(PASTE_FILES, "Dockerfile", "server.js", "package.json") + r""" && python3 - <<'EOF'
import posixpath, re

def regex(p):
    out, i = "", 0
    while i < len(p):
        if p.startswith("**/", i):
            out, i = out + "(.*/)?", i + 3
        elif p.startswith("**", i):
            out, i = out + ".*", i + 2
        elif p[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif p[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(p[i]), i + 1
    return re.compile(out + r"\Z")

rules = []
for line in open(".dockerignore").read().splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    negate = line.startswith("!")
    p = posixpath.normpath(line.lstrip("!").strip()).lstrip("/")
    rules.append((negate, regex(p)))

def ignored(path):
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    out = False
    for negate, rx in rules:
        if any(rx.match(p) for p in prefixes):
            out = not negate
    return out

for path in ("node_modules", "node_modules/express/index.js", ".git", ".git/HEAD", ".git/objects/ab/cdef"):
    assert ignored(path), path
for path in ("server.js", "package.json"):
    assert not ignored(path), path
EOF"""

# --- a release script run without its argument --------------------------------------

RELEASE_SH = """#!/usr/bin/env bash
# Tags the current commit as a release: bash release.sh 1.4.0
set -e
version=$1
git tag "v$version"
echo "tagged v$version"
"""

# In a copy of the project with no tags: without a version the script must
# fail, say something, and tag nothing; with one it tags v1.4.0 as before.
RELEASE_CHECK = (
    'd=$(mktemp -d) && cp -r . "$d/p" && cd "$d/p" && { git tag -l | xargs -r git tag -d > /dev/null; } '
    '&& { bash release.sh > "$d/out" 2>&1 < /dev/null; test $? -ne 0; } && test -s "$d/out" '
    '&& test -z "$(git tag -l)" '
    '&& bash release.sh 1.4.0 > /dev/null 2>&1 && test "$(git tag -l)" = v1.4.0'
)

RELEASE_SOLUTION = (
    "sed -i 's/^set -e$/&\\nif [ -z \"$1\" ]; then echo \"usage: bash release.sh VERSION\" >\\&2; exit 1; fi/' release.sh"
)

# --- a trailing comma in JSON ------------------------------------------------------------

PASTEBOARD_CONFIG_JSON = """{
  "name": "pasteboard",
  "port": 3000,
  "plugins": [
    "highlight",
    "expire",
  ],
  "maxPasteKb": 512
}
"""

PASTEBOARD_APP_JS = """// Starts pasteboard with the settings in config.json.
const fs = require("node:fs");
const path = require("node:path");

const config = JSON.parse(fs.readFileSync(path.join(__dirname, "config.json"), "utf8"));
console.log(`${config.name} on port ${config.port}, plugins: ${config.plugins.join(", ")}, max ${config.maxPasteKb} KB`);
"""

# The settings must come out as they were meant, whatever the layout.
JSON_CHECK = unchanged({"app.js": PASTEBOARD_APP_JS}, "app.js") + r""" && python3 - <<'EOF'
import json, subprocess

got = json.load(open("config.json"))
assert got == {"name": "pasteboard", "port": 3000, "plugins": ["highlight", "expire"], "maxPasteKb": 512}, got
r = subprocess.run(["node", "app.js"], capture_output=True, text=True)
assert r.returncode == 0 and r.stdout == "pasteboard on port 3000, plugins: highlight, expire, max 512 KB\n", (r.stdout, r.stderr)
EOF"""

# --- a mirror in a TOML file ---------------------------------------------------------------

DOWNLOADS_TOML = """# Where the installer fetches releases from, tried in order.
timeout_seconds = 20

[[mirror]]
name = "main"
url = "https://downloads.example.org/releases"

[[mirror]]
name = "us"
url = "https://us.downloads.example.org/releases"
"""

FETCH_PY = '''"""Lists the download mirrors: python3 fetch.py"""
import tomllib

with open("downloads.toml", "rb") as f:
    CONFIG = tomllib.load(f)

for mirror in CONFIG["mirror"]:
    print(f"{mirror['name']}: {mirror['url']} (timeout {CONFIG['timeout_seconds']}s)")
'''

# Any place in the list, the two there were kept in their order.
TOML_CHECK = unchanged({"fetch.py": FETCH_PY}, "fetch.py") + r""" && python3 - <<'EOF'
import subprocess, sys, tomllib

got = tomllib.load(open("downloads.toml", "rb"))
assert set(got) == {"timeout_seconds", "mirror"} and got["timeout_seconds"] == 20, got
mirrors = [(m["name"], m["url"].rstrip("/")) for m in got["mirror"]]
assert all(set(m) == {"name", "url"} for m in got["mirror"]), got
assert sorted(mirrors) == sorted([("main", "https://downloads.example.org/releases"),
                                  ("us", "https://us.downloads.example.org/releases"),
                                  ("eu", "https://eu.downloads.example.org/releases")]), mirrors
assert [n for n, _ in mirrors if n != "eu"] == ["main", "us"], mirrors
r = subprocess.run([sys.executable, "fetch.py"], capture_output=True, text=True)
assert r.returncode == 0 and len(r.stdout.splitlines()) == 3, (r.stdout, r.stderr)
EOF"""

TOML_SOLUTION = (
    "printf '\\n[[mirror]]\\nname = \"eu\"\\nurl = \"https://eu.downloads.example.org/releases\"\\n' >> downloads.toml"
)

# --- an ES module that does not export ---------------------------------------------------------

DATES_MJS = """// Date helpers for the blog.
function pad(n) {
  return String(n).padStart(2, "0");
}

export function parseDate(text) {
  const [y, m, d] = text.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d));
}

function formatDate(date) {
  return `${pad(date.getUTCDate())}.${pad(date.getUTCMonth() + 1)}.${date.getUTCFullYear()}`;
}
"""

MAIN_MJS = """import { formatDate, parseDate } from "./dates.mjs";

for (const text of ["2024-03-09", "2024-12-25"]) {
  console.log(formatDate(parseDate(text)));
}
"""

ESM_CHECK = (
    'test "$(node main.mjs)" = "$(printf \'09.03.2024\\n25.12.2024\')" '
    "&& node --input-type=module -e \"import { formatDate, parseDate } from './dates.mjs'; "
    "if (formatDate(parseDate('2031-07-04')) !== '04.07.2031') process.exit(1)\""
)

# --- a list shared between objects ---------------------------------------------------------------

CART_PY = '''"""A shopping cart."""


class Cart:
    def __init__(self, items=[]):
        self.items = items

    def add(self, name, price):
        self.items.append((name, price))

    def total(self):
        return sum(price for _, price in self.items)


if __name__ == "__main__":
    first = Cart()
    first.add("tea", 3.5)
    second = Cart()
    second.add("bread", 2.0)
    print(f"first: {first.total()}, second: {second.total()}")
'''

CART_CHECK = r"""python3 - <<'EOF'
import subprocess, sys

r = subprocess.run([sys.executable, "cart.py"], capture_output=True, text=True)
assert r.returncode == 0 and r.stdout.strip() == "first: 3.5, second: 2.0", (r.stdout, r.stderr)
from cart import Cart
a = Cart()
a.add("milk", 1.25)
b = Cart()
assert b.total() == 0 and not b.items, b.items
b.add("eggs", 2.5)
assert a.total() == 1.25 and b.total() == 2.5
c = Cart([("jam", 4.0)])
c.add("oats", 1.0)
assert c.total() == 5.0 and Cart().total() == 0
EOF"""

CART_SOLUTION = (
    "sed -i 's/items=\\[\\]):/items=None):/; s/self.items = items$/self.items = list(items or [])/' cart.py"
)

# --- a secret file tracked by git ------------------------------------------------------------------

DOTENV = """DATABASE_URL=postgres://app:hunter2@db.internal:5432/app
STRIPE_KEY=sk_live_51Hx9exampleexampleexample
"""

DOTENV_APP_PY = '''"""Reads the settings from .env."""
from pathlib import Path

SETTINGS = dict(line.split("=", 1) for line in Path(".env").read_text().splitlines() if "=" in line)
'''

DOTENV_FILES = {".env": DOTENV, ".gitignore": "__pycache__/\n", "app.py": DOTENV_APP_PY}

# Out of the index (committed or only staged), still on disk as it was,
# ignored from now on, and what was ignored still is.
DOTENV_CHECK = (
    unchanged(DOTENV_FILES, ".env", "app.py")
    + ' && test -z "$(git ls-files -- .env)" && git check-ignore -q .env '
    "&& git check-ignore -q __pycache__/app.cpython-311.pyc && git ls-files --error-unmatch app.py > /dev/null"
)

# --- a crontab line --------------------------------------------------------------------------------

CRONTAB = """# m h dom mon dow  command
MAILTO=ops@example.com
*/15 * * * * /srv/app/bin/sync-feeds
* * * * * /srv/app/bin/backup --to /mnt/backups
0 6 * * 1 /srv/app/bin/weekly-report
"""

# The fields are expanded as cron does (lists, ranges, steps, * and 7 for
# Sunday), so that any spelling of "at 2:30 every day" passes; the other
# lines stay as they were.
CRON_CHECK = r"""python3 - <<'EOF'
lines = [l for l in open("crontab").read().splitlines() if l.strip() and not l.lstrip().startswith("#")]
assert len(lines) == 4, lines
assert lines[0].split() == ["MAILTO=ops@example.com"], lines
assert lines[1].split() == "*/15 * * * * /srv/app/bin/sync-feeds".split(), lines
assert lines[3].split() == "0 6 * * 1 /srv/app/bin/weekly-report".split(), lines

def expand(field, lo, hi):
    out = set()
    for part in field.split(","):
        rng, _, step = part.partition("/")
        if rng == "*":
            a, b = lo, hi
        elif "-" in rng:
            a, b = map(int, rng.split("-"))
        else:
            a = b = int(rng)
            if step:
                b = hi
        out |= set(range(a, b + 1, int(step or 1)))
    return out

fields = lines[2].split()
assert fields[5:] == ["/srv/app/bin/backup", "--to", "/mnt/backups"], fields
assert expand(fields[0], 0, 59) == {30} and expand(fields[1], 0, 23) == {2}, fields
assert expand(fields[2], 1, 31) == set(range(1, 32)) and expand(fields[3], 1, 12) == set(range(1, 13)), fields
assert {d % 7 for d in expand(fields[4], 0, 7)} == set(range(7)), fields
EOF"""

# --- a question about a Go server ------------------------------------------------------------------

PHOTOS_MAIN_GO = """package main

import (
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
)

const (
	maxBody    = 1 << 20  // JSON requests
	photoLimit = 12 << 20 // one uploaded photo
	thumbSide  = 320      // pixels
)

func uploadPhoto(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, photoLimit)
	data, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "photo too large", http.StatusRequestEntityTooLarge)
		return
	}
	name := filepath.Base(r.URL.Query().Get("name"))
	if err := os.WriteFile(filepath.Join("photos", name), data, 0o644); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func updateAlbum(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	// ...
}

func main() {
	http.HandleFunc("/photos", uploadPhoto)
	http.HandleFunc("/albums", updateAlbum)
	log.Fatal(http.ListenAndServe(":8070", nil))
}
"""

GO_QUESTION_CHECK = (
    'test -z "$(git status --porcelain)" '
    "&& grep -Eqi '(^|[^0-9.])12 ?(MB|MiB|M|megabytes?|mebibytes?)([^a-z]|$)|12582912|12,582,912|12[ _.]?582[ _.]?912' "
    '"$AGENT_ANSWER"'
)

DAILY_TASKS = [
    {
        "name": "leave out cancelled orders",
        "files": {"schema.sql": SHOP_SCHEMA_SQL, "top_customers.sql": TOP_CUSTOMERS_SQL},
        "prompt": "The top customers report counts cancelled orders as money spent. Leave cancelled orders out.",
        "check": SQL_CHECK,
        "solution": SQL_SOLUTION,
    },
    {
        "name": "add a dockerignore",
        "files": PASTE_FILES,
        "prompt": "Docker sends node_modules and the .git folder along every time I build the image. Make it leave them out.",
        "check": DOCKERIGNORE_CHECK,
        "solution": "printf 'node_modules\\n.git\\n' > .dockerignore",
    },
    {
        "name": "fail without an argument",
        "files": {"release.sh": RELEASE_SH},
        "prompt": 'If I run release.sh without a version it creates a tag called just "v". '
                  "Make it print how to use it and fail instead.",
        "check": RELEASE_CHECK,
        "solution": RELEASE_SOLUTION,
    },
    {
        "name": "fix invalid json",
        "files": {"config.json": PASTEBOARD_CONFIG_JSON, "app.js": PASTEBOARD_APP_JS},
        "prompt": "node app.js crashes on start with a SyntaxError about JSON. Fix it.",
        "check": JSON_CHECK,
        "solution": "sed -i 's/\"expire\",$/\"expire\"/' config.json",
    },
    {
        "name": "add a toml entry",
        "files": {"downloads.toml": DOWNLOADS_TOML, "fetch.py": FETCH_PY},
        "prompt": 'Add a download mirror called "eu" at https://eu.downloads.example.org/releases.',
        "check": TOML_CHECK,
        "solution": TOML_SOLUTION,
    },
    {
        "name": "export a function",
        "files": {"dates.mjs": DATES_MJS, "main.mjs": MAIN_MJS},
        "prompt": "node main.mjs fails with: SyntaxError: The requested module './dates.mjs' does not provide "
                  "an export named 'formatDate'. Fix it.",
        "check": ESM_CHECK,
        "solution": "sed -i 's/^function formatDate/export function formatDate/' dates.mjs",
    },
    {
        "name": "stop sharing a default list",
        "files": {"cart.py": CART_PY},
        "prompt": "Every new shopping cart starts out with the items of the carts made before it. Fix that.",
        "check": CART_CHECK,
        "solution": CART_SOLUTION,
    },
    {
        "name": "untrack a secrets file",
        "files": DOTENV_FILES,
        "prompt": "I committed .env with our passwords by mistake. Make git stop tracking it and ignore it from now on, "
                  "but keep the file here.",
        "check": DOTENV_CHECK,
        "solution": "git rm -q --cached .env && echo .env >> .gitignore",
    },
    {
        "name": "reschedule a cron job",
        "files": {"crontab": CRONTAB},
        "prompt": "The backup job runs every minute. It should run once a day, at 2:30 at night.",
        "check": CRON_CHECK,
        "solution": "sed -i 's|^\\* \\* \\* \\* \\* /srv/app/bin/backup|30 2 * * * /srv/app/bin/backup|' crontab",
    },
    {
        "name": "answer from go code",
        "files": {"main.go": PHOTOS_MAIN_GO},
        "prompt": "What's the biggest photo someone can upload? Just tell me, don't change anything.",
        # 12 MiB (12 << 20 bytes), not the 1 MiB of the JSON requests.
        "check": GO_QUESTION_CHECK,
        "solution": 'echo "12 MiB (photoLimit = 12 << 20 bytes in main.go); bigger uploads get a 413." > "$AGENT_ANSWER"',
    },
]
