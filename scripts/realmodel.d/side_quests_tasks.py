"""The side quests set of everyday tasks of scripts/realmodel (`--set side_quests`).

Written after the old, new, fresh, plain, daily, chores, errands and odd jobs
sets (tasks.py, new_tasks.py, fresh_tasks.py, plain_tasks.py,
daily_tasks.py, chores_tasks.py, errands_tasks.py, odd_jobs_tasks.py),
unlike all eight in what is broken and in how it is fixed, and as easy as
the last four, by someone who had read no run of any of them (no
transcript, no result, no table): ten one-step requests, each a project of
three to six short files, each in another kind of file or tool: a greedy
regex in a sed script, an index missing from an SQLite schema, a CSS media
query the wrong way round, links to other sites that should open a new
tab, a question answered from git's history, a JavaScript loop whose
callbacks share one `var`, days counted in the machine's time zone instead
of UTC, a console script in pyproject.toml naming a function that is gone,
a .gitignore exception that cannot work under an ignored folder, and
Netlify redirects that a catch-all rule shadows. The keys are those of
odd_jobs_tasks.py, with `setup` where the project needs a history: the
files, the prompt as a person would type it (seven of the ten name no
file), a check, and a solution that `scripts/realmodel --check-tasks`
applies to prove the check fails before it and passes after. Checks run the
code, sed, node, SQLite's query planner, git, or a reader of the file's own
rules (CSS's cascade and media queries, HTML, Python's entry points,
Netlify's redirect rules) rather than look for one spelling, and use
python3 (its sqlite3 and tomllib), node, sh, git and coreutils only (and
the sed the newsletter script itself calls).
"""

from new_tasks import unchanged

# --- a greedy regex in a sed script ---------------------------------------------------

TOTEXT_SH = r"""#!/bin/sh
# The plain-text copy of a newsletter, for mail programs that show no HTML:
#   sh totext.sh issues/2024-10.html > issues/2024-10.txt
# Drops the tags, turns the entities back into characters, trims the
# indentation and keeps at most one blank line in a row.
sed -e 's/<.*>//g' \
    -e 's/&nbsp;/ /g' \
    -e 's/&lt;/</g' \
    -e 's/&gt;/>/g' \
    -e 's/&amp;/\&/g' \
    -e 's/^[[:space:]]*//' \
    "$1" | cat -s
"""

ISSUE_SEPTEMBER_HTML = """<!doctype html>
<html lang="en">
<body>
  <h1>Allotment news, September 2024</h1>
  <p>Thank you to everyone who came to the <b>harvest lunch</b>.</p>
  <p>The water will be turned off on 31 October.</p>
</body>
</html>
"""

ISSUE_OCTOBER_HTML = """<!doctype html>
<html lang="en">
<body>
  <h1>Allotment news, October 2024</h1>
  <p>The <b>autumn seed swap</b> is on <a href="https://allotments.example/swap">Saturday 12 October</a>, 10 to 12.</p>
  <p>Bring labelled envelopes &amp; a pen.</p>

  <h2>Plot inspections</h2>
  <p>Plots <i>14</i> to <i>22</i> are inspected on the 19th:
     paths clear, water butts covered.</p>
  <p>Questions? Write to <a href="mailto:committee@allotments.example">the committee</a>.</p>
</body>
</html>
"""

NEWSLETTER_README = """# Allotment newsletter

Each issue is written in HTML (issues/YYYY-MM.html). Before sending, make
the plain-text copy that goes in the same email:

    sh totext.sh issues/2024-10.html > issues/2024-10.txt
"""

SED_FILES = {"totext.sh": TOTEXT_SH, "issues/2024-09.html": ISSUE_SEPTEMBER_HTML,
             "issues/2024-10.html": ISSUE_OCTOBER_HTML, "README.md": NEWSLETTER_README}

# The script run as the README runs it, on both issues and on a page of its
# own with many tags on a line and an entity for < between two of them:
# each line of text comes out whole, without a tag, with its entities
# turned back (spaces within a line and blank lines aside). The issues are
# as they were.
SED_CHECK = unchanged(SED_FILES, "issues/2024-09.html", "issues/2024-10.html") + r""" && python3 - <<'EOF'
import os, subprocess, tempfile

def text(path):
    r = subprocess.run(["sh", "totext.sh", path], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, (path, r.stdout, r.stderr)
    return [" ".join(line.split()) for line in r.stdout.splitlines() if line.strip()]

got = text("issues/2024-10.html")
assert got == [
    "Allotment news, October 2024",
    "The autumn seed swap is on Saturday 12 October, 10 to 12.",
    "Bring labelled envelopes & a pen.",
    "Plot inspections",
    "Plots 14 to 22 are inspected on the 19th:",
    "paths clear, water butts covered.",
    "Questions? Write to the committee.",
], got
got = text("issues/2024-09.html")
assert got == ["Allotment news, September 2024", "Thank you to everyone who came to the harvest lunch.",
               "The water will be turned off on 31 October."], got
with tempfile.TemporaryDirectory() as d:
    with open(f"{d}/extra.html", "w") as f:
        f.write('<ul><li><a href="/a">one</a></li><li><em>two</em> &amp; <strong>three</strong></li></ul>\n'
                "<p>Sow <b>5</b> &lt; 7 seeds, <i>not</i> more.</p><p>Water&nbsp;daily.</p>\n"
                '<table><tr><td class="n">1</td><td>kale</td></tr></table>\n')
    got = text(f"{d}/extra.html")
    assert got == ["onetwo & three", "Sow 5 < 7 seeds, not more.Water daily.", "1kale"], got
EOF"""

SED_SOLUTION = r"""sed -i 's/<\.\*>/<[^>]*>/' totext.sh"""

# --- an index missing from an SQLite schema --------------------------------------------

SHOP_SCHEMA_SQL = """-- The shop's tables. shop.connect() runs this file every time it opens the
-- database, so every statement must be safe to run again.
CREATE TABLE IF NOT EXISTS customers (
  email TEXT PRIMARY KEY,
  name TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS orders (
  id INTEGER PRIMARY KEY,
  customer_email TEXT NOT NULL REFERENCES customers(email),
  placed_at TEXT NOT NULL,  -- 2024-05-01T14:03:00
  total_cents INTEGER NOT NULL
);

-- The daily sales report reads one day at a time.
CREATE INDEX IF NOT EXISTS orders_by_time ON orders(placed_at);
"""

SHOP_PY = '''"""The shop's database (SQLite): customers and their orders."""
import sqlite3
from pathlib import Path

SCHEMA = Path(__file__).resolve().with_name("schema.sql")


def connect(path="shop.db"):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.read_text())
    return db


def order_history(db, email):
    """A customer's orders, newest first, for their account page."""
    return db.execute(
        "SELECT id, placed_at, total_cents FROM orders WHERE customer_email = ? ORDER BY placed_at DESC",
        (email,),
    ).fetchall()


def sales_on(db, day):
    """The orders of one day (YYYY-MM-DD), for the daily sales report."""
    return db.execute(
        "SELECT id, customer_email, total_cents FROM orders WHERE placed_at BETWEEN ? AND ? ORDER BY placed_at",
        (day + "T00:00:00", day + "T23:59:59"),
    ).fetchall()
'''

SHOP_ACCOUNT_PY = '''"""Prints a customer's orders: python3 account.py EMAIL"""
import sys

import shop

db = shop.connect()
for order_id, placed_at, total_cents in shop.order_history(db, sys.argv[1]):
    print(f"#{order_id}  {placed_at[:10]}  {total_cents / 100:8.2f} EUR")
'''

SHOP_REPORT_PY = '''"""Prints one day's sales: python3 report.py YYYY-MM-DD"""
import sys

import shop

db = shop.connect()
orders = shop.sales_on(db, sys.argv[1])
print(f"{len(orders)} orders, {sum(total for _, _, total in orders) / 100:.2f} EUR")
'''

INDEX_FILES = {"schema.sql": SHOP_SCHEMA_SQL, "shop.py": SHOP_PY, "account.py": SHOP_ACCOUNT_PY,
               "report.py": SHOP_REPORT_PY, ".gitignore": "shop.db\n__pycache__/\n"}

# SQLite's own planner, on a database made with the old schema and then
# opened by the shop's connect() (twice: the live database already exists
# and is opened on every start), and on one that connect() makes: each
# statement that order_history runs searches orders by an index on the
# customer rather than scanning the table, and gives each customer's
# orders, several of them, newest first. The daily report still searches by
# time. The scripts that use the module are as they were.
INDEX_CHECK = unchanged(INDEX_FILES, "account.py", "report.py") + r""" && python3 - <<'EOF'
import sqlite3, tempfile

import shop

OLD_SCHEMA = """ + repr(SHOP_SCHEMA_SQL) + r"""

def plan(db, statement):
    return [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement)]

def traced(db, call):
    statements = []
    db.set_trace_callback(statements.append)
    try:
        result = call()
    finally:
        db.set_trace_callback(None)
    statements = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert statements, "no query ran"
    return result, statements

people = ["ada@example.com", "ben@example.com", "cleo@example.com"]
rows = [(people[i % 3], f"2024-05-{1 + i % 28:02d}T{(i * 7) % 24:02d}:{i % 60:02d}:00", 100 + i) for i in range(300)]

def fill(db):
    db.executemany("INSERT INTO customers VALUES (?, ?)", [(p, p.split("@")[0]) for p in people])
    db.executemany("INSERT INTO orders (customer_email, placed_at, total_cents) VALUES (?, ?, ?)", rows)
    db.commit()

def try_queries(db, which):
    for person in people:
        got, statements = traced(db, lambda: shop.order_history(db, person))
        want = sorted(((i + 1, t, c) for i, (p, t, c) in enumerate(rows) if p == person), key=lambda r: r[1], reverse=True)
        assert [tuple(r) for r in got] == want, (which, person, got[:3], want[:3])
        for s in statements:
            steps = plan(db, s)
            assert not any(step.startswith("SCAN") for step in steps), (which, "order_history scans", s, steps)
            assert any(step.startswith("SEARCH orders USING") and "customer_email=" in step for step in steps), \
                (which, "order_history does not search orders by customer", s, steps)
    got, statements = traced(db, lambda: shop.sales_on(db, "2024-05-03"))
    assert sorted(r[0] for r in got) == [i + 1 for i, (p, t, c) in enumerate(rows) if t.startswith("2024-05-03")], got
    for s in statements:
        steps = plan(db, s)
        assert any(step.startswith("SEARCH orders USING") and "placed_at>" in step for step in steps), \
            (which, "the daily report no longer searches by time", s, steps)

with tempfile.TemporaryDirectory() as d:
    old = sqlite3.connect(f"{d}/live.db")
    old.executescript(OLD_SCHEMA)
    fill(old)
    old.close()
    shop.connect(f"{d}/live.db").close()
    try_queries(shop.connect(f"{d}/live.db"), "the live database")
    new = shop.connect(f"{d}/new.db")
    fill(new)
    new.close()
    try_queries(shop.connect(f"{d}/new.db"), "a new database")
EOF"""

INDEX_SOLUTION = r"""cat >> schema.sql <<'EOF'

-- A customer's account page lists their orders.
CREATE INDEX IF NOT EXISTS orders_by_customer ON orders(customer_email, placed_at);
EOF"""

# --- a media query the wrong way round ---------------------------------------------------

COOK_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Slow Cooker Club</title>
  <link rel="stylesheet" href="css/base.css">
  <link rel="stylesheet" href="css/layout.css">
</head>
<body>
  <header class="masthead"><h1>Slow Cooker Club</h1></header>
  <div class="layout">
    <article class="recipe">
      <h2>Lentil and squash stew</h2>
      <p>Soften an onion, add a diced squash, 250 g of red lentils and a litre of stock. Cook on low for six hours.</p>
    </article>
    <aside class="sidebar">
      <h3>This week</h3>
      <ul><li>Bean chilli</li><li>Pulled jackfruit</li><li>Rice pudding</li></ul>
    </aside>
  </div>
</body>
</html>
"""

COOK_BASE_CSS = """body {
  font-family: Georgia, serif;
  line-height: 1.5;
  margin: 0;
  padding: 1rem;
}

.masthead h1 {
  color: #8a3b12;
}

@media (prefers-color-scheme: dark) {
  body {
    background: #1e1b18;
    color: #eee;
  }
}
"""

COOK_LAYOUT_CSS = """/* The page: the recipe, with the sidebar beside it. */
.layout {
  display: flex;
  flex-direction: row;
  gap: 2rem;
  max-width: 60rem;
  margin: 0 auto;
}

.recipe {
  flex: 1;
}

.sidebar {
  flex: 0 0 16rem;
}

/* Phones and small tablets: the sidebar goes under the recipe. */
@media (min-width: 720px) {
  .layout {
    flex-direction: column;
  }

  .sidebar {
    flex-basis: auto;
  }
}
"""

CSS_FILES = {"index.html": COOK_INDEX_HTML, "css/base.css": COOK_BASE_CSS, "css/layout.css": COOK_LAYOUT_CSS,
             "README.md": "# Slow Cooker Club\n\nThe club's recipe page: open index.html.\n"}

# The page's style sheets (its <link>s, <style>s and style attributes) read
# by CSS's rules, for as much of CSS as such a page uses: comments, media
# queries (media types, not/only, and, commas, min-/max-width and the range
# form, in px, em or rem; a length without its unit is no length, and a
# feature this reader does not know is false), @supports, selector lists,
# descendant and child combinators, specificity, !important and the flex
# and flex-flow shorthands. On a phone or a small tablet (320 to 600 px
# wide) the recipe and the sidebar are stacked, the sidebar below (a
# column, a block, or a row that wraps a full-width sidebar); on a laptop
# or a desktop (1024 px and wider) the three boxes get exactly the layout
# that the style sheets gave them outside their media query.
CSS_CHECK = unchanged(CSS_FILES, "README.md") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.elements, self.sheets = [], [], []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        el = {"tag": tag, "id": a.get("id"), "classes": (a.get("class") or "").split(),
              "parents": list(self.stack), "style": a.get("style") or ""}
        if tag == "link" and "stylesheet" in (a.get("rel") or "").lower().split():
            self.sheets.append(("file", a.get("href"), a.get("media") or "all"))
        if tag == "style":
            self.in_style = True
            self.sheets.append(("text", "", a.get("media") or "all"))
        if tag not in ("meta", "link", "br", "img", "input", "hr"):
            self.stack.append(el)
        self.elements.append(el)

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        if self.in_style:
            kind, text, media = self.sheets[-1]
            self.sheets[-1] = (kind, text + data, media)

def length(value):
    m = re.fullmatch(r"\s*([-+]?[0-9]*\.?[0-9]+)(px|em|rem)?\s*", value)
    if not m or (m.group(2) is None and float(m.group(1)) != 0):
        return None
    return float(m.group(1)) * (16 if m.group(2) in ("em", "rem") else 1)

def feature(text, width):
    text = text.strip()
    m = re.fullmatch(r"(min-|max-)?width\s*:\s*(.+)", text)
    if m:
        n = length(m.group(2))
        if n is None:
            return False
        return width >= n if m.group(1) == "min-" else width <= n if m.group(1) == "max-" else width == n
    ops = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
           ">=": lambda a, b: a >= b, "=": lambda a, b: a == b}
    parts = re.split(r"\s*(<=|>=|<|>|=)\s*", text)
    if len(parts) in (3, 5) and "width" in parts[::2]:
        values = [width if p == "width" else length(p) for p in parts[::2]]
        if None in values:
            return False
        return all(ops[parts[i]](values[i // 2], values[i // 2 + 1]) for i in range(1, len(parts), 2))
    return False

def media(query, width):
    for one in query.split(","):
        words = one.strip().lower()
        negate = words.startswith("not ")
        words = re.sub(r"^(not|only)\s+", "", words)
        ok = True
        for part in re.split(r"\s+and\s+", words):
            part = part.strip()
            if part.startswith("(") and part.endswith(")"):
                ok = ok and feature(part[1:-1], width)
            elif part not in ("", "all", "screen"):
                ok = False
        if ok != negate:
            return True
    return False

def blocks(text):
    # (prelude, body) pairs at the top level of a style sheet.
    out, depth, start, prelude = [], 0, 0, None
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                prelude, start = text[start:i].strip(), i + 1
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                out.append((prelude, text[start:i]))
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return out

def rules(text, width, conditions_ok=True):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for prelude, body in blocks(text):
        if prelude.lower().startswith("@media"):
            out += rules(body, width, conditions_ok and media(prelude[6:], width))
        elif prelude.lower().startswith("@supports"):
            out += rules(body, width, conditions_ok)
        elif prelude.startswith("@"):
            continue
        elif conditions_ok:
            out.append((prelude, body))
    return out

def compound_matches(compound, el):
    m = re.fullmatch(r"(\*|[a-zA-Z][a-zA-Z0-9-]*)?((?:[.#][a-zA-Z_-][a-zA-Z0-9_-]*)*)", compound)
    if not m:
        return False
    if m.group(1) not in (None, "*") and m.group(1).lower() != el["tag"]:
        return False
    for kind, name in re.findall(r"([.#])([a-zA-Z0-9_-]+)", m.group(2)):
        if kind == "." and name not in el["classes"] or kind == "#" and name != el["id"]:
            return False
    return True

def matches(selector, el):
    if any(c in selector for c in "+~[:"):
        return False
    compounds, combinators, pending = [], [], None
    for token in re.sub(r"\s*>\s*", " > ", selector.strip()).split():
        if token == ">":
            pending = ">"
            continue
        if compounds:
            combinators.append(pending or " ")
        compounds.append(token)
        pending = None
    chain = [el] + list(reversed(el["parents"]))

    def at(k, pos):
        # compounds[k] is chain[pos], and what is left of it matches further up.
        if not compound_matches(compounds[k], chain[pos]):
            return False
        if k == 0:
            return True
        if combinators[k - 1] == ">":
            return pos + 1 < len(chain) and at(k - 1, pos + 1)
        return any(at(k - 1, p) for p in range(pos + 1, len(chain)))

    return bool(compounds) and at(len(compounds) - 1, 0)

def specificity(selector):
    return (selector.count("#"), selector.count("."), len(re.findall(r"(?:^|[\s>])[a-zA-Z]", selector)))

def longhands(prop, value):
    words = value.split()
    if prop == "flex":
        named = {"none": ["0", "0", "auto"], "auto": ["1", "1", "auto"], "initial": ["0", "1", "auto"]}
        if value in named:
            g, s, b = named[value]
        else:
            numbers = [w for w in words if re.fullmatch(r"[0-9]*\.?[0-9]+", w)]
            basis = [w for w in words if w not in numbers] or (["0%"] if numbers else ["auto"])
            g = numbers[0] if numbers else "1"
            s = numbers[1] if len(numbers) > 1 else "1"
            b = basis[0]
        return {"flex-grow": g, "flex-shrink": s, "flex-basis": "0%" if b == "0" else b}
    if prop == "flex-flow":
        out = {}
        for w in words:
            out["flex-direction" if w in ("row", "row-reverse", "column", "column-reverse") else "flex-wrap"] = w
        return out
    return {prop: value}

def computed(html, sheets, width):
    page = Page()
    page.feed(html)
    declared = []
    order = 0
    for kind, ref, query in page.sheets:
        text = sheets[ref] if kind == "file" else ref
        if not media(query, width):
            continue
        for prelude, body in rules(text, width):
            for selector in prelude.split(","):
                for decl in body.split(";"):
                    if ":" in decl:
                        prop, value = decl.split(":", 1)
                        important = "!important" in value
                        value = " ".join(value.replace("!important", "").split()).lower()
                        order += 1
                        declared.append((selector, prop.strip().lower(), value, important, order))
    out = {}
    for name in ("layout", "recipe", "sidebar"):
        el = next(e for e in page.elements if name in e["classes"])
        chosen = {}
        for selector, prop, value, important, n in declared:
            if matches(selector, el):
                for p, v in longhands(prop, value).items():
                    key = (important, specificity(selector), n)
                    if p not in chosen or key >= chosen[p][0]:
                        chosen[p] = (key, v)
        for decl in el["style"].split(";"):
            if ":" in decl:
                prop, value = decl.split(":", 1)
                for p, v in longhands(prop.strip().lower(), " ".join(value.split()).lower()).items():
                    chosen[p] = ((True, (9, 9, 9), 10 ** 9), v)
        out[name] = {p: v for p, (key, v) in chosen.items()}
    return out

INITIAL = {"display": "block", "flex-direction": "row", "flex-wrap": "nowrap", "flex-grow": "0",
           "flex-shrink": "1", "flex-basis": "auto", "width": "auto", "order": "0"}

def look(html, sheets, width):
    boxes = computed(html, sheets, width)
    return {name: {p: boxes[name].get(p, initial) for p, initial in INITIAL.items()} for name in boxes}

def sheets_of(html, read):
    page = Page()
    page.feed(html)
    return {ref: read(ref) for kind, ref, _ in page.sheets if kind == "file"}

before_html = """ + repr(COOK_INDEX_HTML) + r"""
# The desktop look: the style sheets without their media query.
before = {"css/base.css": """ + repr(COOK_BASE_CSS) + r""",
          "css/layout.css": """ + repr(COOK_LAYOUT_CSS.split("/* Phones")[0]) + r"""}
html = open("index.html").read()
after = sheets_of(html, lambda ref: open(ref).read())
for width in (1024, 1280, 1920):
    assert look(html, after, width) == look(before_html, before, width), (width, look(html, after, width))
for width in (320, 375, 414, 600):
    boxes = look(html, after, width)
    layout, sidebar = boxes["layout"], boxes["sidebar"]
    flex = layout["display"] in ("flex", "inline-flex")
    stacked = (not flex and layout["display"] in ("block", "flow-root")
               or flex and layout["flex-direction"] == "column"
               or flex and layout["flex-direction"] == "row" and layout["flex-wrap"] == "wrap"
               and "100%" in (sidebar["flex-basis"], sidebar["width"]))
    assert stacked, (width, boxes)
    assert boxes["recipe"]["order"] == sidebar["order"], (width, boxes)
EOF"""

CSS_SOLUTION = "sed -i 's/@media (min-width: 720px)/@media (max-width: 719px)/' css/layout.css"

# --- links to other sites that open in the same tab --------------------------------------

SWAP_NAV = """  <nav>
    <a href="index.html">Home</a>
    <a href="events.html">Events</a>
    <a href="about.html">About us</a>
  </nav>
"""

SWAP_INDEX_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Seed swap</title><link rel="stylesheet" href="style.css"></head>
<body>
""" + SWAP_NAV + """  <h1>Seed swap</h1>
  <p>Bring seeds, take seeds. We meet in the library hall,
     <a href="https://www.openstreetmap.org/?mlat=52.5163&amp;mlon=13.3777">here on the map</a>.</p>
  <p>See the <a href="events.html">next swaps</a> or read
     <a href="https://www.seedsavers.example.org/guide">how to save your own seeds</a>.</p>
</body>
</html>
"""

SWAP_EVENTS_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Events - Seed swap</title><link rel="stylesheet" href="style.css"></head>
<body>
""" + SWAP_NAV + """  <h1>Next swaps</h1>
  <ul>
    <li>5 April, spring swap (<a href="http://library.example.net/events/2025-04-05">the library's page</a>)</li>
    <li>6 September, autumn swap</li>
  </ul>
  <p><a href="about.html#contact">Ask us</a> if you want to help.</p>
</body>
</html>
"""

SWAP_ABOUT_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>About - Seed swap</title><link rel="stylesheet" href="style.css"></head>
<body>
""" + SWAP_NAV + """  <h1>About us</h1>
  <p>Neighbours who grow vegetables, since 2019. <a href="#contact">Contact</a></p>
  <h2 id="contact">Contact</h2>
  <p>Mail <a href="mailto:hello@seedswap.example">hello@seedswap.example</a>
     or follow us on <a href="https://social.example/@seedswap">Mastodon</a>.</p>
</body>
</html>
"""

SWAP_STYLE_CSS = """body { font-family: sans-serif; max-width: 40rem; margin: 2rem auto; }
nav a { margin-right: 1rem; }
"""

LINK_FILES = {"index.html": SWAP_INDEX_HTML, "events.html": SWAP_EVENTS_HTML, "about.html": SWAP_ABOUT_HTML,
              "style.css": SWAP_STYLE_CSS}

# Each page read by an HTML parser, with what a browser does with a link's
# target (its own, else the page's <base target>): every link to another
# site (http, https or //) opens in a new tab (_blank), every link to a page
# of ours or an anchor where it is (a mail link either way). A rel is free;
# apart from the links' target and rel and a <base target>, every page is
# as it was, tag by tag and word by word.
LINK_CHECK = unchanged(LINK_FILES, "style.css") + r""" && python3 - <<'EOF'
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tokens, self.links, self.base = [], [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a":
            self.links.append(a)
        if tag == "base" and "target" in a and self.base is None:
            self.base = a["target"]
        if tag == "base" and set(a) == {"target"}:
            return
        kept = sorted((k, v) for k, v in attrs if not (tag == "a" and k in ("target", "rel")))
        self.tokens.append(("start", tag, tuple(kept)))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag != "base":
            self.tokens.append(("end", tag))

    def handle_data(self, data):
        if data.split():
            self.tokens.append(("text", " ".join(data.split())))

before = {"index.html": """ + repr(SWAP_INDEX_HTML) + r""", "events.html": """ + repr(SWAP_EVENTS_HTML) + r""",
          "about.html": """ + repr(SWAP_ABOUT_HTML) + r"""}
for name, old in before.items():
    page, was = Page(open(name).read()), Page(old)
    assert page.tokens == was.tokens, (name, [t for t in page.tokens if t not in was.tokens][:5])
    for link in page.links:
        href = link.get("href") or ""
        target = link.get("target", page.base)
        target = (target or "").strip().lower()
        if href.lower().startswith(("http://", "https://", "//")):
            assert target == "_blank", (name, href, target)
        elif not href.lower().startswith(("mailto:", "tel:")):
            assert target in ("", "_self"), (name, href, target)
EOF"""

LINK_SOLUTION = r"""sed -i -E 's/<a href="(https?:[^"]*)"/<a href="\1" target="_blank" rel="noopener"/' index.html events.html about.html"""

# --- a question answered from git's history ----------------------------------------------

SHIPPING_PY = '''"""Shipping costs for the shop, in euros."""

FLAT_FEE = 3.90
EXPRESS_FEE = 7.50
FREE_FROM = 50


def shipping_cost(subtotal, express=False):
    if express:
        return EXPRESS_FEE
    return 0 if subtotal >= FREE_FROM else FLAT_FEE
'''

SHIPPING_CHECKOUT_PY = '''"""Prints what an order costs: python3 checkout.py SUBTOTAL [express]"""
import sys

from shipping import shipping_cost

subtotal = float(sys.argv[1])
fee = shipping_cost(subtotal, express=sys.argv[2:3] == ["express"])
print(f"goods {subtotal:.2f} + shipping {fee:.2f} = {subtotal + fee:.2f} EUR")
'''

SHIPPING_README = """# shop

The shop's checkout.

    python3 checkout.py 42.50
"""

# After the first commit: four commits, each by its author on its day. The
# fee went up in the second; the file was changed last by someone else, in
# a line next to it.
HISTORY_SETUP = r"""set -e
c() {
  GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" git -c user.name="$1" -c user.email="$2" commit -qam "$4"
}
sed -i 's/^EXPRESS_FEE = 7.50$/EXPRESS_FEE = 9.90/' shipping.py
c 'Ana Kovacs' ana@example.com '2024-02-01T10:12:00+01:00' 'Express shipping costs 9.90 now'
sed -i 's/^FLAT_FEE = 3.90$/FLAT_FEE = 4.90/' shipping.py
c 'Priya Nair' priya@example.com '2024-05-14T16:40:00+02:00' 'Raise the standard fee: the carrier put its prices up'
sed -i 's/^FREE_FROM = 50$/# Orders from this amount ship free (express still costs).\nFREE_FROM = 60/' shipping.py
c 'Tom Becker' tom@example.com '2024-08-02T09:05:00+02:00' 'Free shipping from 60 euros'
printf '\nShipping costs are in shipping.py.\n' >> README.md
c 'Ana Kovacs' ana@example.com '2024-09-10T11:30:00+02:00' 'Say where the shipping costs are'
"""

# Priya Nair, on 14 May 2024 (in any usual way of writing that date); an
# answer that names all three authors is a list, not an answer. Nothing
# changed, and the history is as it was.
HISTORY_QUESTION_CHECK = r"""test -z "$(git status --porcelain)" && test "$(git rev-list --count HEAD)" = 5 \
&& test "$(git log -1 --format=%s)" = 'Say where the shipping costs are' && python3 - <<'EOF'
import os, re

answer = open(os.environ["AGENT_ANSWER"]).read()
assert re.search(r"\bpriya\b", answer, re.I), answer
when = (r"2024-05-14|\b14(th)?\.?\s+(of\s+)?May\b|\bMay\s+14(th)?\b|\b14[./-]0?5[./-](20)?24\b"
        r"|\b0?5/14/(20)?24\b|\b2024/0?5/14\b")
assert re.search(when, answer, re.I), answer
named = [n for n in ("ana", "tom", "priya") if re.search(rf"\b{n}\b", answer, re.I)]
assert len(named) < 3, named
EOF"""

# --- callbacks made in a loop that share one var ------------------------------------------

REMINDERS_JS = """// Prints each reminder when it is due: node reminders.js [FILE]
const fs = require("fs");

const file = process.argv[2] || "reminders.json";
const reminders = JSON.parse(fs.readFileSync(file, "utf8"));

for (var i = 0; i < reminders.length; i++) {
  setTimeout(() => {
    console.log(`[${reminders[i].label}] ${reminders[i].text}`);
  }, reminders[i].inSeconds * 1000);
}
console.log(`${reminders.length} reminders set`);
"""

REMINDERS_JSON = """[
  {"label": "tea", "text": "The tea is ready.", "inSeconds": 3},
  {"label": "stretch", "text": "Stand up and stretch.", "inSeconds": 1},
  {"label": "call", "text": "Call the dentist back.", "inSeconds": 2}
]
"""

REMINDERS_README = """# reminders

Keep today's reminders in reminders.json (how many seconds from now, a
label and a text), then leave this running in a terminal:

    node reminders.js
"""

LOOP_FILES = {"reminders.js": REMINDERS_JS, "reminders.json": REMINDERS_JSON, "README.md": REMINDERS_README}

# node runs the script on its reminders and on a list of its own in a
# scratch folder (in another order than they are due): it says how many it
# set, then prints each reminder once, in the order they are due, not
# before it is due, and ends without an error. The reminders are as they were.
LOOP_CHECK = unchanged(LOOP_FILES, "reminders.json") + r""" && python3 - <<'EOF'
import json, os, subprocess, tempfile, time

def run(*args):
    start = time.monotonic()
    r = subprocess.run(["node", "reminders.js", *args], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0 and not r.stderr, (args, r.stdout, r.stderr)
    return r.stdout, time.monotonic() - start

out, took = run()
assert out == ("3 reminders set\n[stretch] Stand up and stretch.\n[call] Call the dentist back.\n"
               "[tea] The tea is ready.\n"), out
assert took >= 2.9, took
with tempfile.TemporaryDirectory() as d:
    mine = [{"label": "b", "text": "second", "inSeconds": 0.3}, {"label": "a", "text": "first", "inSeconds": 0.1},
            {"label": "d", "text": "last", "inSeconds": 0.7}, {"label": "c", "text": "third", "inSeconds": 0.5}]
    with open(f"{d}/mine.json", "w") as f:
        json.dump(mine, f)
    out, took = run(f"{d}/mine.json")
    assert out == "4 reminders set\n[a] first\n[b] second\n[c] third\n[d] last\n", out
    assert took >= 0.65, took
EOF"""

LOOP_SOLUTION = "sed -i 's/for (var i = 0;/for (let i = 0;/' reminders.js"

# --- days counted in the machine's time zone ------------------------------------------------

SIGNUPS_PY = '''"""Counts sign-ups per day: python3 signups.py [LOG]

Each line of the log is a Unix time and an email address."""
import sys
from collections import Counter
from datetime import datetime


def day_of(timestamp):
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d")


def per_day(lines):
    days = Counter()
    for line in lines:
        if line.strip():
            timestamp, _email = line.split()
            days[day_of(int(timestamp))] += 1
    return days


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "signups.log") as f:
        counts = per_day(f)
    for day, n in sorted(counts.items()):
        print(f"{day}  {n}")
'''

SIGNUPS_LOG = """1709252400 ada@example.com
1709283900 ben@example.com
1709336400 cleo@example.com
1709345400 dev@example.com
1709386200 eli@example.com
1709416200 fay@example.com
1709423700 gus@example.com
1709424300 hal@example.com
1709441100 ida@example.com
1709488800 jo@example.com
"""

SIGNUPS_README = """# signups

    python3 signups.py signups.log

prints how many people signed up each day. It runs on our server in New
York and on our laptops. Like all our reports, it counts UTC days.
"""

TZ_FILES = {"signups.py": SIGNUPS_PY, "signups.log": SIGNUPS_LOG, "README.md": SIGNUPS_README,
            ".gitignore": "__pycache__/\n"}

# The script run as on machines in five time zones (POSIX TZ values, so no
# time zone database is needed): New York's, Berlin's, Tokyo's, Honolulu's
# and UTC, on its log and on one of its own with sign-ups a second either
# side of midnight UTC: every run prints the UTC days. The log is as it was.
TZ_CHECK = unchanged(TZ_FILES, "signups.log") + r""" && python3 - <<'EOF'
import os, subprocess, sys, tempfile

def counts(path, tz):
    env = {**os.environ, "TZ": tz}
    r = subprocess.run([sys.executable, "signups.py", path], capture_output=True, text=True, env=env)
    assert r.returncode == 0, (tz, r.stdout, r.stderr)
    return [line.split() for line in r.stdout.splitlines() if line.strip()]

zones = ["EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "JST-9", "HST10", "UTC0"]
for tz in zones:
    got = counts("signups.log", tz)
    assert got == [["2024-03-01", "3"], ["2024-03-02", "4"], ["2024-03-03", "3"]], (tz, got)
with tempfile.TemporaryDirectory() as d:
    with open(f"{d}/edge.log", "w") as f:
        # 2024-06-30 23:59:59, 2024-07-01 00:00:00 and 00:00:01, 2024-07-01 23:59:59 UTC
        f.write("1719791999 a@example.com\n1719792000 b@example.com\n1719792001 c@example.com\n"
                "1719878399 d@example.com\n")
    for tz in zones:
        got = counts(f"{d}/edge.log", tz)
        assert got == [["2024-06-30", "1"], ["2024-07-01", "3"]], (tz, got)
EOF"""

TZ_SOLUTION = r"""python3 - <<'EOF'
text = open("signups.py").read()
text = text.replace("from datetime import datetime\n", "from datetime import datetime, timezone\n")
text = text.replace("datetime.fromtimestamp(timestamp)", "datetime.fromtimestamp(timestamp, timezone.utc)")
open("signups.py", "w").write(text)
EOF"""

# --- a console script naming a function that is gone -----------------------------------------

TIDYUP_PYPROJECT = """[project]
name = "tidyup"
version = "0.3.0"
description = "Strips the spaces at the ends of lines."
requires-python = ">=3.8"

[project.scripts]
tidyup = "tidyup.cli:main"

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""

TIDYUP_CLI_PY = '''"""tidyup FILE...: strips the spaces at the ends of lines and ends each file with one newline."""
import argparse
import sys

from tidyup.core import tidy


def run(argv=None):
    ap = argparse.ArgumentParser(prog="tidyup", description=__doc__)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    changed = 0
    for name in args.files:
        try:
            with open(name) as f:
                text = f.read()
        except OSError as e:
            print(f"tidyup: {e}", file=sys.stderr)
            return 1
        new = tidy(text)
        if new != text:
            with open(name, "w") as f:
                f.write(new)
            changed += 1
    print(f"tidied {changed} of {len(args.files)} files")
    return 0
'''

TIDYUP_CORE_PY = '''def tidy(text):
    """text without spaces at the ends of its lines, ending with one newline."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\\n".join(lines) + "\\n" if lines else ""
'''

TIDYUP_MAIN_PY = '''import sys

from tidyup.cli import run

sys.exit(run())
'''

TIDYUP_README = """# tidyup

Strips the spaces at the ends of lines.

    pip install -e .
    tidyup notes.txt todo.md
"""

ENTRY_FILES = {"pyproject.toml": TIDYUP_PYPROJECT, "tidyup/__init__.py": '"""Tidies text files."""\n',
               "tidyup/cli.py": TIDYUP_CLI_PY, "tidyup/core.py": TIDYUP_CORE_PY,
               "tidyup/__main__.py": TIDYUP_MAIN_PY, "README.md": TIDYUP_README}

# pyproject.toml read by tomllib, and its console script run as the one pip
# writes runs it (the module imported, the object looked up, called without
# arguments, its value the exit status), in a scratch folder: it tidies the
# files it is given, says so and exits 0, and exits non-zero on a missing
# file; `python3 -m tidyup` does the same. The rest of pyproject.toml and
# the tidying itself are as they were.
ENTRY_CHECK = unchanged(ENTRY_FILES, "tidyup/core.py") + r""" && python3 - <<'EOF'
import os, re, subprocess, sys, tempfile, tomllib

before = tomllib.loads(""" + repr(TIDYUP_PYPROJECT) + r""")
after = tomllib.load(open("pyproject.toml", "rb"))
scripts = after["project"].pop("scripts", None)
before["project"].pop("scripts")
assert after == before, after
assert isinstance(scripts, dict) and list(scripts) == ["tidyup"], scripts
m = re.fullmatch(r"\s*([\w.]+)\s*:\s*([\w.]+)\s*(\[[^\]]*\])?\s*", scripts["tidyup"])
assert m, ("not an entry point", scripts["tidyup"])
module, attr = m.group(1), m.group(2)
LAUNCHER = f'''import importlib, sys
obj = importlib.import_module({module!r})
for part in {attr!r}.split("."):
    obj = getattr(obj, part)
sys.argv[0] = "tidyup"
sys.exit(obj())
'''
here = os.getcwd()
env = {**os.environ, "PYTHONPATH": here}
for command in ([sys.executable, "-c", LAUNCHER], [sys.executable, "-m", "tidyup"]):
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/a.txt", "w") as f:
            f.write("one  \ntwo\t\n\n\n")
        with open(f"{d}/b.txt", "w") as f:
            f.write("clean\n")
        r = subprocess.run(command + ["a.txt", "b.txt"], cwd=d, env=env, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == "tidied 1 of 2 files\n", (command[1], r.returncode, r.stdout, r.stderr)
        assert open(f"{d}/a.txt").read() == "one\ntwo\n" and open(f"{d}/b.txt").read() == "clean\n"
        r = subprocess.run(command + ["b.txt", "missing.txt"], cwd=d, env=env, capture_output=True, text=True)
        assert r.returncode != 0 and "missing.txt" in r.stderr, (command[1], r.returncode, r.stdout, r.stderr)
EOF"""

ENTRY_SOLUTION = """sed -i 's/^tidyup = "tidyup.cli:main"$/tidyup = "tidyup.cli:run"/' pyproject.toml"""

# --- an exception under an ignored folder ----------------------------------------------------

NOTES_GITIGNORE = """__pycache__/
*.pyc
.venv/

# Everything in data/ stays on each machine: the database, the uploads.
data/
# ...except the schema, which everyone needs.
!data/schema.sql
"""

NOTES_APP_PY = '''"""Keeps receipts: python3 app.py add TEXT | python3 app.py list"""
import sqlite3
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def connect():
    db = sqlite3.connect(DATA / "receipts.db")
    db.executescript((DATA / "schema.sql").read_text())
    return db


if __name__ == "__main__":
    db = connect()
    if sys.argv[1:2] == ["add"]:
        db.execute("INSERT INTO receipts (text) VALUES (?)", (" ".join(sys.argv[2:]),))
        db.commit()
    for (text,) in db.execute("SELECT text FROM receipts ORDER BY id"):
        print(text)
'''

NOTES_SCHEMA_SQL = """CREATE TABLE IF NOT EXISTS receipts (
  id INTEGER PRIMARY KEY,
  text TEXT NOT NULL,
  added TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""

NOTES_README = """# receipts

    python3 app.py add "Hardware store, 12.40"
    python3 app.py list

The database and the uploads live in data/ and are not committed.
"""

IGNORE_FILES = {".gitignore": NOTES_GITIGNORE, "app.py": NOTES_APP_PY, "README.md": NOTES_README,
                "data/schema.sql": NOTES_SCHEMA_SQL, "data/cache.json": '{"last_sync": "2024-10-02T08:00:00"}\n',
                "data/uploads/receipt-0012.txt": "Hardware store, 12.40\n"}

# git itself, on the ignore rules as they are (--no-index: whatever is
# tracked): the schema is in the index as it is on disk and is not ignored
# (forced in with `git add -f`, it is tracked while the rules still ignore
# it: their exception still does nothing); everything else in data/, there
# now or made later, stays ignored and out of the index, as do the Python
# caches and the virtualenv. The app and the README are as they were.
IGNORE_CHECK = unchanged(IGNORE_FILES, "app.py", "README.md", "data/schema.sql") + r""" && python3 - <<'EOF'
import subprocess

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)

assert git("ls-files", "--error-unmatch", "data/schema.sql").returncode == 0, "the schema is not in the index"
assert git("show", ":data/schema.sql").stdout == open("data/schema.sql").read()
tracked = git("ls-files", "-z").stdout.split("\0")
assert [f for f in tracked if f.startswith("data/")] == ["data/schema.sql"], tracked
assert git("check-ignore", "--no-index", "-q", "data/schema.sql").returncode == 1, "the schema is still ignored"
for path in ("data/cache.json", "data/uploads/receipt-0012.txt", "data/receipts.db", "data/uploads/new.pdf",
             "data/backup-2024.db", "data/exports/october.csv", "__pycache__/app.cpython-311.pyc", "x.pyc",
             ".venv/bin/python"):
    assert git("check-ignore", "--no-index", "-q", path).returncode == 0, ("not ignored", path)
untracked = git("status", "--porcelain", "--untracked-files=all").stdout
assert "??" not in untracked, untracked
EOF"""

IGNORE_SOLUTION = "sed -i 's|^data/$|data/*|' .gitignore && git add .gitignore data/schema.sql"

# --- a catch-all redirect that shadows the others ---------------------------------------------

NETLIFY_REDIRECTS = """# Redirects and rewrites, read by Netlify.

# The app is one page: it shows every address itself.
/*              /index.html                            200

# Old blog addresses, from before the blog moved to /posts.
/blog/*         /posts/:splat                          301
/rss.xml        /posts/feed.xml                        301

# The docs have their own site now.
/docs/*         https://docs.swapshop.example/:splat   302
"""

SWAPSHOP_INDEX_HTML = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Swap shop</title><script src="/app.js" defer></script></head>
<body><div id="app">Loading...</div></body>
</html>
"""

SWAPSHOP_APP_JS = """// Shows the page for the address: /, /swaps/ID, /posts/..., /account/...
const app = document.getElementById("app");
const path = location.pathname;
if (path === "/") app.textContent = "Swap shop: give what you don't need, take what you do.";
else if (path.startsWith("/swaps/")) app.textContent = `Swap ${path.split("/")[2]}`;
else if (path.startsWith("/posts/")) app.textContent = `Post: ${path.slice(7)}`;
else if (path.startsWith("/account/")) app.textContent = "Your account";
else app.textContent = "Nothing here.";
"""

SWAPSHOP_FEED_XML = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Swap shop posts</title><link>https://swapshop.example/posts/</link>
<description>News from the swap shop</description></channel></rss>
"""

SWAPSHOP_README = """# swap shop

A single-page app, deployed on Netlify from public/.
"""

REDIRECT_FILES = {"public/_redirects": NETLIFY_REDIRECTS, "public/index.html": SWAPSHOP_INDEX_HTML,
                  "public/app.js": SWAPSHOP_APP_JS, "public/posts/feed.xml": SWAPSHOP_FEED_XML,
                  "README.md": SWAPSHOP_README}

# Netlify's rules for _redirects, as far as this file uses them: comments
# and blank lines; FROM TO [STATUS[!]] (301 by default); a trailing * whose
# match is :splat and :name for one part of the path; a trailing slash is
# no difference; the first rule that matches wins; an address that is a
# file of the site is served as it is unless the rule is forced (!). The
# old blog, feed and docs addresses redirect as their rules say; the app's
# addresses are the app, and its files are themselves. The site's other
# files are as they were.
REDIRECT_CHECK = unchanged(REDIRECT_FILES, "public/index.html", "public/app.js", "public/posts/feed.xml") + r""" && python3 - <<'EOF'
import os, re

def rules(text):
    out = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        assert 2 <= len(fields) <= 3 and "=" not in line, ("a rule this check does not read", line)
        status = fields[2] if len(fields) == 3 else "301"
        assert re.fullmatch(r"[0-9]{3}!?", status), line
        out.append((fields[0], fields[1], int(status.rstrip("!")), status.endswith("!")))
    return out

def match(pattern, path):
    p, q = pattern.rstrip("/") or "/", path.rstrip("/") or "/"
    if p.endswith("/*"):
        base = p[:-2]
        if q == base or q.startswith(base + "/"):
            return {"splat": q[len(base) + 1:]}
        return None
    ps, qs = p.split("/"), q.split("/")
    if len(ps) != len(qs):
        return None
    found = {}
    for a, b in zip(ps, qs):
        if a.startswith(":"):
            found[a[1:]] = b
        elif a != b:
            return None
    return found

def static(path):
    # The file of the site an address shows, if any.
    for name in (path, path.rstrip("/") + "/index.html"):
        if os.path.isfile("public" + name):
            return name
    return None

def serve(path, table):
    # The status and the file shown (200) or the address sent to (3xx).
    for pattern, to, status, forced in table:
        found = match(pattern, path)
        if found is None:
            continue
        if static(path) and not forced:
            return (200, static(path))
        for name, value in found.items():
            to = to.replace(":" + name, value)
        return (status, static(to) if status == 200 else to)
    return (200, static(path)) if static(path) else (404, path)

table = rules(open("public/_redirects").read())
want = {
    "/blog/2023/spring-swap": (301, "/posts/2023/spring-swap"),
    "/blog/welcome": (301, "/posts/welcome"),
    "/rss.xml": (301, "/posts/feed.xml"),
    "/docs/getting-started": (302, "https://docs.swapshop.example/getting-started"),
    "/docs/faq/": (302, "https://docs.swapshop.example/faq"),
    "/swaps/42": (200, "/index.html"),
    "/posts/2023/spring-swap": (200, "/index.html"),
    "/account/settings": (200, "/index.html"),
    "/": (200, "/index.html"),
    "/app.js": (200, "/app.js"),
    "/posts/feed.xml": (200, "/posts/feed.xml"),
}
for path, result in want.items():
    assert serve(path, table) == result, (path, serve(path, table), result)
EOF"""

REDIRECT_SOLUTION = r"""python3 - <<'EOF'
text = open("public/_redirects").read()
rule = "# The app is one page: it shows every address itself.\n/*              /index.html                            200\n\n"
assert rule in text
open("public/_redirects", "w").write(text.replace(rule, "") + "\n" + rule.rstrip("\n") + "\n")
EOF"""

SIDE_QUESTS_TASKS = [
    {
        "name": "strip tags one at a time",
        "files": SED_FILES,
        "prompt": "The plain-text version of our newsletter comes out almost empty: most of the text of the "
                  "HTML issue just disappears.",
        "check": SED_CHECK,
        "solution": SED_SOLUTION,
    },
    {
        "name": "index orders by customer",
        "files": INDEX_FILES,
        "prompt": "Opening a customer's order history takes seconds now that the shop has a few million orders; "
                  "the daily sales report is still fast. Make order_history fast too. The live database "
                  "already exists, so the fix has to reach it.",
        "check": INDEX_CHECK,
        "solution": INDEX_SOLUTION,
    },
    {
        "name": "stack the sidebar on phones",
        "files": CSS_FILES,
        "prompt": "On my phone the recipe sits next to the sidebar and gets squeezed into a thin strip, but on "
                  "my laptop the sidebar is under the recipe. It's the wrong way round: under the recipe on "
                  "small screens, beside it on big ones.",
        "check": CSS_CHECK,
        "solution": CSS_SOLUTION,
    },
    {
        "name": "open other sites in a new tab",
        "files": LINK_FILES,
        "prompt": "When people click a link to another website on our pages, they leave our site. Make links "
                  "to other websites open in a new tab. Links between our own pages should stay as they are.",
        "check": LINK_CHECK,
        "solution": LINK_SOLUTION,
    },
    {
        "name": "answer from git history",
        "files": {"shipping.py": SHIPPING_PY, "checkout.py": SHIPPING_CHECKOUT_PY, "README.md": SHIPPING_README,
                  ".gitignore": "__pycache__/\n"},
        "setup": HISTORY_SETUP,
        "prompt": "Who raised our standard shipping fee to 4.90, and when? Just tell me, don't change anything.",
        "check": HISTORY_QUESTION_CHECK,
        "solution": 'echo "Priya Nair raised FLAT_FEE from 3.90 to 4.90 on 2024-05-14." > "$AGENT_ANSWER"',
    },
    {
        "name": "give each timer its own reminder",
        "files": LOOP_FILES,
        "prompt": "node reminders.js says \"3 reminders set\", then crashes when the first one is due: "
                  "TypeError: Cannot read properties of undefined (reading 'label'). Fix it.",
        "check": LOOP_CHECK,
        "solution": LOOP_SOLUTION,
    },
    {
        "name": "count days in utc",
        "files": TZ_FILES,
        "prompt": "The daily sign-up counts come out different on our server in New York and on my laptop in "
                  "Berlin, for the very same log. Our reports are supposed to use UTC days.",
        "check": TZ_CHECK,
        "solution": TZ_SOLUTION,
    },
    {
        "name": "point the console script at its function",
        "files": ENTRY_FILES,
        "prompt": "I installed our tool with pip install -e . and the tidyup command fails right away with "
                  "ImportError: cannot import name 'main' from 'tidyup.cli'. python -m tidyup works fine.",
        "check": ENTRY_CHECK,
        "solution": ENTRY_SOLUTION,
    },
    {
        "name": "unignore a needed file",
        "files": IGNORE_FILES,
        "prompt": "A colleague cloned our repo and the app crashes at start with FileNotFoundError for "
                  "data/schema.sql. It's here on my machine, and the ignore rules even make an exception for "
                  "it, but git doesn't see it. Get it into git (staged is enough, I'll commit), and keep "
                  "everything else in data/ out.",
        "check": IGNORE_CHECK,
        "solution": IGNORE_SOLUTION,
    },
    {
        "name": "let the redirects fire",
        "files": REDIRECT_FILES,
        "prompt": "None of our old addresses redirect any more: /blog/2023/spring-swap shows the app instead of "
                  "going to /posts/2023/spring-swap, and the old docs links don't go to the docs site either. "
                  "The site is on Netlify.",
        "check": REDIRECT_CHECK,
        "solution": REDIRECT_SOLUTION,
    },
]
