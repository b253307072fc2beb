complete -c ag-delete -l expected-hash -d 'For a file: the `hash` from your last read of it; the delete is refused if the file has changed since' -r
complete -c ag-delete -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-delete -s r -l recursive -d 'Delete a directory and everything in it. Without it, directories are refused'
complete -c ag-delete -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-delete -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-delete -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-delete -s V -l version -d 'Print version'
