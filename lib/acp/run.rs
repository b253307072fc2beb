//! ag-acp's main: the runtime, the SDK's agent connection over stdio with
//! a handler per request, and an orderly end (every session's ag-loop
//! stopped) when the editor closes stdin or a signal comes.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, ForkSessionRequest, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{Agent, Lines, on_receive_notification, on_receive_request};

use super::args::Args;
use super::server::{Config, Server};
use super::transport::{self, Outbox};
use crate::cli::{ExitStatus, error_line};

const BIN: &str = "ag-acp";

/// Runs `ag-acp`.
pub fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    if argv.next().as_deref() == Some(super::editor_fs::SUBCOMMAND) {
        return super::editor_fs::shim_main(argv);
    }
    let (args, runtime) = match crate::cli::start::<Args>(BIN) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let code = runtime.block_on(run(args));
    runtime.shutdown_timeout(Duration::from_secs(1));
    code.code()
}

async fn run(args: Args) -> ExitStatus {
    let outbox = Outbox::default();
    let config = Config {
        loop_cmd: args.loop_cmd,
        loop_args: args.loop_args,
        model: args.model,
        mode: args.mode,
        permission_timeout: (args.permission_timeout > 0)
            .then(|| Duration::from_secs(args.permission_timeout)),
        editor_fs: args.editor_fs,
        editor_terminal: args.editor_terminal,
    };
    let server = Arc::new(Server::new(config, outbox.clone()));
    let (outgoing, incoming) = transport::stdio(outbox);
    let transport = Lines::new(outgoing, incoming);
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
    );
    let agent = Agent
        .v1()
        .name(BIN)
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| s1.initialize(req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx| s2.new_session(req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx| s3.load_session(req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest, responder, cx| {
                s4.resume_session(req, responder, cx)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest, responder, _cx| s5.list_sessions(req, responder),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CloseSessionRequest, responder, _cx| {
                s6.close_session(req, responder).await
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, _cx| s7.prompt(req, responder),
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| s8.cancel(n),
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, cx| s9.set_mode(req, responder, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ForkSessionRequest, responder, cx| {
                s10.fork_session(req, responder, cx).await
            },
            on_receive_request!(),
        );

    let mut term = crate::cli::Signal::new(tokio::signal::unix::SignalKind::terminate());
    let mut hup = crate::cli::Signal::new(tokio::signal::unix::SignalKind::hangup());
    let served = tokio::select! {
        r = agent.connect_to(transport) => Some(r),
        _ = term.recv() => None,
        _ = hup.recv() => None,
    };
    server.close_all().await;
    match served {
        Some(Err(e)) if !agent_client_protocol::is_incoming_transport_closed(&e) => {
            error_line(BIN, &format!("the connection failed: {e}"), None);
            ExitStatus::Input
        }
        _ => ExitStatus::Success,
    }
}
