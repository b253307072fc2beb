complete -c ag-browser -l url -d 'The page to open: http(s)://..., a bare host:port (taken as http), or a file path inside the workspace' -r
complete -c ag-browser -l ref -d 'An element\'s ref from the latest snapshot (e3)' -r
complete -c ag-browser -l text -d 'For type: the text (it replaces what the field held). For wait: the text to wait for' -r
complete -c ag-browser -l key -d 'A key: Enter, Tab, Escape, Backspace, ArrowDown, a character, or with modifiers (Control+a, Shift+Tab)' -r
complete -c ag-browser -l value -d 'The options to choose, by value or by label' -r
complete -c ag-browser -l timeout -d 'For wait: seconds to wait at most (default 10, at most 60)' -r
complete -c ag-browser -l expression -d 'For evaluate: JavaScript, an expression or a function body\'s value (a promise is awaited)' -r
complete -c ag-browser -l tab -d 'A tab\'s number, as tab_list shows it' -r
complete -c ag-browser -l offset -d 'For snapshot: the line to start from, to read on in a long page' -r
complete -c ag-browser -l out -d 'For screenshot from a shell: write the PNG to FILE rather than into the result' -r -F
complete -c ag-browser -l allow-host -d 'Let HOST be loaded too, beyond loopback (repeatable): a name (`docs.rs`), every name below a domain (`*.example.org`), an address, or `*` for any public host. Under ag-loop the run\'s network policy is added (ag-loop --allow-host, --allow-net)' -r
complete -c ag-browser -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-browser -l submit -d 'For type: press Enter after the text'
complete -c ag-browser -l full-page -d 'For screenshot: the whole page, not just the viewport'
complete -c ag-browser -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-browser -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-browser -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-browser -s V -l version -d 'Print version'
