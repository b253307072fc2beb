complete -c ag-git -s m -l message -d 'For `commit`: the commit message, a short summary line, then optionally a blank line and details' -r
complete -c ag-git -s n -l count -d 'For `log`: how many commits, newest first (default 10, at most 500)' -r
complete -c ag-git -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-git -l staged -d 'For `diff`: show the staged changes (what would be committed) instead of the unstaged ones'
complete -c ag-git -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-git -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-git -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-git -s V -l version -d 'Print version'
