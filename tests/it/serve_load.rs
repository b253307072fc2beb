//! ag-serve under load: 50 live sessions with 4 clients each on one
//! broker, every client getting every event of its session exactly once,
//! in order, and the broker's memory staying bounded over two rounds.

use serde_json::{Value, json};
use std::io::{BufRead, Write};

use crate::model_server::{ModelServer, Turn};
use crate::serve::{Client, Serve, memory, model_args};
use crate::util::Env;

const SESSIONS: usize = 50;
const CLIENTS: usize = 4;

/// The raw event lines of a session file.
fn file_lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// Reads a client's lines until `agent_end` count reaches `ends`; returns
/// the raw event lines (those with a timestamp), in order.
fn read_events(c: &mut Client, ends: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut seen_ends = 0;
    let mut line = String::new();
    while seen_ends < ends {
        line.clear();
        let n = c.reader.read_line(&mut line).unwrap();
        assert!(n > 0, "the connection ended after {} events", lines.len());
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("timestamp").is_none() {
            continue;
        }
        if v["type"] == "agent_end" {
            seen_ends += 1;
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

#[test]
fn fifty_sessions_with_four_clients_each_lose_and_double_nothing() {
    let env = Env::new();
    // Two rounds of answers, each long enough for a few hundred events.
    let turns = (0..SESSIONS * 2)
        .map(|i| Turn::Owned((0..150).map(|w| format!("s{i}w{w} ")).collect::<String>()))
        .collect();
    let server = ModelServer::start(turns);
    let serve = Serve::start(&env, &[]);
    let mut args = model_args(&server);
    args.extend(["--tools", "read"].map(String::from));

    // Every session started, and three more clients on each.
    let mut sessions: Vec<(String, String, Vec<Client>)> = Vec::new();
    for n in 0..SESSIONS {
        let mut first = serve.connect();
        first.send(&json!({"type": "start", "args": args, "client": format!("c{n}-0")}));
        let attached = first.until("attached");
        let id = attached["session"].as_str().unwrap().to_string();
        let path = attached["path"].as_str().unwrap().to_string();
        let mut clients = vec![first];
        for k in 1..CLIENTS {
            let mut c = serve.connect();
            c.send(&json!({"type": "attach", "session": id, "client": format!("c{n}-{k}")}));
            c.until("attached");
            clients.push(c);
        }
        sessions.push((id, path, clients));
    }
    let pid = serve.child.id();
    let mut after: Vec<usize> = Vec::new();
    let mut resident = Vec::new();
    for round in 1..=2 {
        // All prompts at once; every client reads on its own thread.
        for (_, _, clients) in &mut sessions {
            let line =
                json!({"type": "prompt", "content": format!("round {round}")}).to_string() + "\n";
            clients[0].writer.write_all(line.as_bytes()).unwrap();
        }
        let got: Vec<Vec<Vec<String>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = sessions
                .iter_mut()
                .map(|(_, _, clients)| {
                    clients
                        .iter_mut()
                        .map(|c| scope.spawn(move || read_events(c, 1)))
                        .collect::<Vec<_>>()
                })
                .collect();
            handles
                .into_iter()
                .map(|hs| hs.into_iter().map(|h| h.join().unwrap()).collect())
                .collect()
        });
        for (n, ((id, path, _), per_client)) in sessions.iter().zip(&got).enumerate() {
            let file = file_lines(path);
            // Round 1 read the file from its start; round 2 goes on after it.
            let start = if round == 1 { 0 } else { after[n] };
            for (k, events) in per_client.iter().enumerate() {
                assert_eq!(
                    events.len(),
                    file.len() - start,
                    "session {id}, client {k}, round {round}: events lost or doubled"
                );
                assert!(
                    events[..] == file[start..],
                    "session {id}, client {k}, round {round}: the events differ from the file"
                );
            }
        }
        let (rss, peak) = memory(pid);
        eprintln!("round {round}: ag-serve resident {rss} KiB, peak {peak} KiB");
        // 200 clients and 50 sessions: the queues stay small when the
        // clients keep up, and nothing piles up between rounds.
        assert!(peak < 96 * 1024, "ag-serve peaked at {peak} KiB");
        resident.push(rss);
        if round == 1 {
            after = sessions
                .iter()
                .map(|(_, p, _)| file_lines(p).len())
                .collect();
        }
    }
    let mut c = serve.connect();
    c.send(&json!({"type": "list"}));
    let list = c.until("sessions");
    let live: Vec<&Value> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "idle")
        .collect();
    assert_eq!(live.len(), SESSIONS, "{list}");
    assert!(live.iter().all(|s| s["clients"] == CLIENTS as u64));
    // The second round left no more behind than the first.
    assert!(
        resident[1] < resident[0] + 32 * 1024,
        "ag-serve grew from {} to {} KiB over a round",
        resident[0],
        resident[1]
    );
}
