complete -c ag-ls -s d -l depth -d 'Levels to show: 1 lists only the directory\'s own entries (default 2, at most 10). Deeper directories are shown with their entry count' -r
complete -c ag-ls -s n -l limit -d 'Most entries to show in all (default 200, at most 5000). Directories below the first level show at most 30 entries each' -r
complete -c ag-ls -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-ls -l include-hidden -l hidden -d 'Also take hidden files and directories (names starting with `.`)'
complete -c ag-ls -l include-ignored -l no-ignore -d 'Also take files that .gitignore, .ignore or git\'s excludes leave out'
complete -c ag-ls -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-ls -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-ls -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-ls -s V -l version -d 'Print version'
