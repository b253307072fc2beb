"""The night shift set of everyday tasks of scripts/realmodel (`--set night_shift`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests and back office sets (tasks.py, new_tasks.py, fresh_tasks.py,
plain_tasks.py, daily_tasks.py, chores_tasks.py, errands_tasks.py,
odd_jobs_tasks.py, side_quests_tasks.py, back_office_tasks.py), unlike all
ten in what is broken and in how it is fixed, and as easy as the sets since
plain, by someone who had read no run of any of them (no transcript, no
result, no table): ten one-step requests, each a project of three to six
short files, each in another kind of file or tool: note titles cut short by
Python's str.strip, which takes a set of letters and not a suffix; dates
whose zero-padded 08 and 09 bash's arithmetic reads as octal; one fix
cherry-picked from an unfinished branch with git; a question answered from
an npm lock file; a password with a % in it that configparser takes for
interpolation; a volume of 0 and an autoplay turned off that JavaScript's
`||` replaces with the defaults; test folders that unittest's discovery
skips because they are not packages; an SQL report whose inner join (and
its WHERE on the joined table) leaves out volunteers without shifts; RSS
items given a new random guid on every build; and a Makefile target that
make thinks is up to date because a folder has its name. The keys are those
of back_office_tasks.py, with `setup` where the project needs a history:
the files, the prompt as a person would type it (none of the ten names a
file), a check, and a solution that `scripts/realmodel --check-tasks`
applies to prove the check fails before it and passes after. Checks run the
code, bash, git, configparser and logging, node and its test runner,
Python's unittest discovery, SQLite, Python's XML reader on the feed, or
make itself rather than look for one spelling, and use python3 (stdlib),
node, sh, bash, git, make and coreutils only.

Each check is written so that the plausible wrong fixes fail it too; the
comment above each says which. How many per task: whole note titles 3
(rstrip, split at the first dot, mending the two named notes), zero-padded
dates 3 (the month alone, the day alone, `declare -i`),
the cherry-pick 5 (a merge, the branch's whole file, its last commit, a fix
left uncommitted, main rebased onto the branch), the lock file 4 answers
(package.json's floor, the README's 4.18, the dev tool's nested copy, the
range itself), the percent 3 (interpolation turned off with the log format
left doubled, the password quoted, the password changed), the zero setting
3 (the volume alone, new defaults, Boolean()), the test discovery 2 (the
top folder alone, another command in the README), the report 3 (a LEFT JOIN
that keeps the WHERE, one that adds `OR day IS NULL`, one without
COALESCE), the feed ids 4 (the item's position, a hash of its text, its
date, a bare id marked as a permalink), the phony target 3 (the target
renamed, the folder renamed, .PHONY for the other targets only).
"""

from new_tasks import unchanged

# --- note titles cut short by str.strip ---------------------------------------------------

NOTES_INDEX_PY = r'''"""Prints the index of the notes as Markdown: python3 index.py [FOLDER] > INDEX.md"""
import sys
from pathlib import Path


def title(path):
    """A note's title: its file name without the .md, dashes as spaces."""
    return path.name.strip(".md").replace("-", " ")


def index(folder="notes"):
    notes = sorted(Path(folder).glob("*.md"), key=lambda p: title(p).lower())
    lines = ["# Notes", ""] + [f"- [{title(p)}]({p.as_posix()})" for p in notes]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(index(*sys.argv[1:2]))
'''

NOTES_README = """# notes

My notes, one Markdown file each in notes/. The index of them:

    python3 index.py > INDEX.md
"""

TITLE_FILES = {
    "index.py": NOTES_INDEX_PY,
    "notes/dreams.md": "# Dreams\n\nFlying over the allotments again, the shed far below.\n",
    "notes/meeting-notes.md": "# Meeting notes\n\n- Budget for the summer fair\n- Who brings the gazebo\n",
    "notes/todo.md": "# To do\n\n- Renew the library card\n- Fix the bike light\n",
    "README.md": NOTES_README,
    ".gitignore": "INDEX.md\n__pycache__/\n",
}

# The index of the notes, and of folders of notes of its own, run from
# their parent folder: every title is the whole file name without its .md
# (dashes as spaces), in order, with its link. Fails rstrip(".md") (mood,
# problem), split(".")[0] (release-2.0-plan) and mending dreams and
# meeting-notes alone.
TITLE_CHECK = unchanged(TITLE_FILES, "notes/dreams.md", "notes/meeting-notes.md") + r""" && python3 - <<'EOF'
import os, subprocess, tempfile

def want(names):
    titles = sorted(((n[:-3].replace("-", " "), n) for n in names), key=lambda t: t[0].lower())
    return "# Notes\n\n" + "".join(f"- [{t}](notes/{n})\n" for t, n in titles)

def index(where):
    r = subprocess.run(["python3", os.path.abspath("index.py")], cwd=where, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout

assert index(".") == want(["dreams.md", "meeting-notes.md", "todo.md"]), index(".")
with tempfile.TemporaryDirectory() as d:
    names = ["mood.md", "problem.md", "release-2.0-plan.md", "md-cheatsheet.md", "dad.md", "ideas.md",
             "road-trip.md", "dreams.md"]
    os.mkdir(f"{d}/notes")
    for n in names:
        with open(f"{d}/notes/{n}", "w") as f:
            f.write("# a note\n")
    assert index(d) == want(names), index(d)
EOF"""

TITLE_SOLUTION = """sed -i 's/path.name.strip(".md")/path.name.removesuffix(".md")/' index.py"""

# --- zero-padded dates read as octal by bash ------------------------------------------------

PERIOD_SH = r"""#!/usr/bin/env bash
# The reporting period of a day, for the monthly close:
#   bash period.sh [YYYY-MM-DD]       (today when no day is given)
# prints the quarter the day is in, and whether it is in closing week (the
# 25th onwards), when the month's books are closed.
set -eu
day=${1:-$(date +%F)}
year=${day:0:4}
month=${day:5:2}
dom=${day:8:2}

quarter=$(( (month - 1) / 3 + 1 ))
if (( dom >= 25 )); then
    closing=yes
else
    closing=no
fi
echo "period: $year-Q$quarter"
echo "closing: $closing"
"""

FILE_REPORT_SH = r"""#!/usr/bin/env bash
# Files a sales export under its period:
#   bash file-report.sh EXPORT.csv [YYYY-MM-DD]
# puts it in reports/2025-Q1/ (reports/2025-Q1/closing/ in closing week).
set -eu
src=${1:?usage: file-report.sh EXPORT.csv [YYYY-MM-DD]}
here=$(dirname "$0")
out=$(bash "$here/period.sh" ${2:+"$2"})
period=$(printf '%s\n' "$out" | sed -n 's/^period: //p')
closing=$(printf '%s\n' "$out" | sed -n 's/^closing: //p')
dest=reports/$period
if [ "$closing" = yes ]; then
    dest=$dest/closing
fi
mkdir -p "$dest"
cp "$src" "$dest/"
echo "filed $src in $dest"
"""

PERIOD_README = """# monthly close

Every evening the till's export is filed under its reporting period:

    bash file-report.sh sales.csv            # today
    bash file-report.sh sales.csv 2025-03-27 # a day that was missed

`bash period.sh [YYYY-MM-DD]` says which period a day is in.
"""

PERIOD_FILES = {"period.sh": PERIOD_SH, "file-report.sh": FILE_REPORT_SH, "README.md": PERIOD_README,
                ".gitignore": "reports/\n"}

# bash runs period.sh, on days of every month (the 1st, 7th to 10th, 19th,
# 24th, 25th, 28th) and on today when today is 8 September 2025 (a `date`
# of its own on PATH): the period and closing week right, nothing on
# stderr; file-report.sh files exports where the README says. Fails the
# month fixed alone (the 8th and 9th still break), the day fixed alone
# (August and September still break), and `declare -i` (still octal).
PERIOD_CHECK = r"""python3 - <<'EOF'
import datetime, os, shutil, subprocess, tempfile

def want(day):
    return f"period: {day.year}-Q{(day.month - 1) // 3 + 1}\nclosing: {'yes' if day.day >= 25 else 'no'}\n"

def period(*args, env=None):
    r = subprocess.run(["bash", "period.sh", *args], capture_output=True, text=True, env=env, timeout=10)
    assert r.returncode == 0 and not r.stderr, (args, r.returncode, r.stdout, r.stderr)
    return r.stdout

days = [datetime.date(2025, m, d) for m in range(1, 13) for d in (1, 7, 8, 9, 10, 19, 24, 25, 28)]
days += [datetime.date(2024, 2, 29), datetime.date(2024, 12, 31), datetime.date(2026, 8, 9)]
for day in days:
    assert period(day.isoformat()) == want(day), (day, period(day.isoformat()))

with tempfile.TemporaryDirectory() as d:
    real = shutil.which("date")
    with open(f"{d}/date", "w") as f:
        f.write("#!/bin/sh\n"
                'for a in "$@"; do case $a in -d*|--date*) exec %s "$@";; esac; done\n'
                'exec %s -d 2025-09-08 "$@"\n' % (real, real))
    os.chmod(f"{d}/date", 0o755)
    env = dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"])
    assert period(env=env) == want(datetime.date(2025, 9, 8)), period(env=env)

with tempfile.TemporaryDirectory() as d:
    for name in ("period.sh", "file-report.sh"):
        shutil.copy(name, d)
    with open(f"{d}/sales.csv", "w") as f:
        f.write("item,amount\ncoffee,2.40\n")
    for day, where in (("2025-08-27", "reports/2025-Q3/closing"), ("2025-03-09", "reports/2025-Q1"),
                       ("2025-11-08", "reports/2025-Q4")):
        r = subprocess.run(["bash", "file-report.sh", "sales.csv", day], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr, (day, r.stdout, r.stderr)
        assert open(f"{d}/{where}/sales.csv").read() == "item,amount\ncoffee,2.40\n", (day, where)
EOF"""

PERIOD_SOLUTION = r"""python3 - <<'EOF'
text = open("period.sh").read()
text = text.replace("quarter=$(( (month - 1) / 3 + 1 ))", "quarter=$(( (10#$month - 1) / 3 + 1 ))")
text = text.replace("if (( dom >= 25 )); then", "if (( 10#$dom >= 25 )); then")
open("period.sh", "w").write(text)
EOF"""

# --- one fix cherry-picked from an unfinished branch ---------------------------------------

SHOP_PRICES_PY = '''"""Prices: the shop keeps net prices in cents and shows them with VAT."""

VAT_PERCENT = 20


def with_vat(net_cents):
    """The price with VAT, in whole cents."""
    return net_cents * (100 + VAT_PERCENT) // 100


def euros(cents):
    """1999 -> '19.99 €'"""
    return f"{cents // 100}.{cents % 100:02d} €"
'''

SHOP_PY = '''"""Prints the price list: python3 shop.py"""
import json
from pathlib import Path

from prices import euros, with_vat

products = json.loads((Path(__file__).resolve().parent / "products.json").read_text(encoding="utf-8"))
for p in products:
    print(f"{p['name']}: {euros(with_vat(p['net_cents']))}")
'''

SHOP_PRODUCTS_JSON = """[
  {"name": "Seed tray", "net_cents": 199},
  {"name": "Watering can", "net_cents": 1249},
  {"name": "Garden twine", "net_cents": 333}
]
"""

SHOP_README = """# garden shop

The price list, with VAT:

    python3 shop.py
"""

PICK_FILES = {"prices.py": SHOP_PRICES_PY, "shop.py": SHOP_PY, "products.json": SHOP_PRODUCTS_JSON,
              "README.md": SHOP_README, ".gitignore": "__pycache__/\n"}

# The owner's repository (their name in its config): a redesign branch of
# four commits, the second of them the rounding fix (and the third adds to
# prices.py too); main has moved on since with a product of its own.
PICK_SETUP = r'''set -e
git branch -m main
git config user.name 'Priya Nair'
git config user.email priya@example.com
git checkout -q -b redesign
python3 - <<'EOF'
text = open("shop.py").read()
text = text.replace("""print(f"{p['name']}: {euros(with_vat(p['net_cents']))}")""",
                    """print(f"{p['name']:<20}{euros(with_vat(p['net_cents'])):>12}")""")
open("shop.py", "w").write(text)
EOF
git commit -qam 'New price list layout'
python3 - <<'EOF'
text = open("prices.py").read()
text = text.replace('    """The price with VAT, in whole cents."""\n'
                    '    return net_cents * (100 + VAT_PERCENT) // 100\n',
                    '    """The price with VAT, rounded to the nearest cent."""\n'
                    '    return (net_cents * (100 + VAT_PERCENT) + 50) // 100\n')
open("prices.py", "w").write(text)
EOF
git commit -qam 'Round VAT to the nearest cent'
cat >> prices.py <<'EOF'


def badge(product):
    """The badge shown next to a product on sale."""
    return " SALE" if product.get("sale") else ""
EOF
sed -i 's/"net_cents": 1249}/"net_cents": 1249, "sale": true}/' products.json
sed -i 's/^from prices import euros, with_vat$/from prices import badge, euros, with_vat/' shop.py
sed -i "s/:>12}\")$/:>12}{badge(p)}\")/" shop.py
git commit -qam 'Show sale badges'
sed -i "s/^for p in products:$/for p in sorted(products, key=lambda p: p['net_cents']):/" shop.py
git commit -qam 'Sort the price list by price'
git checkout -q main
sed -i 's/  {"name": "Garden twine", "net_cents": 333}/&,\n  {"name": "Tea towel", "net_cents": 416}/' products.json
git commit -qam 'Add tea towels'
'''

# git: on main, nothing under way or left uncommitted; since main's last
# commit (Add tea towels) only prices.py changed, with no merge; the
# redesign branch is as it was; the prices round to the nearest cent,
# without the branch's badges, and the list prints as on main. Fails a
# merge of the branch, the branch's whole prices.py (its badge too), a
# cherry-pick of the branch's last commit, the fix left uncommitted, and
# main rebased onto the branch.
PICK_CHECK = r"""for f in CHERRY_PICK_HEAD MERGE_HEAD REVERT_HEAD rebase-merge rebase-apply sequencer; do
    test ! -e ".git/$f" || exit 1
done
test -z "$(git status --porcelain)" && test "$(git symbolic-ref --short HEAD)" = main && python3 - <<'EOF'
import subprocess

def git(*args):
    r = subprocess.run(["git", *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout.strip()

base = git("rev-parse", ":/^Add tea towels")
subprocess.run(["git", "merge-base", "--is-ancestor", base, "main"], check=True)
assert git("rev-list", "--merges", f"{base}..main") == "", git("log", "--oneline", "--graph", "-8")
assert git("diff", "--name-only", base, "main").split() == ["prices.py"], git("diff", "--stat", base, "main")
assert git("log", "--format=%s", "redesign").splitlines() == [
    "Sort the price list by price", "Show sale badges", "Round VAT to the nearest cent", "New price list layout",
    "start"], git("log", "--oneline", "redesign")

import prices
for net in range(3000):
    assert prices.with_vat(net) == (net * 120 + 50) // 100, (net, prices.with_vat(net))
assert prices.euros(1999) == "19.99 €" and prices.euros(5) == "0.05 €"
assert not hasattr(prices, "badge"), "the branch's badges came along"
out = subprocess.run(["python3", "shop.py"], capture_output=True, text=True).stdout
assert out == "Seed tray: 2.39 €\nWatering can: 14.99 €\nGarden twine: 4.00 €\nTea towel: 4.99 €\n", out
EOF"""

PICK_SOLUTION = r"""git cherry-pick "$(git rev-parse ':/^Round VAT to the nearest cent')" >/dev/null"""

# --- a question answered from a lock file ----------------------------------------------------

BOOKING_PACKAGE_JSON = """{
  "name": "booking-api",
  "version": "1.4.0",
  "private": true,
  "scripts": {
    "start": "node server.js",
    "mock": "stub-server --port 4000"
  },
  "dependencies": {
    "dotenv": "^16.0.3",
    "express": "^4.18.2"
  },
  "devDependencies": {
    "stub-server": "^2.1.0"
  }
}
"""

BOOKING_LOCK_JSON = """{
  "name": "booking-api",
  "version": "1.4.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "booking-api",
      "version": "1.4.0",
      "dependencies": {
        "dotenv": "^16.0.3",
        "express": "^4.18.2"
      },
      "devDependencies": {
        "stub-server": "^2.1.0"
      }
    },
    "node_modules/accepts": {
      "version": "1.3.8",
      "resolved": "https://registry.npmjs.org/accepts/-/accepts-1.3.8.tgz",
      "license": "MIT",
      "engines": {
        "node": ">= 0.6"
      }
    },
    "node_modules/body-parser": {
      "version": "1.20.3",
      "resolved": "https://registry.npmjs.org/body-parser/-/body-parser-1.20.3.tgz",
      "license": "MIT",
      "engines": {
        "node": ">= 0.8",
        "npm": "1.2.8000 || >= 1.4.16"
      }
    },
    "node_modules/dotenv": {
      "version": "16.4.5",
      "resolved": "https://registry.npmjs.org/dotenv/-/dotenv-16.4.5.tgz",
      "license": "BSD-2-Clause",
      "engines": {
        "node": ">=12"
      }
    },
    "node_modules/express": {
      "version": "4.21.2",
      "resolved": "https://registry.npmjs.org/express/-/express-4.21.2.tgz",
      "license": "MIT",
      "dependencies": {
        "accepts": "~1.3.8",
        "body-parser": "1.20.3"
      },
      "engines": {
        "node": ">= 0.10.0"
      }
    },
    "node_modules/stub-server": {
      "version": "2.1.0",
      "resolved": "https://registry.npmjs.org/stub-server/-/stub-server-2.1.0.tgz",
      "dev": true,
      "license": "MIT",
      "dependencies": {
        "express": "4.17.1"
      },
      "bin": {
        "stub-server": "bin/stub-server.js"
      }
    },
    "node_modules/stub-server/node_modules/express": {
      "version": "4.17.1",
      "resolved": "https://registry.npmjs.org/express/-/express-4.17.1.tgz",
      "dev": true,
      "license": "MIT",
      "dependencies": {
        "accepts": "~1.3.7"
      },
      "engines": {
        "node": ">= 0.10.0"
      }
    }
  }
}
"""

BOOKING_SERVER_JS = """// The booking API: node server.js
require("dotenv").config();
const express = require("express");

const app = express();
app.use(express.json());

app.get("/health", (req, res) => res.json({ ok: true }));
app.post("/bookings", (req, res) => res.status(201).json({ id: Date.now(), ...req.body }));

const port = Number(process.env.PORT) || 3000;
app.listen(port, () => console.log(`booking API on ${port}`));
"""

BOOKING_README = """# booking API

Built on Express 4.18.

    npm ci
    npm start

`npm run mock` starts a stub of the payment provider on port 4000.
"""

LOCK_FILES = {"package.json": BOOKING_PACKAGE_JSON, "package-lock.json": BOOKING_LOCK_JSON,
              "server.js": BOOKING_SERVER_JS, "README.md": BOOKING_README, ".gitignore": "node_modules/\n.env\n"}

# 4.21.2, the version the lock file pins for the app (package.json only
# asks for ^4.18.2, the README still says 4.18, and the dev tool has a copy
# of 4.17.1 of its own): the answer names it. Nothing changed. Fails
# 4.18.2, 4.18, 4.17.1 and "^4.18.2, so the latest 4.x".
LOCK_CHECK = r"""test -z "$(git status --porcelain --untracked-files=all)" && python3 - <<'EOF'
import os, re

answer = open(os.environ["AGENT_ANSWER"]).read()
assert re.search(r"(?<![\d.])4\.21\.2(?![\d])", answer), answer
EOF"""

# --- a % that configparser takes for interpolation ---------------------------------------------

ORDERS_SETTINGS_INI = """[database]
host = db.internal
port = 5432
name = orders
user = orders_app
password = 7Hq%2mR!x

[logging]
level = INFO
format = %%(asctime)s %%(levelname)s %%(name)s: %%(message)s
"""

ORDERS_SETTINGS_PY = '''"""The order service's settings, from settings.ini next to this file."""
import configparser
from pathlib import Path

PATH = Path(__file__).resolve().parent / "settings.ini"


def load(path=PATH):
    config = configparser.ConfigParser()
    config.read(path, encoding="utf-8")
    return config


def database(config):
    db = config["database"]
    return {"host": db["host"], "port": db.getint("port"), "name": db["name"],
            "user": db["user"], "password": db["password"]}
'''

ORDERS_APP_PY = '''"""Starts the order service: python3 app.py"""
import logging

import settings

config = settings.load()
logging.basicConfig(level=config["logging"]["level"], format=config["logging"]["format"])
log = logging.getLogger("orders")
db = settings.database(config)
log.info("connecting to %s@%s:%s/%s", db["user"], db["host"], db["port"], db["name"])
'''

ORDERS_README = """# orders

The order service. Its settings are in settings.ini.

    python3 app.py
"""

PERCENT_FILES = {"settings.ini": ORDERS_SETTINGS_INI, "settings.py": ORDERS_SETTINGS_PY, "app.py": ORDERS_APP_PY,
                 "README.md": ORDERS_README, ".gitignore": "__pycache__/\n"}

# configparser as the app uses it: the database settings, the password
# exactly as given, and the log format as logging needs it; the app starts
# and logs its line in that format. Fails interpolation turned off with the
# log format left doubled (its lines then start with "%(asctime)s"), the
# password quoted (still an error, or the quotes in it), and another
# password.
PERCENT_CHECK = unchanged(PERCENT_FILES, "app.py") + r""" && python3 - <<'EOF'
import re, subprocess

import settings

config = settings.load()
assert settings.database(config) == {"host": "db.internal", "port": 5432, "name": "orders", "user": "orders_app",
                                     "password": "7Hq%2mR!x"}, settings.database(config)
assert config["logging"]["format"] == "%(asctime)s %(levelname)s %(name)s: %(message)s", config["logging"]["format"]
assert config["logging"]["level"] == "INFO"
r = subprocess.run(["python3", "app.py"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO orders: connecting to "
                    r"orders_app@db\.internal:5432/orders\n", r.stderr), r.stderr
EOF"""

PERCENT_SOLUTION = """sed -i 's/^password = 7Hq%2mR!x$/password = 7Hq%%2mR!x/' settings.ini"""

# --- a zero and a false that || replaces with the defaults -------------------------------------

PLAYER_SETTINGS_JS = """// The player's settings: what the listener saved, with defaults for the rest.
const fs = require("fs");

const DEFAULTS = { volume: 50, autoplay: true, shuffle: false, speed: 1 };

function withDefaults(saved) {
  return {
    volume: saved.volume || DEFAULTS.volume,
    autoplay: saved.autoplay || DEFAULTS.autoplay,
    shuffle: saved.shuffle || DEFAULTS.shuffle,
    speed: saved.speed || DEFAULTS.speed,
  };
}

function load(path = "settings.json") {
  const saved = fs.existsSync(path) ? JSON.parse(fs.readFileSync(path, "utf8")) : {};
  return withDefaults(saved);
}

function save(settings, path = "settings.json") {
  fs.writeFileSync(path, JSON.stringify(settings, null, 2) + "\\n");
}

module.exports = { DEFAULTS, withDefaults, load, save };
"""

PLAYER_JS = """// Shows the player's settings as it starts: node player.js
const { load } = require("./settings");

const s = load();
const onOff = (b) => (b ? "on" : "off");
console.log(`volume ${s.volume}, autoplay ${onOff(s.autoplay)}, shuffle ${onOff(s.shuffle)}, speed ${s.speed}x`);
"""

PLAYER_SAVED_JSON = """{
  "volume": 0,
  "autoplay": false,
  "speed": 1.25
}
"""

PLAYER_README = """# podcast player

The settings the listener chose are saved in settings.json; anything not
saved there has its default.

    node player.js
"""

ZERO_FILES = {"settings.js": PLAYER_SETTINGS_JS, "player.js": PLAYER_JS, "settings.json": PLAYER_SAVED_JSON,
              "README.md": PLAYER_README}

# node: withDefaults() keeps every saved value, 0 and false included, and
# gives the defaults for what was not saved; settings saved and loaded
# again come back the same; the player shows the saved settings. Fails the
# volume fixed alone, other defaults (0 and false), and Boolean() or
# `=== true` for autoplay (a missing autoplay then is off).
ZERO_CHECK = unchanged(ZERO_FILES, "settings.json", "player.js") + r""" && node - <<'EOF'
const assert = require("node:assert");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { DEFAULTS, withDefaults, load, save } = require("./settings.js");

const defaults = { volume: 50, autoplay: true, shuffle: false, speed: 1 };
assert.deepStrictEqual(DEFAULTS, defaults);
const cases = [
  [{}, defaults],
  [{ volume: 0, autoplay: false }, { volume: 0, autoplay: false, shuffle: false, speed: 1 }],
  [{ volume: 0 }, { volume: 0, autoplay: true, shuffle: false, speed: 1 }],
  [{ autoplay: false }, { volume: 50, autoplay: false, shuffle: false, speed: 1 }],
  [{ volume: 100, autoplay: true, shuffle: true, speed: 1.5 },
   { volume: 100, autoplay: true, shuffle: true, speed: 1.5 }],
  [{ shuffle: false, speed: 0.75 }, { volume: 50, autoplay: true, shuffle: false, speed: 0.75 }],
  [{ volume: 35 }, { volume: 35, autoplay: true, shuffle: false, speed: 1 }],
];
for (const [saved, want] of cases) {
  assert.deepStrictEqual(withDefaults(saved), want, JSON.stringify(saved));
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "player-"));
try {
  const file = path.join(dir, "settings.json");
  for (const s of [{ volume: 0, autoplay: false, shuffle: true, speed: 0.5 }, defaults,
                   { volume: 0, autoplay: true, shuffle: false, speed: 2 }]) {
    save(s, file);
    assert.deepStrictEqual(load(file), s);
  }
  assert.deepStrictEqual(load(path.join(dir, "missing.json")), defaults);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const out = execFileSync("node", ["player.js"], { encoding: "utf8" });
assert.strictEqual(out, "volume 0, autoplay off, shuffle off, speed 1.25x\n", out);
EOF"""

ZERO_SOLUTION = r"""sed -i 's/ || DEFAULTS\./ ?? DEFAULTS./' settings.js"""

# --- test folders that unittest's discovery skips -------------------------------------------------

CART_PY = '''"""A shopping cart: what is in it, and what it all costs (in cents)."""


class Cart:
    def __init__(self):
        self.lines = {}

    def add(self, sku, price_cents, qty=1):
        if qty < 1:
            raise ValueError("qty must be 1 or more")
        _, had = self.lines.get(sku, (price_cents, 0))
        self.lines[sku] = (price_cents, had + qty)

    def remove(self, sku):
        self.lines.pop(sku, None)

    def count(self):
        return sum(qty for _, qty in self.lines.values())

    def subtotal(self):
        return sum(price * qty for price, qty in self.lines.values())


def total(cart, shipping_cents=495, free_from_cents=5000):
    """The subtotal plus shipping, which is free from 50 euros on."""
    sub = cart.subtotal()
    if sub == 0:
        return 0
    return sub if sub >= free_from_cents else sub + shipping_cents
'''

TEST_CART_PY = '''import unittest

from shop.cart import Cart


class CartTest(unittest.TestCase):
    def test_add(self):
        cart = Cart()
        cart.add("mug", 800, 2)
        self.assertEqual(cart.count(), 2)

    def test_add_the_same_twice(self):
        cart = Cart()
        cart.add("mug", 800)
        cart.add("mug", 800, 3)
        self.assertEqual(cart.count(), 4)

    def test_remove(self):
        cart = Cart()
        cart.add("mug", 800)
        cart.add("tea", 450)
        cart.remove("mug")
        self.assertEqual(cart.count(), 1)

    def test_remove_what_is_not_there(self):
        cart = Cart()
        cart.remove("mug")
        self.assertEqual(cart.count(), 0)

    def test_no_zero_quantity(self):
        with self.assertRaises(ValueError):
            Cart().add("mug", 800, 0)


if __name__ == "__main__":
    unittest.main()
'''

TEST_TOTALS_PY = '''import unittest

from shop.cart import Cart, total


class TotalTest(unittest.TestCase):
    def test_shipping_under_fifty(self):
        cart = Cart()
        cart.add("mug", 800, 2)
        self.assertEqual(total(cart), 1600 + 495)

    def test_free_shipping_from_fifty(self):
        cart = Cart()
        cart.add("kettle", 5000)
        self.assertEqual(total(cart), 5000)

    def test_empty_cart(self):
        self.assertEqual(total(Cart()), 0)


if __name__ == "__main__":
    unittest.main()
'''

CART_README = """# shop

The web shop's cart and checkout, in shop/.

Tests (eight of them, in tests/):

    python3 -m unittest
"""

DISCOVER_FILES = {"shop/__init__.py": '"""The web shop."""\n', "shop/cart.py": CART_PY,
                  "tests/test_cart.py": TEST_CART_PY, "tests/checkout/test_totals.py": TEST_TOTALS_PY,
                  "README.md": CART_README}

DISCOVER_NAMES = ["test_add", "test_add_the_same_twice", "test_empty_cart", "test_free_shipping_from_fifty",
                  "test_no_zero_quantity", "test_remove", "test_remove_what_is_not_there",
                  "test_shipping_under_fifty"]

# `python3 -m unittest`, as the README says, run in the project: the eight
# tests, by name, pass; in a copy whose cart counts wrong, and in one whose
# totals are wrong, it fails (the tests of both folders run). The tests are
# unchanged. Fails tests/__init__.py alone (five of eight) and another
# command written in the README.
DISCOVER_CHECK = unchanged(DISCOVER_FILES, "tests/test_cart.py", "tests/checkout/test_totals.py") \
    + r""" && python3 - <<'EOF'
import os, re, shutil, subprocess, tempfile

def unittest(where):
    return subprocess.run(["python3", "-m", "unittest", "-v"], cwd=where, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"), timeout=30)

r = unittest(".")
assert r.returncode == 0, r.stderr
names = sorted(re.findall(r"^(test_\w+) \(", r.stderr, re.M))
assert names == """ + repr(DISCOVER_NAMES) + r""", r.stderr
assert re.search(r"^Ran 8 tests\b", r.stderr, re.M), r.stderr
with tempfile.TemporaryDirectory() as d:
    for broken in ("\n\nCart.count = lambda self: -1\n", "\n\ndef total(cart, *args, **kwargs):\n    return -1\n"):
        shutil.rmtree(f"{d}/p", ignore_errors=True)
        shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git", "__pycache__"))
        with open(f"{d}/p/shop/cart.py", "a") as f:
            f.write(broken)
        r = unittest(f"{d}/p")
        assert r.returncode != 0, ("the tests pass on a broken cart", broken, r.stderr)
EOF"""

DISCOVER_SOLUTION = "touch tests/__init__.py tests/checkout/__init__.py"

# --- an inner join that leaves out volunteers without shifts ----------------------------------------

ROTA_SCHEMA_SQL = """CREATE TABLE volunteers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE shifts (
    id INTEGER PRIMARY KEY,
    volunteer_id INTEGER NOT NULL REFERENCES volunteers (id),
    day TEXT NOT NULL,  -- 2025-03-14
    hours REAL NOT NULL
);
"""

ROTA_SEED_SQL = """INSERT INTO volunteers (id, name) VALUES
    (1, 'Amira Haddad'),
    (2, 'Ben Clarke'),
    (3, 'Chloe Martin'),
    (4, 'Dev Sharma');

INSERT INTO shifts (volunteer_id, day, hours) VALUES
    (1, '2025-02-08', 3),
    (1, '2025-03-01', 4),
    (1, '2025-03-15', 2.5),
    (2, '2025-02-22', 3),
    (4, '2025-03-08', 5);
"""

ROTA_HOURS_SQL = """-- Hours per volunteer in a month (:month is like 2025-03), for the
-- coordinators' monthly round of thank-yous and check-ins.
SELECT v.name, SUM(s.hours) AS hours
FROM volunteers AS v
JOIN shifts AS s ON s.volunteer_id = v.id
WHERE s.day LIKE :month || '-%'
GROUP BY v.id
ORDER BY v.name;
"""

ROTA_REPORT_PY = '''"""Hours per volunteer in a month: python3 report.py 2025-03 [rota.db]

A database that does not exist yet is made from schema.sql and seed.sql.
"""
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def connect(path):
    new = not Path(path).exists()
    conn = sqlite3.connect(path)
    if new:
        conn.executescript((HERE / "schema.sql").read_text())
        conn.executescript((HERE / "seed.sql").read_text())
    return conn


def hours(conn, month):
    return conn.execute((HERE / "hours.sql").read_text(), {"month": month}).fetchall()


if __name__ == "__main__":
    month = sys.argv[1]
    conn = connect(sys.argv[2] if len(sys.argv) > 2 else "rota.db")
    print(f"Hours in {month}")
    for name, h in hours(conn, month):
        print(f"{name:<20}{h:>6.1f}")
'''

ROTA_README = """# food bank rota

Volunteers and their shifts, in SQLite (schema.sql; seed.sql has a few for
trying it out). The monthly hours report:

    python3 report.py 2025-03
"""

JOIN_FILES = {"schema.sql": ROTA_SCHEMA_SQL, "seed.sql": ROTA_SEED_SQL, "hours.sql": ROTA_HOURS_SQL,
              "report.py": ROTA_REPORT_PY, "README.md": ROTA_README, ".gitignore": "rota.db\n__pycache__/\n"}

# SQLite, on databases of its own: every volunteer is in the month's
# report, in order of name, with the hours of that month, 0 (a number)
# when they worked none that month, whether they worked in other months
# (the same month a year before included) or never; the command line
# prints the seed's month. Fails a LEFT JOIN that keeps the WHERE on the
# shifts (still an inner join), one that adds `OR s.day IS NULL` (those
# who worked in other months are still left out), and one without
# COALESCE (None, and the command line crashes).
JOIN_CHECK = unchanged(JOIN_FILES, "schema.sql", "seed.sql") + r""" && python3 - <<'EOF'
import sqlite3, subprocess, tempfile

import report

def rows(conn, month):
    got = report.hours(conn, month)
    assert all(isinstance(h, (int, float)) for _, h in got), got
    return [(name, round(float(h), 2)) for name, h in got]

with tempfile.TemporaryDirectory() as d:
    conn = sqlite3.connect(f"{d}/test.db")
    conn.executescript(open("schema.sql").read())
    conn.executescript('''
        INSERT INTO volunteers (id, name) VALUES (1, 'Zed'), (2, 'Ann'), (3, 'Bo'), (4, 'Cy'), (5, 'Di'), (6, 'Ed');
        INSERT INTO shifts (volunteer_id, day, hours) VALUES
            (2, '2024-07-03', 2), (2, '2024-07-20', 1.5), (3, '2024-06-30', 4), (5, '2023-07-11', 3),
            (1, '2024-07-31', 8), (1, '2024-08-01', 2), (6, '2024-07-01', 0.5), (6, '2024-08-15', 1);
    ''')
    assert rows(conn, "2024-07") == [("Ann", 3.5), ("Bo", 0), ("Cy", 0), ("Di", 0), ("Ed", 0.5), ("Zed", 8)], \
        rows(conn, "2024-07")
    assert rows(conn, "2024-08") == [("Ann", 0), ("Bo", 0), ("Cy", 0), ("Di", 0), ("Ed", 1), ("Zed", 2)], \
        rows(conn, "2024-08")
    assert rows(conn, "2022-01") == [(n, 0) for n in ("Ann", "Bo", "Cy", "Di", "Ed", "Zed")], rows(conn, "2022-01")
    r = subprocess.run(["python3", "report.py", "2025-03", f"{d}/rota.db"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Hours in 2025-03\n" + "Amira Haddad           6.5\n" + "Ben Clarke             0.0\n"
                        + "Chloe Martin           0.0\n" + "Dev Sharma             5.0\n"), r.stdout
EOF"""

JOIN_SOLUTION = r"""cat > hours.sql <<'EOF'
-- Hours per volunteer in a month (:month is like 2025-03), for the
-- coordinators' monthly round of thank-yous and check-ins. Everyone is
-- listed: those without a shift that month with 0 hours.
SELECT v.name, COALESCE(SUM(s.hours), 0) AS hours
FROM volunteers AS v
LEFT JOIN shifts AS s ON s.volunteer_id = v.id AND s.day LIKE :month || '-%'
GROUP BY v.id
ORDER BY v.name;
EOF"""

# --- RSS items with a new guid on every build -----------------------------------------------------

BUILD_FEED_PY = '''"""Writes feed.xml, the RSS feed of the posts: python3 build_feed.py"""
import uuid
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path
from xml.sax.saxutils import escape

SITE = "https://gardenclub.example"
HERE = Path(__file__).resolve().parent


def read_post(path):
    """A post: "title: ..." and "date: YYYY-MM-DD" lines, a blank line, the text."""
    head, _, body = path.read_text(encoding="utf-8").partition("\\n\\n")
    meta = dict(line.split(": ", 1) for line in head.splitlines())
    slug = path.stem.split("-", 3)[3]  # 2025-01-12-winter-swap -> winter-swap
    return {"title": meta["title"], "date": meta["date"], "body": body.strip(),
            "link": f"{SITE}/posts/{slug}/"}


def item(post):
    day = datetime.strptime(post["date"], "%Y-%m-%d").replace(tzinfo=timezone.utc)
    return ("  <item>\\n"
            f"    <title>{escape(post['title'])}</title>\\n"
            f"    <link>{post['link']}</link>\\n"
            f"    <guid isPermaLink=\\"false\\">{uuid.uuid4()}</guid>\\n"
            f"    <pubDate>{format_datetime(day)}</pubDate>\\n"
            f"    <description>{escape(post['body'])}</description>\\n"
            "  </item>\\n")


def feed():
    posts = sorted((read_post(p) for p in (HERE / "posts").glob("*.md")), key=lambda p: p["date"], reverse=True)
    return (\'<?xml version="1.0" encoding="utf-8"?>\\n<rss version="2.0">\\n<channel>\\n\'
            f"  <title>Garden club news</title>\\n  <link>{SITE}/</link>\\n"
            "  <description>News from the allotments</description>\\n"
            + "".join(item(p) for p in posts) + "</channel>\\n</rss>\\n")


if __name__ == "__main__":
    (HERE / "feed.xml").write_text(feed(), encoding="utf-8")
'''

FEED_README = """# garden club news

The posts are in posts/, one Markdown file each, named by date and slug.
After adding or editing one:

    python3 build_feed.py

writes feed.xml, which the site serves at /feed.xml.
"""

FEED_POSTS = {
    "posts/2025-01-12-winter-swap.md": "title: Seeds & cuttings swap\ndate: 2025-01-12\n\n"
                                       "Bring your spare seeds and cuttings to the hut, 10 to 12.\n",
    "posts/2025-02-03-seed-library.md": "title: The seed library opens\ndate: 2025-02-03\n\n"
                                        "Borrow a packet, grow it, bring back some seed in autumn.\n",
    "posts/2025-03-20-spring-planting.md": "title: Spring planting day\ndate: 2025-03-20\n\n"
                                           "We plant the community beds on Saturday. Gloves provided.\n",
}

FEED_FILES = {"build_feed.py": BUILD_FEED_PY, "README.md": FEED_README, ".gitignore": "feed.xml\n__pycache__/\n",
              **FEED_POSTS}

# Python's XML reader on the feed built twice, then (in a copy) again after
# a new post, a back-dated one and one on the same day as another are
# added and a typo in an old one is fixed: each item's id (its guid, else
# its link) is the same from build to build and differs from every other
# item's; a guid that claims to be a permalink is the post's address; the
# items' titles, links and dates are as before. Fails the item's position
# as its id (a new post moves them), a hash of its text (the typo), its
# date (two posts a day) and a bare id with isPermaLink dropped.
FEED_CHECK = unchanged(FEED_FILES, *FEED_POSTS) + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from email.utils import format_datetime

def build(where):
    r = subprocess.run(["python3", "build_feed.py"], cwd=where, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    channel = ET.parse(os.path.join(where, "feed.xml")).getroot().find("channel")
    assert channel.findtext("title") == "Garden club news"
    ids, items = {}, []
    for it in channel.findall("item"):
        link = it.findtext("link")
        guid = it.find("guid")
        ident = link if guid is None else (guid.text or "").strip()
        if guid is not None and guid.get("isPermaLink", "true") == "true":
            assert ident == link, ("a permalink guid that is not the post's address", ident, link)
        assert ident and link not in ids, (ident, link)
        ids[link] = ident
        items.append((it.findtext("title"), link, it.findtext("pubDate")))
    assert len(set(ids.values())) == len(ids), ("two items share an id", ids)
    return ids, items

def date(day):
    return format_datetime(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=timezone.utc))

site = "https://gardenclub.example/posts/"
first, items = build(".")
assert items == [("Spring planting day", site + "spring-planting/", date("2025-03-20")),
                 ("The seed library opens", site + "seed-library/", date("2025-02-03")),
                 ("Seeds & cuttings swap", site + "winter-swap/", date("2025-01-12"))], items
assert build(".")[0] == first, ("the ids changed from one build to the next", first, build(".")[0])
with tempfile.TemporaryDirectory() as d:
    shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git", "__pycache__", "feed.xml"))
    assert build(f"{d}/p")[0] == first, "the ids differ in a copy of the site"
    posts = f"{d}/p/posts"
    for name, title, day in (("2025-04-05-plant-sale.md", "Plant sale", "2025-04-05"),
                             ("2024-12-01-christmas-wreaths.md", "Christmas wreaths", "2024-12-01"),
                             ("2025-03-20-tool-shed.md", "The tool shed is open", "2025-03-20")):
        with open(f"{posts}/{name}", "w") as f:
            f.write(f"title: {title}\ndate: {day}\n\n{title}: see you there.\n")
    with open(f"{posts}/2025-02-03-seed-library.md", "a") as f:
        f.write("Ask Jo for the key.\n")
    after, items = build(f"{d}/p")
    assert len(items) == 6, items
    for link, ident in first.items():
        assert after[link] == ident, ("an old post got a new id", link, ident, after[link])
EOF"""

FEED_SOLUTION = r"""python3 - <<'EOF'
text = open("build_feed.py").read()
text = text.replace('<guid isPermaLink=\\"false\\">{uuid.uuid4()}</guid>', "<guid>{post['link']}</guid>")
text = text.replace("import uuid\n", "")
open("build_feed.py", "w").write(text)
EOF"""

# --- a make target that a folder's name makes up to date -----------------------------------------

SLUG_MAKEFILE = """# make        runs the tests (the first target)
# make lint   checks that every script parses
# make clean  removes the coverage report

test:
\tnode --test test/

lint:
\tfor f in src/*.js test/*.js; do node --check "$$f" || exit 1; done

clean:
\trm -rf coverage
"""

SLUG_JS = r"""// slugify("Hello, World!") -> "hello-world": a page's address from its title.
function slugify(title) {
  return title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

module.exports = { slugify };
"""

SLUG_TEST_JS = """const test = require("node:test");
const assert = require("node:assert");
const { slugify } = require("../src/slug");

test("lower case and dashes", () => assert.strictEqual(slugify("Hello World"), "hello-world"));
test("punctuation goes", () => assert.strictEqual(slugify("Hello, World!"), "hello-world"));
test("accents go", () => assert.strictEqual(slugify("Crème brûlée"), "creme-brulee"));
test("no dashes at the ends", () => assert.strictEqual(slugify("  -Top 10-  "), "top-10"));
"""

SLUG_README = """# slug

Page addresses from titles, for the blog.

    make test
"""

PHONY_FILES = {"Makefile": SLUG_MAKEFILE, "src/slug.js": SLUG_JS, "test/slug.test.js": SLUG_TEST_JS,
               "README.md": SLUG_README, ".gitignore": "coverage/\n"}

# make test, twice in a row: node's test runner runs the four tests and
# they pass; in a copy whose slugify is broken, make test fails. The code,
# the tests and their folder are as they were. Fails the target renamed
# (make test then has nothing to do), the folder renamed (the tests are
# gone from test/), and .PHONY for lint and clean only.
PHONY_CHECK = unchanged(PHONY_FILES, "src/slug.js", "test/slug.test.js") + r""" && python3 - <<'EOF'
import re, shutil, subprocess, tempfile

def make_test(where):
    return subprocess.run(["make", "test"], cwd=where, capture_output=True, text=True, timeout=60)

for _ in range(2):
    r = make_test(".")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert re.search(r"^# pass 4$", r.stdout, re.M) and re.search(r"^# fail 0$", r.stdout, re.M), r.stdout + r.stderr
with tempfile.TemporaryDirectory() as d:
    shutil.copytree(".", f"{d}/p", ignore=shutil.ignore_patterns(".git"))
    with open(f"{d}/p/src/slug.js", "a") as f:
        f.write("module.exports.slugify = (title) => title;\n")
    r = make_test(f"{d}/p")
    assert r.returncode != 0 and re.search(r"^# fail [1-9]", r.stdout, re.M), (r.stdout, r.stderr)
EOF"""

PHONY_SOLUTION = r"""sed -i '1i .PHONY: test lint clean\n' Makefile"""

NIGHT_SHIFT_TASKS = [
    {
        "name": "keep whole note titles",
        "files": TITLE_FILES,
        "prompt": "Some titles in the notes index are missing letters: dreams shows up as \"reams\" and "
                  "meeting-notes as \"eeting notes\".",
        "check": TITLE_CHECK,
        "solution": TITLE_SOLUTION,
    },
    {
        "name": "read zero-padded dates in bash",
        "files": PERIOD_FILES,
        "prompt": "Filing the daily sales report breaks on some dates with \"value too great for base (error "
                  "token is \"08\")\", for example on 2025-08-14 and on 2025-03-09.",
        "check": PERIOD_CHECK,
        "solution": PERIOD_SOLUTION,
    },
    {
        "name": "cherry-pick a fix",
        "files": PICK_FILES,
        "setup": PICK_SETUP,
        "prompt": "The VAT rounding fix is on the redesign branch, but the redesign isn't ready to ship. Get just "
                  "that fix onto main.",
        "check": PICK_CHECK,
        "solution": PICK_SOLUTION,
    },
    {
        "name": "answer from a lock file",
        "files": LOCK_FILES,
        "prompt": "Which exact version of express does a clean npm ci install for the app here? Just tell me, "
                  "don't change anything.",
        "check": LOCK_CHECK,
        "solution": 'echo "npm ci installs express 4.21.2, the version the lock file pins." > "$AGENT_ANSWER"',
    },
    {
        "name": "escape a percent in a password",
        "files": PERCENT_FILES,
        "prompt": "Since I put the new database password into the settings, the app dies on start with "
                  "configparser.InterpolationSyntaxError. The password is right, don't change it.",
        "check": PERCENT_CHECK,
        "solution": PERCENT_SOLUTION,
    },
    {
        "name": "keep a zero setting",
        "files": ZERO_FILES,
        "prompt": "I muted the player and turned autoplay off, but every time it starts again it's back at "
                  "volume 50 with autoplay on.",
        "check": ZERO_CHECK,
        "solution": ZERO_SOLUTION,
    },
    {
        "name": "let unittest find the tests",
        "files": DISCOVER_FILES,
        "prompt": "python3 -m unittest says it ran 0 tests, but we have eight of them in the tests folder.",
        "check": DISCOVER_CHECK,
        "solution": DISCOVER_SOLUTION,
    },
    {
        "name": "keep volunteers without shifts",
        "files": JOIN_FILES,
        "prompt": "The monthly hours report leaves out volunteers who didn't do any shifts that month. They should "
                  "be on it too, with 0 hours.",
        "check": JOIN_CHECK,
        "solution": JOIN_SOLUTION,
    },
    {
        "name": "keep feed ids stable",
        "files": FEED_FILES,
        "prompt": "Every time we rebuild the site, feed readers show all our old posts as new again.",
        "check": FEED_CHECK,
        "solution": FEED_SOLUTION,
    },
    {
        "name": "make a target phony",
        "files": PHONY_FILES,
        "prompt": "make test just says 'test' is up to date and doesn't run a single test.",
        "check": PHONY_CHECK,
        "solution": PHONY_SOLUTION,
    },
]
