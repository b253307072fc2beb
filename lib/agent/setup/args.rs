//! ag-loop's command line as clap reads it: the flags and their help text
//! (the man page comes from here). What they mean once the config file, the
//! identity and the environment are weighed in is [`super::settings`]'s.

use std::path::PathBuf;

use clap::Parser;

use crate::llm::cli::ReasoningArg;

/// Levels of subagents below a run (`--max-depth`).
pub const DEFAULT_MAX_DEPTH: u32 = 2;

/// Subagents running at a time in a run's whole tree (`--max-agents`).
pub const DEFAULT_MAX_AGENTS: u32 = 4;

/// The agent loop: prompts in, events out, tools run as subprocesses.
///
/// Each prompt runs turns of a streamed model call and the tool calls it asks
/// for, until the model answers without tools. Prompts come from the
/// arguments, or from stdin one per line: a plain text line is a prompt, or a
/// JSON command: {"type":"prompt","content":...} (or seed 002's
/// {"type":"message","content":...}; content is a string or text and image
/// blocks; a prompt may carry "attachments": [FILE, ...], as --attach does),
/// {"type":"steer","content":...} (delivered after the running tool calls,
/// before the next model call; one sent during the final answer gets one
/// more turn, one sent after the run is the next prompt: a steer is never
/// dropped), {"type":"interrupt"} (stops the prompt it follows, even one not
/// begun yet), {"type":"approval","tool_call_id":...,"approved":true,"always":false}
/// (the answer to an approval_request), {"type":"answer","tool_call_id":...,
/// "answer":"..."} (the answer to a question), {"type":"compact"} (shorten
/// the conversation now), {"type":"set_model","model":"provider/model"} and
/// {"type":"set_reasoning","level":"off|low|medium|high"} (from the next
/// prompt on; a settings event records the switch in the session); a line
/// that is not valid UTF-8 or not a command, and an empty prompt ("", [] or
/// only whitespace), is skipped with an error event, which shows the command
/// it most likely meant. A prompt that starts with @NAME is answered by the
/// agent identity NAME (see --agent), for that prompt.
/// Events go to stdout as JSONL (readably on a terminal or with --pretty) and
/// to the session file under $AG_HOME/sessions (AG_HOME defaults to ~/.ag).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "ag-loop",
    version,
    after_help = "Exit status: 0 the agent finished every prompt (or stopped repeating a call that had succeeded, \
having changed files: outcome repeated_call), 1 a model error or a limit stopped it \
(or the final answer never matched --output-schema: outcome invalid_output; or the --until check or a \
--stop hook did not pass: outcome check_failed), 2 usage or set-up error (a \
broken --output-schema among them), 130 interrupted.\n\nSIGINT or {\"type\":\"interrupt\"} stops the model and the running \
tools; a second SIGINT quits.\n\nShould ag-loop be killed outright (SIGKILL, the OOM killer, a CI job's time \
limit), a watchdog process it started with its first child (ag-watchdog in ps) ends everything it started (tool \
calls, gates, after-hooks, --llm-cmd, MCP servers, and their children): SIGTERM, then SIGKILL 2 s later. It finds \
them by the variable AG_WATCHDOG, which they inherit.\n\nEach tool call's child gets AG_PROGRESS=1: a tool may then write progress lines to its stderr, \
{\"type\":\"progress\",\"output\":\"...\"} (schemas/tool-progress.json), which come out as tool_execution_update events \
(ag-bash: the lines of a long command as they come, at most about four times a second). Each tool call's child gets AG_OUTPUT_BUDGET=60000, the \
characters of a result that enter the conversation: ag-read, ag-bash and ag-grep fit their default output in it, whole \
lines, and say how to get the rest (the next offset, the file with the full output, the next page with skip). Longer \
results (from tools that ignore it) are cut to 60,000 characters, head and tail kept. No tool call, gate, after-hook \
or MCP server inherits a provider key variable (see --pass-env)."
)]
pub struct Args {
    /// Prompts to run in order (default: read prompts from stdin).
    pub prompts: Vec<String>,
    /// The model as provider/model (default: a resumed session's own, the
    /// identity's, $AG_MODEL, the config file's, else anthropic/claude-sonnet-4-5).
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The API key (default: the provider's usual environment variable).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// The provider's base URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Reasoning effort for models that think (default: a resumed session's
    /// own, else the identity's).
    #[arg(long, value_enum)]
    pub reasoning: Option<ReasoningArg>,
    /// Give up on a model response that sends nothing for SECONDS, and retry it once (default:
    /// the provider's `idle_timeout` in models.json, else the config file's, else 300; 0 waits
    /// forever). A prompt waits on a silent server twice SECONDS at most: after two silent
    /// attempts in a row it ends with a model error saying how long the server was silent.
    #[arg(long, value_name = "SECONDS", value_parser = crate::llm::cli::parse_seconds)]
    pub idle_timeout: Option<std::time::Duration>,
    /// Output token limit per model call (default: the model's `max_output` from the model
    /// table or models.json).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Sampling temperature of every model call, 0 or more (default: the identity's
    /// `temperature`, else the config file's, else none sent, so the provider's own applies).
    #[arg(
        long,
        value_name = "T",
        allow_negative_numbers = true,
        value_parser = crate::llm::cli::parse_temperature
    )]
    pub temperature: Option<f64>,
    /// Model calls per prompt before the agent stops (default 100).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Stop a prompt's run once N tool calls in a row have failed, of any kind
    /// (default 8; 0 for no limit). The model is warned from half of N on.
    /// Apart from that, a call that fails the same way (same tool, arguments
    /// and error) is pointed out from its second failure and stops the run at
    /// its fifth, however many turns and successful calls lie in between. The
    /// run stops after the turn's results, with the outcome repeated_failure.
    /// A call that succeeds with the same output for the fifth time stops it
    /// too, with the outcome repeated_call and its work kept, and so does a
    /// file change made a fifth time after the first succeeded; a command
    /// that exits non-zero with the same output (not empty) for the fifth
    /// time stops it as repeated_failure. An answer of two or more calls
    /// made a third time in a row, when nothing moved in between, stops it
    /// as well (repeated_failure when one of them failed).
    #[arg(long, value_name = "N")]
    pub max_failed_calls: Option<u32>,
    /// Read defaults from FILE instead of $AG_HOME/config.toml (model, tools,
    /// mcp, gate, after, tool, max_turns, max_failed_calls, pass_env, idle_timeout, output_schema,
    /// output_retries, checkpoints, checkpoint_max_file_size, sandbox, sandbox_mode, allow_net,
    /// sandbox_write, mcp_unconfined, workspace; flags win, lists are added to).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Stop a prompt once it has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// The working directory of the agent and its tools.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The tools to offer: a set or tool names, comma-separated (default: a
    /// resumed session's own, the identity's, the config file's, else full).
    /// Sets: full (minimal and the CLI agents whose command is on PATH:
    /// claude_code_cli, gemini_cli, codex_cli; their calls get the network,
    /// their provider's key and their own state directories), minimal
    /// (read, write, edit, patch, delete, bash, grep, find, ls, todo,
    /// git_status, git_diff, git_log, git_commit, notify, ask), basic (read,
    /// write, edit, bash: seed 002's four), small (read, write, edit, bash,
    /// grep, find, ls: a shorter prompt), readonly (read, grep, find, ls),
    /// chat (notify, ask). The
    /// model sees one tool per job: in a set, bash is
    /// the command tool alone; a binary's name in the list offers all of its
    /// tools (bash: bash, bash_background, job_output, job_stop, job_list;
    /// git: git_status, git_diff, git_log, git_commit), so the background-job
    /// tools come with `--tools full,bash`. `ask`, ag-loop's own tool for
    /// asking the person, is offered only when a person, --ask-cmd or
    /// --ask-default can answer, by the default and a named set alike; a
    /// list that names `ask` itself offers it anyway.
    /// For a model whose context window is 32,768 tokens or less, the
    /// default leaves out delete, and its patches delete no file (bash still
    /// removes files).
    /// Other agents' names for ag's tools are taken: read_file, write_file,
    /// edit_file, delete_file, list_dir, grep_search, glob, notify_user.
    #[arg(
        long,
        visible_alias = "toolset",
        value_delimiter = ',',
        value_name = "SET|NAMES"
    )]
    pub tools: Option<Vec<String>>,
    /// Add any executable that answers --schema and the tool call protocol
    /// (repeatable). CMD is a shell command line, quoted as in a shell
    /// (`my-tool --flag "a b"`), run by `sh -c` in the agent's directory.
    #[arg(long = "tool", value_name = "CMD")]
    pub extra_tools: Vec<String>,
    /// Whether a prompt's first model call must be a tool call: required,
    /// or auto (text or tools, as the model chooses). Without the flag,
    /// required for a model whose context window is 32,768 tokens or
    /// less (a small local model, whose first answer is otherwise often a
    /// claim of work it never did), auto for any other. The calls after
    /// the first are always free, so a question still gets its answer.
    /// A text answer where a call was required (a server that does not
    /// enforce it) is withdrawn and asked again once, then sent back once.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub first_call: Option<FirstCall>,
    /// Whether each prompt carries what a weak model needs to see: the
    /// project's files (all of at most 50, hidden ones included, else the
    /// top-level entries), the changes not yet committed (`git status
    /// --short`), and the files its words name (`fix convert.py`: the
    /// working directory's convert.py, as it is now, up to 12,000
    /// characters a file, 16,000 for all, 4 files). The first prompt of a
    /// conversation carries every file (hidden ones aside) of a project of
    /// at most 10 whose text fits in those 16,000 characters.
    /// Always, never, or auto: for a model whose context window is 32,768
    /// tokens or less (a small local model, which otherwise edits files it
    /// has never read). A named file that cannot be shown (binary, outside
    /// the working directory, kept from the tools by the sandbox or a gate)
    /// is left for the model to read.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub show_context: ShowContext,
    /// How much of each tool's parameters the model is shown: all, or
    /// needed: the required ones, the optional text and lists (a path, a
    /// glob) and the options a tool's description names; optional
    /// numbers, switches and fixed choices (grep's skip, read's offset,
    /// patch's dry_run) are left out, and the tool's defaults apply. A call
    /// that sends one anyway is taken: it is checked against the tool's
    /// whole schema. Default: all.
    #[arg(long, value_enum, value_name = "WHICH")]
    pub tool_params: Option<ToolParams>,
    /// Near the context window, summarise the older turns with a model call
    /// (auto), or just drop them and leave a marker (never).
    #[arg(long, value_enum, default_value = "auto")]
    pub compact: CompactMode,
    /// A gate: a program that sees each tool call first (one JSON object on
    /// stdin) and allows, denies, asks a person or rewrites it (repeatable, in
    /// order; default: ag-gate's policy, applied in-process with the rules of
    /// $AG_HOME/gate.toml, the same decisions as running `ag-gate`).
    #[arg(long = "gate", value_name = "CMD")]
    pub gates: Vec<String>,
    /// Run tool calls without any gate, not even ag-gate.
    #[arg(long, conflicts_with = "gates")]
    pub no_gate: bool,
    /// A client on stdin answers approvals (as ag-tui does): the gates ask
    /// as they would on a terminal (ag-gate's approval mode `dangerous`),
    /// and each `approval_request` waits for an `approval` line, or a typed
    /// y, n or a. Without it, and without a terminal, nobody is asked:
    /// ag-gate's approval mode is `never` (what no rule denies runs; a call
    /// the sandbox blocked stays confined).
    #[arg(long, conflicts_with = "prompts")]
    pub approve_on_stdin: bool,
    /// A program that sees each tool result and may annotate it (repeatable).
    #[arg(long = "after", value_name = "CMD")]
    pub after: Vec<String>,
    /// Seconds a gate or after-hook may take before it counts as a denial.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub gate_timeout: f64,
    /// Offer the tools of an MCP server: `'CMD ARGS'` started over stdio, or a
    /// streamable-HTTP URL (repeatable). Clashing names become `server__tool`.
    /// An HTTP server's headers (a key, a token) come from $AG_MCP_HEADERS,
    /// a JSON object by URL: `{"https://host/mcp": {"Authorization": "Bearer
    /// ..."}}`, kept off the command line, from every child and out of the
    /// events. Likewise a stdio server's own variables come from
    /// $AG_MCP_ENV, a JSON object by the command line as given here:
    /// `{"my-server --flag": {"API_KEY": "..."}}`, set on that server alone.
    #[arg(long = "mcp", value_name = "CMD|URL")]
    pub mcp: Vec<String>,
    /// Run a message's tool calls one after another instead of in parallel.
    /// Without it, calls that only look (read, grep, find, ls, git_status,
    /// git_diff, git_log) and subagents run at once; a message with a call
    /// that may change files runs in order anyway.
    #[arg(long)]
    pub sequential: bool,
    /// Refuse a call that a gate would have asked a person about when nobody
    /// can be asked, instead of running it with a note. A subagent of a run
    /// where a person approves gets it, so that it never runs what its
    /// parent would have asked about.
    #[arg(long)]
    pub refuse_unasked: bool,
    /// Hand each model request to CMD (run with sh -c), which must speak ag-llm's protocol.
    #[arg(long, value_name = "CMD")]
    pub llm_cmd: Option<String>,
    /// Let tools, gates, after-hooks and MCP servers inherit the provider key
    /// variable NAME (repeatable; also `pass_env` in the config file). By
    /// default none of the key variables ag knows (the built-in providers'
    /// *_API_KEY names and every `api_key_env` of models.json) reaches them.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Resume the latest session of the working directory, with its own
    /// model, reasoning, tools and identity unless a flag says otherwise (a
    /// note event then says what changed, and a settings event records it).
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["session", "no_session"])]
    pub continue_: bool,
    /// Resume the session with this id (or unique prefix), as --continue does.
    #[arg(long, value_name = "ID", conflicts_with = "no_session")]
    pub session: Option<String>,
    /// Keep no session file.
    #[arg(long)]
    pub no_session: bool,
    /// When another process runs the session (--session, --continue), wait
    /// for it to end instead of refusing. A session has one writer at a time:
    /// without this flag a second ag-loop on a running session exits 2 at
    /// once, naming the process that runs it.
    #[arg(long)]
    pub wait_for_session: bool,
    /// Run as the agent identity NAME (`.ag/agents/NAME.md` in the project, then
    /// `$AG_HOME/agents/NAME.md`; without this flag, `default.md` when there is
    /// one): its front matter sets model (`provider/id`, or `provider:` and
    /// `id:` under it), reasoning, tools (or toolSet: a set, `[a, b]` or `- a`
    /// lines), the sandbox (sandbox, sandbox_mode, allow_net: one found in the
    /// project may make it stricter, not looser) and the workspace (only a
    /// personal identity's); its body opens the system prompt, followed by the
    /// usual context (working directory, AGENTS.md, tool guidance, MEMORY.md);
    /// flags given here still win.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// List the agent identities that --agent can load, and exit.
    #[arg(long)]
    pub list_agents: bool,
    /// Print what a run here would use and whether it would work, and exit
    /// (0 when it would): the model and where it came from, whether its
    /// key is set, whether its server answers (one request that costs no
    /// tokens: its list of models), the context window and its source, the
    /// sandbox this kernel allows, the tools found, git, and the project's
    /// instructions (AGENTS.md). Takes the flags a run would (-m,
    /// --base-url, --agent, --continue, ...); with --json, one JSON object.
    #[arg(long, conflicts_with = "prompts")]
    pub check: bool,
    /// Also look for skills in DIR (repeatable; searched first). A skill is a
    /// folder with a SKILL.md: front matter `name` and `description`, then
    /// markdown. Skills are also found in the project's `.agents/skills/`
    /// and `.claude/skills/` (up to the repository root), `~/.agents/skills/`
    /// and `$AG_HOME/skills/`. The system prompt lists each in one line; the
    /// model reads a SKILL.md when a task needs it. Skills add knowledge
    /// only: fields such as `allowed-tools` are ignored, and the sandbox and
    /// approval policy stay as they are.
    #[arg(long, value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// List no skills in the system prompt.
    #[arg(long, conflicts_with = "skills")]
    pub no_skills: bool,
    /// List the skills found (name, description, SKILL.md), and exit; a
    /// folder passed over is named on stderr with what to fix.
    #[arg(long)]
    pub list_skills: bool,
    /// Replace the built-in system prompt (or an identity's body); the working
    /// directory, AGENTS.md and MEMORY.md still follow.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Add to the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Print events as JSONL even on a terminal.
    #[arg(long, conflicts_with_all = ["quiet", "pretty"])]
    pub json: bool,
    /// Print the readable view (streamed text, tool calls in short, usage)
    /// even when stdout is a pipe or a file; colour only on a terminal.
    #[arg(long, conflicts_with = "quiet")]
    pub pretty: bool,
    /// Print only the final answer (for `$(ag-loop --quiet ...)`); with
    /// --output-schema, exactly the answer's JSON value on one line.
    #[arg(short, long)]
    pub quiet: bool,
    // Subagents (issue 35).
    /// Print one JSON line per prompt when it ends, instead of the events
    /// (which still go to the session): {"type":"result","outcome",
    /// "answer","changed","usage","cost","session_id"}, with "error" when
    /// it did not finish and "output" with --output-schema. `changed` lists
    /// the files its write, edit and delete calls changed (a bash command's
    /// changes are not seen; use git status for those). For scripts and
    /// other agents that call ag-loop as a tool, as `agent` calls do.
    #[arg(long, conflicts_with_all = ["json", "pretty", "quiet"])]
    pub result_line: bool,
    // The sandbox (issue 19).
    #[command(flatten)]
    pub sandbox: crate::agent::calls::sandbox::SandboxArgs,
    // Structured output (--output-schema).
    /// Make the final answer one JSON value valid against this JSON Schema: a
    /// file, or inline JSON starting with `{` (also `output_schema` in the config
    /// file or an identity's front matter). The model may use tools first; its
    /// answer is checked (a ```json fence around it is accepted), sent to the
    /// provider natively where the model supports it. The value is `output` in
    /// agent_end; --quiet prints it on one line. A broken schema exits 2.
    #[arg(long, value_name = "FILE|JSON")]
    pub output_schema: Option<String>,
    /// How many times a final answer that does not match --output-schema is
    /// sent back with its validation errors before the run ends with the
    /// outcome invalid_output and exit status 1 (default 2; also
    /// `output_retries` in the config file).
    #[arg(long, value_name = "N")]
    pub output_retries: Option<u32>,
    // Runs that end when a check passes (issue 35).
    /// Do not let a run end until CMD passes. When the model ends its turn
    /// (answers without tool calls), CMD runs with bash -c in the working
    /// directory, confined as a tool call is (sandbox, workspace, no provider
    /// keys). Exit status 0 ends the run with the outcome finished; any
    /// other sends the model back with a prompt that gives the status and
    /// the end of the output (its last 8,000 characters). This repeats up to
    /// --until-tries checks, then the run ends with the outcome check_failed
    /// (exit status 1); --max-turns and --max-cost still apply, and the
    /// outcome says which limit ended the run. A command that cannot be run
    /// (exit status 126 or 127: not found, not executable) ends the run at
    /// once with check_failed. Each check is a `check` event. A resumed
    /// session keeps its --until (and tries and timeout) unless --until or
    /// --no-until is given.
    #[arg(long, value_name = "CMD")]
    pub until: Option<String>,
    /// Checks a prompt's run may make before it ends with check_failed
    /// (default 5; counts the --stop hooks' answers too).
    #[arg(long, value_name = "N")]
    pub until_tries: Option<u32>,
    /// Seconds one --until check (or --stop hook) may take; a check that
    /// takes longer is stopped, with everything it started, and counts as
    /// failed (default 600, at most 3600).
    #[arg(long, value_name = "SECONDS", value_parser = crate::llm::cli::parse_seconds)]
    pub until_timeout: Option<std::time::Duration>,
    /// Drop a resumed session's --until check.
    #[arg(long, conflicts_with = "until")]
    pub no_until: bool,
    /// A stop hook: a program run (sh -c, in the working directory, not
    /// confined, as gates are) when the model ends its turn, after a passing
    /// --until (repeatable, in order). It gets one JSON object on stdin,
    /// {"answer","cwd","session_id","attempt","tries"} (schemas/stop-request.json),
    /// and answers one line: {"decision":"stop"} lets the run end,
    /// {"decision":"continue","message":"..."} sends the model back with the
    /// message (schemas/stop-decision.json). A hook that fails, hangs past
    /// --until-timeout or answers something else ends the run with the
    /// outcome check_failed. Not kept by a resumed session.
    #[arg(long = "stop", value_name = "CMD")]
    pub stop_hooks: Vec<String>,
    // Subagents (issue 35).
    /// Levels of subagents below this run (default 2): `agent` is offered
    /// while the level is above 0, and each child gets one less. Offered
    /// only when --tools names `agent` (e.g. --tools minimal,agent), or to
    /// an `@NAME` prompt whose identity's tools name it. A
    /// subagent is a fresh `ag-loop --json` on the call's task, with a
    /// session of its own; it inherits the model (or its identity's, with
    /// the call's `agent`), the sandbox, the gates and approval policy (it
    /// cannot ask anybody: under a run where a person approves, what would
    /// be asked is refused, with --refuse-unasked), the workspace, --tool
    /// and --mcp,
    /// and the ag tools of this run or fewer: a call or an identity that
    /// asks for a tool this run lacks, or a looser sandbox, is refused (a
    /// stricter one applies). It gets what is left of --max-turns and
    /// --max-cost, and its turns and cost count against this run's
    /// --max-turns and --max-cost as they are made (children running at
    /// once share what is left); its
    /// events come in this run's stream as subagent_event, under the call;
    /// its tokens and cost add into this run's; an interrupt stops it. The
    /// result is its answer, its outcome, cost and session, and the files
    /// it changed (the paths of its write, edit, delete and patch calls, and
    /// what its checkpoints saw change, which includes bash's; in a
    /// worktree, all that git sees). With `isolation: "worktree"` it works in a git worktree under
    /// $AG_HOME/worktrees on a branch `ag/agent-<call id>`, where its changes
    /// are committed when it ends; the result names the branch and its diff
    /// stat (`ag-session clean-worktrees` removes those a killed run left).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DEPTH)]
    pub max_depth: u32,
    /// Subagents that run at a time in this run's whole tree of agents
    /// (default 4): children, their children and so on count alike. More
    /// `agent` calls of this run wait for a place; a subagent's call that
    /// finds none free is refused (it cannot wait on a place held above
    /// it). The places are locked files under $AG_HOME/trees, freed when
    /// their holder ends, even killed outright.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_AGENTS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_agents: u32,
    // Checkpoints (issue 20).
    /// Do not record the working tree before turns that may change files
    /// (also `checkpoints = false` in the config file). By default, before a
    /// turn's tool calls (unless all are read-only) and at the end of a run
    /// whose tools may have changed files, the tree is recorded as a git
    /// commit on `refs/ag/checkpoints/<session-id>` (a shadow repository under
    /// $AG_HOME/checkpoints/repos when the directory has no git), without
    /// touching HEAD, the index, the stash or any branch, and a `checkpoint`
    /// event is emitted; `ag-session rewind ID --turn N` puts a turn's tree
    /// back. Untracked files are included, ignored ones and files over
    /// `checkpoint_max_file_size` bytes (config file, default 10 MB) are not.
    /// Without a session (--no-session) they are taken in a git working
    /// tree only, to know what changed, and removed when the run ends.
    #[arg(long)]
    pub no_checkpoints: bool,
    // Diagnostics after a change (issue 47).
    /// Do not add the errors a write, edit or patch brought in to its
    /// result. By default, when a language server on the PATH serves the
    /// changed file (pyright, typescript-language-server, rust-analyzer,
    /// gopls, clangd, or one named in $AG_HOME/lsp.toml), the tool asks it,
    /// through the session's warm ag-lsp, and the result lists the new
    /// errors with their lines and counts those already there (ag-lsp(1)).
    #[arg(long)]
    pub no_lsp_diagnostics: bool,
    /// Seconds a write, edit or patch waits for its diagnostics (default 2,
    /// or `wait` in $AG_HOME/lsp.toml); what comes later is added to the
    /// next such call's result.
    #[arg(long, value_name = "SECS")]
    pub lsp_wait: Option<f64>,
    // Attachments and questions (issue 31).
    /// Attach FILE to the first prompt (repeatable): an image (PNG, JPEG, GIF,
    /// WebP; at most 5 MiB) becomes an image block, for models that take images
    /// (others refuse the prompt before any call); a PDF becomes the text of its
    /// pages, each after a `--- page N ---` marker; any other text file a block
    /// headed by its name. Text stops at 100,000 characters a file and 250,000 a
    /// prompt, and the block says what was cut and how to read the rest. A word
    /// `@PATH` in any prompt that names an existing file attaches it too
    /// (`@"a b.txt"` for a name with spaces; a word naming no file stays text;
    /// `@NAME` at the start of a prompt that names an agent identity picks the
    /// identity). Paths are taken from the working directory; a file may lie
    /// outside it, as for ag-read, except what the sandbox's deny list or a gate
    /// keeps from the tools. A file that cannot be attached refuses its prompt
    /// with an error event (exit 2 before any event for --attach).
    #[arg(long = "attach", value_name = "FILE")]
    pub attach: Vec<String>,
    /// Answer the model's questions (its `ask` tool) with CMD first (run with sh
    /// -c; the question on its stdin as one JSON object {"tool_call_id",
    /// "question", "options", "cwd", "session_id"}; its stdout is the answer,
    /// and an option's number picks that option). Empty output, a failure or
    /// 300 s without an answer leave the question to a person, then to
    /// --ask-default (also `ask_cmd` in the config file).
    #[arg(long, value_name = "CMD")]
    pub ask_cmd: Option<String>,
    /// The answer to the model's questions when no person answers (also
    /// `ask_default`). A person is asked on the terminal (prompts given as
    /// arguments), or, when prompts come from stdin and stdin is a pipe, socket
    /// or terminal, through a `question` event and an {"type":"answer",
    /// "tool_call_id":...,"answer":...} line (or a typed line) for as long as
    /// stdin stays open. Without a person and without this, the model is told
    /// that nobody is there and to decide itself.
    #[arg(long, value_name = "TEXT")]
    pub ask_default: Option<String>,
    /// Wait at most SECONDS for a person's answer, then go on as if nobody were
    /// there (default: no limit; also `ask_timeout`).
    #[arg(long, value_name = "SECONDS", value_parser = crate::llm::cli::parse_seconds)]
    pub ask_timeout: Option<std::time::Duration>,
    // Tools in another workspace (issue 22).
    /// Run every ag tool call in another workspace: `ssh://[user@]host[:port]/path`,
    /// `docker://container/path`, `podman://container/path` or
    /// `kubectl://[namespace/]pod[:container]/path` (with three or more segments the
    /// first is the namespace; `kubectl:///pod/a/b` keeps the context's). Calls go
    /// through `ssh` (one ControlMaster connection for the session; more options
    /// in $AG_SSH_OPTIONS, e.g. "-i KEY -o StrictHostKeyChecking=accept-new"),
    /// `docker exec -i`, `podman exec -i` or `kubectl exec -i`, and use the ag
    /// tools found there on PATH or in ~/.cache/ag/VERSION/; where they are missing
    /// or of another version and the machine and glibc allow, this ag-loop's own
    /// are copied there once (a notify event says so), else ag-loop exits 2
    /// saying what to install. The model sees the workspace's directory and its
    /// AGENTS.md; gates, after-hooks, --tool commands and MCP servers still run
    /// here; the sandbox and checkpoints do not apply there. Also `workspace` in
    /// the config file or a personal identity ($AG_HOME/agents).
    #[arg(long, value_name = "URI")]
    pub workspace: Option<String>,
}

/// How to shorten a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompactMode {
    /// Summarise the older turns with a model call.
    Auto,
    /// Drop the older turns and leave a marker (no model call).
    Never,
}

/// `--show-context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowContext {
    /// For a model with a small context window.
    Auto,
    /// For every model.
    Always,
    /// Never.
    Never,
}

/// `--tool-params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolParams {
    /// Every parameter of the tool's schema.
    All,
    /// The required ones, text and lists, and the options a tool's
    /// description names.
    Needed,
}

/// `--first-call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FirstCall {
    /// A tool call.
    Required,
    /// Text or tools, as the model chooses.
    Auto,
}

impl From<FirstCall> for crate::protocol::ToolChoice {
    fn from(f: FirstCall) -> Self {
        match f {
            FirstCall::Required => crate::protocol::ToolChoice::Required,
            FirstCall::Auto => crate::protocol::ToolChoice::Auto,
        }
    }
}
