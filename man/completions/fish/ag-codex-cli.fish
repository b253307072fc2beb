complete -c ag-codex-cli -l working-directory -d 'The directory the agent works in (default: the current one)' -r
complete -c ag-codex-cli -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-codex-cli -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-codex-cli -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-codex-cli -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-codex-cli -s V -l version -d 'Print version'
