"""scripts/bench's ag-fetch case: a 2 MB article page served on 127.0.0.1,
turned into markdown by ag-fetch, beside html2text (PyPI) reading the same
page through curl. Both sides fetch over loopback, so the difference is the
conversion (and ag-fetch's start-up)."""

import functools
import http.server
import subprocess
import sys
import threading

from harness import Row, compare


def page(size):
    """A documentation page of about `size` bytes: a site header and
    navigation, then an article of sections with paragraphs, links, inline
    code, code blocks, tables and lists, then a footer."""
    head = (
        "<!doctype html><html><head><title>Reference</title><style>body{margin:0}</style>"
        "<script>window.analytics = [];</script></head><body>"
        '<header class="site"><a href="/">Home</a><nav>' + "".join(f'<a href="/s{i}">Section {i}</a>' for i in range(40)) + "</nav></header>"
        "<main><article><h1>The reference</h1>"
    )
    parts = [head]
    n = 0
    while sum(map(len, parts)) < size:
        parts.append(
            f"<h2 id=\"s{n}\">Section {n}</h2>"
            f"<p>Call <code>parse_{n}()</code> to read the input, as <a href=\"/api/parse_{n}\">its page</a> says; "
            "it returns an error, with the line and column, when the input is not well formed, and a value otherwise.</p>"
            f"<pre><code class=\"language-rust\">fn parse_{n}(input: &amp;str) -&gt; Result&lt;Value, Error&gt; {{\n    todo!()\n}}</code></pre>"
            "<table><tr><th>option</th><th>default</th><th>meaning</th></tr>"
            + "".join(f"<tr><td>opt_{n}_{k}</td><td>{k}</td><td>what option {k} changes</td></tr>" for k in range(5))
            + "</table><ul><li>first note</li><li>second note, with <em>emphasis</em></li></ul>"
        )
        n += 1
    parts.append("</article><aside>Related pages</aside></main><footer>Copyright</footer></body></html>")
    return "".join(parts)


def html2text_command(log):
    """`python3 -m html2text`, installed from PyPI when missing; None when
    it cannot be had."""
    probe = [sys.executable, "-c", "import html2text"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        log("installing html2text from PyPI (pip install html2text)")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "html2text"], capture_output=True)
        if subprocess.run(probe, capture_output=True).returncode != 0:
            return None
    return f"{sys.executable} -m html2text"


def measure(suite):
    if "curl" not in suite.have:
        return [Row.unavailable("ag-fetch 2 MB page to markdown", "curl not available")]
    ref = html2text_command(suite.log)
    if ref is None:
        return [Row.unavailable("ag-fetch 2 MB page to markdown", "html2text could not be installed from PyPI")]
    served = suite.tmp / "served"
    served.mkdir(exist_ok=True)
    (served / "page.html").write_text(page(2_000_000))
    handler = functools.partial(QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/page.html"
    out = suite.tmp / "fetch.out"
    try:
        a, b = compare(
            [suite.bin("ag-fetch"), "--allow-host", "127.0.0.1", url],
            ["sh", "-c", f"curl -s {url} | {ref}"],
            suite.runs(9, 3),
            env=suite.env,
            stdout=out,
        )
    finally:
        server.shutdown()
    note = "ag-fetch also finds the main content and prints its first page (100,000 characters); html2text converts the whole page"
    ref_label = "curl, then html2text"
    return [
        Row.timed("ag-fetch 2 MB HTML page to markdown", a, b, ref_label, ("ratio", 1.0), note=note),
        Row.memory("ag-fetch 2 MB HTML page: peak memory", a, b, ref_label, None),
    ]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
