"""The bus stop set of everyday tasks of scripts/realmodel (`--set bus_stop`).

Written after the old, new, fresh, plain, daily, chores, errands, odd jobs,
side quests, back office, night shift, early bird, tea break, second cup,
last orders, closing time, last call and small hours sets, unlike all
eighteen in what is asked (only their tasks' titles were read, to keep
clear of their shapes), by someone who had read no run of any of them (no
transcript, no result, no table, no note on one). It is the kind of
request a developer finishes while waiting for the bus: each a project of
one to four short files, each done by changing a few lines, in as many
kinds of work: a Python update check that compares versions as strings
(1.9.2 taken for newer than 1.10.0); a JavaScript timesheet whose
`map(parseInt)` turns every amount after the first into NaN; a bash disk
check whose `[ "$used" > "$limit" ]` is a redirection, so it always warns
and leaves a file called 90 behind; a Go copy tool whose integer
percentage is 0 until the end; a TOML config made to send mail over port
587 with STARTTLS, under the key the code reads; a JavaScript function
renamed in the module that defines it, the program that uses it and its
tests; a missing unit test added for hours in a Python duration parser;
a Makefile's `make lint` that hands bash an empty file name because the
shell's `$f` is make's; a Markdown list of keyboard shortcuts made to match
the code's keymap; and a question answered from a logrotate config (how
long the app's logs are kept). Seven of the ten prompts name no file.

The keys are those of small_hours_tasks.py: the files, the prompt as a
person would type it, a check, and a solution that `scripts/realmodel
--check-tasks` applies to prove the check fails before it and passes
after (and one setup, which makes a script executable). The few helpers
(a file left as it was, a text replaced once in a file, a question
answered with nothing changed) are written out here rather than taken from
the other sets. Checks run the code (the update check in Python on eight
pairs of versions and from its command line; the timesheet in node on six
lists; the disk check in bash on a copy with df stood in for, at eleven
fillings and limits; the copy tool built with go, offline, and run on
three folders; the digest's dry run; the renamed cart's tests and its
program in node; the new tests in Python against the real parser and two
broken ones; `make lint` on a copy with a broken script put first and then
last), parse the file (the TOML with tomllib; the shortcuts table row by
row against the keymap node reads out of keys.js) or read the answer (with
git to see that nothing changed), rather than look for one spelling, and
use python3 (3.11 or newer, stdlib), node, bash, go, GNU make, git and
coreutils only.

No task has a trick in it, but each check is written so that a plausible
wrong fix fails it too; the comment above each says which.
"""

from checks import left_alone_and_answered, replaced, unchanged  # noqa: F401  (checks.py)


# --- compare versions as numbers (Python; no file named) --------------------------------------

UPDATE_CHECK_PY = '''"""Says whether a newer release is out: python3 update_check.py LATEST"""
import sys
from pathlib import Path


def current_version():
    return Path(__file__).with_name("VERSION").read_text().strip()


def is_newer(latest, current):
    """Whether version `latest` (like 1.4.2) comes after version `current`."""
    return latest > current


def main(latest):
    current = current_version()
    if is_newer(latest, current):
        print(f"update available: {latest} (you have {current})")
    else:
        print(f"up to date ({current})")


if __name__ == "__main__":
    main(sys.argv[1])
'''

VERSION_TXT = "1.9.2\n"

VERSIONS_FILES = {"update_check.py": UPDATE_CHECK_PY, "VERSION": VERSION_TXT}

# is_newer on eight pairs (1.10.0 after 1.9.2, 1.9.10 after 1.9.9, 10.0.0
# after 9.9.9, and none of them the other way round, nor a version after
# itself), then python3 update_check.py 1.10.0 and 1.9.2 with VERSION at
# 1.9.2: an update, then up to date; VERSION as it was. Fails the strings
# compared as they are, the versions as floats (1.10 is 1.1), `!=` (an
# older release taken for an update), and only the last part compared.
VERSIONS_CHECK = unchanged(VERSIONS_FILES, "VERSION") + r""" && python3 - <<'EOF'
import subprocess

from update_check import is_newer

pairs = [("1.10.0", "1.9.2", True), ("1.9.2", "1.10.0", False), ("1.9.10", "1.9.9", True), ("1.9.9", "1.9.10", False),
         ("10.0.0", "9.9.9", True), ("2.0.0", "1.12.3", True), ("1.2.3", "1.2.10", False), ("1.9.2", "1.9.2", False)]
for latest, current, want in pairs:
    assert bool(is_newer(latest, current)) is want, (latest, current, "newer" if want else "not newer")
for latest, want in [("1.10.0", "update available: 1.10.0"), ("1.9.2", "up to date"), ("1.9.1", "up to date")]:
    r = subprocess.run(["python3", "update_check.py", latest], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0 and r.stdout.startswith(want), (latest, r.stdout, r.stderr)
EOF"""

VERSIONS_SOLUTION = replaced("update_check.py", (
    "    return latest > current\n",
    "    def parts(version):\n"
    "        return tuple(int(part) for part in version.split(\".\"))\n\n"
    "    return parts(latest) > parts(current)\n"))

# --- NaN in the timesheet (JavaScript; names the file) ----------------------------------------

TIMESHEET_JS = """// Adds up the minutes worked each day: node timesheet.js 90,45,30
function parseMinutes(text) {
  return text.split(",").map(parseInt);
}

function formatMinutes(total) {
  const hours = Math.floor(total / 60);
  const minutes = total % 60;
  return `${hours}h ${String(minutes).padStart(2, "0")}m`;
}

function main(args) {
  const total = parseMinutes(args[0] || "0").reduce((sum, m) => sum + m, 0);
  console.log(`total: ${formatMinutes(total)}`);
}

if (require.main === module) {
  main(process.argv.slice(2));
}

module.exports = { parseMinutes, formatMinutes };
"""

TIMESHEET_FILES = {"timesheet.js": TIMESHEET_JS}

# node timesheet.js on six lists (one day, two, four, with spaces after the
# commas, with leading zeros): the total in hours and minutes, as before.
# Fails parseInt with the index still passed as its radix, `+` on the
# strings (they are glued together), and the first day alone.
TIMESHEET_CHECK = r"""node - <<'EOF'
const assert = require("assert");
const { execFileSync } = require("child_process");

const cases = [["480", "8h 00m"], ["90,45,30", "2h 45m"], ["30,45", "1h 15m"], ["15,15,15,15", "1h 00m"],
  ["90, 45, 30", "2h 45m"], ["08,09,10", "0h 27m"]];
for (const [input, want] of cases) {
  const out = execFileSync("node", ["timesheet.js", input], { encoding: "utf8", timeout: 20000 });
  assert.strictEqual(out.trim(), `total: ${want}`, input);
}
EOF"""

TIMESHEET_SOLUTION = replaced("timesheet.js", ("map(parseInt)", "map((part) => parseInt(part, 10))"))

# --- the disk check that always warns (bash; no file named) -----------------------------------

DISKCHECK_SH = """#!/usr/bin/env bash
# Warns when the root disk is nearly full: ./diskcheck.sh [LIMIT_PERCENT]
set -u

limit=${1:-90}
used=$(df --output=pcent / | tail -n 1 | tr -dc '0-9')

if [ "$used" > "$limit" ]; then
  echo "warning: / is ${used}% full (limit ${limit}%)"
else
  echo "ok: / is ${used}% full"
fi
"""

DISK_README = """# server-checks

Small checks cron runs on the web server every hour; what they print is mailed to us.

- `diskcheck.sh [LIMIT]`: warns when the root disk is fuller than LIMIT percent (90 by default).
"""

DISK_FILES = {"diskcheck.sh": DISKCHECK_SH, "README.md": DISK_README}

DISK_SETUP = r"""set -e
chmod +x diskcheck.sh
git add --chmod=+x diskcheck.sh
git -c user.name=realmodel -c user.email=realmodel@localhost commit -q --amend --no-edit
"""

# bash diskcheck.sh on a copy of the project, with df stood in for by a
# script that says how full the disk is: at 9, 40 and 89 percent it says
# ok, at 91, 95 and 100 it warns, and with a limit of 50 or 95 given it
# warns above that limit only; each time it shows the percentage, writes
# nothing on stderr and leaves no new file behind; README.md as it was.
# Fails `[[ $used > $limit ]]` (a comparison of strings: 100 is not above
# 90), `-ge` where the code says more than, the limit written in as 90,
# and a fix that still leaves a file called 90.
DISK_CHECK = unchanged(DISK_FILES, "README.md") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile

with tempfile.TemporaryDirectory() as d:
    work = os.path.join(d, "work")
    shutil.copytree(".", work, ignore=shutil.ignore_patterns(".git"))
    stubs = os.path.join(d, "stubs")
    os.mkdir(stubs)
    with open(os.path.join(stubs, "df"), "w") as f:
        f.write('#!/bin/sh\nprintf "Use%%\\n %s%%\\n" "$DF_USED"\n')
    os.chmod(os.path.join(stubs, "df"), 0o755)
    cases = [(40, None, False), (9, None, False), (89, None, False), (90, None, False), (91, None, True),
             (95, None, True), (100, None, True), (60, "50", True), (40, "50", False), (100, "95", True),
             (94, "95", False)]
    for used, limit, warns in cases:
        before = sorted(os.listdir(work))
        env = {**os.environ, "PATH": stubs + os.pathsep + os.environ["PATH"], "DF_USED": str(used)}
        r = subprocess.run(["bash", "diskcheck.sh"] + ([limit] if limit else []), cwd=work, env=env,
                           capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
        said = r.stdout.lower()
        assert ("warn" in said) is warns, (used, limit, r.stdout)
        assert f"{used}%" in said, (used, limit, r.stdout)
        assert not r.stderr.strip(), (used, limit, r.stderr)
        assert sorted(os.listdir(work)) == before, ("new files", set(os.listdir(work)) - set(before))
EOF"""

DISK_SOLUTION = replaced("diskcheck.sh", ('if [ "$used" > "$limit" ]; then', 'if [ "$used" -gt "$limit" ]; then'))

# --- progress stuck at 0% (Go; no file named) -------------------------------------------------

COPYDIR_GO = """// Command copydir copies the files of one folder into another, saying how far it has got:
//
//	copydir SRC DST
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// percent says how far along done of total is, from 0 to 100.
func percent(done, total int) int {
	if total == 0 {
		return 100
	}
	return done / total * 100
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: copydir SRC DST")
		os.Exit(2)
	}
	src, dst := os.Args[1], os.Args[2]
	entries, err := os.ReadDir(src)
	if err == nil {
		err = os.MkdirAll(dst, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "copydir:", err)
		os.Exit(1)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	for i, name := range names {
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			fmt.Fprintln(os.Stderr, "copydir:", err)
			os.Exit(1)
		}
		fmt.Printf("copied %d of %d files (%d%%)\\n", i+1, len(names), percent(i+1, len(names)))
	}
}
"""

COPYDIR_GO_MOD = """module example.com/copydir

go 1.19
"""

COPYDIR_FILES = {"main.go": COPYDIR_GO, "go.mod": COPYDIR_GO_MOD}

# The tool built with go (offline: no proxy, no other toolchain) into a
# folder of its own, and run on folders of 8, 3 and 1 files: a line per
# file, "copied K of N files (P%)", P being K*100/N rounded down or up, and
# every file copied as it was; go.mod as it was. Fails
# float64(done/total)*100 (still 0), done*(100/total) (8 files: 12, 24,
# 36...), and a percentage counted from 0 (the last file at 87%).
COPYDIR_CHECK = unchanged(COPYDIR_FILES, "go.mod") + r""" && python3 - <<'EOF'
import math, os, re, subprocess, tempfile

env = {**os.environ, "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "", "CGO_ENABLED": "0"}
with tempfile.TemporaryDirectory() as d:
    exe = os.path.join(d, "copydir")
    r = subprocess.run(["go", "build", "-o", exe, "."], env=env, capture_output=True, text=True, timeout=50)
    assert r.returncode == 0, r.stderr
    for n in (8, 3, 1):
        src, dst = os.path.join(d, f"src{n}"), os.path.join(d, f"dst{n}")
        os.mkdir(src)
        for i in range(n):
            with open(os.path.join(src, f"photo{i:02d}.txt"), "w") as f:
                f.write(f"photo {i} of {n}\n" * (i + 1))
        r = subprocess.run([exe, src, dst], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, (n, r.stderr)
        lines = r.stdout.splitlines()
        assert len(lines) == n, (n, r.stdout)
        for k, line in enumerate(lines, 1):
            m = re.fullmatch(r"copied (\d+) of (\d+) files \((\d+)%\)", line.strip())
            assert m and int(m[1]) == k and int(m[2]) == n, (n, line)
            assert int(m[3]) in (k * 100 // n, math.ceil(k * 100 / n)), (n, line)
        for i in range(n):
            name = f"photo{i:02d}.txt"
            assert open(os.path.join(dst, name)).read() == open(os.path.join(src, name)).read(), (n, name)
EOF"""

COPYDIR_SOLUTION = replaced("main.go", ("return done / total * 100", "return done * 100 / total"))

# --- mail over port 587 with STARTTLS (TOML; no file named) -----------------------------------

DIGEST_PY = '''"""Mails the weekly digest to the team: python3 digest.py [--dry-run]"""
import smtplib
import sys
import tomllib
from email.message import EmailMessage


def load(path="digest.toml"):
    with open(path, "rb") as f:
        return tomllib.load(f)


def describe(config):
    smtp = config["smtp"]
    how = "STARTTLS" if smtp.get("starttls", False) else "no TLS"
    names = ", ".join(r["name"] for r in config["recipients"])
    return f"{smtp['host']}:{smtp.get('port', 25)} ({how}) to {names}"


def send(config, body):
    smtp = config["smtp"]
    message = EmailMessage()
    message["Subject"] = "This week's digest"
    message["From"] = config["sender"]
    message["To"] = ", ".join(r["email"] for r in config["recipients"])
    message.set_content(body)
    with smtplib.SMTP(smtp["host"], smtp.get("port", 25), timeout=30) as server:
        if smtp.get("starttls", False):
            server.starttls()
        server.send_message(message)


if __name__ == "__main__":
    config = load()
    print("digest via " + describe(config))
    if "--dry-run" not in sys.argv[1:]:
        send(config, open("digest.txt").read())
'''

DIGEST_TOML = """# Settings for digest.py
sender = "digest@example.com"

[smtp]
host = "mail.example.com"
port = 25

[[recipients]]
name = "Ana"
email = "ana@example.com"

[[recipients]]
name = "Bo"
email = "bo@example.com"
"""

DIGEST_TXT = """This week: the new office opens on Monday, and the coffee machine is fixed.
"""

DIGEST_FILES = {"digest.py": DIGEST_PY, "digest.toml": DIGEST_TOML, "digest.txt": DIGEST_TXT}

# digest.toml, read with tomllib: as it was, but for [smtp]'s port, now the
# integer 587, and a starttls key there, true (the boolean); python3
# digest.py --dry-run then says mail.example.com:587 (STARTTLS) to Ana, Bo;
# digest.py and digest.txt as they were. Fails "587" as a string, a key the
# code never reads (tls, use_tls, ssl), starttls = true added at the end of
# the file (it lands in Bo's [[recipients]] entry), port 465, and the
# default changed in digest.py instead.
DIGEST_CHECK = unchanged(DIGEST_FILES, "digest.py", "digest.txt") + r""" && python3 - <<'EOF'
import subprocess, tomllib

before = tomllib.loads(""" + repr(DIGEST_TOML) + r""")
with open("digest.toml", "rb") as f:
    after = tomllib.load(f)
smtp = after.get("smtp")
assert isinstance(smtp, dict) and set(smtp) == {"host", "port", "starttls"}, smtp
assert smtp["port"] == 587 and type(smtp["port"]) is int, smtp
assert smtp["starttls"] is True, smtp
assert smtp["host"] == before["smtp"]["host"], smtp
assert {k: v for k, v in after.items() if k != "smtp"} == {k: v for k, v in before.items() if k != "smtp"}, after
r = subprocess.run(["python3", "digest.py", "--dry-run"], capture_output=True, text=True, timeout=20)
assert r.returncode == 0, r.stderr
assert r.stdout.strip() == "digest via mail.example.com:587 (STARTTLS) to Ana, Bo", r.stdout
EOF"""

DIGEST_SOLUTION = replaced("digest.toml", ("port = 25\n", "port = 587\nstarttls = true\n"))

# --- rename a function used in two files (JavaScript; names nothing but the function) ---------

CART_JS = """// The shopping cart's sums. Prices are in cents.
function calcTotal(items) {
  return items.reduce((sum, item) => sum + item.price * item.qty, 0);
}

function formatCents(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}

module.exports = { calcTotal, formatCents };
"""

CHECKOUT_JS = """// Prints the order summary: node checkout.js
const { calcTotal, formatCents } = require("./cart");

const order = [
  { name: "Notebook", price: 450, qty: 2 },
  { name: "Pen", price: 120, qty: 5 },
  { name: "Stapler", price: 1299, qty: 1 },
];

for (const item of order) {
  console.log(`${item.name.padEnd(10)} ${item.qty} x ${formatCents(item.price)}`);
}
const total = calcTotal(order);
console.log(`Total: ${formatCents(total)}${total >= 2500 ? " (free shipping)" : ""}`);
"""

CART_TEST_JS = """const test = require("node:test");
const assert = require("node:assert");
const { calcTotal, formatCents } = require("./cart");

test("an empty cart costs nothing", () => {
  assert.strictEqual(calcTotal([]), 0);
});

test("quantities are multiplied", () => {
  assert.strictEqual(calcTotal([{ price: 250, qty: 3 }, { price: 100, qty: 1 }]), 850);
});

test("cents are shown as dollars", () => {
  assert.strictEqual(formatCents(2799), "$27.99");
});
"""

CART_FILES = {"cart.js": CART_JS, "checkout.js": CHECKOUT_JS, "cart.test.js": CART_TEST_JS}

CHECKOUT_OUTPUT = """Notebook   2 x $4.50
Pen        5 x $1.20
Stapler    1 x $12.99
Total: $27.99 (free shipping)
"""

# No file of the project says calcTotal any more; cart.js exports
# orderTotal (which sums as before) and formatCents, and no calcTotal;
# node --test cart.test.js runs its three tests and all pass; node
# checkout.js prints what it printed. Fails the function renamed in
# cart.js alone (checkout.js and the tests break), calcTotal kept as an
# alias, and the tests left calling the old name.
CART_CHECK = r"""! grep -rn --exclude-dir=.git calcTotal . && python3 - <<'EOF'
import re, subprocess

r = subprocess.run(["node", "checkout.js"], capture_output=True, text=True, timeout=20)
assert r.returncode == 0 and r.stdout == """ + repr(CHECKOUT_OUTPUT) + r""", (r.stdout, r.stderr)
probe = ("const c = require('./cart.js'); console.log(JSON.stringify([Object.keys(c).sort(), "
         "c.orderTotal([{ price: 250, qty: 3 }, { price: 99, qty: 2 }]), c.orderTotal([])]))")
r = subprocess.run(["node", "-e", probe], capture_output=True, text=True, timeout=20)
assert r.returncode == 0 and r.stdout.strip() == '[["formatCents","orderTotal"],948,0]', (r.stdout, r.stderr)
r = subprocess.run(["node", "--test", "cart.test.js"], capture_output=True, text=True, timeout=30)
out = r.stdout + r.stderr
assert r.returncode == 0, out
assert re.search(r"^# pass 3$", out, re.M) and re.search(r"^# fail 0$", out, re.M), out
EOF"""

CART_SOLUTION = "sed -i 's/calcTotal/orderTotal/g' cart.js checkout.js cart.test.js"

# --- a test for hours (Python; names the file) ------------------------------------------------

DURATION_PY = '''"""Reads durations like 1h30m, 45m or 90s into seconds."""
import re

_PART = re.compile(r"(\\d+)([hms])")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """The number of seconds in `text`, such as "1h30m" or "45s"."""
    text = text.strip().lower()
    if not re.fullmatch(r"(\\d+[hms])+", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _SECONDS[unit] for n, unit in _PART.findall(text))
'''

TEST_DURATION_PY = '''import unittest

from duration import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(parse_duration("90s"), 90)

    def test_minutes(self):
        self.assertEqual(parse_duration("45m"), 2700)

    def test_minutes_and_seconds(self):
        self.assertEqual(parse_duration("1m30s"), 90)

    def test_rejects_garbage(self):
        for text in ["", "soon", "10", "5 minutes"]:
            with self.assertRaises(ValueError):
                parse_duration(text)


if __name__ == "__main__":
    unittest.main()
'''

DURATION_FILES = {"duration.py": DURATION_PY, "test_duration.py": TEST_DURATION_PY}

# python3 -m unittest -v: more than the four tests there were, the four
# still among them, and all passing on duration.py (which is as it was);
# then on two copies of the project with a broken parser (an hour counted
# as 60 seconds; hours left out of the sum) the tests fail. Fails a test
# that hours are accepted but not what they come to, a test of 1h that
# only checks the result is positive, a pytest-style function unittest
# never runs, and a parser changed to suit the test.
DURATION_CHECK = unchanged(DURATION_FILES, "duration.py") + r""" && python3 - <<'EOF'
import os, re, shutil, subprocess, tempfile

ORIGINAL = """ + repr(DURATION_PY) + r"""
BROKEN = [ORIGINAL.replace('"h": 3600', '"h": 60'), ORIGINAL.replace('([hms])")', '([ms])")')]
assert all(b != ORIGINAL for b in BROKEN)


def tests(where):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(["python3", "-m", "unittest", "-v"], cwd=where, env=env, capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)


r = tests(".")
assert r.returncode == 0, r.stderr
ran = re.search(r"^Ran (\d+) tests?", r.stderr, re.M)
assert ran and int(ran[1]) > 4, r.stderr
for name in ("test_seconds", "test_minutes", "test_minutes_and_seconds", "test_rejects_garbage"):
    assert re.search(rf"^{name} \(.*\) \.\.\. ok$", r.stderr, re.M), (name, r.stderr)
for broken in BROKEN:
    with tempfile.TemporaryDirectory() as d:
        work = os.path.join(d, "work")
        shutil.copytree(".", work, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        with open(os.path.join(work, "duration.py"), "w") as f:
            f.write(broken)
        r = tests(work)
        assert r.returncode != 0, ("the tests pass on a parser that gets hours wrong", r.stderr)
EOF"""

DURATION_SOLUTION = replaced("test_duration.py", (
    "    def test_rejects_garbage(self):\n",
    "    def test_hours(self):\n"
    "        self.assertEqual(parse_duration(\"2h\"), 7200)\n"
    "        self.assertEqual(parse_duration(\"1h30m\"), 5400)\n\n"
    "    def test_rejects_garbage(self):\n"))

# --- make lint hands bash an empty name (Makefile; no file named) -----------------------------

LINT_MAKEFILE = """PREFIX ?= $(HOME)/.local
SCRIPTS := $(wildcard scripts/*.sh)

.PHONY: lint install

# Checks every script's syntax without running it.
lint:
\t@for f in $(SCRIPTS); do \\
\t\techo "checking $f"; \\
\t\tbash -n "$f" || exit 1; \\
\tdone

install: lint
\tinstall -d $(PREFIX)/bin
\tinstall -m 755 $(SCRIPTS) $(PREFIX)/bin/
"""

BACKUP_SH = """#!/usr/bin/env bash
# Copies the database dump to the backup disk, keeping a week of them.
set -euo pipefail

dump=/var/backups/shop.sql.gz
day=$(date +%a)
if [ -f "$dump" ]; then
  cp "$dump" "/mnt/backup/shop-$day.sql.gz"
else
  echo "backup: no dump at $dump" >&2
  exit 1
fi
"""

ROTATE_SH = """#!/usr/bin/env bash
# Deletes upload leftovers older than a day.
set -euo pipefail

for dir in /srv/shop/tmp /srv/shop/uploads/partial; do
  find "$dir" -type f -mtime +1 -delete
done
"""

LINT_FILES = {"Makefile": LINT_MAKEFILE, "scripts/backup.sh": BACKUP_SH, "scripts/rotate.sh": ROTATE_SH}

BROKEN_SH = """#!/usr/bin/env bash
if [ -d /tmp ]; then
  echo "no fi"
"""

# make lint on a copy of the project: it passes on the two scripts, and
# fails once a script with a syntax error is added, named to come first and
# then last; the scripts as they were. Fails ${f} and $(f) (make's
# variables, still empty), `|| true` or the loop dropped (the broken script
# let through), and `bash -n $(SCRIPTS)` (bash checks the first file only).
LINT_CHECK = unchanged(LINT_FILES, "scripts/backup.sh", "scripts/rotate.sh") + r""" && python3 - <<'EOF'
import os, shutil, subprocess, tempfile


def lint(where):
    return subprocess.run(["make", "lint"], cwd=where, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


with tempfile.TemporaryDirectory() as d:
    work = os.path.join(d, "work")
    shutil.copytree(".", work, ignore=shutil.ignore_patterns(".git"))
    r = lint(work)
    assert r.returncode == 0, (r.stdout, r.stderr)
    for name in ("aa-broken.sh", "zz-broken.sh"):
        path = os.path.join(work, "scripts", name)
        with open(path, "w") as f:
            f.write(""" + repr(BROKEN_SH) + r""")
        r = lint(work)
        assert r.returncode != 0, (name, "make lint let a broken script through", r.stdout)
        os.remove(path)
EOF"""

LINT_SOLUTION = replaced("Makefile", ('echo "checking $f"', 'echo "checking $$f"'),
                         ('bash -n "$f"', 'bash -n "$$f"'))

# --- the shortcuts docs made to match the keymap (Markdown; names both files) ------------------

KEYS_JS = """// The reader's keyboard shortcuts: each key and what it does.
const KEYS = {
  j: "next article",
  k: "previous article",
  o: "open in a new tab",
  s: "star",
  m: "mark as read",
  r: "refresh",
  "/": "search",
  "?": "show this help",
};

function onKey(event, reader) {
  if (event.ctrlKey || event.metaKey || event.altKey) return false;
  const action = KEYS[event.key];
  if (!action) return false;
  reader.run(action);
  return true;
}

module.exports = { KEYS, onKey };
"""

SHORTCUTS_MD = """# Keyboard shortcuts

Press a key anywhere in the reader (not while typing in the search box).

| Key | What it does |
| --- | --- |
| `j` | next article |
| `k` | previous article |
| `o` | open in a new tab |
| `s` | star |
| `u` | mark as read |
| `x` | hide read articles |
| `r` | refresh |
| `/` | search |

Shortcuts with Ctrl, Alt or Cmd are left to the browser.
"""

READER_README = """# reader

A small feed reader that runs in the browser. The keyboard shortcuts are in docs/shortcuts.md.
"""

SHORTCUTS_FILES = {"keys.js": KEYS_JS, "docs/shortcuts.md": SHORTCUTS_MD, "README.md": READER_README}

# docs/shortcuts.md's table, read row by row (backticks and <kbd> around a
# key allowed, case and full stops in what it does ignored), holds exactly
# the keys of keys.js's KEYS as node reads them, each once, each with what
# the keymap says it does; the text before and after the table as before;
# keys.js and README.md as they were. Fails the keymap changed to suit the
# docs, u kept for mark as read, x left in, ? left out, and the missing
# row added below the table.
SHORTCUTS_CHECK = unchanged(SHORTCUTS_FILES, "keys.js", "README.md") + r""" && python3 - <<'EOF'
import json, re, subprocess

ORIGINAL = """ + repr(SHORTCUTS_MD) + r"""


def split(text):
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if line.lstrip().startswith("|")]
    assert rows and rows == list(range(rows[0], rows[-1] + 1)), "one table, its rows together"
    return "\n".join(lines[:rows[0]]), [lines[i] for i in rows], "\n".join(lines[rows[-1] + 1:])


def norm(text):
    text = re.sub(r"</?kbd>|`", "", text).strip().lower()
    return re.sub(r"\s+", " ", text).rstrip(".").strip()


r = subprocess.run(["node", "-e", "console.log(JSON.stringify(require('./keys.js').KEYS))"], capture_output=True,
                   text=True, timeout=20)
assert r.returncode == 0, r.stderr
keymap = json.loads(r.stdout)
old_top, _, old_bottom = split(ORIGINAL)
top, rows, bottom = split(open("docs/shortcuts.md").read())
assert top.split() == old_top.split() and bottom.split() == old_bottom.split(), (top, bottom)
assert len(rows) >= 2 and re.fullmatch(r"\|?[\s:|-]+\|?", rows[1].strip()), rows[:2]
documented = {}
for row in rows[2:]:
    cells = [c for c in row.strip().strip("|").split("|")]
    assert len(cells) == 2, row
    key, action = norm(cells[0]), norm(cells[1])
    assert key not in documented, ("twice", key)
    documented[key] = action
assert documented == {k: norm(v) for k, v in keymap.items()}, documented
EOF"""

SHORTCUTS_SOLUTION = replaced("docs/shortcuts.md", ("| `u` | mark as read |\n| `x` | hide read articles |\n",
                                                    "| `m` | mark as read |\n"),
                              ("| `/` | search |\n", "| `/` | search |\n| `?` | show this help |\n"))

# --- a question answered from a logrotate config (no file named) ------------------------------

LOGROTATE_SHOP = """/var/log/shop/*.log {
    daily
    rotate 14
    compress
    delaycompress
    missingok
    notifempty
    create 0640 shop shop
}
"""

LOGROTATE_NGINX = """/var/log/nginx/*.log {
    weekly
    rotate 4
    compress
    delaycompress
    missingok
    notifempty
    sharedscripts
    postrotate
        [ -s /run/nginx.pid ] && kill -USR1 "$(cat /run/nginx.pid)"
    endscript
}
"""

SERVER_README = """# shop-server

What goes on the shop's web server besides the app itself:

- `deploy/logrotate/*` goes in /etc/logrotate.d/.
- `deploy/shop.service` is the app's systemd unit.
"""

SHOP_SERVICE = """[Unit]
Description=The shop app
After=network.target

[Service]
User=shop
ExecStart=/srv/shop/bin/shop --log-dir /var/log/shop
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""

LOGS_FILES = {"deploy/logrotate/shop": LOGROTATE_SHOP, "deploy/logrotate/nginx": LOGROTATE_NGINX,
              "README.md": SERVER_README, "deploy/shop.service": SHOP_SERVICE}

# Nothing changed (each file as it started, and git sees no change to a
# tracked file), and the answer says 14 days (or two weeks, or a
# fortnight), and not 14 weeks. Fails an empty answer, nginx's 4 weeks
# alone, "14 rotations" with no days, and a changed file.
LOGS_CHECK = left_alone_and_answered(LOGS_FILES, tuple(LOGS_FILES), r"""
assert re.search(r"(?<![\d.])(14|fourteen)[\s-]*(days?|daily)\b|\b(two|2)[\s-]*weeks?\b|\bfortnight", answer, re.I), answer
assert not re.search(r"(?<![\d.])(14|fourteen)[\s-]*weeks?\b", answer, re.I), answer
""")

LOGS_SOLUTION = r"""echo "14 days: logrotate rotates /var/log/shop/*.log daily and keeps 14 old files (rotate 14)." > "$AGENT_ANSWER" """

BUS_STOP_TASKS = [
    {
        "name": "compare versions as numbers",
        "files": VERSIONS_FILES,
        "prompt": "The update check says we're up to date when 1.10.0 is out and we're on 1.9.2. Fix it.",
        "check": VERSIONS_CHECK,
        "solution": VERSIONS_SOLUTION,
    },
    {
        "name": "stop the timesheet total coming out nan",
        "files": TIMESHEET_FILES,
        "prompt": "node timesheet.js 90,45,30 prints \"total: NaNh NaNm\". It should say 2h 45m. Can you fix it?",
        "check": TIMESHEET_CHECK,
        "solution": TIMESHEET_SOLUTION,
    },
    {
        "name": "warn only when the disk is full",
        "files": DISK_FILES,
        "setup": DISK_SETUP,
        "prompt": "The disk check always warns that the disk is nearly full, even when it's at 40%, and a file "
                  "called 90 keeps showing up next to it. Please fix it.",
        "check": DISK_CHECK,
        "solution": DISK_SOLUTION,
    },
    {
        "name": "show real progress while copying",
        "files": COPYDIR_FILES,
        "prompt": "The copy tool's progress says 0% for every file and then jumps to 100% at the end. Make the "
                  "percentage right.",
        "check": COPYDIR_CHECK,
        "solution": COPYDIR_SOLUTION,
    },
    {
        "name": "send the digest with starttls",
        "files": DIGEST_FILES,
        "prompt": "Our mail server now only takes mail on port 587 with STARTTLS. Change the weekly digest's "
                  "settings to use that.",
        "check": DIGEST_CHECK,
        "solution": DIGEST_SOLUTION,
    },
    {
        "name": "rename calcTotal to orderTotal",
        "files": CART_FILES,
        "prompt": "Rename calcTotal to orderTotal everywhere it's used.",
        "check": CART_CHECK,
        "solution": CART_SOLUTION,
    },
    {
        "name": "add a test for hours",
        "files": DURATION_FILES,
        "prompt": "test_duration.py doesn't test hours at all (like 2h or 1h30m). Add a test for that.",
        "check": DURATION_CHECK,
        "solution": DURATION_SOLUTION,
    },
    {
        "name": "make lint check each script",
        "files": LINT_FILES,
        "prompt": "make lint fails with \"bash: : No such file or directory\" even though the scripts are fine. "
                  "Fix it so it checks each script.",
        "check": LINT_CHECK,
        "solution": LINT_SOLUTION,
    },
    {
        "name": "fix the shortcut list in the docs",
        "files": SHORTCUTS_FILES,
        "prompt": "docs/shortcuts.md doesn't match the shortcuts the reader really has. Update the docs to match "
                  "keys.js (don't change the code).",
        "check": SHORTCUTS_CHECK,
        "solution": SHORTCUTS_SOLUTION,
    },
    {
        "name": "answer from a logrotate config",
        "files": LOGS_FILES,
        "prompt": "How long do we keep the shop app's logs before they get deleted? Just tell me, don't change "
                  "anything.",
        "check": LOGS_CHECK,
        "solution": LOGS_SOLUTION,
    },
]
