"""The last orders set of everyday tasks of scripts/realmodel (`--set last_orders`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break and second cup
sets (tasks.py, new_tasks.py, fresh_tasks.py, plain_tasks.py,
daily_tasks.py, chores_tasks.py, errands_tasks.py, odd_jobs_tasks.py,
side_quests_tasks.py, back_office_tasks.py, night_shift_tasks.py,
early_bird_tasks.py, tea_break_tasks.py, second_cup_tasks.py), unlike all
fourteen in what is asked, by someone who had read no run of any of them (no
transcript, no result, no table). It is as plain as the tea break and
second cup sets: the kind of request a junior developer finishes before
last orders are called, each a project of one to three short files (under
40 lines each), each done by changing or adding a few lines in one file, in
ten kinds of file: an item already on a Python shopping list (in any case)
not added again; a JavaScript word count that miscounts double spaces, line
breaks and empty files; a bash cleanup script made to list the old exports
and ask "[y/N]" before deleting them; a meta description added to an HTML
home page; the rows of a price table striped in CSS; an SQL report made to
show only cities with at least five customers; a git alias `st` for
`status -sb` added to a gitconfig file; a question answered from a
requirements.txt (which Django, exactly); a new page added to an XML
sitemap; and a License section added to the end of a Markdown README. The
keys are those of second_cup_tasks.py: the files, the prompt as a person
would type it (five of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before
it and passes after. Checks run the code (the shopping list in Python on a
copy, the word count in node, the cleanup script in bash with each answer
on its input, the report in SQLite from Python and through its own script,
the alias with git itself against `git status -sb`), parse the file (the
HTML with html.parser, the CSS with a small cascade of its own that knows
:nth-child, the sitemap with ElementTree, the README's new section line by
line) or read the answer (with git to see that nothing changed), rather
than look for one spelling, and use python3 (stdlib), node, bash, git and
coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: a case-sensitive
test, a substring test ("eggs" in "free-range eggs"), or doubles hidden
only when the list is printed; a split on single spaces, or trim and split
that still counts an empty file as one word, or \\w+ that cuts "well-known"
in two; Enter taken as yes, a question per file, or "yes" refused; the
description put in the body, as og:description alone, or on the about page;
every row made grey, the columns striped, or the header row's colour lost;
`> 5`, a LIMIT, or the filter put in report.py; `st = status`, the alias
set with `git config --global`, or other settings lost; Django 5.0 from a
comment or another package's version; a relative or http:// address, or a
second loc in an existing url; and the section at the wrong level, in the
middle, or with no link to LICENSE.
"""

import errands_tasks
from new_tasks import left_alone_and_answered, unchanged
from tea_break_tasks import replaced

# --- nothing twice on the shopping list (Python; no file named) ------------------------------

SHOPPING_PY = '''"""The shopping list: python3 shopping.py add ITEM, or python3 shopping.py list"""
import sys

LIST_FILE = "shopping.txt"


def load():
    try:
        with open(LIST_FILE) as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def add(item):
    items = load()
    items.append(item)
    with open(LIST_FILE, "w") as f:
        f.write("\\n".join(items) + "\\n")


def main(args):
    if args[:1] == ["add"]:
        add(" ".join(args[1:]))
    for i, item in enumerate(load(), 1):
        print(f"{i}. {item}")


if __name__ == "__main__":
    main(sys.argv[1:])
'''

SHOPPING_TXT = """Bread
Milk
"""

SHOPPING_FILES = {"shopping.py": SHOPPING_PY, "shopping.txt": SHOPPING_TXT}

# python3 shopping.py add, run on a copy whose list holds Bread, Milk and
# free-range eggs, with milk, MILK, Bread, Eggs, Butter, butter and Milk:
# the file then holds Bread, Milk, free-range eggs, Eggs and Butter (as
# typed, in that order), the list prints them numbered 1 to 5, and a first
# add with no list file still works. Fails a case-sensitive test (milk is
# added), a substring test on the file's text (Eggs is not added, as
# "free-range eggs" has "eggs" in it), doubles dropped only when the list is
# printed (the file keeps them), and the list stored in lower case.
SHOPPING_CHECK = r"""python3 - <<'EOF'
import os, shutil, subprocess, tempfile


def run(d, *args):
    r = subprocess.run(["python3", "shopping.py", *args], cwd=d, capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    return r.stdout


with tempfile.TemporaryDirectory() as d:
    shutil.copy("shopping.py", d)
    with open(os.path.join(d, "shopping.txt"), "w") as f:
        f.write("Bread\nMilk\nfree-range eggs\n")
    for item in ["milk", "MILK", "Bread", "Eggs", "Butter", "butter", "Milk"]:
        run(d, "add", item)
    want = ["Bread", "Milk", "free-range eggs", "Eggs", "Butter"]
    stored = [line.strip() for line in open(os.path.join(d, "shopping.txt")) if line.strip()]
    assert stored == want, stored
    out = run(d, "list")
    assert out.splitlines() == [f"{i}. {item}" for i, item in enumerate(want, 1)], out
with tempfile.TemporaryDirectory() as d:
    shutil.copy("shopping.py", d)
    for item in ["Tea", "tea", "Coffee"]:
        run(d, "add", item)
    stored = [line.strip() for line in open(os.path.join(d, "shopping.txt")) if line.strip()]
    assert stored == ["Tea", "Coffee"], stored
EOF"""

SHOPPING_SOLUTION = replaced("shopping.py", ("    items = load()\n    items.append(item)\n",
                                             "    items = load()\n"
                                             "    if item.lower() in [i.lower() for i in items]:\n"
                                             "        return\n"
                                             "    items.append(item)\n"))

# --- a word count that counts spaces (JavaScript; names the file) -----------------------------

WORDCOUNT_JS = """// Counts the words in a text file: node wordcount.js FILE
const fs = require("fs");

function countWords(text) {
  return text.split(" ").length;
}

function main(path) {
  const text = fs.readFileSync(path, "utf8");
  console.log(`${countWords(text)} words`);
}

if (require.main === module) {
  main(process.argv[2]);
}

module.exports = { countWords };
"""

WORDCOUNT_FILES = {"wordcount.js": WORDCOUNT_JS}

# countWords, called from node: 0 for an empty text and for one of only
# blanks, and the number of runs of non-blank characters otherwise (double
# spaces, tabs, line breaks, \r\n, blanks at either end; "It's" and
# "well-known" one word each); node wordcount.js on a letter prints
# "6 words". Fails a split on / +/ (line breaks join words), a split on
# /\s+/ alone (blanks at the ends count), text.trim().split(/\s+/) (an
# empty text counts 1), and text.match(/\w+/g) ("It's" and "well-known"
# count 2).
WORDCOUNT_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execFileSync } = require("child_process");
const { countWords } = require("./wordcount.js");

const cases = [
  ["", 0], ["   ", 0], ["\n\n", 0], ["one", 1], ["Hello,  world!\nHow are you?\n", 5],
  ["\tTabs\tand  spaces \r\n", 3], ["  It's a well-known fact.  ", 4], ["line one\n\nline two", 4],
];
for (const [text, n] of cases) {
  assert.strictEqual(countWords(text), n, JSON.stringify(text));
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "words-"));
try {
  const file = path.join(dir, "letter.txt");
  fs.writeFileSync(file, "Dear Sam,\n\nThanks  for the   cake.\n");
  const out = execFileSync("node", ["wordcount.js", file], { encoding: "utf8" });
  assert.strictEqual(out.trim(), "6 words", out);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
EOF"""

WORDCOUNT_SOLUTION = replaced("wordcount.js", ('  return text.split(" ").length;\n',
                                               "  return text.split(/\\s+/).filter(Boolean).length;\n"))

# --- ask before deleting (bash; no file named) ------------------------------------------------

CLEAN_SH = """#!/usr/bin/env bash
# Deletes the old exports: exports/*.csv not changed for 30 days.
set -e

mapfile -t old < <(find exports -name '*.csv' -mtime +30 | sort)
if [ ${#old[@]} -eq 0 ]; then
  echo "nothing to delete"
  exit 0
fi

printf '%s\\n' "${old[@]}"
rm -- "${old[@]}"
echo "deleted ${#old[@]} files"
"""

CLEAN_FILES = {"clean.sh": CLEAN_SH}

# bash clean.sh, run on a copy with two old exports (one with a space in its
# name), a new one and an old file that is not a CSV: y or yes deletes the
# two old exports and nothing else, with exit status 0; n, no, maybe, an
# empty line and no input at all delete nothing, and the two old exports
# are still listed; with no old exports it says "nothing to delete" and
# exits 0 without waiting for an answer. Fails Enter taken as yes, one
# question per file (the second finds no answer), only "y" accepted, the
# question read from /dev/tty, and the question asked before anything is
# found.
CLEAN_CHECK = r"""python3 - <<'EOF'
import os, shutil, subprocess, tempfile, time

OLD = ["2024-01 sales.csv", "2024-02-sales.csv"]
KEPT = ["2024-06-sales.csv", "notes.txt"]


def run(answer, names):
    with tempfile.TemporaryDirectory() as d:
        shutil.copy("clean.sh", d)
        os.mkdir(os.path.join(d, "exports"))
        for name in names:
            path = os.path.join(d, "exports", name)
            with open(path, "w") as f:
                f.write("date,amount\n")
            if name != "2024-06-sales.csv":
                then = time.time() - 40 * 86400
                os.utime(path, (then, then))
        kwargs = {"stdin": subprocess.DEVNULL} if answer is None else {"input": answer}
        r = subprocess.run(["bash", "clean.sh"], cwd=d, capture_output=True, text=True, timeout=20,
                           start_new_session=True, **kwargs)
        return r, sorted(os.listdir(os.path.join(d, "exports")))


for answer in ["y\n", "yes\n"]:
    r, left = run(answer, OLD + KEPT)
    assert r.returncode == 0, (answer, r.stdout, r.stderr)
    assert left == KEPT, (answer, left)
for answer in ["n\n", "no\n", "maybe\n", "\n", "", None]:
    r, left = run(answer, OLD + KEPT)
    assert left == sorted(OLD + KEPT), (answer, left)
    for name in OLD:
        assert name in r.stdout + r.stderr, ("not listed", answer, name, r.stdout)
r, left = run(None, KEPT)
assert r.returncode == 0 and "nothing to delete" in r.stdout, (r.stdout, r.stderr)
assert left == KEPT, left
EOF"""

CLEAN_SOLUTION = replaced("clean.sh", ("printf '%s\\n' \"${old[@]}\"\n",
                                       "printf '%s\\n' \"${old[@]}\"\n"
                                       "read -r -p \"Delete these? [y/N] \" answer || true\n"
                                       "if [[ $answer != y && $answer != yes ]]; then\n"
                                       "  echo \"nothing deleted\"\n"
                                       "  exit 0\n"
                                       "fi\n"))

# --- a meta description (HTML; no file named) -------------------------------------------------

BAKERY_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Little Oven Bakery</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header><h1>Little Oven Bakery</h1> <a href="about.html">About us</a></header>
  <main>
    <p>Sourdough, rye and cinnamon buns, baked every morning from 6 am.</p>
    <p>12 Mill Lane, Leeds. Closed on Mondays.</p>
  </main>
</body>
</html>
"""

BAKERY_ABOUT_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>About us - Little Oven Bakery</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header><h1>About us</h1> <a href="index.html">Home</a></header>
  <p>Ruth and Omar opened the Little Oven in 2019, in what used to be a bike shop.</p>
</body>
</html>
"""

BAKERY_STYLE_CSS = """body {
  font-family: Georgia, serif;
  margin: 2rem auto;
  max-width: 40rem;
}
"""

META_FILES = {"index.html": BAKERY_INDEX_HTML, "about.html": BAKERY_ABOUT_HTML, "style.css": BAKERY_STYLE_CSS}

# index.html, parsed with html.parser: one <meta name="description"> (any
# case), in the head, whose content is the sentence asked for (blanks
# collapsed, the full stop optional); an og:description beside it allowed;
# every other tag, attribute and text as before; about.html as it was.
# Fails the meta put in the body, og:description alone, the sentence put on
# the page as text or in the title, the content in a value= attribute, two
# descriptions, and the description put on the about page.
META_CHECK = unchanged(META_FILES, "about.html") + r""" && python3 - <<'EOF'
from html.parser import HTMLParser

ORIGINAL = """ + repr(BAKERY_INDEX_HTML) + r"""
WANT = "Fresh bread and cakes baked every morning in Leeds"


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.words, self.descriptions = [], [], []
        self.in_head = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "head":
            self.in_head = True
        if tag == "body":
            self.in_head = False
        if tag == "meta" and (attrs.get("name") or "").strip().lower() == "description":
            self.descriptions.append((self.in_head, attrs))
            return
        if tag == "meta" and (attrs.get("property") or "").strip().lower() == "og:description":
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
assert len(after.descriptions) == 1, after.descriptions
in_head, attrs = after.descriptions[0]
assert in_head, ("the description is not in the head", attrs)
content = " ".join((attrs.get("content") or "").split())
assert content.rstrip(".") == WANT, attrs
EOF"""

META_SOLUTION = replaced("index.html", ("  <title>Little Oven Bakery</title>\n",
                                        "  <title>Little Oven Bakery</title>\n"
                                        "  <meta name=\"description\" content=\"Fresh bread and cakes baked every "
                                        "morning in Leeds.\">\n"))

# --- stripes on the price table (CSS; names the file) -----------------------------------------

PRICES_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Prices</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Prices</h1>
  <table class="prices">
    <thead>
      <tr><th>Item</th><th>Price</th></tr>
    </thead>
    <tbody>
      <tr><td>Sourdough loaf</td><td>4.20</td></tr>
      <tr><td>Rye loaf</td><td>3.80</td></tr>
      <tr><td>Cinnamon bun</td><td>2.10</td></tr>
      <tr><td>Croissant</td><td>1.90</td></tr>
      <tr><td>Lemon drizzle slice</td><td>2.60</td></tr>
      <tr><td>Flat white</td><td>3.10</td></tr>
    </tbody>
  </table>
</body>
</html>
"""

PRICES_STYLE_CSS = """body {
  font-family: system-ui, sans-serif;
  margin: 2rem;
}

.prices {
  border-collapse: collapse;
  width: 100%;
}

.prices th,
.prices td {
  padding: 0.5rem;
  text-align: left;
}

.prices th {
  background: #333;
  color: #fff;
}
"""

STRIPES_FILES = {"prices.html": PRICES_HTML, "style.css": PRICES_STYLE_CSS}

# style.css, read with a small cascade of its own (selectors with types,
# classes, :nth-child, :nth-of-type, :first-child and :last-child, the
# descendant and child combinators, specificity, !important, background
# and background-color, @media blocks but print ones): the body rows' cells
# show, from the cell out through row, tbody and table, #f2f2f2 (any case,
# or as rgb()) on every other row and nothing (or white) on the rows
# between, either way round, each row one colour; every other computed
# property of every element is as before, and the header cells are still
# #333 on #fff; prices.html as it was. Fails every row made grey, the
# columns striped (td:nth-child), the header turned grey by a rule that
# beats `.prices th`, another grey, and the stripes put in prices.html.
STRIPES_CHECK = unchanged(STRIPES_FILES, "prices.html") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

ORIGINAL_CSS = """ + repr(PRICES_STYLE_CSS) + r"""
BACKGROUND = ("background", "background-color")


class El:
    def __init__(self, tag, classes, parent):
        self.tag, self.classes, self.parent, self.children = tag, set(classes), parent, []


class Page(HTMLParser):
    VOID = {"meta", "link", "br", "img", "input", "hr"}

    def __init__(self, text):
        super().__init__()
        self.root = self.cur = El("#root", [], None)
        self.all = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        el = El(tag, (dict(attrs).get("class") or "").split(), self.cur)
        self.cur.children.append(el)
        self.all.append(el)
        if tag not in self.VOID:
            self.cur = el

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        e = self.cur
        while e is not self.root and e.tag != tag:
            e = e.parent
        if e is not self.root:
            self.cur = e.parent


def rules(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, i = [], 0
    while True:
        j = text.find("{", i)
        if j < 0:
            assert not text[i:].strip(), "could not read: " + text[i:]
            return out
        head = text[i:j].strip()
        depth, k = 1, j + 1
        while depth:
            assert k < len(text), "an unclosed {"
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        body = text[j + 1:k - 1]
        if head.startswith("@"):
            if head.lower().startswith("@media") and "print" not in head.lower():
                out += rules(body)
        else:
            decls = []
            for part in body.split(";"):
                if ":" in part:
                    prop, value = part.split(":", 1)
                    important = "!important" in value
                    decls.append((prop.strip().lower(), value.replace("!important", "").strip(), important))
            out += [(sel.strip(), decls) for sel in head.split(",")]
        i = k


def nth(arg, position):
    arg = arg.replace(" ", "").lower()
    arg = {"even": "2n", "odd": "2n+1"}.get(arg, arg)
    m = re.fullmatch(r"([+-]?\d*)n([+-]\d+)?", arg)
    if not m:
        return arg.lstrip("+").isdigit() and position == int(arg)
    a = int(m.group(1) + "1" if m.group(1) in ("", "+", "-") else m.group(1))
    b = int(m.group(2) or 0)
    if a == 0:
        return position == b
    return (position - b) % a == 0 and (position - b) // a >= 0


def compound_ok(comp, el):
    m = re.fullmatch(r"(\*|[a-zA-Z][\w-]*)?((?:\.[\w-]+|:[\w-]+(?:\([^)]*\))?)*)", comp)
    if not m or (m.group(1) and m.group(1) not in ("*", el.tag)):
        return False
    for kind, name, arg in re.findall(r"([.:])([\w-]+)(?:\(([^)]*)\))?", m.group(2)):
        if kind == ".":
            if name not in el.classes:
                return False
            continue
        siblings = [c for c in el.parent.children if name != "nth-of-type" or c.tag == el.tag]
        position = siblings.index(el) + 1
        if name in ("nth-child", "nth-of-type"):
            if not nth(arg, position):
                return False
        elif name == "first-child":
            if position != 1:
                return False
        elif name == "last-child":
            if position != len(siblings):
                return False
        else:
            return False
    return True


def matches(sel, el):
    args = []
    sel = re.sub(r"\([^)]*\)", lambda m: args.append(m.group(0)) or "(%d)" % (len(args) - 1), sel)
    toks = re.sub(r"\s*([>+~])\s*", r" \1 ", sel).split()
    toks = [re.sub(r"\((\d+)\)", lambda m: args[int(m.group(1))], t) for t in toks]
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

    def at(ci, e):
        if e is None or e.tag == "#root" or not compound_ok(comps[ci], e):
            return False
        if ci == 0:
            return True
        if combs[ci - 1] == ">":
            return at(ci - 1, e.parent)
        p = e.parent
        while p is not None and p.tag != "#root":
            if at(ci - 1, p):
                return True
            p = p.parent
        return False

    return at(len(comps) - 1, el)


def specificity(sel):
    bare = re.sub(r"\([^)]*\)", "", sel)
    return (bare.count("#"), bare.count(".") + bare.count(":"), len(re.findall(r"(^|[\s>+~])[a-zA-Z]", bare)))


def computed(css, el):
    found = []
    for order, (sel, decls) in enumerate(rules(css)):
        if matches(sel, el):
            found += [((important, specificity(sel), order), prop, value) for prop, value, important in decls]
    out = {}
    for _, prop, value in sorted(found, key=lambda f: f[0]):
        if prop in BACKGROUND:
            out.pop("background", None)
            out.pop("background-color", None)
        out[prop] = value.lower()
    return out


NAMES = {"white": "#ffffff", "black": "#000000", "transparent": "transparent", "none": "transparent"}


def colour(value):
    value = re.sub(r"\(\s*([^)]*?)\s*\)", lambda m: "(" + re.sub(r"\s*,\s*", ",", m.group(1)) + ")", value)
    for tok in value.split():
        m = re.fullmatch(r"rgba?\((\d+),(\d+),(\d+)(?:,1)?\)", tok)
        if m:
            return "#%02x%02x%02x" % tuple(int(n) for n in m.groups())
        m = re.fullmatch(r"#([0-9a-f])([0-9a-f])([0-9a-f])", tok)
        if m:
            return "#" + "".join(c * 2 for c in m.groups())
        if re.fullmatch(r"#[0-9a-f]{6}", tok):
            return tok
        if tok in NAMES:
            return NAMES[tok]
        if re.fullmatch(r"[a-z]+|#\w+|\w+\(.*\)", tok) and not tok.startswith("url("):
            return tok
    return "transparent"


def shown(css, el):
    while el is not None and el.tag != "#root":
        styles = computed(css, el)
        value = styles.get("background-color", styles.get("background"))
        if value is not None and colour(value) != "transparent":
            return colour(value)
        el = el.parent
    return "#ffffff"


page = Page(open("prices.html").read())
after_css = open("style.css").read()
table = [e for e in page.all if e.tag in ("tr", "td", "tbody")]
for el in page.all:
    old, new = computed(ORIGINAL_CSS, el), computed(after_css, el)
    if el in table:
        old = {k: v for k, v in old.items() if k not in BACKGROUND}
        new = {k: v for k, v in new.items() if k not in BACKGROUND}
    assert new == old, (el.tag, new)
for th in [e for e in page.all if e.tag == "th"]:
    assert shown(after_css, th) == "#333333", ("the header", shown(after_css, th))
    assert colour(computed(after_css, th).get("color", "")) == "#ffffff", computed(after_css, th)
body_rows = [e for e in page.all if e.tag == "tr" and e.parent.tag == "tbody"]
assert len(body_rows) == 6, len(body_rows)
colours = []
for row in body_rows:
    cells = {shown(after_css, td) for td in row.children}
    assert len(cells) == 1, ("a row of two colours", cells)
    colours += cells
odd, even = set(colours[0::2]), set(colours[1::2])
assert len(odd) == 1 and len(even) == 1, colours
assert {odd.pop(), even.pop()} == {"#f2f2f2", "#ffffff"}, colours
EOF"""

STRIPES_SOLUTION = r"""printf '\n.prices tbody tr:nth-child(even) {\n  background: #f2f2f2;\n}\n' >> style.css"""

# --- only the bigger cities (SQL; names the file) ---------------------------------------------

SHOP_SCHEMA_SQL = """-- The shop's customers (SQLite).
CREATE TABLE IF NOT EXISTS customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  city TEXT NOT NULL
);
"""

REPORT_SQL = """-- Customers per city, most first.
SELECT city, COUNT(*) AS customers
FROM customers
GROUP BY city
ORDER BY customers DESC, city;
"""

REPORT_PY = '''"""Prints the customers per city: python3 report.py [DATABASE]"""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1] if len(sys.argv) > 1 else "shop.db")
with open("report.sql") as f:
    query = f.read()
for city, customers in db.execute(query):
    print(f"{city:<12} {customers}")
'''

CITIES_FILES = {"schema.sql": SHOP_SCHEMA_SQL, "report.sql": REPORT_SQL, "report.py": REPORT_PY}

# report.sql, run from Python on an SQLite database made with schema.sql
# and customers in six cities (7, 6, 5, 5, 4 and 1 of them), gives the four
# cities with 5 or more, most first and then by name, with their counts,
# and on another (9, 5, 4, 3 and 2) the two with 5 or more; python3
# report.py on each database prints the same; schema.sql as it was. Fails
# `> 5` (the two cities with exactly 5 are lost), a LIMIT, a WHERE on the
# count (an error), and the cities left out in report.py alone (report.sql
# still lists all six).
CITIES_CHECK = unchanged(CITIES_FILES, "schema.sql") + r""" && python3 - <<'EOF'
import os, sqlite3, subprocess, tempfile

CUSTOMERS = [
    ([("York", 4), ("Leeds", 5), ("London", 7), ("Bath", 1), ("Hull", 5), ("Derby", 6)],
     [("London", 7), ("Derby", 6), ("Hull", 5), ("Leeds", 5)]),
    ([("Bath", 2), ("York", 9), ("Hull", 4), ("Leeds", 5), ("Derby", 3)], [("York", 9), ("Leeds", 5)]),
]
for cities, want in CUSTOMERS:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "shop.db")
        db = sqlite3.connect(path)
        with open("schema.sql") as f:
            db.executescript(f.read())
        n = 0
        for city, count in cities:
            for _ in range(count):
                n += 1
                db.execute("INSERT INTO customers (name, email, city) VALUES (?, ?, ?)",
                           (f"Customer {n}", f"customer{n}@example.com", city))
        db.commit()
        with open("report.sql") as f:
            rows = db.execute(f.read()).fetchall()
        assert [tuple(r) for r in rows] == want, rows
        db.close()
        r = subprocess.run(["python3", "report.py", path], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr
        assert [line.split() for line in r.stdout.splitlines()] == [[c, str(k)] for c, k in want], r.stdout
EOF"""

CITIES_SOLUTION = replaced("report.sql", ("GROUP BY city\n", "GROUP BY city\nHAVING COUNT(*) >= 5\n"))

# --- a git alias (gitconfig; names the file) --------------------------------------------------

GITCONFIG = """[user]
\tname = Sam Patel
\temail = sam@example.com
[core]
\teditor = nano
[alias]
\tco = checkout
\tlg = log --oneline --graph --decorate
[pull]
\trebase = true
"""

DOTFILES_INSTALL_SH = """#!/usr/bin/env bash
# Links my dotfiles into place.
set -e
ln -sf "$PWD/gitconfig" "$HOME/.gitconfig"
echo "linked ~/.gitconfig"
"""

ALIAS_FILES = {"gitconfig": GITCONFIG, "install.sh": DOTFILES_INSTALL_SH}

# git, with gitconfig as its global config (and no system one), in a new
# repository with a commit, a changed file and a new one: `git st` runs
# and prints what `git status -sb` prints with the original gitconfig;
# `git config -f gitconfig --list` is as before plus alias.st. Fails
# `st = status` (the long form), `st = git status -sb`, the alias put under
# another section, the alias set with `git config --global` (which writes
# ~/.gitconfig and leaves the file as it was), and other settings lost.
ALIAS_CHECK = r"""python3 - <<'EOF'
import os, subprocess, tempfile

ORIGINAL = """ + repr(GITCONFIG) + r"""


def git(args, cwd, config, home):
    env = {"PATH": os.environ["PATH"], "HOME": home, "GIT_CONFIG_GLOBAL": config, "GIT_CONFIG_NOSYSTEM": "1",
           "LC_ALL": "C", "GIT_PAGER": "cat", "PAGER": "cat"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=20,
                          stdin=subprocess.DEVNULL)


mine = os.path.abspath("gitconfig")
with tempfile.TemporaryDirectory() as d:
    original = os.path.join(d, "original-gitconfig")
    with open(original, "w") as f:
        f.write(ORIGINAL)
    before = git(["config", "-f", original, "--list"], d, original, d)
    after = git(["config", "-f", mine, "--list"], d, original, d)
    assert after.returncode == 0, after.stderr
    added = [e for e in after.stdout.splitlines() if not e.startswith("alias.st=")]
    assert added == before.stdout.splitlines(), after.stdout
    repo = os.path.join(d, "repo")
    os.mkdir(repo)
    assert git(["init", "-q"], repo, original, d).returncode == 0
    for name, text in [("notes.txt", "one\n"), ("todo.txt", "milk\n")]:
        with open(os.path.join(repo, name), "w") as f:
            f.write(text)
    assert git(["add", "."], repo, original, d).returncode == 0
    r = git(["commit", "-q", "-m", "first"], repo, original, d)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(repo, "todo.txt"), "a") as f:
        f.write("eggs\n")
    with open(os.path.join(repo, "new.txt"), "w") as f:
        f.write("new\n")
    want = git(["status", "-sb"], repo, original, d)
    got = git(["st"], repo, mine, d)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout, (got.stdout, want.stdout)
EOF"""

ALIAS_SOLUTION = replaced("gitconfig", ("\tlg = log --oneline --graph --decorate\n",
                                        "\tlg = log --oneline --graph --decorate\n\tst = status -sb\n"))

# --- a question answered from requirements.txt (no file named) --------------------------------

REQUIREMENTS_TXT = """# Move to Django 5.0 once the hosting has Python 3.10.
Django==4.2.11
djangorestframework==3.15.1
django-environ==0.11.2
gunicorn==21.2.0
psycopg2-binary==2.9.9
"""

MANAGE_PY = '''#!/usr/bin/env python3
"""Django's command-line utility for administrative tasks."""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookings.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
'''

BOOKINGS_README = """# bookings

The tennis club's court bookings, a small Django site.

Install with `pip install -r requirements.txt`, then run `python3 manage.py runserver`.
"""

DJANGO_FILES = {"requirements.txt": REQUIREMENTS_TXT, "manage.py": MANAGE_PY, "README.md": BOOKINGS_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer gives 4.2.11. Fails an empty answer, 5.0
# (from the comment) or another package's version (3.15.1, 0.11.2) given
# instead, 4.2 without the patch release, and a changed file.
DJANGO_CHECK = left_alone_and_answered(DJANGO_FILES, ("requirements.txt", "manage.py", "README.md"), r"""
assert re.search(r"(?<![\d.])4\.2\.11(?!\.?\d)", answer), answer
""")

DJANGO_SOLUTION = r"""echo 'Django 4.2.11 (pinned in requirements.txt).' > "$AGENT_ANSWER" """

# --- a new page in the sitemap (XML; no file named) -------------------------------------------

SITEMAP_XML = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://www.littleoven.example/</loc>
    <lastmod>2025-03-01</lastmod>
  </url>
  <url>
    <loc>https://www.littleoven.example/menu</loc>
    <lastmod>2025-02-14</lastmod>
  </url>
  <url>
    <loc>https://www.littleoven.example/about</loc>
    <lastmod>2024-11-20</lastmod>
  </url>
</urlset>
"""

CONTACT_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Contact - Little Oven Bakery</title>
</head>
<body>
  <h1>Contact us</h1>
  <p>Call 0113 496 0123, or email hello@littleoven.example.</p>
</body>
</html>
"""

SITEMAP_FILES = {"sitemap.xml": SITEMAP_XML, "contact.html": CONTACT_HTML}

# sitemap.xml, parsed with ElementTree: a urlset in the sitemap namespace
# whose url elements each have one loc; the three old ones as they were, in
# their order, and one more whose loc is https://www.littleoven.example/
# contact (a trailing slash allowed), with a lastmod, if any, that is a
# W3C date, and changefreq and priority, if any, valid. Fails a relative
# /contact or contact.html, http:// instead of https://, a second loc put
# in an existing url, the url written without the namespace, and a file
# that no longer parses.
SITEMAP_CHECK = r"""python3 - <<'EOF'
import re
import xml.etree.ElementTree as ET

ORIGINAL = """ + repr(SITEMAP_XML) + r"""
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def urls(data):
    root = ET.fromstring(data)
    assert root.tag == NS + "urlset", root.tag
    out = []
    for url in root:
        assert url.tag == NS + "url", url.tag
        fields = [(child.tag, (child.text or "").strip()) for child in url]
        assert len(dict(fields)) == len(fields), ("a field twice", fields)
        assert NS + "loc" in dict(fields), ("no loc", fields)
        out.append(dict(fields))
    return out


before = urls(ORIGINAL.encode())
after = urls(open("sitemap.xml", "rb").read())
old_locs = {u[NS + "loc"] for u in before}
assert [u for u in after if u[NS + "loc"] in old_locs] == before, after
new = [u for u in after if u[NS + "loc"] not in old_locs]
assert len(new) == 1, new
url = new[0]
assert url[NS + "loc"].rstrip("/") == "https://www.littleoven.example/contact", url
for key, value in url.items():
    name = key[len(NS):] if key.startswith(NS) else key
    assert name in ("loc", "lastmod", "changefreq", "priority"), ("unknown field", key)
    if name == "lastmod":
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?", value), value
    if name == "changefreq":
        assert value in ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never"), value
    if name == "priority":
        assert 0 <= float(value) <= 1, value
EOF"""

SITEMAP_SOLUTION = replaced("sitemap.xml", ("</urlset>\n",
                                            "  <url>\n    <loc>https://www.littleoven.example/contact</loc>\n"
                                            "    <lastmod>2025-03-10</lastmod>\n  </url>\n</urlset>\n"))

# --- a License section (Markdown; names the file) ---------------------------------------------

TIDY_README = """# tidy-photos

Renames photos by the date they were taken: `IMG_4031.JPG` becomes `2024-05-18_1432.jpg`.

## Install

    pip install -e .

## Usage

    tidy-photos ~/Pictures/holiday

## Options

- `--dry-run`: show the new names without renaming anything
- `--recursive`: go into subfolders too
"""

# The MIT text of errands_tasks.py, with another holder.
MIT_LICENSE = errands_tasks.MIT_LICENSE.replace("2021 Lena Fischer", "2025 Sam Patel")

LICENSE_FILES = {"README.md": TIDY_README, "LICENSE": MIT_LICENSE}

# README.md: everything that was there is still there, unchanged and first,
# and after it comes one new section: a level-2 heading "License" (or
# "Licence"), then text with no other heading that says MIT and links to
# the LICENSE file (an inline or reference link, or an <a href>, ./
# allowed); LICENSE as it was. Fails a level-1 heading, the section put
# before Options or anywhere but the end, "License" in bold instead of a
# heading, a link to opensource.org alone, LICENSE named but not linked,
# a link to LICENSE.md, and LICENSE changed.
LICENSE_CHECK = unchanged(LICENSE_FILES, "LICENSE") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(TIDY_README) + r"""

text = open("README.md").read()
head = ORIGINAL.rstrip("\n")
assert text.startswith(head + "\n"), "the README before the new section changed"
lines = [line for line in text[len(head):].split("\n") if line.strip()]
assert lines, "nothing added"
m = re.fullmatch(r"(#{1,6})\s+(.*?)(\s+#+)?\s*", lines[0])
assert m and len(m.group(1)) == 2 and m.group(2).strip().lower() in ("license", "licence"), lines[0]
assert not any(re.match(r"\s{0,3}#{1,6}(\s|$)", line) for line in lines[1:]), lines
body = "\n".join(lines[1:])
assert re.search(r"\bMIT\b", body), body
targets = re.findall(r"\]\(\s*<?([^\s)>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)", body)
targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?([^\s>]+)>?", body, re.M)
targets += re.findall(r"href\s*=\s*[\"']([^\"']+)[\"']", body)
assert any((t[2:] if t.startswith("./") else t) == "LICENSE" for t in targets), ("no link to LICENSE", targets)
EOF"""

LICENSE_SOLUTION = r"""printf '\n## License\n\nMIT, see [LICENSE](LICENSE).\n' >> README.md"""

LAST_ORDERS_TASKS = [
    {
        "name": "don't add an item twice",
        "files": SHOPPING_FILES,
        "prompt": "When I add something that's already on the shopping list, it ends up on it twice. Don't add "
                  "it again if it's already there (Milk and milk are the same thing).",
        "check": SHOPPING_CHECK,
        "solution": SHOPPING_SOLUTION,
    },
    {
        "name": "count words across lines",
        "files": WORDCOUNT_FILES,
        "prompt": "wordcount.js gets the count wrong when words are split by line breaks or more than one "
                  "space, and it says 1 word for an empty file. Make it count just the words.",
        "check": WORDCOUNT_CHECK,
        "solution": WORDCOUNT_SOLUTION,
    },
    {
        "name": "ask before deleting",
        "files": CLEAN_FILES,
        "prompt": "The cleanup script deletes the old exports straight away. Have it list them and then ask "
                  "\"Delete these? [y/N]\", and only delete them if I answer y or yes.",
        "check": CLEAN_CHECK,
        "solution": CLEAN_SOLUTION,
    },
    {
        "name": "add a meta description",
        "files": META_FILES,
        "prompt": "Google shows no description for our home page. Give it this one: Fresh bread and cakes "
                  "baked every morning in Leeds.",
        "check": META_CHECK,
        "solution": META_SOLUTION,
    },
    {
        "name": "stripe the table rows",
        "files": STRIPES_FILES,
        "prompt": "In style.css, make the price table's rows striped, every other row light grey (#f2f2f2), "
                  "so it's easier to read across.",
        "check": STRIPES_CHECK,
        "solution": STRIPES_SOLUTION,
    },
    {
        "name": "only cities with five customers",
        "files": CITIES_FILES,
        "prompt": "report.sql lists every city, even ones with a single customer. Only show cities with at "
                  "least 5 customers.",
        "check": CITIES_CHECK,
        "solution": CITIES_SOLUTION,
    },
    {
        "name": "add a git alias",
        "files": ALIAS_FILES,
        "prompt": "Add an alias to gitconfig so that git st runs git status -sb.",
        "check": ALIAS_CHECK,
        "solution": ALIAS_SOLUTION,
    },
    {
        "name": "answer from requirements",
        "files": DJANGO_FILES,
        "prompt": "Which version of Django are we on, exactly? Just tell me, don't change anything.",
        "check": DJANGO_CHECK,
        "solution": DJANGO_SOLUTION,
    },
    {
        "name": "add a page to the sitemap",
        "files": SITEMAP_FILES,
        "prompt": "We've just put up a contact page at /contact. Can you add it to the sitemap?",
        "check": SITEMAP_CHECK,
        "solution": SITEMAP_SOLUTION,
    },
    {
        "name": "add a license section",
        "files": LICENSE_FILES,
        "prompt": "Add a License section at the end of README.md saying it's MIT licensed, with a link to the "
                  "LICENSE file.",
        "check": LICENSE_CHECK,
        "solution": LICENSE_SOLUTION,
    },
]
