complete -c ag-edit -l old -l old-string -d 'The exact text to replace, including whitespace and indentation. It must occur exactly once unless `replace_all` is set; include a few surrounding lines to make it unique' -r
complete -c ag-edit -l new -l new-string -d 'The text to put in its place (an empty string deletes `old_string`)' -r
complete -c ag-edit -l code-edit -d 'A code sketch: the new code of the changed part, with unchanged code left out behind marker lines such as `// ... existing code ...` (in the file\'s comment syntax: `# ...`, `<!-- ... -->`, `/* ... */`, ...). Begin and end each changed stretch with unchanged lines copied from the file, so it can be placed. A stretch with an unchanged line only before it is inserted right after that line, unless its lines are indented under that line and the marker after them is not: then they replace the rest of that block\'s body, if their last line looks like a changed version of the body\'s last line (else refused). Without markers it must be the whole file. Use it instead of old_string/new_string' -r
complete -c ag-edit -l instructions -d 'With code_edit: one sentence saying what it changes (used if a planner model has to place it)' -r
complete -c ag-edit -l expected-hash -d 'The `hash` from the read (or the last write or edit) of this file. When given, the edit is refused if the file has changed since' -r
complete -c ag-edit -l planner -d 'A model (`provider/model`) that places a code_edit its unchanged lines cannot place, as line edits; also AG_EDIT_PLANNER. Without one, such a code_edit is refused. It is asked through ag-llm (beside ag-edit, else on PATH), which reads the provider\'s key from the environment; under ag-loop, which gives tools no provider key, pass it with `ag-loop --pass-env NAME`' -r
complete -c ag-edit -l planner-base-url -d 'The planner\'s base URL instead of its provider\'s (`http://127.0.0.1:11434/v1`); also AG_EDIT_PLANNER_BASE_URL' -r
complete -c ag-edit -l edits -d 'Command line only: `edits` as a JSON array' -r
complete -c ag-edit -l line-edits -d 'Command line only: `line_edits` as a JSON array' -r
complete -c ag-edit -l lines -d 'Command line only: replace lines START:END (or one line N, or insert before START with START:START-1) with the text of --new' -r
complete -c ag-edit -l root -d 'Confine every path to DIR (after symlinks are resolved); paths outside it are refused. Each file is opened from DIR in one step (openat2 RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot lead outside; symlinks that stay inside DIR work' -r -F
complete -c ag-edit -l all -l replace-all -d 'Replace every occurrence of `old_string` instead of requiring exactly one'
complete -c ag-edit -l schema -d 'Print the tool\'s definition (name, description, JSON Schema of its arguments) as one JSON object and exit'
complete -c ag-edit -l json -d 'Print the result as a JSON object (`{"output","details","is_error"}`, the notes inside `output`) instead of the plain output text'
complete -c ag-edit -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-edit -s V -l version -d 'Print version'
