complete -c ag-mcp -l tools -d 'The ag tools to serve, comma-separated (`read,grep,find,ls`), or `none`. Default: read, write, edit, delete, patch, bash, grep, find, ls and git, those that are installed (beside ag-mcp, else on PATH)' -r
complete -c ag-mcp -l tool -d 'Also serve CMD, any executable that speaks ag\'s tool protocol (answers `CMD --schema`, takes JSONL calls on stdin). CMD is a shell command line, quoted as in a shell (`my-tool --flag "a b"`), run by `sh -c`. Repeatable' -r
complete -c ag-mcp -s C -l cwd -d 'Run in DIR, as if started there: relative paths in calls, `--root` and `--tool` resolve against it. For clients that start servers somewhere else than the project' -r -F
complete -c ag-mcp -l root -d 'Confine every path the ag tools touch to DIR (passed to each as `--root DIR`)' -r -F
complete -c ag-mcp -l pass-env -d 'Let the tools inherit the provider key variable NAME (repeatable). By default none of the key variables ag knows (the built-in providers\' *_API_KEY names and every `api_key_env` of $AG_HOME/models.json) reaches a tool or anything it starts' -r
complete -c ag-mcp -l text-only -d 'Leave the tools\' details (file hash, line counts, exit code...) out of results\' `_meta`, sending only the text and pictures. Results never carry `structuredContent`, which clients such as Claude Code and Codex show the model in place of the text; the details are in `_meta["ag/details"]`, which clients do not show the model'
complete -c ag-mcp -l list -d 'Print the MCP definitions of the tools that would be served, one JSON object per line, and exit'
complete -c ag-mcp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-mcp -s V -l version -d 'Print version'
