complete -c ag-write -l content -d 'The full content of the file. On the command line, leave it out to read the content from stdin' -r
complete -c ag-write -l expected-hash -d 'The `hash` from the read (or the last write or edit) of this file. When given, the write is refused if the file has changed since' -r
complete -c ag-write -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-write -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-write -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-write -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-write -s V -l version -d 'Print version'
