# SPDX-License-Identifier: MIT
"""pyweb: a small web app on Python's http.server under load (issue 33).

python3 app.py CPU_SECONDS CLOCKS starts a ThreadingHTTPServer on
127.0.0.1, then client.py (4 threads of GETs) against it, and serves until
the client asks /quit: the client stops once an answer says the routes
used CPU_SECONDS of CPU in all (their thread_time(), whatever else runs on
the host). Three routes of its own do the work:
/primes (pure Python), /json (json.dumps and loads of a record list,
through json's C accelerators) and /page (str formatting and join). Each
handler times itself with time.thread_time(); at the end CLOCKS gets one
line per route, "route NAME SECONDS REQUESTS", and the client's count of
answers, "client OK FAILED": the oracle of tests/cli/3340.
"""
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

clocks = {"route_primes": [0.0, 0], "route_json": [0.0, 0], "route_page": [0.0, 0]}
lock = threading.Lock()
budget = 0.0


def route_primes():
    found = []
    for n in range(2, 40000):
        for p in found:
            if p * p > n:
                found.append(n)
                break
            if n % p == 0:
                break
        else:
            found.append(n)
    return ("%d primes, the last %d\n" % (len(found), found[-1])).encode()


# The work comes in pieces of 300 rows: each piece's strings (20-30 KB)
# stay below glibc's mmap threshold (128 KiB), so the routes do not
# munmap and madvise at each request. Samples taken in the TLB flush such
# calls make lose their Python frames (docs/python.md), which would bias
# the routes' shares.
def route_json():
    count = size = 0
    for k in range(10):
        rows = [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", str(i)], "price": i * 1.25}
                for i in range(k * 300, k * 300 + 300)]
        text = json.dumps(rows)
        count += len(json.loads(text))
        size += len(text)
    return json.dumps({"count": count, "bytes": size}).encode()


def route_page():
    size = 0
    for k in range(40):
        lines = []
        for i in range(k * 300, k * 300 + 300):
            lines.append("<tr><td>%d</td><td>%s</td><td>%.2f</td></tr>" % (i, "row-%04d" % i, i / 7))
        size += len("<table>" + "".join(lines) + "</table>\n")
    return ("%d bytes of table\n" % size).encode()


ROUTES = {"/primes": route_primes, "/json": route_json, "/page": route_page}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/quit":
            self.reply(b"bye\n")
            threading.Thread(target=self.server.shutdown).start()
            return
        fn = ROUTES.get(self.path)
        if fn is None:
            self.send_error(404)
            return
        t0 = time.thread_time()
        body = fn()
        dt = time.thread_time() - t0
        with lock:
            clocks[fn.__name__][0] += dt
            clocks[fn.__name__][1] += 1
            done = sum(t for t, _ in clocks.values()) >= budget
        self.reply(body, done)

    def reply(self, body, done=False):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if done:
            self.send_header("X-Done", "1")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    global budget
    budget, out = float(sys.argv[1]), sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    client = subprocess.Popen([sys.executable, __file__.replace("app.py", "client.py"),
                               str(server.server_address[1])],
                              stdout=subprocess.PIPE, text=True)
    server.serve_forever()
    answer = client.communicate()[0].split()
    server.server_close()
    with open(out, "w") as f:
        for name, (t, n) in clocks.items():
            f.write("route %s %.6f %d\n" % (name, t, n))
        f.write("client %s\n" % " ".join(answer))
    return client.returncode


if __name__ == "__main__":
    sys.exit(main())
