complete -c ag-llm -s m -l model -d 'The model, as provider/model (`anthropic/claude-sonnet-4-5`, `openai/gpt-5`, `google/gemini-2.5-pro`, `ollama/qwen3`). Without it, the `AG_MODEL` environment variable names the model' -r
complete -c ag-llm -s s -l system -d 'The system prompt' -r
complete -c ag-llm -l reasoning -d 'How hard the model should think, for models that reason' -r -f -a "off\t'No reasoning, or the least the model takes (OpenAI: "none" for GPT-5.1 and later, "minimal" for GPT-5, "low" for Codex and o-series)'
low\t'A little'
medium\t'Some'
high\t'A lot'"
complete -c ag-llm -l max-tokens -d 'The most tokens the answer may have (default: the model\'s `max_output` from the model table or models.json, sent on every API)' -r
complete -c ag-llm -l temperature -d 'Sampling temperature, 0 or more (default: the provider\'s own)' -r
complete -c ag-llm -l base-url -d 'Send the request to this base URL instead of the provider\'s (`http://127.0.0.1:8080/v1`)' -r
complete -c ag-llm -l api-key -d 'The API key, instead of the provider\'s environment variable' -r
complete -c ag-llm -l tools -d 'Tool definitions the model may call: a JSON array, or one definition per line as `ag-read --schema` prints them' -r -F
complete -c ag-llm -l record -d 'Save each request and the raw response stream in DIR' -r -F
complete -c ag-llm -l replay -d 'Answer from the recordings in DIR (made with --record), with no network' -r -F
complete -c ag-llm -l idle-timeout -d 'Give up on a response that sends nothing (no byte, before or after its headers) for SECONDS; the attempt is tried once more, and a second silence ends the call (so a call waits twice SECONDS at most on a silent server). Default 300, enough for a CPU server\'s silent prompt processing; a provider\'s `idle_timeout` in models.json sets its own; 0 waits forever' -r
complete -c ag-llm -l output-schema -d 'Make the answer one JSON value valid against this JSON Schema: a file, or inline JSON starting with `{` (a request\'s `output_schema` field says the same). Sent in the provider\'s own structured-output field where the model supports it (`--list-models` shows which), else as an instruction in the system prompt. The answer is checked (a ```json fence around it is accepted); one that does not match exits 1 with the problems on stderr. A broken schema exits 2' -r
complete -c ag-llm -l json -d 'Print the JSONL event stream instead of the answer\'s text'
complete -c ag-llm -l list-models -d 'List the configured providers and models, and exit'
complete -c ag-llm -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ag-llm -s V -l version -d 'Print version'
