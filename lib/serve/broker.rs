//! The broker: the table of live sessions (one ag-loop per session, never
//! two: starting or resuming a session that runs joins it instead), and the
//! operations every front end shares, the socket's and the HTTP server's
//! alike: start, find, resume, end, rewind, list.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use clap::Parser;
use tokio_util::sync::CancellationToken;

use super::listing;
use super::live::{Live, Spawn};
use super::registry::{Entry, Registry};
use crate::llm::keys::Redactor;
use crate::proc::{CaptureLimit, Command, Output};
use crate::protocol::{SessionInfo, SessionState};
use crate::session::{SessionFile, Store, StoreError};

/// How long an idle session gets to end before a rewind.
const END_WAIT: Duration = Duration::from_secs(10);

/// What the broker is set up with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The ag-loop program.
    pub ag_loop: PathBuf,
    /// The ag-session program (rewind).
    pub ag_session: PathBuf,
    /// The bytes a client may have queued before it is dropped.
    pub client_buffer: usize,
    /// The working directory of a session started without one.
    pub default_cwd: PathBuf,
    /// Where the sessions ag-serve ran are remembered.
    pub registry: PathBuf,
}

/// Why an operation failed; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Finding the session failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The ag-loop flags were refused.
    #[error("{0}")]
    Args(String),
    /// The working directory is not one.
    #[error("`{0}` is not a directory; give `cwd` as an existing directory")]
    Cwd(String),
    /// The session is working.
    #[error(
        "session {0} is working; send {{\"type\":\"interrupt\"}} or wait until it is idle, then rewind"
    )]
    Busy(String),
    /// Another rewind of the session, or of its working tree, is under way.
    #[error(
        "a rewind of session {session} is under way{tree}; wait until it is done (`list` shows the new session it makes), then rewind again if you still mean to"
    )]
    Rewinding {
        /// The session being rewound.
        session: String,
        /// ", in the same working directory `DIR`" when that is what collides.
        tree: String,
    },
    /// ag-loop or ag-session could not be run, or failed.
    #[error("{0}")]
    Failed(String),
}

/// A session found by id or prefix.
pub enum Found {
    /// Its ag-loop runs here.
    Live(Arc<Live>),
    /// It has no ag-loop here.
    Ended(SessionFile),
}

/// The broker.
pub struct Broker {
    settings: Settings,
    store: Store,
    registry: Registry,
    redactor: Arc<Redactor>,
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// The rewinds under way: the session and the working directory each
    /// restores, to refuse a second one of either (two at once would each
    /// end the session, restore the same files and start a new session).
    rewinds: Mutex<HashMap<String, PathBuf>>,
    shutdown: CancellationToken,
    listing: listing::Cache,
    me: Weak<Broker>,
}

impl Broker {
    /// A broker over the sessions of `store`.
    pub fn new(
        settings: Settings,
        store: Store,
        redactor: Redactor,
        shutdown: CancellationToken,
    ) -> Arc<Broker> {
        Arc::new_cyclic(|me| Broker {
            registry: Registry::new(&settings.registry),
            settings,
            store,
            redactor: Arc::new(redactor),
            live: Mutex::new(HashMap::new()),
            rewinds: Mutex::new(HashMap::new()),
            shutdown,
            listing: listing::Cache::default(),
            me: me.clone(),
        })
    }

    fn table(&self) -> MutexGuard<'_, HashMap<String, Arc<Live>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What no line sent to a client may carry.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The same, shared.
    pub fn redactor_arc(&self) -> Arc<Redactor> {
        self.redactor.clone()
    }

    /// The bytes the broker may hold for one client (`--client-buffer`).
    pub fn client_buffer(&self) -> usize {
        self.settings.client_buffer
    }

    /// The live sessions.
    pub fn live_sessions(&self) -> Vec<Arc<Live>> {
        self.table().values().cloned().collect()
    }

    /// A new session in `cwd` (default: ag-serve's own) with these
    /// ag-loop flags, its ag-loop started.
    pub fn start(&self, cwd: Option<&str>, args: &[String]) -> Result<Arc<Live>, ServeError> {
        check_args(args)?;
        let cwd = match cwd {
            Some(c) => {
                let p = self.settings.default_cwd.join(c);
                match p.canonicalize() {
                    Ok(d) if d.is_dir() => d,
                    _ => return Err(ServeError::Cwd(c.to_string())),
                }
            }
            None => self.settings.default_cwd.clone(),
        };
        // Made here, as `ag-session new` makes one, so that its id is
        // known before ag-loop says anything.
        let (file, _) = self.store.create(&cwd, serde_json::json!({}), None)?;
        let mut table = self.table();
        self.spawn(&mut table, file, cwd, args.to_vec())
    }

    /// Runs ag-loop on a session that has none here, or gives the one running.
    pub fn resume(&self, file: SessionFile, args: &[String]) -> Result<Arc<Live>, ServeError> {
        check_args(args)?;
        let mut table = self.table();
        if let Some(live) = table.get(&file.id)
            && !live.has_ended()
        {
            return Ok(live.clone());
        }
        let cwd = self.cwd_of(&file);
        self.spawn(&mut table, file, cwd, args.to_vec())
    }

    /// The working directory a session's header names, if it is one; else
    /// the default.
    fn cwd_of(&self, file: &SessionFile) -> PathBuf {
        crate::session::Reader::open(&file.path)
            .and_then(|mut r| r.header())
            .ok()
            .flatten()
            .map(|h| PathBuf::from(h.cwd))
            .filter(|d| d.is_dir())
            .unwrap_or_else(|| self.settings.default_cwd.clone())
    }

    /// Notes a rewind of session `id`, which restores `cwd`, as under way;
    /// refused while another rewind of the session, or of that working
    /// directory, is. The note goes when the guard is dropped.
    fn hold_rewind(&self, id: &str, cwd: &std::path::Path) -> Result<RewindGuard<'_>, ServeError> {
        let mut rewinds = self.rewinds.lock().unwrap_or_else(|p| p.into_inner());
        if rewinds.contains_key(id) {
            return Err(ServeError::Rewinding {
                session: id.to_string(),
                tree: String::new(),
            });
        }
        if let Some((other, _)) = rewinds.iter().find(|(_, d)| d.as_path() == cwd) {
            return Err(ServeError::Rewinding {
                session: other.clone(),
                tree: format!(", in the same working directory `{}`", cwd.display()),
            });
        }
        rewinds.insert(id.to_string(), cwd.to_path_buf());
        Ok(RewindGuard {
            broker: self,
            id: id.to_string(),
        })
    }

    fn spawn(
        &self,
        table: &mut HashMap<String, Arc<Live>>,
        file: SessionFile,
        cwd: PathBuf,
        args: Vec<String>,
    ) -> Result<Arc<Live>, ServeError> {
        // The machine's keys are hidden from every line sent (see
        // `feed.rs`); a key given in the flags is this session's own.
        let mut redactor = Redactor::default();
        if let Some(key) = flag_value(&args, "--api-key") {
            redactor.add(&key, "--api-key");
        }
        let spec = Spawn {
            id: file.id.clone(),
            path: file.path.clone(),
            cwd: cwd.clone(),
            program: self.settings.ag_loop.clone(),
            args,
            client_buffer: self.settings.client_buffer,
            redactor: Arc::new(redactor),
            shutdown: self.shutdown.clone(),
        };
        let me = self.me.clone();
        let id = file.id.clone();
        let live = Live::spawn(spec, move || {
            if let Some(b) = me.upgrade() {
                let mut table = b.table();
                if table.get(&id).is_some_and(|l| l.has_ended()) {
                    table.remove(&id);
                }
            }
        })
        .map_err(|e| {
            ServeError::Failed(format!(
                "cannot start `{}`: {e}",
                self.settings.ag_loop.display()
            ))
        })?;
        let entry = Entry {
            id: file.id.clone(),
            path: file.path.display().to_string(),
            cwd: cwd.display().to_string(),
            started: crate::session::now(),
        };
        if let Err(e) = self.registry.add(&entry) {
            crate::cli::warn("ag-serve", &format!("cannot remember the session: {e}"));
        }
        table.insert(file.id, live.clone());
        Ok(live)
    }

    /// The session with this id, or unique prefix or suffix.
    pub fn find(&self, wanted: &str) -> Result<Found, ServeError> {
        if wanted.contains('/') || wanted.trim().is_empty() {
            return Err(ServeError::Args(format!(
                "`{wanted}` is not a session id; give the id or a unique prefix of it, as `list` shows"
            )));
        }
        // A live session by its whole id needs no look at the disk.
        if let Some(live) = self.table().get(wanted) {
            return Ok(Found::Live(live.clone()));
        }
        let file = self.store.find(wanted)?;
        Ok(match self.table().get(&file.id) {
            Some(live) => Found::Live(live.clone()),
            None => Found::Ended(file),
        })
    }

    /// Ends a live session: its running work interrupted, its stdin closed.
    pub fn end(&self, live: &Live) {
        live.send(b"{\"type\":\"interrupt\"}\n".to_vec());
        live.close_input();
        live.hub.announce(crate::protocol::ServeMessage::Ending {
            session: live.id.clone(),
        });
    }

    /// Rewinds a session that is not working to before `turn`: its ag-loop
    /// ended, `ag-session rewind` run, the new session started. Returns the
    /// session rewound, the new one and the notes.
    pub async fn rewind(
        &self,
        wanted: &str,
        turn: u64,
        force: bool,
    ) -> Result<(String, Arc<Live>, Vec<String>), ServeError> {
        let found = self.find(wanted)?;
        let (id, cwd) = match &found {
            Found::Live(live) => (live.id.clone(), live.cwd.clone()),
            Found::Ended(f) => (f.id.clone(), self.cwd_of(f)),
        };
        // Held until this rewind is over, whichever way it ends.
        let _held = self.hold_rewind(&id, &cwd)?;
        let (file, was_live) = match found {
            Found::Live(live) if !live.has_ended() => {
                if matches!(
                    live.hub.state(),
                    SessionState::Working | SessionState::WaitingForApproval
                ) {
                    return Err(ServeError::Busy(live.id.clone()));
                }
                live.close_input();
                if !live.wait_ended(END_WAIT).await {
                    return Err(ServeError::Failed(format!(
                        "session {} did not end within {}s of its stdin closing; rewind it again later",
                        live.id,
                        END_WAIT.as_secs()
                    )));
                }
                (self.store.find(&live.id)?, Some(live.args.clone()))
            }
            Found::Live(live) => (self.store.find(&live.id)?, None),
            Found::Ended(f) => (f, None),
        };
        let mut cmd = Command::new(&self.settings.ag_session)
            .args(["rewind", &file.id, "--turn", &turn.to_string()])
            .timeout(Duration::from_secs(120))
            .output(Output::Separate {
                stdout: CaptureLimit::new(64 << 10),
                stderr: CaptureLimit::new(64 << 10),
            });
        if force {
            cmd = cmd.arg("--force");
        }
        let ran = cmd.collect(&self.shutdown).await;
        let failed = |message: String| {
            // The session it was goes on as it was.
            if let Some(args) = &was_live {
                let _ = self.resume(file.clone(), args);
            }
            ServeError::Failed(message)
        };
        let out = ran.map_err(|e| failed(format!("cannot run ag-session: {e}")))?;
        let stderr = self.redactor.text(out.stderr.lossy().trim()).into_owned();
        if out.code() != 0 {
            let msg = stderr
                .strip_prefix("ag-session: error: ")
                .unwrap_or(&stderr);
            return Err(failed(format!("the rewind failed: {msg}")));
        }
        let new_id = out.stdout.lossy().trim().to_string();
        let notes: Vec<String> = stderr
            .lines()
            .map(|l| l.strip_prefix("ag-session: ").unwrap_or(l).to_string())
            .filter(|l| !l.is_empty())
            .collect();
        if new_id.is_empty() {
            return Err(failed(format!(
                "ag-session rewind named no new session: {stderr}"
            )));
        }
        let new_file = self.store.find(&new_id)?;
        let live = self.resume(new_file, &was_live.unwrap_or_default())?;
        Ok((file.id, live, notes))
    }

    /// The sessions: the live ones, then those ag-serve ran (and with
    /// `all`, every other one on this machine), each once, the most
    /// recently active first.
    pub fn list(&self, all: bool) -> Vec<SessionInfo> {
        let live = self.live_sessions();
        let mut out: Vec<SessionInfo> = live.iter().map(|l| listing::of_live(l)).collect();
        let mut files: Vec<(String, PathBuf)> = self
            .registry
            .entries()
            .into_iter()
            .map(|e| (e.id, PathBuf::from(e.path)))
            .collect();
        if all && let Ok(mut everything) = self.store.list_all() {
            everything.sort_by(|a, b| b.stamp.cmp(&a.stamp));
            files.extend(everything.into_iter().take(200).map(|f| (f.id, f.path)));
        }
        for (id, path) in files {
            if out.iter().any(|s| s.id == id) {
                continue;
            }
            if let Some(info) = self.listing.of_ended(&id, &path) {
                out.push(info);
            }
        }
        out.sort_by(|a, b| {
            (a.state == SessionState::Ended)
                .cmp(&(b.state == SessionState::Ended))
                .then_with(|| b.last_activity.cmp(&a.last_activity))
        });
        out
    }

    /// Ends every live session (ag-serve is stopping): stdin closed, a
    /// grace period, then the rest stopped with their process groups.
    pub async fn shut_down(&self, grace: Duration) {
        let live = self.live_sessions();
        for l in &live {
            self.end(l);
        }
        let deadline = tokio::time::Instant::now() + grace;
        for l in &live {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            l.wait_ended(left).await;
        }
        self.shutdown.cancel();
        for l in &live {
            l.wait_ended(crate::proc::GRACE + Duration::from_secs(1))
                .await;
        }
    }
}

/// A rewind under way; dropping it ends the note.
struct RewindGuard<'a> {
    broker: &'a Broker,
    id: String,
}

impl Drop for RewindGuard<'_> {
    fn drop(&mut self) {
        self.broker
            .rewinds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// Refuses flags that are ag-serve's to give (or that would make ag-loop
/// stop reading commands), with ag-loop's own parser, so that a bad flag
/// gets ag-loop's message before anything starts.
fn check_args(args: &[String]) -> Result<(), ServeError> {
    let parsed = crate::agent::cli::Args::try_parse_from(
        std::iter::once("ag-loop".to_string()).chain(args.iter().cloned()),
    )
    .map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("").trim();
        ServeError::Args(format!(
            "ag-loop refuses these flags: {}",
            first.strip_prefix("error: ").unwrap_or(first)
        ))
    })?;
    let mut theirs = Vec::new();
    if !parsed.prompts.is_empty() {
        theirs.push("prompts as arguments (send a `prompt` instead)");
    }
    if parsed.session.is_some() || parsed.continue_ || parsed.no_session {
        theirs.push("--session, --continue and --no-session (attach with `resume` instead)");
    }
    if parsed.json || parsed.pretty || parsed.quiet || parsed.approve_on_stdin {
        theirs.push("--json, --pretty, --quiet and --approve-on-stdin");
    }
    if parsed.cwd.is_some() {
        theirs.push("--cwd (give `cwd` in the request instead)");
    }
    if parsed.list_agents {
        theirs.push("--list-agents");
    }
    if theirs.is_empty() {
        Ok(())
    } else {
        Err(ServeError::Args(format!(
            "ag-serve sets these itself, leave them out of `args`: {}",
            theirs.join("; ")
        )))
    }
}

/// The value of `--flag VALUE` or `--flag=VALUE` in `args`.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == flag {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            return Some(v.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_flags_ag_serve_owns_are_refused_with_what_to_do() {
        check_args(&v(&["-m", "a/b", "--tools", "readonly"])).unwrap();
        let e = check_args(&v(&["--session", "x"])).unwrap_err().to_string();
        assert!(e.contains("resume"), "{e}");
        let e = check_args(&v(&["fix it"])).unwrap_err().to_string();
        assert!(e.contains("send a `prompt`"), "{e}");
        let e = check_args(&v(&["--json"])).unwrap_err().to_string();
        assert!(e.contains("--json"), "{e}");
        let e = check_args(&v(&["--no-such-flag"])).unwrap_err().to_string();
        assert!(e.contains("--no-such-flag"), "{e}");
    }

    #[test]
    fn one_rewind_at_a_time_of_a_session_and_of_a_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            ag_loop: "ag-loop".into(),
            ag_session: "ag-session".into(),
            client_buffer: 1 << 20,
            default_cwd: dir.path().to_path_buf(),
            registry: dir.path().join("sessions.jsonl"),
        };
        let store = Store {
            root: dir.path().join("sessions"),
        };
        let b = Broker::new(
            settings,
            store,
            Redactor::default(),
            CancellationToken::new(),
        );
        let (a, elsewhere) = (std::path::Path::new("/w/a"), std::path::Path::new("/w/b"));
        let held = b.hold_rewind("s1", a).unwrap();
        let Err(e) = b.hold_rewind("s1", elsewhere) else {
            panic!("a second rewind of s1 went ahead");
        };
        assert!(matches!(e, ServeError::Rewinding { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("a rewind of session s1 is under way; wait"),
            "{e}"
        );
        // Another session restoring the same files is refused too.
        let Err(e) = b.hold_rewind("s2", a) else {
            panic!("a rewind in /w/a went ahead while s1's was under way");
        };
        let e = e.to_string();
        assert!(
            e.contains("session s1 is under way, in the same working directory `/w/a`"),
            "{e}"
        );
        let other = b.hold_rewind("s3", elsewhere).unwrap();
        // Over, whichever way it ended: the next one goes ahead.
        drop(held);
        drop(b.hold_rewind("s1", a).unwrap());
        drop(other);
        b.hold_rewind("s3", elsewhere).unwrap();
    }

    #[test]
    fn a_flag_value_is_found_in_both_spellings() {
        assert_eq!(
            flag_value(&v(&["--api-key", "k1"]), "--api-key").as_deref(),
            Some("k1")
        );
        assert_eq!(
            flag_value(&v(&["--api-key=k2"]), "--api-key").as_deref(),
            Some("k2")
        );
        assert_eq!(flag_value(&v(&["--api-keyx"]), "--api-key"), None);
    }
}
