//! A checkpoint without starting git: when the watches (`watch.rs`) name
//! what changed since the last snapshot, the new tree is the last one with
//! those paths edited. Each named path is looked at on disk, its blob
//! hashed (and written when new), the trees on the way to it rewritten, and,
//! for a checkpoint, the commit written and the session's ref moved, all
//! with gitoxide's object crates (`gix-odb`, `gix-object`) in this process.
//! A turn that changed one file costs a few small files written, where the
//! git way costs five processes.
//!
//! The rules are git's, as `git add -A` into the private index applies
//! them (see `record.rs`): a file the last tree has stays whatever
//! .gitignore says; a file it has not is added unless ignored (the
//! .gitignore files from the top down to it, the repository's
//! `info/exclude`, and `core.excludesFile`, as git reads them); files over
//! the size limit are left out; a symlink is stored as one; the executable
//! bit is the only mode kept; nothing inside a submodule is looked at.
//!
//! Anything outside those rules makes [`Store::snapshot`] give up, with the
//! reason, and the git way takes the turn (with a note): a repository whose
//! format this code does not read (another hash, reftable, an extension it
//! does not know, shared permissions, an included config file), a
//! new repository inside the tree, a submodule's own path, a path that
//! cannot be read. Objects are only added, never changed; the ref moves
//! last, under git's lock protocol (`<ref>.lock` made exclusively, renamed
//! over the ref) and only from the commit it was expected at, so a
//! checkpoint is whole or not there, and the user's index and refs are
//! never touched.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::io::Write as _;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gix_hash::ObjectId;
use gix_object::tree::{EntryKind, EntryMode};
use gix_object::{Find as _, Write as _};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::changes::Changes;

/// What becomes of one path: its new blob (mode and id), or `None` to
/// remove it.
type Edit = Option<(EntryKind, ObjectId)>;

/// One directory of a tree, by name.
type Entries = BTreeMap<Vec<u8>, (EntryMode, ObjectId)>;

/// Why the in-process way cannot take this checkpoint: a sentence for a
/// note, after "taken with git: ".
pub type Cannot = String;

/// A repository's object store and refs, as far as this module writes them.
pub struct Store {
    /// Loose objects: where every object of ours is written, and where the
    /// trees of recent checkpoints are read from.
    loose: gix_odb::loose::Store,
    /// The repository's `objects` directory, for an object packed since.
    objects: PathBuf,
    /// The common directory (of a linked worktree: the main `.git`).
    common: PathBuf,
    work_tree: PathBuf,
    /// The global exclude file (`core.excludesFile`, or git's default).
    excludes_file: Option<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("objects", &self.objects)
            .field("common", &self.common)
            .field("work_tree", &self.work_tree)
            .field("excludes_file", &self.excludes_file)
            .finish()
    }
}

/// A snapshot taken here: the tree, and how it differs from the base.
#[derive(Debug)]
pub struct Taken {
    /// The new tree.
    pub tree: String,
    /// What differs from the base tree.
    pub changes: Changes,
    /// Files left out for their size, with it.
    pub too_large: Vec<(String, u64)>,
    /// Files that could not be read, left out (or kept as they were).
    pub unreadable: Vec<String>,
}

/// What the caller wants left out, and how large a file may be.
pub struct Rules<'a> {
    /// Paths (relative to the work tree) never recorded.
    pub is_excluded: &'a dyn Fn(&str) -> bool,
    /// Files larger than this are left out.
    pub max_file_bytes: u64,
}

/// Extensions of the repository format that change nothing this module
/// reads or writes.
const HARMLESS_EXTENSIONS: &[&str] = &["noop", "preciousobjects", "worktreeconfig"];

impl Store {
    /// Opens the repository at `git_dir` for in-process checkpoints, or
    /// says why it cannot be. `excludes_file` is `core.excludesFile` as git
    /// resolves it (`None`: unset).
    pub fn open(
        git_dir: &Path,
        work_tree: &Path,
        excludes_file: Option<PathBuf>,
    ) -> Result<Store, Cannot> {
        let common = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(rel) => git_dir.join(rel.trim()),
            Err(_) => git_dir.to_path_buf(),
        };
        let config_path = common.join("config");
        let config = std::fs::read_to_string(&config_path)
            .map_err(|e| format!("cannot read `{}`: {e}", config_path.display()))?;
        check_format(&config)?;
        if common.join("reftable").exists() {
            return Err("the repository keeps its refs in a reftable".into());
        }
        let objects = common.join("objects");
        if !objects.is_dir() {
            return Err(format!("`{}` is not a directory", objects.display()));
        }
        let excludes_file = excludes_file.or_else(default_excludes_file);
        Ok(Store {
            loose: gix_odb::loose::Store::at(&objects, gix_hash::Kind::Sha1),
            objects,
            common,
            work_tree: work_tree.to_path_buf(),
            excludes_file,
        })
    }

    /// The tree `base` with `paths` (relative to the work tree, as the
    /// watches name them; a directory stands for all beneath it) brought in
    /// step with the disk, written to the object store.
    pub fn snapshot(&self, base: &str, paths: &[PathBuf], rules: &Rules) -> Result<Taken, Cannot> {
        let base = parse_oid(base)?;
        let mut look = Look {
            store: self,
            rules,
            old: OldTree::new(base),
            ignores: HashMap::new(),
            global: None,
            edits: BTreeMap::new(),
            too_large: Vec::new(),
            unreadable: Vec::new(),
        };
        for p in paths {
            look.path(p.as_os_str().as_bytes())?;
        }
        let Look {
            mut old,
            edits,
            too_large,
            unreadable,
            ..
        } = look;
        let mut changes = Changes::default();
        let mut real: Vec<(Vec<u8>, Edit)> = Vec::new();
        for (path, new) in edits {
            let was = match old.at(self, &path)? {
                Old::Blob(kind, id) => Some((kind, id)),
                _ => None,
            };
            if was == new {
                continue;
            }
            let name = String::from_utf8_lossy(&path).into_owned();
            match (&was, &new) {
                (None, Some(_)) => changes.added.push(name),
                (Some(_), None) => changes.deleted.push(name),
                _ => changes.changed.push(name),
            }
            real.push((path, new));
        }
        let tree = if real.is_empty() {
            base
        } else {
            let edits: Vec<(&[u8], Edit)> = real.iter().map(|(p, e)| (p.as_slice(), *e)).collect();
            match self.apply(Some(base), &edits)? {
                Some(id) => id,
                None => self.write_tree(Vec::new())?,
            }
        };
        Ok(Taken {
            tree: tree.to_string(),
            changes,
            too_large,
            unreadable,
        })
    }

    /// Writes the commit of `tree` with `parent`, as `git commit-tree`
    /// would with ag's identity.
    pub fn commit(&self, tree: &str, parent: &str, message: &str) -> Result<String, Cannot> {
        let who = gix_actor::Signature {
            name: "ag".into(),
            email: "ag@localhost".into(),
            time: gix_date::Time::now_local_or_utc(),
        };
        let mut message = message.to_string();
        if !message.ends_with('\n') {
            message.push('\n');
        }
        let commit = gix_object::Commit {
            tree: parse_oid(tree)?,
            parents: [parse_oid(parent)?].into_iter().collect(),
            author: who.clone(),
            committer: who,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        self.loose
            .write(&commit)
            .map(|id| id.to_string())
            .map_err(|e| format!("cannot write the commit: {e}"))
    }

    /// The commit `name` points at, loose or packed (`None`: no such ref).
    pub fn read_ref(&self, name: &str) -> Result<Option<String>, Cannot> {
        let path = self.common.join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let text = text.trim();
                parse_oid(text)?;
                return Ok(Some(text.to_string()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        }
        let packed = self.common.join("packed-refs");
        let text = match std::fs::read_to_string(&packed) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read `{}`: {e}", packed.display())),
        };
        Ok(text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
            .filter_map(|l| l.split_once(' '))
            .find(|(_, n)| *n == name)
            .map(|(id, _)| id.to_string()))
    }

    /// Moves `name` from `old` to `new`, as `git update-ref <name> <new>
    /// <old>` does: under `<name>.lock`, and only if the ref is still at
    /// `old`. `Ok(false)`: it was not (another writer won; the caller asks
    /// git). A lock held by someone else is a refusal too.
    pub fn move_ref(&self, name: &str, new: &str, old: &str) -> Result<bool, Cannot> {
        let path = self.common.join(name);
        let mut lock = path.clone().into_os_string();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(f) => f,
            Err(e) => return Err(format!("cannot lock `{}`: {e}", path.display())),
        };
        let moved = (|| {
            if self.read_ref(name)?.as_deref() != Some(old) {
                return Ok(false);
            }
            file.write_all(format!("{new}\n").as_bytes())
                .and_then(|()| std::fs::rename(&lock, &path))
                .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            Ok(true)
        })();
        if !matches!(moved, Ok(true)) {
            let _ = std::fs::remove_file(&lock);
        }
        moved
    }

    /// The entries of tree `id`.
    fn read_tree(&self, id: ObjectId) -> Result<Vec<gix_object::tree::Entry>, Cannot> {
        let mut buf = Vec::new();
        let found = self
            .loose
            .try_find(&id, &mut buf)
            .map_err(|e| format!("cannot read tree {id}: {e}"))?;
        let data = match found {
            Some(d) => d.data.to_vec(),
            None => {
                // Packed since it was written (a `git gc`): the whole store.
                let odb = gix_odb::at(&self.objects, gix_hash::Kind::Sha1)
                    .map_err(|e| format!("cannot open `{}`: {e}", self.objects.display()))?;
                let mut buf = Vec::new();
                match odb.try_find(&id, &mut buf) {
                    Ok(Some(d)) => d.data.to_vec(),
                    Ok(None) => return Err(format!("tree {id} is not in the repository")),
                    Err(e) => return Err(format!("cannot read tree {id}: {e}")),
                }
            }
        };
        let tree = gix_object::TreeRef::from_bytes(&data, gix_hash::Kind::Sha1)
            .map_err(|e| format!("cannot parse tree {id}: {e}"))?;
        Ok(tree.entries.iter().map(|e| (*e).into()).collect())
    }

    fn write_tree(&self, mut entries: Vec<gix_object::tree::Entry>) -> Result<ObjectId, Cannot> {
        entries.sort();
        self.loose
            .write(&gix_object::Tree { entries })
            .map_err(|e| format!("cannot write a tree: {e}"))
    }

    /// Tree `base` with `edits` (paths relative to it, sorted, a blob or
    /// `None` to remove) made; `None` when nothing is left in it (git
    /// stores no empty directory).
    fn apply(
        &self,
        base: Option<ObjectId>,
        edits: &[(&[u8], Edit)],
    ) -> Result<Option<ObjectId>, Cannot> {
        let old = match base {
            Some(id) => self.read_tree(id)?,
            None => Vec::new(),
        };
        let mut entries: BTreeMap<Vec<u8>, gix_object::tree::Entry> = old
            .iter()
            .map(|e| (e.filename.to_vec(), e.clone()))
            .collect();
        // Each name of this tree: the edit of it, and those beneath it.
        type Group<'e> = (Option<Edit>, Vec<(&'e [u8], Edit)>);
        let mut groups: BTreeMap<&[u8], Group> = BTreeMap::new();
        for &(path, edit) in edits {
            match path.iter().position(|b| *b == b'/') {
                Some(n) => groups
                    .entry(&path[..n])
                    .or_default()
                    .1
                    .push((&path[n + 1..], edit)),
                None => groups.entry(path).or_default().0 = Some(edit),
            }
        }
        for (name, (direct, below)) in groups {
            // A file written over whatever was there wins; else what is
            // left beneath the name (a file that became a directory).
            let new = match direct {
                Some(Some((kind, id))) => Some((EntryMode::from(kind), id)),
                _ if !below.is_empty() => {
                    let sub = entries
                        .get(name)
                        .filter(|e| e.mode.is_tree())
                        .map(|e| e.oid);
                    self.apply(sub, &below)?
                        .map(|id| (EntryMode::from(EntryKind::Tree), id))
                }
                _ => None,
            };
            match new {
                Some((mode, oid)) => {
                    entries.insert(
                        name.to_vec(),
                        gix_object::tree::Entry {
                            mode,
                            filename: name.into(),
                            oid,
                        },
                    );
                }
                None => {
                    entries.remove(name);
                }
            }
        }
        if entries.is_empty() {
            return Ok(None);
        }
        let mut new: Vec<gix_object::tree::Entry> = entries.into_values().collect();
        new.sort();
        let mut was = old;
        was.sort();
        if base.is_some() && new == was {
            return Ok(base);
        }
        self.write_tree(new).map(Some)
    }
}

/// Refuses a repository whose format this module would misread: only
/// SHA-1 objects and files for refs, extensions that change neither, no
/// shared permissions and no included config files (`core.excludesFile`
/// is asked of git itself, which reads them all).
fn check_format(config: &str) -> Result<(), Cannot> {
    let mut section = String::new();
    for line in config.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            section = rest
                .split(']')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase()),
            None => (line.to_ascii_lowercase(), "true".to_string()),
        };
        if section == "extensions" {
            let fine = HARMLESS_EXTENSIONS.contains(&key.as_str())
                || (key == "objectformat" && value == "sha1")
                || (key == "refstorage" && value == "files");
            if !fine {
                return Err(format!(
                    "the repository uses `extensions.{key} = {value}`, which this code does not read"
                ));
            }
        } else if section == "core" && key == "sharedrepository" {
            // Objects and refs would need the group's permissions.
            return Err("the repository is shared (`core.sharedRepository`)".into());
        } else if section.starts_with("include") {
            return Err("the repository's config includes other files".into());
        }
    }
    Ok(())
}

/// git's default global exclude file: `$XDG_CONFIG_HOME/git/ignore`, else
/// `~/.config/git/ignore`.
fn default_excludes_file() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(xdg.join("git").join("ignore"))
}

fn parse_oid(hex: &str) -> Result<ObjectId, Cannot> {
    ObjectId::from_hex(hex.as_bytes()).map_err(|_| format!("`{hex}` is not a SHA-1 object id"))
}

/// What the base tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Old {
    None,
    Blob(EntryKind, ObjectId),
    Tree(ObjectId),
    /// A submodule's commit.
    Gitlink,
}

/// The base tree, read as far as the paths asked about need.
struct OldTree {
    /// Directory (relative, "" for the top) to its entries by name.
    dirs: HashMap<Vec<u8>, Option<Entries>>,
    root: ObjectId,
}

impl OldTree {
    fn new(root: ObjectId) -> OldTree {
        OldTree {
            dirs: HashMap::new(),
            root,
        }
    }

    /// The entries of directory `dir` in the base tree (`None`: not a
    /// directory there).
    fn dir(&mut self, store: &Store, dir: &[u8]) -> Result<Option<&Entries>, Cannot> {
        if !self.dirs.contains_key(dir) {
            let id = if dir.is_empty() {
                Some(self.root)
            } else {
                let (parent, name) = split(dir);
                self.dir(store, parent)?
                    .and_then(|d| d.get(name))
                    .filter(|(m, _)| m.is_tree())
                    .map(|(_, id)| *id)
            };
            let entries = match id {
                Some(id) => Some(
                    store
                        .read_tree(id)?
                        .into_iter()
                        .map(|e| (e.filename.to_vec(), (e.mode, e.oid)))
                        .collect(),
                ),
                None => None,
            };
            self.dirs.insert(dir.to_vec(), entries);
        }
        Ok(self.dirs.get(dir).and_then(|d| d.as_ref()))
    }

    fn at(&mut self, store: &Store, path: &[u8]) -> Result<Old, Cannot> {
        let (parent, name) = split(path);
        Ok(match self.dir(store, parent)?.and_then(|d| d.get(name)) {
            None => Old::None,
            Some((m, id)) if m.is_tree() => Old::Tree(*id),
            Some((m, _)) if m.is_commit() => Old::Gitlink,
            Some((m, id)) => Old::Blob(m.kind(), *id),
        })
    }

    /// Whether the path or a directory above it is a submodule.
    fn in_submodule(&mut self, store: &Store, path: &[u8]) -> Result<bool, Cannot> {
        let mut end = 0;
        while end <= path.len() {
            let next = path[end..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(path.len(), |n| end + n);
            match self.at(store, &path[..next])? {
                Old::Gitlink => return Ok(true),
                Old::Tree(_) => {}
                _ => return Ok(false),
            }
            end = next + 1;
        }
        Ok(false)
    }

    /// Every file of the base tree at or beneath `path`.
    fn files(&mut self, store: &Store, path: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), Cannot> {
        match self.at(store, path)? {
            Old::None => {}
            Old::Blob(..) => out.push(path.to_vec()),
            Old::Gitlink => return Err(format!("`{}` is a submodule", show(path))),
            Old::Tree(_) => {
                let names: Vec<Vec<u8>> = self
                    .dir(store, path)?
                    .map(|d| d.keys().cloned().collect())
                    .unwrap_or_default();
                for name in names {
                    self.files(store, &join(path, &name), out)?;
                }
            }
        }
        Ok(())
    }
}

/// One snapshot's look at the named paths.
struct Look<'a> {
    store: &'a Store,
    rules: &'a Rules<'a>,
    old: OldTree,
    /// Each directory's .gitignore (relative directory to its matcher).
    ignores: HashMap<Vec<u8>, Gitignore>,
    /// `info/exclude` and the global file, read on first need.
    global: Option<(Gitignore, Gitignore)>,
    /// Path to its new blob, or `None` to remove it.
    edits: BTreeMap<Vec<u8>, Edit>,
    too_large: Vec<(String, u64)>,
    unreadable: Vec<String>,
}

impl Look<'_> {
    /// Brings `path` (and what is beneath it) in step with the disk.
    fn path(&mut self, path: &[u8]) -> Result<(), Cannot> {
        if path.is_empty() {
            return Err("the whole tree was named".into());
        }
        if (self.rules.is_excluded)(&String::from_utf8_lossy(path)) {
            return Ok(());
        }
        if self.old.in_submodule(self.store, path)? {
            if matches!(self.old.at(self.store, path)?, Old::Gitlink) {
                return Err(format!("the submodule `{}` changed", show(path)));
            }
            // Inside a submodule's working tree: not recorded here.
            return Ok(());
        }
        match self.on_disk(path)? {
            None => self.remove_all(path),
            Some(meta) if meta.is_dir() => self.directory(path),
            Some(meta) => self.file(path, &meta),
        }
    }

    /// The path's metadata, unless it, or a directory above it, is gone,
    /// or something above it is no longer a directory (a symlink now).
    fn on_disk(&self, path: &[u8]) -> Result<Option<std::fs::Metadata>, Cannot> {
        let mut end = 0;
        loop {
            let next = path[end..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(path.len(), |n| end + n);
            let full = self.store.work_tree.join(OsStr::from_bytes(&path[..next]));
            let meta = match full.symlink_metadata() {
                Ok(m) => m,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(format!("cannot look at `{}`: {e}", full.display())),
            };
            if next == path.len() {
                return Ok(Some(meta));
            }
            if !meta.is_dir() {
                return Ok(None);
            }
            if full.join(".git").symlink_metadata().is_ok() {
                return Err(format!(
                    "`{}` is inside `{}`, a repository of its own",
                    show(path),
                    show(&path[..next])
                ));
            }
            end = next + 1;
        }
    }

    /// Every file the base tree has at or beneath `path` goes.
    fn remove_all(&mut self, path: &[u8]) -> Result<(), Cannot> {
        let mut files = Vec::new();
        self.old.files(self.store, path, &mut files)?;
        for f in files {
            self.edits.insert(f, None);
        }
        Ok(())
    }

    /// A directory: what the base tree has beneath it, and what git would
    /// add of what is there now.
    fn directory(&mut self, path: &[u8]) -> Result<(), Cannot> {
        let mut had = Vec::new();
        self.old.files(self.store, path, &mut had)?;
        if matches!(self.old.at(self.store, path)?, Old::Blob(..)) {
            // A file that became a directory.
            self.edits.insert(path.to_vec(), None);
        }
        let mut seen = std::collections::HashSet::new();
        if !self.ignored(path, true)? {
            self.walk(path, &mut seen)?;
        }
        // What the base tree had and the walk did not add: gone, or left
        // out by .gitignore now but tracked all the same.
        for f in had {
            if seen.contains(&f) {
                continue;
            }
            match self.on_disk(&f)? {
                Some(meta) if !meta.is_dir() => self.file(&f, &meta)?,
                _ => self.remove_all(&f)?,
            }
        }
        Ok(())
    }

    /// Adds the files beneath directory `dir` that git would add.
    fn walk(
        &mut self,
        dir: &[u8],
        seen: &mut std::collections::HashSet<Vec<u8>>,
    ) -> Result<(), Cannot> {
        let full = self.store.work_tree.join(OsStr::from_bytes(dir));
        if full.join(".git").symlink_metadata().is_ok() {
            return Err(format!("`{}` is a repository of its own", show(dir)));
        }
        let listing = std::fs::read_dir(&full)
            .map_err(|e| format!("cannot list `{}`: {e}", full.display()))?;
        let mut names: Vec<(Vec<u8>, std::fs::FileType)> = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| format!("cannot list `{}`: {e}", full.display()))?;
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot look at `{}`: {e}", entry.path().display()))?;
            names.push((join(dir, entry.file_name().as_bytes()), kind));
        }
        for (path, kind) in names {
            if (self.rules.is_excluded)(&String::from_utf8_lossy(&path)) {
                continue;
            }
            if kind.is_dir() {
                if !self.ignored(&path, true)? {
                    self.walk(&path, seen)?;
                }
            } else if kind.is_file() || kind.is_symlink() {
                let full = self.store.work_tree.join(OsStr::from_bytes(&path));
                let meta = full
                    .symlink_metadata()
                    .map_err(|e| format!("cannot look at `{}`: {e}", full.display()))?;
                seen.insert(path.clone());
                self.file(&path, &meta)?;
            }
        }
        Ok(())
    }

    /// A file or symlink: hashed, and its blob written when it is new.
    fn file(&mut self, path: &[u8], meta: &std::fs::Metadata) -> Result<(), Cannot> {
        let old = self.old.at(self.store, path)?;
        if let Old::Tree(_) = old {
            // A directory that became a file.
            self.remove_all(path)?;
        }
        let tracked = matches!(old, Old::Blob(..));
        if !tracked && self.ignored(path, false)? {
            return Ok(());
        }
        let kind = meta.file_type();
        if !kind.is_file() && !kind.is_symlink() {
            // A fifo, socket or device: git adds none.
            if tracked {
                self.edits.insert(path.to_vec(), None);
            }
            return Ok(());
        }
        let name = String::from_utf8_lossy(path).into_owned();
        if kind.is_file() && meta.len() > self.rules.max_file_bytes {
            self.too_large.push((name, meta.len()));
            self.edits.insert(path.to_vec(), None);
            return Ok(());
        }
        let full = self.store.work_tree.join(OsStr::from_bytes(path));
        let (mode, bytes) = if kind.is_symlink() {
            match std::fs::read_link(&full) {
                Ok(target) => (EntryKind::Link, target.into_os_string().into_vec()),
                Err(_) => {
                    self.unreadable.push(name);
                    return Ok(());
                }
            }
        } else {
            match std::fs::read(&full) {
                Ok(bytes) => {
                    let exec = meta.permissions().mode() & 0o100 != 0;
                    let mode = if exec {
                        EntryKind::BlobExecutable
                    } else {
                        EntryKind::Blob
                    };
                    (mode, bytes)
                }
                Err(_) => {
                    // As `git add --ignore-errors`: a file it cannot read
                    // keeps the version it had, if any.
                    self.unreadable.push(name);
                    return Ok(());
                }
            }
        };
        let id = gix_object::compute_hash(gix_hash::Kind::Sha1, gix_object::Kind::Blob, &bytes)
            .map_err(|e| format!("cannot hash `{name}`: {e}"))?;
        if old != Old::Blob(mode, id) && !self.store.loose.contains(&id) {
            self.store
                .loose
                .write_buf(gix_object::Kind::Blob, &bytes)
                .map_err(|e| format!("cannot store `{name}`: {e}"))?;
        }
        self.edits.insert(path.to_vec(), Some((mode, id)));
        Ok(())
    }

    /// Whether git would leave `path` out were it not tracked: it, or a
    /// directory above it, is ignored.
    fn ignored(&mut self, path: &[u8], is_dir: bool) -> Result<bool, Cannot> {
        let mut end = 0;
        loop {
            let next = path[end..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(path.len(), |n| end + n);
            let last = next == path.len();
            if self.ignored_here(&path[..next], is_dir || !last)? {
                return Ok(true);
            }
            if last {
                return Ok(false);
            }
            end = next + 1;
        }
    }

    /// Whether the patterns ignore `path` itself (its parents not asked):
    /// the deepest .gitignore that says anything decides, then
    /// `info/exclude`, then the global file.
    fn ignored_here(&mut self, path: &[u8], is_dir: bool) -> Result<bool, Cannot> {
        let full = self.store.work_tree.join(OsStr::from_bytes(path));
        let mut dir = split(path).0;
        loop {
            let m = self.gitignore(dir)?.matched(&full, is_dir);
            match m {
                Match::Ignore(_) => return Ok(true),
                Match::Whitelist(_) => return Ok(false),
                Match::None => {}
            }
            if dir.is_empty() {
                break;
            }
            dir = split(dir).0;
        }
        let (exclude, global) = match self.global.take() {
            Some(both) => both,
            None => {
                let exclude = self.build(&self.store.common.join("info").join("exclude"))?;
                let global = match &self.store.excludes_file {
                    Some(f) => self.build(f)?,
                    None => Gitignore::empty(),
                };
                (exclude, global)
            }
        };
        let (exclude, global) = &*self.global.insert((exclude, global));
        for g in [exclude, global] {
            match g.matched(&full, is_dir) {
                Match::Ignore(_) => return Ok(true),
                Match::Whitelist(_) => return Ok(false),
                Match::None => {}
            }
        }
        Ok(false)
    }

    /// The matcher of directory `dir`'s .gitignore.
    fn gitignore(&mut self, dir: &[u8]) -> Result<&Gitignore, Cannot> {
        if !self.ignores.contains_key(dir) {
            let file = self
                .store
                .work_tree
                .join(OsStr::from_bytes(dir))
                .join(".gitignore");
            let g = self.build(&file)?;
            self.ignores.insert(dir.to_vec(), g);
        }
        Ok(&self.ignores[dir])
    }

    /// A matcher of one exclude file whose patterns are relative to the
    /// work tree's top (a .gitignore: to its own directory); a file that is
    /// not there matches nothing, a pattern the matcher cannot take is a
    /// refusal.
    fn build(&self, file: &Path) -> Result<Gitignore, Cannot> {
        if !file.is_file() {
            return Ok(Gitignore::empty());
        }
        let root = if file.file_name() == Some(OsStr::new(".gitignore")) {
            file.parent().unwrap_or(&self.store.work_tree)
        } else {
            &self.store.work_tree
        };
        let mut b = GitignoreBuilder::new(root);
        if let Some(e) = b.add(file) {
            return Err(format!("cannot read `{}`: {e}", file.display()));
        }
        b.build()
            .map_err(|e| format!("cannot read `{}`: {e}", file.display()))
    }
}

/// `dir/name` (`name` alone at the top).
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    let mut p = dir.to_vec();
    p.push(b'/');
    p.extend_from_slice(name);
    p
}

/// (parent, name) of a relative path; the parent of a top-level name is "".
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|b| *b == b'/') {
        Some(n) => (&path[..n], &path[n + 1..]),
        None => (&[], path),
    }
}

fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}
