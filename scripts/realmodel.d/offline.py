"""No network but the model server, for an agent that scripts/realmodel runs.

The agent runs in a network namespace of its own (`unshare --user
--map-root-user --net`, or `unshare --net` for root where user namespaces are
off), where there is nothing but a loopback interface: no route out, no DNS.
On that loopback, 127.0.0.1:PORT answers as the model server does: each
connection is carried over a Unix socket (a file, which both namespaces see)
to the runner, whose `Bridge` opens the matching connection to the real
server. Anything else the agent reaches for (an update check, a model list,
a plugin download, a telemetry ping) fails at once, as it would on a machine
without a network.

Inside the namespace:

    python3 offline.py SOCKET PORT -- ARGV...

brings the loopback up, listens on 127.0.0.1:PORT, runs ARGV as its child
with stdin, stdout and stderr passed through, and exits with its status.
"""

import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys
import threading

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def pump(src, dst):
    """Copies src to dst until src ends, then says so to dst."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def join(a, b):
    """Carries bytes both ways between two connected sockets, in threads."""

    def both():
        t = threading.Thread(target=pump, args=(b, a), daemon=True)
        t.start()
        pump(a, b)
        t.join()
        a.close()
        b.close()

    threading.Thread(target=both, daemon=True).start()


def serve(listener, connect):
    """Accepts connections on `listener`; each is joined to a new `connect()`."""

    def loop():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            try:
                other = connect()
            except OSError:
                conn.close()
                continue
            join(conn, other)

    threading.Thread(target=loop, daemon=True).start()


class Bridge:
    """The runner's end: a Unix socket at `path` whose connections go on to
    host:port, the model server."""

    def __init__(self, path, host, port):
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        serve(self.listener, lambda: socket.create_connection((host, port), timeout=None))

    def close(self):
        self.listener.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


def loopback_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ifr = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0))
        flags = struct.unpack("16sH22x", ifr)[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))
    finally:
        s.close()


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: offline.py SOCKET PORT -- ARGV...")
    sock_path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    loopback_up()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)

    def to_runner():
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sock_path)
        return c

    serve(listener, to_runner)
    child = subprocess.Popen(argv)

    def forward(signum, _frame):
        child.send_signal(signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
