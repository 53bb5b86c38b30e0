# SPDX-License-Identifier: MIT
"""pyweb's client: python3 client.py PORT SECONDS. Four threads GET
/primes, /json and /page in turn over keep-alive connections for SECONDS,
then one GET /quit; prints "OK FAILED" (answers 200 and others)."""
import http.client
import sys
import threading
import time

counts = [0, 0]
lock = threading.Lock()


def client_loop(port, end):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    paths = ["/primes", "/json", "/page"]
    i = 0
    while time.monotonic() < end:
        conn.request("GET", paths[i % 3])
        resp = conn.getresponse()
        resp.read()
        with lock:
            counts[0 if resp.status == 200 else 1] += 1
        i += 1
    conn.close()


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    end = time.monotonic() + seconds
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
