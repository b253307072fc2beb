"""A scripted stand-in for the model server, to try scripts/realmodel's
wiring (installs, command lines, the network namespace, reading each
agent's log, the turn limit, the checks) without a model and at no cost:

    python3 scripts/realmodel.d/fake_server.py 18089 &
    scripts/realmodel --base-url http://127.0.0.1:18089/v1 --only "create a file"

It answers /v1/models, llama.cpp's /props and /v1/chat/completions (streamed
or not). Its first answer in a conversation calls the `bash` tool (each
required argument filled) to write hello.py, which solves "create a file";
the next ends the run: with a call of `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`
when bash is the only tool (mini-swe-agent's way to end), the same two as
fenced blocks when the prompt asks for them (mini-swe-agent's text-based
set-up), else with the
words "Done: hello.py prints Hello, world! The port is 5177.". Measurements
of a real model are not to be had from it.
"""

import http.server
import json
import sys
import time

MODEL = "fake-model"
WRITE = "printf 'print(\"Hello, world!\")\\n' > hello.py"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
DONE = "Done: hello.py prints Hello, world! The port is 5177."


def reply(body):
    """The scripted answer to a chat request: (text, tool call or None)."""
    tools = [t.get("function", t) for t in body.get("tools") or []]
    turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    bash = next((t for t in tools if t.get("name") == "bash"), None)
    fence = "mswea_bash_command"
    if bash is None and any(fence in str(m.get("content")) for m in body.get("messages") or []):
        # mini-swe-agent's text-based set-up: one command in a fenced block.
        if turn > 1:
            return DONE, None
        command = WRITE if turn == 0 else SUBMIT
        return f"THOUGHT: one step.\n\n```{fence}\n{command}\n```", None
    if bash is None:
        return DONE, None
    if turn == 0:
        command = WRITE
    elif len(tools) == 1 and turn == 1:
        command = SUBMIT
    else:
        return DONE, None
    params = bash.get("parameters") or {}
    args = {}
    for name in params.get("required") or []:
        kind = ((params.get("properties") or {}).get(name) or {}).get("type")
        args[name] = {"integer": 1, "number": 1, "boolean": False}.get(kind, "x")
    args["command"] = command
    return "", {"id": f"call_{turn}", "type": "function", "function": {"name": "bash", "arguments": json.dumps(args)}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        elif self.path.rstrip("/").endswith("/props"):
            self.send_json({"default_generation_settings": {"n_ctx": 32768}})
        else:
            self.send_error(404)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_error(404)
            return
        text, call = reply(body)
        finish = "tool_calls" if call else "stop"
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": MODEL}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text or None}
            if call:
                message["tool_calls"] = [call]
            self.send_json({**base, "object": "chat.completion", "usage": usage,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        delta = {"role": "assistant", "content": text}
        if call:
            delta["tool_calls"] = [{"index": 0, **call}]
        chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {"choices": [], "usage": usage}]
        for c in chunks:
            self.wfile.write(f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', **c})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *a):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18089
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
