#!/usr/bin/env python3
"""Ask the model again at a state an agent reached, to measure a mechanism
before building it (`docs/models.md` reports what was measured this way).

A run's outcome is one draw: whether a change to what ag sends would have
helped shows only in many answers to the same state. So:

    python3 scripts/realmodel.d/resample.py record 8090 http://127.0.0.1:8089 DIR &
    scripts/realmodel --base-url http://127.0.0.1:8090/v1 ...

records every chat request the agents send (through a proxy that passes
everything on, streams included) as DIR/00000.json, 00001.json, ..., and

    python3 scripts/realmodel.d/resample.py list DIR
    python3 scripts/realmodel.d/resample.py sample DIR/00006.json 5 [--drop K]
        [--say TEXT] [--temperature T] [--tools read,grep] [--auto] [--url URL]

lists them (which agent, how many messages, the last one) and sends one of
them again N times, without streaming, printing each answer's calls (or its
text) on a line: as recorded, or with its last K messages dropped, the last
call answered otherwise (`--result TEXT`: what if ag had said this), TEXT
added as a user message, another temperature, only some of its tools
offered, or `tool_choice` left to the model. It needs the model server, so
it is never part of the tests or CI.
"""

import argparse
import glob
import http.server
import itertools
import json
import os
import sys
import threading
import urllib.error
import urllib.request


def record(port, upstream, folder):
    """Serves a proxy to `upstream` that saves each chat request's body."""
    os.makedirs(folder, exist_ok=True)
    numbers = itertools.count(len(glob.glob(os.path.join(folder, "*.json"))))
    lock = threading.Lock()

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args):
            pass

        def forward(self, body=None):
            request = urllib.request.Request(
                upstream + self.path, data=body, method=self.command,
                headers={"Content-Type": "application/json"})
            try:
                answer = urllib.request.urlopen(request, timeout=3600)
            except urllib.error.HTTPError as e:
                answer = e
            except OSError as e:
                self.send_error(502, f"the server at {upstream} did not answer: {e}")
                return
            self.send_response(answer.status)
            if answer.headers.get("Content-Type"):
                self.send_header("Content-Type", answer.headers["Content-Type"])
            # Chunked, so that a streamed answer goes on as it comes.
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := answer.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def do_GET(self):
            self.forward()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.endswith("/chat/completions"):
                with lock:
                    name = os.path.join(folder, "%05d.json" % next(numbers))
                with open(name, "wb") as f:
                    f.write(body)
            self.forward(body)

    print(f"recording the requests to {upstream} in {folder}, on http://127.0.0.1:{port}",
          file=sys.stderr)
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()


def agent_of(body):
    """Which agent sent a request, by the tools it offers."""
    names = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if "edit_lines" in names or "notify" in names:
        return "ag"
    if not names:
        return "mini-swe-agent"
    return ",".join(sorted(n for n in names if n))[:40]


def text_of(message):
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return (content or "").replace("\n", " ")


def list_requests(folder):
    for name in sorted(glob.glob(os.path.join(folder, "*.json"))):
        body = read_request(name)
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        print(os.path.basename(name), agent_of(body), len(messages),
              last.get("role", "-"), text_of(last)[:100])


def answer_line(message):
    calls = message.get("tool_calls") or []
    if calls:
        return " | ".join(c["function"]["name"] + " " + c["function"]["arguments"][:160]
                          .replace("\n", "\\n") for c in calls)
    return "TEXT: " + text_of(message)[:200]


def read_request(path):
    try:
        with open(path) as f:
            body = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"resample: {path} is not a recorded request ({e}); `resample.py list DIR` "
                 "shows the ones `record` saved")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        sys.exit(f"resample: {path} holds no chat request (no `messages` list); "
                 "`resample.py list DIR` shows the ones `record` saved")
    return body


def sample(args):
    body = read_request(args.request)
    body["stream"] = False
    body.pop("stream_options", None)
    if args.drop:
        body["messages"] = body["messages"][:-args.drop]
    if args.result is not None:
        last = body["messages"][-1]
        if last.get("role") != "tool":
            sys.exit(f"resample: --result replaces a tool's answer, and the last message of "
                     f"{args.request} (after --drop) is the {last.get('role')}'s: drop "
                     "fewer messages, or more")
        last["content"] = args.result
    if args.say:
        body["messages"].append({"role": "user", "content": args.say})
    if args.temperature is not None:
        body["temperature"] = args.temperature
    if args.tools:
        keep = set(args.tools.split(","))
        body["tools"] = [t for t in body.get("tools") or [] if t["function"]["name"] in keep]
    if args.auto:
        body.pop("tool_choice", None)
    data = json.dumps(body).encode()
    for i in range(args.n):
        request = urllib.request.Request(args.url, data=data,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=1800) as r:
                message = json.load(r)["choices"][0]["message"]
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"resample: the server at {args.url} gave no answer ({e}); "
                     "is it running (docs/models.md, *Small local models*, says how to start one)?")
        print(i, answer_line(message), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="proxy to the server, saving each chat request")
    r.add_argument("port", type=int)
    r.add_argument("upstream", help="the server, as http://127.0.0.1:8089")
    r.add_argument("folder")
    lst = sub.add_parser("list", help="the recorded requests, one a line")
    lst.add_argument("folder")
    s = sub.add_parser("sample", help="send a recorded request again, N times")
    s.add_argument("request")
    s.add_argument("n", type=int)
    s.add_argument("--drop", type=int, default=0, help="drop its last K messages first")
    s.add_argument("--result", help="then answer the last call with this text instead")
    s.add_argument("--say", help="then add this user message")
    s.add_argument("--temperature", type=float)
    s.add_argument("--tools", help="offer only these tools (names joined by commas)")
    s.add_argument("--auto", action="store_true", help="leave tool_choice to the model")
    s.add_argument("--url", default="http://127.0.0.1:8089/v1/chat/completions")
    args = parser.parse_args()
    if args.command == "record":
        record(args.port, args.upstream.rstrip("/"), args.folder)
    elif args.command == "list":
        list_requests(args.folder)
    else:
        sample(args)


if __name__ == "__main__":
    main()
