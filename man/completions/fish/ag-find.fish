complete -c ag-find -l sort -d 'The order: "modified" (most recently modified first, the default) or "path"' -r -f -a "modified\t''
path\t''"
complete -c ag-find -s n -l limit -d 'Most files to list (default 100, at most 100000)' -r
complete -c ag-find -l exclude-pattern -l exclude -d 'Skip files and directories matching this glob, or several separated by commas: "*.min.js", "tests", "vendor/**"' -r
complete -c ag-find -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-find -l include-hidden -l hidden -d 'Also take hidden files and directories (names starting with `.`)'
complete -c ag-find -l include-ignored -l no-ignore -d 'Also take files that .gitignore, .ignore or git\'s excludes leave out'
complete -c ag-find -s L -l follow-symlinks -d 'Follow symbolic links to files and directories'
complete -c ag-find -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-find -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-find -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-find -s V -l version -d 'Print version'
