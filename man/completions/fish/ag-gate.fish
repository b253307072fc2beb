complete -c ag-gate -l approval -d 'When to ask a person: `never` allows everything not denied, `dangerous` asks for the calls the classifier flags, `always` asks for every call not allowed. Default: the config file\'s `approval`, else `dangerous` when the request says `interactive`, `never` otherwise' -r -f -a "never\t'Never ask: allow everything that is not denied'
dangerous\t'Ask for the calls the classifier flags and the `ask` rules match'
always\t'Ask for every call that the allow list and `allow` rules do not cover'"
complete -c ag-gate -l allow -d 'Tools always allowed, comma-separated (`read,grep,find,ls`)' -r
complete -c ag-gate -l deny -d 'Tools always denied, comma-separated; the model is told to do without them' -r
complete -c ag-gate -l config -d 'Read rules from FILE (TOML) instead of `$AG_HOME/gate.toml`' -r -F
complete -c ag-gate -l no-config -d 'Read no config file, not even `$AG_HOME/gate.toml`'
complete -c ag-gate -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-gate -s V -l version -d 'Print version'
