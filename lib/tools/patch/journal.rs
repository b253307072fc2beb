//! Writing a patch's files so that it is all or nothing even when the
//! process is killed (SIGKILL, a crash, power loss) halfway through.
//!
//! Every new version is first written and flushed under a hidden name
//! beside its file. An intent journal, `.ag-patch.journal`, in the deepest
//! directory above all the files, says which hidden file becomes which
//! file and which files go. It is written twice: once before staging
//! (state `staging`: if the run dies now, the hidden files are litter to
//! remove), and once when every file is staged and still as the patch read
//! it (state `commit`: from here the patch has happened, whatever stops
//! it). Then each hidden file is renamed over its file, the deleted files
//! are removed, and the journal goes. A journal left behind is finished by
//! the next ag-patch that touches a file below its directory, or by
//! `ag-patch --recover`: rolled back in state `staging`, rolled forward in
//! state `commit`. The directory is locked (`flock`) while a journal in it
//! is written or finished, so two runs never work on one journal.

use std::collections::HashSet;
use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, openat, renameat};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};
use serde::{Deserialize, Serialize};

use crate::fsutil::copy_metadata;
use crate::tool_protocol::{Context, ToolError, normalize};
use crate::tools::fileops::io_failed;

/// The journal's name in its directory.
pub const JOURNAL: &str = ".ag-patch.journal";
/// The name it is written under before it takes effect.
const TEMP_JOURNAL: &str = ".ag-patch.journal.tmp";

/// One new version to put in place.
pub struct Put<'a> {
    /// The file written (symlinks resolved).
    pub real: &'a Path,
    /// The path as the model sees it.
    pub shown: &'a str,
    /// The new content.
    pub bytes: &'a [u8],
    /// Metadata whose owner and permissions the new version takes.
    pub like: Option<&'a Metadata>,
    /// Permission bits to set instead.
    pub mode: Option<u32>,
    /// What the file held when read (`None`: it did not exist).
    pub original: Option<&'a [u8]>,
}

/// One file (or symlink) to remove.
pub struct Remove<'a> {
    /// The path removed: a symlink itself, never what it points to.
    pub path: &'a Path,
    /// The file whose content was read (the end of the link chain).
    pub real: &'a Path,
    /// The path as the model sees it.
    pub shown: &'a str,
    /// What it held when read.
    pub original: &'a [u8],
}

/// The journal as written.
#[derive(Debug, Serialize, Deserialize)]
struct Plan {
    /// `staging` or `commit`.
    state: State,
    /// Hidden file, file: paths relative to the journal's directory.
    renames: Vec<(PathBuf, PathBuf)>,
    /// Files to remove, with the device and inode they had, so that a file
    /// made anew at the path after the crash is never removed.
    removes: Vec<(PathBuf, u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum State {
    Staging,
    Commit,
}

/// A staged file: its directory and its hidden and final names.
struct Staged {
    dir: File,
    temp: PathBuf,
    name: PathBuf,
}

/// Writes `puts` and makes `removes`, all or nothing, crash included.
pub fn commit(ctx: &Context, puts: &[Put], removes: &[Remove]) -> Result<(), ToolError> {
    let mut made_dirs = Vec::new();
    for p in puts {
        let Some(dir) = p.real.parent() else { continue };
        match ctx.create_dirs(dir) {
            Ok(made) => made_dirs.extend(made),
            Err(e) => {
                ctx.remove_empty_dirs(&made_dirs);
                return Err(io_failed(
                    "patch.io",
                    "create the directory for",
                    p.shown,
                    e,
                ));
            }
        }
    }
    let res = commit_in_dirs(ctx, puts, removes);
    if res.is_err() {
        ctx.remove_empty_dirs(&made_dirs);
    }
    res
}

fn commit_in_dirs(ctx: &Context, puts: &[Put], removes: &[Remove]) -> Result<(), ToolError> {
    let paths: Vec<PathBuf> = puts
        .iter()
        .map(|p| normalize(p.real))
        .chain(removes.iter().map(|r| normalize(r.path)))
        .collect();
    let home = common_dir(&paths);
    let jdir = lock_dir(ctx, &home)?;
    // A journal another run left here is finished first: its files may
    // be the ones this patch read.
    finish(ctx, &jdir, &home).map_err(|e| journal_error(&home, "finish the journal in", e))?;
    let rel = |p: &Path| {
        p.strip_prefix(&home)
            .map(Path::to_path_buf)
            .unwrap_or_default()
    };
    let mut plan = Plan {
        state: State::Staging,
        renames: Vec::new(),
        removes: Vec::new(),
    };
    for path in &paths[..puts.len()] {
        let name = path.file_name().unwrap_or_default();
        let mut temp = std::ffi::OsString::from(".");
        temp.push(name);
        temp.push(format!(
            ".ag-{}.tmp",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        ));
        let temp = path.with_file_name(temp);
        plan.renames.push((rel(&temp), rel(path)));
    }
    for r in removes {
        let meta = ctx
            .lstat(r.path)
            .map_err(|e| io_failed("patch.io", "inspect", r.shown, e))?
            .2;
        plan.removes
            .push((rel(&normalize(r.path)), meta.dev(), meta.ino()));
    }
    write_plan(&jdir, &plan).map_err(|e| journal_error(&home, "write the journal in", e))?;
    let staged = match stage_all(ctx, puts, &plan, &home).and_then(|s| {
        unchanged(ctx, puts, removes)?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(e) => {
            // Nothing has changed yet: the litter and the journal go.
            let _ = roll_back(ctx, &home, &plan);
            let _ = remove_plan(&jdir);
            return Err(e);
        }
    };
    plan.state = State::Commit;
    if let Err(e) = write_plan(&jdir, &plan) {
        for s in &staged {
            let _ = unlinkat(&s.dir, s.temp.as_path(), UnlinkatFlags::NoRemoveDir);
        }
        let _ = remove_plan(&jdir);
        return Err(journal_error(&home, "write the journal in", e));
    }
    // The patch has happened; what follows only carries it out, and a
    // later run finishes it if this one is stopped.
    for s in &staged {
        renameat(&s.dir, s.temp.as_path(), &s.dir, s.name.as_path())
            .map_err(|e| unfinished(&home, &s.name, e.into()))?;
    }
    for (r, (_, dev, ino)) in removes.iter().zip(&plan.removes) {
        let (dir, name, meta) = ctx
            .lstat(r.path)
            .map_err(|e| unfinished(&home, r.path, e))?;
        if (meta.dev(), meta.ino()) == (*dev, *ino) {
            unlinkat(&dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir)
                .map_err(|e| unfinished(&home, r.path, e.into()))?;
            let _ = dir.sync_all();
        }
    }
    for s in &staged {
        let _ = s.dir.sync_all();
    }
    remove_plan(&jdir).map_err(|e| unfinished(&home, Path::new(JOURNAL), e))?;
    Ok(())
}

/// Writes every new version under its hidden name, flushed to disk.
fn stage_all(
    ctx: &Context,
    puts: &[Put],
    plan: &Plan,
    home: &Path,
) -> Result<Vec<Staged>, ToolError> {
    let mut staged: Vec<Staged> = Vec::new();
    for (p, (temp, _)) in puts.iter().zip(&plan.renames) {
        let res = (|| -> io::Result<Staged> {
            let (dir, name) = ctx.open_parent(p.real)?;
            let temp = PathBuf::from(home.join(temp).file_name().unwrap_or_default());
            let fd = openat(
                &dir,
                temp.as_path(),
                OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_WRONLY
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o666),
            )?;
            let staged = Staged {
                dir,
                temp,
                name: PathBuf::from(name),
            };
            let mut file = File::from(fd);
            let fill = (|| {
                if let Some(like) = p.like {
                    copy_metadata(&file, like)?;
                }
                if let Some(mode) = p.mode {
                    use std::os::unix::fs::PermissionsExt;
                    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
                }
                file.write_all(p.bytes)?;
                file.sync_all()
            })();
            match fill {
                Ok(()) => Ok(staged),
                Err(e) => {
                    let _ = unlinkat(
                        &staged.dir,
                        staged.temp.as_path(),
                        UnlinkatFlags::NoRemoveDir,
                    );
                    Err(e)
                }
            }
        })();
        match res {
            Ok(s) => staged.push(s),
            Err(e) => {
                for s in &staged {
                    let _ = unlinkat(&s.dir, s.temp.as_path(), UnlinkatFlags::NoRemoveDir);
                }
                return Err(io_failed(
                    "patch.io",
                    "write the new version of",
                    p.shown,
                    e,
                ));
            }
        }
    }
    Ok(staged)
}

/// Checks, as late as possible, that every file still holds what the
/// patch read (and that a new file's path is still free).
fn unchanged(ctx: &Context, puts: &[Put], removes: &[Remove]) -> Result<(), ToolError> {
    let changed = |shown: &str| {
        ToolError::new(
            "patch.changed_on_disk",
            format!(
                "`{shown}` was changed by someone else while the patch was being applied; it was left as it is. Nothing was changed: read the files again and redo the patch."
            ),
        )
    };
    for p in puts {
        let same = match p.original {
            Some(o) => ctx.has_content(p.real, o),
            None => Ok(ctx.lstat(p.real).is_err()),
        }
        .map_err(|e| io_failed("patch.io", "read", p.shown, e))?;
        if !same {
            return Err(changed(p.shown));
        }
    }
    for r in removes {
        let same = ctx
            .has_content(r.real, r.original)
            .map_err(|e| io_failed("patch.io", "read", r.shown, e))?;
        if !same {
            return Err(changed(r.shown));
        }
    }
    Ok(())
}

/// The deepest directory above every path.
fn common_dir(paths: &[PathBuf]) -> PathBuf {
    let mut common: Option<PathBuf> = None;
    for p in paths {
        let dir = p.parent().unwrap_or(Path::new("/"));
        common = Some(match common {
            None => dir.to_path_buf(),
            Some(c) => c
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    common.unwrap_or_else(|| PathBuf::from("/"))
}

/// Opens `dir` and takes its lock, waiting for a run that holds it.
fn lock_dir(ctx: &Context, dir: &Path) -> Result<Flock<File>, ToolError> {
    let fd = ctx
        .open(dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY)
        .map_err(|e| journal_error(dir, "open", e))?;
    Flock::lock(File::from(fd), FlockArg::LockExclusive)
        .map_err(|(_, e)| journal_error(dir, "lock", e.into()))
}

/// Writes the journal whole (a hidden file, flushed, renamed over it) so
/// that it is never found half-written, and flushes the directory.
fn write_plan(dir: &File, plan: &Plan) -> io::Result<()> {
    let text = serde_json::to_vec(plan).map_err(io::Error::other)?;
    let fd = openat(
        dir,
        TEMP_JOURNAL,
        OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )?;
    let mut file = File::from(fd);
    file.write_all(&text)?;
    file.sync_all()?;
    renameat(dir, TEMP_JOURNAL, dir, JOURNAL)?;
    dir.sync_all()
}

fn remove_plan(dir: &File) -> io::Result<()> {
    let _ = unlinkat(dir, TEMP_JOURNAL, UnlinkatFlags::NoRemoveDir);
    match unlinkat(dir, JOURNAL, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => {}
        Err(e) => return Err(e.into()),
    }
    dir.sync_all()
}

/// Finishes the journal in the locked directory `dir` (at `home`), if
/// there is one; says whether there was.
fn finish(ctx: &Context, dir: &File, home: &Path) -> io::Result<Option<&'static str>> {
    // A journal that a stopped run was still writing never took effect.
    let _ = unlinkat(dir, TEMP_JOURNAL, UnlinkatFlags::NoRemoveDir);
    let fd = match openat(
        dir,
        JOURNAL,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut text = Vec::new();
    File::from(fd).read_to_end(&mut text)?;
    let plan: Plan = serde_json::from_slice(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{JOURNAL}` cannot be read ({e}); remove it once the files are checked"),
        )
    })?;
    let done = match plan.state {
        State::Staging => {
            roll_back(ctx, home, &plan)?;
            "rolled back"
        }
        State::Commit => {
            roll_forward(ctx, home, &plan)?;
            "rolled forward"
        }
    };
    remove_plan(dir)?;
    Ok(Some(done))
}

fn roll_back(ctx: &Context, home: &Path, plan: &Plan) -> io::Result<()> {
    for (temp, _) in &plan.renames {
        match ctx.remove_file(&home.join(temp)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn roll_forward(ctx: &Context, home: &Path, plan: &Plan) -> io::Result<()> {
    for (temp, target) in &plan.renames {
        let (dir, temp_name) = ctx.open_parent(&home.join(temp))?;
        let target_name = target.file_name().unwrap_or_default();
        match renameat(&dir, temp_name.as_os_str(), &dir, target_name) {
            // Already renamed before the stop.
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
        dir.sync_all()?;
    }
    for (path, dev, ino) in &plan.removes {
        match ctx.lstat(&home.join(path)) {
            Ok((dir, name, meta)) if (meta.dev(), meta.ino()) == (*dev, *ino) => {
                unlinkat(&dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir)?;
                dir.sync_all()?;
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Finishes every journal in the directories above `path` (up to the root,
/// or `/`), each directory looked at once per `seen`; returns what was done,
/// for notes.
pub fn recover_above(
    ctx: &Context,
    path: &Path,
    seen: &mut HashSet<PathBuf>,
) -> Result<Vec<String>, ToolError> {
    let mut done = Vec::new();
    let path = normalize(path);
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !seen.insert(d.to_path_buf()) {
            break;
        }
        if let Some(root) = &ctx.root
            && !d.starts_with(root)
        {
            break;
        }
        if ctx.lstat(&d.join(JOURNAL)).is_ok() || ctx.lstat(&d.join(TEMP_JOURNAL)).is_ok() {
            done.extend(recover_dir(ctx, d)?);
        }
        dir = d.parent();
    }
    Ok(done)
}

/// Finishes the journal in `dir`, if any.
pub fn recover_dir(ctx: &Context, dir: &Path) -> Result<Option<String>, ToolError> {
    let locked = lock_dir(ctx, dir)?;
    let how =
        finish(ctx, &locked, dir).map_err(|e| journal_error(dir, "finish the journal in", e))?;
    Ok(how.map(|how| {
        format!(
            "An interrupted patch in `{}` was {how} (its journal was left by a run that was stopped).",
            ctx.show(dir)
        )
    }))
}

/// Finishes every journal in `start`, the directories above it and those
/// below it (`ag-patch --recover`).
pub fn recover_all(ctx: &Context, start: &Path) -> Result<Vec<String>, ToolError> {
    let mut seen = HashSet::new();
    let mut done = recover_above(ctx, &start.join(JOURNAL), &mut seen)?;
    let walk = ignore::WalkBuilder::new(start)
        .standard_filters(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.flatten() {
        if (entry.file_name() == JOURNAL || entry.file_name() == TEMP_JOURNAL)
            && let Some(dir) = entry.path().parent()
            && !seen.contains(dir)
        {
            seen.insert(dir.to_path_buf());
            done.extend(recover_dir(ctx, dir)?);
        }
    }
    Ok(done)
}

fn journal_error(dir: &Path, verb: &str, e: io::Error) -> ToolError {
    ToolError::new(
        "patch.journal",
        format!(
            "cannot {verb} `{}` (ag-patch keeps its journal there while it writes several files): {e}. Nothing was changed.",
            dir.display()
        ),
    )
}

fn unfinished(home: &Path, what: &Path, e: io::Error) -> ToolError {
    ToolError::new(
        "patch.unfinished",
        format!(
            "the patch was committed, but `{}` could not be put in place: {e}. Its journal in `{}` stays; once the cause is fixed, `ag-patch --recover` (or the next ag-patch there) finishes it.",
            what.display(),
            home.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_directory_is_the_deepest_shared_one() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(common_dir(&[p("/a/b/c.txt"), p("/a/b/d/e.txt")]), p("/a/b"));
        assert_eq!(common_dir(&[p("/a/x.txt"), p("/b/y.txt")]), p("/"));
        assert_eq!(common_dir(&[p("/a/b/c.txt")]), p("/a/b"));
    }

    #[test]
    fn a_journal_left_mid_commit_is_rolled_forward_and_mid_staging_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        let ctx = Context {
            cwd: d.clone(),
            root: None,
        };
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("a.txt"), "old a").unwrap();
        std::fs::write(d.join("sub/b.txt"), "old b").unwrap();
        std::fs::write(d.join("gone.txt"), "x").unwrap();
        // Killed after a.txt was renamed, before b.txt and the delete.
        std::fs::write(d.join("sub/.b.txt.ag-1.tmp"), "new b").unwrap();
        std::fs::write(d.join("a.txt"), "new a").unwrap();
        let gone = std::fs::metadata(d.join("gone.txt")).unwrap();
        let plan = Plan {
            state: State::Commit,
            renames: vec![
                (p(".a.txt.ag-0.tmp"), p("a.txt")),
                (p("sub/.b.txt.ag-1.tmp"), p("sub/b.txt")),
            ],
            removes: vec![(p("gone.txt"), gone.dev(), gone.ino())],
        };
        std::fs::write(d.join(JOURNAL), serde_json::to_vec(&plan).unwrap()).unwrap();
        let mut seen = HashSet::new();
        let done = recover_above(&ctx, &d.join("sub/b.txt"), &mut seen).unwrap();
        assert_eq!(done.len(), 1, "{done:?}");
        assert_eq!(std::fs::read(d.join("a.txt")).unwrap(), b"new a");
        assert_eq!(std::fs::read(d.join("sub/b.txt")).unwrap(), b"new b");
        assert!(!d.join("gone.txt").exists());
        assert!(!d.join(JOURNAL).exists());
        assert!(!d.join("sub/.b.txt.ag-1.tmp").exists());

        // Killed while staging: the hidden files go, the files stay.
        std::fs::write(d.join("sub/.b.txt.ag-2.tmp"), "newer b").unwrap();
        let plan = Plan {
            state: State::Staging,
            renames: vec![(p("sub/.b.txt.ag-2.tmp"), p("sub/b.txt"))],
            removes: Vec::new(),
        };
        std::fs::write(d.join(JOURNAL), serde_json::to_vec(&plan).unwrap()).unwrap();
        let done = recover_all(&ctx, &d).unwrap();
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(done[0].contains("rolled back"), "{done:?}");
        assert_eq!(std::fs::read(d.join("sub/b.txt")).unwrap(), b"new b");
        assert!(!d.join("sub/.b.txt.ag-2.tmp").exists());
        assert!(!d.join(JOURNAL).exists());
    }

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }
}
