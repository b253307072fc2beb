//! The HTTP port's connections, bounded: axum serves them through
//! [`Bounded`], a listener whose connections ([`Conn`]) close themselves
//! when their time is up, and of which only so many are open at once.
//!
//! - **The head of a request** must arrive whole within `header` of the
//!   connection's opening, or of the first byte of the head (a client that
//!   sends a header a byte at a time, or nothing at all, is closed).
//! - **Between requests** a connection may sit with nothing sent either
//!   way for `idle`, no longer. A response the client does not read counts
//!   as nothing sent. While a request is handled no clock runs: a rewind
//!   may take minutes, and an event stream writes a keep-alive comment
//!   every 15 s, so only a stream nobody reads goes idle.
//! - **At most `max` are open.** A new connection past that closes the
//!   open one that has waited longest without a request being handled,
//!   preferring those on which no request ever carried the token: a flood
//!   of connections that send nothing, or only part of a head, pushes out
//!   its own kind first, and the token holder still gets in. `max` is also
//!   kept to a quarter of the open-file limit, so that the Unix socket,
//!   the sessions' pipes and the session files always have descriptors
//!   left.
//!
//! hyper learns only that its connection failed; the state here is shared
//! with the requests on it through axum's connect info (see `http.rs`,
//! which marks a request's start and end, and a request with the token).

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The bounds of the HTTP port's connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The time a request's head may take to arrive.
    pub header: Duration,
    /// The time a connection may sit between requests with nothing sent.
    pub idle: Duration,
    /// The connections open at once.
    pub max: usize,
}

impl Limits {
    /// `max` lowered to a quarter of the open-file limit `nofile`, when
    /// there is one (but not below 4 for that).
    pub fn within_open_files(self, nofile: Option<u64>) -> Limits {
        let room = nofile.map_or(usize::MAX, |n| {
            usize::try_from(n / 4).unwrap_or(usize::MAX).max(4)
        });
        Limits {
            max: self.max.min(room),
            ..self
        }
    }
}

/// The soft limit on open files of this process (`ulimit -n`), from
/// /proc/self/limits; `None` when unlimited or unknown.
pub fn open_file_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_open_files(&text)
}

fn parse_open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// What a connection and the requests on it share.
pub struct ConnState {
    /// Requests being handled.
    busy: AtomicUsize,
    /// A request on it carried the token.
    trusted: AtomicBool,
    /// Cancelled to close it (to make room for a new one).
    closed: CancellationToken,
    times: Mutex<Times>,
}

struct Times {
    /// When the head now arriving began (the opening, for the first).
    head_from: Option<Instant>,
    /// When a byte last moved either way, or the last request ended.
    last_io: Instant,
}

impl ConnState {
    fn new() -> ConnState {
        let now = Instant::now();
        ConnState {
            busy: AtomicUsize::new(0),
            trusted: AtomicBool::new(false),
            closed: CancellationToken::new(),
            times: Mutex::new(Times {
                head_from: Some(now),
                last_io: now,
            }),
        }
    }

    fn times(&self) -> MutexGuard<'_, Times> {
        // Each step is one assignment: a panic leaves it consistent.
        self.times.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request is handled from now until the guard is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.times().head_from = None;
        Busy(self.clone())
    }

    /// A request on this connection carried the token.
    pub fn trust(&self) {
        self.trusted.store(true, Ordering::Release);
    }

    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire) > 0
    }

    fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    fn read(&self, n: usize) {
        if n == 0 {
            return;
        }
        let busy = self.is_busy();
        let mut t = self.times();
        let now = Instant::now();
        t.last_io = now;
        if !busy && t.head_from.is_none() {
            t.head_from = Some(now);
        }
    }

    fn wrote(&self, n: usize) {
        if n > 0 {
            self.times().last_io = Instant::now();
        }
    }

    /// When the connection is closed unless something happens first;
    /// `None` while a request is handled.
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        if self.is_busy() {
            return None;
        }
        let t = self.times();
        Some(match t.head_from {
            Some(from) => from + limits.header,
            None => t.last_io + limits.idle,
        })
    }

    /// When it last did anything.
    fn last_io(&self) -> Instant {
        self.times().last_io
    }
}

/// A request being handled on a connection.
pub struct Busy(Arc<ConnState>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The idle clock starts when the response is handed over.
            self.0.times().last_io = Instant::now();
        }
    }
}

/// A connection's state, as axum's connect info: what a request reaches
/// its connection through.
#[derive(Clone)]
pub struct Tracked(pub Arc<ConnState>);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Bounded>> for Tracked {
    fn connect_info(stream: axum::serve::IncomingStream<'_, Bounded>) -> Tracked {
        Tracked(stream.io().state.clone())
    }
}

/// The HTTP listener, bounded.
pub struct Bounded {
    listener: TcpListener,
    limits: Limits,
    slots: Arc<Semaphore>,
    open: Vec<Weak<ConnState>>,
    warned: bool,
}

impl Bounded {
    /// Serves `listener`'s connections within `limits`.
    pub fn new(listener: TcpListener, limits: Limits) -> Bounded {
        Bounded {
            listener,
            limits,
            slots: Arc::new(Semaphore::new(limits.max)),
            open: Vec::new(),
            warned: false,
        }
    }

    /// A slot for a new connection: a free one, or one made by closing the
    /// connection that has waited longest without a request (those that
    /// never carried the token first); `None` when every open connection
    /// has a request being handled.
    async fn slot(&mut self) -> Option<OwnedSemaphorePermit> {
        if let Ok(p) = self.slots.clone().try_acquire_owned() {
            return Some(p);
        }
        if !self.warned {
            self.warned = true;
            crate::cli::warn(
                "ag-serve",
                &format!(
                    "{} HTTP connections are open, the most allowed (--http-connections); each new one closes the one that has waited longest without a request",
                    self.limits.max
                ),
            );
        }
        self.open.retain(|w| w.strong_count() > 0);
        let victim = self
            .open
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|s| !s.is_busy() && !s.closed.is_cancelled())
            .min_by_key(|s| (s.is_trusted(), s.last_io()))?;
        victim.closed.cancel();
        drop(victim);
        // It is gone once its task sees it closed; one that is not being
        // polled (an event stream between events) sees it at its next
        // write, within the keep-alive interval.
        tokio::time::timeout(self.limits.header, self.slots.clone().acquire_owned())
            .await
            .ok()?
            .ok()
    }
}

impl axum::serve::Listener for Bounded {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Conn, SocketAddr) {
        loop {
            let (stream, addr) = match self.listener.accept().await {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors, or a connection gone before it was
                    // taken: wait a little rather than spin.
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                    ) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            };
            // Without a slot the newcomer is closed at once: every open
            // connection is busy with a request.
            let Some(permit) = self.slot().await else {
                continue;
            };
            let state = Arc::new(ConnState::new());
            self.open.retain(|w| w.strong_count() > 0);
            self.open.push(Arc::downgrade(&state));
            return (Conn::new(stream, state, self.limits, permit), addr);
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// One HTTP connection: a TCP stream that fails once its time is up or it
/// is closed to make room.
pub struct Conn {
    stream: TcpStream,
    state: Arc<ConnState>,
    limits: Limits,
    clock: Pin<Box<Sleep>>,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
    _slot: OwnedSemaphorePermit,
}

impl Conn {
    fn new(
        stream: TcpStream,
        state: Arc<ConnState>,
        limits: Limits,
        slot: OwnedSemaphorePermit,
    ) -> Conn {
        Conn {
            stream,
            closed: Box::pin(state.closed.clone().cancelled_owned()),
            clock: Box::pin(tokio::time::sleep(limits.header)),
            state,
            limits,
            _slot: slot,
        }
    }

    /// The error that ends the connection, if its time is up; otherwise
    /// the task is woken when it will be.
    fn expired(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        if self.state.closed.is_cancelled() || self.closed.as_mut().poll(cx).is_ready() {
            return Some(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for a new connection",
            ));
        }
        let deadline = self.state.deadline(&self.limits)?;
        if self.clock.deadline() != deadline {
            self.clock.as_mut().reset(deadline);
        }
        self.clock.as_mut().poll(cx).is_ready().then(|| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                "no request, or not all of its head, within the time allowed",
            )
        })
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut self.stream).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = r {
            self.state.read(buf.filled().len() - before);
        }
        r
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut self.stream).poll_write(cx, data);
        if let Poll::Ready(Ok(n)) = r {
            self.state.wrote(n);
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            self.state.wrote(n);
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_file_limit_is_read_and_bounds_the_connections() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
Max processes             63448                63448                processes \n\
Max open files            128                  524288               files     \n";
        assert_eq!(parse_open_files(limits), Some(128));
        assert_eq!(
            parse_open_files(
                "Max open files            unlimited            unlimited            files"
            ),
            None
        );
        let l = Limits {
            header: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            max: 64,
        };
        assert_eq!(l.within_open_files(Some(128)).max, 32);
        assert_eq!(l.within_open_files(Some(1 << 20)).max, 64);
        assert_eq!(l.within_open_files(None).max, 64);
        assert_eq!(l.within_open_files(Some(8)).max, 4);
        let two = Limits { max: 2, ..l };
        assert_eq!(two.within_open_files(Some(8)).max, 2);
    }

    #[test]
    fn the_clocks_run_only_between_requests() {
        let limits = Limits {
            header: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            max: 4,
        };
        let s = Arc::new(ConnState::new());
        // A new connection: its head is due `header` after it opened,
        // however its bytes come.
        let head_due = s.deadline(&limits).unwrap();
        assert!(head_due <= Instant::now() + limits.header);
        s.read(1);
        s.read(1);
        assert_eq!(s.deadline(&limits), Some(head_due));
        // A request handled, its body read: no clock.
        let busy = s.begin();
        s.read(1000);
        assert_eq!(s.deadline(&limits), None);
        let ended = Instant::now();
        drop(busy);
        // After it, the idle clock, which what is written moves on.
        let idle_due = s.deadline(&limits).unwrap();
        assert!(idle_due >= ended + limits.idle, "{idle_due:?}");
        s.wrote(100);
        assert!(s.deadline(&limits).unwrap() >= idle_due);
        // The first byte of the next head starts its own, shorter clock,
        // which nothing written or read moves on.
        let first = Instant::now();
        s.read(3);
        let due = s.deadline(&limits).unwrap();
        assert!(due >= first + limits.header && due < idle_due, "{due:?}");
        s.wrote(10);
        s.read(10);
        assert_eq!(s.deadline(&limits), Some(due));
    }
}
