//! Finding Chromium and starting it headless, through `core/proc` like any
//! child (its own process group, ended with the warm server, and by the
//! server's watchdog should the server be killed outright), with a fresh
//! profile in a temporary directory that goes with it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::proc::{CaptureLimit, Command, LineLimits, Running};

/// The variable naming the browser to start, before `chromium` and
/// `google-chrome` on `PATH`.
pub const BROWSER_ENV: &str = "AG_BROWSER";

/// The commands looked for on `PATH`, in order.
const COMMANDS: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// How long Chromium gets to say where it listens.
const START_LIMIT: Duration = Duration::from_secs(20);

/// The browser to start: `$AG_BROWSER`, else the first of `chromium`,
/// `chromium-browser`, `google-chrome` and `google-chrome-stable` found
/// on `PATH`; the error names the package to install.
pub fn find() -> Result<PathBuf, String> {
    if let Some(b) = std::env::var_os(BROWSER_ENV).filter(|b| !b.is_empty()) {
        let p = PathBuf::from(&b);
        let found = if p.components().count() > 1 {
            p.is_file().then_some(p)
        } else {
            on_path(&b.to_string_lossy())
        };
        return found.ok_or_else(|| {
            format!(
                "{BROWSER_ENV}={} is not an executable file; point it at Chromium or Chrome, or unset it to look for `chromium` on PATH",
                b.to_string_lossy()
            )
        });
    }
    COMMANDS.iter().find_map(|c| on_path(c)).ok_or_else(|| {
        format!(
            "no Chromium found: none of {} is on PATH. Install it (Debian and Ubuntu: `apt-get install chromium`), or set {BROWSER_ENV} to the browser's path",
            COMMANDS.join(", ")
        )
    })
}

/// Debian's `/usr/bin/chromium` is a shell script that runs about ten
/// commands (uname, a grep of /proc/cpuinfo, an expr per file of
/// /etc/chromium.d, findmnt, ls) to gather desktop flags before it execs
/// the browser in `/usr/lib/chromium`: 0.6 to 0.9 s of a cold start on a
/// loaded two-core machine (scripts/bench, the browser case), and none
/// of its flags matter headless. That browser is started directly; any
/// other program is started as it is.
fn past_wrapper(exe: &Path) -> PathBuf {
    const REAL: &str = "/usr/lib/chromium/chromium";
    let debian_script = || -> Option<bool> {
        use std::io::Read;
        let mut head = Vec::with_capacity(4096);
        std::fs::File::open(exe)
            .ok()?
            .take(4096)
            .read_to_end(&mut head)
            .ok()?;
        let head = String::from_utf8_lossy(&head);
        Some(
            head.starts_with("#!")
                && head.contains("APPNAME=chromium")
                && head.contains("LIBDIR=/usr/lib/$APPNAME"),
        )
    };
    if debian_script() == Some(true) && is_executable(Path::new(REAL)) {
        PathBuf::from(REAL)
    } else {
        exe.to_path_buf()
    }
}

/// Whether a browser can be found, for the tool sets.
pub fn available() -> bool {
    find().is_ok()
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A running Chromium: the handle that ends its group when dropped, where
/// its DevTools endpoint is, and its profile, removed after it.
pub struct Chromium {
    /// The browser's own DevTools WebSocket.
    pub ws_url: String,
    /// The last lines it wrote on stderr, for a crash's message.
    pub stderr_tail: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    running: Option<Running>,
    // Declared after `running`: the profile is removed once the browser
    // that writes it is gone.
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts `exe` headless on a fresh profile and waits until it listens.
    /// Must run inside the tokio runtime that will drive it.
    pub async fn start(exe: &Path, cancel: &CancellationToken) -> Result<Chromium, String> {
        let profile = tempfile::Builder::new()
            .prefix("ag-browser-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary profile directory: {e}"))?;
        let (cmd, mut lines) = Command::new(past_wrapper(exe))
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--disable-breakpad",
                "--disable-dev-shm-usage",
                "--mute-audio",
                "--password-store=basic",
                "--use-mock-keychain",
                "--hide-scrollbars",
                "--window-size=1280,800",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .env("HOME", profile.path())
            .stderr_lines(16 * 1024, 4 * 1024 * 1024);
        let streaming = cmd
            .stream_lines(
                LineLimits {
                    max_line: 16 * 1024,
                    max_total: Some(4 * 1024 * 1024),
                    stderr: CaptureLimit::new(0),
                },
                cancel,
            )
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        // Chromium prints nothing useful on stdout; its lines are dropped
        // (the pipe is still drained).
        drop(streaming.lines);
        let running = streaming.running;
        let tail: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
        let found = tokio::time::timeout(START_LIMIT, async {
            while let Some(line) = lines.next().await {
                let Ok(line) = line else { continue };
                let line = String::from_utf8_lossy(&line).into_owned();
                if let Some(url) = line
                    .split_once("DevTools listening on ")
                    .map(|(_, u)| u.trim().to_string())
                {
                    return Some(url);
                }
                remember(&tail, line);
            }
            None
        })
        .await;
        let ws_url = match found {
            Ok(Some(url)) => url,
            Ok(None) => {
                let said = tail.lock().map(|t| t.join("\n")).unwrap_or_default();
                return Err(format!(
                    "{} ended before it listened for DevTools{}",
                    exe.display(),
                    if said.trim().is_empty() {
                        String::new()
                    } else {
                        format!(": {}", said.trim())
                    }
                ));
            }
            Err(_) => {
                return Err(format!(
                    "{} did not listen for DevTools within {} s",
                    exe.display(),
                    START_LIMIT.as_secs()
                ));
            }
        };
        // The rest of stderr: the last lines kept for a crash's message.
        let keep = tail.clone();
        tokio::spawn(async move {
            while let Some(line) = lines.next().await {
                if let Ok(line) = line {
                    remember(&keep, String::from_utf8_lossy(&line).into_owned());
                }
            }
        });
        Ok(Chromium {
            ws_url,
            stderr_tail: tail,
            running: Some(running),
            _profile: profile,
        })
    }

    /// Whether the browser process has ended.
    pub fn ended(&self) -> bool {
        self.running.as_ref().is_none_or(|r| r.ended().is_some())
    }

    /// Ends the browser (SIGTERM to its group, then SIGKILL) and waits for
    /// it, so that its profile can be removed.
    pub async fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.stop();
            let _ = tokio::time::timeout(Duration::from_secs(5), r.wait()).await;
        }
    }
}

fn remember(tail: &std::sync::Mutex<Vec<String>>, line: String) {
    if let Ok(mut t) = tail.lock() {
        if t.len() >= 20 {
            t.remove(0);
        }
        t.push(line);
    }
}
