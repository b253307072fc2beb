complete -c ag-lsp -l file -d 'The file (instead of a FILE argument)' -r
complete -c ag-lsp -s s -l symbol -d 'The symbol\'s name as the file writes it (`speak`, or `Dog.speak` for the one declared in `Dog`)' -r
complete -c ag-lsp -s l -l line -d 'The line (from 1) the symbol is on, or near: which of several places of the same name is meant' -r
complete -c ag-lsp -s c -l column -d 'The column (from 1, in characters), with --line: the position instead of a name' -r
complete -c ag-lsp -s q -l query -d 'For symbols: look through the workspace for symbols whose name matches this, instead of outlining a file' -r
complete -c ag-lsp -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-lsp -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-lsp -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-lsp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-lsp -s V -l version -d 'Print version'
