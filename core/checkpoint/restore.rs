//! Putting a checkpoint's tree back on disk: only the files that differ
//! from the current tree are touched. Files the checkpoint lacks are
//! removed (and directories left empty by that), the others are written
//! from their blobs as stored (no filter, no end-of-line conversion) with
//! their mode, symlinks as symlinks. Nothing is written through a symlinked
//! directory, and the user's index, HEAD and refs are not involved.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::record::Entry;
use super::{Changes, Checkpoints, Error};

/// Blobs fetched per `git cat-file --batch` call, at most (bytes).
const BATCH_BYTES: u64 = 64 * 1024 * 1024;

/// What a restore did.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// The files written, removed and re-created.
    pub changes: Changes,
    /// Paths that could not be restored (submodules), with why.
    pub skipped: Vec<String>,
}

impl Checkpoints {
    /// Makes the working tree, now `current` (a tree from
    /// [`Checkpoints::snapshot`]), match the tree `target`.
    pub fn restore(&self, current: &str, target: &str) -> Result<Restored, Error> {
        let entries = self.entries(current, target)?;
        let mut out = Restored::default();
        // Removals first: a file may give way to a directory of that name.
        for e in entries
            .iter()
            .filter(|e| e.status == 'D' || e.status == 'T')
        {
            if self.is_excluded(&e.path) {
                continue;
            }
            if e.old_mode == "160000" {
                out.skipped
                    .push(format!("{} (a submodule: left as it is)", e.path));
                continue;
            }
            self.remove_path(&e.raw)?;
            if e.status == 'D' {
                out.changes.deleted.push(e.path.clone());
            }
        }
        let writes: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.status != 'D' && !self.is_excluded(&e.path))
            .collect();
        let mut wanted = Vec::new();
        for e in &writes {
            if e.new_mode == "160000" {
                out.skipped
                    .push(format!("{} (a submodule: left as it is)", e.path));
            } else {
                wanted.push(e.new_blob.clone());
            }
        }
        let sizes = self.blob_sizes(&wanted)?;
        let mut batch: Vec<&Entry> = Vec::new();
        let mut batch_bytes = 0u64;
        for e in writes.into_iter().filter(|e| e.new_mode != "160000") {
            let size = sizes.get(&e.new_blob).copied().unwrap_or(0);
            if !batch.is_empty() && batch_bytes + size > BATCH_BYTES {
                self.write_batch(&batch)?;
                batch.clear();
                batch_bytes = 0;
            }
            batch_bytes += size;
            batch.push(e);
            match e.status {
                'A' => out.changes.added.push(e.path.clone()),
                _ => out.changes.changed.push(e.path.clone()),
            }
        }
        if !batch.is_empty() {
            self.write_batch(&batch)?;
        }
        Ok(out)
    }

    fn blob_sizes(&self, blobs: &[String]) -> Result<HashMap<String, u64>, Error> {
        let mut sizes = HashMap::new();
        if blobs.is_empty() {
            return Ok(sizes);
        }
        let input = blobs.join("\n") + "\n";
        let ran = self
            .git
            .ok_with(&["cat-file", "--batch-check"], input.into_bytes())?;
        for line in ran.text().lines() {
            let parts: Vec<&str> = line.split(' ').collect();
            if let [id, _, size] = parts[..] {
                sizes.insert(id.to_string(), size.parse().unwrap_or(0));
            }
        }
        Ok(sizes)
    }

    fn write_batch(&self, batch: &[&Entry]) -> Result<(), Error> {
        let input: String = batch.iter().map(|e| format!("{}\n", e.new_blob)).collect();
        let ran = self
            .git
            .ok_with(&["cat-file", "--batch"], input.into_bytes())?;
        let mut rest: &[u8] = &ran.stdout;
        for e in batch {
            let nl = rest
                .iter()
                .position(|b| *b == b'\n')
                .ok_or_else(|| short_output(&e.path))?;
            let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Error::Git {
                    command: "git cat-file --batch".into(),
                    said: format!("unexpected answer for `{}`: {header}", e.path),
                })?;
            let body = rest
                .get(nl + 1..nl + 1 + size)
                .ok_or_else(|| short_output(&e.path))?;
            self.write_file(&e.raw, &e.new_mode, body)?;
            rest = rest.get(nl + 2 + size..).unwrap_or(&[]);
        }
        Ok(())
    }

    /// The absolute path of `rel` (as git wrote it), after checking that
    /// no directory on the way is a symlink (which could lead outside the
    /// working tree).
    fn checked_path(&self, rel: &[u8]) -> Result<PathBuf, Error> {
        let shown = String::from_utf8_lossy(rel);
        let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == b"." || *p == b".." || *p == b".git")
        {
            return Err(Error::Refused(format!("refusing the path `{shown}`")));
        }
        let mut dir = self.place.work_tree.clone();
        for part in &parts[..parts.len() - 1] {
            dir.push(std::ffi::OsStr::from_bytes(part));
            if let Ok(meta) = dir.symlink_metadata()
                && meta.file_type().is_symlink()
            {
                return Err(Error::Refused(format!(
                    "not restoring `{shown}`: `{}` is a symlink now; move it away and rewind again",
                    dir.display()
                )));
            }
        }
        Ok(self.place.work_tree.join(std::ffi::OsStr::from_bytes(rel)))
    }

    fn remove_path(&self, rel: &[u8]) -> Result<(), Error> {
        let path = self.checked_path(rel)?;
        match path.symlink_metadata() {
            Err(_) => return Ok(()),
            Ok(m) if m.is_dir() => {
                // A file recorded where a directory is now: only an empty
                // one goes; the files in it are entries of their own.
                let _ = std::fs::remove_dir(&path);
            }
            Ok(_) => std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?,
        }
        // Directories left empty go too, up to the top of the tree.
        let mut dir = path.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == self.place.work_tree || !d.starts_with(&self.place.work_tree) {
                break;
            }
            if std::fs::remove_dir(&d).is_err() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(())
    }

    fn write_file(&self, rel: &[u8], mode: &str, body: &[u8]) -> Result<(), Error> {
        let path = self.checked_path(rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        // Whatever is in the way (a file, a symlink, an empty directory);
        // a file's permission bits are kept, apart from the executable ones.
        let mut old_perm = None;
        if let Ok(m) = path.symlink_metadata() {
            let gone = if m.is_dir() {
                std::fs::remove_dir(&path)
            } else {
                if m.is_file() {
                    old_perm = Some(m.permissions().mode() & 0o7777);
                }
                std::fs::remove_file(&path)
            };
            gone.map_err(|e| Error::io("replace", &path, e))?;
        }
        if mode == "120000" {
            let target = std::ffi::OsStr::from_bytes(body);
            return std::os::unix::fs::symlink(target, &path)
                .map_err(|e| Error::io("create the symlink", &path, e));
        }
        let exec = mode == "100755";
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            // A new file gets the usual mode, less the umask, as git gives.
            .mode(if exec { 0o777 } else { 0o666 })
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        file.write_all(body)
            .map_err(|e| Error::io("write", &path, e))?;
        if let Some(perm) = old_perm {
            let perm = if exec {
                perm | ((perm & 0o444) >> 2)
            } else {
                perm & !0o111
            };
            file.set_permissions(std::fs::Permissions::from_mode(perm))
                .map_err(|e| Error::io("set the mode of", &path, e))?;
        }
        Ok(())
    }
}

fn short_output(path: &str) -> Error {
    Error::Git {
        command: "git cat-file --batch".into(),
        said: format!("its output ended before the content of `{path}`"),
    }
}
