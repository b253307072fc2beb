//! `ag-tui --attach` in tmux on a session of ag-serve that a socket client
//! started: the history and the live events on the screen, a prompt typed
//! in the TUI reaching the other client, and quitting leaving the session
//! running. tmux is required: scripts/test installs it.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::serve::{Serve, model_args};
use crate::util::Env;

struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(cmd: &str) -> Tmux {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is not installed: scripts/test installs it (Debian: apt-get install tmux)"
        );
        let t = Tmux {
            socket: format!("ag-serve-{}", std::process::id()),
        };
        t.run(&["new-session", "-d", "-x", "100", "-y", "30", cmd]);
        t
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    fn wait_for(&self, what: &str) -> String {
        for _ in 0..1500 {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("`{what}` never appeared:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[test]
fn ag_tui_attaches_to_a_live_session_and_leaves_it_running() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("hello from the model"),
        Turn::Text("the second reply"),
    ]);
    let serve = Serve::start(&env, &[]);
    let mut other = serve.connect();
    other.send(&json!({"type": "start", "args": model_args(&server), "prompt": "first question", "client": "other"}));
    let id = other.until("attached")["session"]
        .as_str()
        .unwrap()
        .to_string();
    other.until("agent_end");

    let cmd = format!(
        "cd '{}' && HOME='{}' AG_HOME='{}' NO_COLOR=1 '{}' --attach {}; echo EXIT=$?; sleep 60",
        env.path().display(),
        env.join(".home").display(),
        env.join(".home/.ag").display(),
        bin!("ag-tui"),
        &id[..8],
    );
    let tmux = Tmux::start(&cmd);
    // The history, replayed by ag-serve.
    tmux.wait_for("hello from the model");
    tmux.wait_for("attached to session");
    tmux.run(&["send-keys", "-l", "second question"]);
    tmux.run(&["send-keys", "Enter"]);
    tmux.wait_for("the second reply");
    // The other client saw the prompt typed in the TUI.
    let start = other.until("message_start");
    assert_eq!(start["message"]["content"], "second question", "{start}");
    other.until("agent_end");

    // Quitting detaches; the session goes on.
    tmux.run(&["send-keys", "C-c"]);
    tmux.wait_for("EXIT=0");
    // The TUI's bridge may still be saying goodbye.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        other.send(&json!({"type": "list"}));
        let list = other.until("sessions");
        let me = list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.as_str())
            .unwrap()
            .clone();
        assert_eq!(me["state"], "idle", "{list}");
        if me["clients"] == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the TUI never left: {list}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
