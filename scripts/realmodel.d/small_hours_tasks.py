"""The small hours set of everyday tasks of scripts/realmodel (`--set small_hours`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break, second cup,
last orders, closing time and last call sets (tasks.py, new_tasks.py,
fresh_tasks.py, plain_tasks.py, daily_tasks.py, chores_tasks.py,
errands_tasks.py, odd_jobs_tasks.py, side_quests_tasks.py,
back_office_tasks.py, night_shift_tasks.py, early_bird_tasks.py,
tea_break_tasks.py, second_cup_tasks.py, last_orders_tasks.py,
closing_time_tasks.py, last_call_tasks.py), unlike all seventeen in what is
asked, by someone who had read no run of any of them (no transcript, no
result, no table, no note on one). It is as plain as the last call set:
the kind of request a junior developer finishes in five minutes in the
small hours, each a project of one to three short files (under 40 lines
each), each done by changing or adding a few lines in one file, in ten
kinds of file: a Python site status check that hangs on a site that never
answers, made to give up after 5 seconds and call it down; a JavaScript
scoreboard made to show 1234567 as 1,234,567; a bash deploy script made
to refuse to deploy from any branch but main; a Dockerfile made to run the
app as a user other than root; an HTML contact form whose Email label is
tied to its box as the Name label is; the photos in a blog post made to
shrink to fit the column in CSS; VS Code made to format on save for the
whole project in .vscode/settings.json (JSON); npm packages added to a
Dependabot YAML config, weekly; a Markdown CHANGELOG's Unreleased section
made the 1.4.0 release; and a question answered from a systemd timer (when
the backup runs). The keys are those of last_call_tasks.py: the files, the
prompt as a person would type it (five of the ten name no file), a check,
and a solution that `scripts/realmodel --check-tasks` applies to prove the
check fails before it and passes after. Checks run the code (the status
check in Python against local servers that answer, answer slowly, refuse
and never answer, timed; the scoreboard in node under three locales; the
deploy script in bash on a copy with branches of its own and rsync stood
in for), parse the file (the Dockerfile with a small reader of its own,
instruction by instruction; the form with html.parser, its labels tied to
their controls as a browser ties them; the CSS with last call's small
cascade on a phone and a laptop; the VS Code settings as VS Code reads
them, comments, trailing commas and nested keys allowed; the Dependabot
config with second cup's small YAML reader; the CHANGELOG section by
section) or read the answer (with git to see that nothing changed), rather
than look for one spelling, and use python3 (stdlib), node, bash, git and
coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which: a timeout of a
minute, or one so short that a slow site is called down, or the whole run
stopped after 5 seconds; toLocaleString() with no locale (a German machine
shows 1.234.567), or a regular expression with no end to it
(1,2,345); `git branch | grep main`, a branch with main in its name let
through, or a warning that deploys anyway; USER right after FROM (the
installs then fail), USER root, or a user the image does not have; the
label's for naming the field's name instead of its id, or the input's id
changed to fit (the stylesheet's #email then misses it); width: 100% (the
small map blown up), max-width with no height: auto (the photo squashed),
or the rule for phones alone; "true" in quotes, one language's section
alone, or the setting put in Prettier's config; "node" or "yarn" for npm,
"week", or the npm lines put into the Actions entry; the Unreleased
heading renamed with no new one above, the release put at the bottom, or
the date written another way; and every day, or 3:30 in the afternoon,
given as the answer.
"""

from new_tasks import left_alone_and_answered, unchanged
from tea_break_tasks import replaced
from second_cup_tasks import YAML_READER
from closing_time_tasks import CSS_CASCADE

# --- give up on a site that never answers (Python; no file named) -----------------------------

STATUS_PY = '''"""Says which of our sites are up: python3 status.py [SITES_FILE]"""
import sys
import urllib.request


def is_up(url):
    try:
        with urllib.request.urlopen(url) as response:
            return response.status == 200
    except OSError:  # refused, no such host, an HTTP error...
        return False


def main(path="sites.txt"):
    with open(path) as f:
        sites = [line.strip() for line in f if line.strip()]
    for url in sites:
        print(f"{'up' if is_up(url) else 'DOWN':<5} {url}")


if __name__ == "__main__":
    main(*sys.argv[1:])
'''

SITES_TXT = """https://www.example.com/
https://shop.example.com/health
https://api.example.com/status
"""

TIMEOUT_FILES = {"status.py": STATUS_PY, "sites.txt": SITES_TXT}

# python3 status.py on a list of five local sites (one that answers, one
# that takes the connection and never answers, one that answers after 2
# seconds, one that refuses, one more that answers; no proxy): it exits 0
# with no traceback, says up, down, up, down, up (in any case) for them in
# that order, and is done in under 12 seconds; sites.txt as it was. Fails
# no timeout (the run hangs), a timeout of 30 or 60 seconds (too slow), one
# of 1 or 2 seconds (the slow site is called down), and an alarm that ends
# the whole run after 5 seconds (the sites after the silent one are never
# checked).
TIMEOUT_CHECK = unchanged(TIMEOUT_FILES, "sites.txt") + r""" && python3 - <<'EOF'
import http.server, os, socket, subprocess, tempfile, threading, time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/slow":
            time.sleep(2)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
fine = f"http://127.0.0.1:{server.server_address[1]}"
silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(16)  # connections are taken in, and never answered
closed = socket.socket()
closed.bind(("127.0.0.1", 0))
refused = f"http://127.0.0.1:{closed.getsockname()[1]}/"
closed.close()
sites = [(fine + "/", "up"), (f"http://127.0.0.1:{silent.getsockname()[1]}/", "down"), (fine + "/slow", "up"),
         (refused, "down"), (fine + "/health", "up")]
env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "sites.txt")
    with open(path, "w") as f:
        f.write("".join(url + "\n" for url, _ in sites))
    start = time.monotonic()
    try:
        r = subprocess.run(["python3", "status.py", path], capture_output=True, text=True, timeout=25, env=env,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError("status.py still hangs after 25 seconds")
    took = time.monotonic() - start
assert r.returncode == 0 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
got = [line.split() for line in r.stdout.splitlines() if line.strip()]
assert [(url, state.lower()) for state, url in got] == sites, r.stdout
assert took < 12, ("took", round(took, 1), "seconds")
EOF"""

TIMEOUT_SOLUTION = replaced("status.py", ("urllib.request.urlopen(url) as response",
                                          "urllib.request.urlopen(url, timeout=5) as response"))

# --- commas in big scores (JavaScript; names the file) ----------------------------------------

SCORE_JS = """// Prints the scoreboard: node score.js NAME POINTS [NAME POINTS ...]
function formatPoints(points) {
  return String(points);
}

function scoreLine(name, points) {
  return `${name.padEnd(12)} ${formatPoints(points).padStart(12)}`;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  for (let i = 0; i + 1 < args.length; i += 2) {
    console.log(scoreLine(args[i], Number(args[i + 1])));
  }
}

module.exports = { formatPoints, scoreLine };
"""

SCORE_FILES = {"score.js": SCORE_JS}

# node score.js with eleven players, from 0 to 123456789 points, run as it
# is, in a German locale and in a French one: each line is the player's
# name and the points with a comma between each group of three digits
# (1,000 and 123,456,789; 999 and 0 as they are), the lines all as long as
# each other (the points still lined up on the right). Fails
# toLocaleString() with no locale (1.234.567 on a German machine), a
# regular expression with no end to it (12345 gives 1,2,345), commas
# counted from the left (1234 gives 123,4), and two decimals (1,000.00).
SCORE_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");

const players = [["Ana", 0], ["Bo", 7], ["Chen", 42], ["Dara", 999], ["Eli", 1000], ["Fern", 4096],
  ["Gus", 12345], ["Hana", 999999], ["Ivo", 1000000], ["Jun", 1234567], ["Kit", 123456789]];
const want = ["0", "7", "42", "999", "1,000", "4,096", "12,345", "999,999", "1,000,000", "1,234,567",
  "123,456,789"];
const args = players.flatMap(([name, points]) => [name, String(points)]);
for (const locale of [null, "de_DE.UTF-8", "fr_FR.UTF-8"]) {
  const env = locale ? { ...process.env, LC_ALL: locale, LANG: locale } : process.env;
  const out = execFileSync("node", ["score.js", ...args], { encoding: "utf8", env, timeout: 20000 });
  const lines = out.split("\n").filter((line) => line.trim());
  assert.deepStrictEqual(lines.map((line) => line.trim().split(/\s+/)),
    players.map(([name], i) => [name, want[i]]), locale + ":\n" + out);
  assert.ok(lines.every((line) => line.length === lines[0].length), "the points are not lined up:\n" + out);
}
EOF"""

SCORE_SOLUTION = replaced("score.js", ("  return String(points);\n",
                                       "  return String(points).replace(/\\B(?=(\\d{3})+(?!\\d))/g, \",\");\n"))

# --- deploy from main only (bash; no file named) ----------------------------------------------

DEPLOY_SH = """#!/usr/bin/env bash
# Builds the site and copies it to the web server: ./deploy.sh
set -euo pipefail

./build.sh
rsync -az --delete public/ deploy@web1.example.com:/var/www/site/
echo "deployed $(git rev-parse --short HEAD) to web1"
"""

SITE_BUILD_SH = """#!/usr/bin/env bash
# Builds the site into public/.
set -euo pipefail

rm -rf public
mkdir -p public
cp -r src/. public/
"""

SITE_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Hill Farm Shop</title>
</head>
<body>
  <h1>Hill Farm Shop</h1>
  <p>Eggs, honey and vegetables from the farm, open every day from 8.</p>
</body>
</html>
"""

DEPLOY_FILES = {"deploy.sh": DEPLOY_SH, "build.sh": SITE_BUILD_SH, "src/index.html": SITE_INDEX_HTML}

DEPLOY_SETUP = r"""set -e
git branch -m main
chmod +x deploy.sh build.sh
git add --chmod=+x deploy.sh build.sh
git -c user.name=realmodel -c user.email=realmodel@localhost commit -q --amend --no-edit
"""

# bash deploy.sh, on a copy of the project made a repository of its own with
# branches main, feature/menu and maintenance (each of the last two a
# commit ahead of main), with rsync stood in for by a script that writes
# down its arguments: on main it exits 0 and calls rsync once, as before;
# on feature/menu and on maintenance it exits with a status other than 0,
# says something, and never calls rsync; build.sh as it was. Fails `git
# branch | grep main` (main is always listed), a test for a branch with
# main in its name (maintenance deploys), a warning that deploys anyway, a
# refusal with exit status 0, and master instead of main.
DEPLOY_CHECK = unchanged(DEPLOY_FILES, "build.sh") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile

RSYNC = "-az --delete public/ deploy@web1.example.com:/var/www/site/"
GIT = ["git", "-c", "user.name=realmodel", "-c", "user.email=realmodel@localhost"]

with tempfile.TemporaryDirectory() as d:
    site = os.path.join(d, "site")
    shutil.copytree(".", site, ignore=shutil.ignore_patterns(".git", "public"))

    def git(*args):
        subprocess.run(GIT + list(args), cwd=site, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "start")
    for branch in ("feature/menu", "maintenance"):
        git("checkout", "-q", "-b", branch, "main")
        with open(os.path.join(site, "src", branch.replace("/", "-") + ".html"), "w") as f:
            f.write("<p>work in progress</p>\n")
        git("add", "-A")
        git("commit", "-qm", "work on " + branch)
    stubs = os.path.join(d, "stubs")
    os.mkdir(stubs)
    log = os.path.join(d, "rsync.log")
    with open(os.path.join(stubs, "rsync"), "w") as f:
        f.write('#!/bin/sh\necho "$*" >> "$RSYNC_LOG"\n')
    os.chmod(os.path.join(stubs, "rsync"), 0o755)
    env = {**os.environ, "PATH": stubs + os.pathsep + os.environ["PATH"], "RSYNC_LOG": log}
    for branch, deploys in [("main", True), ("feature/menu", False), ("maintenance", False), ("main", True)]:
        git("checkout", "-q", branch)
        if os.path.exists(log):
            os.remove(log)
        r = subprocess.run(["bash", "deploy.sh"], cwd=site, env=env, capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        calls = open(log).read().splitlines() if os.path.exists(log) else []
        if deploys:
            assert r.returncode == 0, (branch, r.returncode, r.stderr)
            assert calls == [RSYNC], (branch, "rsync was called with", calls)
            assert os.path.exists(os.path.join(site, "public", "index.html")), (branch, "not built")
        else:
            assert calls == [], (branch, "deployed", calls)
            assert r.returncode != 0, (branch, "exit status 0")
            assert (r.stdout + r.stderr).strip(), (branch, "refused without a word")
EOF"""

DEPLOY_SOLUTION = replaced("deploy.sh", ("set -euo pipefail\n",
                                         "set -euo pipefail\n\n"
                                         "branch=$(git rev-parse --abbrev-ref HEAD)\n"
                                         "if [ \"$branch\" != main ]; then\n"
                                         "  echo \"deploy: only main is deployed, and this is $branch\" >&2\n"
                                         "  exit 1\n"
                                         "fi\n"))

# --- the container as a user other than root (Dockerfile; names the file) ---------------------

DOCKERFILE = """FROM node:20-slim

RUN apt-get update \\
    && apt-get install -y --no-install-recommends tini \\
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json ./
RUN npm install --omit=dev
COPY . .

EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "server.js"]
"""

LINKS_SERVER_JS = """// A tiny link shortener: GET /:code redirects to the link saved under it.
const express = require("express");

const links = { gh: "https://github.com", docs: "https://expressjs.com" };
const app = express();

app.get("/:code", (req, res) => {
  const target = links[req.params.code];
  if (!target) return res.status(404).send("no such link");
  res.redirect(target);
});

app.listen(3000, () => console.log("listening on 3000"));
"""

LINKS_PACKAGE_JSON = """{
  "name": "shortlinks",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "start": "node server.js"
  },
  "dependencies": {
    "express": "^4.19.2"
  }
}
"""

ROOTLESS_FILES = {"Dockerfile": DOCKERFILE, "server.js": LINKS_SERVER_JS, "package.json": LINKS_PACKAGE_JSON}

# Dockerfile, read instruction by instruction by a small reader of its own
# (continued lines, comments, keywords in any case, the spacing of JSON
# forms, --chown and --chmod on COPY set aside): every instruction of
# before is there, in the same order and unchanged, with only RUN, USER,
# ENV and ARG added between them; the last USER names someone other than
# root, who is in the image (node, nobody, a uid other than 0, or a user
# that an added RUN creates with useradd or adduser before it); the apt-get
# and npm RUNs still run as root (no USER before them); server.js and
# package.json as they were.
# Fails USER node right after FROM (apt-get and npm install then fail),
# USER root or 0, USER app with no app user made, a chown with no USER, and
# the CMD run through su.
ROOTLESS_CHECK = unchanged(ROOTLESS_FILES, "server.js", "package.json") + r""" && python3 - <<'EOF'
import json, re

ORIGINAL = """ + repr(DOCKERFILE) + r"""


def instructions(text):
    out, buf = [], ""
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        word, _, rest = (buf + line).strip().partition(" ")
        word, rest = word.upper(), " ".join(rest.split())
        if word in ("COPY", "ADD"):
            rest = " ".join(p for p in rest.split() if not re.match(r"--(chown|chmod)=", p))
        if rest.startswith("["):
            try:
                rest = json.dumps(json.loads(rest))
            except ValueError:
                pass
        out.append((word, rest))
        buf = ""
    return out


before, after = instructions(ORIGINAL), instructions(open("Dockerfile").read())
matched, added, k = [], [], 0
for i, ins in enumerate(after):
    if k < len(before) and ins == before[k]:
        matched.append(i)
        k += 1
    else:
        added.append(i)
assert k == len(before), ("an instruction was changed or taken out", before[k], after)
assert all(after[i][0] in ("RUN", "USER", "ENV", "ARG") for i in added), [after[i] for i in added]
users = [i for i, ins in enumerate(after) if ins[0] == "USER"]
assert users, "no USER"
for i, (word, rest) in enumerate(after):
    if i in matched and word == "RUN":
        assert all(u > i for u in users), ("this runs as another user than root now", rest)
last = users[-1]
who = after[last][1].strip("'\"").split(":")[0]
assert who not in ("root", "0", ""), ("still root", after[last])
made = any(after[i][0] == "RUN" and re.search(r"\b(useradd|adduser)\b.*(\s|^)" + re.escape(who) + r"(\s|$)",
                                             after[i][1]) for i in added if i < last)
assert who in ("node", "nobody") or (who.isdigit() and int(who) > 0) or made, ("the image has no user", who)
EOF"""

ROOTLESS_SOLUTION = replaced("Dockerfile", ("EXPOSE 3000\n", "USER node\nEXPOSE 3000\n"))

# --- the Email label tied to its box (HTML; no file named) ------------------------------------

CONTACT_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Contact us</title>
  <link rel="stylesheet" href="contact.css">
</head>
<body>
  <h1>Contact us</h1>
  <form action="/contact" method="post">
    <p>
      <label for="name">Name</label>
      <input type="text" id="name" name="full_name" required>
    </p>
    <p>
      <label>Email</label>
      <input type="email" id="email" name="reply_to" required>
    </p>
    <p>
      <label for="message">Message</label>
      <textarea id="message" name="body" rows="6" required></textarea>
    </p>
    <button type="submit">Send</button>
  </form>
</body>
</html>
"""

CONTACT_CSS = """form p {
  margin: 0 0 1rem;
}

label {
  display: block;
  font-weight: bold;
}

#name,
#email,
#message {
  width: 100%;
  max-width: 30rem;
}
"""

LABEL_FILES = {"contact.html": CONTACT_HTML, "contact.css": CONTACT_CSS}

# contact.html, parsed with html.parser, each label tied to its control as
# a browser ties it (the element whose id its for names, or with no for the
# first control inside it): Name, Email and Message are tied to the fields
# named full_name, reply_to and body; every element but the labels as
# before, each with the same attributes, in the same order, and the text
# the same words; contact.css as it was. Fails for="reply_to" (the field's
# name, not its id), for="Email", the input's id changed to fit the label
# (the stylesheet's #email no longer sizes it), and an aria-label or
# placeholder on the input with the label left pointing nowhere.
LABEL_CHECK = unchanged(LABEL_FILES, "contact.css") + r""" && python3 - <<'EOF'
from html.parser import HTMLParser

ORIGINAL = """ + repr(CONTACT_HTML) + r"""
VOID = {"meta", "link", "input", "br", "img", "hr"}
LABELABLE = {"input", "textarea", "select", "button", "meter", "output", "progress"}


class Form(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.elements, self.open, self.text = [], [], ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": attrs, "inside": [id(o) for o in self.open], "text": ""}
        self.elements.append(el)
        if tag not in VOID:
            self.open.append(el)

    def handle_endtag(self, tag):
        while any(el["tag"] == tag for el in self.open) and self.open.pop()["tag"] != tag:
            pass

    def handle_data(self, data):
        self.text += data
        for el in self.open:
            if el["tag"] == "label":
                el["text"] += data

    def others(self):
        return [(el["tag"], el["attrs"]) for el in self.elements if el["tag"] != "label"]

    def controls(self):
        out = {}
        for label in (el for el in self.elements if el["tag"] == "label"):
            attrs = dict(label["attrs"])
            if "for" in attrs:
                found = [el for el in self.elements if dict(el["attrs"]).get("id") == attrs["for"]]
            else:
                found = [el for el in self.elements if id(label) in el["inside"]]
            found = [el for el in found if el["tag"] in LABELABLE][:1]
            out[" ".join(label["text"].split())] = dict(found[0]["attrs"]).get("name") if found else None
        return out


before, after = Form(ORIGINAL), Form(open("contact.html").read())
assert after.others() == before.others(), after.others()
assert after.text.split() == before.text.split(), after.text
assert after.controls() == {"Name": "full_name", "Email": "reply_to", "Message": "body"}, after.controls()
EOF"""

LABEL_SOLUTION = replaced("contact.html", ("      <label>Email</label>\n",
                                           "      <label for=\"email\">Email</label>\n"))

# --- photos that fit the column (CSS; names the file) -----------------------------------------

TRIP_INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>A weekend in Whitby</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <article class="post">
    <h1>A weekend in Whitby</h1>
    <p>We walked up the 199 steps to the abbey before breakfast.</p>
    <img src="photos/abbey.jpg" width="2400" height="1600" alt="The abbey ruins at sunrise">
    <p>Our walk along the cliffs, from the harbour to Saltwick Bay:</p>
    <img src="photos/route.png" width="320" height="240" alt="A map of the cliff path">
    <p>Fish and chips on the pier, of course.</p>
  </article>
  <footer>
    <a href="feed.xml"><img src="icons/rss.png" width="16" height="16" alt=""> Subscribe</a>
  </footer>
</body>
</html>
"""

TRIP_STYLE_CSS = """body {
  margin: 0;
  font-family: Georgia, serif;
  line-height: 1.6;
  color: #222;
}

.post {
  max-width: 40rem;
  margin: 0 auto;
  padding: 0 1rem;
}

footer {
  text-align: center;
  padding: 2rem 0;
}

footer img {
  vertical-align: middle;
}
"""

FIT_FILES = {"index.html": TRIP_INDEX_HTML, "style.css": TRIP_STYLE_CSS}

# style.css, read with last call's small cascade (types, classes,
# descendant and child combinators, specificity, order, !important, @media
# on min-width and max-width), on a phone 375px wide and on a laptop 1280px
# wide: each image in the post ends with a max-width (or max-inline-size)
# of 100% and a height (or block-size) of auto; no image has a width (or
# inline-size) other than auto; every element's other properties, the
# images' display, object-fit, aspect-ratio and margins aside, as before;
# index.html as it was. Fails width: 100% (the 320px map blown up to the
# column), max-width: 100% with no height: auto (the page gives the photo
# its height, so it is squashed), overflow: hidden on the post (the photo
# cut off), a max-width in pixels, and the rule in a phone-only media query
# (the photo is still wider than the column on a laptop).
FIT_CHECK = unchanged(FIT_FILES, "index.html") + r""" && python3 - <<'EOF'
import re
from html.parser import HTMLParser

ORIGINAL_CSS = """ + repr(TRIP_STYLE_CSS) + r"""
SCREEN = 375
FREE = re.compile(r"(max-width|max-inline-size|height|block-size|width|inline-size|display|object-fit|aspect-ratio"
                  r"|margin(-.*)?)$")


""" + CSS_CASCADE + r"""

class WithImages(Page):
    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.chains.append(self.stack + [(tag, set((dict(attrs).get("class") or "").split()))])
        else:
            super().handle_starttag(tag, attrs)


def last(decls, *props):
    value = None
    for prop, v in decls:
        if prop in props:
            value = v
    return value


css = open("style.css").read()
page = WithImages(open("index.html").read())
images = [c for c in page.chains if c[-1][0] == "img"]
assert len(images) == 3, images
for SCREEN in (375, 1280):
    for chain in page.chains:
        skip = FREE if chain[-1][0] == "img" else re.compile("$^")
        old = {p: v for p, v in declarations(ORIGINAL_CSS, chain) if not skip.match(p)}
        new = {p: v for p, v in declarations(css, chain) if not skip.match(p)}
        assert new == old, (SCREEN, [e[0] for e in chain], new)
    for chain in images:
        decls = declarations(css, chain)
        assert last(decls, "width", "inline-size") in (None, "auto"), (SCREEN, "an image is stretched", chain, decls)
        if any(tag == "article" for tag, _ in chain):
            assert last(decls, "max-width", "max-inline-size") == "100%", (SCREEN, "too wide", chain, decls)
            assert last(decls, "height", "block-size") == "auto", (SCREEN, "squashed", chain, decls)
EOF"""

FIT_SOLUTION = replaced("style.css", ("footer {\n",
                                      ".post img {\n  max-width: 100%;\n  height: auto;\n}\n\nfooter {\n"))

# --- format on save in VS Code (JSON; no file named) ------------------------------------------

VSCODE_SETTINGS_JSON = """{
  "editor.defaultFormatter": "esbenp.prettier-vscode",
  "editor.tabSize": 2,
  "files.insertFinalNewline": true,
  "[markdown]": {
    "files.trimTrailingWhitespace": false
  }
}
"""

VSCODE_EXTENSIONS_JSON = """{
  "recommendations": ["esbenp.prettier-vscode", "dbaeumer.vscode-eslint"]
}
"""

PRETTIERRC_JSON = """{
  "singleQuote": true,
  "semi": false,
  "printWidth": 100
}
"""

SAVE_FILES = {".vscode/settings.json": VSCODE_SETTINGS_JSON, ".vscode/extensions.json": VSCODE_EXTENSIONS_JSON,
              ".prettierrc.json": PRETTIERRC_JSON}

# .vscode/settings.json, read as VS Code reads it (comments and trailing
# commas allowed; "editor": {"formatOnSave": ...} taken as
# editor.formatOnSave): editor.formatOnSave is true (the boolean), and no
# language's section turns it off; every other setting as before (an
# editor.formatOnSaveMode may be added); extensions.json and
# .prettierrc.json as they were. Fails "true" in quotes, the setting in the
# [markdown] section or a new [javascript] one alone, formatOnSave put in
# .prettierrc.json (Prettier has no such option), and
# editor.codeActionsOnSave instead.
SAVE_CHECK = unchanged(SAVE_FILES, ".vscode/extensions.json", ".prettierrc.json") + r""" && python3 - <<'EOF'
import json, re

ORIGINAL = """ + repr(VSCODE_SETTINGS_JSON) + r"""


def load(text):
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def flat(settings, prefix=""):
    out = {}
    for key, value in settings.items():
        if isinstance(value, dict) and not key.startswith("["):
            out.update(flat(value, prefix + key + "."))
        elif key.startswith("[") and isinstance(value, dict):
            out[prefix + key] = flat(value)
        else:
            out[prefix + key] = value
    return out


before, after = flat(load(ORIGINAL)), load(open(".vscode/settings.json").read())
assert isinstance(after, dict), after
after = flat(after)
assert after.get("editor.formatOnSave") is True, ("editor.formatOnSave is", after.get("editor.formatOnSave"))
for key, value in after.items():
    if key.startswith("["):
        assert isinstance(value, dict) and value.get("editor.formatOnSave", True) is True, (key, value)
        value = {k: v for k, v in value.items() if k != "editor.formatOnSave"}
        assert value == before.get(key, {}), (key, value)
rest = {k: v for k, v in after.items() if not k.startswith("[") and not k.startswith("editor.formatOnSave")}
assert rest == {k: v for k, v in before.items() if not k.startswith("[")}, rest
EOF"""

SAVE_SOLUTION = replaced(".vscode/settings.json", ('  "editor.tabSize": 2,\n',
                                                   '  "editor.tabSize": 2,\n  "editor.formatOnSave": true,\n'))

# --- npm in the Dependabot config (YAML; names the file) --------------------------------------

DEPENDABOT_YML = """version: 2
updates:
  - package-ecosystem: "github-actions"
    directory: "/"
    schedule:
      interval: "monthly"
"""

PHOTOS_PACKAGE_JSON = """{
  "name": "photo-wall",
  "version": "2.1.0",
  "private": true,
  "scripts": {
    "start": "node server.js",
    "test": "node --test"
  },
  "dependencies": {
    "express": "^4.19.2",
    "sharp": "^0.33.4"
  }
}
"""

DEPENDABOT_FILES = {".github/dependabot.yml": DEPENDABOT_YML, "package.json": PHOTOS_PACKAGE_JSON}

# .github/dependabot.yml, read by second cup's small YAML reader (block
# mappings and lists, quotes, comments; a key twice is an error): version
# as before; updates holds the GitHub Actions entry as it was and one more,
# whose package-ecosystem is npm, directory / and schedule's interval
# weekly (a day, a time, labels and the like may come with it); package.json
# as it was. Fails "node", "yarn" or "javascript" for the ecosystem, an
# interval of "week" or "daily", the directory /package.json, the npm lines
# put into the Actions entry (a key twice, or the Actions entry changed),
# and the Actions entry replaced.
DEPENDABOT_CHECK = unchanged(DEPENDABOT_FILES, "package.json") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(DEPENDABOT_YML) + r"""


""" + YAML_READER + r"""before, after = parse(ORIGINAL), parse(open(".github/dependabot.yml").read())
assert isinstance(after, dict) and set(after) == {"version", "updates"} and after["version"] == 2, after
updates = after["updates"]
assert isinstance(updates, list) and len(updates) == 2, updates
assert before["updates"][0] in updates, ("the GitHub Actions entry changed", updates)
npm = [u for u in updates if u != before["updates"][0]][0]
assert isinstance(npm, dict) and npm.get("package-ecosystem") == "npm", npm
assert npm.get("directory") == "/", npm
schedule = npm.get("schedule")
assert isinstance(schedule, dict) and schedule.get("interval") == "weekly", schedule
EOF"""

DEPENDABOT_SOLUTION = r"""cat >> .github/dependabot.yml <<'EOF'
  - package-ecosystem: "npm"
    directory: "/"
    schedule:
      interval: "weekly"
EOF"""

# --- the Unreleased changes released as 1.4.0 (Markdown; names the file) ----------------------

CHANGELOG_MD = """# Changelog

All notable changes to tally are written down here, newest first.

## Unreleased

### Added
- A `--json` option that prints the report as JSON.

### Fixed
- A crash when the input file is empty.

## 1.3.0 - 2025-04-11

### Added
- Totals per month.

## 1.2.1 - 2025-03-02

### Fixed
- Wrong totals for February in leap years.
"""

TALLY_README = """# tally

Adds up the amounts in a CSV file of expenses, per category:

    python3 tally.py expenses.csv

What changed in each release is in CHANGELOG.md.
"""

RELEASE_FILES = {"CHANGELOG.md": CHANGELOG_MD, "README.md": TALLY_README}

# CHANGELOG.md, read section by section (its ## headings): the text before
# the first one as before; then an Unreleased section with nothing in it
# but, at most, empty ### headings; then 1.4.0 - 2025-05-20 (brackets, a v
# and another dash allowed) holding what Unreleased held; then 1.3.0 and
# 1.2.1 as before, and nothing else; README.md as it was. Fails the
# Unreleased heading renamed with no new one above it, the new section put
# at the bottom or under 1.3.0, the changes copied and left under
# Unreleased as well, and the date written another way (20 May 2025).
RELEASE_CHECK = unchanged(RELEASE_FILES, "README.md") + r""" && python3 - <<'EOF'
import re

ORIGINAL = """ + repr(CHANGELOG_MD) + r"""


def sections(text):
    parts = re.split(r"^##[ \t]+(.*?)[ \t#]*$", text, flags=re.M)
    return parts[0], [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


(top, old), (new_top, new) = sections(ORIGINAL), sections(open("CHANGELOG.md").read())
assert new_top.split() == top.split(), new_top
assert len(new) == 4, ("the sections are", [title for title, _ in new])
assert re.fullmatch(r"\[?unreleased\]?", new[0][0], re.I), ("the first section", new[0][0])
assert all(not line.strip() or line.startswith("### ") for line in new[0][1].splitlines()), \
    ("Unreleased is not empty", new[0][1])
assert re.fullmatch(r"\[?v?1\.4\.0\]?\s*[-\u2013\u2014]\s*\[?2025-05-20\]?", new[1][0]), \
    ("the second section", new[1][0])
assert new[1][1].split() == old[0][1].split(), ("1.4.0 holds", new[1][1])
assert [(title, body.split()) for title, body in new[2:]] == [(title, body.split()) for title, body in old[1:]], new[2:]
EOF"""

RELEASE_SOLUTION = replaced("CHANGELOG.md", ("## Unreleased\n", "## Unreleased\n\n## 1.4.0 - 2025-05-20\n"))

# --- a question answered from a systemd timer (no file named) ---------------------------------

BACKUP_TIMER = """[Unit]
Description=Run the photo backup

[Timer]
OnCalendar=Sun *-*-* 03:30:00
Persistent=true

[Install]
WantedBy=timers.target
"""

BACKUP_SERVICE = """[Unit]
Description=Back up the photo library to the NAS

[Service]
Type=oneshot
ExecStart=/usr/bin/rsync -a --delete /home/kim/Pictures/ nas.local::photos/
"""

BACKUP_README = """# photo-backup

Backs up the photo library to the NAS with rsync. To install:

    sudo cp photo-backup.service photo-backup.timer /etc/systemd/system/
    sudo systemctl enable --now photo-backup.timer
"""

WHEN_FILES = {"photo-backup.timer": BACKUP_TIMER, "photo-backup.service": BACKUP_SERVICE, "README.md": BACKUP_README}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer says Sunday and 3:30 (03:30, half past
# three), and not in the afternoon (no 15:30, no pm). Fails an empty
# answer, every day at 3:30 (no Sunday), 3:30 pm or 15:30, a Monday
# morning, and a changed file.
WHEN_CHECK = left_alone_and_answered(WHEN_FILES, ("photo-backup.timer", "photo-backup.service", "README.md"), r"""
assert re.search(r"\bsun(day)?s?\b", answer, re.I), answer
assert re.search(r"(?<![\d:.])0?3[:.]30(?!\d)|half past three|three[- ]thirty", answer, re.I), answer
assert not re.search(r"(?<![\d:.])15[:.]30(?!\d)|\bp\.?\s?m\b", answer, re.I), answer
""")

WHEN_SOLUTION = r"""echo 'Every Sunday at 03:30 in the morning (OnCalendar=Sun *-*-* 03:30:00).' > "$AGENT_ANSWER" """

SMALL_HOURS_TASKS = [
    {
        "name": "give up on a silent site",
        "files": TIMEOUT_FILES,
        "prompt": "The site status check hangs forever when one of the sites doesn't answer at all. Give up on "
                  "a site after 5 seconds, report it as down, and go on with the rest.",
        "check": TIMEOUT_CHECK,
        "solution": TIMEOUT_SOLUTION,
    },
    {
        "name": "put commas in big scores",
        "files": SCORE_FILES,
        "prompt": "score.js prints big scores like 1234567, which is hard to read. Show them with commas "
                  "between the thousands, like 1,234,567.",
        "check": SCORE_CHECK,
        "solution": SCORE_SOLUTION,
    },
    {
        "name": "deploy only from main",
        "files": DEPLOY_FILES,
        "setup": DEPLOY_SETUP,
        "prompt": "Someone deployed the site from a feature branch by mistake. Make the deploy script stop "
                  "with an error unless we're on the main branch.",
        "check": DEPLOY_CHECK,
        "solution": DEPLOY_SOLUTION,
    },
    {
        "name": "run the container without root",
        "files": ROOTLESS_FILES,
        "prompt": "Our security scan says the container built from our Dockerfile runs the app as root. Make "
                  "it run the app as an ordinary user instead.",
        "check": ROOTLESS_CHECK,
        "solution": ROOTLESS_SOLUTION,
    },
    {
        "name": "tie the email label to its box",
        "files": LABEL_FILES,
        "prompt": "On the contact form, clicking the word Name puts the cursor in the box under it, but "
                  "clicking Email does nothing. Make Email work like Name.",
        "check": LABEL_CHECK,
        "solution": LABEL_SOLUTION,
    },
    {
        "name": "fit wide photos to the column",
        "files": FIT_FILES,
        "prompt": "On phones the big photo in the post sticks out past the edge of the screen. In style.css, "
                  "make images in posts shrink to fit the column when they're too wide, without stretching "
                  "small ones or squashing any of them out of shape.",
        "check": FIT_CHECK,
        "solution": FIT_SOLUTION,
    },
    {
        "name": "format on save in vs code",
        "files": SAVE_FILES,
        "prompt": "We all use VS Code. Set up the project so that VS Code formats a file every time it's "
                  "saved, for everyone who opens the project.",
        "check": SAVE_CHECK,
        "solution": SAVE_SOLUTION,
    },
    {
        "name": "let dependabot update npm packages",
        "files": DEPENDABOT_FILES,
        "prompt": "Make .github/dependabot.yml keep our npm packages up to date too, checking once a week. "
                  "Leave the GitHub Actions updates as they are.",
        "check": DEPENDABOT_CHECK,
        "solution": DEPENDABOT_SOLUTION,
    },
    {
        "name": "release the unreleased changes",
        "files": RELEASE_FILES,
        "prompt": "We're releasing 1.4.0 today, 2025-05-20. In CHANGELOG.md, make what's under Unreleased the "
                  "1.4.0 section, dated like the older ones, and leave an empty Unreleased section above it "
                  "for what comes next.",
        "check": RELEASE_CHECK,
        "solution": RELEASE_SOLUTION,
    },
    {
        "name": "answer from a systemd timer",
        "files": WHEN_FILES,
        "prompt": "How often does the photo backup run, and at what time? Just tell me, don't change anything.",
        "check": WHEN_CHECK,
        "solution": WHEN_SOLUTION,
    },
]
