"""The back office set of everyday tasks of scripts/realmodel (`--set back_office`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs
and side quests sets (tasks.py, new_tasks.py, fresh_tasks.py,
plain_tasks.py, daily_tasks.py, chores_tasks.py, errands_tasks.py,
odd_jobs_tasks.py, side_quests_tasks.py), unlike all nine in what is broken
and in how it is fixed, and as easy as the sets since plain, by someone who
had read no run of any of them (no transcript, no result, no table): ten
one-step requests, each a project of three to six short files, each in
another kind of file or tool: a shared bill whose shares lose a cent, a
count kept inside a piped `while read` loop, a merge stopped on a conflict,
a question answered from a Docker Compose file, search links built without
encoding the query, JavaScript's months counted from 0, an average taken
from a generator that the total already used up, visitors' comments put into
a page without escaping, a PATH that a shell profile replaces instead of
extending, and a CSV split on every comma, quoted or not. The keys are those
of side_quests_tasks.py, with `setup` where the project needs more than its
files (a merge under way, scripts' executable bits): the files, the prompt
as a person would type it (nine of the ten name no file), a check, and a
solution that `scripts/realmodel --check-tasks` applies to prove the check
fails before it and passes after. Checks run the code, bash and dash, node's
URL reader, Python's HTML and CSV readers, or git itself rather than look
for one spelling, and use python3 (stdlib), node, sh, bash, git and
coreutils only.
"""

from new_tasks import unchanged

# --- a shared bill that loses a cent ---------------------------------------------------

SPLIT_JS = """// Splits a shared bill: splitBill(100, 3) gives each person's share, in euros.
function splitBill(total, people) {
  if (!Number.isInteger(people) || people < 1) {
    throw new RangeError("people must be a whole number, 1 or more");
  }
  const share = Math.round((total / people) * 100) / 100;
  return Array.from({ length: people }, () => share);
}

module.exports = { splitBill };
"""

SPLIT_CLI_JS = """// node cli.js TOTAL PEOPLE: what each person pays.
const { splitBill } = require("./split");

const total = Number(process.argv[2]);
const people = Number(process.argv[3]);
const shares = splitBill(total, people);
shares.forEach((share, i) => console.log(`Person ${i + 1}: ${share.toFixed(2)}`));
console.log(`Total: ${shares.reduce((a, b) => a + b, 0).toFixed(2)}`);
"""

SPLIT_TEST_JS = """// node test.js
const assert = require("node:assert");
const { splitBill } = require("./split");

assert.deepStrictEqual(splitBill(90, 3), [30, 30, 30]);
assert.deepStrictEqual(splitBill(12.5, 1), [12.5]);
assert.deepStrictEqual(splitBill(8.4, 2), [4.2, 4.2]);
assert.throws(() => splitBill(10, 0), RangeError);
console.log("ok");
"""

SPLIT_README = """# splitter

Who owes what after a team lunch:

    node cli.js 100 3

Tests: `node test.js`.
"""

SPLIT_FILES = {"split.js": SPLIT_JS, "cli.js": SPLIT_CLI_JS, "test.js": SPLIT_TEST_JS, "README.md": SPLIT_README}

# node, on totals from a cent to four figures split between 1 and 12
# people: as many shares as people, each a number of whole cents, adding up
# to the bill to the cent, none more than a cent above another. The command
# line prints shares that add up to the bill, and the tests still pass
# unchanged.
SPLIT_CHECK = unchanged(SPLIT_FILES, "test.js") + r""" && node test.js >/dev/null && node - <<'EOF'
const assert = require("node:assert");
const { execFileSync } = require("node:child_process");
const { splitBill } = require("./split.js");

for (const total of [100, 10, 1, 0.01, 0.02, 0.1, 0.05, 99.99, 10.1, 25, 33.33, 47.5, 1234.56, 0]) {
  for (let people = 1; people <= 12; people++) {
    const shares = splitBill(total, people);
    const where = `${total} between ${people}: ${JSON.stringify(shares)}`;
    assert.ok(Array.isArray(shares) && shares.length === people, where);
    const cents = shares.map((s) => {
      assert.strictEqual(typeof s, "number", where);
      const c = Math.round(s * 100);
      assert.ok(Math.abs(s * 100 - c) < 1e-6, `not whole cents: ${where}`);
      return c;
    });
    assert.strictEqual(cents.reduce((a, b) => a + b, 0), Math.round(total * 100), `does not add up: ${where}`);
    assert.ok(Math.max(...cents) - Math.min(...cents) <= 1, `not even: ${where}`);
  }
}
for (const [total, people] of [["100", "3"], ["0.10", "3"], ["250", "7"]]) {
  const out = execFileSync("node", ["cli.js", total, people], { encoding: "utf8" });
  const shares = [...out.matchAll(/^Person \d+: (\d+\.\d\d)$/gm)].map((m) => Math.round(Number(m[1]) * 100));
  assert.strictEqual(shares.length, Number(people), out);
  assert.strictEqual(shares.reduce((a, b) => a + b, 0), Math.round(Number(total) * 100), out);
}
EOF"""

SPLIT_SOLUTION = r"""cat > split.js <<'EOF'
// Splits a shared bill: splitBill(100, 3) gives each person's share, in euros.
// The bill is shared out in whole cents, and the cents left over go one each
// to the first people, so that the shares always add up to the bill.
function splitBill(total, people) {
  if (!Number.isInteger(people) || people < 1) {
    throw new RangeError("people must be a whole number, 1 or more");
  }
  const cents = Math.round(total * 100);
  const base = Math.floor(cents / people);
  const left = cents - base * people;
  return Array.from({ length: people }, (_, i) => (base + (i < left ? 1 : 0)) / 100);
}

module.exports = { splitBill };
EOF"""

# --- a count kept inside a piped while loop --------------------------------------------

IMPORT_SH = """#!/usr/bin/env bash
# Adds the contacts of a phone's CSV export (name,email,phone after a header
# line) to the address book, one file per contact in contacts/, and says
# how many it added. Rows without an email are skipped.
#   bash import.sh export.csv
set -eu
src=${1:?usage: import.sh EXPORT.csv}
mkdir -p contacts
count=0
tail -n +2 "$src" | while IFS=, read -r name email phone; do
    [ -n "$email" ] || continue
    printf 'name: %s\\nemail: %s\\nphone: %s\\n' "$name" "$email" "$phone" > "contacts/$email.txt"
    count=$((count + 1))
done
echo "imported $count contacts"
"""

IMPORT_EXPORT_CSV = """name,email,phone
Ada Lovelace,ada@example.com,+44 20 7946 0018
Grace Hopper,grace@example.com,+1 202 555 0143
Reception desk,,+44 20 7946 0000
Linus Pauling,linus@example.com,
"""

IMPORT_README = """# address book

One file per contact in contacts/. To add the contacts from a phone's
export:

    bash import.sh export.csv
"""

IMPORT_FILES = {"import.sh": IMPORT_SH, "export.csv": IMPORT_EXPORT_CSV, "README.md": IMPORT_README,
                ".gitignore": "contacts/\n"}

# bash runs the script as the README does, in a scratch folder, on exports
# of its own one after another: each run says how many contacts that run
# added (not how many rows the file has, nor how many the address book
# holds by then) and writes a file for each of them as before.
IMPORT_CHECK = unchanged(IMPORT_FILES, "export.csv") + r""" && python3 - <<'EOF'
import os, re, shutil, subprocess, tempfile

def run(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
    r = subprocess.run(["bash", "import.sh", name], cwd=d, capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, (name, r.stdout, r.stderr)
    said = re.findall(r"imported (\d+) contacts?", r.stdout)
    assert len(said) == 1, (name, r.stdout)
    return int(said[0])

with tempfile.TemporaryDirectory() as d:
    shutil.copy("import.sh", d)
    assert run(d, "export.csv", open("export.csv").read()) == 3
    assert sorted(os.listdir(f"{d}/contacts")) == ["ada@example.com.txt", "grace@example.com.txt",
                                                     "linus@example.com.txt"], os.listdir(f"{d}/contacts")
    assert open(f"{d}/contacts/grace@example.com.txt").read() == \
        "name: Grace Hopper\nemail: grace@example.com\nphone: +1 202 555 0143\n"
    more = "name,email,phone\nMo Farah,mo@example.com,07700 900123\nNo Mail,,0\nKim Lee,kim@example.com,0\n"
    assert run(d, "second.csv", more) == 2
    assert len(os.listdir(f"{d}/contacts")) == 5
    assert run(d, "empty.csv", "name,email,phone\n") == 0
    assert run(d, "nomail.csv", "name,email,phone\nA,,1\nB,,2\n") == 0
    assert len(os.listdir(f"{d}/contacts")) == 5
EOF"""

IMPORT_SOLUTION = r"""python3 - <<'EOF'
text = open("import.sh").read()
text = text.replace('tail -n +2 "$src" | while IFS=, read -r name email phone; do',
                    'while IFS=, read -r name email phone; do')
text = text.replace("    count=$((count + 1))\ndone\n", '    count=$((count + 1))\ndone < <(tail -n +2 "$src")\n')
open("import.sh", "w").write(text)
EOF"""

# --- a merge stopped on a conflict ------------------------------------------------------

CAFE_PRICES_PY = '''"""The café's prices, in euros."""

PRICES = {
    "espresso": 2.20,
    "cappuccino": 3.10,
    "tea": 2.50,
    "croissant": 1.90,
}
CURRENCY = "EUR"


def label(item):
    return f"{item}: {PRICES[item]:.2f} {CURRENCY}"
'''

CAFE_MENU_PY = '''"""Prints the price board: python3 menu.py"""
from prices import PRICES, label

for item in PRICES:
    print(label(item))
'''

CAFE_README = """# café

The price board comes from prices.py:

    python3 menu.py
"""

MERGE_FILES = {"prices.py": CAFE_PRICES_PY, "menu.py": CAFE_MENU_PY, "README.md": CAFE_README,
               ".gitignore": "__pycache__/\n"}

# The owner's repository (their name in its config, as on their machine):
# on a branch, new prices and a line in the README; on main, a new drink
# next to the changed prices; then `git merge new-prices`, which stops on
# the conflict in prices.py.
MERGE_SETUP = r"""set -e
git branch -m main
git config user.name 'Sam Okafor'
git config user.email sam@example.com
git checkout -q -b new-prices
sed -i 's/"espresso": 2.20,/"espresso": 2.40,/; s/"cappuccino": 3.10,/"cappuccino": 3.40,/' prices.py
printf '\nPrices from 1 March 2025.\n' >> README.md
git commit -qam 'New prices from March'
git checkout -q main
sed -i 's/^    "cappuccino": 3.10,$/&\n    "flat white": 3.60,/' prices.py
git commit -qam 'Add flat white'
if git merge new-prices >/dev/null 2>&1; then exit 1; fi
git rev-parse -q --verify MERGE_HEAD >/dev/null
"""

# git: the merge is over and committed on main, as a merge of main's last
# commit and the branch's (whether or not the branch is still there),
# nothing left uncommitted; the prices are the branch's with main's flat
# white, as Python reads them and as the board prints them, and the
# branch's README line is in.
MERGE_CHECK = r"""! git rev-parse -q --verify MERGE_HEAD >/dev/null && test -z "$(git status --porcelain)" \
&& test "$(git symbolic-ref --short HEAD)" = main && python3 - <<'EOF'
import subprocess

def git(*args):
    r = subprocess.run(["git", *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout.strip()

parents = git("rev-list", "--parents", "-n", "1", "HEAD").split()[1:]
assert len(parents) == 2, ("not a merge commit", parents)
assert git("log", "-1", "--format=%s", parents[0]) == "Add flat white", git("log", "--oneline", "-5")
assert git("log", "-1", "--format=%s", parents[1]) == "New prices from March", git("log", "--oneline", "-5")
assert git("rev-list", "--count", "HEAD") == "4"

import prices
assert prices.PRICES == {"espresso": 2.40, "cappuccino": 3.40, "flat white": 3.60, "tea": 2.50,
                         "croissant": 1.90}, prices.PRICES
board = subprocess.run(["python3", "menu.py"], capture_output=True, text=True).stdout.splitlines()
assert sorted(board) == ["cappuccino: 3.40 EUR", "croissant: 1.90 EUR", "espresso: 2.40 EUR",
                         "flat white: 3.60 EUR", "tea: 2.50 EUR"], board
assert "Prices from 1 March 2025." in open("README.md").read()
assert open("menu.py").read() == """ + repr(CAFE_MENU_PY) + r"""
EOF"""

MERGE_SOLUTION = r"""python3 - <<'EOF'
text = open("prices.py").read()
start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
end = text.index("\n", end) + 1
both = '    "espresso": 2.40,\n    "cappuccino": 3.40,\n    "flat white": 3.60,\n'
open("prices.py", "w").write(text[:start] + both + text[end:])
EOF
git add prices.py && git commit -q --no-edit"""

# --- a question answered from a Compose file -------------------------------------------

NOTES_COMPOSE_YML = """services:
  web:
    build: .
    ports:
      - "8081:3000"
    environment:
      PORT: "3000"
      DATABASE_URL: postgres://notes:notes@db:5432/notes
    depends_on:
      - db

  db:
    image: postgres:16
    environment:
      POSTGRES_USER: notes
      POSTGRES_PASSWORD: notes
    ports:
      - "5433:5432"
    volumes:
      - dbdata:/var/lib/postgresql/data

volumes:
  dbdata:
"""

NOTES_DOCKERFILE = """FROM node:20-slim
WORKDIR /app
COPY package.json ./
RUN npm install --omit=dev
COPY . .
EXPOSE 3000
CMD ["node", "server.js"]
"""

NOTES_SERVER_JS = """// The team notes app.
const http = require("http");

const port = Number(process.env.PORT) || 8080;
http
  .createServer((req, res) => {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    res.end("<h1>Team notes</h1>");
  })
  .listen(port, () => console.log(`listening on ${port}`));
"""

NOTES_PACKAGE_JSON = """{
  "name": "team-notes",
  "version": "0.3.0",
  "private": true,
  "scripts": {
    "start": "node server.js"
  }
}
"""

NOTES_README = """# team notes

To work on it without Docker:

    npm install
    npm start

and open http://localhost:8080.

With Docker, `docker compose up` starts the app and its database.
"""

COMPOSE_FILES = {"docker-compose.yml": NOTES_COMPOSE_YML, "Dockerfile": NOTES_DOCKERFILE,
                 "server.js": NOTES_SERVER_JS, "package.json": NOTES_PACKAGE_JSON, "README.md": NOTES_README}

# Port 8081 on the host (the app listens on 3000 inside its container, on
# 8080 without Docker, and the database is published on 5433): the answer
# names 8081, and any local address it gives has that port. Nothing changed.
COMPOSE_CHECK = r"""test -z "$(git status --porcelain --untracked-files=all)" && python3 - <<'EOF'
import os, re

answer = open(os.environ["AGENT_ANSWER"]).read()
assert re.search(r"(?<![\d.])8081(?!\d)", answer), answer
ports = re.findall(r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])\s*:\s*(\d+)", answer)
assert all(p == "8081" for p in ports), ports
EOF"""

# --- search links built without encoding the query -----------------------------------------

LINKS_JS = """// Addresses of the site's search pages.
const BASE = "https://recipes.example";

function searchUrl(query, page = 1) {
  let url = `${BASE}/search?q=${query}`;
  if (page > 1) url += `&page=${page}`;
  return url;
}

module.exports = { BASE, searchUrl };
"""

RELATED_JS = """// The "Related searches" box under a recipe: node related.js RECIPE-ID prints its HTML.
const { searchUrl } = require("./links");
const recipes = require("./recipes.json");

function relatedBox(recipe) {
  const items = recipe.related.map((term) => `  <li><a href="${searchUrl(term)}">${term}</a></li>`);
  return `<ul class="related">\\n${items.join("\\n")}\\n</ul>`;
}

if (require.main === module) {
  const recipe = recipes.find((r) => r.id === process.argv[2]);
  if (!recipe) {
    console.error(`no recipe ${process.argv[2]}`);
    process.exit(1);
  }
  console.log(relatedBox(recipe));
}

module.exports = { relatedBox };
"""

PAGER_JS = """// The "Next page" link at the bottom of a page of search results.
const { searchUrl } = require("./links");

function nextLink(query, page, pages) {
  if (page >= pages) return "";
  return `<a class="next" href="${searchUrl(query, page + 1)}">Next page</a>`;
}

module.exports = { nextLink };
"""

RECIPES_JSON = """[
  {"id": "battered-cod", "title": "Battered cod", "related": ["fish & chips", "mushy peas", "tartare sauce"]},
  {"id": "summer-punch", "title": "Summer punch", "related": ["gin + tonic", "elderflower cordial"]},
  {"id": "rye-loaf", "title": "Rye loaf", "related": ["100% rye", "sourdough starter", "pain de campagne"]}
]
"""

LINKS_README = """# recipes

The site's pages are put together by small node modules: links.js makes
the addresses of the search pages, related.js the related searches under a
recipe, pager.js the link to the next page of results.

    node related.js battered-cod
"""

LINK_FILES = {"links.js": LINKS_JS, "related.js": RELATED_JS, "pager.js": PAGER_JS,
              "recipes.json": RECIPES_JSON, "README.md": LINKS_README}

# node's URL reader (as a browser reads an address) on the addresses made
# for awkward searches: the search page, with exactly the query asked for
# (and the page, past the first); the same for every href of the related
# searches box and of the next-page link, read from the HTML (its entities
# turned back). The recipes are as they were.
LINK_CHECK = unchanged(LINK_FILES, "recipes.json") + r""" && node - <<'EOF'
const assert = require("node:assert");
const { execFileSync } = require("node:child_process");
const { searchUrl } = require("./links.js");
const { nextLink } = require("./pager.js");

function read(address, query, page) {
  const url = new URL(address);
  const where = `${JSON.stringify(query)} page ${page}: ${address}`;
  assert.strictEqual(url.origin + url.pathname, "https://recipes.example/search", where);
  assert.strictEqual(url.hash, "", where);
  assert.deepStrictEqual([...url.searchParams.keys()].sort(), page > 1 ? ["page", "q"] : ["q"], where);
  assert.strictEqual(url.searchParams.get("q"), query, where);
  if (page > 1) assert.strictEqual(url.searchParams.get("page"), String(page), where);
}

function hrefs(html) {
  return [...html.matchAll(/href="([^"]*)"/g)].map((m) =>
    m[1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&"));
}

const queries = ["fish & chips", "gin + tonic", "100% rye", "pie #2", "crème brûlée", "a=b", "what?",
                 "salt/pepper", "tomato soup", "plain"];
for (const q of queries) {
  read(searchUrl(q), q, 1);
  read(searchUrl(q, 1), q, 1);
  read(searchUrl(q, 2), q, 2);
  read(searchUrl(q, 12), q, 12);
  const next = hrefs(nextLink(q, 3, 5));
  assert.strictEqual(next.length, 1, nextLink(q, 3, 5));
  read(next[0], q, 4);
}
const boxes = {"battered-cod": ["fish & chips", "mushy peas", "tartare sauce"],
               "summer-punch": ["gin + tonic", "elderflower cordial"],
               "rye-loaf": ["100% rye", "sourdough starter", "pain de campagne"]};
for (const [id, terms] of Object.entries(boxes)) {
  const links = hrefs(execFileSync("node", ["related.js", id], { encoding: "utf8" }));
  assert.strictEqual(links.length, terms.length, links);
  links.forEach((href, i) => read(href, terms[i], 1));
}
EOF"""

LINK_SOLUTION = r"""python3 - <<'EOF'
text = open("links.js").read()
text = text.replace("search?q=${query}", "search?q=${encodeURIComponent(query)}")
open("links.js", "w").write(text)
EOF"""

# --- months counted from 0 ------------------------------------------------------------------

DATES_JS = """// Dates on slips and letters, the way our readers write them: 05/03/2025.
function pad(n) {
  return String(n).padStart(2, "0");
}

function formatDate(date) {
  return `${pad(date.getDate())}/${pad(date.getMonth())}/${date.getFullYear()}`;
}

function addDays(date, days) {
  const d = new Date(date);
  d.setDate(d.getDate() + days);
  return d;
}

module.exports = { formatDate, addDays };
"""

SLIP_JS = """// Prints the slips for today's loans: node slip.js [loans.json]
const fs = require("fs");
const { formatDate, addDays } = require("./dates");

const LOAN_DAYS = 21;
const loans = JSON.parse(fs.readFileSync(process.argv[2] || "loans.json", "utf8"));
for (const loan of loans) {
  const borrowed = new Date(`${loan.borrowed}T12:00:00`);
  console.log(`${loan.title}: borrowed ${formatDate(borrowed)}, due back ${formatDate(addDays(borrowed, LOAN_DAYS))}`);
}
"""

LOANS_JSON = """[
  {"title": "The Wind in the Willows", "borrowed": "2025-02-12"},
  {"title": "A Brief History of Time", "borrowed": "2024-12-20"},
  {"title": "Middlemarch", "borrowed": "2025-01-31"}
]
"""

SLIP_README = """# loan slips

The desk prints a slip for each book that goes out, with the date it is due
back (three weeks later):

    node slip.js loans.json
"""

MONTH_FILES = {"dates.js": DATES_JS, "slip.js": SLIP_JS, "loans.json": LOANS_JSON, "README.md": SLIP_README}

# node, in two time zones, on every day of 2024 and 2025 at the hours a
# library is open and at its edges (half past midnight, a minute to
# midnight): the date as the desk's clock shows it, day/month/year with two
# digits each. The slips print the right dates, and adding days still works.
MONTH_CHECK = unchanged(MONTH_FILES, "slip.js", "loans.json") + r""" \
&& for tz in Europe/Berlin America/Los_Angeles; do TZ=$tz node - <<'EOF' || exit 1
const assert = require("node:assert");
const { execFileSync } = require("node:child_process");
const { formatDate, addDays } = require("./dates.js");

const pad = (n) => String(n).padStart(2, "0");
for (let day = new Date(2024, 0, 1); day.getFullYear() < 2026;
     day = new Date(day.getFullYear(), day.getMonth(), day.getDate() + 1)) {
  for (const [h, m] of [[0, 30], [9, 0], [12, 0], [17, 45], [23, 59]]) {
    const at = new Date(day.getFullYear(), day.getMonth(), day.getDate(), h, m);
    const want = `${pad(at.getDate())}/${pad(at.getMonth() + 1)}/${at.getFullYear()}`;
    assert.strictEqual(formatDate(at), want, `${process.env.TZ} ${at.toString()}`);
  }
}
assert.strictEqual(formatDate(addDays(new Date(2025, 1, 12, 12), 21)), "05/03/2025");
const out = execFileSync("node", ["slip.js"], { encoding: "utf8" });
assert.strictEqual(out, "The Wind in the Willows: borrowed 12/02/2025, due back 05/03/2025\n" +
  "A Brief History of Time: borrowed 20/12/2024, due back 10/01/2025\n" +
  "Middlemarch: borrowed 31/01/2025, due back 21/02/2025\n", out);
EOF
done"""

MONTH_SOLUTION = r"""sed -i 's|pad(date.getMonth())|pad(date.getMonth() + 1)|' dates.js"""

# --- a generator used up before the average ---------------------------------------------------

STEPS_PY = '''"""Step counts from the pedometer's log: one day a line, "2024-05-01 8412"."""


def read_steps(path):
    """The step count of each day in the log, in order."""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                yield int(line.split()[1])


def summary(counts):
    """Total, number of days and average a day (rounded), from any iterable
    of daily step counts: a list, or read_steps(path) itself."""
    total = sum(counts)
    days = sum(1 for _ in counts)
    average = round(total / days) if days else 0
    return {"total": total, "days": days, "average": average}
'''

WEEKLY_PY = '''"""Prints the week's summary: python3 weekly.py [week.log]"""
import sys

from steps import read_steps, summary

s = summary(read_steps(sys.argv[1] if len(sys.argv) > 1 else "week.log"))
print(f"{s['total']:,} steps in {s['days']} days, {s['average']:,} a day on average")
'''

WEEK_LOG = """# date steps
2024-05-06 8412
2024-05-07 10233
2024-05-08 6120
2024-05-09 12877
2024-05-10 7405
2024-05-11 15342
2024-05-12 4020
"""

STEPS_TEST_PY = '''import unittest

from steps import summary


class SummaryTest(unittest.TestCase):
    def test_two_days(self):
        self.assertEqual(summary([8000, 10000]), {"total": 18000, "days": 2, "average": 9000})

    def test_no_days(self):
        self.assertEqual(summary([]), {"total": 0, "days": 0, "average": 0})


if __name__ == "__main__":
    unittest.main()
'''

STEPS_README = """# steps

Every Sunday evening:

    python3 weekly.py week.log

Tests: `python3 -m unittest`.
"""

GENERATOR_FILES = {"steps.py": STEPS_PY, "weekly.py": WEEKLY_PY, "week.log": WEEK_LOG,
                   "test_steps.py": STEPS_TEST_PY, "README.md": STEPS_README, ".gitignore": "__pycache__/\n"}

# The weekly script run on its log and on logs of its own (a comment, a
# blank line, one day, none) prints the week as it is; summary() gives the
# same for a list, for read_steps() and for any other one-pass iterable, as
# its docstring promises. The tests still pass unchanged.
GENERATOR_CHECK = unchanged(GENERATOR_FILES, "test_steps.py", "week.log") \
    + r""" && python3 -m unittest -q test_steps 2>/dev/null && python3 - <<'EOF'
import os, subprocess, tempfile

from steps import read_steps, summary

def weekly(path):
    r = subprocess.run(["python3", "weekly.py", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout

assert weekly("week.log") == "64,409 steps in 7 days, 9,201 a day on average\n", weekly("week.log")
with tempfile.TemporaryDirectory() as d:
    for text, want in [
        ("2024-06-01 5000\n\n# rest\n2024-06-02 7001\n", "12,001 steps in 2 days, 6,000 a day on average\n"),
        ("2024-06-03 250\n2024-06-04 251\n2024-06-05 251\n", "752 steps in 3 days, 251 a day on average\n"),
        ("# nothing yet\n", "0 steps in 0 days, 0 a day on average\n"),
    ]:
        with open(f"{d}/log", "w") as f:
            f.write(text)
        assert weekly(f"{d}/log") == want, (text, weekly(f"{d}/log"))
    with open(f"{d}/log", "w") as f:
        f.write("2024-06-01 3\n2024-06-02 4\n")
    assert list(read_steps(f"{d}/log")) == [3, 4]
    assert summary(read_steps(f"{d}/log")) == {"total": 7, "days": 2, "average": 4}
want = {"total": 60, "days": 3, "average": 20}
for counts in ([10, 20, 30], (10, 20, 30), iter([10, 20, 30]), (n for n in [10, 20, 30]), map(int, "10 20 30".split())):
    assert summary(counts) == want, (type(counts), summary(counts))
assert summary(n for n in []) == {"total": 0, "days": 0, "average": 0}
EOF"""

GENERATOR_SOLUTION = r"""python3 - <<'EOF'
text = open("steps.py").read()
text = text.replace("    total = sum(counts)\n",
                    "    counts = list(counts)  # a generator can be gone through only once\n    total = sum(counts)\n")
open("steps.py", "w").write(text)
EOF"""

# --- visitors' comments put into a page unescaped ---------------------------------------------------

GUESTBOOK_PY = '''"""Builds the guestbook page: python3 guestbook.py writes page.html from comments.json."""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def render_comment(comment):
    return (f'<li class="comment"><strong>{comment["name"]}</strong> '
            f'<time datetime="{comment["date"]}">{comment["date"]}</time>'
            f'<p>{comment["text"]}</p></li>')


def render(comments):
    template = (HERE / "template.html").read_text(encoding="utf-8")
    return template.replace("{{comments}}", "\\n".join(render_comment(c) for c in comments))


if __name__ == "__main__":
    comments = json.loads((HERE / "comments.json").read_text(encoding="utf-8"))
    (HERE / "page.html").write_text(render(comments), encoding="utf-8")
    print(f"page.html: {len(comments)} comments")
'''

GUESTBOOK_TEMPLATE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Guestbook: Hilltop Campsite</title></head>
<body>
  <h1>Guestbook</h1>
  <ul class="comments">
{{comments}}
  </ul>
</body>
</html>
"""

GUESTBOOK_COMMENTS = """[
  {"name": "Mia", "date": "2024-08-02", "text": "Lovely quiet pitch, great showers."},
  {"name": "Tom & Jen", "date": "2024-08-05", "text": "Kids loved the stream. We'll be back!"},
  {"name": "anon", "date": "2024-08-07", "text": "<script>document.body.innerHTML = 'hacked'</script>"}
]
"""

GUESTBOOK_README = """# guestbook

The visitors' comments (comments.json, written by the comment form) go on
the campsite's guestbook page:

    python3 guestbook.py
"""

ESCAPE_FILES = {"guestbook.py": GUESTBOOK_PY, "template.html": GUESTBOOK_TEMPLATE,
                "comments.json": GUESTBOOK_COMMENTS, "README.md": GUESTBOOK_README,
                ".gitignore": "page.html\n__pycache__/\n"}

# Python's HTML reader on the page made from the comments and from
# comments of its own (markup, entities written out, a bare & before
# letters, quotes, a closing tag): one li.comment per comment, holding a
# strong, a time and a p and no other element, whose texts are exactly the
# name, the date and the text typed.
ESCAPE_CHECK = unchanged(ESCAPE_FILES, "template.html", "comments.json") + r""" && python3 - <<'EOF'
import json, subprocess
from html.parser import HTMLParser

import guestbook

class Comments(HTMLParser):
    def __init__(self):
        super().__init__()
        self.comments, self.current, self.field = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "li" and ("class", "comment") in attrs:
            assert self.current is None, "a comment inside a comment"
            self.current = {"tags": []}
            self.comments.append(self.current)
        elif self.current is not None:
            self.current["tags"].append(tag)
            self.field = tag
        else:
            assert tag in ("html", "head", "meta", "title", "body", "h1", "ul"), ("a stray element", tag)

    def handle_endtag(self, tag):
        if tag == "li" and self.current is not None:
            self.current = None
        self.field = None

    def handle_data(self, data):
        if self.current is not None and self.field:
            self.current[self.field] = self.current.get(self.field, "") + data

def check(html, comments):
    page = Comments()
    page.feed(html)
    page.close()
    assert len(page.comments) == len(comments), (len(page.comments), html)
    for got, c in zip(page.comments, comments):
        assert got["tags"] == ["strong", "time", "p"], (got, html)
        texts = (got.get("strong", ""), got.get("time", ""), got.get("p", ""))
        assert texts == (c["name"], c["date"], c["text"]), (got, c)

mine = [
    {"name": "<b>Big</b> Al", "date": "2024-08-09", "text": "Loved it!"},
    {"name": "Jo & Sam", "date": "2024-08-10", "text": "Write &lt;br&gt; for a new line & AT&T's \"fair\" 'rates'"},
    {"name": "Zoë", "date": "2024-08-11", "text": "5 > 3 < 4 </p></li></ul><h1>hi</h1>"},
    {"name": "x", "date": "2024-08-12", "text": "&copy &amp; <img src=x onerror=alert(1)>"},
    {"name": "Mo", "date": "2024-08-13", "text": "<script>alert('hi')</script>"},
]
check(guestbook.render(mine), mine)
r = subprocess.run(["python3", "guestbook.py"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
check(open("page.html", encoding="utf-8").read(), json.load(open("comments.json", encoding="utf-8")))
EOF"""

ESCAPE_SOLUTION = r"""python3 - <<'EOF'
text = open("guestbook.py").read()
text = text.replace("import json\n", "import html\nimport json\n")
text = text.replace('{comment["name"]}</strong>', '{html.escape(comment["name"])}</strong>')
text = text.replace('<p>{comment["text"]}</p>', '<p>{html.escape(comment["text"])}</p>')
open("guestbook.py", "w").write(text)
EOF"""

# --- a PATH that a profile replaces --------------------------------------------------------------

DOT_PROFILE = """# ~/.profile: read by login shells (install.sh links it there).

export EDITOR=vim
export LESS=-R

# My own scripts: this repo's bin/, linked as ~/bin.
PATH="$HOME/bin"
export PATH

# A login bash reads this file instead of .bashrc: read that too.
if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then
    . "$HOME/.bashrc"
fi
"""

DOT_TODO = """#!/bin/sh
# todo TEXT...: notes a thing to do; todo alone lists them.
if [ $# -eq 0 ]; then
    cat "$HOME/todo.txt" 2>/dev/null
else
    printf '%s\\n' "$*" >> "$HOME/todo.txt"
fi
"""

DOT_INSTALL = """#!/bin/sh
# Links the dotfiles into $HOME: sh install.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
ln -sf "$here/profile" "$HOME/.profile"
ln -sfn "$here/bin" "$HOME/bin"
echo "linked; open a new terminal"
"""

DOT_README = """# dotfiles

    sh install.sh

links profile to ~/.profile and bin/ to ~/bin.
"""

PATH_FILES = {"profile": DOT_PROFILE, "bin/todo": DOT_TODO, "install.sh": DOT_INSTALL, "README.md": DOT_README}

# The scripts are executable, as on the owner's machine.
PATH_SETUP = r"""set -e
chmod +x bin/todo install.sh
git add --chmod=+x bin/todo install.sh
git -c user.name=realmodel -c user.email=realmodel@localhost commit -q --amend --no-edit
"""

# dash and bash, each starting as a login shell would (a HOME with a bin of
# its own scripts, the system's PATH before it), read the profile without
# a word on stderr: the system's commands are found, in the system's order;
# the owner's scripts are found before a system command of the same name;
# no empty entry (the current folder) is added; the editor and less
# settings are as they were.
PATH_CHECK = unchanged(PATH_FILES, "bin/todo", "install.sh") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    home, system = f"{d}/home", f"{d}/system"
    for folder, says in ((f"{home}/bin", "mine"), (system, "system")):
        os.makedirs(folder)
        with open(f"{folder}/todo", "w") as f:
            f.write(f"#!/bin/sh\necho {says}\n")
        os.chmod(f"{folder}/todo", 0o755)
    start = [system, "/usr/local/bin", "/usr/bin", "/bin"]
    # dash: a plain POSIX sh, as Debian's /bin/sh, which knows no bash-isms.
    for shell in (shutil.which("dash") or "sh", "bash"):
        r = subprocess.run(
            [shell, "-c", '. "$1" || exit 9; printf "%s\\n" "$PATH"; command -v ls; command -v cat; todo; env',
             "sh", os.path.abspath("profile")],
            env={"HOME": home, "PATH": ":".join(start)}, cwd=d, capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr, (shell, r.returncode, r.stdout, r.stderr)
        lines = r.stdout.splitlines()
        assert len(lines) >= 4, (shell, lines, r.stderr)
        path, ls, cat, todo = lines[:4]
        exported = dict(line.split("=", 1) for line in lines[4:] if "=" in line)
        entries = path.split(":")
        assert "" not in entries, (shell, "an empty entry", path)
        assert f"{home}/bin" in entries, (shell, path)
        kept = [e for e in entries if e in start]
        first = [e for i, e in enumerate(kept) if e not in kept[:i]]
        assert first == start, (shell, "the system's PATH is not kept", path)
        assert os.path.basename(ls) == "ls" and os.path.dirname(ls) in ("/usr/bin", "/bin"), (shell, ls)
        assert os.path.basename(cat) == "cat" and os.path.dirname(cat) in ("/usr/bin", "/bin"), (shell, cat)
        assert todo == "mine", (shell, "the system's todo wins", path)
        assert (exported.get("EDITOR"), exported.get("LESS")) == ("vim", "-R"), (shell, exported)
EOF"""

PATH_SOLUTION = """sed -i 's|^PATH="$HOME/bin"$|PATH="$HOME/bin:$PATH"|' profile"""

# --- a CSV split on every comma ------------------------------------------------------------------

MEMBERS_PY = '''"""The members list, as the spreadsheet exports it (CSV with a header)."""


def load(path):
    """A dict per member, keyed by the header's column names."""
    members = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        for line in f:
            if line.strip():
                members.append(dict(zip(header, line.rstrip("\\n").split(","))))
    return members
'''

LABELS_PY = '''"""Prints address labels for the newsletter: python3 labels.py [members.csv]"""
import sys

import members

for m in members.load(sys.argv[1] if len(sys.argv) > 1 else "members.csv"):
    print(m["name"])
    print(m["address"])
    print(f"{m['postcode']}  {m['town'].upper()}")
    print()
'''

MEMBERS_CSV = """name,address,postcode,town,joined
Ruth Ellis,12 Orchard Road,OX4 1AB,Oxford,2019-03-02
Dev Patel,"Flat 2, 14 Mill Lane",OX1 2CD,Oxford,2021-06-15
Hannah Kowalski,"The ""Old"" Forge, Church Street",OX33 1EF,Wheatley,2023-01-09
Zoë Martin,3 Banbury Road,OX2 6GH,Oxford,2024-11-30
"""

MEMBERS_README = """# walking club

members.csv is exported from the club's spreadsheet. Labels for the
printed newsletter:

    python3 labels.py members.csv
"""

CSV_FILES = {"members.py": MEMBERS_PY, "labels.py": LABELS_PY, "members.csv": MEMBERS_CSV,
             "README.md": MEMBERS_README, ".gitignore": "__pycache__/\n"}

# Python's csv reader is the measure: load() gives, for the club's file and
# for exports of its own (quoted commas, doubled quotes, empty cells,
# every cell quoted), the rows that the csv module reads, keyed by the
# header; the labels of the club's file come out whole.
CSV_CHECK = unchanged(CSV_FILES, "members.csv", "labels.py") + r""" && python3 - <<'EOF'
import csv, subprocess, tempfile

import members

def want(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [dict(row) for row in csv.DictReader(f)]

assert [dict(m) for m in members.load("members.csv")] == want("members.csv"), members.load("members.csv")
rows = [["name", "address", "postcode", "town", "joined"],
        ["Ana Lima", "Unit 5, Riverside Works, Canal Street", "OX2 0AA", "Oxford", "2020-01-01"],
        ["Ben \"Bear\" Oduya", "7 High St", "", "Thame", ""],
        ["O'Neill, Kate", "Rose Cottage", "OX44 9ZZ", "Garsington, Oxon", "2022-02-02"],
        ["Plain Name", "1 Plain Road", "OX1 1AA", "Oxford", "2023-03-03"]]
with tempfile.TemporaryDirectory() as d:
    for quoting in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL):
        with open(f"{d}/export.csv", "w", newline="", encoding="utf-8") as f:
            csv.writer(f, quoting=quoting, lineterminator="\n").writerows(rows)
        assert [dict(m) for m in members.load(f"{d}/export.csv")] == want(f"{d}/export.csv"), \
            (quoting, members.load(f"{d}/export.csv"))
r = subprocess.run(["python3", "labels.py", "members.csv"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert r.stdout == ("Ruth Ellis\n12 Orchard Road\nOX4 1AB  OXFORD\n\n"
                    "Dev Patel\nFlat 2, 14 Mill Lane\nOX1 2CD  OXFORD\n\n"
                    "Hannah Kowalski\nThe \"Old\" Forge, Church Street\nOX33 1EF  WHEATLEY\n\n"
                    "Zoë Martin\n3 Banbury Road\nOX2 6GH  OXFORD\n\n"), r.stdout
EOF"""

CSV_SOLUTION = r'''cat > members.py <<'EOF'
"""The members list, as the spreadsheet exports it (CSV with a header)."""
import csv


def load(path):
    """A dict per member, keyed by the header's column names."""
    # The csv module, not split(","): a cell with a comma in it is quoted.
    with open(path, newline="", encoding="utf-8") as f:
        return [dict(row) for row in csv.DictReader(f)]
EOF'''

BACK_OFFICE_TASKS = [
    {
        "name": "split a bill to the cent",
        "files": SPLIT_FILES,
        "prompt": "When we split a 100 euro bill three ways, everyone gets 33.33 and the shares only add up to "
                  "99.99: a cent goes missing. The shares must always add up to the whole bill, and nobody "
                  "should pay more than a cent more than anyone else.",
        "check": SPLIT_CHECK,
        "solution": SPLIT_SOLUTION,
    },
    {
        "name": "count contacts outside the pipe",
        "files": IMPORT_FILES,
        "prompt": "The contacts import always says \"imported 0 contacts\", even though the contacts do show "
                  "up in the address book. Make it say how many it really imported.",
        "check": IMPORT_CHECK,
        "solution": IMPORT_SOLUTION,
    },
    {
        "name": "finish a merge",
        "files": MERGE_FILES,
        "setup": MERGE_SETUP,
        "prompt": "I was merging the new-prices branch and git stopped with a conflict. Keep both sides: the "
                  "new prices from the branch and the flat white we added on main. Then finish the merge.",
        "check": MERGE_CHECK,
        "solution": MERGE_SOLUTION,
    },
    {
        "name": "answer from a compose file",
        "files": COMPOSE_FILES,
        "prompt": "When I start everything with docker compose up, what address do I open in my browser to see "
                  "the app? Just tell me, don't change anything.",
        "check": COMPOSE_CHECK,
        "solution": 'echo "Open http://localhost:8081 (the container listens on 3000, published on 8081)." '
                    '> "$AGENT_ANSWER"',
    },
    {
        "name": "encode search links",
        "files": LINK_FILES,
        "prompt": "Some of the related-search links under our recipes search for the wrong thing: the one for "
                  "\"fish & chips\" only searches for \"fish\", and \"gin + tonic\" searches for \"gin tonic\". "
                  "The next-page links have the same problem.",
        "check": LINK_CHECK,
        "solution": LINK_SOLUTION,
    },
    {
        "name": "count months from one",
        "files": MONTH_FILES,
        "prompt": "The loan slips print the wrong dates: a book due back on 5 March says 05/02/2025, and books "
                  "borrowed in January show month 00.",
        "check": MONTH_CHECK,
        "solution": MONTH_SOLUTION,
    },
    {
        "name": "average a used-up generator",
        "files": GENERATOR_FILES,
        "prompt": "The weekly step summary gets the total right, but it always says 0 days and an average of "
                  "0 a day.",
        "check": GENERATOR_CHECK,
        "solution": GENERATOR_SOLUTION,
    },
    {
        "name": "escape guestbook comments",
        "files": ESCAPE_FILES,
        "prompt": "Someone left a comment in our guestbook with a <script> tag in it, and it ran for everyone "
                  "who opened the page. Comments should show up as exactly the text people typed, whatever "
                  "they type.",
        "check": ESCAPE_CHECK,
        "solution": ESCAPE_SOLUTION,
    },
    {
        "name": "extend the path",
        "files": PATH_FILES,
        "setup": PATH_SETUP,
        "prompt": "Since I added my own scripts folder to my shell profile, every new terminal says "
                  "\"command not found\" for ls, git, everything except my own scripts. Mine should still "
                  "come first.",
        "check": PATH_CHECK,
        "solution": PATH_SOLUTION,
    },
    {
        "name": "read quoted csv cells",
        "files": CSV_FILES,
        "prompt": "The newsletter address labels come out jumbled for members whose address has a comma in it: "
                  "half the address ends up where the postcode should be.",
        "check": CSV_CHECK,
        "solution": CSV_SOLUTION,
    },
]
