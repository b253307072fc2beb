//! The budget of a whole tree of agents, shared by its processes: the
//! turns of `--max-turns` and the places of `--max-agents`. The first
//! ag-loop that may start subagents makes a directory (in `$TMPDIR`) and
//! hands it down in [`TREE_ENV`]; every agent of the tree finds it there.
//!
//! - Places: `slot-0` .. `slot-{N-1}`, N the root's `--max-agents`. A
//!   parent holds an exclusive `flock` on one while its child runs, so
//!   that at most N subagents run at once in the whole tree; the kernel
//!   lets go of it when the holder dies, even by `kill -9`.
//! - Turns: an agent that may start subagents keeps a ledger,
//!   `turns-<pid>`, of the turns left of its `--max-turns` in the current
//!   prompt. Each model call anywhere below it takes one from it, and from
//!   every ledger above (their pids come down in [`TURNS_ENV`]), so that a
//!   child's turns count against its parent's limit, and children running
//!   in parallel share what is left instead of each spending all of it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};
use tokio_util::sync::CancellationToken;

/// The tree's directory, in a subagent's environment.
pub const TREE_ENV: &str = "AG_AGENT_TREE";

/// The pids whose ledgers a subagent's turns also count against, root
/// first, comma-separated.
pub const TURNS_ENV: &str = "AG_AGENT_TURNS";

/// How often a root waiting for a place looks again.
const SLOT_POLL: Duration = Duration::from_millis(50);

/// This agent's part of the tree.
#[derive(Debug)]
pub struct Tree {
    dir: PathBuf,
    /// This process made the directory, and removes it at the end.
    root: bool,
    /// Pids of the ledgers above this agent, root first.
    above: Vec<u32>,
    /// This agent keeps a ledger of its own (it may start subagents).
    own: bool,
}

/// A place held while a subagent runs; dropped, it is free again.
pub struct Slot {
    _lock: Flock<File>,
}

/// Why an agent may not take another turn.
pub struct OutOfTurns {
    /// This agent's own ledger ran out (its subagents spent the rest),
    /// not an ancestor's.
    pub own: bool,
}

impl Tree {
    /// The tree this ag-loop belongs to: the one in its environment, or,
    /// when it may start subagents (`own`), a new one with `max_agents`
    /// places. `None` for a run outside any tree that starts none, or when
    /// the directory cannot be made (the caller then offers no `agent`).
    pub fn join(own: bool, max_agents: u32) -> io::Result<Option<Tree>> {
        let above: Vec<u32> = std::env::var(TURNS_ENV)
            .unwrap_or_default()
            .split(',')
            .filter_map(|p| p.trim().parse().ok())
            .collect();
        let tree = match std::env::var_os(TREE_ENV).map(PathBuf::from) {
            Some(dir) if dir.is_dir() => Tree {
                dir,
                root: false,
                above,
                own,
            },
            _ if own => Tree::make(max_agents)?,
            _ => return Ok(None),
        };
        Ok(Some(tree))
    }

    fn make(max_agents: u32) -> io::Result<Tree> {
        let tmp = crate::session::ag_home().join("trees");
        std::fs::create_dir_all(&tmp)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))?;
        sweep(&tmp);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir = tmp.join(format!("ag-tree-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        for i in 0..max_agents.max(1) {
            File::create(dir.join(format!("slot-{i}")))?;
        }
        Ok(Tree {
            dir,
            root: true,
            above: Vec::new(),
            own: true,
        })
    }

    /// The environment of a subagent of this agent.
    pub fn child_env(&self) -> Vec<(String, String)> {
        let mut pids: Vec<String> = self.above.iter().map(u32::to_string).collect();
        if self.own {
            pids.push(std::process::id().to_string());
        }
        vec![
            (TREE_ENV.into(), self.dir.display().to_string()),
            (TURNS_ENV.into(), pids.join(",")),
        ]
    }

    /// A new prompt: this agent's ledger starts at `max_turns`. No child
    /// runs between prompts, so nothing else writes it now.
    pub fn start_prompt(&self, max_turns: u32) -> io::Result<()> {
        if !self.own {
            return Ok(());
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.ledger(std::process::id()))?;
        let mut lock = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| e)?;
        write_count(&mut lock, max_turns)
    }

    /// Takes one turn from this agent's ledger and every one above; none is
    /// taken when one of them has none left.
    pub fn take_turn(&self) -> Result<(), OutOfTurns> {
        let mut locked = Vec::new();
        for (pid, own) in self.chain() {
            // A ledger that is gone belongs to an agent that ended; its
            // own child (this one) is being stopped anyway.
            let Ok(file) = OpenOptions::new()
                .read(true)
                .write(true)
                .open(self.ledger(pid))
            else {
                continue;
            };
            let Ok(mut lock) = Flock::lock(file, FlockArg::LockExclusive) else {
                continue;
            };
            let left = read_count(&mut lock);
            if left == 0 {
                return Err(OutOfTurns { own });
            }
            locked.push((lock, left));
        }
        for (mut lock, left) in locked {
            let _ = write_count(&mut lock, left - 1);
        }
        Ok(())
    }

    /// The first ledger of this agent's chain that has no turn left.
    pub fn out_of_turns(&self) -> Option<OutOfTurns> {
        self.chain().find_map(|(pid, own)| {
            let file = File::open(self.ledger(pid)).ok()?;
            let mut lock = Flock::lock(file, FlockArg::LockShared).ok()?;
            (read_count(&mut lock) == 0).then_some(OutOfTurns { own })
        })
    }

    /// Turns left to this agent: the least of its ledger's and those above
    /// (`None` when there is none to read).
    pub fn turns_left(&self) -> Option<u32> {
        self.chain()
            .filter_map(|(pid, _)| {
                let file = File::open(self.ledger(pid)).ok()?;
                let mut lock = Flock::lock(file, FlockArg::LockShared).ok()?;
                Some(read_count(&mut lock))
            })
            .min()
    }

    /// A place for a subagent. The root waits for one (those who hold one
    /// never wait, so they end); a subagent gets `None` at once when all are
    /// taken, since waiting for a place held above it could wait forever.
    pub async fn slot(&self, cancel: &CancellationToken) -> Option<Slot> {
        loop {
            if let Some(s) = self.try_slot() {
                return Some(s);
            }
            if !self.root {
                return None;
            }
            tokio::select! {
                _ = tokio::time::sleep(SLOT_POLL) => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    fn try_slot(&self) -> Option<Slot> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("slot-"))
            })
            .collect();
        names.sort();
        names.into_iter().find_map(|p| {
            let file = File::open(&p).ok()?;
            let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()?;
            Some(Slot { _lock: lock })
        })
    }

    /// The places of the tree (its `--max-agents`).
    pub fn slots(&self) -> usize {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("slot-"))
                    .count()
            })
            .unwrap_or(0)
    }

    /// True when this process made the tree (it is no subagent).
    pub fn is_root(&self) -> bool {
        self.root
    }

    fn chain(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        let own = self.own.then(std::process::id);
        self.above
            .iter()
            .map(|p| (*p, false))
            .chain(own.map(|p| (p, true)))
    }

    fn ledger(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("turns-{pid}"))
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.root {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else if self.own {
            let _ = std::fs::remove_file(self.ledger(std::process::id()));
        }
    }
}

fn read_count(file: &mut File) -> u32 {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    text.trim().parse().unwrap_or(0)
}

fn write_count(file: &mut File, n: u32) -> io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(n.to_string().as_bytes())
}

/// Removes the trees of roots that are gone (killed outright, so that they
/// could not remove their own).
fn sweep(tmp: &Path) {
    let Ok(dir) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("ag-tree-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let gone = matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
