//! ag-fetch against HTTP servers the tests start on 127.0.0.1, allowed by
//! name (`--allow-host 127.0.0.1`): a page as its article in markdown,
//! refusals of inward addresses (through a redirect, a name pinned with
//! `--resolve`, a name the system resolves), the size and time bounds, a
//! key in a URL; and under ag-loop with a scripted model, a host outside
//! the policy refused with its reason. Nothing here reaches past the
//! machine: every refused address is refused before a connection is made.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, read_http_request, run};

/// A local HTTP server: each request's path goes to `respond`, which
/// writes the whole response. It keeps the paths asked for.
struct Server {
    port: u16,
    paths: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(respond: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let paths: Arc<Mutex<Vec<String>>> = Arc::default();
        let respond = Arc::new(respond);
        let seen = paths.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let (respond, seen) = (respond.clone(), seen.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    while let Some((_, path, _)) = read_http_request(&mut reader) {
                        seen.lock().unwrap().push(path.clone());
                        respond(&path, &mut conn);
                    }
                });
            }
        });
        Server { port, paths }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn paths(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }
}

fn respond(out: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
}

const ARTICLE: &str = r#"<!doctype html>
<html><head><title>Parsing flags</title><style>.x { color: red }</style>
<script>trackEverything();</script></head>
<body>
<header class="site-header"><a href="/">Home</a><nav><a href="/blog">Blog</a> <a href="/about">About us</a></nav></header>
<div class="ad-banner">Buy our course</div>
<article>
<h1>Parsing flags in Rust</h1>
<p>Use <a href="/docs/clap">clap</a> to parse flags, as the table shows.</p>
<pre><code class="language-rust">fn main() {
    let args = Args::parse();
}</code></pre>
<table><thead><tr><th>crate</th><th>derive</th></tr></thead>
<tbody><tr><td>clap</td><td>yes</td></tr><tr><td>pico-args</td><td>no</td></tr></tbody></table>
<ul><li>first point</li><li>second point</li></ul>
</article>
<aside>Popular posts</aside>
<footer>Copyright 2025, all rights reserved</footer>
</body></html>"#;

fn fetch(env: &Env, args: &[&str]) -> crate::util::Run {
    let mut c = env.cmd(bin!("ag-fetch"));
    c.args(args);
    run(c, None)
}

#[test]
fn an_article_page_comes_back_as_its_article_in_markdown() {
    let server = Server::start(|_, out| {
        respond(
            out,
            "200 OK",
            &[("content-type", "text/html; charset=utf-8")],
            ARTICLE.as_bytes(),
        )
    });
    let env = Env::new();
    let r = fetch(&env, &["--allow-host", "127.0.0.1", &server.url("/post")]);
    r.ok();
    let md = r.stdout();
    assert!(md.starts_with("# Parsing flags in Rust\n"), "{r}");
    assert!(
        md.contains(&format!("[clap]({})", server.url("/docs/clap"))),
        "links are absolute: {r}"
    );
    assert!(
        md.contains("```rust\nfn main() {\n    let args = Args::parse();\n}\n```"),
        "{r}"
    );
    // Table cells are padded to their column's width.
    let rows: Vec<String> = md
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows.len(), 4, "{r}");
    assert_eq!(rows[0], "| crate | derive |");
    assert_eq!(rows[3], "| pico-args | no |");
    assert!(md.contains("- first point\n- second point"), "{r}");
    for boilerplate in [
        "Home",
        "About us",
        "Buy our course",
        "Popular posts",
        "Copyright",
        "trackEverything",
        "color: red",
    ] {
        assert!(!md.contains(boilerplate), "{boilerplate} kept: {r}");
    }
    // The whole page fits: no note about reading on.
    assert_eq!(r.stderr(), "", "{r}");
    let j = fetch(
        &env,
        &["--allow-host", "127.0.0.1", "--json", &server.url("/post")],
    )
    .json();
    assert_eq!(j["details"]["kind"], "html", "{j}");
    assert_eq!(j["details"]["main_content"], "article", "{j}");
    assert_eq!(j["details"]["title"], "Parsing flags", "{j}");
    assert_eq!(j["details"]["truncated"], false, "{j}");
}

#[test]
fn a_loopback_host_the_policy_does_not_name_is_refused_before_any_request() {
    let server = Server::start(|_, out| respond(out, "200 OK", &[], b"hello"));
    let env = Env::new();
    let r = fetch(&env, &[&server.url("/")]);
    r.expect_code(1);
    assert!(
        r.stderr().contains("`127.0.0.1` is a loopback address"),
        "{r}"
    );
    assert!(r.stderr().contains("--allow-host 127.0.0.1"), "{r}");
    // `localhost` is a name, resolved by the system: to a loopback address,
    // which it may not lead to unless named itself.
    let r = fetch(
        &env,
        &[
            "--allow-host",
            "127.0.0.1",
            &format!("http://localhost:{}/", server.port),
        ],
    );
    r.expect_code(1);
    assert!(r.stderr().contains("`localhost` resolves to"), "{r}");
    assert!(r.stderr().contains("a loopback address"), "{r}");
    assert!(server.paths().is_empty(), "{:?}", server.paths());
    // Named, it is reached.
    let r = fetch(
        &env,
        &[
            "--allow-host",
            "localhost",
            &format!("http://localhost:{}/", server.port),
        ],
    );
    r.ok();
    assert_eq!(r.stdout(), "hello\n", "{r}");
    // Calls on stdin take the process's hosts, and may not bring their own.
    let mut c = env.cmd(bin!("ag-fetch"));
    c.args(["--allow-host", "localhost"]);
    let calls = format!(
        "{}\n{}\n",
        json!({"id": "1", "arguments": {"url": format!("http://localhost:{}/", server.port)}}),
        json!({"id": "2", "arguments": {"url": server.url("/"), "allow_host": ["127.0.0.1"]}}),
    );
    let r = run(c, Some(calls.as_bytes()));
    r.ok();
    let answers = r.json_lines();
    assert_eq!(answers[0]["output"], "hello\n", "{r}");
    assert_eq!(answers[1]["error_code"], "fetch.flags_fixed", "{r}");
    assert!(
        answers[1]["output"].as_str().unwrap().ends_with(&format!(
            r#"call again without them: {{"url":"{}"}}"#,
            server.url("/")
        )),
        "{r}"
    );
    assert_eq!(server.paths(), ["/", "/"]);
}

#[test]
fn a_redirect_to_a_forbidden_address_is_refused_at_that_hop() {
    let server = Server::start(|path, out| match path {
        "/metadata" => respond(
            out,
            "302 Found",
            &[("location", "http://169.254.169.254/latest/meta-data/iam")],
            b"",
        ),
        "/private" => respond(
            out,
            "301 Moved Permanently",
            &[("location", "http://10.0.0.7/")],
            b"",
        ),
        "/here" => respond(out, "302 Found", &[("location", "/landing")], b""),
        _ => respond(out, "200 OK", &[("content-type", "text/plain")], b"landed"),
    });
    let env = Env::new();
    let r = fetch(
        &env,
        &["--allow-host", "127.0.0.1", &server.url("/metadata")],
    );
    r.expect_code(1);
    let err = r.stderr();
    assert!(
        err.contains("redirects to `http://169.254.169.254/latest/meta-data/iam`"),
        "{r}"
    );
    assert!(err.contains("a link-local address"), "{r}");
    let r = fetch(
        &env,
        &["--allow-host", "127.0.0.1", &server.url("/private")],
    );
    r.expect_code(1);
    assert!(r.stderr().contains("a private address (10.0.0.0/8)"), "{r}");
    assert_eq!(server.paths(), ["/metadata", "/private"]);
    // A redirect within the allowed host is followed, and said.
    let r = fetch(
        &env,
        &["--allow-host", "127.0.0.1", "--json", &server.url("/here")],
    );
    r.ok();
    let j = r.json();
    assert!(j["output"].as_str().unwrap().starts_with("landed"), "{j}");
    assert!(
        j["output"].as_str().unwrap().contains("Redirected to"),
        "{j}"
    );
    assert_eq!(j["details"]["final_url"], server.url("/landing"));
}

#[test]
fn a_name_that_resolves_to_the_metadata_address_is_refused() {
    // --resolve pins the name as a DNS answer would; the pinned address is
    // checked as any resolved one, so nothing is connected to.
    let env = Env::new();
    let r = fetch(
        &env,
        &[
            "--resolve",
            "metadata.test:169.254.169.254",
            "http://metadata.test/latest/meta-data/",
        ],
    );
    r.expect_code(1);
    let err = r.stderr();
    assert!(
        err.contains("`metadata.test` resolves to 169.254.169.254"),
        "{r}"
    );
    assert!(err.contains("cloud metadata"), "{r}");
    assert!(err.contains("--allow-host metadata.test"), "{r}");
    // The address spelled out, or hidden in an IPv6 form, is refused too.
    for url in [
        "http://169.254.169.254/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fd00:ec2::254]/",
    ] {
        let r = fetch(&env, &[url]);
        r.expect_code(1);
        assert!(r.stderr().contains("refused"), "{r}");
    }
}

#[test]
fn a_50_mb_page_is_cut_with_a_note() {
    let server = Server::start(|_, out| {
        let para =
            "<p>A paragraph of a very long page, repeated until it is fifty megabytes.</p>\n";
        let total = 50_000_000usize;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {total}\r\n\r\n<html><body><main>"
        );
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        let block = para.repeat(1000);
        let mut sent = 0;
        while sent + block.len() <= total {
            // The client hangs up once it has enough: the server stops.
            if out.write_all(block.as_bytes()).is_err() {
                return;
            }
            sent += block.len();
        }
    });
    let env = Env::new();
    let r = fetch(
        &env,
        &["--allow-host", "127.0.0.1", "--json", &server.url("/big")],
    );
    r.ok();
    let j = r.json();
    let out = j["output"].as_str().unwrap();
    assert!(
        out.starts_with("WARNING: Only the first 10.0 MiB of the body were read (it is 47.7 MiB)"),
        "{out:.400}"
    );
    assert!(
        out.contains("offset="),
        "the first page says how to read on: {out:.600}"
    );
    assert_eq!(j["details"]["cut"]["reason"], "size", "{}", j["details"]);
    assert_eq!(j["details"]["bytes"], 10 * 1024 * 1024);
    assert_eq!(j["details"]["truncated"], true);
    let next = j["details"]["next_offset"].as_u64().unwrap();
    // The next page is read the way the note says.
    let r = fetch(
        &env,
        &[
            "--allow-host",
            "127.0.0.1",
            "--json",
            "--offset",
            &next.to_string(),
            &server.url("/big"),
        ],
    );
    let j = r.json();
    assert_eq!(j["details"]["offset"], next, "{}", j["details"]);
    assert!(
        j["output"].as_str().unwrap().contains("A paragraph"),
        "{j:.300}"
    );
}

#[test]
fn a_server_that_sends_one_byte_a_second_is_given_up_on_within_the_bound() {
    let server = Server::start(|_, out| {
        let body = "slow text ".repeat(100);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        for b in body.bytes() {
            if out.write_all(&[b]).and_then(|()| out.flush()).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    });
    let env = Env::new();
    let r = fetch(
        &env,
        &[
            "--allow-host",
            "127.0.0.1",
            "--timeout",
            "2",
            "--json",
            &server.url("/slow"),
        ],
    );
    r.ok();
    let j = r.json();
    let out = j["output"].as_str().unwrap();
    assert!(
        out.starts_with("WARNING: The server was still sending after 2 s, fetch's time limit"),
        "{j}"
    );
    assert!(out.contains("\n\ns"), "what came is shown: {j}");
    assert_eq!(j["details"]["cut"]["reason"], "time", "{j}");
}

#[test]
fn a_url_holding_a_key_from_the_environment_is_refused_before_any_request() {
    let server = Server::start(|_, out| respond(out, "200 OK", &[], b"x"));
    let env = Env::new();
    let key = "sk-fetch-test-0123456789abcdef";
    let url = server.url(&format!("/collect?k={key}"));
    let mut c = env.cmd(bin!("ag-fetch"));
    c.env("OPENAI_API_KEY", key)
        .args(["--allow-host", "127.0.0.1", "--json", &url]);
    let r = run(c, None);
    r.expect_code(1);
    let j = r.json();
    assert_eq!(j["error_code"], "fetch.secret_in_url", "{j}");
    let msg = j["output"].as_str().unwrap();
    assert!(msg.contains("`OPENAI_API_KEY`"), "{msg}");
    assert!(
        !msg.contains(key),
        "the refusal must not repeat the key: {msg}"
    );
    assert!(
        msg.contains(&format!(
            r#"{{"url":"{}"}}"#,
            server.url("/collect?k=[OPENAI_API_KEY redacted]")
        )),
        "{msg}"
    );
    // Percent-encoded, too.
    let mut c = env.cmd(bin!("ag-fetch"));
    c.env("OPENAI_API_KEY", key).args([
        "--allow-host",
        "127.0.0.1",
        &server.url("/c?k=sk%2Dfetch%2Dtest%2D0123456789abcdef"),
    ]);
    run(c, None).expect_code(1);
    assert!(server.paths().is_empty(), "{:?}", server.paths());
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

#[test]
fn unattended_a_host_outside_the_policy_is_refused_and_the_model_told_why() {
    let page = Server::start(|_, out| {
        respond(
            out,
            "200 OK",
            &[("content-type", "text/html")],
            ARTICLE.as_bytes(),
        )
    });
    let model = ModelServer::start(vec![
        Turn::Tools(vec![
            ("fetch", json!({"url": "https://docs.example.org/guide"})),
            ("fetch", json!({"url": page.url("/post")})),
        ]),
        Turn::Text("done"),
    ]);
    let env = Env::new();
    let mut c = model.ag_loop(&env);
    c.args([
        "--no-session",
        "--tools",
        "fetch",
        "--allow-host",
        "127.0.0.1",
        "read the docs",
    ]);
    let r = run(c, None);
    r.ok();
    let results = tool_results(&model, 1);
    assert!(
        results.contains("fetch from `docs.example.org`: the network policy does not name that host, and nobody is there to approve it"),
        "{results}\n{r}"
    );
    // The host the policy names was fetched, inside the run's sandbox.
    assert!(
        results.contains("# Parsing flags in Rust"),
        "{results}\n{r}"
    );
    assert_eq!(page.paths(), ["/post"]);
    let ends: Vec<(bool, String)> = r
        .json_lines()
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e: &Value| {
            (
                e["is_error"] == true,
                e["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(ends.len(), 2, "{r}");
    assert!(
        ends.iter()
            .any(|(err, out)| *err && out.contains("`docs.example.org`")),
        "{r}"
    );
    assert!(ends.iter().any(|(err, _)| !*err), "{r}");
}

#[test]
fn under_ag_loop_a_key_in_a_url_is_refused_by_the_loop() {
    // ag-loop withholds the key from the tool, which could not see it in
    // the URL: the loop looks itself, before the call runs.
    let page = Server::start(|_, out| respond(out, "200 OK", &[], b"x"));
    let key = "sk-loop-test-0123456789abcdef";
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "fetch",
            json!({"url": page.url(&format!("/c?k={key}"))}),
        )]),
        Turn::Text("done"),
    ]);
    let env = Env::new();
    let mut c = model.ag_loop(&env);
    c.env("OPENAI_API_KEY", key).args([
        "--no-session",
        "--tools",
        "fetch",
        "--allow-host",
        "127.0.0.1",
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    let results = tool_results(&model, 1);
    assert!(
        results.contains("The URL holds the value of `OPENAI_API_KEY`"),
        "{results}"
    );
    assert!(!r.stdout().contains(key) && !results.contains(key), "{r}");
    assert!(page.paths().is_empty(), "{:?}", page.paths());
}

#[test]
fn a_person_asked_about_a_host_outside_the_policy_decides_and_the_tool_still_checks_addresses() {
    // The approved host is reached only if its addresses pass: `localhost`
    // is loopback, not named by the policy, so the tool refuses it after
    // the person's yes; the refusal names the address, not the policy,
    // which shows the call got past the host check to the tool.
    let page = Server::start(|_, out| respond(out, "200 OK", &[], b"x"));
    let url = format!("http://localhost:{}/admin", page.port);
    for approved in [true, false] {
        let model = ModelServer::start(vec![
            Turn::Tools(vec![("fetch", json!({ "url": url }))]),
            Turn::Text("done"),
        ]);
        let env = Env::new();
        let mut c = model.ag_loop(&env);
        c.args(["--no-session", "--tools", "fetch", "--approve-on-stdin"]);
        let events = crate::loop_stdin::converse(
            c,
            &[json!({"type": "prompt", "content": "look"})],
            1,
            |r| {
                Some(
                    json!({"type": "approval", "tool_call_id": r["tool_call_id"], "approved": approved}),
                )
            },
        );
        let asked: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "approval_request")
            .collect();
        assert_eq!(asked.len(), 1, "{events:?}");
        assert!(
            asked[0]
                .to_string()
                .contains("fetch from `localhost`, a host the network policy does not name"),
            "{}",
            asked[0]
        );
        let results = tool_results(&model, 1);
        if approved {
            assert!(results.contains("`localhost` resolves to"), "{results}");
            assert!(results.contains("a loopback address"), "{results}");
        } else {
            assert!(
                results.contains("The user did not approve this call"),
                "{results}"
            );
        }
    }
    assert!(page.paths().is_empty(), "{:?}", page.paths());
}

#[test]
fn a_pdf_comes_back_as_its_text_and_an_image_as_one_line() {
    const PDF: &[u8] = include_bytes!("../fixtures/attach/two-pages.pdf");
    let server = Server::start(|path, out| match path {
        "/spec.pdf" => respond(out, "200 OK", &[("content-type", "application/pdf")], PDF),
        // No type: known by its first bytes.
        "/download" => respond(out, "200 OK", &[], PDF),
        _ => respond(
            out,
            "200 OK",
            &[("content-type", "image/png")],
            &[0x89; 4096],
        ),
    });
    let env = Env::new();
    for path in ["/spec.pdf", "/download"] {
        let r = fetch(
            &env,
            &["--allow-host", "127.0.0.1", "--json", &server.url(path)],
        );
        r.ok();
        let j = r.json();
        assert_eq!(j["details"]["kind"], "pdf", "{j}");
        let text = j["output"].as_str().unwrap();
        let (p1, p2) = (
            text.find("--- page 1 ---").unwrap(),
            text.find("--- page 2 ---").unwrap(),
        );
        let (apples, answer) = (text.find("apples").unwrap(), text.find("42").unwrap());
        assert!(p1 < apples && apples < p2 && p2 < answer, "{text}");
    }
    let r = fetch(
        &env,
        &["--allow-host", "127.0.0.1", &server.url("/logo.png")],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        format!(
            "`{}` is image/png, 4 KiB: fetch shows web pages, PDFs, JSON and text, not this.\n",
            server.url("/logo.png")
        ),
        "{r}"
    );
}
