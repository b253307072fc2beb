//! Integration tests: the built binaries driven as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

// The generated files (schemas/, man/, completions) are current.
mod generated;
// The shared tool protocol: --schema, the JSONL loop, plain mode, exit statuses.
mod protocol;
// ag-git.
mod git;
// ag-gate: the classifier table, approval modes, lists, config rules.
mod gate;
// ag-read.
mod read;
// ag-lsp and diagnostics after a change: real language servers, and fake ones that hang or crash.
mod lsp;
// ag-fetch: pages as markdown, inward addresses refused, bounds, keys in URLs.
mod fetch;
// ag-browser: a scripted model drives Chromium on local pages; confinement; no orphan after kill -9.
mod browser;
// ag-session.
mod session;
// One writer per session: concurrent ag-loop runs refused or waiting, interleaved files repaired.
mod session_writers;
// ag-loop.
mod agent;
pub(crate) mod loop_stdin;
// A steer at every point of a turn reaches the model; empty prompts make no model call.
mod loop_steer;
// Attachments: --attach, @path mentions, images, PDFs, limits, refusals.
mod attachments;
// A hostile repository's AGENTS.md, identities and skills: links out, FIFOs, huge files.
mod project_files;
// The model asks (the ask tool): answered on stdin, by a default, a program, or nobody.
mod questions;
// Progress of running calls: ag-bash's progress lines, tool_execution_update events.
mod progress;
// Checkpoints and rewind: ag-loop records the tree, ag-session puts turns back.
mod checkpoints;
// ag-todo.
mod todo;
// ag-write.
mod write;
// ag-edit.
mod edit;
// ag-edit's code sketches: the planner fallback, the command line.
mod sketch;
// ag-patch: git's own diffs, the command line, --root, symlinks, sessions.
mod patch;
// ag-delete.
mod delete;
// --root under a race: a symlink flipped in and out while the file tools work.
mod root_race;
// Hostile input: lines not UTF-8, nested too deep, far too long; patterns over 1 MiB.
mod hostile_input;
// ag-patch across several large files under SIGKILL: all old or all new after recovery.
mod patch_kill;
// Scenario folders for ag-edit, ag-patch, ag-write and ag-delete (tests/fixtures/<tool>/).
mod scenarios;
// Tolerant matching scenarios for ag-edit, ag-patch and code sketches (tests/fixtures/edit_scenarios/).
mod edit_scenarios;
// ag-grep.
mod grep;
// ag-find.
mod find;
// ag-ls.
mod ls;
// The generated project tree the search tools are tested on.
mod tree;
// ag-bash: commands, timeouts, cancellation, output caps, background jobs.
mod bash;
// ag-llm against local HTTP servers replaying real provider streams.
mod llm;
// ag-llm's command line: stdin requests, record/replay, config, usage.
mod llm_cli;
// The scripted HTTP server the ag-llm tests talk to.
mod llm_server;
// Recorded provider streams parsed by ag-llm's parsers, cut at awkward places.
mod llm_wire;
// What ag-llm sends (output limits, tool shapes) and real local-server streams.
mod llm_requests;
// Misbehaving servers and impossible set-ups: stalls, refused connections, web pages, bad ids.
mod llm_faults;
// ag-loop against a scripted llama.cpp-style server: /props, its error bodies, overflow.
mod local_server;
// ag-loop against a scripted model server with the real tools.
mod agent_e2e;
// Arguments as models send them: empty optional fields, strings for numbers, real-model calls.
mod lenient;
// What every model request carries: the system prompt and tool definitions, against a budget.
mod prompt_size;
// Agent Skills: found, listed in one line each, loaded when read (tests/fixtures/skills/).
mod skills;
// The scripted model server for ag-loop's end-to-end tests.
mod model_server;
// ag-mcp driven over stdio with JSON-RPC lines, as an MCP client does.
mod mcp;
// ag-mcp given malformed JSON-RPC: every request with an id gets one answer.
mod mcp_wire;
// The MCP client library against ag-mcp, over stdio and streamable HTTP.
mod mcp_client;
// No orphans when ag-bash, ag-loop or ag-mcp is SIGKILLed mid-command.
mod orphans;
// Helpers that answer at once and leave a child holding their pipe do not stall ag-loop.
mod stalls;
// MCP against the reference SDK and servers from npm (scripts/mcp-interop; scripts/test installs them).
mod mcp_interop;
// Seed 003's CLI agent tools with the real claude and codex from npm (scripts/cli-agents; scripts/test installs them).
mod cli_agents;
// ag-loop keeps provider keys from tools, gates, hooks and everything it writes.
mod agent_keys;
mod evidence;
// A first run without a key: what ag-loop says, and the local servers it offers.
mod first_run;
// ag-loop's repeated-failure guard, replaying what a real small model did.
mod agent_repeats;
// One output budget: read, bash and grep fit what ag-loop lets through.
mod agent_budget;
// ag-loop's command line and stdin: --pretty, lines that are not UTF-8.
mod agent_cli;
// What a user could paste from the seeds, run as written (tests/fixtures/seeds/).
mod seeds;
// Resuming keeps the session's model, reasoning, tools and identity; set_model, set_reasoning.
mod resume;
// ag-sandbox and ag-bash --sandbox: Landlock and seccomp on this kernel.
mod sandbox;
// ag-loop's sandbox: blocked calls, escalation, no Landlock, MCP servers, git hooks.
mod sandbox_loop;
// Structured output (--output-schema) on every API's wire shape, ag-loop and ag-llm.
mod output_schema;
// Runs that end when a check passes (issue 35).
mod until;
// Subagents: the `agent` tool, nested events, worktrees, the whole tree stopped (issue 35).
mod subagents;
// ag-acp: ACP clients from npm (scripts/acp-interop) and raw JSON-RPC attacks.
mod acp;
// ag-tui's frames (TestBackend and insta snapshots) and its render cache.
mod tui_frames;
// ag-tui end to end in tmux with a scripted model: keys in, the screen read back.
mod tui;
// ag-serve over its socket: attach from an offset, several clients, a stalled one, a kill -9.
mod serve;
// ag-tui --attach on a live session of ag-serve, in tmux.
mod serve_attach;
// ag-serve over HTTP: the token, Origin and Host checks; the page in headless Chromium.
mod serve_page;
// ag-serve under load: 50 sessions with 4 clients each, nothing lost or doubled, memory bounded.
mod serve_load;
// ag-fanout: tasks files through GNU parallel and ag-loop, interrupted and resumed.
mod fanout;
// examples/k8s: the indexed Job running ag-fanout --task, as kubectl reads it.
mod fanout_k8s;
// ag-fanout --engine kubernetes against a stand-in kubectl and node, its
// manifests checked against the Kubernetes API's schemas.
mod fanout_kubernetes;
// ag-fanout --engine slurm on a real one-node cluster each test starts.
mod fanout_slurm;
// ag-loop --workspace: the tools in another workspace, over a real sshd and fake docker/kubectl clients.
mod workspace;
// ag-loop --workspace docker:// and podman:// against real engines the tests start.
mod workspace_containers;
