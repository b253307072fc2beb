//! In-process checkpoints against git's own on real repositories: the same
//! trees, taken without git where they can be, and through git (with a
//! note) where they cannot.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn sh(dir: &Path, script: &str) {
    let st = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "{script}");
}

/// A repository with a first commit, and three sessions on it: one that
/// watches and takes checkpoints in-process, one that watches but always
/// goes through git, and one that asks git about everything every time.
struct Three {
    dir: PathBuf,
    direct: Checkpoints,
    by_git: Checkpoints,
    plain: Checkpoints,
}

fn three(tmp: &Path, setup: impl FnOnce(&Path)) -> Three {
    let dir = tmp.canonicalize().unwrap().join("repo");
    let home = tmp.canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    setup(&dir);
    let place = Place::find(&dir, &home).unwrap();
    Three {
        direct: Checkpoints::new(place.clone(), "d", &home, 1 << 20).watching_with(true),
        by_git: Checkpoints::new(place.clone(), "g", &home, 1 << 20).watching_with(false),
        plain: Checkpoints::new(place, "p", &home, 1 << 20),
        dir,
    }
}

impl Three {
    /// Runs each step, then records in the three sessions: the trees must
    /// be the same, the in-process one taken without git after the first,
    /// and its list of changes the one git gives between the two trees.
    fn steps(&self, steps: &[&str]) {
        let mut last: Option<Recorded> = None;
        for (i, step) in steps.iter().enumerate() {
            sh(&self.dir, step);
            let d = self.direct.record(step).unwrap();
            let g = self.by_git.record(step).unwrap();
            let p = self.plain.record(step).unwrap();
            assert_eq!(d.tree, p.tree, "in-process, after `{step}`");
            assert_eq!(g.tree, p.tree, "through git, after `{step}`");
            assert!(!g.in_process);
            assert_eq!(d.in_process, i > 0, "after `{step}`: {:?}", d.fallback);
            assert_eq!(d.fallback, None);
            if let Some(before) = &last {
                let by_git = self.direct.changes(&before.tree, &d.tree).unwrap();
                assert_eq!(d.changes, by_git, "after `{step}`");
                assert_eq!(d.new, before.tree != d.tree);
                if d.new {
                    assert_eq!(
                        git(&self.dir, &["rev-parse", &format!("{}^", d.commit)]).trim(),
                        before.commit
                    );
                }
            }
            assert_eq!(
                self.direct.head().unwrap(),
                Some((d.commit.clone(), d.tree.clone()))
            );
            last = Some(d);
        }
    }
}

#[test]
fn in_process_checkpoints_record_what_git_records() {
    let tmp = tempfile::tempdir().unwrap();
    let t = three(tmp.path(), |dir| {
        write(dir, "a.txt", "a\n");
        write(dir, "sub/b.txt", "b\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "start"]);
    });
    let index = std::fs::read(t.dir.join(".git/index")).unwrap();
    let refs = git(&t.dir, &["for-each-ref"]);
    t.steps(&[
        "true",
        "echo two > a.txt",
        "true",
        "mkdir -p new/x/y && echo z > new/x/y/z.txt && echo q > new/q.txt",
        "rm sub/b.txt && chmod +x a.txt",
        "mv new moved && echo w > moved/x/y/w.txt",
        "ln -s a.txt link && rm moved/q.txt && mkdir moved/q.txt && echo in > moved/q.txt/f",
        "mv moved/x/y/z.txt top.txt && mv sub gone && rmdir gone",
        "rm link && mkdir link && echo l > link/f && rm -r moved/q.txt && echo file > moved/q.txt",
        "rm -rf moved link",
        "mkfifo fifo && printf '\\0\\1' > 'odd name\u{e9}' && echo x > 'a b'",
        "head -c 2000000 /dev/zero > big.bin",
        "echo small > big.bin",
        "rm -f ./* 2>/dev/null; rm -f fifo 'a b' big.bin top.txt; true",
    ]);
    // Objects and ag's refs only: the user's index and refs are as they were.
    assert_eq!(std::fs::read(t.dir.join(".git/index")).unwrap(), index);
    let after = git(&t.dir, &["for-each-ref"]);
    let theirs: Vec<&str> = after
        .lines()
        .filter(|l| !l.contains("refs/ag/checkpoints/"))
        .collect();
    assert_eq!(theirs, refs.lines().collect::<Vec<_>>());
}

#[test]
fn files_git_ignores_are_left_out_as_git_leaves_them_out() {
    let tmp = tempfile::tempdir().unwrap();
    let t = three(tmp.path(), |dir| {
        write(
            dir,
            ".gitignore",
            "*.log\n!keep.log\nbuild/\n/top-only\n**/gen/*.rs\n",
        );
        write(dir, "src/.gitignore", "local.txt\n!*.md\n");
        write(dir, ".git/info/exclude", "secret*\n");
        write(dir, "a.txt", "a\n");
        write(dir, "tracked/old.log", "tracked though ignored\n");
        write(dir, "build/tracked.o", "tracked in an ignored directory\n");
        git(dir, &["add", "a.txt", ".gitignore", "src/.gitignore"]);
        git(dir, &["add", "-f", "tracked/old.log", "build/tracked.o"]);
        git(dir, &["commit", "-qm", "start"]);
    });
    t.steps(&[
        "true",
        "echo x > x.log && echo k > keep.log && echo s > secret.txt",
        "mkdir -p build/deep && echo o > build/deep/a.o && echo t > top-only && echo t > src/top-only",
        "echo l > src/local.txt && echo m > src/local.md && echo l > local.txt",
        "mkdir -p src/gen && echo g > src/gen/a.rs && echo g > src/gen/a.txt",
        "echo changed >> tracked/old.log && echo changed >> build/tracked.o",
        "echo new > tracked/new.log && echo new > build/new.o",
        "rm build/tracked.o && mkdir -p deep/build && echo d > deep/build/d",
        "mkdir -p n/secretdir && echo s > n/secretdir/f && echo p > n/plain",
    ]);
}

#[test]
fn a_submodule_is_kept_as_it_was_and_never_looked_into() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().canonicalize().unwrap().join("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q"]);
    write(&other, "lib.txt", "lib\n");
    git(&other, &["add", "-A"]);
    git(&other, &["commit", "-qm", "lib"]);
    let t = three(tmp.path(), |dir| {
        write(dir, "a.txt", "a\n");
        git(
            dir,
            &["submodule", "-q", "add", other.to_str().unwrap(), "sm"],
        );
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "start"]);
    });
    t.steps(&[
        "true",
        "echo changed > sm/lib.txt && echo new > sm/new.txt && echo b > a.txt",
        "mkdir -p sm/d && echo d > sm/d/f && echo c > c.txt",
    ]);
    let tree = t.direct.head().unwrap().unwrap().1;
    let listed = git(&t.dir, &["ls-tree", &tree, "sm"]);
    assert!(listed.starts_with("160000 commit "), "{listed}");
}

#[test]
fn a_repository_the_code_cannot_read_goes_through_git_with_one_note() {
    let tmp = tempfile::tempdir().unwrap();
    let t = three(tmp.path(), |dir| {
        write(dir, "a.txt", "a\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "start"]);
        // An extension git knows and this code does not.
        git(dir, &["config", "core.repositoryformatversion", "1"]);
        git(dir, &["config", "extensions.partialClone", "origin"]);
    });
    t.direct.record("1").unwrap();
    write(&t.dir, "a.txt", "two\n");
    let second = t.direct.record("2").unwrap();
    assert!(!second.in_process);
    let note = second.note(1 << 20).unwrap();
    assert!(
        note.contains("checkpoint taken with git") && note.contains("extensions.partialclone"),
        "{note}"
    );
    assert_eq!(second.changes.changed, vec!["a.txt"]);
    assert_eq!(second.tree, t.plain.record("p").unwrap().tree);
    // Said once: the next turns go through git without a word.
    write(&t.dir, "a.txt", "three\n");
    let third = t.direct.record("3").unwrap();
    assert!(!third.in_process);
    assert_eq!(third.note(1 << 20), None);
    assert_eq!(third.tree, t.plain.record("p").unwrap().tree);
}

#[test]
fn a_change_the_code_cannot_take_goes_through_git_and_the_next_is_in_process_again() {
    let tmp = tempfile::tempdir().unwrap();
    let t = three(tmp.path(), |dir| {
        write(dir, "a.txt", "a\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "start"]);
    });
    t.direct.record("1").unwrap();
    // A repository made inside the tree: git's rules for it, through git.
    sh(
        &t.dir,
        "mkdir inner && cd inner && git init -q && echo i > i.txt && git add i.txt \
         && git -c user.name=t -c user.email=t@e commit -qm i && echo b > ../b.txt",
    );
    let second = t.direct.record("2").unwrap();
    assert!(!second.in_process);
    let note = second.note(1 << 20).unwrap();
    assert!(note.contains("a repository of its own"), "{note}");
    assert_eq!(second.tree, t.plain.record("p").unwrap().tree);
    assert_eq!(second.changes.added, vec!["b.txt", "inner"]);
    // The private index lagged behind the in-process trees: git looked at
    // everything. The next change is in-process again, from git's tree.
    write(&t.dir, "a.txt", "two\n");
    let third = t.direct.record("3").unwrap();
    assert!(third.in_process, "{:?}", third.fallback);
    assert_eq!(third.tree, t.plain.record("p").unwrap().tree);
    assert_eq!(third.changes.changed, vec!["a.txt"]);
}

#[test]
fn a_ref_moved_by_someone_else_is_followed_through_git() {
    let tmp = tempfile::tempdir().unwrap();
    let t = three(tmp.path(), |dir| {
        write(dir, "a.txt", "a\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "start"]);
    });
    let first = t.direct.record("1").unwrap();
    write(&t.dir, "a.txt", "two\n");
    let second = t.direct.record("2").unwrap();
    assert!(second.in_process);
    // Another writer puts the ref back on the first checkpoint.
    git(
        &t.dir,
        &["update-ref", "refs/ag/checkpoints/d", &first.commit],
    );
    write(&t.dir, "a.txt", "three\n");
    let third = t.direct.record("3").unwrap();
    assert!(third.new);
    assert_eq!(
        git(&t.dir, &["rev-parse", &format!("{}^", third.commit)]).trim(),
        first.commit
    );
    assert_eq!(third.tree, t.plain.record("p").unwrap().tree);
    // A lock left on the ref: nothing is forced past it.
    let lock = t.dir.join(".git/refs/ag/checkpoints/d.lock");
    std::fs::write(&lock, "").unwrap();
    write(&t.dir, "a.txt", "four\n");
    let locked = t.direct.record("4");
    assert!(locked.is_err(), "{locked:?}");
    std::fs::remove_file(&lock).unwrap();
    let fifth = t.direct.record("5").unwrap();
    assert_eq!(fifth.tree, t.plain.record("p").unwrap().tree);
}
