//! Recording and restoring on real temporary repositories.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
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

/// Every file under `dir` but `.git` and `skip`: path, mode, content.
fn tree(dir: &Path, skip: &str) -> Vec<(String, u32, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, skip: &str, out: &mut Vec<(String, u32, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == skip {
                continue;
            }
            let m = p.symlink_metadata().unwrap();
            if m.is_dir() {
                walk(root, &p, skip, out);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.push((rel, 0o120000, t.to_string_lossy().as_bytes().to_vec()));
            } else {
                out.push((
                    rel,
                    m.permissions().mode() & 0o111,
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    walk(dir, dir, skip, &mut out);
    out.sort();
    out
}

#[test]
fn record_then_restore_puts_back_every_kind_of_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("repo");
    let home = tmp.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    write(&dir, "a.txt", "one\r\n");
    write(&dir, "sub/b.txt", "b\n");
    write(&dir, ".gitignore", "ignored/\n");
    write(&dir, "ignored/x", "x");
    write(&dir, "big.bin", &"z".repeat(100));
    std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
    git(&dir, &["add", "a.txt", ".gitignore"]);
    git(&dir, &["commit", "-qm", "start"]);
    let user_index = std::fs::read(dir.join(".git/index")).unwrap();
    let place = Place::find(&dir.join("sub"), &home).unwrap();
    assert_eq!(place.work_tree, dir);
    assert!(!place.shadow);
    let cp = Checkpoints::new(place, "s1", &home, 50);
    let first = cp.record("turn 1").unwrap();
    assert!(first.new);
    assert_eq!(first.too_large.len(), 1, "{:?}", first.too_large);
    let before = tree(&dir, "ignored");

    // Every kind of change.
    write(&dir, "a.txt", "two\n");
    std::fs::remove_file(dir.join("sub/b.txt")).unwrap();
    write(&dir, "new/c.txt", "c\n");
    std::fs::set_permissions(dir.join("a.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(dir.join("link")).unwrap();
    write(&dir, "link", "now a file");
    write(&dir, "ignored/y", "y");
    let second = cp.record("turn 2").unwrap();
    assert!(second.new);
    assert_eq!(second.changes.added, vec!["new/c.txt"]);
    assert_eq!(second.changes.deleted, vec!["sub/b.txt"]);
    assert_eq!(second.changes.changed, vec!["a.txt", "link"]);
    // Nothing changed: no new commit.
    let again = cp.record("turn 3").unwrap();
    assert!(!again.new);
    assert_eq!(again.commit, second.commit);

    let now = cp.snapshot().unwrap();
    cp.restore(&now.tree, &first.tree).unwrap();
    assert_eq!(tree(&dir, "ignored"), before);
    assert!(!dir.join("new").exists(), "emptied directories go");
    assert!(
        dir.join("ignored/y").exists(),
        "ignored files are left alone"
    );
    assert!(
        dir.join("big.bin").exists(),
        "files left out are left alone"
    );
    // The user's git state is untouched.
    assert_eq!(std::fs::read(dir.join(".git/index")).unwrap(), user_index);
    let refs = git(&dir, &["for-each-ref", "--format=%(refname)"]);
    let refs: Vec<&str> = refs.lines().collect();
    assert_eq!(refs.len(), 2, "{refs:?}");
    assert_eq!(refs[0], "refs/ag/checkpoints/s1");
    assert!(refs[1].starts_with("refs/heads/"));
}

#[test]
fn a_directory_without_git_gets_a_shadow_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("plain");
    let home = tmp.path().canonicalize().unwrap().join("home");
    write(&dir, "f.txt", "1");
    let place = Place::find(&dir, &home).unwrap();
    assert!(place.shadow);
    assert!(place.git_dir.starts_with(&home));
    let cp = Checkpoints::new(place, "s", &home, DEFAULT_MAX_FILE_BYTES);
    let first = cp.record("1").unwrap();
    write(&dir, "f.txt", "2");
    write(&dir, "g.txt", "3");
    let now = cp.snapshot().unwrap();
    cp.restore(&now.tree, &first.tree).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("f.txt")).unwrap(), "1");
    assert!(!dir.join("g.txt").exists());
    assert!(!dir.join(".git").exists());
}

#[test]
fn ag_home_inside_the_tree_is_neither_recorded_nor_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let home = dir.join(".ag");
    write(&dir, "f.txt", "1");
    write(&home, "sessions/x.jsonl", "{}");
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s", &home, 1000);
    let first = cp.record("1").unwrap();
    write(&home, "sessions/y.jsonl", "{}");
    let second = cp.record("2").unwrap();
    assert!(!second.new, "{:?}", second.changes);
    let now = cp.snapshot().unwrap();
    cp.restore(&now.tree, &first.tree).unwrap();
    assert!(home.join("sessions/y.jsonl").exists());
}

#[test]
fn a_bare_repository_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("bare.git");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "--bare"]);
    let err = Place::find(&dir, &tmp.path().join("home")).unwrap_err();
    assert!(err.to_string().contains("bare"), "{err}");
}

#[test]
fn odd_names_come_back_and_nothing_is_written_through_a_symlink() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let dir = root.join("repo");
    let outside = root.join("outside");
    let home = root.join("home");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9 -n :(glob)*\nx");
    std::fs::write(dir.join(odd), "latin-1 name").unwrap();
    write(&dir, "d/f", "inside");
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s", &home, 1000);
    let first = cp.record("1").unwrap();
    let before = tree(&dir, "");
    std::fs::remove_file(dir.join(odd)).unwrap();
    // The directory becomes a symlink to a directory outside the tree.
    std::fs::remove_dir_all(dir.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("d")).unwrap();
    let second = cp.record("2").unwrap();
    assert!(second.new);
    let now = cp.snapshot().unwrap();
    cp.restore(&now.tree, &first.tree).unwrap();
    assert_eq!(tree(&dir, ""), before);
    assert!(dir.join("d").symlink_metadata().unwrap().is_dir());
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}

#[test]
fn a_lock_left_by_a_killed_git_goes_once_it_is_old() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("plain");
    let home = tmp.path().canonicalize().unwrap().join("home");
    write(&dir, "f.txt", "1");
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s", &home, 1000);
    cp.record("1").unwrap();
    let index = home
        .join("checkpoints/index")
        .join(cp.place.key())
        .join("s");
    let lock = index.with_file_name("s.lock");
    let file = std::fs::File::create(&lock).unwrap();
    write(&dir, "f.txt", "2");
    // A fresh lock may belong to a git at work: it stays, and git says so.
    let err = cp.record("2").unwrap_err();
    assert!(err.to_string().contains("lock"), "{err}");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    file.set_modified(old).unwrap();
    assert!(cp.record("2").unwrap().new);
}

#[test]
fn the_repositorys_own_settings_run_nothing_and_change_no_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let dir = root.join("repo");
    let home = root.join("home");
    let marker = root.join("ran");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    let touch = format!("touch {}", marker.display());
    git(&dir, &["config", "core.fsmonitor", &touch]);
    git(
        &dir,
        &[
            "config",
            "filter.evil.clean",
            &format!("{touch}; tr a-z A-Z"),
        ],
    );
    git(&dir, &["config", "filter.evil.required", "true"]);
    git(&dir, &["config", "core.autocrlf", "true"]);
    git(
        &dir,
        &[
            "config",
            "core.hooksPath",
            dir.join("hooks").to_str().unwrap(),
        ],
    );
    write(
        &dir,
        "hooks/post-index-change",
        &format!("#!/bin/sh\n{touch}\n"),
    );
    std::fs::set_permissions(
        dir.join("hooks/post-index-change"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write(
        &dir,
        ".gitattributes",
        "*.txt filter=evil\n*.txt text eol=lf\n",
    );
    write(&dir, "a.txt", "crlf\r\nlower\r\n");
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s", &home, 1000);
    let first = cp.record("1").unwrap();
    write(&dir, "a.txt", "changed\n");
    let now = cp.snapshot().unwrap();
    cp.restore(&now.tree, &first.tree).unwrap();
    assert_eq!(
        std::fs::read(dir.join("a.txt")).unwrap(),
        b"crlf\r\nlower\r\n"
    );
    assert!(
        !marker.exists(),
        "the repository's configuration ran a command"
    );
}

#[test]
fn the_size_limit_comes_from_the_config_file_or_the_default() {
    let t = tempfile::tempdir().unwrap();
    let config = t.path().join("config.toml");
    assert_eq!(
        super::configured_max_file_bytes(&config),
        super::DEFAULT_MAX_FILE_BYTES
    );
    std::fs::write(
        &config,
        "model = \"x/y\"\ncheckpoint_max_file_size = 1234\n",
    )
    .unwrap();
    assert_eq!(super::configured_max_file_bytes(&config), 1234);
    std::fs::write(&config, "checkpoint_max_file_size = \"big\"\n").unwrap();
    assert_eq!(
        super::configured_max_file_bytes(&config),
        super::DEFAULT_MAX_FILE_BYTES
    );
}

/// The checkpoint's parent, if it has one.
fn parent(dir: &Path, commit: &str) -> Option<String> {
    let line = git(dir, &["rev-list", "--parents", "-n1", commit]);
    line.split_whitespace().nth(1).map(str::to_string)
}

/// A repository with one file and a session that checkpointed it twice.
fn two_checkpoints(tmp: &Path) -> (std::path::PathBuf, Checkpoints, Recorded, Recorded) {
    let dir = tmp.canonicalize().unwrap().join("repo");
    let home = tmp.canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    write(&dir, "a.txt", "1\n");
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s1", &home, 1000);
    let first = cp.record("1").unwrap();
    write(&dir, "a.txt", "2\n");
    let second = cp.record("2").unwrap();
    assert!(second.new);
    (dir, cp, first, second)
}

#[test]
fn the_cached_head_is_used_and_kept_in_step_with_the_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, first, second) = two_checkpoints(tmp.path());
    let cached = head::read(cp.git.index.as_ref().unwrap());
    assert_eq!(
        cached,
        Some(head::Head {
            commit: second.commit.clone(),
            tree: second.tree.clone()
        })
    );
    assert_eq!(parent(&dir, &second.commit), Some(first.commit.clone()));
    assert_eq!(second.changes.changed, vec!["a.txt"]);
    // A second ag-loop on the session (another Checkpoints, same files)
    // goes on from the first one's last checkpoint.
    let other = Checkpoints::new(
        cp.place.clone(),
        "s1",
        &tmp.path().canonicalize().unwrap().join("home"),
        1000,
    );
    write(&dir, "b.txt", "b\n");
    let third = other.record("3").unwrap();
    assert_eq!(parent(&dir, &third.commit), Some(second.commit.clone()));
    assert_eq!(third.changes.added, vec!["b.txt"]);
    write(&dir, "b.txt", "bb\n");
    let fourth = cp.record("4").unwrap();
    assert_eq!(parent(&dir, &fourth.commit), Some(third.commit));
    assert_eq!(fourth.changes.changed, vec!["b.txt"]);
}

#[test]
fn a_ref_moved_back_under_an_unchanged_tree_gets_a_new_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, first, second) = two_checkpoints(tmp.path());
    // The user (or a tool with another $AG_HOME) moves the ref back; the
    // tree is still the cached one, but the ref's tree is not.
    git(
        &dir,
        &["update-ref", "refs/ag/checkpoints/s1", &first.commit],
    );
    let r = cp.record("3").unwrap();
    assert!(r.new, "the ref's checkpoint is not this tree");
    assert_ne!(r.commit, second.commit);
    assert_eq!(r.tree, second.tree);
    assert_eq!(parent(&dir, &r.commit), Some(first.commit.clone()));
    assert_eq!(r.changes.changed, vec!["a.txt"]);
    let at = git(&dir, &["rev-parse", "refs/ag/checkpoints/s1"]);
    assert_eq!(at.trim(), r.commit);
}

#[test]
fn a_ref_moved_under_a_changed_tree_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, first, _) = two_checkpoints(tmp.path());
    git(
        &dir,
        &["update-ref", "refs/ag/checkpoints/s1", &first.commit],
    );
    write(&dir, "c.txt", "c\n");
    let r = cp.record("3").unwrap();
    assert!(r.new);
    assert_eq!(parent(&dir, &r.commit), Some(first.commit.clone()));
    // Against the ref's tree (a.txt was 1), not the cached one.
    assert_eq!(r.changes.changed, vec!["a.txt"]);
    assert_eq!(r.changes.added, vec!["c.txt"]);
    let at = git(&dir, &["rev-parse", "refs/ag/checkpoints/s1"]);
    assert_eq!(at.trim(), r.commit);
}

#[test]
fn a_ref_moved_onto_this_very_tree_costs_no_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, _, second) = two_checkpoints(tmp.path());
    write(&dir, "a.txt", "3\n");
    let tree = cp.snapshot().unwrap().tree;
    let theirs = git(&dir, &["commit-tree", &tree, "-m", "someone else's"]);
    let theirs = theirs.trim();
    git(&dir, &["update-ref", "refs/ag/checkpoints/s1", theirs]);
    let r = cp.record("3").unwrap();
    assert!(!r.new);
    assert_eq!(r.commit, theirs);
    assert_ne!(r.commit, second.commit);
    // And the cache follows: the next change goes onto their commit.
    write(&dir, "a.txt", "4\n");
    let next = cp.record("4").unwrap();
    assert_eq!(parent(&dir, &next.commit).as_deref(), Some(theirs));
}

#[test]
fn a_deleted_ref_or_a_lying_cache_starts_the_ref_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, first, _) = two_checkpoints(tmp.path());
    git(&dir, &["update-ref", "-d", "refs/ag/checkpoints/s1"]);
    write(&dir, "a.txt", "3\n");
    let r = cp.record("3").unwrap();
    assert!(r.new);
    assert_eq!(parent(&dir, &r.commit), None);
    assert!(r.changes.is_empty(), "a first checkpoint lists nothing");
    // A cache naming a commit that does not exist: the ref is read instead.
    let index = cp.git.index.clone().unwrap();
    std::fs::write(
        head::path(&index),
        format!("{} {}\n", "e".repeat(40), first.tree),
    )
    .unwrap();
    write(&dir, "a.txt", "4\n");
    let s = cp.record("4").unwrap();
    assert_eq!(parent(&dir, &s.commit), Some(r.commit.clone()));
    assert_eq!(s.changes.changed, vec!["a.txt"]);
    // set_head (a rewind's fork) forgets the cache.
    cp.set_head(&first.commit).unwrap();
    assert_eq!(head::read(&index), None);
    let t = cp.record("5").unwrap();
    assert_eq!(parent(&dir, &t.commit), Some(first.commit));
}

/// The tree `git add -A` into a fresh index makes of the working tree.
fn tree_by_add(dir: &Path) -> String {
    let index = dir.join(".git/ag-test-index");
    let _ = std::fs::remove_file(&index);
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    run(&["add", "-A"]);
    let tree = run(&["write-tree"]);
    std::fs::remove_file(&index).unwrap();
    tree
}

#[test]
fn a_few_changes_of_every_shape_give_the_tree_add_would() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("repo");
    let home = tmp.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    write(&dir, ".gitignore", "*.log\n");
    write(&dir, "file", "f\n");
    write(&dir, "gone", "g\n");
    write(&dir, "d/inner", "i\n");
    write(&dir, "mode.sh", "echo\n");
    write(&dir, "e/x", "x\n");
    std::os::unix::fs::symlink("file", dir.join("link")).unwrap();
    let cp = Checkpoints::new(Place::find(&dir, &home).unwrap(), "s", &home, 1000);
    cp.record("1").unwrap();
    assert_eq!(cp.snapshot().unwrap().tree, tree_by_add(&dir));

    // A file becomes a directory, a file goes, one appears deep down, a
    // mode and a symlink's target change, an ignored file appears.
    std::fs::remove_file(dir.join("file")).unwrap();
    write(&dir, "file/now", "a dir\n");
    std::fs::remove_file(dir.join("gone")).unwrap();
    write(&dir, "new/deep/er", "n\n");
    std::fs::set_permissions(dir.join("mode.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(dir.join("link")).unwrap();
    std::os::unix::fs::symlink("e/x", dir.join("link")).unwrap();
    write(&dir, "noise.log", "ignored\n");
    let r = cp.record("2").unwrap();
    assert_eq!(r.tree, tree_by_add(&dir));
    assert_eq!(r.changes.deleted, vec!["file", "gone"]);
    assert_eq!(r.changes.added, vec!["file/now", "new/deep/er"]);
    assert_eq!(r.changes.changed, vec!["link", "mode.sh"]);

    // A directory becomes a symlink to one that holds a file of the old
    // name, which must not be read through the link.
    std::fs::remove_dir_all(dir.join("d")).unwrap();
    write(&dir, "real/inner", "through a link\n");
    std::os::unix::fs::symlink("real", dir.join("d")).unwrap();
    let r = cp.record("3").unwrap();
    assert_eq!(r.tree, tree_by_add(&dir));
    assert_eq!(r.changes.deleted, vec!["d/inner"]);
    assert_eq!(r.changes.added, vec!["d", "real/inner"]);

    // And back: the directory a file again, the symlink a directory.
    std::fs::remove_dir_all(dir.join("file")).unwrap();
    write(&dir, "file", "f again\n");
    std::fs::remove_file(dir.join("d")).unwrap();
    write(&dir, "d/inner", "i\n");
    let r = cp.record("4").unwrap();
    assert_eq!(r.tree, tree_by_add(&dir));
}

/// A repository for the watch tests: tracked files, an ignored directory
/// holding one tracked file, and checkpoints of two sessions: one watching
/// the tree, one asking git about all of it every time.
fn watched_repo(tmp: &Path) -> (PathBuf, Checkpoints, Checkpoints) {
    let dir = tmp.canonicalize().unwrap().join("repo");
    let home = tmp.canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    write(&dir, "a.txt", "a\n");
    write(&dir, "sub/b.txt", "b\n");
    write(&dir, ".gitignore", "ignored/\n*.log\nbuild/\n");
    write(&dir, "ignored/x", "x");
    write(&dir, "ignored/kept.txt", "kept\n");
    git(&dir, &["add", "a.txt", "sub/b.txt", ".gitignore"]);
    git(&dir, &["add", "-f", "ignored/kept.txt"]);
    git(&dir, &["commit", "-qm", "start"]);
    let place = Place::find(&dir, &home).unwrap();
    let watched = Checkpoints::new(place.clone(), "w", &home, 1 << 20).watching();
    let plain = Checkpoints::new(place, "p", &home, 1 << 20);
    (dir, watched, plain)
}

#[test]
fn the_watches_name_just_what_changed_and_give_up_when_they_cannot_know() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, cp, plain) = watched_repo(tmp.path());
    // A file recorded before .gitignore came to leave its directory out
    // stays in the index (and so in checkpoints): its directory is
    // watched although the walk skips it. The watching session's index
    // starts as a copy of the other's.
    write(&dir, "later/t.txt", "t\n");
    plain.snapshot().unwrap();
    write(&dir, ".gitignore", "ignored/\n*.log\nbuild/\nlater/\n");
    plain.snapshot().unwrap();
    // The first look is a whole one; the watches start with it.
    cp.snapshot().unwrap();
    assert_eq!(cp.changed_since_last(), Some(vec![]));
    write(&dir, "a.txt", "changed\n");
    write(&dir, "later/t.txt", "changed\n");
    write(&dir, "later/new.txt", "ignored, but named all the same\n");
    assert_eq!(
        cp.changed_since_last(),
        Some(vec![
            PathBuf::from("a.txt"),
            PathBuf::from("later/new.txt"),
            PathBuf::from("later/t.txt")
        ])
    );
    // A new directory stands for all in it, made before its watch or after.
    write(&dir, "new/deep/f.txt", "f\n");
    assert_eq!(cp.changed_since_last(), Some(vec![PathBuf::from("new")]));
    write(&dir, "new/deep/g.txt", "g\n");
    assert_eq!(
        cp.changed_since_last(),
        Some(vec![PathBuf::from("new/deep/g.txt")])
    );
    // A new directory that .gitignore leaves out is named once, and not
    // watched: what happens in it is never asked about.
    write(&dir, "build/a/b/c.o", "o");
    assert_eq!(cp.changed_since_last(), Some(vec![PathBuf::from("build")]));
    write(&dir, "build/a/b/d.o", "o");
    assert_eq!(cp.changed_since_last(), Some(vec![]));
    // A changed .gitignore may uncover files nobody touched.
    write(&dir, ".gitignore", "ignored/\n");
    assert_eq!(cp.changed_since_last(), None);
    assert_eq!(cp.changed_since_last(), Some(vec![]));
}

#[test]
fn a_watched_checkpoint_records_the_same_tree_as_a_whole_look() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, watched, plain) = watched_repo(tmp.path());
    let sh = |script: &str| {
        let st = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "{script}");
    };
    let steps = [
        "true",
        "echo two > a.txt",
        "mkdir -p new/x/y && echo z > new/x/y/z.txt && echo q > new/q.txt",
        "rm sub/b.txt && chmod +x a.txt",
        "mv new moved && echo w > moved/x/y/w.txt",
        "echo again > ignored/kept.txt && echo junk > ignored/junk",
        "echo log > foo.log",
        "printf 'ignored/\\n' > .gitignore",
        "ln -s a.txt link && rm moved/q.txt && mkdir moved/q.txt && echo in > moved/q.txt/f",
        "mv moved/x/y/z.txt top.txt && mv sub gone && rmdir gone",
        "rm -rf moved",
        "mkdir -p sub && echo b > sub/b.txt && chmod -x a.txt && rm link",
        "true",
    ];
    for step in steps {
        sh(step);
        let w = watched.snapshot().unwrap();
        let p = plain.snapshot().unwrap();
        assert_eq!(w.tree, p.tree, "after `{step}`");
    }
}

#[test]
fn a_run_that_could_not_remove_its_checkpoints_leaves_them_to_the_next_runs_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("repo");
    let home = tmp.path().canonicalize().unwrap().join("home");
    write(&dir, "f.txt", "1");
    git(&dir, &["init", "-q"]);
    let run = |n: u128| format!("{RUN_PREFIX}{}", uuid::Uuid::from_u128(n));
    let first = Checkpoints::new(Place::find(&dir, &home).unwrap(), &run(1), &home, 1000);
    let mut lock = first.hold().unwrap();
    first.record("1").unwrap();
    assert_eq!(first.refs().unwrap().len(), 1);
    // Its removal failed: the lock goes, its file stays.
    lock.leave_for_sweep();
    drop(lock);
    let next = Checkpoints::new(Place::find(&dir, &home).unwrap(), &run(2), &home, 1000);
    let _held = next.hold().unwrap();
    assert_eq!(next.remove_abandoned_runs(), 1);
    assert!(next.refs().unwrap().is_empty());
    let left: Vec<String> = std::fs::read_dir(first.git.index.as_ref().unwrap().parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&run(1)))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
