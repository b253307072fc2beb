"""The second cup set of everyday tasks of scripts/realmodel (`--set second_cup`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird and tea break sets
(tasks.py, new_tasks.py, fresh_tasks.py, plain_tasks.py, daily_tasks.py,
chores_tasks.py, errands_tasks.py, odd_jobs_tasks.py, side_quests_tasks.py,
back_office_tasks.py, night_shift_tasks.py, early_bird_tasks.py,
tea_break_tasks.py), unlike all thirteen in what is asked, by someone who
had read no run of any of them (no transcript, no result, no table). It is
as plain as the tea break set: the kind of request a junior developer
finishes over a second cup of tea, each a project of one to three short
files (under 40 lines each), each done by changing or adding a few lines in
one file, in ten kinds of file: hidden files such as .DS_Store left out of
a Python slideshow's photo list; long titles on a JavaScript page's cards
cut to 30 characters and "..."; comment lines in the list a shell script
reads skipped; a colleague who has left taken off a CSV team list; the
circle of an SVG logo made blue while its text stays red; an SQLite
schema's `active` column given a default of 1; a page's sidebar left out
of printouts with a print media query in CSS; an SVG favicon linked from
an HTML page's head; a GitHub Actions workflow made to run on pull
requests as well as pushes to main; and a question answered from a
CODEOWNERS file (who reviews the billing code). The keys are those of
tea_break_tasks.py: the files, the prompt as a person would type it (five
of the ten name no file), a check, and a solution that `scripts/realmodel
--check-tasks` applies to prove the check fails before it and passes
after. Checks run the code (the photo list and the slideshow in Python on
a folder with hidden files, the cards in node, the shell script in bash on
a list with comments, the phone list over the CSV, the schema in SQLite
from Python, with the app's own insert), parse the file (the CSV with csv,
the SVG with ElementTree, the CSS with a small cascade of its own, on
screen and on paper, the HTML with html.parser, the workflow with a small
YAML reader of its own) or read the answer (with git to see that nothing
changed), rather than look for one spelling, and use python3 (stdlib),
node, bash, git and coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: only .DS_Store
skipped, or every name with a dot in it, or the fix made in the slideshow
alone; "..." put after every title, or after titles of exactly 30
characters, or the title cut to 27; comments skipped by dropping every line
with a # in it (a client is called "Sharp #1 Printing"); both Daves or
both Millers taken off, or the row blanked or commented out; every red made
blue, or the fill put on the svg element; NOT NULL dropped, a default of 0,
or the default set in the app's insert alone; the sidebar hidden on screen
too, or made invisible in print but still taking its space; the icon linked
from the body, or as favicon.ico, or with rel="stylesheet"; `on: [push,
pull_request]`, which runs every branch's pushes, or pull_request_target;
and the catch-all owner given as the answer.
"""

from new_tasks import left_alone_and_answered, unchanged
from tea_break_tasks import replaced

# --- hidden files in the slideshow (Python; no file named) -----------------------------------

PHOTOS_PY = '''"""Finds the photos for the slideshow."""
import os


def photo_files(folder):
    """The names of the files in `folder`, sorted."""
    names = []
    for name in sorted(os.listdir(folder)):
        if os.path.isfile(os.path.join(folder, name)):
            names.append(name)
    return names
'''

SLIDESHOW_PY = '''"""Prints the slideshow's running order: python3 slideshow.py FOLDER"""
import sys

from photos import photo_files


def main(folder):
    names = photo_files(folder)
    for i, name in enumerate(names, 1):
        print(f"{i}/{len(names)} {name}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
'''

HIDDEN_FILES = {"photos.py": PHOTOS_PY, "slideshow.py": SLIDESHOW_PY}

# photo_files, called on a folder (given whole, with a trailing slash, and
# as "." from inside it) that holds photos, .DS_Store, ._beach.jpg,
# .hidden.jpg, a folder and a hidden folder, gives the three photos in
# order, and the slideshow numbers them 1/3 to 3/3. Fails only .DS_Store
# skipped, every name with a dot in it skipped (nothing is left), the full
# path tested for a leading dot (nothing skipped, or everything with "."),
# and the fix made in slideshow.py alone.
HIDDEN_CHECK = r"""python3 - <<'EOF'
import os, subprocess, tempfile
import photos

want = ["beach.jpg", "dog.v2.png", "sunset.jpeg"]
with tempfile.TemporaryDirectory() as d:
    for name in ["beach.jpg", ".DS_Store", "._beach.jpg", "dog.v2.png", ".hidden.jpg", "sunset.jpeg"]:
        open(os.path.join(d, name), "w").write("not really a photo\n")
    os.mkdir(os.path.join(d, "album"))
    os.mkdir(os.path.join(d, ".thumbs"))
    assert list(photos.photo_files(d)) == want, photos.photo_files(d)
    assert list(photos.photo_files(d + "/")) == want, photos.photo_files(d + "/")
    r = subprocess.run(["python3", "slideshow.py", d], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["1/3 beach.jpg", "2/3 dog.v2.png", "3/3 sunset.jpeg"], r.stdout
    r = subprocess.run(["python3", os.path.abspath("slideshow.py"), "."], cwd=d, capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["1/3 beach.jpg", "2/3 dog.v2.png", "3/3 sunset.jpeg"], r.stdout
EOF"""

HIDDEN_SOLUTION = replaced("photos.py", ("    for name in sorted(os.listdir(folder)):\n",
                                         "    for name in sorted(os.listdir(folder)):\n"
                                         "        if name.startswith(\".\"):\n            continue\n"))

# --- long titles on the cards (JavaScript; names the file) ------------------------------------

CARDS_JS = """// The article cards on the front page.

function escapeHtml(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function card(article) {
  return `<article class="card"><h2>${escapeHtml(article.title)}</h2><p>${escapeHtml(article.summary)}</p></article>`;
}

module.exports = { card };
"""

FRONT_JS = """// Prints the front page's cards: node front.js
const { card } = require("./cards");

const articles = [
  { title: "Opening hours over the holidays", summary: "We close at noon on the 24th." },
  { title: "Ten things to do with leftover sourdough starter", summary: "Pancakes, crackers and more." },
  { title: "Fish & chips on Fridays", summary: "From 5 pm, while it lasts." },
];

console.log(articles.map(card).join("\\n"));
"""

TITLES_FILES = {"cards.js": CARDS_JS, "front.js": FRONT_JS}

# card(), called from node: a title of 31 characters or more becomes its
# first 30 characters and "..." (or "…"), a title of exactly 30 characters
# or fewer is as before (escaped as before), the rest of the card is as
# before, and node front.js still runs. Fails "..." put after every title,
# titles of exactly 30 characters cut too (> written >=), titles cut to 27
# characters so that the whole is 30, and the titles cut in front.js alone.
TITLES_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");
const { card } = require("./cards.js");

function shown(title) {
  const html = card({ title, summary: "Some news & more." });
  const m = html.match(/^<article class="card"><h2>(.*)<\/h2><p>Some news &amp; more\.<\/p><\/article>$/);
  assert.ok(m, html);
  return m[1];
}

for (const title of ["Opening hours over the holidays", "Ten things to do with leftover sourdough starter",
                     "A very long title that goes on and on and on and on"]) {
  const want = title.slice(0, 30);
  assert.ok([want + "...", want + "\u2026"].includes(shown(title)), JSON.stringify([title, shown(title)]));
}
assert.strictEqual(shown("Our new bakery opens on Monday"), "Our new bakery opens on Monday");
assert.strictEqual(shown("Fish & chips on Fridays"), "Fish &amp; chips on Fridays");
assert.strictEqual(shown("Hi"), "Hi");
const out = execFileSync("node", ["front.js"], { encoding: "utf8" });
assert.strictEqual(out.trim().split("\n").length, 3, out);
EOF"""

TITLES_SOLUTION = replaced("cards.js", (
    "function card(article) {\n  return `<article class=\"card\"><h2>${escapeHtml(article.title)}</h2>",
    "function card(article) {\n"
    "  const title = article.title.length > 30 ? article.title.slice(0, 30) + \"...\" : article.title;\n"
    "  return `<article class=\"card\"><h2>${escapeHtml(title)}</h2>"))

# --- comments in the client list (shell; names the list) --------------------------------------

MKCLIENTS_SH = """#!/usr/bin/env bash
# Makes a folder, with the usual subfolders, for each client in clients.txt.
set -e

while IFS= read -r client; do
  [ -z "$client" ] && continue
  mkdir -p "clients/$client/invoices" "clients/$client/contracts"
  echo "ready: $client"
done < clients.txt
"""

CLIENTS_TXT = """Acme Ltd
Baker & Sons
Corner Cafe
"""

COMMENTS_FILES = {"mkclients.sh": MKCLIENTS_SH, "clients.txt": CLIENTS_TXT}

# bash mkclients.sh, run on a copy with a clients.txt that has comment lines
# (at the top, in the middle, one with no space after the #), a blank line,
# and a client whose name has a # in it, makes folders (with invoices and
# contracts) for the three clients and nothing else. Fails every line with
# a # in it dropped (Sharp #1 Printing is lost), a `break` at the first
# comment, and the comments taken out of clients.txt instead.
COMMENTS_CHECK = r"""python3 - <<'EOF'
import os, shutil, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    shutil.copy("mkclients.sh", d)
    with open(os.path.join(d, "clients.txt"), "w") as f:
        f.write("# the clients we work for now\nAcme Ltd\n#Old Mill Bakery\n\nSharp #1 Printing\n"
                "# Zed & Co (left in May)\nBaker & Sons\n")
    r = subprocess.run(["bash", "mkclients.sh"], cwd=d, capture_output=True, text=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    made = sorted(os.listdir(os.path.join(d, "clients")))
    assert made == ["Acme Ltd", "Baker & Sons", "Sharp #1 Printing"], made
    for name in made:
        assert sorted(os.listdir(os.path.join(d, "clients", name))) == ["contracts", "invoices"], name
EOF"""

COMMENTS_SOLUTION = replaced("mkclients.sh", ('  [ -z "$client" ] && continue\n',
                                              '  [ -z "$client" ] && continue\n'
                                              '  [[ $client == "#"* ]] && continue\n'))

# --- someone has left the team (CSV; no file named) -------------------------------------------

TEAM_CSV = """name,role,email,phone
Alice Brown,Manager,alice.brown@cornerbakery.example,0161 496 0001
Dave Okafor,Baker,dave.okafor@cornerbakery.example,0161 496 0002
Jo Miller,Cashier,jo.miller@cornerbakery.example,0161 496 0003
Dave Miller,Driver,dave.miller@cornerbakery.example,0161 496 0004
Priya Shah,Baker,priya.shah@cornerbakery.example,0161 496 0005
"""

PHONELIST_PY = '''"""Prints the team's phone list, by surname: python3 phonelist.py"""
import csv

with open("team.csv", newline="") as f:
    team = list(csv.DictReader(f))

for person in sorted(team, key=lambda p: p["name"].split()[-1]):
    print(f"{person['name']:<14} {person['role']:<10} {person['phone']}")
'''

LEAVER_FILES = {"team.csv": TEAM_CSV, "phonelist.py": PHONELIST_PY}

# team.csv, read with csv (blank lines aside), is the same header and rows
# in the same order less Dave Miller's, and python3 phonelist.py lists the
# other four. Fails Dave Okafor or Jo Miller taken off too, Dave Miller's
# cells blanked (a row of empty cells) or his row commented out (csv has no
# comments), and him left out in phonelist.py instead.
LEAVER_CHECK = r"""python3 - <<'EOF'
import csv, io, subprocess

ORIGINAL = """ + repr(TEAM_CSV) + r"""

before = [row for row in csv.reader(io.StringIO(ORIGINAL)) if row]
after = [row for row in csv.reader(open("team.csv", newline="")) if row]
assert after == [row for row in before if row[0] != "Dave Miller"], after
r = subprocess.run(["python3", "phonelist.py"], capture_output=True, text=True, timeout=20)
assert r.returncode == 0, r.stderr
names = [" ".join(line.split()[:2]) for line in r.stdout.splitlines()]
assert names == ["Alice Brown", "Jo Miller", "Dave Okafor", "Priya Shah"], r.stdout
EOF"""

LEAVER_SOLUTION = replaced("team.csv", ("Dave Miller,Driver,dave.miller@cornerbakery.example,0161 496 0004\n", ""))

# --- a blue circle in the logo (SVG; names the file) ------------------------------------------

LOGO_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="160" height="140" viewBox="0 0 160 140">
  <title>Sunny Side Cafe</title>
  <circle cx="80" cy="55" r="45" fill="#d62828"/>
  <text x="80" y="130" text-anchor="middle" font-family="Georgia, serif" font-size="22" fill="#d62828">Sunny Side</text>
</svg>
"""

LOGO_INDEX_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sunny Side Cafe</title></head>
<body>
  <img src="logo.svg" alt="Sunny Side Cafe" width="160" height="140">
  <p>Breakfast all day, every day.</p>
</body>
</html>
"""

LOGO_FILES = {"logo.svg": LOGO_SVG, "index.html": LOGO_INDEX_HTML}

# logo.svg, parsed with ElementTree: the same elements with the same text
# and the same attributes, except that the circle's fill (its fill
# attribute, or fill in its style, which wins) is #1e90ff (any case, #1e90ff
# as rgb(), or its name, dodgerblue), and the text's fill is still #d62828.
# Fails every red made blue (the text too), the fill put on the svg element
# or as the circle's stroke, another blue, and a file that no longer parses.
LOGO_CHECK = r"""python3 - <<'EOF'
import re
import xml.etree.ElementTree as ET

ORIGINAL = """ + repr(LOGO_SVG) + r"""


def colour(value):
    v = (value or "").strip().lower().replace(" ", "")
    v = {"dodgerblue": "#1e90ff"}.get(v, v)
    m = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", v)
    if m:
        v = "#%02x%02x%02x" % tuple(int(n) for n in m.groups())
    m = re.fullmatch(r"#([0-9a-f])([0-9a-f])([0-9a-f])", v)
    if m:
        v = "#" + "".join(c * 2 for c in m.groups())
    return v


def fill(attrs):
    style = dict(part.split(":", 1) for part in attrs.get("style", "").split(";") if ":" in part)
    style = {k.strip().lower(): v for k, v in style.items()}
    return colour(style.get("fill", attrs.get("fill")))


def elements(text):
    return [(el.tag.split("}")[-1], dict(el.attrib), (el.text or "").strip()) for el in ET.fromstring(text).iter()]


before, after = elements(ORIGINAL), elements(open("logo.svg").read())
assert [(t, x) for t, _, x in after] == [(t, x) for t, _, x in before], after
for (tag, old, _), (_, new, _) in zip(before, after):
    if tag == "circle":
        assert fill(new) == "#1e90ff", new
        old = {k: v for k, v in old.items() if k not in ("fill", "style")}
        new = {k: v for k, v in new.items() if k not in ("fill", "style")}
    assert new == old, (tag, new)
    if tag == "text":
        assert fill(new) == "#d62828", new
EOF"""

LOGO_SOLUTION = replaced("logo.svg", ('r="45" fill="#d62828"', 'r="45" fill="#1e90ff"'))

# --- a default for a column (SQL; no file named) ----------------------------------------------

CLUB_SCHEMA_SQL = """-- The club's members and their payments (SQLite).
CREATE TABLE IF NOT EXISTS members (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  active INTEGER NOT NULL,
  joined TEXT NOT NULL DEFAULT (date('now'))
);

CREATE TABLE IF NOT EXISTS payments (
  id INTEGER PRIMARY KEY,
  member_id INTEGER NOT NULL REFERENCES members(id),
  amount_cents INTEGER NOT NULL,
  paid_on TEXT NOT NULL
);
"""

CLUB_PY = '''"""The club's members: python3 club.py add NAME EMAIL"""
import sqlite3
import sys


def connect(path="club.db"):
    db = sqlite3.connect(path)
    with open("schema.sql") as f:
        db.executescript(f.read())
    return db


def add_member(db, name, email):
    cur = db.execute("INSERT INTO members (name, email) VALUES (?, ?)", (name, email))
    db.commit()
    return cur.lastrowid


if __name__ == "__main__":
    db = connect()
    if sys.argv[1:2] == ["add"]:
        print("added member", add_member(db, sys.argv[2], sys.argv[3]))
'''

DEFAULT_FILES = {"schema.sql": CLUB_SCHEMA_SQL, "club.py": CLUB_PY}

# schema.sql, run into an SQLite database from Python: a member inserted
# without an active value gets the integer 1, one inserted with 0 keeps 0,
# an explicit NULL is still refused, and every column of both tables is as
# before (PRAGMA table_info) but active's default; python3 club.py add
# works on a fresh database. Fails NOT NULL dropped (the member gets NULL),
# a default of 0, and active=1 written into club.py's insert alone (the
# schema still has no default).
DEFAULT_CHECK = r"""python3 - <<'EOF'
import os, shutil, sqlite3, subprocess, tempfile

ORIGINAL = """ + repr(CLUB_SCHEMA_SQL) + r"""


def database(sql):
    db = sqlite3.connect(":memory:")
    db.executescript(sql)
    return db


def columns(db):
    tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    return {t: [list(c) for c in db.execute(f"PRAGMA table_info({t})")] for t in tables}


schema = open("schema.sql").read()
db = database(schema)
db.execute("INSERT INTO members (name, email) VALUES ('Ann', 'ann@example.com')")
db.execute("INSERT INTO members (name, email, active) VALUES ('Bo', 'bo@example.com', 0)")
rows = db.execute("SELECT name, active, typeof(active) FROM members ORDER BY id").fetchall()
assert rows == [("Ann", 1, "integer"), ("Bo", 0, "integer")], rows
try:
    db.execute("INSERT INTO members (name, email, active) VALUES ('Cy', 'cy@example.com', NULL)")
    raise SystemExit("a NULL active is let through")
except sqlite3.IntegrityError:
    pass
before, after = columns(database(ORIGINAL)), columns(db)
for cols in (before["members"], after["members"]):
    for c in cols:
        if c[1] == "active":
            c[4] = None
assert after == before, after
with tempfile.TemporaryDirectory() as d:
    shutil.copy("schema.sql", d)
    shutil.copy("club.py", d)
    r = subprocess.run(["python3", "club.py", "add", "Dee", "dee@example.com"], cwd=d, capture_output=True,
                       text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    got = sqlite3.connect(os.path.join(d, "club.db")).execute("SELECT name, active FROM members").fetchall()
    assert got == [("Dee", 1)], got
EOF"""

DEFAULT_SOLUTION = replaced("schema.sql", ("  active INTEGER NOT NULL,\n", "  active INTEGER NOT NULL DEFAULT 1,\n"))

# --- no sidebar on paper (CSS; no file named) -------------------------------------------------

RECIPE_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Lemon drizzle cake</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <div class="page">
    <main class="recipe">
      <h1>Lemon drizzle cake</h1>
      <p>Beat the butter and sugar, add the eggs and flour, and bake for 45 minutes.</p>
    </main>
    <aside class="sidebar">
      <h2>More cakes</h2>
      <a href="carrot.html">Carrot cake</a>
    </aside>
  </div>
</body>
</html>
"""

RECIPE_STYLE_CSS = """body {
  font-family: Georgia, serif;
  margin: 0 auto;
  max-width: 60rem;
}

.page {
  display: flex;
  gap: 2rem;
}

.recipe {
  flex: 2;
}

.sidebar {
  flex: 1;
  background: #f6f1e7;
  padding: 1rem;
}

.sidebar h2 {
  font-size: 1rem;
}
"""

PRINT_FILES = {"index.html": RECIPE_INDEX_HTML, "style.css": RECIPE_STYLE_CSS}

# The page's styles (the stylesheets index.html links, with their media,
# and its <style> blocks), read by a small cascade of their own (@media
# types, descendant and child selectors, specificity, order, !important):
# on screen every element of the page (body, the page div, main, h1, the
# aside and its h2, found in index.html as it is now) has the properties it
# had, and on paper the aside's display is none while body, the page div,
# main and h1 are still shown. Fails the sidebar hidden on screen too,
# visibility: hidden (the third of the paper stays empty), a print rule for
# #sidebar or .side-bar, and the sidebar's rule wrapped in @media screen.
PRINT_CHECK = r"""python3 - <<'EOF'
import os, re
from html.parser import HTMLParser

ORIGINAL_HTML = """ + repr(RECIPE_INDEX_HTML) + r"""
ORIGINAL_CSS = """ + repr(RECIPE_STYLE_CSS) + r"""
VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr"}


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.stack, self.chains, self.sheets = [], {}, []
        self.style = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and "stylesheet" in (attrs.get("rel") or "").lower().split():
            path = (attrs.get("href") or "").lstrip("./")
            if os.path.exists(path):
                self.sheets.append(((attrs.get("media") or "all",), open(path).read()))
        if tag == "style":
            self.style = [attrs.get("media") or "all", ""]
        if tag in VOID:
            return
        self.stack.append((tag, set((attrs.get("class") or "").split())))
        self.chains.setdefault(tag, list(self.stack))

    def handle_endtag(self, tag):
        if tag == "style" and self.style:
            self.sheets.append(((self.style[0],), self.style[1]))
            self.style = None
        while self.stack and tag not in VOID:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.style:
            self.style[1] += data


def rules(text, media):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, i = [], 0
    while True:
        j = text.find("{", i)
        if j < 0:
            return out
        head = text[i:j].rsplit(";", 1)[-1].strip()
        depth, k = 1, j + 1
        while depth:
            assert k < len(text), "unbalanced braces"
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        body = text[j + 1:k - 1]
        if head.lower().startswith("@media"):
            out += rules(body, media + (head[6:].strip(),))
        elif not head.startswith("@"):
            decls = []
            for d in body.split(";"):
                if ":" in d:
                    prop, value = d.split(":", 1)
                    value = value.strip()
                    important = bool(re.search(r"!\s*important$", value, re.I))
                    value = re.sub(r"\s*!\s*important$", "", value, flags=re.I)
                    decls.append((prop.strip().lower(), value, important))
            out += [(media, sel.strip(), decls) for sel in head.split(",")]
        i = k


def applies(queries, medium):
    for query in queries.lower().split(","):
        q = query.strip()
        negated = q.startswith("not ")
        q = re.sub(r"^(not|only)\s+", "", q)
        kind = "all" if not q or q.startswith("(") else q.split()[0]
        if (kind in ("all", medium)) != negated:
            return True
    return False


def compound_ok(comp, el):
    m = re.fullmatch(r"(\*|[a-zA-Z][\w-]*)?((?:\.[\w-]+)*)", comp)
    if not m or (m.group(1) and m.group(1) not in ("*", el[0])):
        return False
    return set(re.findall(r"\.([\w-]+)", m.group(2))) <= el[1]


def matches(sel, chain):
    toks = re.sub(r"\s*([>+~])\s*", r" \1 ", sel).split()
    comps, combs, k = [toks[0]], [], 1
    while k < len(toks):
        if toks[k] in (">", "+", "~"):
            combs.append(toks[k])
            comps.append(toks[k + 1])
            k += 2
        else:
            combs.append(" ")
            comps.append(toks[k])
            k += 1
    if "+" in combs or "~" in combs:
        return False

    def at(ci, ei):
        if not compound_ok(comps[ci], chain[ei]):
            return False
        if ci == 0:
            return True
        if combs[ci - 1] == ">":
            return ei > 0 and at(ci - 1, ei - 1)
        return any(at(ci - 1, e) for e in range(ei))

    return at(len(comps) - 1, len(chain) - 1)


def computed(sheets, chain, medium):
    found = []
    order = 0
    for sheet_media, text in sheets:
        for media, sel, decls in rules(text, sheet_media):
            order += 1
            if all(applies(m, medium) for m in media) and matches(sel, chain):
                spec = (sel.count(".") + sel.count(":") + sel.count("["), len(re.findall(r"(^|[\s>+~])[a-zA-Z]", sel)))
                found += [((important, spec, order), prop, value) for prop, value, important in decls]
    return {prop: value.lower() for _, prop, value in sorted(found)}


before, after = Page(ORIGINAL_HTML), Page(open("index.html").read())
before.sheets = [(("all",), ORIGINAL_CSS)]
elements = ["html", "body", "div", "main", "h1", "aside", "h2"]
assert all(e in after.chains for e in elements), after.chains
for e in elements:
    old = computed(before.sheets, before.chains[e], "screen")
    new = computed(after.sheets, after.chains[e], "screen")
    assert new == old, ("on screen", e, new)
assert computed(after.sheets, after.chains["aside"], "print").get("display") == "none", "the sidebar is printed"
for e in ["html", "body", "div", "main", "h1"]:
    assert computed(after.sheets, after.chains[e], "print").get("display") != "none", ("not printed", e)
EOF"""

PRINT_SOLUTION = r"""printf '\n@media print {\n  .sidebar {\n    display: none;\n  }\n}\n' >> style.css"""

# --- a favicon (HTML; names the files) --------------------------------------------------------

CYCLES_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Hilltop Cycles</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Hilltop Cycles</h1>
  <p>Repairs while you wait, Monday to Saturday.</p>
</body>
</html>
"""

CYCLES_FAVICON_SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
  <circle cx="9" cy="22" r="7" fill="none" stroke="#2a9d8f" stroke-width="3"/>
  <circle cx="23" cy="22" r="7" fill="none" stroke="#2a9d8f" stroke-width="3"/>
</svg>
"""

CYCLES_STYLE_CSS = """body {
  font-family: system-ui, sans-serif;
  margin: 2rem;
}
"""

FAVICON_FILES = {"index.html": CYCLES_INDEX_HTML, "favicon.svg": CYCLES_FAVICON_SVG, "style.css": CYCLES_STYLE_CSS}

# index.html, parsed with html.parser: a <link> in the head whose rel has
# the word icon ("icon" or "shortcut icon") and whose href is favicon.svg
# (./ or / before it allowed), with no type or image/svg+xml; no icon link
# outside the head; every other tag, attribute and text as before; and
# favicon.svg as it was. Fails the link put in the body, an href of
# favicon.ico or another path, rel="stylesheet" or apple-touch-icon alone,
# type="image/x-icon", and favicon.svg changed or moved.
FAVICON_CHECK = unchanged(FAVICON_FILES, "favicon.svg") + r""" && python3 - <<'EOF'
from html.parser import HTMLParser

ORIGINAL = """ + repr(CYCLES_INDEX_HTML) + r"""


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.words, self.icons = [], [], []
        self.in_head = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "head":
            self.in_head = True
        if tag == "body":
            self.in_head = False
        if tag == "link" and "icon" in (attrs.get("rel") or "").lower().split():
            self.icons.append((self.in_head, attrs))
            return
        self.tags.append((tag, sorted(attrs.items())))

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False
        self.tags.append(("/" + tag, []))

    def handle_data(self, data):
        self.words += data.split()


before, after = Page(ORIGINAL), Page(open("index.html").read())
assert after.tags == before.tags, after.tags
assert after.words == before.words, after.words
assert after.icons, "no icon link"
for in_head, attrs in after.icons:
    assert in_head, ("an icon link outside the head", attrs)
    href = (attrs.get("href") or "").strip()
    href = href[2:] if href.startswith("./") else href.lstrip("/")
    assert href == "favicon.svg", attrs
    assert (attrs.get("type") or "image/svg+xml").strip().lower() == "image/svg+xml", attrs
EOF"""

FAVICON_SOLUTION = replaced("index.html", ('  <link rel="stylesheet" href="style.css">\n',
                                           '  <link rel="stylesheet" href="style.css">\n'
                                           '  <link rel="icon" href="favicon.svg" type="image/svg+xml">\n'))

# --- CI on pull requests (GitHub Actions YAML; names the file) --------------------------------

CI_YML = """name: tests

on:
  push:
    branches: [main]

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

CI_PACKAGE_JSON = """{
  "name": "slugger",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "test": "node --test"
  }
}
"""

# A small reader of the YAML a workflow or a manifest is written in (block
# mappings and lists, plain and quoted scalars, flow lists and mappings,
# comments, a document start), for checks that compare a file before and
# after: `parse(text)`. Shared with closing_time_tasks.py; it needs `re`.
YAML_READER = r"""def scalar(s):
    s = s.strip()
    if s in ("", "~", "null"):
        return None
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    if s.startswith("[") and s.endswith("]"):
        return [scalar(x) for x in s[1:-1].split(",")] if s[1:-1].strip() else []
    if s.startswith("{") and s.endswith("}"):
        out = {}
        for part in s[1:-1].split(",") if s[1:-1].strip() else []:
            k, _, v = part.partition(":")
            out[scalar(k)] = scalar(v)
        return out
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    if s in ("true", "false"):
        return s == "true"
    return s


def item(text):
    return text == "-" or text.startswith("- ")


def block(lines, i, indent):
    if item(lines[i][1]):
        out = []
        while i < len(lines) and lines[i][0] == indent and item(lines[i][1]):
            rest = lines[i][1][1:].strip()
            if not rest:
                i += 1
                assert i < len(lines) and lines[i][0] > indent, "an empty list item"
                value, i = block(lines, i, lines[i][0])
            elif re.match(r"[^\s\[{'\"][^:]*:(\s|$)", rest):
                lines[i] = (indent + len(lines[i][1]) - len(rest), rest)
                value, i = block(lines, i, lines[i][0])
            else:
                value, i = scalar(rest), i + 1
            out.append(value)
        return out, i
    out = {}
    while i < len(lines) and lines[i][0] == indent and not item(lines[i][1]):
        m = re.fullmatch(r"('[^']*'|\"[^\"]*\"|[^:]+?)\s*:(?:\s+(.*))?", lines[i][1])
        assert m, "not a mapping line: " + lines[i][1]
        key, rest = scalar(m.group(1)), m.group(2)
        assert key not in out, "a key twice: %s" % key
        i += 1
        if rest:
            out[key] = scalar(rest)
        elif i < len(lines) and (lines[i][0] > indent or (lines[i][0] == indent and item(lines[i][1]))):
            out[key], i = block(lines, i, lines[i][0])
        else:
            out[key] = None
    return out, i


def parse(text):
    lines = []
    for raw in text.split("\n"):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if line.strip() and line.strip() != "---":
            assert "\t" not in line, "a tab in: " + raw
            lines.append((len(line) - len(line.lstrip(" ")), line.strip()))
    value, i = block(lines, 0, lines[0][0])
    assert i == len(lines), "could not read: " + lines[i][1]
    return value


"""

CI_FILES = {".github/workflows/ci.yml": CI_YML, "package.json": CI_PACKAGE_JSON}

# .github/workflows/ci.yml, read by a small YAML reader of its own (block
# mappings and lists, flow lists and mappings of plain values, quotes,
# comments): `on` still has push with branches [main], and now
# pull_request too, with no settings or with branches that include main;
# name and jobs are as they were. Fails `on: [push, pull_request]` (pushes
# to every branch run too), pull_request_target or pull-request, a
# pull_request limited to some `types`, and the jobs changed.
CI_CHECK = r"""python3 - <<'EOF'
import re

ORIGINAL = """ + repr(CI_YML) + r"""


""" + YAML_READER + r"""before, after = parse(ORIGINAL), parse(open(".github/workflows/ci.yml").read())
assert set(after) == {"name", "on", "jobs"}, after
assert after["name"] == before["name"] and after["jobs"] == before["jobs"], after
on = after["on"]
assert isinstance(on, dict) and set(on) == {"push", "pull_request"}, on
assert on["push"] == {"branches": ["main"]} or on["push"] == {"branches": "main"}, on["push"]
pr = on["pull_request"]
if pr not in (None, {}):
    assert isinstance(pr, dict) and set(pr) == {"branches"}, pr
    assert "main" in (pr["branches"] if isinstance(pr["branches"], list) else [pr["branches"]]), pr
EOF"""

CI_SOLUTION = replaced(".github/workflows/ci.yml",
                       ("    branches: [main]\n", "    branches: [main]\n  pull_request:\n"))

# --- a question answered from CODEOWNERS (no file named) --------------------------------------

CODEOWNERS = """# GitHub asks these people to review every pull request that changes their files.
*                @tom-h
/docs/           @ana-r
/billing/        @maria-k
*.css            @lee-design
"""

INVOICES_PY = '''"""Invoices for the shop's customers."""
from decimal import Decimal

VAT = Decimal("0.20")


def invoice_total(lines):
    """The total of (quantity, unit price) lines, with VAT, to the cent."""
    net = sum(Decimal(q) * Decimal(str(p)) for q, p in lines)
    return (net * (1 + VAT)).quantize(Decimal("0.01"))
'''

SHOP_README = """# shop

The shop's backend. The billing code lives in billing/, the API docs in docs/.

Run the tests with `python3 -m unittest`.
"""

OWNERS_FILES = {".github/CODEOWNERS": CODEOWNERS, "billing/invoices.py": INVOICES_PY, "README.md": SHOP_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer names maria-k (Maria, with or without the
# @). Fails an empty answer, the catch-all owner (@tom-h) or another owner
# given instead, and a changed file.
OWNERS_CHECK = left_alone_and_answered(OWNERS_FILES, (".github/CODEOWNERS", "billing/invoices.py", "README.md"), r"""
assert re.search(r"\bmaria\b", answer, re.I), answer
""")

OWNERS_SOLUTION = r"""echo 'Maria (@maria-k): CODEOWNERS gives her /billing/.' > "$AGENT_ANSWER" """

SECOND_CUP_TASKS = [
    {
        "name": "skip hidden files in the slideshow",
        "files": HIDDEN_FILES,
        "prompt": "The slideshow shows hidden files like .DS_Store as if they were photos. Leave out every file "
                  "whose name starts with a dot.",
        "check": HIDDEN_CHECK,
        "solution": HIDDEN_SOLUTION,
    },
    {
        "name": "shorten long card titles",
        "files": TITLES_FILES,
        "prompt": "Long titles spill out of the cards on the front page. In cards.js, cut any title longer than "
                  "30 characters to its first 30 characters followed by \"...\". Shorter titles stay as they are.",
        "check": TITLES_CHECK,
        "solution": TITLES_SOLUTION,
    },
    {
        "name": "skip comment lines in the client list",
        "files": COMMENTS_FILES,
        "prompt": "I'd like to put comments in clients.txt. Make the script skip lines that start with #.",
        "check": COMMENTS_CHECK,
        "solution": COMMENTS_SOLUTION,
    },
    {
        "name": "take a leaver off the team list",
        "files": LEAVER_FILES,
        "prompt": "Dave Miller has left us. Please take him off the team list.",
        "check": LEAVER_CHECK,
        "solution": LEAVER_SOLUTION,
    },
    {
        "name": "make the logo circle blue",
        "files": LOGO_FILES,
        "prompt": "Make the circle in logo.svg blue (#1e90ff). The name under it should stay red.",
        "check": LOGO_CHECK,
        "solution": LOGO_SOLUTION,
    },
    {
        "name": "give a column a default",
        "files": DEFAULT_FILES,
        "prompt": "python3 club.py add Ann ann@example.com fails with sqlite3.IntegrityError: NOT NULL constraint "
                  "failed: members.active. New members should be active, so give active a default of 1 in the "
                  "schema.",
        "check": DEFAULT_CHECK,
        "solution": DEFAULT_SOLUTION,
    },
    {
        "name": "leave the sidebar out of printouts",
        "files": PRINT_FILES,
        "prompt": "When people print a recipe, the sidebar with the other cakes takes up a third of the paper. "
                  "Leave it out when the page is printed; on screen it should stay as it is.",
        "check": PRINT_CHECK,
        "solution": PRINT_SOLUTION,
    },
    {
        "name": "add a favicon",
        "files": FAVICON_FILES,
        "prompt": "The browser tab shows a blank icon for index.html. Use favicon.svg as the site's icon.",
        "check": FAVICON_CHECK,
        "solution": FAVICON_SOLUTION,
    },
    {
        "name": "run ci on pull requests",
        "files": CI_FILES,
        "prompt": "Our tests in .github/workflows/ci.yml only run on pushes to main. Make them run on pull "
                  "requests too.",
        "check": CI_CHECK,
        "solution": CI_SOLUTION,
    },
    {
        "name": "answer from codeowners",
        "files": OWNERS_FILES,
        "prompt": "Who has to review changes to the billing code? Just tell me, don't change anything.",
        "check": OWNERS_CHECK,
        "solution": OWNERS_SOLUTION,
    },
]
