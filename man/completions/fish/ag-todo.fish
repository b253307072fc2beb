complete -c ag-todo -l id -d 'For `update` and `remove`: the item\'s id, as the list shows it (`#3` is id 3)' -r
complete -c ag-todo -l status -d 'For `update`: the new status, `pending`, `in_progress` or `done`' -r -f -a "pending\t''
in_progress\t''
done\t''"
complete -c ag-todo -l content -d 'For `update`: the item\'s new text' -r
complete -c ag-todo -l file -d 'The list\'s file, used instead of the session\'s `todo.json` (`$AG_SESSION_DIR/todo.json`) or the run\'s (`$AG_TODO_FILE`, set by `ag-loop --no-session`); needed when not running under ag-loop' -r
complete -c ag-todo -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-todo -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-todo -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-todo -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-todo -s V -l version -d 'Print version'
