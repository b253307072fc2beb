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
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "list" -d 'Sessions of the working directory, newest first: id (the shortest unique prefix), start, first prompt, messages, tokens, cost'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "show" -d 'A readable transcript of a session, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "messages" -d 'The message array that resumes a session (what ag-loop loads), as JSON'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "path" -d 'The path of a session file'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "latest" -d 'The id of the newest session of the working directory'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "new" -d 'Creates an empty session and prints its id and path (tab-separated)'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "append" -d 'Appends the events read from stdin (ag-loop\'s JSONL output) to a session'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "fork" -d 'A new session holding the first N events of another; its header names the parent'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "rm" -d 'Deletes a session (asks on a terminal; `--yes` otherwise)'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "export" -d 'A session as markdown or a self-contained HTML page, with how each run ended and the totals'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "stats" -d 'Tokens and cost per day and model, of one session or of all'
complete -c ag-session -n "__fish_ag_session_using_subcommand help; and not __fish_seen_subcommand_from list show messages path latest new append fork rm export stats help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
