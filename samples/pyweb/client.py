# SPDX-License-Identifier: MIT
"""pyweb's client: python3 client.py PORT. Four threads GET /primes,
/json and /page in turn over keep-alive connections until an answer says
X-Done (the server's routes used their CPU budget; at most 300 s), then
one GET /quit; prints "OK FAILED" (answers 200 and others)."""
import http.client
import sys
import threading
import time

counts = [0, 0]
lock = threading.Lock()
done = threading.Event()


def client_loop(port, end):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    paths = ["/primes", "/json", "/page"]
    i = 0
    while not done.is_set() and time.monotonic() < end:
        conn.request("GET", paths[i % 3])
        resp = conn.getresponse()
        resp.read()
        with lock:
            counts[0 if resp.status == 200 else 1] += 1
        if resp.getheader("X-Done"):
            done.set()
        i += 1
    conn.close()


def main():
    port = int(sys.argv[1])
    end = time.monotonic() + 300
    threads = [threading.Thread(target=client_loop, args=(port, end)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/quit")
    conn.getresponse().read()
    print(counts[0], counts[1])


if __name__ == "__main__":
    main()
