//! Where the task list lives and how it changes on disk: the session's
//! `todo.json` (from `AG_SESSION_DIR`), the run's own list (`AG_TODO_FILE`,
//! set by ag-loop when it keeps no session) or a file named by `--file`, read
//! whole, changed under a lock on its directory so that parallel calls do
//! not lose each other's changes, and replaced atomically (a temporary file
//! in the same directory, synced, then renamed over the old one).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use super::list::{TodoItem, TodoList};
use crate::tool_protocol::{Context, ToolError};

/// The environment variable naming the session's directory (set by ag-loop).
pub const SESSION_DIR_VAR: &str = "AG_SESSION_DIR";
/// The environment variable naming the session (set by ag-loop).
pub const SESSION_ID_VAR: &str = "AG_SESSION_ID";
/// The environment variable naming the list of a run that keeps no session
/// (set by ag-loop `--no-session`, in a directory it removes at its end).
pub const RUN_FILE_VAR: &str = "AG_TODO_FILE";
/// The list's file name inside a session's directory.
pub const FILE_NAME: &str = "todo.json";

/// The on-disk shape of the list.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    /// Format version, for readers that come later.
    version: u32,
    /// The session the list belongs to, when it is a session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    /// The items.
    #[serde(default)]
    items: Vec<TodoItem>,
}

/// The list's file, found from the flag or the session.
#[derive(Debug, Clone)]
pub struct Store {
    /// Where the list is stored.
    pub path: PathBuf,
    /// The path as messages show it.
    pub shown: String,
    /// The session, when the list is a session's.
    pub session_id: Option<String>,
}

impl Store {
    /// The file named by `file` (the `--file` flag), else the session's
    /// `todo.json`, else the run's list; an error saying how to give one when there is neither.
    pub fn locate(ctx: &Context, file: Option<&str>) -> Result<Store, ToolError> {
        let session_id = std::env::var(SESSION_ID_VAR).ok().filter(|s| !s.is_empty());
        if let Some(file) = file {
            let path = ctx.resolve(file)?;
            return Ok(Store {
                shown: ctx.show(&path),
                path,
                session_id: None,
            });
        }
        match std::env::var_os(SESSION_DIR_VAR).filter(|d| !d.is_empty()) {
            // The session's directory comes from the harness, not the model,
            // so `--root` does not apply to it.
            Some(dir) => {
                let path = ctx.cwd.join(dir).join(FILE_NAME);
                Ok(Store {
                    shown: path.display().to_string(),
                    path,
                    session_id,
                })
            }
            None if let Some(file) = std::env::var_os(RUN_FILE_VAR).filter(|f| !f.is_empty()) => {
                let path = PathBuf::from(file);
                Ok(Store {
                    shown: path.display().to_string(),
                    path,
                    session_id: None,
                })
            }
            None => Err(ToolError::new(
                "todo.no_list",
                format!(
                    "there is no task list to use: {SESSION_DIR_VAR} is not set (ag-loop sets it for the session{}) and no file was given. \
Run ag-todo under ag-loop, or name a file: `ag-todo --file todo.json list`.",
                    if session_id.is_some() {
                        format!("; {SESSION_ID_VAR} is set but not {SESSION_DIR_VAR}")
                    } else {
                        String::new()
                    }
                ),
            )),
        }
    }

    /// The list as stored; empty when the file does not exist yet.
    pub fn load(&self) -> Result<TodoList, ToolError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(TodoList::default()),
            Err(e) => {
                return Err(ToolError::new(
                    "todo.io",
                    format!("cannot read the task list `{}`: {e}", self.shown),
                ));
            }
        };
        if text.trim().is_empty() {
            return Ok(TodoList::default());
        }
        let stored: Stored = serde_json::from_str(&text).map_err(|e| {
            ToolError::new(
                "todo.corrupt",
                format!(
                    "the task list `{}` is not a valid ag-todo file ({e}); it was left untouched. Fix or remove it, or use another file.",
                    self.shown
                ),
            )
        })?;
        Ok(TodoList {
            items: stored.items,
        })
    }

    /// Loads the list, lets `change` modify it, and stores the result, all
    /// under an exclusive lock on the directory. Nothing is written when
    /// `change` fails.
    pub fn modify<R>(
        &self,
        change: impl FnOnce(&mut TodoList) -> Result<R, ToolError>,
    ) -> Result<(TodoList, R), ToolError> {
        let dir = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        fs::create_dir_all(&dir).map_err(|e| self.io_error("create the directory of", &e))?;
        let dir_file = File::open(&dir).map_err(|e| self.io_error("open the directory of", &e))?;
        let lock = Flock::lock(dir_file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| self.io_error("lock", &io::Error::from(errno)))?;
        let mut list = self.load()?;
        let answer = change(&mut list)?;
        self.save(&dir, &list)?;
        // Make the rename itself durable.
        let _ = lock.sync_all();
        drop(lock);
        Ok((list, answer))
    }

    fn save(&self, dir: &Path, list: &TodoList) -> Result<(), ToolError> {
        let stored = Stored {
            version: 1,
            session_id: self.session_id.clone(),
            items: list.items.clone(),
        };
        let mut text = serde_json::to_string_pretty(&stored)
            .map_err(|e| ToolError::new("todo.io", format!("cannot encode the task list: {e}")))?;
        text.push('\n');
        // Write through a symlink to the file it points at, as editors do,
        // rather than replacing the link with a plain file.
        let target = fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let target_dir = target.parent().unwrap_or(dir);
        let mut tmp = tempfile::Builder::new()
            .prefix(".todo-")
            .suffix(".tmp")
            .tempfile_in(target_dir)
            .map_err(|e| self.io_error("write", &e))?;
        tmp.write_all(text.as_bytes())
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| self.io_error("write", &e))?;
        let perms = match fs::metadata(&target) {
            Ok(meta) => meta.permissions(),
            Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
        };
        fs::set_permissions(tmp.path(), perms).map_err(|e| self.io_error("write", &e))?;
        tmp.persist(&target)
            .map_err(|e| self.io_error("replace", &e.error))?;
        Ok(())
    }

    fn io_error(&self, what: &str, err: &io::Error) -> ToolError {
        ToolError::new(
            "todo.io",
            format!("cannot {what} the task list `{}`: {err}", self.shown),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::todo::list::ItemSpec;

    #[test]
    fn failed_change_writes_nothing_and_good_one_replaces_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store {
            path: dir.path().join("sub/todo.json"),
            shown: "todo.json".into(),
            session_id: Some("s1".into()),
        };
        let err = store
            .modify(|l| {
                l.add(vec![ItemSpec {
                    id: None,
                    content: " ".into(),
                    status: None,
                }])
            })
            .unwrap_err();
        assert_eq!(err.code, "todo.empty_content");
        assert!(!store.path.exists());
        store
            .modify(|l| {
                l.add(vec![ItemSpec {
                    id: None,
                    content: "x".into(),
                    status: None,
                }])
            })
            .unwrap();
        let text = fs::read_to_string(&store.path).unwrap();
        assert!(text.contains("\"session_id\": \"s1\""), "{text}");
        assert_eq!(store.load().unwrap().items.len(), 1);
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["todo.json"], "no temporary file is left");
    }

    #[test]
    fn corrupt_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("todo.json");
        fs::write(&path, "not json").unwrap();
        let store = Store {
            path: path.clone(),
            shown: "todo.json".into(),
            session_id: None,
        };
        let err = store.modify(|l| l.set(Vec::new())).unwrap_err();
        assert_eq!(err.code, "todo.corrupt");
        assert_eq!(fs::read_to_string(&path).unwrap(), "not json");
    }
}
