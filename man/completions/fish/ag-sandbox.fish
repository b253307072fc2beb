complete -c ag-sandbox -l mode -d 'How much the command may write: `workspace-write` (the workspace, the --write directories and a private $TMPDIR) or `read-only` (nothing but /dev/null-style devices)' -r -f -a "read-only\t'Nothing, except `/dev/null`-style devices'
workspace-write\t'The workspace, the directories given to be writable (ag-loop adds those its tools keep their files in), a private `$TMPDIR` and devices such as `/dev/null`'"
complete -c ag-sandbox -l workspace -d 'The workspace (default: the current directory)' -r -F
complete -c ag-sandbox -l write -d 'Also allow writes beneath DIR (repeatable; workspace-write only)' -r -F
complete -c ag-sandbox -l deny-read -d 'Also deny reading PATH and all beneath it (repeatable), on top of the default deny list' -r -F
complete -c ag-sandbox -l sandbox -d '`auto` confines where the kernel can and otherwise warns and runs unconfined; `require` refuses to run unconfined (exit 2); `off` runs unconfined' -r -f -a "auto\t'Confine where the kernel allows; elsewhere warn once and run unconfined'
require\t'Confine, or refuse to run'
off\t'Run unconfined'"
complete -c ag-sandbox -l net -d 'Allow the network (TCP, UDP, raw sockets)'
complete -c ag-sandbox -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-sandbox -s V -l version -d 'Print version'
