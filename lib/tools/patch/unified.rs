//! Unified diffs as `diff -u` and `git diff` write them: `---`/`+++` file
//! headers (with `a/` and `b/` prefixes, `/dev/null` for a new or deleted
//! file, timestamps after a tab), `diff --git` headers with new and deleted
//! files, renames and mode changes, hunks with `\ No newline at end of file`,
//! several files. Text outside file sections (a commit message, `Index:`
//! lines) is skipped, as `patch` does.
//!
//! Models also write hunks without line numbers (`@@ @@`, `@@`) and
//! miscount lines in headers: a hunk then runs to the next header, and its
//! lines are placed by their content alone.

use super::model::{Change, FilePatch, Format, Hunk, HunkLine, Op, Patch, content_of, split_lines};
use crate::tools::matching::ladder::is_elision;

/// A parse error: the 1-based line of the patch and what is wrong there.
pub type ParseError = (usize, String);

/// Parses the numbers of a hunk header after its leading `@@`:
/// `-A[,B] +C[,D] @@ ...` gives (A, B, D), counts defaulting to 1.
pub fn parse_range_header(rest: &str) -> Option<(usize, usize, usize)> {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('-')?;
    let (old, rest) = rest.split_once(' ')?;
    let rest = rest.trim_start().strip_prefix('+')?;
    let new = rest.split([' ', '@']).next()?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (_, d) = range(new)?;
    Some((a, b, d))
}

/// Whether `text` looks like a unified diff.
pub fn looks_like(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(200).collect();
    lines.iter().any(|l| l.starts_with("diff --git "))
        || lines
            .windows(2)
            .any(|w| w[0].starts_with("--- ") && w[1].starts_with("+++ "))
}

/// What a `diff --git` header and its extended lines say.
#[derive(Default)]
struct GitHeader {
    a: Option<String>,
    b: Option<String>,
    new_mode: Option<u32>,
    deleted: bool,
    created: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
}

/// Parses a unified diff. `strip` removes that many leading path
/// components (`patch -pN`); without it `a/` and `b/` prefixes are removed
/// when the diff uses them. `exists` tells whether a path names a file, to
/// choose between two different names.
pub fn parse(
    text: &str,
    strip: Option<usize>,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Patch, ParseError> {
    let lines = split_lines(text);
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].0;
        let mut git = None;
        if let Some(rest) = l.strip_prefix("diff --git ") {
            let mut h = GitHeader::default();
            if let Some((a, b)) = split_git_paths(rest) {
                h.a = Some(a);
                h.b = Some(b);
            }
            i += 1;
            while i < lines.len() {
                let x = lines[i].0;
                if let Some(m) = x.strip_prefix("new file mode ") {
                    h.created = true;
                    h.new_mode = Some(mode(m, i)?);
                } else if x.starts_with("deleted file mode ") {
                    h.deleted = true;
                } else if let Some(m) = x.strip_prefix("new mode ") {
                    h.new_mode = Some(mode(m, i)?);
                } else if let Some(p) = x.strip_prefix("rename from ") {
                    h.rename_from = Some(unquote(p));
                } else if let Some(p) = x.strip_prefix("rename to ") {
                    h.rename_to = Some(unquote(p));
                } else if x.starts_with("copy from ") || x.starts_with("copy to ") {
                    return Err((
                        i + 1,
                        "copies (`copy from`/`copy to`) are not supported; add the new file with its whole content instead".into(),
                    ));
                } else if x.starts_with("Binary files ") || x == "GIT binary patch" {
                    return Err((
                        i + 1,
                        "binary patches are not supported; ag-patch changes text files".into(),
                    ));
                } else if x.starts_with("old mode ")
                    || x.starts_with("index ")
                    || x.starts_with("similarity index ")
                    || x.starts_with("dissimilarity index ")
                {
                } else {
                    break;
                }
                i += 1;
            }
            git = Some(h);
        }
        let header_at = i;
        let mut names: Option<(Option<String>, Option<String>)> = None;
        if i + 1 < lines.len()
            && lines[i].0.starts_with("--- ")
            && lines[i + 1].0.starts_with("+++ ")
        {
            names = Some((file_name(&lines[i].0[4..]), file_name(&lines[i + 1].0[4..])));
            i += 2;
        }
        if git.is_none() && names.is_none() {
            if l.starts_with("@@") {
                return Err((
                    i + 1,
                    "a hunk without a file header before it: start each file with `--- a/path` and `+++ b/path` lines".into(),
                ));
            }
            // Text between files (a commit message, `Index:` lines).
            i += 1;
            continue;
        }
        let mut hunks = Vec::new();
        while i < lines.len() && lines[i].0.starts_with("@@") {
            let (h, used) = hunk(&lines[i..], i)?;
            hunks.push(h);
            i += used;
        }
        files.push(file_patch(git, names, hunks, strip, exists, header_at)?);
    }
    if files.is_empty() {
        return Err((
            1,
            "no file in the diff: a unified diff starts each file with `--- a/path` and `+++ b/path` lines, then `@@` hunks".into(),
        ));
    }
    Ok(Patch {
        format: Format::Unified,
        files,
    })
}

fn mode(text: &str, i: usize) -> Result<u32, ParseError> {
    let m = u32::from_str_radix(text.trim(), 8)
        .map_err(|_| (i + 1, format!("`{}` is not a file mode", text.trim())))?;
    match m & 0o170000 {
        0o100000 => Ok(m & 0o7777),
        0o120000 => Err((
            i + 1,
            "symlinks in patches are not supported; create the link with bash (ln -s)".into(),
        )),
        _ => Err((
            i + 1,
            format!("mode {text} (a submodule or special file) is not supported"),
        )),
    }
}

/// `a/x b/y` from a `diff --git` line, when it can be split unambiguously.
fn split_git_paths(rest: &str) -> Option<(String, String)> {
    if let Some(quoted) = rest.strip_prefix('"') {
        let end = quoted.find("\" ")? + 1;
        return Some((unquote(&rest[..=end]), unquote(rest[end + 1..].trim())));
    }
    if let Some(k) = rest.find(" b/") {
        return Some((rest[..k].to_string(), rest[k + 1..].to_string()));
    }
    // Without prefixes: the two halves are the same path.
    let half = rest.len() / 2;
    (rest.len() % 2 == 1 && rest[..half] == rest[half + 1..] && rest.as_bytes()[half] == b' ')
        .then(|| (rest[..half].to_string(), rest[half + 1..].to_string()))
}

/// The path of a `---`/`+++` line: `None` for `/dev/null`; quotes removed;
/// a timestamp after a tab dropped.
fn file_name(raw: &str) -> Option<String> {
    let raw = raw.trim_start();
    let name = if raw.starts_with('"') {
        unquote(raw)
    } else {
        raw.split('\t').next().unwrap_or(raw).trim_end().to_string()
    };
    (name != "/dev/null").then_some(name)
}

/// A path as git quotes it (`"a/sp\303\251cial\tname"`), unquoted.
fn unquote(s: &str) -> String {
    let s = s.trim();
    let Some(inner) = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = it.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        it.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(o) => bytes.push(o),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Removes `n` leading components of a path.
fn strip_components(path: &str, n: usize) -> String {
    let mut p = path;
    for _ in 0..n {
        match p.find('/') {
            Some(k) => p = p[k + 1..].trim_start_matches('/'),
            None => break,
        }
    }
    p.to_string()
}

fn file_patch(
    git: Option<GitHeader>,
    names: Option<(Option<String>, Option<String>)>,
    hunks: Vec<Hunk>,
    strip: Option<usize>,
    exists: &dyn Fn(&str) -> bool,
    at: usize,
) -> Result<FilePatch, ParseError> {
    let git = git.unwrap_or_default();
    let (mut old, mut new) = match names {
        Some((o, n)) => (o, n),
        // A git section without ---/+++ (an empty new or deleted file, a
        // pure rename or mode change): the names come from its header.
        None => (
            if git.created { None } else { git.a.clone() },
            if git.deleted { None } else { git.b.clone() },
        ),
    };
    let prefixed = strip.is_none()
        && (old.is_some() || new.is_some())
        && old.as_deref().is_none_or(|o| o.starts_with("a/"))
        && new.as_deref().is_none_or(|n| n.starts_with("b/"));
    let n = strip.unwrap_or(usize::from(prefixed));
    old = old.map(|o| strip_components(&o, n));
    new = new.map(|p| strip_components(&p, n));
    // Rename lines carry paths without prefixes.
    if let (Some(from), Some(to)) = (&git.rename_from, &git.rename_to) {
        old = Some(from.clone());
        new = Some(to.clone());
    }
    let deleted = git.deleted || (new.is_none() && old.is_some());
    let created = git.created || (old.is_none() && new.is_some());
    let path_err = || (at + 1, "a file section without a file name".to_string());
    if created {
        let path = new.ok_or_else(path_err)?;
        let mut content: Vec<(String, bool)> = Vec::new();
        let mut no_newline = false;
        for h in &hunks {
            if let Some(l) = h.lines.iter().find(|l| l.op != Op::Add) {
                return Err((
                    at + 1,
                    format!(
                        "`{path}` is a new file, but its hunk has the line `{}` that is not added (`+`)",
                        l.text
                    ),
                ));
            }
            content.extend(h.lines.iter().map(|l| (l.text.clone(), false)));
            no_newline = h.new_no_newline;
        }
        return Ok(FilePatch {
            path,
            change: Change::Add {
                content: content_of(&content, no_newline),
                mode: git.new_mode,
                overwrite: false,
            },
        });
    }
    if deleted {
        let path = old.ok_or_else(path_err)?;
        return Ok(FilePatch {
            path,
            change: Change::Delete { hunks },
        });
    }
    let (old, new) = (old.ok_or_else(path_err)?, new.ok_or_else(path_err)?);
    let renamed = git.rename_from.is_some() || (git.a.is_some() && old != new);
    let (path, move_to) = if old == new {
        (old, None)
    } else if renamed {
        (old, Some(new))
    } else if exists(&old) || !exists(&new) {
        // `diff -u old new` of two files: patch changes the one that exists.
        (old, None)
    } else {
        (new, None)
    };
    if hunks.is_empty() && move_to.is_none() && git.new_mode.is_none() {
        return Err((
            at + 1,
            format!("the diff of `{path}` has no hunks (no `@@` lines after its header)"),
        ));
    }
    Ok(FilePatch {
        path,
        change: Change::Update {
            hunks,
            move_to,
            mode: git.new_mode,
        },
    })
}

/// Whether line `i` starts a new section or hunk. A `---` line counts only
/// when `+++` and a hunk follow it, so that a removed line `-- x` followed
/// by an added `++ y` is not taken for a file header.
fn is_header(lines: &[(&str, bool)], i: usize) -> bool {
    let l = lines[i].0;
    let at = |k: usize, p: &str| lines.get(k).is_some_and(|n| n.0.starts_with(p));
    l.starts_with("@@")
        || l.starts_with("diff --git ")
        || (l.starts_with("--- ") && at(i + 1, "+++ ") && (at(i + 2, "@@") || i + 2 >= lines.len()))
}

/// The first hunk line (context, removed or added) after line `i`, before
/// the next section or hunk: when there is one, the hunk goes on past `i`.
fn next_hunk_line(lines: &[(&str, bool)], i: usize) -> Option<usize> {
    (i + 1..lines.len())
        .take_while(|&k| !is_header(lines, k))
        .find(|&k| {
            let l = lines[k].0;
            l != "-- " && matches!(l.as_bytes().first(), Some(b' ' | b'+' | b'-'))
        })
}

/// One hunk starting at its `@@` line; returns it and the lines used.
fn hunk(lines: &[(&str, bool)], first: usize) -> Result<(Hunk, usize), ParseError> {
    let header = lines[0].0;
    let counts = parse_range_header(&header[2..]);
    let mut h = Hunk {
        header: header.to_string(),
        ..Default::default()
    };
    let (mut old_left, mut new_left) = (0, 0);
    let mut counted = false;
    if let Some((a, b, d)) = counts {
        h.old_start = Some(a);
        (old_left, new_left, counted) = (b, d, true);
    }
    // Empty patch lines at the end of an uncounted hunk are separators.
    let mut trailing_empty = 0;
    // A hunk line ahead of a run of lines without their prefix (see below).
    let mut goes_on_to = 0;
    let mut i = 1;
    while i < lines.len() {
        let (l, _) = lines[i];
        if let Some(rest) = l.strip_prefix('\\') {
            if !rest.trim_start().starts_with("No newline") && !rest.trim().is_empty() {
                return Err((first + i + 1, format!("unknown marker line `{l}`")));
            }
            match h.lines.last().map(|x| x.op) {
                Some(Op::Remove) => h.old_no_newline = true,
                Some(Op::Add) => h.new_no_newline = true,
                Some(Op::Context) => {
                    h.old_no_newline = true;
                    h.new_no_newline = true;
                }
                None => {}
            }
            h.at_eof = true;
            i += 1;
            continue;
        }
        if counted && old_left == 0 && new_left == 0 {
            // The header's counts are used up. A model that miscounted
            // goes on with more hunk lines; anything else ends the hunk.
            // (`-- ` alone is the signature line `git format-patch` ends with.)
            let more = (matches!(l.as_bytes().first(), Some(b' ' | b'+' | b'-')) && l != "-- ")
                || is_elision(l);
            if !more || is_header(lines, i) {
                break;
            }
            counted = false;
        }
        if is_header(lines, i) {
            break;
        }
        let (op, text) = match l.as_bytes().first() {
            None => (Op::Context, ""),
            Some(b' ') => (Op::Context, &l[1..]),
            Some(b'-') => (Op::Remove, &l[1..]),
            Some(b'+') => (Op::Add, &l[1..]),
            // aider's `...` for lines left out, without the context
            // line's space: placed by the ladder's elision.
            Some(_) if is_elision(l) => (Op::Context, l.trim()),
            // A context line whose space a model left out (or an added
            // line without its `+`): the hunk goes on after it, and ending
            // it here would drop the rest as text after the diff. Placing
            // the hunk checks the line against the file like any context
            // line, so a missing `+` is refused, never applied in part.
            // (The line found ahead is kept, so a long run of such lines
            // is looked through once, not once per line.)
            Some(_)
                if i < goes_on_to || {
                    goes_on_to = next_hunk_line(lines, i).unwrap_or(0);
                    i < goes_on_to
                } =>
            {
                h.unprefixed += 1;
                (Op::Context, l)
            }
            // Anything else ends the hunk (text after the diff).
            Some(_) => break,
        };
        if l.is_empty() && !counted {
            trailing_empty += 1;
        } else {
            trailing_empty = 0;
        }
        if op != Op::Add {
            old_left = old_left.saturating_sub(1);
        }
        if op != Op::Remove {
            new_left = new_left.saturating_sub(1);
        }
        h.lines.push(HunkLine {
            op,
            text: text.to_string(),
        });
        i += 1;
    }
    for _ in 0..trailing_empty {
        h.lines.pop();
    }
    if h.lines.is_empty() {
        return Err((first + 1, format!("the hunk `{header}` has no lines")));
    }
    // `-N,0`: nothing removed; N is the line the new lines go after.
    if let Some((a, 0, _)) = counts {
        h.old_start = Some(a);
    }
    Ok((h, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn git_diff_with_every_kind_of_section() {
        let diff = "\
commit message text
diff --git a/src/x.rs b/src/x.rs
index 83db48f..bf269f4 100644
--- a/src/x.rs
+++ b/src/x.rs
@@ -1,3 +1,3 @@ fn main() {
 a
-b
+B
 c
diff --git a/new.txt b/new.txt
new file mode 100755
index 0000000..e69de29
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
\\ No newline at end of file
diff --git a/empty b/empty
new file mode 100644
index 0000000..e69de29
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/from.txt b/to.txt
similarity index 100%
rename from from.txt
rename to to.txt
";
        let p = parse(diff, None, &none).unwrap();
        assert_eq!(p.files.len(), 5);
        assert_eq!(p.files[0].path, "src/x.rs");
        match &p.files[0].change {
            Change::Update { hunks, .. } => {
                assert_eq!(hunks[0].old(), vec!["a", "b", "c"]);
                assert_eq!(hunks[0].new_lines(), vec!["a", "B", "c"]);
                assert_eq!(hunks[0].old_start, Some(1));
            }
            c => panic!("{c:?}"),
        }
        assert_eq!(
            p.files[1].change,
            Change::Add {
                content: b"hello\nworld".to_vec(),
                mode: Some(0o755),
                overwrite: false
            }
        );
        assert_eq!(p.files[2].path, "empty");
        assert!(matches!(&p.files[2].change, Change::Add { content, .. } if content.is_empty()));
        assert_eq!(p.files[3].path, "old.txt");
        assert!(matches!(p.files[3].change, Change::Delete { .. }));
        assert_eq!(p.files[4].path, "from.txt");
        assert!(matches!(&p.files[4].change,
            Change::Update { move_to: Some(t), hunks, .. } if t == "to.txt" && hunks.is_empty()));
    }

    #[test]
    fn a_line_without_its_prefix_is_context_while_the_hunk_goes_on() {
        // A context line that lost its space in the middle of a hunk: the
        // changes after it stay in the hunk. Text after the last hunk line
        // still ends it.
        let diff = "--- a/p.html\n+++ b/p.html\n@@ @@\n<head>\n-<title>A</title>\n<link>\n+<title>B</title>\n</head>\nThat adds the title.\n";
        let p = parse(diff, None, &none).unwrap();
        let Change::Update { hunks, .. } = &p.files[0].change else {
            panic!("{:?}", p.files[0].change);
        };
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].old(), vec!["<head>", "<title>A</title>", "<link>"]);
        assert_eq!(
            hunks[0].new_lines(),
            vec!["<head>", "<link>", "<title>B</title>"]
        );
        assert_eq!(hunks[0].unprefixed, 2);
        assert_eq!(p.unprefixed_hunks(), vec![("p.html".to_string(), 1, 2)]);
        // A run of such lines, each read once as context up to the change
        // after it; the run after the last change ends the hunk.
        let run: String = (0..5000).map(|n| format!("line {n}\n")).collect();
        let diff = format!("--- a/p.txt\n+++ b/p.txt\n@@ @@\n{run}-old\n+new\n{run}");
        let p = parse(&diff, None, &none).unwrap();
        let Change::Update { hunks, .. } = &p.files[0].change else {
            panic!("{:?}", p.files[0].change);
        };
        assert_eq!(hunks[0].unprefixed, 5000);
        assert_eq!(hunks[0].lines.len(), 5002);
        assert_eq!(hunks[0].new_lines().last(), Some(&"new"));
    }

    #[test]
    fn plain_diff_u_and_model_slips() {
        // Timestamps, no prefixes, no line numbers, a miscounted header.
        let diff = "--- f.txt\t2024-01-01 00:00:00\n+++ f.txt\t2024-01-02 00:00:00\n@@ @@\n x\n-y\n+z\n\n\n--- g.txt\n+++ g.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n+c\n";
        let p = parse(diff, None, &none).unwrap();
        assert_eq!(p.files[0].path, "f.txt");
        match (&p.files[0].change, &p.files[1].change) {
            (Change::Update { hunks: h0, .. }, Change::Update { hunks: h1, .. }) => {
                assert_eq!(h0[0].old_start, None);
                assert_eq!(h0[0].lines.len(), 3);
                assert_eq!(h1[0].new_lines(), vec!["b", "c"]);
            }
            c => panic!("{c:?}"),
        }
        // A removed line that looks like a header is still a removed line.
        let p = parse(
            "--- a/m.md\n+++ b/m.md\n@@ -1,2 +1,1 @@\n--- x\n keep\n",
            None,
            &none,
        )
        .unwrap();
        match &p.files[0].change {
            Change::Update { hunks, .. } => assert_eq!(hunks[0].old(), vec!["-- x", "keep"]),
            c => panic!("{c:?}"),
        }
        // A bare `...` line (lines left out) is context, even past the
        // header's counts: the lines after it stay in the hunk.
        let p = parse(
            "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    a = 1\n+    a = 10\n...\n-    return a\n+    return a + c\n",
            None,
            &none,
        )
        .unwrap();
        match &p.files[0].change {
            Change::Update { hunks, .. } => assert_eq!(
                hunks[0].old(),
                vec!["def f():", "    a = 1", "...", "    return a"]
            ),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn headers_and_paths() {
        assert_eq!(parse_range_header(" -3,4 +5,6 @@ fn x"), Some((3, 4, 6)));
        assert_eq!(parse_range_header("-3 +5 @@"), Some((3, 1, 1)));
        assert_eq!(parse_range_header(" @@"), None);
        assert_eq!(unquote("\"a/sp\\303\\251 c\""), "a/spé c");
        assert_eq!(strip_components("a/b/c", 1), "b/c");
        assert_eq!(
            split_git_paths("a/x y b/x y"),
            Some(("a/x y".into(), "b/x y".into()))
        );
        assert_eq!(split_git_paths("x x"), Some(("x".into(), "x".into())));
        let p = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", Some(0), &none).unwrap();
        assert_eq!(p.files[0].path, "a/x");
        // Two names, not git: the one that exists.
        let p = parse("--- old.c\n+++ new.c\n@@ -1 +1 @@\n-a\n+b\n", None, &|p| {
            p == "new.c"
        })
        .unwrap();
        assert_eq!(p.files[0].path, "new.c");
    }

    #[test]
    fn refusals() {
        assert!(parse("just text\n", None, &none).is_err());
        assert_eq!(
            parse("@@ -1 +1 @@\n-a\n+b\n", None, &none).unwrap_err().0,
            1
        );
        let e = parse(
            "diff --git a/b.png b/b.png\nBinary files a/b.png and b/b.png differ\n",
            None,
            &none,
        )
        .unwrap_err();
        assert!(e.1.contains("binary"), "{e:?}");
        let e = parse("--- a/x\n+++ b/x\n", None, &none).unwrap_err();
        assert!(e.1.contains("no hunks"), "{e:?}");
    }
}
