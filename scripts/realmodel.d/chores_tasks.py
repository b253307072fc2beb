"""The chores set of everyday tasks of scripts/realmodel (`--set chores`).

Written after the old, new, fresh, plain and daily sets (tasks.py,
new_tasks.py, fresh_tasks.py, plain_tasks.py, daily_tasks.py), unlike all
five in content and as easy as the plain and daily sets, by someone who had
read none of their runs: ten one-step requests, each a project of one to
three short files, in kinds of file the other sets hardly use (a JavaScript
regular expression, Python's logging, a systemd unit, shell aliases in
dotfiles, .gitattributes, C's printf, an SSH config, a shell script's
option and its README, an nginx site, a Python f-string). The keys are
those of daily_tasks.py: the files, the prompt as a person would type it
(six of the ten name no file), a check, and a solution that
`scripts/realmodel --check-tasks` applies to prove the check fails before
it and passes after. Checks run the code or parse the file rather than look
for one spelling, and use python3, node, bash, git, coreutils and gcc only.
"""

from new_tasks import unchanged

# --- a colour regex that misses capitals -----------------------------------------

COLORS_JS = """// Checks the colours people type into the theme editor.
const HEX_COLOR = /^#[0-9a-f]{6}$/;

function isHexColor(text) {
  return HEX_COLOR.test(text);
}

module.exports = { isHexColor };
"""

THEME_JS = """// Applies a theme: node theme.js ACCENT BACKGROUND, e.g. node theme.js '#1e90ff' '#ffffff'
const { isHexColor } = require("./colors");

const [accent = "#1e90ff", background = "#ffffff"] = process.argv.slice(2);
for (const color of [accent, background]) {
  if (!isHexColor(color)) {
    console.error(`not a colour: ${color}`);
    process.exit(1);
  }
}
console.log(`accent ${accent}, background ${background}`);
"""

# Six hex digits in any case pass, twice in a row (a /g regex remembers
# where it stopped); anything else still fails. Three-digit colours are
# not asked for and not tested.
COLOR_CHECK = unchanged({"theme.js": THEME_JS}, "theme.js") + r""" && node -e '
const { isHexColor } = require("./colors");
const good = ["#ff8800", "#FF8800", "#Ff88aA", "#000000", "#ABCDEF", "#1E90FF"];
const bad = ["ff8800", "FF8800", "#GG8800", "#FF880", "#FF88001", "#FF8800 ", " #FF8800", "red", "", "#FF 880"];
for (const g of [...good, ...good]) if (isHexColor(g) !== true) { console.error("rejects", g); process.exit(1); }
for (const b of [...bad, ...bad]) if (isHexColor(b)) { console.error("accepts", JSON.stringify(b)); process.exit(1); }
' && test "$(node theme.js '#FF8800' '#FFFFFF')" = 'accent #FF8800, background #FFFFFF'"""

COLOR_SOLUTION = "sed -i 's|{6}\\$/;|{6}$/i;|' colors.js"

# --- info messages a logging level hides -------------------------------------------

IMPORTER_PY = '''"""Imports contacts from a CSV file: python3 importer.py contacts.csv"""
import csv
import logging
import sys

log = logging.getLogger("importer")


def import_contacts(path):
    contacts = []
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if not row["email"]:
                log.warning("line %d: %s has no email, skipped", line, row["name"])
                continue
            contacts.append(row)
    log.info("imported %d contacts from %s", len(contacts), path)
    return contacts


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    import_contacts(sys.argv[1])
'''

CONTACTS_CSV = """name,email
Ada,ada@example.com
Ben,
Cleo,cleo@example.com
"""

# The info line shows up beside the warning, and the two messages keep
# their levels (making the info a warning is not what was asked); other
# messages may be added.
LOGGING_CHECK = unchanged({"contacts.csv": CONTACTS_CSV}, "contacts.csv") + r""" && python3 - <<'EOF'
import ast, subprocess, sys

r = subprocess.run([sys.executable, "importer.py", "contacts.csv"], capture_output=True, text=True)
out = r.stdout + r.stderr
assert r.returncode == 0, out
assert "imported 2 contacts from contacts.csv" in out, out
assert "Ben has no email, skipped" in out, out

calls = [
    (node.func.attr, node.args[0].value)
    for node in ast.walk(ast.parse(open("importer.py").read()))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    and node.args and isinstance(node.args[0], ast.Constant)
]
for level, message in (("info", "imported %d contacts from %s"), ("warning", "line %d: %s has no email, skipped")):
    assert [l for l, m in calls if m == message] == [level], (message, calls)
EOF"""

LOGGING_SOLUTION = "sed -i 's/level=logging.WARNING/level=logging.INFO/' importer.py"

# --- a systemd unit that does not restart ------------------------------------------

SHOP_SERVICE = """[Unit]
Description=Shop web app
After=network-online.target
Wants=network-online.target

[Service]
User=shop
WorkingDirectory=/srv/shop
Environment=PORT=8000
ExecStart=/usr/bin/python3 /srv/shop/server.py
StandardOutput=journal

[Install]
WantedBy=multi-user.target
"""

SHOP_SERVER_PY = '''"""The shop's web server (deployed as deploy/shop.service)."""
import os
from http.server import HTTPServer, SimpleHTTPRequestHandler

HTTPServer(("", int(os.environ.get("PORT", "8000"))), SimpleHTTPRequestHandler).serve_forever()
'''

SHOP_FILES = {"deploy/shop.service": SHOP_SERVICE, "server.py": SHOP_SERVER_PY}

# The unit read as systemd reads it (sections, Key=Value, # and ; comments,
# the last value of a key winning): Restart= in [Service] restarts after a
# crash, and every setting there was keeps its values; any other setting
# (RestartSec=, a start limit) may be added.
SERVICE_CHECK = unchanged(SHOP_FILES, "server.py") + r""" && python3 - <<'EOF'
def parse(text):
    out, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, sep, value = line.partition("=")
        assert sep and section, line
        out.setdefault((section, key.strip()), []).append(value.strip())
    return out

before = parse('''""" + SHOP_SERVICE + r"""''')
after = parse(open("deploy/shop.service").read())
for key, values in before.items():
    assert after.get(key) == values, (key, after.get(key))
restart = after.get(("Service", "Restart"), ["no"])[-1]
assert restart in ("always", "on-failure", "on-abnormal"), restart
assert not any(k == "Restart" for s, k in after if s != "Service"), after
EOF"""

SERVICE_SOLUTION = "sed -i 's|^ExecStart=.*|&\\nRestart=on-failure\\nRestartSec=2|' deploy/shop.service"

# --- a shell alias in dotfiles -----------------------------------------------------

DOT_BASHRC = """# ~/.bashrc, linked from ~/.dotfiles/bashrc
HISTSIZE=10000
HISTCONTROL=ignoredups
export EDITOR=vim
PS1='\\u@\\h:\\w\\$ '
[ -f ~/.dotfiles/aliases.sh ] && . ~/.dotfiles/aliases.sh
"""

DOT_ALIASES_SH = """# Aliases, sourced by bashrc.
alias ll='ls -lah'
alias ..='cd ..'
alias gl='git log --oneline --graph -20'
alias serve='python3 -m http.server 8000'
"""

DOT_README = """# dotfiles

    git clone <this repo> ~/.dotfiles
    ln -s ~/.dotfiles/bashrc ~/.bashrc
"""

DOT_FILES = {"bashrc": DOT_BASHRC, "aliases.sh": DOT_ALIASES_SH, "README.md": DOT_README}

# The dotfiles installed in a scratch HOME as the README says, a shell that
# reads bashrc: `gs` in a git repository says what `git status` says (an
# alias or a function, in either file), and `ll` is as it was.
ALIAS_CHECK = r"""p=$PWD && d=$(mktemp -d) && ln -s "$p" "$d/.dotfiles" && ln -s "$p/bashrc" "$d/.bashrc" \
&& mkdir "$d/repo" && cd "$d/repo" && git init -q && echo hi > note.txt \
&& want=$(git status 2>&1) \
&& got=$(HOME="$d" bash -c 'shopt -s expand_aliases
. ~/.bashrc
gs' 2>&1) && test "$got" = "$want" \
&& test "$(HOME="$d" bash -c 'shopt -s expand_aliases
. ~/.bashrc
alias ll')" = "alias ll='ls -lah'" """

ALIAS_SOLUTION = "echo \"alias gs='git status'\" >> aliases.sh"

# --- line endings in .gitattributes --------------------------------------------------

GA_GITATTRIBUTES = """# Images are never text.
*.png binary
*.jpg binary
"""

GA_DEPLOY_SH = """#!/usr/bin/env bash
# Copies the site to the server and reloads it.
set -euo pipefail
rsync -az --delete public/ web@example.org:/srv/site/
ssh web@example.org 'sudo systemctl reload nginx'
"""

GA_BACKUP_SH = """#!/usr/bin/env bash
# Dumps the database into backups/.
set -euo pipefail
mkdir -p backups
pg_dump site > "backups/site-$(date +%F).sql"
"""

GA_FILES = {".gitattributes": GA_GITATTRIBUTES, "deploy.sh": GA_DEPLOY_SH, "scripts/backup.sh": GA_BACKUP_SH}

# Git itself says which attributes apply: every shell script, wherever it
# is, is checked out with LF; the images are still binary (or left to
# git's guess, text=auto); the scripts are as they were.
GITATTRIBUTES_CHECK = unchanged(GA_FILES, "deploy.sh", "scripts/backup.sh") + r""" && python3 - <<'EOF'
import subprocess

def attr(name, path):
    out = subprocess.run(["git", "check-attr", name, "--", path], capture_output=True, text=True, check=True).stdout
    return out.rsplit(": ", 1)[1].strip()

for path in ("deploy.sh", "scripts/backup.sh", "tools/new-script.sh"):
    assert attr("eol", path) == "lf", (path, attr("eol", path))
    assert attr("text", path) != "unset", (path, attr("text", path))
for path in ("logo.png", "img/photo.jpg"):
    assert attr("diff", path) == "unset" and attr("text", path) in ("unset", "auto"), path
EOF"""

# --- a printf format in C --------------------------------------------------------------

STATS_C = """#include <stdio.h>

/* Prints how many scores there are and their average. */
int main(void) {
    int scores[] = {3, 4, 2, 5, 4, 3};
    int n = sizeof scores / sizeof scores[0];
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += scores[i];
    double average = (double)sum / n;
    printf("%d scores, average %d\\n", n, average);
    return 0;
}
"""

STATS_MAKEFILE = """stats: stats.c
\tcc -Wall -O2 -o stats stats.c

clean:
\trm -f stats
"""

STATS_FILES = {"stats.c": STATS_C, "Makefile": STATS_MAKEFILE, ".gitignore": "stats\n"}

# Built with the format warnings as errors, run on its scores and on
# others: the average printed is the average, to the precision shown.
PRINTF_CHECK = r"""python3 - <<'EOF'
import re, subprocess, tempfile

source = open("stats.c").read()
assert "{3, 4, 2, 5, 4, 3}" in source, "the scores changed"
with tempfile.TemporaryDirectory() as d:
    for scores, n, want, slack in (("{3, 4, 2, 5, 4, 3}", 6, 3.5, 0.001), ("{1, 2, 2}", 3, 5 / 3, 0.051)):
        with open(f"{d}/stats.c", "w") as f:
            f.write(source.replace("{3, 4, 2, 5, 4, 3}", scores))
        subprocess.run(["gcc", "-Wall", "-Werror=format", "-o", f"{d}/stats", f"{d}/stats.c"], check=True)
        out = subprocess.run([f"{d}/stats"], capture_output=True, text=True, check=True).stdout
        assert re.search(rf"\b{n} scores\b", out), out
        m = re.search(r"average\D*?(-?\d+(?:\.\d+)?)", out)
        assert m and abs(float(m.group(1)) - want) < slack, (out, want)
EOF"""

PRINTF_SOLUTION = "sed -i 's/average %d/average %.1f/' stats.c"

# --- a question about an SSH config ------------------------------------------------------

SSH_CONFIG = """Host *
    ServerAliveInterval 30
    AddKeysToAgent yes

Host prod
    HostName 203.0.113.10
    User deploy

Host staging
    HostName staging.internal.example.com
    User deploy
    Port 2202
    IdentityFile ~/.ssh/staging_ed25519

Host backup
    HostName 198.51.100.7
    User root
    Port 2222
"""

SSH_README = """# dotfiles

install.sh links ssh/config to ~/.ssh/config and bashrc to ~/.bashrc.
"""

SSH_INSTALL_SH = """#!/usr/bin/env bash
set -e
mkdir -p ~/.ssh
ln -sf "$PWD/ssh/config" ~/.ssh/config
ln -sf "$PWD/bashrc" ~/.bashrc
"""

SSH_FILES = {"ssh/config": SSH_CONFIG, "README.md": SSH_README, "install.sh": SSH_INSTALL_SH,
             "bashrc": "export EDITOR=nano\n"}

# 2202, not backup's 2222 nor the default 22 alone; nothing changed. An
# answer that names 2202 only as what it looked for and did not find ("I
# did not find `Port 2202`") is no answer.
SSH_QUESTION_CHECK = (
    'test -z "$(git status --porcelain)" '
    "&& grep -Eq '(^|[^0-9])2202([^0-9]|$)' \"$AGENT_ANSWER\" "
    "&& ! grep -Eiq \"(did ?n[o']t|could ?n[o']t|can ?n[o']t|unable to) (find|locate)|not found|no such\" \"$AGENT_ANSWER\""
)

# --- an option renamed in a script and its README -----------------------------------------

ARCHIVE_SH = """#!/usr/bin/env bash
# Copies the .log files of a folder into a folder of the day in the archive.
set -e
usage="usage: bash archive.sh [--dest DIR] LOGDIR"
dest=archive
src=
while [ $# -gt 0 ]; do
  case "$1" in
    --dest) dest=$2; shift 2 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) src=$1; shift ;;
  esac
done
if [ -z "$src" ]; then
  echo "$usage" >&2
  exit 1
fi
day="$dest/$(date +%F)"
mkdir -p "$day"
cp "$src"/*.log "$day"/
echo "archived $(ls "$day" | wc -l) logs into $day"
"""

ARCHIVE_README = """# logkeeper

Moves old logs out of the way, a folder a day.

## Usage

    bash archive.sh [--dest DIR] LOGDIR

Copies every .log file in LOGDIR into DIR/YYYY-MM-DD/. Without --dest, DIR is ./archive.
"""

# In a scratch copy: --into DIR files the logs under DIR, no option still
# files them under ./archive, and neither the usage the script prints nor
# the README speaks of --dest any more.
RENAME_CHECK = r"""python3 - <<'EOF'
import datetime, os, shutil, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git"))
    os.makedirs(f"{d}/logs")
    for name in ("app.log", "db.log", "notes.txt"):
        open(f"{d}/logs/{name}", "w").write(name + "\n")
    shutil.rmtree(f"{d}/p/archive", ignore_errors=True)  # whatever a try left
    day = datetime.date.today().isoformat()

    def run(*args):
        return subprocess.run(["bash", "archive.sh", *args], cwd=f"{d}/p", capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)

    r = run("--into", f"{d}/out", f"{d}/logs")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(f"{d}/out/{day}")) == ["app.log", "db.log"], os.listdir(f"{d}/out/{day}")
    r = run(f"{d}/logs")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(f"{d}/p/archive/{day}")) == ["app.log", "db.log"]
    r = run("--help")
    usage = r.stdout + r.stderr
    assert "--into" in usage and "--dest" not in usage, usage

readme = open("README.md").read()
assert "--dest" not in readme, readme
assert any("archive.sh" in line and "--into" in line for line in readme.splitlines()), readme
assert "# logkeeper" in readme and "YYYY-MM-DD" in readme, readme
EOF"""

# --- caching in an nginx site -------------------------------------------------------------------

SITE_CONF = """server {
    listen 80;
    server_name shop.example.com;
    root /srv/shop/public;

    location / {
        try_files $uri $uri/ /index.html;
    }

    location /static/ {
        alias /srv/shop/static/;
    }

    location /api/ {
        proxy_pass http://127.0.0.1:8000;
        proxy_set_header Host $host;
    }
}
"""

# The site read as nginx reads it (directives ending in ; or a block in {},
# # comments, quotes): the /static/ location says 30 days, by `expires` in
# any of its units or by a Cache-Control max-age (and says nothing else);
# everything else is as it was, and no other place caches.
NGINX_CHECK = r"""python3 - <<'EOF'
import re

def tokens(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        elif c in ";{}":
            out.append(c)
            i += 1
        elif c in "\"'":
            j = text.index(c, i + 1)
            out.append(text[i + 1:j])
            i = j + 1
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in ";{}\"'":
                j += 1
            out.append(text[i:j])
            i = j
    return out

def block(toks, i, top):
    out, words = [], []
    while i < len(toks):
        t = toks[i]
        i += 1
        if t == ";":
            assert words, "empty directive"
            out.append((words[0], tuple(words[1:]), None))
            words = []
        elif t == "{":
            inner, i = block(toks, i, False)
            out.append((words[0], tuple(words[1:]), inner))
            words = []
        elif t == "}":
            assert not top and not words, "unbalanced"
            return out, i
        else:
            words.append(t)
    assert top and not words, "unterminated"
    return out, i

def parse(text):
    return block(tokens(text), 0, True)[0]

def is_static(d):
    return d[0] == "location" and d[1] and d[1][-1].rstrip("/") == "/static" and d[2] is not None

def strip(tree):
    return [(n, a, None if c is None else ([] if is_static((n, a, c)) else strip(c))) for n, a, c in tree]

UNITS = {"ms": 0.001, "": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "M": 2592000, "y": 31536000}

def seconds(value):
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|M|y|)", value)
    assert parts and "".join(a + b for a, b in parts) == value, value
    return sum(int(a) * UNITS[b] for a, b in parts)

before = parse('''""" + SITE_CONF + r"""''')
after = parse(open("site.conf").read())
assert strip(after) == strip(before), after

def find(tree):
    for d in tree:
        if is_static(d):
            yield d
        elif d[2] is not None:
            yield from find(d[2])

(old,), (new,) = list(find(before)), list(find(after))
assert all(d in new[2] for d in old[2]), new
caching = []
for name, args, _ in new[2]:
    if name == "expires":
        caching.append(seconds(args[-1]))
    elif name == "add_header" and args and args[0].lower() == "cache-control":
        value = " ".join(args[1:]).lower()
        assert "no-cache" not in value and "no-store" not in value, value
        caching += [int(m) for m in re.findall(r"max-age=(\d+)", value)]
assert caching and all(c == 2592000 for c in caching), caching
EOF"""

NGINX_SOLUTION = "sed -i 's|^        alias /srv/shop/static/;$|&\\n        expires 30d;|' site.conf"

# --- an f-string without its f --------------------------------------------------------------------

MESSAGES_PY = '''"""The texts the parcel tracker sends to customers."""


def shipped_message(name, parcel_id, days):
    return "Hi {name}, parcel {parcel_id} is on its way and should arrive in {days} days."


def delivered_message(name, parcel_id):
    return f"Hi {name}, parcel {parcel_id} was delivered today."
'''

NOTIFY_PY = '''"""Prints today's messages: python3 notify.py"""
from messages import delivered_message, shipped_message

print(shipped_message("Ada", "PX-1042", 3))
print(delivered_message("Ben", "PX-0977"))
'''

FSTRING_CHECK = unchanged({"notify.py": NOTIFY_PY}, "notify.py") + r""" && python3 - <<'EOF'
import subprocess, sys

r = subprocess.run([sys.executable, "notify.py"], capture_output=True, text=True)
assert r.returncode == 0 and r.stdout == (
    "Hi Ada, parcel PX-1042 is on its way and should arrive in 3 days.\n"
    "Hi Ben, parcel PX-0977 was delivered today.\n"
), (r.stdout, r.stderr)
from messages import delivered_message, shipped_message
assert shipped_message("Zoe", "QX-7", 5) == "Hi Zoe, parcel QX-7 is on its way and should arrive in 5 days."
assert delivered_message("Ian", "QX-8") == "Hi Ian, parcel QX-8 was delivered today."
EOF"""

FSTRING_SOLUTION = "sed -i 's/return \"Hi/return f\"Hi/' messages.py"

CHORES_TASKS = [
    {
        "name": "accept capital hex colours",
        "files": {"colors.js": COLORS_JS, "theme.js": THEME_JS},
        "prompt": "The theme editor rejects #FF8800 but takes #ff8800. Colours in capitals should work too.",
        "check": COLOR_CHECK,
        "solution": COLOR_SOLUTION,
    },
    {
        "name": "show info log messages",
        "files": {"importer.py": IMPORTER_PY, "contacts.csv": CONTACTS_CSV},
        "prompt": "The contacts importer only shows warnings. I want to see its info messages too.",
        "check": LOGGING_CHECK,
        "solution": LOGGING_SOLUTION,
    },
    {
        "name": "restart a crashed service",
        "files": SHOP_FILES,
        "prompt": "When the shop app crashes it stays down until someone restarts it by hand. "
                  "Have systemd bring it back up on its own.",
        "check": SERVICE_CHECK,
        "solution": SERVICE_SOLUTION,
    },
    {
        "name": "add a shell alias",
        "files": DOT_FILES,
        "prompt": "Add a gs shortcut for git status to my aliases.",
        "check": ALIAS_CHECK,
        "solution": ALIAS_SOLUTION,
    },
    {
        "name": "keep lf line endings",
        "files": GA_FILES,
        "prompt": "deploy.sh got committed with Windows line endings again and broke on the server. "
                  "Make git always use LF line endings for our shell scripts.",
        "check": GITATTRIBUTES_CHECK,
        "solution": "echo '*.sh text eol=lf' >> .gitattributes",
    },
    {
        "name": "fix a printf format",
        "files": STATS_FILES,
        "prompt": "stats.c prints a nonsense average (I get 21) instead of 3.5. Fix it.",
        "check": PRINTF_CHECK,
        "solution": PRINTF_SOLUTION,
    },
    {
        "name": "answer from an ssh config",
        "files": SSH_FILES,
        "prompt": "Which port does ssh staging connect to? Just tell me, don't change anything.",
        # 2202 (Port in the staging block), not backup's 2222.
        "check": SSH_QUESTION_CHECK,
        "solution": 'echo "Port 2202 (ssh/config, Host staging: staging.internal.example.com)." > "$AGENT_ANSWER"',
    },
    {
        "name": "rename a script option",
        "files": {"archive.sh": ARCHIVE_SH, "README.md": ARCHIVE_README},
        "prompt": "Rename the --dest option of archive.sh to --into, and update the README to match.",
        "check": RENAME_CHECK,
        "solution": "sed -i 's/--dest/--into/g' archive.sh README.md",
    },
    {
        "name": "cache static files",
        "files": {"site.conf": SITE_CONF},
        "prompt": "In site.conf, have browsers cache everything under /static/ for 30 days.",
        "check": NGINX_CHECK,
        "solution": NGINX_SOLUTION,
    },
    {
        "name": "fill in a message",
        "files": {"messages.py": MESSAGES_PY, "notify.py": NOTIFY_PY},
        "prompt": 'The shipping notice literally says "Hi {name}, parcel {parcel_id}..." instead of the '
                  "customer's name and parcel. Fix it.",
        "check": FSTRING_CHECK,
        "solution": FSTRING_SOLUTION,
    },
]
