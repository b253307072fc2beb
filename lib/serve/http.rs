//! The broker over HTTP (axum): JSON endpoints for the list, a new session
//! and commands, each session's events as Server-Sent Events (the event id
//! is the offset after the event, so `Last-Event-ID` is where to go on),
//! and the web page. Every request passes `guard.rs` first; the handlers
//! call the same broker operations as the socket. The connections are
//! bounded in number and time by `conns.rs`.
//!
//! - `GET /` the page (`/page.js`, `/page.css` its script and style), the
//!   same in every copy of ag, which takes the token from its URL's
//!   fragment and sends it with each request
//! - `GET /api/sessions[?all=1]` `{"sessions":[...]}`
//! - `POST /api/sessions` `{"cwd","args","prompt"}` → `{"session"}`
//! - `GET /api/sessions/ID/events[?from=N]` the event stream
//! - `POST /api/sessions/ID/commands` one of ag-loop's commands
//! - `POST /api/sessions/ID/resume` `{"args"}`, `.../end`, `.../rewind` `{"turn","force"}`
//! - `GET /api/fanout` the result lines of `--fanout FILE`

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::broker::{Broker, Found, ServeError};
use super::conns::{Bounded, Limits, Tracked};
use super::feed::{Feed, Item};
use super::guard::{self, Guard};
use super::paths::{Paths, new_token};
use crate::protocol::{AgentCommand, ServeMessage, SessionState, UserContent};

/// How long an event stream whose client was dropped may take to be written.
const DROP_GRACE: Duration = Duration::from_secs(5);

/// The longest an event stream goes without sending anything.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The largest request body taken.
const MAX_BODY: usize = 16 << 20;

/// What the HTTP side serves.
pub struct Site {
    /// The broker.
    pub broker: Arc<Broker>,
    /// Host names accepted besides the address served and localhost.
    pub allow_hosts: Vec<String>,
    /// The result lines of a fanout run, when given.
    pub fanout: Option<PathBuf>,
    /// The bounds of the connections.
    pub limits: Limits,
}

struct App {
    site: Site,
    guard: Guard,
}

type Shared = Arc<App>;

/// Binds `addr`, makes and saves the token, and serves until `stop`;
/// returns the URL with the token (in its fragment, which a browser never
/// sends: only the page reads it).
pub async fn start(
    addr: SocketAddr,
    site: Site,
    paths: &Paths,
    stop: CancellationToken,
) -> Result<String, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let token = new_token();
    paths.write_token(&token).map_err(|e| e.to_string())?;
    let guard = Guard::new(token.clone(), bound, &site.allow_hosts);
    let limits = site.limits;
    let app: Shared = Arc::new(App { site, guard });
    let router = Router::new()
        .route("/", get(page))
        .route("/page.js", get(script))
        .route("/page.css", get(style))
        .route("/api/sessions", get(list).post(create))
        .route("/api/sessions/{id}/events", get(events))
        .route("/api/sessions/{id}/commands", post(command))
        .route("/api/sessions/{id}/resume", post(resume))
        .route("/api/sessions/{id}/end", post(end))
        .route("/api/sessions/{id}/rewind", post(rewind))
        .route("/api/fanout", get(fanout))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard_layer,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(app);
    let listener = Bounded::new(listener, limits);
    let service = router.into_make_service_with_connect_info::<Tracked>();
    tokio::spawn(async move {
        let served = axum::serve(listener, service)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            crate::cli::warn("ag-serve", &format!("the HTTP server stopped: {e}"));
        }
    });
    Ok(format!("http://{}/#token={token}", guard::url_host(bound)))
}

async fn guard_layer(
    State(app): State<Shared>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    // The connection's clocks stop while the request is handled.
    let conn = request
        .extensions()
        .get::<axum::extract::ConnectInfo<Tracked>>()
        .map(|c| c.0.0.clone());
    let _busy = conn.as_ref().map(|c| c.begin());
    match app.guard.check(request.headers(), request.uri()) {
        Ok(access) => {
            if access == guard::Access::Token
                && let Some(c) = &conn
            {
                c.trust();
            }
            let mut response = next.run(request).await;
            guard::harden(response.headers_mut());
            response
        }
        Err((status, message)) => error(status, &message),
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    let mut r = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"error": message}).to_string(),
    )
        .into_response();
    guard::harden(r.headers_mut());
    r
}

fn json_response(status: StatusCode, value: &Value, app: &App) -> Response {
    let mut body = value.to_string().into_bytes();
    app.site.broker.redactor().json_line(&mut body);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn serve_error(e: &ServeError) -> Response {
    let status = match e {
        ServeError::Store(crate::session::StoreError::NotFound(_)) => StatusCode::NOT_FOUND,
        ServeError::Store(crate::session::StoreError::Ambiguous { .. }) => StatusCode::CONFLICT,
        ServeError::Busy(_) | ServeError::Rewinding { .. } => StatusCode::CONFLICT,
        ServeError::Args(_) | ServeError::Cwd(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, &e.to_string())
}

async fn not_found(uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        &format!("no such page: `{}`; the page is at `/`", uri.path()),
    )
}

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/page.js");
const STYLE: &str = include_str!("page/page.css");

async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

async fn list(State(app): State<Shared>, uri: Uri) -> Response {
    let all = guard::query_value(&uri, "all").is_some_and(|v| v == "1" || v == "true");
    let broker = app.site.broker.clone();
    match tokio::task::spawn_blocking(move || broker.list(all)).await {
        Ok(sessions) => json_response(StatusCode::OK, &json!({ "sessions": sessions }), &app),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("cannot list the sessions: {e}"),
        ),
    }
}

/// A body read as `T` (an empty one is `T`'s default), or the message that
/// says what is wrong with it.
fn body<T: serde::de::DeserializeOwned + Default>(bytes: &Bytes, what: &str) -> Result<T, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes).map_err(|e| format!("the body is not {what}: {e}"))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    prompt: Option<UserContent>,
}

async fn create(State(app): State<Shared>, bytes: Bytes) -> Response {
    let req: Create = match body(&bytes, r#"{"cwd":DIR,"args":[FLAGS],"prompt":TEXT}"#) {
        Ok(r) => r,
        Err(m) => return error(StatusCode::BAD_REQUEST, &m),
    };
    match app.site.broker.start(req.cwd.as_deref(), &req.args) {
        Ok(live) => {
            if let Some(content) = req.prompt
                && let Ok(mut line) = serde_json::to_vec(&AgentCommand::Prompt {
                    content,
                    attachments: Vec::new(),
                    data: Vec::new(),
                })
            {
                line.push(b'\n');
                live.send(line);
            }
            json_response(StatusCode::CREATED, &json!({"session": live.id}), &app)
        }
        Err(e) => serve_error(&e),
    }
}

/// The client's name as other clients see it on its approvals: the
/// `x-ag-client` header, or (an EventSource sets no headers) `?client=`.
fn client_name(headers: &HeaderMap, uri: &Uri) -> String {
    let given = headers
        .get("x-ag-client")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| guard::query_value(uri, "client"))
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.@ ".contains(*c))
        .take(40)
        .collect::<String>();
    if given.trim().is_empty() {
        "web".to_string()
    } else {
        given.trim().to_string()
    }
}

async fn command(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    uri: Uri,
    bytes: Bytes,
) -> Response {
    let command: AgentCommand = match serde_json::from_slice(&bytes) {
        Ok(c) => c,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!(
                    "the body is not one of ag-loop's commands ({e}); send {{\"type\":\"prompt\",\"content\":TEXT}}, steer, interrupt, approval or compact"
                ),
            );
        }
    };
    let live = match app.site.broker.find(&id) {
        Ok(Found::Live(l)) if !l.has_ended() => l,
        Ok(_) => {
            return error(
                StatusCode::CONFLICT,
                &format!("session {id} is not running; POST /api/sessions/{id}/resume first"),
            );
        }
        Err(e) => return serve_error(&e),
    };
    let mut line = match serde_json::to_vec(&command) {
        Ok(l) => l,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    line.push(b'\n');
    match super::socket::deliver(&live, &client_name(&headers, &uri), Some(&command), line) {
        Ok(()) => json_response(StatusCode::ACCEPTED, &json!({}), &app),
        Err(message) => error(StatusCode::CONFLICT, &message),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Resume {
    #[serde(default)]
    args: Vec<String>,
}

async fn resume(State(app): State<Shared>, Path(id): Path<String>, bytes: Bytes) -> Response {
    let req: Resume = match body(&bytes, r#"{"args":[FLAGS]}"#) {
        Ok(r) => r,
        Err(m) => return error(StatusCode::BAD_REQUEST, &m),
    };
    let file = match app.site.broker.find(&id) {
        Ok(Found::Live(l)) if !l.has_ended() => {
            return json_response(StatusCode::OK, &json!({"session": l.id}), &app);
        }
        Ok(Found::Live(l)) => crate::session::SessionFile {
            id: l.id.clone(),
            path: l.path.clone(),
            stamp: String::new(),
        },
        Ok(Found::Ended(f)) => f,
        Err(e) => return serve_error(&e),
    };
    match app.site.broker.resume(file, &req.args) {
        Ok(live) => json_response(StatusCode::OK, &json!({"session": live.id}), &app),
        Err(e) => serve_error(&e),
    }
}

async fn end(State(app): State<Shared>, Path(id): Path<String>) -> Response {
    match app.site.broker.find(&id) {
        Ok(Found::Live(l)) if !l.has_ended() => {
            app.site.broker.end(&l);
            json_response(StatusCode::ACCEPTED, &json!({}), &app)
        }
        Ok(_) => error(
            StatusCode::CONFLICT,
            &format!("session {id} is not running"),
        ),
        Err(e) => serve_error(&e),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rewind {
    turn: u64,
    #[serde(default)]
    force: bool,
}

async fn rewind(State(app): State<Shared>, Path(id): Path<String>, bytes: Bytes) -> Response {
    let req: Rewind = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the body is not {{\"turn\":N,\"force\":BOOL}}: {e}"),
            );
        }
    };
    match app.site.broker.rewind(&id, req.turn, req.force).await {
        Ok((old, live, notes)) => json_response(
            StatusCode::OK,
            &json!({"rewound": old, "session": live.id, "notes": notes}),
            &app,
        ),
        Err(e) => serve_error(&e),
    }
}

async fn fanout(State(app): State<Shared>) -> Response {
    let Some(path) = &app.site.fanout else {
        return error(
            StatusCode::NOT_FOUND,
            "no fanout results: start ag-serve with --fanout RESULTS",
        );
    };
    let path = path.clone();
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(&path)).await;
    let text = match read {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            return error(
                StatusCode::NOT_FOUND,
                &format!("cannot read the fanout results: {e}"),
            );
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    // The last result of each task counts, as `ag-fanout --summary` has it.
    let mut results: Vec<Value> = Vec::new();
    let mut summary = Value::Null;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("result") => {
                if let Some(i) = results.iter().position(|r| r.get("id") == v.get("id")) {
                    results.remove(i);
                }
                results.push(without_diff(v));
            }
            Some("summary") => summary = v,
            _ => {}
        }
    }
    json_response(
        StatusCode::OK,
        &json!({"results": results, "summary": summary}),
        &app,
    )
}

/// A result line with its diff's size in place of the diff.
fn without_diff(mut v: Value) -> Value {
    if let Some(obj) = v.as_object_mut()
        && let Some(diff) = obj.remove("diff")
    {
        let size = diff.as_str().map_or(0, str::len);
        obj.insert("diff_bytes".into(), json!(size));
    }
    v
}

async fn events(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    // An EventSource that reconnects says where it was: the id of the last
    // event it got, which is the offset after that event.
    let from = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .or_else(|| guard::query_value(&uri, "from").and_then(|v| v.parse().ok()))
        .unwrap_or(0);
    let (feed, attached, live, dropped) = match app.site.broker.find(&id) {
        Ok(Found::Live(l)) => {
            let att = l.hub.attach(&client_name(&headers, &uri));
            let attached = ServeMessage::Attached {
                session: l.id.clone(),
                path: l.path.display().to_string(),
                from,
                live_from: att.live_from,
                state: att.state,
                client: att.name.clone(),
            };
            let feed = Feed::new(
                l.path.clone(),
                from,
                att.live_from,
                Some(att.queue),
                app.site.broker.redactor_arc(),
            );
            (
                feed,
                attached,
                Some((l, att.client)),
                att.budget.dropped().clone(),
            )
        }
        Ok(Found::Ended(f)) => {
            let count = match super::tail::Tail::open(&f.path) {
                Ok(t) => t.count(),
                Err(e) => return error(StatusCode::NOT_FOUND, &e.to_string()),
            };
            let attached = ServeMessage::Attached {
                session: f.id.clone(),
                path: f.path.display().to_string(),
                from,
                live_from: count,
                state: SessionState::Ended,
                client: client_name(&headers, &uri),
            };
            let feed = Feed::new(
                f.path.clone(),
                from,
                count,
                None,
                app.site.broker.redactor_arc(),
            );
            (feed, attached, None, CancellationToken::new())
        }
        Err(e) => return serve_error(&e),
    };
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    let broker = app.site.broker.clone();
    tokio::spawn(stream_feed(feed, attached, live, dropped, tx, broker));
    // A comment at least twice within the idle bound, so that only a
    // stream nobody reads runs out of it (`conns.rs`).
    let every = (app.site.limits.idle / 2).min(KEEP_ALIVE);
    let mut r = Sse::new(Stream(rx))
        .keep_alive(KeepAlive::new().interval(every))
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn serve_event(m: &ServeMessage, broker: &Broker) -> Event {
    let mut line = serde_json::to_vec(m).unwrap_or_default();
    broker.redactor().json_line(&mut line);
    Event::default()
        .event("serve")
        .data(String::from_utf8_lossy(&line))
}

/// Writes a feed into an event stream until it ends, the client goes, or
/// the client is dropped for falling behind (then the stream ends, and an
/// EventSource comes back with the `Last-Event-ID` where it stopped).
async fn stream_feed(
    mut feed: Feed,
    attached: ServeMessage,
    live: Option<(Arc<super::live::Live>, u64)>,
    dropped: CancellationToken,
    tx: mpsc::Sender<Result<Event, Infallible>>,
    broker: Arc<Broker>,
) {
    let ended_session = match &attached {
        ServeMessage::Attached { session, .. } => session.clone(),
        _ => String::new(),
    };
    let mut next_offset = 0;
    let mut item = Some(Item::Message(Arc::new(attached)));
    loop {
        let event = match item.take() {
            Some(Item::Event(n, line)) => {
                next_offset = n + 1;
                let text = String::from_utf8_lossy(&line);
                Event::default()
                    .id((n + 1).to_string())
                    .data(text.trim_end())
            }
            Some(Item::Message(m)) => serve_event(&m, &broker),
            Some(Item::Dropped(n)) => {
                let m = ServeMessage::Dropped {
                    session: ended_session.clone(),
                    offset: n,
                    reason: "this client fell too far behind the session; reconnect with Last-Event-ID to go on".into(),
                };
                let _ = send(&tx, serve_event(&m, &broker), &dropped).await;
                break;
            }
            Some(Item::End) | None => {
                if live.is_none() {
                    let m = ServeMessage::SessionEnded {
                        session: ended_session.clone(),
                        offset: next_offset,
                        status: "not running".into(),
                        stderr: None,
                        resumable: true,
                    };
                    let _ = send(&tx, serve_event(&m, &broker), &dropped).await;
                }
                break;
            }
        };
        if !send(&tx, event, &dropped).await {
            break;
        }
        item = tokio::select! {
            i = feed.next() => i,
            _ = tx.closed() => break,
        };
    }
    if let Some((l, client)) = live {
        l.hub.detach(client);
    }
}

/// Sends one event; false when the client is gone, or was dropped and
/// takes nothing for [`DROP_GRACE`].
async fn send(
    tx: &mpsc::Sender<Result<Event, Infallible>>,
    event: Event,
    dropped: &CancellationToken,
) -> bool {
    tokio::select! {
        r = tx.send(Ok(event)) => r.is_ok(),
        _ = async {
            dropped.cancelled().await;
            tokio::time::sleep(DROP_GRACE).await;
        } => false,
    }
}

/// A channel's receiving end as the stream an SSE response is made of.
struct Stream(mpsc::Receiver<Result<Event, Infallible>>);

impl futures_core::Stream for Stream {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
