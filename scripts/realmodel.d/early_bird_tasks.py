"""The early bird set of everyday tasks of scripts/realmodel (`--set early_bird`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office and night shift sets (tasks.py, new_tasks.py,
fresh_tasks.py, plain_tasks.py, daily_tasks.py, chores_tasks.py,
errands_tasks.py, odd_jobs_tasks.py, side_quests_tasks.py,
back_office_tasks.py, night_shift_tasks.py), unlike all eleven in what is
asked and in how it is done, by someone who had read no run of any of them
(no transcript, no result, no table). Where those sets lean more and more on
a language's or a tool's surprises, this one goes back to the plainest
everyday requests, the kind a junior developer does in two or three
minutes, with no trick in any of them: ten one-step requests, each a
project of two to four short files, in many kinds of file: a health
check route added to a small Node web API; a "keep" list added to a log
cleaner's JSON settings and honoured by its Python code; a to-do script
that crashes with FileNotFoundError on its first run, before its data file
exists; a CSS class renamed in two HTML pages and their stylesheet; a
requirements.txt written for the third-party packages a small Flask
project imports; a README's options table brought up to date with the
script's argparse options, without touching the code; a Node tip
calculator made to refuse a bill that is not a number above zero, with a
given message and exit status; a question answered from an SQL schema (how
long a username may be); a backup script made to keep only its five newest
backups; and a big-files list made to show sizes in B, KB and MB. The keys
are those of night_shift_tasks.py: the files, the prompt as a person would
type it (six of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before
it and passes after. Checks run the code (the web API over HTTP, the
cleaner on a folder of old and new logs, the to-do script in an empty
folder, the thumbnail script's own argument parser, the tip calculator, the
backup script on folders of old backups, the big-files list on files of
known sizes), parse the HTML and the CSS, or read the requirements and the
answer (with git to see that nothing changed), rather than look for one
spelling, and use python3 (stdlib), node, bash, git and coreutils only.

Each check is written so that the plausible wrong fixes fail it too; the
comment above each says which. How many per task: the health check 4 (a
plain-text "ok", another JSON body, the route put after the catch-all 404,
the other routes broken), the keep list 4 (audit.log written into the code,
the setting added but not read, names matched as substrings, the setting
under another key), the first run 3 (a data file committed instead, the
error caught and the script stopped, the saved list thrown away on every
start), the class 4 (the stylesheet alone, one page alone, both names kept
on the elements, a new rule beside the old), the requirements 3 (standard
library modules listed, the project's own module listed, a package
missing), the README 4 (the code changed to match the README, the removed
option left in, the old default left, the new option with a wrong
default), the bill 4 (NaN caught but not zero or less, zero or less caught
but not NaN, the message printed with status 0, a silent exit), the
question 4 answers (the display name's 64, the e-mail's 255, the minimum of
3, the right number given as a guess after saying it was not found), the
backups 4 (the old ones trimmed before the new backup is made, keeping the
five oldest, a cleanup that fails when there is nothing to delete, every
old backup deleted), the sizes 4 (1000 bytes to the KB, whole numbers, one
unit for every size, the list sorted by the printed text).
"""

from new_tasks import unchanged

# --- a health check route for a small web API -------------------------------------------------

READING_SERVER_JS = """// The reading list API: node server.js  (listens on $PORT, default 3000)
const http = require("http");
const books = require("./books.json");

function sendJson(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://localhost");
  if (req.method === "GET" && url.pathname === "/books") {
    return sendJson(res, 200, books);
  }
  const match = url.pathname.match(/^\\/books\\/(\\d+)$/);
  if (req.method === "GET" && match) {
    const book = books.find((b) => b.id === Number(match[1]));
    return book ? sendJson(res, 200, book) : sendJson(res, 404, { error: "no such book" });
  }
  sendJson(res, 404, { error: "not found" });
});

const port = Number(process.env.PORT) || 3000;
server.listen(port, () => console.log(`reading list on http://localhost:${port}`));
"""

READING_BOOKS_JSON = """[
  {"id": 1, "title": "The Left Hand of Darkness", "author": "Ursula K. Le Guin", "read": true},
  {"id": 2, "title": "Middlemarch", "author": "George Eliot", "read": false},
  {"id": 3, "title": "The Remains of the Day", "author": "Kazuo Ishiguro", "read": true}
]
"""

READING_README = """# reading list

A tiny JSON API over books.json.

    node server.js          # or PORT=8080 node server.js

| Route | Answer |
|---|---|
| `GET /books` | every book |
| `GET /books/ID` | one book, or 404 |
"""

HEALTH_FILES = {"server.js": READING_SERVER_JS, "books.json": READING_BOOKS_JSON, "README.md": READING_README}

# The server started on a free port: GET /health answers 200 with a JSON
# Content-Type and exactly {"status": "ok"}; the books, one book, a missing
# book and an unknown path still answer as before. Fails a plain-text "ok",
# another JSON body ({"ok": true}, "OK"), the route put after the catch-all
# 404 (never reached) and a rewrite that breaks the other routes.
HEALTH_CHECK = unchanged(HEALTH_FILES, "books.json") + r""" && python3 - <<'EOF'
import json, os, socket, subprocess, time, urllib.error, urllib.request

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen(["node", "server.js"], env={**os.environ, "PORT": str(port)},
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def get(path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


try:
    for _ in range(200):
        assert server.poll() is None, "the server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    status, kind, body = get("/health")
    assert status == 200, (status, body)
    assert kind.startswith("application/json"), kind
    assert json.loads(body) == {"status": "ok"}, body
    books = json.load(open("books.json"))
    status, kind, body = get("/books")
    assert status == 200 and json.loads(body) == books, (status, body)
    status, kind, body = get("/books/2")
    assert status == 200 and json.loads(body) == books[1], (status, body)
    assert get("/books/9")[0] == 404
    assert get("/nowhere")[0] == 404
finally:
    server.kill()
    server.wait()
EOF"""

HEALTH_SOLUTION = r"""python3 - <<'EOF'
text = open("server.js").read()
route = '''  if (req.method === "GET" && url.pathname === "/health") {
    return sendJson(res, 200, { status: "ok" });
  }
'''
anchor = "  const match = url.pathname"
assert anchor in text
open("server.js", "w").write(text.replace(anchor, route + anchor, 1))
EOF"""

# --- a keep list for a log cleaner ------------------------------------------------------------

CLEANUP_PY = '''"""Deletes old log files: python3 cleanup.py [CONFIG]  (CONFIG defaults to cleanup.json)"""
import json
import sys
import time
from pathlib import Path


def old_files(folder, max_age_days):
    """The files in folder last changed more than max_age_days ago."""
    cutoff = time.time() - max_age_days * 86400
    return [p for p in sorted(Path(folder).iterdir()) if p.is_file() and p.stat().st_mtime < cutoff]


def main(config_path="cleanup.json"):
    with open(config_path) as f:
        config = json.load(f)
    doomed = old_files(config["folder"], config["max_age_days"])
    for path in doomed:
        path.unlink()
    print(f"deleted {len(doomed)} old files")


if __name__ == "__main__":
    main(*sys.argv[1:2])
'''

CLEANUP_JSON = """{
  "folder": "logs",
  "max_age_days": 14
}
"""

CLEANUP_README = """# log cleanup

Run nightly from cron: `python3 cleanup.py`. It deletes the files in the
log folder that have not changed for a while. Settings, in cleanup.json:

- `folder`: the log folder
- `max_age_days`: how many days a file may go unchanged before it is deleted
"""

KEEP_FILES = {"cleanup.py": CLEANUP_PY, "cleanup.json": CLEANUP_JSON, "README.md": CLEANUP_README}

# cleanup.json gains exactly "keep": ["audit.log"] beside its two settings;
# then the cleaner, on a folder of old and new logs with a config of its own
# keeping audit.log and payments.log, deletes the other old files and keeps
# those two and the new one, and with an empty keep list deletes them
# too. Fails audit.log written into the code, the setting added to the JSON
# but not read, names matched as substrings or prefixes (old-audit.log,
# audit.log.1) and the setting under another key.
KEEP_CHECK = r"""python3 - <<'EOF'
import json, os, shutil, subprocess, tempfile, time

assert json.load(open("cleanup.json")) == {"folder": "logs", "max_age_days": 14, "keep": ["audit.log"]}, \
    open("cleanup.json").read()

old = ["audit.log", "payments.log", "app.log", "old-audit.log", "audit.log.1"]


def clean(keep):
    with tempfile.TemporaryDirectory() as d:
        shutil.copy("cleanup.py", d)
        with open(f"{d}/settings.json", "w") as f:
            json.dump({"folder": "logs", "max_age_days": 14, "keep": keep}, f)
        os.mkdir(f"{d}/logs")
        a_month_ago = time.time() - 30 * 86400
        for name in old + ["today.log"]:
            with open(f"{d}/logs/{name}", "w") as f:
                f.write("a line\n")
            if name != "today.log":
                os.utime(f"{d}/logs/{name}", (a_month_ago, a_month_ago))
        r = subprocess.run(["python3", "cleanup.py", "settings.json"], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return sorted(os.listdir(f"{d}/logs"))


assert clean(["audit.log", "payments.log"]) == ["audit.log", "payments.log", "today.log"], \
    clean(["audit.log", "payments.log"])
assert clean([]) == ["today.log"], clean([])
EOF"""

KEEP_SOLUTION = r"""python3 - <<'EOF'
import json
config = json.load(open("cleanup.json"))
config["keep"] = ["audit.log"]
open("cleanup.json", "w").write(json.dumps(config, indent=2) + "\n")
text = open("cleanup.py").read()
old = '    doomed = old_files(config["folder"], config["max_age_days"])\n'
new = ('    keep = set(config.get("keep", []))\n'
       '    doomed = [p for p in old_files(config["folder"], config["max_age_days"]) if p.name not in keep]\n')
assert old in text
open("cleanup.py", "w").write(text.replace(old, new))
EOF"""

# --- a to-do script's first run -------------------------------------------------------------

TODO_PY = '''"""A tiny to-do list: python3 todo.py add TEXT | done N | list"""
import json
import sys

FILE = "todos.json"


def load():
    with open(FILE) as f:
        return json.load(f)


def save(todos):
    with open(FILE, "w") as f:
        json.dump(todos, f, indent=2)


def main(args):
    todos = load()
    if args[:1] == ["add"] and len(args) > 1:
        todos.append({"text": " ".join(args[1:]), "done": False})
        save(todos)
        print(f"added #{len(todos)}")
    elif args[:1] == ["done"] and len(args) == 2:
        todos[int(args[1]) - 1]["done"] = True
        save(todos)
    elif args == ["list"]:
        for i, todo in enumerate(todos, 1):
            print(f"{i}. [{'x' if todo['done'] else ' '}] {todo['text']}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
'''

TODO_README = """# todo

    python3 todo.py add buy stamps
    python3 todo.py list
    python3 todo.py done 1

The list is kept in todos.json, in the folder you run it from.
"""

TODO_FILES = {"todo.py": TODO_PY, "README.md": TODO_README, ".gitignore": "todos.json\n__pycache__/\n"}

# The script alone in an empty folder: list, add, add and done all work, and
# the list then shows both items; in a folder whose todos.json already
# holds an item, a new one is added after it. Fails a todos.json committed
# next to the script (the check copies the script alone), the error caught
# and the script stopped with a message, and a list that starts empty on
# every run.
TODO_CHECK = r"""python3 - <<'EOF'
import json, shutil, subprocess, tempfile


def todo(where, *args):
    r = subprocess.run(["python3", "todo.py", *args], cwd=where, capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


with tempfile.TemporaryDirectory() as d:
    shutil.copy("todo.py", d)
    todo(d, "list")
with tempfile.TemporaryDirectory() as d:
    shutil.copy("todo.py", d)
    todo(d, "add", "buy", "milk")
    todo(d, "add", "call mum")
    todo(d, "done", "1")
    out = todo(d, "list")
    assert out == "1. [x] buy milk\n2. [ ] call mum\n", out
with tempfile.TemporaryDirectory() as d:
    shutil.copy("todo.py", d)
    with open(f"{d}/todos.json", "w") as f:
        json.dump([{"text": "water the plants", "done": True}], f)
    todo(d, "add", "pay the rent")
    out = todo(d, "list")
    assert out == "1. [x] water the plants\n2. [ ] pay the rent\n", out
EOF"""

TODO_SOLUTION = r"""python3 - <<'EOF'
text = open("todo.py").read()
old = '''    with open(FILE) as f:
        return json.load(f)
'''
new = '''    try:
        with open(FILE) as f:
            return json.load(f)
    except FileNotFoundError:
        return []
'''
assert old in text
open("todo.py", "w").write(text.replace(old, new))
EOF"""

# --- a CSS class renamed in the pages and the stylesheet ----------------------------------------

POTTERY_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Clay &amp; Co. pottery classes</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header>
    <h1>Clay &amp; Co.</h1>
    <a class="btn-primary" href="signup.html">Book a class</a>
  </header>
  <main>
    <section class="card">
      <h2>Beginners' wheel</h2>
      <p>Six Tuesday evenings, clay and firing included.</p>
      <a class="btn-primary small" href="signup.html?course=wheel">Book this course</a>
    </section>
    <section class="card">
      <h2>Hand building</h2>
      <p>Pinch pots, coils and slabs on Saturday mornings.</p>
      <a class="btn-secondary small" href="#hand-building">Read more</a>
    </section>
  </main>
</body>
</html>
"""

POTTERY_SIGNUP_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Book a class</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <form class="card" action="/book" method="post">
    <label>Name <input name="name" required></label>
    <label>Email <input name="email" type="email" required></label>
    <button class="btn-primary" type="submit">Book my place</button>
    <a class="btn-secondary" href="index.html">Back</a>
  </form>
</body>
</html>
"""

POTTERY_STYLE_CSS = """body {
  font-family: Georgia, serif;
  max-width: 40rem;
  margin: 0 auto;
  color: #3b2f2a;
}

.card {
  border: 1px solid #d8c8b8;
  border-radius: 8px;
  padding: 1rem;
  margin: 1rem 0;
}

.btn-primary {
  background: #b5562f;
  color: white;
  padding: 0.5rem 1rem;
  border: none;
  border-radius: 4px;
  text-decoration: none;
}

.btn-primary:hover {
  background: #8f4124;
}

.btn-secondary {
  color: #b5562f;
  padding: 0.5rem 1rem;
  border: 1px solid #b5562f;
  border-radius: 4px;
  text-decoration: none;
}

.small {
  font-size: 0.85rem;
}

.card .btn-primary {
  display: inline-block;
  margin-top: 0.5rem;
}
"""

RENAME_FILES = {"index.html": POTTERY_INDEX_HTML, "signup.html": POTTERY_SIGNUP_HTML, "style.css": POTTERY_STYLE_CSS}

# Python's HTML reader on both pages: every tag has the classes it had,
# button-main where btn-primary was; the stylesheet's rules, read as
# selectors and sets of declarations (whitespace aside), are the old ones
# with the class renamed, in the same order; btn-primary is left nowhere.
# Fails the stylesheet renamed alone, one page renamed alone, both classes
# kept on the elements, and a new .button-main rule beside the old ones.
RENAME_CHECK = r"""python3 - <<'EOF'
import re
from html.parser import HTMLParser

OLD = {"index.html": """ + repr(POTTERY_INDEX_HTML) + """, "signup.html": """ + repr(POTTERY_SIGNUP_HTML) + """,
       "style.css": """ + repr(POTTERY_STYLE_CSS) + r"""}


class Classes(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        classes = sorted((dict(attrs).get("class") or "").split())
        self.tags.append((tag, classes))


def classes(text):
    p = Classes()
    p.feed(text)
    return p.tags


def rules(css):
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        selector = ", ".join(" ".join(s.split()) for s in selector.split(","))
        decls = set()
        for d in body.split(";"):
            if d.strip():
                prop, _, value = d.partition(":")
                decls.add((prop.strip(), " ".join(value.split())))
        out.append((selector, decls))
    return out


def renamed(tags):
    return [(t, sorted("button-main" if c == "btn-primary" else c for c in cs)) for t, cs in tags]


for page in ("index.html", "signup.html"):
    text = open(page).read()
    assert "btn-primary" not in text, page
    assert classes(text) == renamed(classes(OLD[page])), (page, classes(text))
css = open("style.css").read()
assert "btn-primary" not in css
assert rules(css) == rules(OLD["style.css"].replace("btn-primary", "button-main")), rules(css)
EOF"""

RENAME_SOLUTION = "sed -i 's/btn-primary/button-main/g' index.html signup.html style.css"

# --- a requirements.txt for a small Flask project -----------------------------------------------

WEATHER_APP_PY = '''"""The weather page: flask --app app run"""
from flask import Flask, render_template_string

from forecast import today

app = Flask(__name__)

PAGE = "<h1>{{ city }}</h1><p>{{ summary }}, up to {{ high }} degrees</p>"


@app.route("/<city>")
def city_page(city):
    return render_template_string(PAGE, city=city, **today(city))
'''

WEATHER_FORECAST_PY = '''"""Today's forecast for a city, from the forecast API."""
import os
from datetime import date

import requests

API = os.environ.get("FORECAST_API", "https://api.example.com/forecast")


def today(city):
    r = requests.get(API, params={"city": city, "date": date.today().isoformat()}, timeout=10)
    r.raise_for_status()
    data = r.json()
    return {"summary": data["summary"], "high": round(data["high"])}
'''

WEATHER_CLI_PY = '''"""Prints today's forecast: python3 cli.py CITY [--json]"""
import json

import click

from forecast import today


@click.command()
@click.argument("city")
@click.option("--json", "as_json", is_flag=True, help="Print the forecast as JSON.")
def main(city, as_json):
    weather = today(city)
    if as_json:
        click.echo(json.dumps(weather))
    else:
        click.echo(f"{city}: {weather['summary']}, up to {weather['high']} degrees")


if __name__ == "__main__":
    main()
'''

WEATHER_README = """# weather

Today's forecast, as a web page or on the command line.

    pip install -r requirements.txt
    flask --app app run         # then open http://127.0.0.1:5000/Lisbon
    python3 cli.py Lisbon
"""

REQUIREMENTS_FILES = {"app.py": WEATHER_APP_PY, "forecast.py": WEATHER_FORECAST_PY, "cli.py": WEATHER_CLI_PY,
                      "README.md": WEATHER_README}

# requirements.txt, read line by line as pip reads names (comments, blank
# lines, extras and version specifiers allowed), names exactly flask,
# requests and click, in any case; the code is unchanged. Fails standard
# library modules listed (os, json, datetime), the project's own forecast
# module listed, and one of the three left out.
REQUIREMENTS_CHECK = unchanged(REQUIREMENTS_FILES, "app.py", "forecast.py", "cli.py") + r""" && python3 - <<'EOF'
import re

names = set()
for line in open("requirements.txt"):
    line = line.split("#")[0].strip()
    if not line:
        continue
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[\w,\s-]*\])?\s*([<>=!~]=?\s*[\w.*]+\s*,?\s*)*", line)
    assert m, f"not a requirement: {line!r}"
    names.add(re.sub(r"[-_.]+", "-", m.group(1).lower()))
assert names == {"flask", "requests", "click"}, names
EOF"""

REQUIREMENTS_SOLUTION = "printf 'click\\nflask\\nrequests\\n' > requirements.txt"

# --- a README brought up to date with the code ------------------------------------------------

THUMBS_PY = '''"""Makes thumbnails of the .jpg photos in a folder, into FOLDER/thumbs/."""
import argparse
from pathlib import Path


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path, help="the folder of photos")
    parser.add_argument("--size", type=int, default=320, help="longest side of a thumbnail, in pixels")
    parser.add_argument("--format", choices=["jpeg", "png", "webp"], default="webp",
                        help="file format of the thumbnails")
    parser.add_argument("--quality", type=int, default=80, help="compression quality, 1 to 100")
    return parser


def make_thumbs(folder, size, fmt, quality):
    from PIL import Image  # pip install pillow

    out = folder / "thumbs"
    out.mkdir(exist_ok=True)
    for photo in sorted(folder.glob("*.jpg")):
        with Image.open(photo) as image:
            image.thumbnail((size, size))
            image.save(out / f"{photo.stem}.{fmt}", quality=quality)


def main():
    args = build_parser().parse_args()
    make_thumbs(args.folder, args.size, args.format, args.quality)


if __name__ == "__main__":
    main()
'''

THUMBS_README = """# thumbs

Makes small previews of a folder of photos for the family album site.

    pip install pillow
    python3 thumbs.py holiday-2024/ --size 128

## Options

| Option | Default | What it does |
|---|---|---|
| `--size` | 200 | Longest side of a thumbnail, in pixels |
| `--quality` | 80 | Compression quality, 1 to 100 |
| `--out` | `thumbs/` | Folder to write the thumbnails into |
"""

README_FILES = {"thumbs.py": THUMBS_PY, "README.md": THUMBS_README}

# thumbs.py unchanged; its own argument parser gives the options and their
# defaults, and the README mentions each option on a line that also gives
# its default (--size 320, --format webp, --quality 80), no line about
# --size still says 200, and the README mentions no option the parser does
# not take (--out). Fails the code changed to match the README, --out left
# in, --size's old default left, and --format added with another default.
README_CHECK = unchanged(README_FILES, "thumbs.py") + r""" && python3 - <<'EOF'
import re, sys

sys.path.insert(0, ".")
import thumbs

defaults = {s: a.default for a in thumbs.build_parser()._actions for s in a.option_strings if s != "--help"}
defaults = {s: d for s, d in defaults.items() if s.startswith("--")}
assert defaults == {"--size": 320, "--format": "webp", "--quality": 80}, defaults
readme = open("README.md").read()
lines = readme.splitlines()
for option, default in defaults.items():
    about = [l for l in lines if re.search(re.escape(option) + r"(?![\w-])", l)]
    assert about, f"{option} is not in the README"
    assert any(re.search(r"(?<![\w.-])" + re.escape(str(default)) + r"(?![\w-])", l) for l in about), \
        (option, default, about)
assert not any(re.search(r"(?<![\w.-])200(?![\w-])", l) for l in lines if "--size" in l), lines
unknown = set(re.findall(r"--[A-Za-z][\w-]*", readme)) - set(defaults) - {"--help"}
assert not unknown, unknown
EOF"""

README_SOLUTION = r"""python3 - <<'EOF'
text = open("README.md").read()
old = '''| `--size` | 200 | Longest side of a thumbnail, in pixels |
| `--quality` | 80 | Compression quality, 1 to 100 |
| `--out` | `thumbs/` | Folder to write the thumbnails into |
'''
new = '''| `--size` | 320 | Longest side of a thumbnail, in pixels |
| `--format` | webp | File format of the thumbnails: jpeg, png or webp |
| `--quality` | 80 | Compression quality, 1 to 100 |

The thumbnails go into a thumbs/ folder inside the photo folder.
'''
assert old in text
open("README.md", "w").write(text.replace(old, new))
EOF"""

# --- a tip calculator that takes any bill ------------------------------------------------------

TIP_JS = """// Tip calculator: node tip.js BILL [PERCENT]   (PERCENT defaults to 15)
const bill = Number(process.argv[2]);
const percent = process.argv[3] === undefined ? 15 : Number(process.argv[3]);

const tip = (bill * percent) / 100;
console.log(`tip (${percent}%): ${tip.toFixed(2)}`);
console.log(`total: ${(bill + tip).toFixed(2)}`);
"""

TIP_README = """# tip

    node tip.js 42.50        # 15%
    node tip.js 42.50 20     # 20%
"""

TIP_FILES = {"tip.js": TIP_JS, "README.md": TIP_README}

# node tip.js with a bill of abc, -20, 0, none at all, abc with a percent
# and -5 with a percent: exit status 1, the message on stdout or stderr, no
# tip printed; 40, 40 at 20% and 0.5 at 10% still print their tip and
# total. Fails a check for NaN alone (-20, 0), one for zero or less alone
# (abc, no bill), the message printed with status 0, and process.exit(1)
# without the message.
TIP_CHECK = r"""python3 - <<'EOF'
import subprocess


def tip(*args):
    r = subprocess.run(["node", "tip.js", *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


for args in (["abc"], ["-20"], ["0"], [], ["abc", "20"], ["-5", "10"]):
    code, out, err = tip(*args)
    assert code == 1, (args, code, out, err)
    assert "bill must be a positive number" in out + err, (args, out, err)
    assert "tip (" not in out and "total" not in out, (args, out)
for args, want in ((["40"], "tip (15%): 6.00\ntotal: 46.00\n"), (["40", "20"], "tip (20%): 8.00\ntotal: 48.00\n"),
                   (["0.5", "10"], "tip (10%): 0.05\ntotal: 0.55\n")):
    code, out, err = tip(*args)
    assert (code, out) == (0, want), (args, code, out, err)
EOF"""

TIP_SOLUTION = r"""python3 - <<'EOF'
text = open("tip.js").read()
old = "const percent ="
new = '''if (!(bill > 0)) {
  console.error("bill must be a positive number");
  process.exit(1);
}
const percent ='''
assert old in text
open("tip.js", "w").write(text.replace(old, new, 1))
EOF"""

# --- a question answered from an SQL schema ---------------------------------------------------

FORUM_SCHEMA_SQL = """-- The forum's tables (PostgreSQL): psql forum < schema.sql

CREATE TABLE users (
    id           SERIAL PRIMARY KEY,
    username     VARCHAR(32)  NOT NULL UNIQUE,
    display_name VARCHAR(64),
    email        VARCHAR(255) NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ  NOT NULL DEFAULT now()
);

CREATE TABLE posts (
    id         SERIAL PRIMARY KEY,
    user_id    INTEGER      NOT NULL REFERENCES users (id),
    title      VARCHAR(120) NOT NULL,
    body       TEXT         NOT NULL,
    created_at TIMESTAMPTZ  NOT NULL DEFAULT now()
);

CREATE INDEX posts_by_user ON posts (user_id, created_at);
"""

FORUM_SIGNUP_PY = '''"""Signing up for the forum."""


def sign_up(db, username, email, display_name=None):
    username = username.strip()
    if len(username) < 3:
        raise ValueError("username too short")
    if "@" not in email:
        raise ValueError("that is not an e-mail address")
    with db.cursor() as cur:
        cur.execute(
            "INSERT INTO users (username, display_name, email) VALUES (%s, %s, %s) RETURNING id",
            (username, display_name or username, email.strip().lower()),
        )
        return cur.fetchone()[0]
'''

FORUM_README = """# forum

The club's discussion forum. Create the database once:

    createdb forum
    psql forum < schema.sql
"""

QUESTION_FILES = {"schema.sql": FORUM_SCHEMA_SQL, "signup.py": FORUM_SIGNUP_PY, "README.md": FORUM_README}

# 32, the length of the username column (the code only sets a minimum of
# 3): the answer names it, says nowhere that it found nothing or is
# guessing, and nothing changed. Fails 64 (the display name), 255 (the
# e-mail), 3 (the minimum), and "I couldn't find a limit, but 32 is
# common".
QUESTION_CHECK = r"""test -z "$(git status --porcelain --untracked-files=all)" && python3 - <<'EOF'
import os, re

answer = open(os.environ["AGENT_ANSWER"]).read()
assert re.search(r"(?<![\d.])32(?!\d|\.\d)", answer), answer
negation = re.compile(
    r"(\bnot\b|n't|\bunable to\b|\bcannot\b|\bcan not\b)\s+(\w+\s+){0,3}?"
    r"(find|found|locate|see|spot|determine|tell|exist|specif\w*|defin\w*|mention\w*|sure|certain)"
    r"|\bno such\b|\bthere (is|are) no\b|\bthere's no\b|\bno (information|mention|definition|explicit)\b"
    r"|\bguess",
    re.I)
assert not negation.search(answer), answer
EOF"""

QUESTION_SOLUTION = ('echo "A username can be at most 32 characters long: schema.sql declares it as '
                     'username VARCHAR(32)." > "$AGENT_ANSWER"')

# --- a backup script that keeps its five newest backups ------------------------------------------

BACKUP_SH = """#!/usr/bin/env bash
# Copies the address book to backups/contacts-YYYYMMDD-HHMMSS.json: bash backup.sh
set -euo pipefail
cd "$(dirname "$0")"

mkdir -p backups
name="backups/contacts-$(date +%Y%m%d-%H%M%S).json"
cp data/contacts.json "$name"
echo "saved $name"
"""

CONTACTS_JSON = """[
  {"name": "Ines Duarte", "phone": "+351 912 345 678", "email": "ines@example.com"},
  {"name": "Tomasz Nowak", "phone": "+48 601 234 567", "email": "tomasz@example.com"}
]
"""

BACKUP_FILES = {"backup.sh": BACKUP_SH, "data/contacts.json": CONTACTS_JSON, ".gitignore": "backups/\n"}

# The script in a fresh folder, run on no backups folder at all, on three
# old backups and on eight (their names and times a day apart, in March
# 2024): it succeeds each time and leaves one new backup and, of the old
# ones, all three, and the newest four of eight. Fails the old backups
# trimmed to five before the new one is made (six left), the five oldest
# kept, a cleanup that fails when there is nothing to delete (xargs rm
# with no file), and every old backup deleted.
BACKUP_CHECK = unchanged(BACKUP_FILES, "data/contacts.json") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile, time


def backups_after(old):
    with tempfile.TemporaryDirectory() as d:
        shutil.copy("backup.sh", d)
        shutil.copytree("data", f"{d}/data")
        if old is not None:
            os.mkdir(f"{d}/backups")
            for name in old:
                with open(f"{d}/backups/{name}", "wb") as f:
                    f.write(b"[]\n")
                t = time.mktime(time.strptime(name, "contacts-%Y%m%d-%H%M%S.json"))
                os.utime(f"{d}/backups/{name}", (t, t))
        r = subprocess.run(["bash", "backup.sh"], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, (old, r.stdout, r.stderr)
        assert os.listdir(f"{d}/data") == ["contacts.json"]
        return sorted(os.listdir(f"{d}/backups"))


def march(days):
    return [f"contacts-202403{day:02d}-233000.json" for day in days]


got = backups_after(None)
assert len(got) == 1 and got[0].startswith("contacts-"), got
for old, kept in ((march(range(1, 4)), march(range(1, 4))), (march(range(1, 9)), march(range(5, 9)))):
    got = backups_after(old)
    new = [name for name in got if name not in old]
    assert len(new) == 1 and got == sorted(kept + new), (old, got)
EOF"""

BACKUP_SOLUTION = r"""python3 - <<'EOF'
text = open("backup.sh").read()
old = 'cp data/contacts.json "$name"\n'
new = old + '''# keep the five newest backups
ls -1 backups/contacts-*.json | sort -r | tail -n +6 | while read -r stale; do
    rm -- "$stale"
done
'''
assert old in text
open("backup.sh", "w").write(text.replace(old, new))
EOF"""

# --- a big-files list in B, KB and MB ---------------------------------------------------------

BIGGEST_PY = '''"""Lists the biggest files under a folder: python3 biggest.py [FOLDER] [N]"""
import os
import sys


def sizes(folder):
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(root, name)
            yield os.path.getsize(path), path


def main(folder=".", n="10"):
    for size, path in sorted(sizes(folder), reverse=True)[: int(n)]:
        print(f"{size:>12}  {path}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
'''

BIGGEST_README = """# biggest

What is filling up the disk?

    python3 biggest.py ~/Downloads 20
"""

SIZES_FILES = {"biggest.py": BIGGEST_PY, "README.md": BIGGEST_README}

# biggest.py on a folder of ten files of known sizes, some in a subfolder:
# one line per file, biggest first, each with its path and its size as
# 0 B, 512 B, 1023 B, 1.0 KB, 1.5 KB, 10.3 KB, 1.0 MB, 1.5 MB, 4.8 MB and
# 50.0 MB (the space before the unit optional, the columns in any order).
# Fails 1000 bytes to the KB (10.5 KB, 5.0 MB), whole numbers (2 KB), KB
# or MB for every size, and the list sorted by the printed text.
SIZES_CHECK = r"""python3 - <<'EOF'
import os, re, subprocess, tempfile

files = {"films/big.iso": 52428800, "films/trailer.mp4": 5000000, "photo.jpg": 1572864, "song.mp3": 1048576,
         "notes.txt": 10547, "todo.md": 1536, "key.bin": 1024, "almost.bin": 1023, "small.txt": 512,
         "empty.txt": 0}
want = ["50.0 MB", "4.8 MB", "1.5 MB", "1.0 MB", "10.3 KB", "1.5 KB", "1.0 KB", "1023 B", "512 B", "0 B"]
with tempfile.TemporaryDirectory() as d:
    os.mkdir(f"{d}/films")
    for name, size in files.items():
        with open(f"{d}/{name}", "wb") as f:
            f.truncate(size)
    r = subprocess.run(["python3", "biggest.py", d, "20"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(files), r.stdout
    for line, name, size in zip(lines, files, want):
        path = os.path.join(d, name)
        assert path in line, (line, path)
        shown = " ".join(line.replace(path, " ").split())
        assert shown in (size, size.replace(" ", "")), (line, size)
EOF"""

SIZES_SOLUTION = r"""python3 - <<'EOF'
text = open("biggest.py").read()
old = "def main("
new = '''def readable(size):
    # a size in bytes as B, KB or MB (1 KB is 1024 bytes)
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def main('''
text = text.replace(old, new).replace('print(f"{size:>12}  {path}")', 'print(f"{readable(size):>10}  {path}")')
open("biggest.py", "w").write(text)
EOF"""

EARLY_BIRD_TASKS = [
    {
        "name": "add a health check route",
        "files": HEALTH_FILES,
        "prompt": "Add a health check to the API: GET /health should answer 200 with the JSON "
                  "{\"status\": \"ok\"}.",
        "check": HEALTH_CHECK,
        "solution": HEALTH_SOLUTION,
    },
    {
        "name": "add a keep list to the cleanup",
        "files": KEEP_FILES,
        "prompt": "Add a \"keep\" setting to cleanup.json: a list of file names that the cleanup never deletes, "
                  "however old they are. Put audit.log in it.",
        "check": KEEP_CHECK,
        "solution": KEEP_SOLUTION,
    },
    {
        "name": "start without a data file",
        "files": TODO_FILES,
        "prompt": "On a fresh checkout, python3 todo.py add \"buy milk\" crashes with FileNotFoundError: "
                  "[Errno 2] No such file or directory: 'todos.json'. When there's no todos.json yet, it should "
                  "just start with an empty list.",
        "check": TODO_CHECK,
        "solution": TODO_SOLUTION,
    },
    {
        "name": "rename a css class",
        "files": RENAME_FILES,
        "prompt": "Rename the CSS class btn-primary to button-main everywhere it's used.",
        "check": RENAME_CHECK,
        "solution": RENAME_SOLUTION,
    },
    {
        "name": "write a requirements file",
        "files": REQUIREMENTS_FILES,
        "prompt": "There's no requirements.txt yet, so pip install -r requirements.txt fails. Add one that "
                  "lists the third-party packages the code imports (just the names, no versions needed).",
        "check": REQUIREMENTS_CHECK,
        "solution": REQUIREMENTS_SOLUTION,
    },
    {
        "name": "bring the readme up to date",
        "files": README_FILES,
        "prompt": "The options table in the README is out of date: thumbs.py has changed since. Update the "
                  "README so it matches what the script actually takes, with the right defaults. Don't change "
                  "the code.",
        "check": README_CHECK,
        "solution": README_SOLUTION,
    },
    {
        "name": "refuse a bad bill",
        "files": TIP_FILES,
        "prompt": "The tip calculator happily prints \"tip (15%): NaN\" when you give it something like abc as "
                  "the bill. If the bill isn't a number above zero, it should print \"bill must be a positive "
                  "number\" and exit with status 1 instead.",
        "check": TIP_CHECK,
        "solution": TIP_SOLUTION,
    },
    {
        "name": "answer from a sql schema",
        "files": QUESTION_FILES,
        "prompt": "How many characters can a username have at most? Just tell me, don't change anything.",
        "check": QUESTION_CHECK,
        "solution": QUESTION_SOLUTION,
    },
    {
        "name": "keep the five newest backups",
        "files": BACKUP_FILES,
        "prompt": "The backups folder keeps growing. After each backup, delete the older ones so that only the "
                  "five newest backups are left.",
        "check": BACKUP_CHECK,
        "solution": BACKUP_SOLUTION,
    },
    {
        "name": "show readable file sizes",
        "files": SIZES_FILES,
        "prompt": "The big-files list shows sizes as raw byte counts like 1572864, which nobody can read. Show "
                  "them as B, KB or MB instead, where 1 KB is 1024 bytes: under 1 KB as whole bytes (\"512 B\"), "
                  "under 1024 KB in KB with one decimal (1536 bytes is \"1.5 KB\"), and anything bigger in MB "
                  "with one decimal (1572864 bytes is \"1.5 MB\").",
        "check": SIZES_CHECK,
        "solution": SIZES_SOLUTION,
    },
]
