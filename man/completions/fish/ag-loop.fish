complete -c ag-loop -s m -l model -d 'The model as provider/model (default: the --agent identity\'s, $AG_MODEL, the config file\'s, else anthropic/claude-sonnet-4-5)' -r
complete -c ag-loop -l api-key -d 'The API key (default: the provider\'s usual environment variable)' -r
complete -c ag-loop -l base-url -d 'The provider\'s base URL' -r
complete -c ag-loop -l reasoning -d 'Reasoning effort for models that think' -r -f -a "off\t'No reasoning, or the least the model takes (OpenAI: "none" for GPT-5.1 and later, "minimal" for GPT-5, "low" for Codex and o-series)'
low\t'A little'
medium\t'Some'
high\t'A lot'"
complete -c ag-loop -l idle-timeout -d 'Give up on a model response that sends nothing for SECONDS, and retry it (default: the provider\'s `idle_timeout` in models.json, else the config file\'s, else 300; 0 waits forever)' -r
complete -c ag-loop -l max-tokens -d 'Output token limit per model call (default: the model\'s `max_output` from the model table or models.json)' -r
complete -c ag-loop -l max-turns -d 'Model calls per prompt before the agent stops (default 100)' -r
complete -c ag-loop -l max-failed-calls -d 'Stop a prompt\'s run once N tool calls in a row have failed, of any kind (default 8; 0 for no limit). The model is warned from half of N on. Apart from that, a call that fails the same way (same tool, arguments and error) is pointed out from its second failure and stops the run at its fifth, however many turns and successful calls lie in between. The run stops after the turn\'s results, with the outcome repeated_failure' -r
complete -c ag-loop -l config -d 'Read defaults from FILE instead of $AG_HOME/config.toml (model, tools, mcp, gate, after, tool, max_turns, max_failed_calls, pass_env, idle_timeout, output_schema, output_retries, checkpoints, checkpoint_max_file_size, sandbox, sandbox_mode, allow_net, sandbox_write, mcp_unconfined; flags win, lists are added to)' -r -F
complete -c ag-loop -l max-cost -d 'Stop a prompt once it has cost this many US dollars' -r
complete -c ag-loop -l cwd -d 'The working directory of the agent and its tools' -r -F
complete -c ag-loop -l tools -l toolset -d 'The tools to offer: a set (full, minimal, readonly, chat) or ag tool names, comma-separated (default: full, the ag tools that are installed)' -r
complete -c ag-loop -l tool -d 'Add any executable that answers --schema and the tool call protocol (repeatable). CMD is a shell command line, quoted as in a shell (`my-tool --flag "a b"`), run by `sh -c` in the agent\'s directory' -r
complete -c ag-loop -l compact -d 'Near the context window, summarise the older turns with a model call (auto), or just drop them and leave a marker (never)' -r -f -a "auto\t'Summarise the older turns with a model call'
never\t'Drop the older turns and leave a marker (no model call)'"
complete -c ag-loop -l gate -d 'A gate: a program that sees each tool call first (one JSON object on stdin) and allows, denies, asks a person or rewrites it (repeatable, in order; default: ag-gate\'s policy, applied in-process with the rules of $AG_HOME/gate.toml, the same decisions as running `ag-gate`)' -r
complete -c ag-loop -l after -d 'A program that sees each tool result and may annotate it (repeatable)' -r
complete -c ag-loop -l gate-timeout -d 'Seconds a gate or after-hook may take before it counts as a denial' -r
complete -c ag-loop -l mcp -d 'Offer the tools of an MCP server: `\'CMD ARGS\'` started over stdio, or a streamable-HTTP URL (repeatable). Clashing names become `server__tool`' -r
complete -c ag-loop -l llm-cmd -d 'Hand each model request to CMD (run with sh -c), which must speak ag-llm\'s protocol' -r
complete -c ag-loop -l pass-env -d 'Let tools, gates, after-hooks and MCP servers inherit the provider key variable NAME (repeatable; also `pass_env` in the config file). By default none of the key variables ag knows (the built-in providers\' *_API_KEY names and every `api_key_env` of models.json) reaches them' -r
complete -c ag-loop -l session -d 'Resume the session with this id (or unique prefix)' -r
complete -c ag-loop -l agent -d 'Run as the agent identity NAME (`.ag/agents/NAME.md` in the project, then `$AG_HOME/agents/NAME.md`): its front matter sets model, reasoning, tools and the sandbox (sandbox, sandbox_mode, allow_net: one found in the project may make it stricter, not looser), its body the system prompt; flags given here still win' -r
complete -c ag-loop -l system-prompt -d 'Replace the built-in system prompt' -r
complete -c ag-loop -l append-system-prompt -d 'Add to the system prompt' -r
complete -c ag-loop -l sandbox -d 'Confine every tool call and MCP stdio server by the kernel (Landlock, seccomp, no_new_privs): auto (the default) confines where the kernel can, else warns, emits one `error` event with code sandbox.unavailable and runs unconfined; require refuses to start (exit 2) instead; off runs unconfined (also `sandbox` in the config file and the identity). A call the sandbox blocks may run again outside it: the gates are asked again (ag-gate asks a person through an approval_request, whose "always" covers the command\'s prefix for the session; under approval mode never, or with nobody to answer, the call stays confined and the model is told why). With the sandbox on, ag-gate does not ask about what the kernel stops (ag-gate(1))' -r -f -a "auto\t'Confine where the kernel allows; elsewhere warn once and run unconfined'
require\t'Confine, or refuse to run'
off\t'Run unconfined'"
complete -c ag-loop -l sandbox-mode -d 'What confined calls may write: workspace-write (the default: the repository the working directory is in, else the working directory, plus the session\'s directory and a private TMPDIR) or read-only (also `sandbox_mode`)' -r -f -a "read-only\t'Nothing, except `/dev/null`-style devices'
workspace-write\t'The workspace, the directories given to be writable (ag-loop adds those its tools keep their files in), a private `$TMPDIR` and devices such as `/dev/null`'"
complete -c ag-loop -l sandbox-write -d 'Let confined calls write DIR too, such as a build cache outside the workspace (repeatable; also `sandbox_write`)' -r -F
complete -c ag-loop -l output-schema -d 'Make the final answer one JSON value valid against this JSON Schema: a file, or inline JSON starting with `{` (also `output_schema` in the config file or an identity\'s front matter). The model may use tools first; its answer is checked (a ```json fence around it is accepted), sent to the provider natively where the model supports it. The value is `output` in agent_end; --quiet prints it on one line. A broken schema exits 2' -r
complete -c ag-loop -l output-retries -d 'How many times a final answer that does not match --output-schema is sent back with its validation errors before the run ends with the outcome invalid_output and exit status 1 (default 2; also `output_retries` in the config file)' -r
complete -c ag-loop -l no-gate -d 'Run tool calls without any gate, not even ag-gate'
complete -c ag-loop -l approve-on-stdin -d 'A client on stdin answers approvals (as ag-tui does): the gates ask as they would on a terminal (ag-gate\'s approval mode `dangerous`), and each `approval_request` waits for an `approval` line, or a typed y, n or a. Without it, and without a terminal, nobody is asked: ag-gate\'s approval mode is `never` (what no rule denies runs; a call the sandbox blocked stays confined)'
complete -c ag-loop -l sequential -d 'Run a message\'s tool calls one after another instead of in parallel'
complete -c ag-loop -s c -l continue -d 'Resume the latest session of the working directory'
complete -c ag-loop -l no-session -d 'Keep no session file'
complete -c ag-loop -l list-agents -d 'List the agent identities that --agent can load, and exit'
complete -c ag-loop -l json -d 'Print events as JSONL even on a terminal'
complete -c ag-loop -l pretty -d 'Print the readable view (streamed text, tool calls in short, usage) even when stdout is a pipe or a file; colour only on a terminal'
complete -c ag-loop -s q -l quiet -d 'Print only the final answer (for `$(ag-loop --quiet ...)`); with --output-schema, exactly the answer\'s JSON value on one line'
complete -c ag-loop -l allow-net -d 'Let confined calls use the network (TCP, UDP); without it only Unix sockets work (also `allow_net`)'
complete -c ag-loop -l mcp-unconfined -d 'Start MCP stdio servers outside the sandbox (for servers that need the network or write elsewhere; also `mcp_unconfined`)'
complete -c ag-loop -l no-checkpoints -d 'Do not record the working tree before turns that may change files (also `checkpoints = false` in the config file). By default, before a turn\'s tool calls (unless all are read-only) and at the end of a run whose tools may have changed files, the tree is recorded as a git commit on `refs/ag/checkpoints/<session-id>` (a shadow repository under $AG_HOME/checkpoints/repos when the directory has no git), without touching HEAD, the index, the stash or any branch, and a `checkpoint` event is emitted; `ag-session rewind ID --turn N` puts a turn\'s tree back. Untracked files are included, ignored ones and files over `checkpoint_max_file_size` bytes (config file, default 10 MB) are not. There are none without a session file (--no-session)'
complete -c ag-loop -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-loop -s V -l version -d 'Print version'
