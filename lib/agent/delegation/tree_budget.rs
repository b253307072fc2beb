//! The budget of a whole tree of agents, shared by its processes: the
//! turns of `--max-turns`, the dollars of `--max-cost` and the places of
//! `--max-agents`. The first ag-loop that may start subagents makes a
//! directory (under `$AG_HOME/trees`) and
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
//! - Cost: the same ledger holds what is left of the agent's `--max-cost`
//!   in the current prompt. What each model call anywhere below it cost is
//!   taken from it once the call ends, so a child's spending counts against
//!   its parent's limit while the child runs, not only when it ends. A
//!   call's cost is known only afterwards: agents running at once can each
//!   start one last call with a little left, and overshoot by that much.

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
    /// It was the cost that ran out, not the turns.
    pub cost: bool,
}

/// What a ledger holds: the turns left, and the dollars left (`None`
/// without a cost limit).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Left {
    turns: u32,
    cost: Option<f64>,
}

impl Left {
    /// Why nothing is left, if so.
    fn spent(&self) -> Option<bool> {
        if self.turns == 0 {
            Some(false)
        } else if self.cost.is_some_and(|c| c <= 0.0) {
            Some(true)
        } else {
            None
        }
    }
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

    /// A new prompt: this agent's ledger starts at `max_turns` and
    /// `max_cost`. No child runs between prompts, so nothing else writes it
    /// now.
    pub fn start_prompt(&self, max_turns: u32, max_cost: Option<f64>) -> io::Result<()> {
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
        write_ledger(
            &mut lock,
            Left {
                turns: max_turns,
                cost: max_cost,
            },
        )
    }

    /// Takes one turn from this agent's ledger and every one above; none is
    /// taken when one of them has no turn or no money left.
    pub fn take_turn(&self) -> Result<(), OutOfTurns> {
        let mut locked = Vec::new();
        for (pid, own) in self.chain() {
            let Some(mut lock) = self.lock_ledger(pid) else {
                continue;
            };
            let left = read_ledger(&mut lock);
            if let Some(cost) = left.spent() {
                return Err(OutOfTurns { own, cost });
            }
            locked.push((lock, left));
        }
        for (mut lock, left) in locked {
            let turns = left.turns - 1;
            let _ = write_ledger(&mut lock, Left { turns, ..left });
        }
        Ok(())
    }

    /// Takes what a model call of this agent cost from its ledger and
    /// every one above.
    pub fn spend(&self, cost: f64) {
        if cost <= 0.0 || !cost.is_finite() {
            return;
        }
        for (pid, _) in self.chain() {
            let Some(mut lock) = self.lock_ledger(pid) else {
                continue;
            };
            let left = read_ledger(&mut lock);
            if let Some(c) = left.cost {
                let cost = Some(c - cost);
                let _ = write_ledger(&mut lock, Left { cost, ..left });
            }
        }
    }

    /// A ledger of the chain, locked for writing; `None` when it is gone
    /// (its agent ended, and its own child, this one, is being stopped).
    fn lock_ledger(&self, pid: u32) -> Option<Flock<File>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.ledger(pid))
            .ok()?;
        Flock::lock(file, FlockArg::LockExclusive).ok()
    }

    /// The first ledger of this agent's chain that has no turn or no money
    /// left.
    pub fn out_of_turns(&self) -> Option<OutOfTurns> {
        self.chain().find_map(|(pid, own)| {
            let left = self.read(pid)?;
            left.spent().map(|cost| OutOfTurns { own, cost })
        })
    }

    /// Turns left to this agent: the least of its ledger's and those above
    /// (`None` when there is none to read).
    pub fn turns_left(&self) -> Option<u32> {
        self.chain()
            .filter_map(|(pid, _)| self.read(pid))
            .map(|l| l.turns)
            .min()
    }

    /// Dollars left to this agent: the least of those of its ledger and
    /// those above that have a limit (`None` when none has).
    pub fn cost_left(&self) -> Option<f64> {
        self.chain()
            .filter_map(|(pid, _)| self.read(pid)?.cost)
            .reduce(f64::min)
    }

    fn read(&self, pid: u32) -> Option<Left> {
        let file = File::open(self.ledger(pid)).ok()?;
        let mut lock = Flock::lock(file, FlockArg::LockShared).ok()?;
        Some(read_ledger(&mut lock))
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

/// A ledger is one line, `TURNS COST`, COST `-` without a limit; one that
/// cannot be read has nothing left (a torn ledger must not free a budget).
fn read_ledger(file: &mut File) -> Left {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    let mut words = text.split_whitespace();
    let turns = words.next().and_then(|t| t.parse().ok());
    let cost = match words.next() {
        Some("-") => Some(None),
        Some(c) => c.parse().ok().map(Some),
        None => None,
    };
    match (turns, cost) {
        (Some(turns), Some(cost)) => Left { turns, cost },
        _ => Left {
            turns: 0,
            cost: None,
        },
    }
}

fn write_ledger(file: &mut File, left: Left) -> io::Result<()> {
    let cost = left.cost.map_or_else(|| "-".to_string(), |c| c.to_string());
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(format!("{} {cost}", left.turns).as_bytes())
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
