//! ag-browser against pages a test serves on 127.0.0.1, with the system's
//! Chromium (scripts/test-setup installs Debian's `chromium`): a scripted
//! model drives it through ag-loop (navigate, type and click by ref,
//! read the result, a screenshot that reaches the model as an image, the
//! console error and the failed request), a host outside the policy is
//! refused with its reason, a huge page's snapshot is cut with a note, and
//! after `kill -9` of ag-loop in the middle of a call no Chromium is left.
//! Tabs the page opens itself are listed and can be switched to; through
//! ag-mcp a call answers with the snapshot as text and a screenshot as an
//! image block, and the browser ends with ag-mcp.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, read_http_request, run};

/// A form: a field and a button that greets by name, a console error,
/// and a fetch that fails (the server answers 500).
const FORM: &str = r#"<!doctype html><html><head><title>Greeter</title></head><body>
<h1>Greeter</h1>
<label>Name <input id="name"></label>
<button onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value + '!'">Greet</button>
<p id="out">nobody yet</p>
<script>console.error('greeter is broken'); fetch('/api/fail');</script>
</body></html>"#;

/// Serves the test pages until the test ends.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                while let Some((_, path, _)) = read_http_request(&mut reader) {
                    page(&path, &mut conn);
                }
            });
        }
    });
    port
}

fn page(path: &str, out: &mut TcpStream) {
    let (status, body) = match path {
        "/" => ("200 OK", FORM.to_string()),
        "/big" => {
            let mut b = String::from("<!doctype html><title>Big</title><body>");
            for i in 0..5000 {
                b.push_str(&format!("<button>b{i}</button>"));
            }
            ("200 OK", b)
        }
        "/opener" => (
            "200 OK",
            "<!doctype html><title>Opener</title><body>\
             <button onclick=\"window.open('/second')\">Open another</button></body>"
                .to_string(),
        ),
        "/second" => (
            "200 OK",
            "<!doctype html><title>Second</title><p>the second page</p>".to_string(),
        ),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(30));
            ("200 OK", "late".to_string())
        }
        _ => ("500 Internal Server Error", "no".to_string()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body.as_bytes());
}

/// The tool messages ag-loop sent back in the model's request `n`.
fn tool_results(model: &ModelServer, n: usize) -> String {
    model.requests()[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pids of Chromium processes whose environment or command line holds
/// `mark` (a test's own temporary directory).
fn chromiums(mark: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        if cmd.contains("chrom") && String::from_utf8_lossy(&env).contains(mark) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_scripted_model_opens_types_clicks_reads_and_sees_the_page() {
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/");
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("browser_navigate", json!({ "url": url }))]),
        Turn::Tools(vec![("browser_type", json!({"ref": "e1", "text": "Ann"}))]),
        Turn::Tools(vec![("browser_click", json!({"ref": "e2"}))]),
        Turn::Tools(vec![
            ("browser_screenshot", json!({})),
            ("browser_console", json!({})),
        ]),
        Turn::Tools(vec![(
            "browser_navigate",
            json!({"url": "https://example.com/"}),
        )]),
        Turn::Text("done"),
    ]);
    let env = Env::new();
    let mut c = model.ag_loop(&env);
    c.args(["--no-session", "--tools", "browser_automation", "greet Ann"]);
    let r = run(c, None);
    r.ok();
    let opened = tool_results(&model, 1);
    assert!(opened.contains("Title: Greeter"), "{opened}\n{r}");
    assert!(opened.contains("- textbox \"Name\" [ref=e1]"), "{opened}");
    assert!(opened.contains("- button \"Greet\" [ref=e2]"), "{opened}");
    let typed = tool_results(&model, 2);
    assert!(typed.contains("[ref=e1]: Ann"), "{typed}");
    let clicked = tool_results(&model, 3);
    assert!(clicked.contains("Hello, Ann!"), "{clicked}");
    let seen = tool_results(&model, 4);
    assert!(seen.contains("Screenshot of the viewport"), "{seen}");
    assert!(seen.contains("[error] greeter is broken"), "{seen}");
    assert!(
        seen.contains("/api/fail: 500 Internal Server Error"),
        "{seen}"
    );
    // The picture reaches the model as an image, after the tool results.
    let request = model.requests()[4].to_string();
    assert!(
        request.contains("data:image/png;base64,iVBORw0KGgo"),
        "no image in the request"
    );
    let refused = tool_results(&model, 5);
    assert!(
        refused.contains("`example.com` is not among the hosts the network policy allows"),
        "{refused}"
    );
}

#[test]
fn from_a_shell_a_huge_page_is_cut_and_a_screenshot_goes_to_a_file() {
    let port = serve();
    let env = Env::new();
    let _stop = StopOnFailure(&env);
    let b = bin!("ag-browser");
    let mut c = env.cmd(b);
    c.args(["navigate", "--url", &format!("127.0.0.1:{port}/big")]);
    let r = run(c, None);
    r.ok();
    let out = r.stdout();
    assert!(out.contains("- button \"b0\" [ref=e1]"), "{out}");
    assert!(!out.contains("\"b4999\""), "not cut: {} chars", out.len());
    assert!(
        r.stderr()
            .contains("The snapshot is 5001 lines; this shows lines 1-"),
        "{}",
        r.stderr()
    );
    assert!(out.chars().count() < 21_000, "{}", out.chars().count());
    // The rest, from where the note says.
    let next = r
        .stderr()
        .split("offset=")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap()
        .to_string();
    let mut c = env.cmd(b);
    c.args(["snapshot", "--offset", &next]);
    let r = run(c, None);
    r.ok();
    assert!(!r.stdout().contains("[ref=e1]"), "{}", r.stdout());
    let mut c = env.cmd(b);
    c.args(["screenshot", "--ref", "e1", "--out", "shot.png"]);
    run(c, None).ok();
    assert!(env.read("shot.png").starts_with(b"\x89PNG"));
    // Loopback only by default; a file outside the workspace neither.
    let mut c = env.cmd(b);
    c.args(["navigate", "--url", "http://example.com/"]);
    let r = run(c, None);
    r.expect_code(1);
    assert!(r.stderr().contains("not among the hosts"), "{}", r.stderr());
    let mut c = env.cmd(b);
    c.args(["navigate", "--url", "file:///etc/passwd"]);
    let r = run(c, None);
    r.expect_code(1);
    assert!(
        r.stderr().contains("outside the workspace"),
        "{}",
        r.stderr()
    );
    env.write("page.html", "<title>Local</title><p>from a file</p>");
    let mut c = env.cmd(b);
    c.args(["navigate", "--url", "./page.html"]);
    let r = run(c, None);
    r.ok();
    assert!(r.stdout().contains("from a file"), "{}", r.stdout());
    stop_helper(&env);
}

/// A tab the page opens itself (`window.open` on a click) is in the tab
/// list of the next call, not current, and can be made current.
#[test]
fn a_tab_the_page_opens_is_listed_and_can_be_switched_to() {
    let port = serve();
    let env = Env::new();
    let _stop = StopOnFailure(&env);
    let b = bin!("ag-browser");
    let browse = |args: &[&str]| {
        let mut c = env.cmd(b);
        c.args(args);
        let r = run(c, None);
        r.ok();
        r.stdout()
    };
    let opened = browse(&["navigate", "--url", &format!("127.0.0.1:{port}/opener")]);
    assert!(
        opened.contains("- button \"Open another\" [ref=e1]"),
        "{opened}"
    );
    browse(&["click", "--ref", "e1"]);
    // The page's tab is adopted by the call after its target appears.
    let mut tabs = String::new();
    crate::util::wait_for("the page's tab in the tab list", || {
        tabs = browse(&["tab-list"]);
        tabs.contains("Second")
    });
    assert!(tabs.contains("1 (current): Opener"), "{tabs}");
    assert!(
        tabs.contains(&format!("2: Second — http://127.0.0.1:{port}/second")),
        "{tabs}"
    );
    let switched = browse(&["tab-switch", "--tab", "2"]);
    assert!(switched.contains("Tab 2 is the current tab."), "{switched}");
    assert!(switched.contains("Tab 2 of 2"), "{switched}");
    assert!(switched.contains("the second page"), "{switched}");
    // The page closes its own tab: the list says so, and tab 1 is current.
    browse(&[
        "evaluate",
        "--expression",
        "setTimeout(() => window.close(), 0)",
    ]);
    // While it closes, the tab may still be listed with no title or
    // address: wait for it to be gone, not only for its title.
    crate::util::wait_for("the closed tab to leave the list", || {
        tabs = browse(&["tab-list"]);
        !tabs.contains("Second") && !tabs.lines().any(|l| l.starts_with("2"))
    });
    assert!(tabs.contains("1 (current): Opener"), "{tabs}");
    stop_helper(&env);
}

/// Through ag-mcp: a browser call answers with the page's snapshot, a
/// screenshot is an MCP image block, and the browser ends with ag-mcp.
#[test]
fn through_ag_mcp_a_snapshot_is_text_a_screenshot_an_image_and_the_browser_ends_with_it() {
    let port = serve();
    let env = Env::new();
    let mark = env.path().to_string_lossy().to_string();
    let (mut s, _) = crate::mcp::Session::ready(&env, &["--tools", "browser"]);
    let list = s.request(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for n in [
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_screenshot",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let r = s.call(
        3,
        "browser_navigate",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let t = crate::mcp::text(&r);
    assert!(t.contains("Title: Greeter"), "{t}");
    assert!(t.contains("- button \"Greet\" [ref=e2]"), "{t}");
    assert_eq!(r["_meta"]["ag/details"]["title"], "Greeter", "{r}");
    let r = s.call(4, "browser_type", json!({"ref": "e1", "text": "Bo"}));
    assert_eq!(r["isError"], false, "{r}");
    let r = s.call(5, "browser_click", json!({"ref": "e2"}));
    assert!(crate::mcp::text(&r).contains("Hello, Bo!"), "{r}");
    let r = s.call(6, "browser_screenshot", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    let content = r["content"].as_array().unwrap();
    let image = content
        .iter()
        .find(|c| c["type"] == "image")
        .unwrap_or_else(|| panic!("no image block: {r}"));
    assert_eq!(image["mimeType"], "image/png", "{r}");
    assert!(
        image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"),
        "not a PNG"
    );
    assert!(
        crate::mcp::text(&r).contains("Screenshot of the viewport"),
        "{r}"
    );
    // A refused host is an error result with the reason.
    let r = s.call(
        7,
        "browser_navigate",
        json!({"url": "https://example.com/"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["ag/error_code"], "browser.refused", "{r}");
    assert!(!chromiums(&mark).is_empty(), "no Chromium was running");
    assert_eq!(s.finish(), Some(0));
    assert_no_chromium_soon(&mark, "Chromium outlived ag-mcp");
}

/// Waits up to 10 s for the Chromiums started under `mark` to end, and
/// fails with `what` if one is left.
fn assert_no_chromium_soon(mark: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !chromiums(mark).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(chromiums(mark), Vec::<u32>::new(), "{what}");
}

/// Ends the shell's warm helper of this test's home.
fn stop_helper(env: &Env) {
    signal_helpers(env);
    let mark = env.path().to_string_lossy().to_string();
    assert_no_chromium_soon(&mark, "the helper's Chromium outlived its stop");
}

/// Ends the test's warm helpers if the test fails before its
/// `stop_helper`: else they and their Chromium stay up for their 15 idle
/// minutes.
struct StopOnFailure<'a>(&'a Env);

impl Drop for StopOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            signal_helpers(self.0);
        }
    }
}

/// Sends SIGTERM to the warm helpers started under this test's home.
fn signal_helpers(env: &Env) {
    let pid_files: Vec<_> = warm_dir(env)
        .read_dir()
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_else(|_| Vec::new());
    let mark = env.path().to_string_lossy().to_string();
    for p in pid_files {
        if p.extension().is_some_and(|e| e == "pid")
            && let Ok(pid) = std::fs::read_to_string(&p)
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if String::from_utf8_lossy(&environ).contains(&mark) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
        }
    }
}

/// Where the test's binaries keep their warm helpers: `Env::cmd` clears
/// `XDG_RUNTIME_DIR` and sets `TMPDIR`, so it is the test's own
/// temporary directory, not this process's (looking there left the
/// helper and its Chromium running for their 15 idle minutes).
fn warm_dir(env: &Env) -> std::path::PathBuf {
    env.join(crate::util::TMP)
        .join(format!("ag-warm-{}", nix::unistd::getuid()))
}

#[test]
fn after_kill_9_of_ag_loop_in_the_middle_of_a_call_no_chromium_is_left() {
    let port = serve();
    let env = Env::new();
    let mark = env.path().to_string_lossy().to_string();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "browser_navigate",
            json!({"url": format!("http://127.0.0.1:{port}/")}),
        )]),
        // The page takes 30 s: ag-loop is killed while the call waits.
        Turn::Tools(vec![(
            "browser_navigate",
            json!({"url": format!("http://127.0.0.1:{port}/slow")}),
        )]),
        Turn::Text("done"),
    ]);
    let mut c = model.ag_loop(&env);
    c.args(["--no-session", "--tools", "browser", "go"]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = crate::util::spawn_retrying(&mut c).unwrap();
    // Wait for the second call to be under way.
    let deadline = Instant::now() + Duration::from_secs(60);
    while model.requests().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(model.requests().len(), 2, "the first call did not end");
    assert!(!chromiums(&mark).is_empty(), "no Chromium was running");
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_no_chromium_soon(&mark, "Chromium outlived ag-loop");
}
