//! ag-acp's command line (the man page comes from here).

use clap::Parser;

use super::modes::Mode;

/// ag as an Agent Client Protocol (ACP) agent, for editors.
///
/// An editor (Zed, a JetBrains IDE, Neovim with CodeCompanion or
/// avante.nvim, Emacs with agent-shell, or any ACP client) starts ag-acp
/// and speaks JSON-RPC to it over stdin and stdout, one message a line.
/// For each session ag-acp runs `ag-loop --json --approve-on-stdin` in the
/// session's directory and translates: prompts go to ag-loop, its events
/// come back as `session/update` notifications (text, thinking, tool calls
/// with their kind, locations and diffs, the todo list as a plan, usage),
/// and the calls ag-gate asks a person about become
/// `session/request_permission`. No agent logic lives here: the model,
/// tools, sandbox, gates and sessions are ag-loop's, and its flags after
/// `--` apply to every session. Sessions are ag's own, so `session/list`,
/// `session/load` and `session/resume` see every ag session, and
/// `ag-session` sees the editor's.
///
/// Modes (`session/set_mode`): ask (ag-gate's policy asks about risky
/// calls), ask-always (every call that can change something is asked
/// about), auto (nobody is asked; the sandbox keeps writes in the
/// workspace), read-only (read-only tools, confined read-only). Slash
/// commands: `/compact`, `/rewind [N]`, `/cost`, and `/NAME [task]` for
/// each skill ag-loop finds in the session's directory. The model's
/// questions are elicitation forms where the editor has them, else a
/// permission request offering the choices (a free-text question is only
/// shown, and the model decides after 60 s). `session/fork` (unstable in
/// ACP) forks through `ag-session fork`; an HTTP MCP server's headers
/// and a stdio MCP server's variables reach ag-loop in its environment, not
/// its command line.
///
/// stdout carries only protocol messages; diagnostics go to stderr.
#[derive(Debug, Parser)]
#[command(
    name = "ag-acp",
    version,
    after_help = "Registering it (ag-acp on PATH; the flags after `--` go to ag-loop):\n\n\
Zed, ~/.config/zed/settings.json:\n\
  \"agent_servers\": { \"ag\": { \"type\": \"custom\", \"command\": \"ag-acp\", \"args\": [] } }\n\n\
JetBrains IDEs, ~/.jetbrains/acp.json (an absolute path):\n\
  { \"agent_servers\": { \"ag\": { \"command\": \"/usr/local/bin/ag-acp\", \"args\": [] } } }\n\n\
Neovim, avante.nvim:\n\
  acp_providers = { ag = { command = \"ag-acp\", args = {} } }, provider = \"ag\"\n\n\
Neovim, CodeCompanion (an ACP adapter with ag-acp as its command):\n\
  adapters = { acp = { ag = function() return require(\"codecompanion.adapters\").extend(\"gemini_cli\",\n\
    { name = \"ag\", formatted_name = \"ag\", commands = { default = { \"ag-acp\" } } }) end } }\n\n\
Emacs, agent-shell:\n\
  (agent-shell--dwim :new-shell t :config (agent-shell-make-agent-config :identifier 'ag\n\
    :mode-line-name \"ag\" :buffer-name \"ag\" :shell-prompt \"ag> \" :shell-prompt-regexp \"ag> \"\n\
    :client-maker (lambda (buffer) (agent-shell--make-acp-client :command \"ag-acp\"\n\
      :command-params '() :context-buffer buffer))))\n\n\
The editor's files, with --editor-fs: read, write and edit go through the editor's fs/read_text_file \
and fs/write_text_file; with --editor-terminal, bash runs in the editor's terminal, confined by \
ag-sandbox (`ag-acp editor-tool`, a tool ag-loop runs, reaches ag-acp over a Unix socket in a \
private directory). Not used yet: SSE MCP servers, audio prompts, URL elicitation.\n\n\
Exit status: 0 when the editor closed the connection (or on SIGTERM or SIGHUP), 2 usage or set-up \
error. Every session's ag-loop, and what its tools started, is stopped when its session is closed \
and when ag-acp ends."
)]
pub struct Args {
    /// The model as provider/model, passed to ag-loop as -m.
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The mode new sessions start in.
    #[arg(long, value_enum, value_name = "MODE", default_value = "ask")]
    pub mode: Mode,
    /// Seconds the editor has to answer a permission request before the
    /// call is refused, as nobody approving refuses it in an unattended
    /// run (0 waits for ever); also how long a question of the model's
    /// waits for an editor's form.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub permission_timeout: u64,
    /// Run this shell command line instead of `ag-loop --json` (with sh -c;
    /// the session, mode and model flags and the arguments after `--` are
    /// appended). It must speak ag-loop's protocol.
    #[arg(long, value_name = "CMD")]
    pub loop_cmd: Option<String>,
    /// Where the editor offers to read and write files (`fs` in its
    /// capabilities), the model's `read`, `write` and `edit` go through it:
    /// the editor's buffers, unsaved changes included, are read and
    /// written, and the editor decides when they are saved. Paths outside
    /// the session's directory are refused; directories, images and binary
    /// files are read from disk. The other tools (patch, delete, the
    /// searches) still work on disk, in ag's sandbox. Not with `--tools`
    /// after `--`.
    #[arg(long)]
    pub editor_fs: bool,
    /// Where the editor offers terminals (`terminal` in its capabilities),
    /// the model's bash commands run in the editor's terminal, which shows
    /// their output as it comes: still confined, as the editor runs
    /// `ag-sandbox` with the policy ag-loop applies, then `bash -c CMD`;
    /// still behind the gates and approvals. The time limit kills the
    /// terminal, as does a cancel. The model gets the end of the output
    /// (the editor keeps the last `max_output` bytes), not the start and the
    /// end as ag-bash keeps. Background jobs and `stdin` run as ag-bash runs
    /// them. An editor without terminals gets ag's own bash, with a notice
    /// on stderr. Not with `--tools` after `--`.
    #[arg(long)]
    pub editor_terminal: bool,
    /// More ag-loop flags, after `--` (`ag-acp -- --max-cost 1 --allow-net`).
    #[arg(last = true, value_name = "AG_LOOP_ARGS")]
    pub loop_args: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn flags_after_the_separator_go_to_ag_loop() {
        let a = Args::try_parse_from(["ag-acp", "--mode", "read-only", "--", "--max-cost", "1"])
            .unwrap();
        assert_eq!(a.mode, Mode::ReadOnly);
        assert_eq!(a.loop_args, ["--max-cost", "1"]);
    }
}
