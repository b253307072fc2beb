"""A scripted model server on 127.0.0.1 that answers at once.

HTTP/1.1 with keep-alive, one thread per connection, connections counted.
A handler maps each request to a response: a whole body, or a generator of
chunks sent with chunked transfer encoding (for streams whose timing
matters). `chat_sse` renders a scripted turn as an OpenAI Chat Completions
SSE stream, the way a real server splits it.
"""

import json
import socket
import threading


class Response:
    def __init__(self, body=b"", status=200, content_type="text/event-stream", chunks=None, headers=None):
        self.body = body
        self.status = status
        self.content_type = content_type
        self.chunks = chunks
        self.headers = headers or {}


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}


class ModelServer:
    """handler(method, path, headers, body_bytes, n) -> Response, where n
    counts the requests so far (0-based)."""

    def __init__(self, handler):
        self.handler = handler
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.requests = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def reset(self):
        with self.lock:
            self.connections = 0
            self.requests = []

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        reader = conn.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                parts = line.decode("latin-1").split()
                if len(parts) < 2:
                    return
                method, path = parts[0], parts[1]
                headers = {}
                while True:
                    h = reader.readline()
                    if not h or h in (b"\r\n", b"\n"):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(reader.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            reader.readline()
                            break
                        body += reader.read(size)
                        reader.readline()
                else:
                    body = reader.read(int(headers.get("content-length", "0") or 0))
                with self.lock:
                    n = len(self.requests)
                    self.requests.append((method, path, body))
                resp = self.handler(method, path, headers, body, n)
                head = f"HTTP/1.1 {resp.status} {REASONS.get(resp.status, 'OK')}\r\ncontent-type: {resp.content_type}\r\n"
                for k, v in resp.headers.items():
                    head += f"{k}: {v}\r\n"
                if method == "HEAD":
                    conn.sendall((head + "content-length: 0\r\n\r\n").encode())
                elif resp.chunks is None:
                    conn.sendall((head + f"content-length: {len(resp.body)}\r\n\r\n").encode() + resp.body)
                else:
                    conn.sendall((head + "transfer-encoding: chunked\r\n\r\n").encode())
                    for c in resp.chunks:
                        if c:
                            conn.sendall(b"%x\r\n%s\r\n" % (len(c), c))
                    conn.sendall(b"0\r\n\r\n")
                if headers.get("connection", "").lower() == "close":
                    return
        except (OSError, ValueError):
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass


def chat_chunk(delta, finish=None, model="scripted"):
    v = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(v, separators=(",", ":")).encode() + b"\n\n"


def chat_sse(turn, n, piece=7):
    """turn: {"text": str} or {"calls": [(name, arguments), ...]}."""
    out = [chat_chunk({"role": "assistant", "content": ""})]
    if "text" in turn:
        t = turn["text"]
        for i in range(0, len(t), piece):
            out.append(chat_chunk({"content": t[i : i + piece]}))
        finish = "stop"
    else:
        for i, (name, args) in enumerate(turn["calls"]):
            text = json.dumps(args)
            half = len(text) // 2
            out.append(
                chat_chunk(
                    {
                        "tool_calls": [
                            {"index": i, "id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": text[:half]}}
                        ]
                    }
                )
            )
            out.append(chat_chunk({"tool_calls": [{"index": i, "function": {"arguments": text[half:]}}]}))
        finish = "tool_calls"
    out.append(chat_chunk({}, finish))
    usage = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "scripted",
        "choices": [],
        "usage": {"prompt_tokens": 1000 + n, "completion_tokens": 20, "total_tokens": 1020 + n},
    }
    out.append(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
    return b"".join(out)


def scripted_chat(turns):
    """A handler answering the n-th chat request with turns[n] (a note that
    the script has ended past the end). Only chat requests count: a client's
    other requests (ag-loop asks an Ollama server for the model's context
    window first) must not move the script on."""
    chats = [0]

    def handle(method, path, headers, body, n):
        if n == 0:  # the first request since the server was reset
            chats[0] = 0
        if method != "POST" or not path.endswith("/chat/completions"):
            return Response(b'{"error":{"message":"not found"}}', 404, "application/json")
        i = chats[0]
        chats[0] += 1
        turn = turns[i] if i < len(turns) else {"text": "(the script has ended)"}
        return Response(chat_sse(turn, i))

    return handle
