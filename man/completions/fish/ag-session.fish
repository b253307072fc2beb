# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ag_session_global_optspecs
    string join \n h/help V/version
end

function __fish_ag_session_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ag_session_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ag_session_using_subcommand
    set -l cmd (__fish_ag_session_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ag-session -n "__fish_ag_session_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-session -n "__fish_ag_session_needs_command" -s V -l version -d 'Print version'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "list" -d 'Sessions of the working directory, newest first: id (the shortest unique prefix), start, first prompt, messages, tokens, cost'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "show" -d 'A readable transcript of a session, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "messages" -d 'The message array that resumes a session (what ag-loop loads), as JSON'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "path" -d 'The path of a session file'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "latest" -d 'The id of the newest session of the working directory'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "new" -d 'Creates an empty session and prints its id and path (tab-separated)'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "append" -d 'Appends the events read from stdin (ag-loop\'s JSONL output) to a session'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "fork" -d 'A new session holding the first N events of another; its header names the parent'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "rm" -d 'Deletes a session (asks on a terminal; `--yes` otherwise)'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "export" -d 'A session as markdown or a self-contained HTML page, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "stats" -d 'Tokens and cost per day and model, of one session or of all'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "rewind" -d 'Puts the working tree back as it was before turn N (from the checkpoints ag-loop took) and forks the conversation before that turn into a new session (parent = ID), whose id it prints: `ag-loop --session NEW` goes on from there. Files created since are removed, deleted ones come back, modes are kept; ignored files and files left out of checkpoints are not touched. When turn N is the first of its prompt, the prompt is left out of the new session too. Refuses, listing what would be lost, when the tree changed after the session\'s last checkpoint, unless --force'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "checkpoints" -d 'A session\'s checkpoints: the turn each was taken before, its id and time, and the diffstat from the one before'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "diff" -d 'A unified diff from the tree before turn N (default: the session\'s last checkpoint) to the tree before turn M (default: the working tree now). One past the last turn is the tree the session left'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "checkpoint" -d 'Records the working tree now as a checkpoint of the session (a `checkpoint` event is appended) and prints its id'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "prune" -d 'Deletes the sessions not written to for AGE (their files and `.d` directories) and their checkpoints: the refs/ag/checkpoints/<id> refs, ag\'s private indexes, and shadow repositories no session uses any more. git removes the objects only reachable from those refs at its next `git gc` once they have expired'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "clean-worktrees" -d 'Removes the git worktrees of subagents (`agent` calls with isolation "worktree", in $AG_HOME/worktrees) whose ag-loop is gone, as a killed run leaves them: what each holds is first committed on its branch (ag/agent-<call id>), so no work is lost; a branch that holds no change is deleted. One line each: the worktree and what was done'
complete -c ag-session -n "__fish_ag_session_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ag-session -n "__fish_ag_session_using_subcommand list" -l cwd -d 'The working directory whose sessions to list (default: the current one)' -r -F
complete -c ag-session -n "__fish_ag_session_using_subcommand list" -l all -d 'Sessions of every directory'
complete -c ag-session -n "__fish_ag_session_using_subcommand list" -l json -d 'One JSON object per session instead of a table'
complete -c ag-session -n "__fish_ag_session_using_subcommand list" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand show" -l json -d 'The raw records (JSONL) instead'
complete -c ag-session -n "__fish_ag_session_using_subcommand show" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand messages" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand path" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand latest" -l cwd -d 'The working directory (default: the current one)' -r -F
complete -c ag-session -n "__fish_ag_session_using_subcommand latest" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand new" -l cwd -d 'The working directory it belongs to (default: the current one)' -r -F
complete -c ag-session -n "__fish_ag_session_using_subcommand new" -l json -d 'Print `{"id","path"}` as JSON instead'
complete -c ag-session -n "__fish_ag_session_using_subcommand new" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand append" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-session -n "__fish_ag_session_using_subcommand fork" -l at -d 'How many events to keep (default: all)' -r
complete -c ag-session -n "__fish_ag_session_using_subcommand fork" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand rm" -s y -l yes -d 'Do not ask'
complete -c ag-session -n "__fish_ag_session_using_subcommand rm" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand export" -l format -d 'The format' -r -f -a "markdown\t'Markdown, with tool calls in `<details>` blocks'
html\t'One self-contained HTML page'"
complete -c ag-session -n "__fish_ag_session_using_subcommand export" -s o -l output -d 'Write to FILE instead of stdout' -r -F
complete -c ag-session -n "__fish_ag_session_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-session -n "__fish_ag_session_using_subcommand stats" -l all -d 'Every session of every directory'
complete -c ag-session -n "__fish_ag_session_using_subcommand stats" -l json -d 'One JSON object per row instead of a table'
complete -c ag-session -n "__fish_ag_session_using_subcommand stats" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand rewind" -l turn -d 'The turn to go back to (as `ag-session checkpoints` numbers them)' -r
complete -c ag-session -n "__fish_ag_session_using_subcommand rewind" -l files-only -d 'Put the files back only; no new session (a checkpoint of the result is added to ID)'
complete -c ag-session -n "__fish_ag_session_using_subcommand rewind" -l conversation-only -d 'Fork the conversation only; no file is touched'
complete -c ag-session -n "__fish_ag_session_using_subcommand rewind" -l force -d 'Rewind even though the tree changed after the last checkpoint, recording those changes first as a checkpoint of ID (so that the rewind can be undone)'
complete -c ag-session -n "__fish_ag_session_using_subcommand rewind" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand checkpoints" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand diff" -l turn -d 'From the tree before this turn' -r
complete -c ag-session -n "__fish_ag_session_using_subcommand diff" -l to -d 'To the tree before this turn' -r
complete -c ag-session -n "__fish_ag_session_using_subcommand diff" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand checkpoint" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand prune" -l older-than -d 'The age: 30d, 12h, 2w, 90m, 45s' -r
complete -c ag-session -n "__fish_ag_session_using_subcommand prune" -l dry-run -d 'Say what would be deleted, and delete nothing'
complete -c ag-session -n "__fish_ag_session_using_subcommand prune" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand clean-worktrees" -l dry-run -d 'List them, and change nothing'
complete -c ag-session -n "__fish_ag_session_using_subcommand clean-worktrees" -s h -l help -d 'Print help'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "list" -d 'Sessions of the working directory, newest first: id (the shortest unique prefix), start, first prompt, messages, tokens, cost'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "show" -d 'A readable transcript of a session, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "messages" -d 'The message array that resumes a session (what ag-loop loads), as JSON'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "path" -d 'The path of a session file'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "latest" -d 'The id of the newest session of the working directory'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "new" -d 'Creates an empty session and prints its id and path (tab-separated)'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "append" -d 'Appends the events read from stdin (ag-loop\'s JSONL output) to a session'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "fork" -d 'A new session holding the first N events of another; its header names the parent'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "rm" -d 'Deletes a session (asks on a terminal; `--yes` otherwise)'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "export" -d 'A session as markdown or a self-contained HTML page, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "stats" -d 'Tokens and cost per day and model, of one session or of all'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "rewind" -d 'Puts the working tree back as it was before turn N (from the checkpoints ag-loop took) and forks the conversation before that turn into a new session (parent = ID), whose id it prints: `ag-loop --session NEW` goes on from there. Files created since are removed, deleted ones come back, modes are kept; ignored files and files left out of checkpoints are not touched. When turn N is the first of its prompt, the prompt is left out of the new session too. Refuses, listing what would be lost, when the tree changed after the session\'s last checkpoint, unless --force'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "checkpoints" -d 'A session\'s checkpoints: the turn each was taken before, its id and time, and the diffstat from the one before'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "diff" -d 'A unified diff from the tree before turn N (default: the session\'s last checkpoint) to the tree before turn M (default: the working tree now). One past the last turn is the tree the session left'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "checkpoint" -d 'Records the working tree now as a checkpoint of the session (a `checkpoint` event is appended) and prints its id'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "prune" -d 'Deletes the sessions not written to for AGE (their files and `.d` directories) and their checkpoints: the refs/ag/checkpoints/<id> refs, ag\'s private indexes, and shadow repositories no session uses any more. git removes the objects only reachable from those refs at its next `git gc` once they have expired'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "clean-worktrees" -d 'Removes the git worktrees of subagents (`agent` calls with isolation "worktree", in $AG_HOME/worktrees) whose ag-loop is gone, as a killed run leaves them: what each holds is first committed on its branch (ag/agent-<call id>), so no work is lost; a branch that holds no change is deleted. One line each: the worktree and what was done'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats rewind checkpoints diff checkpoint prune clean-worktrees help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
