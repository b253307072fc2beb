"""Shell checks that the blind task sets share: a file left as it started,
an exact replacement for a reference solution, and a question's answer with
nothing changed."""

import hashlib
import shlex


def unchanged(files, *names):
    """A shell check: each named file is as it started."""
    return " && ".join(
        f"test \"$(sha256sum < {shlex.quote(name)} | cut -d' ' -f1)\" = "
        f"{hashlib.sha256(files[name].encode()).hexdigest()}"
        for name in names)


def replaced(path, *pairs):
    """A shell command that replaces each old text, found exactly once in path, by its new one."""
    lines = [f"path = {path!r}", "text = open(path).read()"]
    for old, new in pairs:
        lines += [f"assert text.count({old!r}) == 1, {old!r}", f"text = text.replace({old!r}, {new!r})"]
    lines.append("open(path, 'w').write(text)")
    return "python3 - <<'EOF'\n" + "\n".join(lines) + "\nEOF"


def left_alone_and_answered(files, names, asserts):
    """A shell check: the named files as they started, git sees no change to
    a tracked file, and the answer (in `answer`) passes `asserts`."""
    return unchanged(files, *names) + r""" && test -z "$(git status --porcelain --untracked-files=no)" \
&& python3 - <<'EOF'
import os, re
answer = open(os.environ["AGENT_ANSWER"]).read()
assert answer.strip(), "no answer"
""" + asserts.strip() + "\nEOF"
