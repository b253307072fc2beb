complete -c ag-acp -s m -l model -d 'The model as provider/model, passed to ag-loop as -m' -r
complete -c ag-acp -l mode -d 'The mode new sessions start in' -r -f -a "ask\t'ag-gate\'s default policy: the editor is asked about risky calls (recursive deletes, force pushes, writes outside the workspace...)'
ask-always\t'Every call that changes something is asked about; reading and searching are not'
auto\t'Nobody is asked: what no rule denies runs, confined by the sandbox to the workspace (what it blocks stays blocked)'
read-only\t'Only the read-only tools, confined read-only'"
complete -c ag-acp -l permission-timeout -d 'Seconds the editor has to answer a permission request before the call is refused, as nobody approving refuses it in an unattended run (0 waits for ever); also how long a question of the model\'s waits for an editor\'s form' -r
complete -c ag-acp -l loop-cmd -d 'Run this shell command line instead of `ag-loop --json` (with sh -c; the session, mode and model flags and the arguments after `--` are appended). It must speak ag-loop\'s protocol' -r
complete -c ag-acp -l editor-fs -d 'Where the editor offers to read and write files (`fs` in its capabilities), the model\'s `read` and `write` go through it: the editor\'s buffers, unsaved changes included, are read and written, and the editor decides when they are saved. Paths outside the session\'s directory are refused; directories, images and binary files are read from disk. The other tools (edit, bash...) still work on disk, in ag\'s sandbox. Not with `--tools` after `--`'
complete -c ag-acp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-acp -s V -l version -d 'Print version'
