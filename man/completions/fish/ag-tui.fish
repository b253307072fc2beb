complete -c ag-tui -l file -d 'Attach FILE to the first prompt (repeatable; with a PROMPT): an image, a PDF (its text) or a text file, read by ag-loop as `ag-loop --attach` reads it. Later, /attach FILE attaches to the next prompt, and a word @PATH naming a file in any prompt attaches it' -r
complete -c ag-tui -l session -d 'Resume the session with this id (or unique prefix or suffix)' -r
complete -c ag-tui -s m -l model -d 'The model as provider/model, passed to ag-loop as -m (a resumed session otherwise keeps its own)' -r
complete -c ag-tui -l loop-cmd -d 'Run this shell command line instead of `ag-loop --json` (with sh -c; `--approve-on-stdin`, the session and model flags and the arguments after `--` are appended). It must print ag-loop\'s JSON events' -r
complete -c ag-tui -l attach -d 'Join a live session of ag-serve (its id, or a unique prefix or suffix) through `ag-serve attach`: its history, then its live events, shared with every other client on it. Quitting detaches and leaves it running; a session that is not running is resumed. Needs a running `ag-serve`' -r
complete -c ag-tui -s c -l continue -d 'Resume the latest session of the working directory'
complete -c ag-tui -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-tui -s V -l version -d 'Print version'
