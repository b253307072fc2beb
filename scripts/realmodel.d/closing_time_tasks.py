"""The closing time set of everyday tasks of scripts/realmodel (`--set closing_time`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break, second cup and
last orders sets (tasks.py, new_tasks.py, fresh_tasks.py, plain_tasks.py,
daily_tasks.py, chores_tasks.py, errands_tasks.py, odd_jobs_tasks.py,
side_quests_tasks.py, back_office_tasks.py, night_shift_tasks.py,
early_bird_tasks.py, tea_break_tasks.py, second_cup_tasks.py,
last_orders_tasks.py), unlike all fifteen in what is asked, by someone who
had read no run of any of them (no transcript, no result, no table, no
note on one). It is as plain as the last orders set: the kind of request a
junior developer finishes in the five minutes before closing time, each a
project of one to three short files (under 40 lines each), each done by
changing or adding a few lines in one file, in ten kinds of file: a Python
leap year test that takes 1900 for a leap year; a JavaScript kitchen timer
that shows 3:5 where it means 3:05; a bash backup script made to put the
day in its archive's name instead of overwriting one archive; an email
address in an HTML page's footer made a link that opens the mail program;
a blog's post column kept to 800px and centred in CSS; console.log made an
error in an ESLint JSON config; a Kubernetes deployment in YAML scaled from
one copy to three; Python 3.10 or newer required in pyproject.toml (TOML);
a generated migrations folder left out of flake8's INI config; and a
question answered from a Makefile (where `make install` puts the command).
The keys are those of last_orders_tasks.py: the files, the prompt as a
person would type it (five of the ten name no file), a check, and a
solution that `scripts/realmodel --check-tasks` applies to prove the check
fails before it and passes after. Checks run the code (the leap years in
Python against the calendar module, the timer in node, the backup script in
bash on a copy, with its archive opened by tarfile), parse the file (the
HTML with html.parser, the CSS with a small cascade of its own on a wide
screen, the ESLint config with json, the deployment with a small YAML
reader of its own, pyproject.toml with tomllib and its requires-python
weighed against Python versions, .flake8 with configparser and matched as
flake8 matches its patterns) or read the answer (with git to see that
nothing changed), rather than look for one spelling, and use python3
(stdlib), node, bash, git and coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: the rule of 100
without the rule of 400, or the fix made for 1900 alone; the minutes padded
instead of the seconds, or a 0 put before every second; the date written
into the script by hand, in another order, or with the time; a link with no
mailto:, the address hidden behind "email us", or the link outside the
footer; the column left uncentred, text-align used instead, or a fixed
width; the rule set to warn, `allow: ["log"]`, or the rule put in
package.json; the number quoted, or the replicas put in the pod template;
`>3.9` (which lets 3.9.1 in), an upper bound that shuts out 3.13, or a
version check in the code; the other exclusions lost, `*/migrations/*`
(which flake8 never matches at the top) or noqa in the migration; and
/usr/bin or the unexpanded $(PREFIX) given as the answer.
"""

from new_tasks import left_alone_and_answered, unchanged
from tea_break_tasks import replaced
from second_cup_tasks import YAML_READER

# --- the leap year rule (Python; no file named) -----------------------------------------------

DATES_PY = '''"""Dates for the booking calendar."""


def is_leap(year):
    """Whether February of `year` has 29 days."""
    return year % 4 == 0


def days_in_month(year, month):
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31
'''

MONTH_PY = '''"""Says how many days a month has: python3 month.py YEAR MONTH"""
import sys

from dates import days_in_month

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

year, month = int(sys.argv[1]), int(sys.argv[2])
print(f"{MONTHS[month - 1]} {year} has {days_in_month(year, month)} days")
'''

LEAP_FILES = {"dates.py": DATES_PY, "month.py": MONTH_PY}

# is_leap and days_in_month, called from Python for every year from 1 to
# 3000, agree with the calendar module, and python3 month.py says 28 or 29
# days for February 1900, 2000, 2023, 2024 and 2100. Fails the rule of 100
# without the rule of 400 (2000 gets 28), `year % 400 == 0` alone (2024 gets
# 28), and 1900 special-cased in month.py (is_leap still says yes).
LEAP_CHECK = r"""python3 - <<'EOF'
import calendar, subprocess
from dates import days_in_month, is_leap

for year in range(1, 3001):
    assert bool(is_leap(year)) == calendar.isleap(year), year
    for month in range(1, 13):
        assert days_in_month(year, month) == calendar.monthrange(year, month)[1], (year, month)
for year, days in [(1900, 28), (2000, 29), (2023, 28), (2024, 29), (2100, 28)]:
    r = subprocess.run(["python3", "month.py", str(year), "2"], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["February", str(year), "has", str(days), "days"], r.stdout
EOF"""

LEAP_SOLUTION = replaced("dates.py", ("    return year % 4 == 0\n",
                                      "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"))

# --- the timer's seconds (JavaScript; names the file) -----------------------------------------

TIMER_JS = """// A kitchen timer: node timer.js SECONDS
function formatTime(seconds) {
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return `${minutes}:${rest}`;
}

function main(total) {
  let left = total;
  const tick = () => {
    process.stdout.write(`\\r${formatTime(left)} `);
    if (left === 0) {
      console.log("\\nTime's up!");
      return;
    }
    left -= 1;
    setTimeout(tick, 1000);
  };
  tick();
}

if (require.main === module) {
  main(Number(process.argv[2] || 60));
}

module.exports = { formatTime };
"""

TIMER_FILES = {"timer.js": TIMER_JS}

# formatTime, called from node for every second below an hour, gives the
# minutes (a leading zero allowed), a colon and the seconds as exactly two
# digits; node timer.js 1 still counts down to 0:00 and says "Time's up!".
# Fails the minutes padded instead of the seconds, "0" put before every
# second ("3:15" becomes "3:015"), padEnd ("3:5" becomes "3:50"), and a
# timer that no longer runs.
TIMER_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");
const { formatTime } = require("./timer.js");

for (let s = 0; s < 3600; s++) {
  const m = String(formatTime(s)).match(/^(\d+):(\d\d)$/);
  assert.ok(m, JSON.stringify([s, formatTime(s)]));
  assert.deepStrictEqual([Number(m[1]), Number(m[2])], [Math.floor(s / 60), s % 60], formatTime(s));
}
const out = execFileSync("node", ["timer.js", "1"], { encoding: "utf8", timeout: 20000 });
assert.ok(/(^|[^\d])0?0:01\b/.test(out) && /(^|[^\d])0?0:00\b/.test(out) && out.includes("Time's up!"), out);
EOF"""

TIMER_SOLUTION = replaced("timer.js", ("  return `${minutes}:${rest}`;\n",
                                       "  return `${minutes}:${String(rest).padStart(2, \"0\")}`;\n"))

# --- a backup a day (bash; names the file) ----------------------------------------------------

BACKUP_SH = """#!/usr/bin/env bash
# Packs the notes folder into backups/notes.tar.gz.
set -e

mkdir -p backups
tar -czf backups/notes.tar.gz notes
echo "backed up to backups/notes.tar.gz"
"""

BACKUP_FILES = {
    "backup.sh": BACKUP_SH,
    "notes/todo.md": "- call the bank\n- book the dentist\n",
    "notes/ideas.md": "# Ideas\n\n- a herb garden on the balcony\n",
}

# bash backup.sh, run on a copy with notes in a subfolder too and an older
# backup already there, exits 0 and adds one archive, notes-YYYY-MM-DD.tar.gz
# for today (or for the day after, should midnight pass), that tarfile opens
# and that holds the notes as notes/...; the older backup is left alone, and
# the script does not have today's date written into it. Fails the date
# typed into the script, the day in another order (14-03-2025), the time
# added to the name, `$(date)` whole, and the old backups removed.
BACKUP_CHECK = r"""python3 - <<'EOF'
import datetime, os, shutil, subprocess, tarfile, tempfile

NOTES = {"todo.md": "- milk\n", "trips/rome.md": "# Rome\n"}
script = open("backup.sh").read()
with tempfile.TemporaryDirectory() as d:
    shutil.copy("backup.sh", d)
    for name, text in NOTES.items():
        os.makedirs(os.path.dirname(os.path.join(d, "notes", name)), exist_ok=True)
        with open(os.path.join(d, "notes", name), "w") as f:
            f.write(text)
    os.mkdir(os.path.join(d, "backups"))
    with open(os.path.join(d, "backups", "notes-2020-01-31.tar.gz"), "wb") as f:
        f.write(b"an older backup")
    days = {datetime.date.today().isoformat()}
    r = subprocess.run(["bash", "backup.sh"], cwd=d, capture_output=True, text=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    days.add(datetime.date.today().isoformat())
    assert r.returncode == 0, r.stderr
    made = sorted(set(os.listdir(os.path.join(d, "backups"))) - {"notes-2020-01-31.tar.gz"})
    assert len(made) == 1 and made[0] in {f"notes-{day}.tar.gz" for day in days}, made
    with open(os.path.join(d, "backups", "notes-2020-01-31.tar.gz"), "rb") as f:
        assert f.read() == b"an older backup", "the older backup changed"
    with tarfile.open(os.path.join(d, "backups", made[0])) as t:
        got = {m.name.removeprefix("./"): t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}
    assert got == {"notes/" + name: text for name, text in NOTES.items()}, got
for day in days:
    assert day not in script, "today's date is written into the script"
EOF"""

BACKUP_SOLUTION = replaced("backup.sh", ("tar -czf backups/notes.tar.gz notes\n"
                                         "echo \"backed up to backups/notes.tar.gz\"\n",
                                         "archive=\"backups/notes-$(date +%F).tar.gz\"\n"
                                         "tar -czf \"$archive\" notes\n"
                                         "echo \"backed up to $archive\"\n"))

# --- a clickable email address (HTML; no file named) ------------------------------------------

CATERING_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Green Fork Catering</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Green Fork Catering</h1>
  <p>Vegetarian lunches for offices in Bristol, delivered by bike.</p>
  <footer>
    <p>Questions or orders: hello@greenfork.example or 0117 496 0555</p>
  </footer>
</body>
</html>
"""

CATERING_STYLE_CSS = """body {
  font-family: system-ui, sans-serif;
  margin: 2rem;
}

footer {
  color: #555;
  font-size: 0.9rem;
}
"""

MAILTO_FILES = {"index.html": CATERING_INDEX_HTML, "style.css": CATERING_STYLE_CSS}

# index.html, parsed with html.parser: one <a> whose href is mailto: the
# address (any case, with or without ?subject=...), in the footer, with the
# address in its text; every other tag and attribute as before (a tel: link
# on the phone number allowed too), the page's text the same words as
# before; style.css as it was. Fails an href without mailto: (a relative
# link), the address misspelt in the href, the link outside the footer, the
# address's text replaced by "email us", and the link made in the CSS file.
MAILTO_CHECK = unchanged(MAILTO_FILES, "style.css") + r""" && python3 - <<'EOF'
from html.parser import HTMLParser
from urllib.parse import unquote

ORIGINAL = """ + repr(CATERING_INDEX_HTML) + r"""
ADDRESS = "hello@greenfork.example"


class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.tags, self.text, self.mail, self.open = [], "", [], []
        self.in_footer = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        href = (dict(attrs).get("href") or "").strip()
        if tag == "a" and href.lower().startswith(("mailto:", "tel:")):
            self.open.append([href, self.in_footer, ""])
            return
        self.in_footer = self.in_footer or tag == "footer"
        self.tags.append((tag, sorted(attrs)))

    def handle_endtag(self, tag):
        if tag == "a" and self.open:
            href, in_footer, text = self.open.pop()
            if href.lower().startswith("mailto:"):
                self.mail.append((href, in_footer, text))
            return
        if tag == "footer":
            self.in_footer = False
        self.tags.append(("/" + tag, []))

    def handle_data(self, data):
        self.text += data
        for link in self.open:
            link[2] += data


before, after = Page(ORIGINAL), Page(open("index.html").read())
assert after.tags == before.tags, after.tags
assert after.text.split() == before.text.split(), after.text
assert len(after.mail) == 1, ("mailto links", after.mail)
href, in_footer, text = after.mail[0]
assert unquote(href[len("mailto:"):].split("?")[0]).strip().lower() == ADDRESS, href
assert in_footer, "the link is not in the footer"
assert ADDRESS in text, ("the address is not what is clicked", text)
EOF"""

MAILTO_SOLUTION = replaced("index.html", ("orders: hello@greenfork.example or",
                                          "orders: <a href=\"mailto:hello@greenfork.example\">"
                                          "hello@greenfork.example</a> or"))

# --- a narrower column (CSS; names the file) --------------------------------------------------

BLOG_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Slow Roads</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header class="masthead"><h1>Slow Roads</h1></header>
  <main class="post">
    <h2>Three days on the Ridgeway</h2>
    <p>We set off from Avebury in the rain, with too much cheese and not enough socks.</p>
  </main>
</body>
</html>
"""

BLOG_STYLE_CSS = """body {
  margin: 0;
  font-family: Georgia, serif;
  line-height: 1.6;
}

.masthead {
  background: #264653;
  color: #fff;
  padding: 1rem 2rem;
}

.post {
  padding: 1rem 2rem;
}
"""

COLUMN_FILES = {"index.html": BLOG_INDEX_HTML, "style.css": BLOG_STYLE_CSS}

# A small CSS cascade for the checks, as a page on a screen SCREEN pixels
# wide sees it: `Page(html).chains` (each element with its ancestors, as
# (tag, classes)), `rules(css)` (the rules that apply on such a screen,
# @media followed), `declarations(css, chain)` (an element's declarations
# in cascade order: !important, specificity, then source order) and
# `px(value)`. The check that takes it defines SCREEN and imports re and
# HTMLParser. Shared with last_call_tasks.py.
CSS_CASCADE = r'''
class Page(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.stack, self.chains = [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "link", "br", "img"):
            self.stack.append((tag, set((dict(attrs).get("class") or "").split())))
            self.chains.append(list(self.stack))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass


def px(value):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(px|r?em)", (value or "").strip())
    return m and float(m.group(1)) * (1 if m.group(2) == "px" else 16)


def on_screen(query):
    for q in query.lower().split(","):
        if {"print", "not", "speech"} & set(re.sub(r"\(.*?\)", " ", q).split()):
            continue
        limits = re.findall(r"\(\s*(min|max)-width\s*:\s*([^)]*)\)", q)
        if all(px(v) is not None and (SCREEN >= px(v) if k == "min" else SCREEN <= px(v)) for k, v in limits):
            return True
    return False


def rules(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, i = [], 0
    while (j := text.find("{", i)) >= 0:
        head = text[i:j].rsplit(";", 1)[-1].strip()
        depth, k = 1, j + 1
        while depth:
            assert k < len(text), "an unclosed {"
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        body = text[j + 1:k - 1]
        if head.lower().startswith("@media"):
            out += rules(body) if on_screen(head[6:]) else []
        elif not head.startswith("@"):
            decls = []
            for part in body.split(";"):
                if ":" in part:
                    prop, value = part.split(":", 1)
                    important = bool(re.search(r"!\s*important", value, re.I))
                    value = re.sub(r"!\s*important", "", value, flags=re.I).strip().lower()
                    decls.append((prop.strip().lower(), value, important))
            out += [(sel.strip(), decls) for sel in head.split(",")]
        i = k
    return out


def compound_ok(comp, el, first):
    m = re.fullmatch(r"(\*|[a-zA-Z][\w-]*)?((?:\.[\w-]+|:root)*)", comp)
    if not m or (m.group(1) and m.group(1) not in ("*", el[0])) or (":root" in comp and not first):
        return False
    return set(re.findall(r"\.([\w-]+)", m.group(2))) <= el[1]


def matches(sel, chain):
    toks = re.sub(r"\s*>\s*", " > ", sel).split()
    if not toks or any(c in sel for c in "+~[#"):
        return False

    def at(ti, ei):
        if not compound_ok(toks[ti], chain[ei], ei == 0):
            return False
        if ti == 0:
            return True
        if toks[ti - 1] == ">":
            return ei > 0 and ti > 1 and at(ti - 2, ei - 1)
        return any(at(ti - 1, e) for e in range(ei))

    return at(len(toks) - 1, len(chain) - 1)


def declarations(css, chain):
    found = []
    for order, (sel, decls) in enumerate(rules(css)):
        if matches(sel, chain):
            spec = (sel.count(".") + sel.count(":"), len(re.findall(r"(^|[\s>])[a-zA-Z]", sel)))
            found += [((important, spec, order), prop, value) for prop, value, important in decls]
    return [(prop, value) for _, prop, value in sorted(found, key=lambda f: f[0])]
'''


# style.css, read with a small cascade of its own (types, classes, :root,
# descendant and child combinators, specificity, order, !important, @media
# queries on min-width and max-width weighed for a screen 1600px wide): the
# post (main) or one of the elements around it has a max-width of 800px
# (or 50rem; or a width of 800px with a max-width of 100%) and auto margins
# left and right (margin, margin-left/right or margin-inline); every
# element's other properties, all but margins, paddings, widths and
# box-sizing, are as before; index.html as it was. Fails the max-width with
# no auto margins (not centred), margin: auto with no width, text-align:
# center, a fixed width alone (too wide for a phone), another width, and the
# rule put in index.html.
COLUMN_CHECK = unchanged(COLUMN_FILES, "index.html") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

ORIGINAL_CSS = """ + repr(BLOG_STYLE_CSS) + r"""
SCREEN = 1600
LAYOUT = re.compile(r"(margin|padding|width|max-width|min-width|box-sizing)(-.*)?$")


""" + CSS_CASCADE + r"""


def side_margins(decls):
    left = right = "0"
    for prop, value in decls:
        v = value.split()
        if prop == "margin" and 1 <= len(v) <= 4:
            right, left = v[min(1, len(v) - 1)], v[{1: 0, 2: 1, 3: 1, 4: 3}[len(v)]]
        elif prop == "margin-inline" and v:
            left, right = v[0], v[-1]
        elif prop in ("margin-left", "margin-inline-start"):
            left = value
        elif prop in ("margin-right", "margin-inline-end"):
            right = value
    return left, right


css = open("style.css").read()
page = Page(open("index.html").read())
for chain in page.chains:
    old = {p: v for p, v in declarations(ORIGINAL_CSS, chain) if not LAYOUT.match(p)}
    new = {p: v for p, v in declarations(css, chain) if not LAYOUT.match(p)}
    assert new == old, (chain[-1][0], new)
main = next(c for c in page.chains if c[-1][0] == "main")
centred = []
for k in range(1, len(main) + 1):
    decls = declarations(css, main[:k])
    last = dict(decls)
    widest = px(last.get("max-width"))
    if last.get("max-width") == "100%":
        widest = px(last.get("width"))
    if widest == 800 and side_margins(decls) == ("auto", "auto"):
        centred.append(main[k - 1][0])
assert centred, "no element around the post is at most 800px wide and centred"
EOF"""

COLUMN_SOLUTION = replaced("style.css", (".post {\n  padding: 1rem 2rem;\n}\n",
                                         ".post {\n  max-width: 800px;\n  margin: 0 auto;\n"
                                         "  padding: 1rem 2rem;\n}\n"))

# --- console.log as an error (JSON; names the file) -------------------------------------------

ESLINTRC_JSON = """{
  "root": true,
  "env": {
    "node": true,
    "es2022": true
  },
  "extends": "eslint:recommended",
  "rules": {
    "semi": ["error", "always"],
    "quotes": ["warn", "double"],
    "no-unused-vars": "warn"
  }
}
"""

LINT_PACKAGE_JSON = """{
  "name": "invoice-mailer",
  "version": "1.3.0",
  "private": true,
  "scripts": {
    "start": "node index.js",
    "lint": "eslint ."
  },
  "devDependencies": {
    "eslint": "^8.57.0"
  }
}
"""

LINT_INDEX_JS = """// Sends the month's invoices.
const invoices = [{ number: "2025-031", to: "ana@example.com" }, { number: "2025-032", to: "bo@example.com" }];

for (const invoice of invoices) {
  console.log("sending", invoice.number, "to", invoice.to);
}
"""

LINT_FILES = {".eslintrc.json": ESLINTRC_JSON, "package.json": LINT_PACKAGE_JSON, "index.js": LINT_INDEX_JS}

# .eslintrc.json, read with json: no-console at "error" or 2 (alone or in a
# list, its options not allowing "log"), or no-restricted-properties at
# error naming console.log; every other key and rule as before;
# package.json and index.js as they were. Fails "warn", `allow: ["log"]`,
# the rule put in package.json's eslintConfig (.eslintrc.json wins), the
# other rules lost, and the console.log taken out of index.js instead.
LINT_CHECK = unchanged(LINT_FILES, "package.json", "index.js") + r""" && python3 - <<'EOF'
import json

ORIGINAL = """ + repr(ESLINTRC_JSON) + r"""
MINE = ("no-console", "no-restricted-properties")


def level(setting):
    first = setting[0] if isinstance(setting, list) and setting else setting
    return {"off": 0, "warn": 1, "error": 2}.get(first, first) if isinstance(first, (str, int)) else None


before, after = json.loads(ORIGINAL), json.load(open(".eslintrc.json"))
rules = after.get("rules", {})
assert {k: v for k, v in after.items() if k != "rules"} == {k: v for k, v in before.items() if k != "rules"}, after
assert {k: v for k, v in rules.items() if k not in MINE} == before["rules"], rules
ok = False
setting = rules.get("no-console")
if setting is not None and level(setting) == 2:
    options = setting[1] if isinstance(setting, list) and len(setting) > 1 else {}
    ok = "log" not in (options.get("allow") or [])
setting = rules.get("no-restricted-properties")
if isinstance(setting, list) and level(setting) == 2:
    ok = ok or any(isinstance(o, dict) and o.get("object") == "console" and o.get("property") in ("log", None)
                   for o in setting[1:])
assert ok, ("console.log is not an error", rules)
EOF"""

LINT_SOLUTION = replaced(".eslintrc.json", ('    "no-unused-vars": "warn"\n',
                                            '    "no-unused-vars": "warn",\n    "no-console": "error"\n'))

# --- three copies of the web app (Kubernetes YAML; no file named) ----------------------------

DEPLOYMENT_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: registry.example.com/shop/web:1.8.2
          ports:
            - containerPort: 8000
          env:
            - name: LOG_LEVEL
              value: info
"""

SERVICE_YAML = """apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8000
"""

REPLICAS_FILES = {"k8s/deployment.yaml": DEPLOYMENT_YAML, "k8s/service.yaml": SERVICE_YAML}

# k8s/deployment.yaml, read by a small YAML reader of its own (block
# mappings and lists, a list's items at the key's indent or deeper, plain
# and quoted scalars, flow lists and mappings, comments): spec.replicas is
# the integer 3 and everything else is as before; k8s/service.yaml as it
# was. Fails replicas: "3" (a string, which Kubernetes refuses), the
# replicas put in the pod template's spec, the service changed, and a file
# that no longer reads.
REPLICAS_CHECK = unchanged(REPLICAS_FILES, "k8s/service.yaml") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(DEPLOYMENT_YAML) + r"""


""" + YAML_READER + r"""before, after = parse(ORIGINAL), parse(open("k8s/deployment.yaml").read())
replicas = after.get("spec", {}).get("replicas")
assert type(replicas) is int and replicas == 3, ("replicas", replicas)
after["spec"]["replicas"] = 1
assert after == before, after
EOF"""

REPLICAS_SOLUTION = replaced("k8s/deployment.yaml", ("  replicas: 1\n", "  replicas: 3\n"))

# --- Python 3.10 or newer (TOML; names the file) ----------------------------------------------

TIDY_PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "tidyfiles"
version = "0.4.0"
description = "Sorts a messy Downloads folder into folders by kind of file."
readme = "README.md"
dependencies = []

[project.scripts]
tidyfiles = "tidyfiles:main"
"""

TIDY_PY = '''"""Sorts the files of a folder into subfolders by kind: tidyfiles [FOLDER]"""
import shutil
import sys
from pathlib import Path


def kind(path):
    match path.suffix.lower():
        case ".jpg" | ".jpeg" | ".png" | ".gif":
            return "images"
        case ".pdf" | ".docx" | ".txt":
            return "documents"
        case ".zip" | ".tar" | ".gz":
            return "archives"
        case _:
            return "other"


def main():
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for path in sorted(folder.iterdir()):
        if path.is_file():
            (folder / kind(path)).mkdir(exist_ok=True)
            shutil.move(str(path), str(folder / kind(path) / path.name))
'''

TIDY_README = """# tidyfiles

Sorts a messy Downloads folder into images, documents, archives and other.

    pip install .
    tidyfiles ~/Downloads
"""

PYTHON_FILES = {"pyproject.toml": TIDY_PYPROJECT, "tidyfiles.py": TIDY_PY, "README.md": TIDY_README}

# pyproject.toml, read with tomllib: project.requires-python, weighed as pip
# weighs it (>=, >, <=, <, ==, !=, ~= and .* on release numbers, clauses
# joined by commas), lets in 3.10, 3.10.0, 3.10.14, 3.11, 3.12.4, 3.13 and
# 3.14 and keeps out 2.7, 3.8, 3.8.10, 3.9 and 3.9.18; every other setting
# as before (classifiers may be added); tidyfiles.py and README.md as they
# were. Fails `>3.9` (3.9.18 gets in), `==3.10.*` or `<3.13` (newer
# Pythons kept out), the version checked in tidyfiles.py instead, and the
# requirement put in classifiers alone.
PYTHON_CHECK = unchanged(PYTHON_FILES, "tidyfiles.py", "README.md") + r""" && python3 - <<'EOF'
import re, tomllib

ORIGINAL = """ + repr(TIDY_PYPROJECT) + r"""


def release(text):
    return tuple(int(n) for n in text.split("."))


def padded(a, b):
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def allows(spec, version):
    have = release(version)
    for clause in spec.split(","):
        m = re.fullmatch(r"\s*(~=|===|==|!=|<=|>=|<|>)\s*v?(\d+(?:\.\d+)*)(\.\*)?\s*", clause)
        assert m, ("cannot read", clause)
        op, want, star = m.group(1), release(m.group(2)), m.group(3)
        if star:
            assert op in ("==", "!="), clause
            ok = (have + (0,) * len(want))[:len(want)] == want
            ok = ok if op == "==" else not ok
        else:
            a, b = padded(have, want)
            ok = {"==": a == b, "===": a == b, "!=": a != b, "<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b,
                  "~=": a >= b and len(want) > 1 and have[:len(want) - 1] == want[:-1]}[op]
        if not ok:
            return False
    return True


before, after = tomllib.loads(ORIGINAL), tomllib.load(open("pyproject.toml", "rb"))
spec = after.get("project", {}).pop("requires-python", None)
assert isinstance(spec, str), ("no requires-python", after.get("project"))
after["project"].pop("classifiers", None)
assert after == before, after
for version in ["3.10", "3.10.0", "3.10.14", "3.11", "3.12.4", "3.13", "3.14"]:
    assert allows(spec, version), (spec, "keeps out", version)
for version in ["2.7", "3.8", "3.8.10", "3.9", "3.9.18"]:
    assert not allows(spec, version), (spec, "lets in", version)
EOF"""

PYTHON_SOLUTION = replaced("pyproject.toml", ('readme = "README.md"\n',
                                              'readme = "README.md"\nrequires-python = ">=3.10"\n'))

# --- flake8 and the migrations (INI; no file named) -------------------------------------------

FLAKE8 = """[flake8]
max-line-length = 100
exclude =
    .git,
    __pycache__,
    build
"""

MIGRATION_PY = """# Generated by Django 4.2.11 on 2025-03-02 10:14

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='Booking',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('court', models.PositiveSmallIntegerField()),
                ('starts_at', models.DateTimeField()),
                ('member_name', models.CharField(max_length=100, help_text='The name the booking was made under')),
            ],
        ),
    ]
"""

BOOKINGS_MODELS_PY = '''"""The tennis club's court bookings."""
from django.db import models


class Booking(models.Model):
    court = models.PositiveSmallIntegerField()
    starts_at = models.DateTimeField()
    member_name = models.CharField(max_length=100, help_text="The name the booking was made under")

    def __str__(self):
        return f"Court {self.court} at {self.starts_at:%H:%M}, {self.member_name}"
'''

FLAKE8_FILES = {".flake8": FLAKE8, "migrations/0001_initial.py": MIGRATION_PY, "models.py": BOOKINGS_MODELS_PY}

# .flake8, read with configparser: its patterns (exclude and extend-exclude,
# split on commas and blanks as flake8 splits them, and matched as flake8
# matches them: a pattern with a / made absolute from the config's folder
# and matched against the whole path, one without against the name) leave
# out the migrations folder or its file, and still leave out .git,
# __pycache__ (here and in a subfolder) and build, but not models.py;
# max-line-length as before; the migration and models.py as they were.
# Fails exclude = migrations alone (the old exclusions lost), */migrations/*
# (it needs a folder above migrations), models.py left out too, and noqa
# or per-file-ignores instead.
FLAKE8_CHECK = unchanged(FLAKE8_FILES, "migrations/0001_initial.py", "models.py") + r""" && python3 - <<'EOF'
import configparser, fnmatch, os, re

ORIGINAL = """ + repr(FLAKE8) + r"""


def read(text):
    config = configparser.RawConfigParser()
    config.read_string(text)
    return config


before, after = read(ORIGINAL), read(open(".flake8").read())
assert after.sections() == ["flake8"], after.sections()
options = dict(after["flake8"])
patterns = []
for key in ("exclude", "extend-exclude", "extend_exclude"):
    patterns += [p for p in re.split(r"[,\s]", options.pop(key, "")) if p]
assert options == {k: v for k, v in before["flake8"].items() if k != "exclude"}, options
patterns = [os.path.abspath(p).rstrip("/") if "/" in p else p for p in patterns]


def left_out(path):
    name = os.path.basename(path)
    if name not in (".", "..") and any(fnmatch.fnmatch(name, p) for p in patterns):
        return True
    return any(fnmatch.fnmatch(os.path.abspath(path), p) for p in patterns)


assert left_out("migrations") or left_out("migrations/0001_initial.py"), ("migrations still checked", patterns)
for path in [".git", "__pycache__", "bookings/__pycache__", "build"]:
    assert left_out(path), (path, "checked again", patterns)
assert not left_out("models.py") and not left_out("."), ("models.py left out", patterns)
EOF"""

FLAKE8_SOLUTION = replaced(".flake8", ("    build\n", "    build,\n    migrations\n"))

# --- a question answered from a Makefile (no file named) --------------------------------------

NOTES_MAKEFILE = """PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin

.PHONY: install uninstall

install:
\tinstall -d $(DESTDIR)$(BINDIR)
\tinstall -m 755 notes.sh $(DESTDIR)$(BINDIR)/notes

uninstall:
\trm -f $(DESTDIR)$(BINDIR)/notes
"""

NOTES_SH = """#!/usr/bin/env bash
# notes: appends a dated line to ~/notes.txt, or shows the last ten.
set -e

file="$HOME/notes.txt"
if [ $# -eq 0 ]; then
  tail -n 10 "$file"
else
  echo "$(date +%F) $*" >> "$file"
fi
"""

NOTES_README = """# notes

A tiny note taker: `notes buy stamps` adds a line, `notes` shows the last ten.

Install it with `sudo make install`.
"""

MAKE_FILES = {"Makefile": NOTES_MAKEFILE, "notes.sh": NOTES_SH, "README.md": NOTES_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer gives /usr/local/bin (as the folder, or with
# /notes after it). Fails an empty answer, /usr/bin, $(PREFIX)/bin left
# unexpanded, /usr/local/bin/notes.sh (the command loses its .sh), and a
# changed file.
MAKE_CHECK = left_alone_and_answered(MAKE_FILES, ("Makefile", "notes.sh", "README.md"), r"""
assert re.search(r"/usr/local/bin(/notes)?(?!\.?[\w/-])", answer), answer
""")

MAKE_SOLUTION = r"""echo 'In /usr/local/bin, as /usr/local/bin/notes.' > "$AGENT_ANSWER" """

CLOSING_TIME_TASKS = [
    {
        "name": "fix the leap year rule",
        "files": LEAP_FILES,
        "prompt": "Our calendar says February 1900 had 29 days, but 1900 wasn't a leap year. Fix the leap year "
                  "check.",
        "check": LEAP_CHECK,
        "solution": LEAP_SOLUTION,
    },
    {
        "name": "pad the timer's seconds",
        "files": TIMER_FILES,
        "prompt": "timer.js shows 3:5 when there are three minutes and five seconds left. It should show 3:05.",
        "check": TIMER_CHECK,
        "solution": TIMER_SOLUTION,
    },
    {
        "name": "put the date in the backup name",
        "files": BACKUP_FILES,
        "prompt": "backup.sh overwrites notes.tar.gz every time. Put the day in the name instead, like "
                  "notes-2025-03-14.tar.gz, so the older backups are kept.",
        "check": BACKUP_CHECK,
        "solution": BACKUP_SOLUTION,
    },
    {
        "name": "make the email address a link",
        "files": MAILTO_FILES,
        "prompt": "People can't click the email address at the bottom of our page. Clicking it should open "
                  "their email program.",
        "check": MAILTO_CHECK,
        "solution": MAILTO_SOLUTION,
    },
    {
        "name": "centre the post column",
        "files": COLUMN_FILES,
        "prompt": "On a wide screen the blog post's lines run across the whole window. In style.css, keep the "
                  "post at most 800px wide and centred on the page.",
        "check": COLUMN_CHECK,
        "solution": COLUMN_SOLUTION,
    },
    {
        "name": "make console.log a lint error",
        "files": LINT_FILES,
        "prompt": "Set up .eslintrc.json so that ESLint reports every console.log as an error.",
        "check": LINT_CHECK,
        "solution": LINT_SOLUTION,
    },
    {
        "name": "run three copies of the web app",
        "files": REPLICAS_FILES,
        "prompt": "The web app runs as a single pod on the cluster. Run three copies of it instead.",
        "check": REPLICAS_CHECK,
        "solution": REPLICAS_SOLUTION,
    },
    {
        "name": "require python 3.10",
        "files": PYTHON_FILES,
        "prompt": "tidyfiles needs Python 3.10 or newer, but pip happily installs it on 3.8, where it crashes. "
                  "Fix pyproject.toml so that pip refuses older Pythons.",
        "check": PYTHON_CHECK,
        "solution": PYTHON_SOLUTION,
    },
    {
        "name": "keep flake8 out of migrations",
        "files": FLAKE8_FILES,
        "prompt": "flake8 keeps complaining about the files in migrations/, which Django generates. Make it "
                  "skip that folder.",
        "check": FLAKE8_CHECK,
        "solution": FLAKE8_SOLUTION,
    },
    {
        "name": "answer from a makefile",
        "files": MAKE_FILES,
        "prompt": "Where does make install put the notes command? Just tell me, don't change anything.",
        "check": MAKE_CHECK,
        "solution": MAKE_SOLUTION,
    },
]
