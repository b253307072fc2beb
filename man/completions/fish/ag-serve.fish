# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ag_serve_global_optspecs
    string join \n http= allow-remote allow-host= client-buffer= http-header-timeout= http-idle-timeout= http-connections= ag-loop= fanout= socket= h/help V/version
end

function __fish_ag_serve_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ag_serve_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ag_serve_using_subcommand
    set -l cmd (__fish_ag_serve_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ag-serve -n "__fish_ag_serve_needs_command" -l http -d 'Also serve HTTP (JSON endpoints, Server-Sent Events and the web page) on ADDR, a loopback address and port such as 127.0.0.1:8377 (port 0: any free port)' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l allow-host -d 'A host name (NAME or NAME:PORT) the HTTP server answers to besides the address it serves, localhost and 127.0.0.1 (repeatable): the name of this machine that clients use over --allow-remote, or a tunnel\'s' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l client-buffer -d 'The bytes ag-serve may hold for one client before it drops it: the session\'s events it has not read and, on the socket, the replies to its requests' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l http-header-timeout -d 'The seconds an HTTP client has to send the head of a request (from connecting, or from the head\'s first byte) before it is closed' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l http-idle-timeout -d 'The seconds an HTTP connection may sit between requests with nothing sent either way (an event stream sends a keep-alive every 15 s)' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l http-connections -d 'The most HTTP connections open at once (at most a quarter of the open-file limit, `ulimit -n`). A new one past it closes the one that has waited longest without a request, those that never carried the token first' -r
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l ag-loop -d 'The ag-loop program (default: the one beside ag-serve, else on PATH)' -r -F
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l fanout -d 'Show this file\'s result lines of an `ag-fanout` run as a table on the web page (read again at each look, so a running ag-fanout shows)' -r -F
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l socket -d 'The Unix socket (default: $AG_HOME/serve/socket)' -r -F
complete -c ag-serve -n "__fish_ag_serve_needs_command" -l allow-remote -d 'Allow --http on an address that is not loopback. Anyone who can reach the port and has the token runs commands as you: see docs/frontends.md'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -s V -l version -d 'Print version'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -f -a "list" -d 'List the sessions: the live ones with their state (working, waiting_for_approval, idle), then the ended ones ag-serve ran'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -f -a "start" -d 'Start a new session and attach to it: its events on stdout, commands from stdin (as ag-loop reads them); at the end of stdin it detaches and the session goes on'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -f -a "attach" -d 'Attach to a session: its events from --from on (first those it missed, then the live ones) on stdout, commands from stdin; at the end of stdin it detaches and the session goes on. A client that falls behind is attached again where it left off'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -f -a "end" -d 'End a running session: its work interrupted, its ag-loop told to finish. It can be resumed later'
complete -c ag-serve -n "__fish_ag_serve_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand list" -l socket -d 'The Unix socket (default: $AG_HOME/serve/socket)' -r -F
complete -c ag-serve -n "__fish_ag_serve_using_subcommand list" -l all -d 'Every session on this machine, not only those ag-serve ran'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand list" -l json -d 'One JSON object per session instead of a table'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand list" -s h -l help -d 'Print help'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand start" -l cwd -d 'The working directory (default: this one)' -r -F
complete -c ag-serve -n "__fish_ag_serve_using_subcommand start" -l client -d 'The name other clients see on this one\'s approvals' -r
complete -c ag-serve -n "__fish_ag_serve_using_subcommand start" -l socket -d 'The Unix socket (default: $AG_HOME/serve/socket)' -r -F
complete -c ag-serve -n "__fish_ag_serve_using_subcommand start" -s h -l help -d 'Print help'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand attach" -l from -d 'The offset of the first event wanted (the `offset` of a `detached` message)' -r
complete -c ag-serve -n "__fish_ag_serve_using_subcommand attach" -l client -d 'The name other clients see on this one\'s approvals' -r
complete -c ag-serve -n "__fish_ag_serve_using_subcommand attach" -l socket -d 'The Unix socket (default: $AG_HOME/serve/socket)' -r -F
complete -c ag-serve -n "__fish_ag_serve_using_subcommand attach" -l resume -d 'Start ag-loop on the session if it is not running (resume it)'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand attach" -s h -l help -d 'Print help'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand end" -l socket -d 'The Unix socket (default: $AG_HOME/serve/socket)' -r -F
complete -c ag-serve -n "__fish_ag_serve_using_subcommand end" -s h -l help -d 'Print help'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand help; and not __fish_seen_subcommand_from list start attach end help" -f -a "list" -d 'List the sessions: the live ones with their state (working, waiting_for_approval, idle), then the ended ones ag-serve ran'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand help; and not __fish_seen_subcommand_from list start attach end help" -f -a "start" -d 'Start a new session and attach to it: its events on stdout, commands from stdin (as ag-loop reads them); at the end of stdin it detaches and the session goes on'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand help; and not __fish_seen_subcommand_from list start attach end help" -f -a "attach" -d 'Attach to a session: its events from --from on (first those it missed, then the live ones) on stdout, commands from stdin; at the end of stdin it detaches and the session goes on. A client that falls behind is attached again where it left off'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand help; and not __fish_seen_subcommand_from list start attach end help" -f -a "end" -d 'End a running session: its work interrupted, its ag-loop told to finish. It can be resumed later'
complete -c ag-serve -n "__fish_ag_serve_using_subcommand help; and not __fish_seen_subcommand_from list start attach end help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
