complete -c ag-grep -l case-sensitive -d 'true: match case exactly; false: ignore case. Omit for smart case: case is ignored unless the query has an uppercase letter' -r -f -a "true\t''
false\t''"
complete -c ag-grep -s g -l include-pattern -l include -d 'Only search files matching this glob, or several separated by commas: "*.rs", "*.{ts,tsx}", "src/**/*.py". A glob without `/` matches file names at any depth; one with `/` matches paths below `path`' -r
complete -c ag-grep -l exclude-pattern -l exclude -d 'Skip files and directories matching this glob, or several separated by commas: "*.min.js", "tests", "vendor/**"' -r
complete -c ag-grep -s C -l context -d 'Lines of context to show before and after each match (0 to 10)' -r
complete -c ag-grep -s m -l max-matches -d 'Most matching lines to show (default 50, at most 5000). The first ones in path order are shown' -r
complete -c ag-grep -l skip -d 'Matching lines to leave out before the first one shown: the next page of a search whose output said "Next page: skip=N"' -r
complete -c ag-grep -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-grep -s F -l literal -d 'Search for `query` as exact text: no character is special'
complete -c ag-grep -l include-hidden -l hidden -d 'Also take hidden files and directories (names starting with `.`)'
complete -c ag-grep -l include-ignored -l no-ignore -d 'Also take files that .gitignore, .ignore or git\'s excludes leave out'
complete -c ag-grep -s L -l follow-symlinks -d 'Follow symbolic links to files and directories'
complete -c ag-grep -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-grep -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-grep -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-grep -s V -l version -d 'Print version'
