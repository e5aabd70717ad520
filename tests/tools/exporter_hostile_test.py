#!/usr/bin/env python3
"""Hostile clients against `migscope exporter` on the fake NVML (issue 45): idle connections, slow
request heads, big and endless request bodies, SIGTERM under load and a second exporter on the same
address, while a prober scrapes /metrics and times every answer.

Usage: exporter_hostile_test.py MIGSCOPE FAKE_NVML_LIBRARY FAKE_NVML_CONFIG
Prints each figure it measures and exits 1 when a requirement fails. Every client loop is bounded in
count and time and talks to 127.0.0.1 only; the whole run takes about 25 s.
"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# What the exporter promises (docs/exporter.md, docs/limits.md).
SCRAPE_LIMIT_S = 1.0          # every /metrics answer while the hostile clients run
REQUEST_TIMEOUT_S = 5.0       # a request's head must arrive within it, else the connection closes
RSS_GROWTH_LIMIT = 1.5        # RSS after the hostile clients / RSS before them
SIGTERM_LIMIT_S = 2.0         # from SIGTERM to exit, whatever the clients do
BODY_LIMIT_BYTES = 1024       # larger request bodies are refused with 413 unread

IDLE_CLIENTS = 200
SLOW_CLIENTS = 50
BIG_BODY_CLIENTS = 16
BIG_BODY_BYTES = 100 * 1000 * 1000
CHUNKED_CLIENTS = 4

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def scrape(port, timeout_s=SCRAPE_LIMIT_S, path="/metrics"):
    """One GET on a fresh connection: (seconds, status, body); status 0 when no answer in time."""
    start = time.monotonic()
    deadline = start + timeout_s
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    except OSError:
        return time.monotonic() - start, 0, b""
    with s:
        try:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                      .encode())
            data = b""
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return time.monotonic() - start, 0, data
                s.settimeout(left)
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                head, sep, body = data.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
                if sep and m and len(body) >= int(m.group(1)):
                    break
        except OSError:
            return time.monotonic() - start, 0, b""
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return time.monotonic() - start, int(m.group(1)) if m else 0, data.partition(b"\r\n\r\n")[2]


class Prober(threading.Thread):
    """Scrapes /metrics every 0.2 s until stopped; keeps each answer's time and status."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.results, self.stopping = port, [], threading.Event()

    def run(self):
        while not self.stopping.is_set():
            seconds, status, body = scrape(self.port)
            ok = status == 200 and b"migscope_gpu_up{" in body
            self.results.append((seconds, ok))
            self.stopping.wait(0.2)

    def finish(self, phase):
        self.stopping.set()
        self.join()
        answered = [s for s, ok in self.results if ok]
        worst = max((s for s, _ in self.results), default=0)
        print(f"      {phase}: {len(answered)} of {len(self.results)} scrapes answered, slowest "
              f"{worst * 1000:.0f} ms")
        check(self.results and len(answered) == len(self.results) and worst < SCRAPE_LIMIT_S,
              f"{phase}: every /metrics answered within {SCRAPE_LIMIT_S:g} s")


def open_idle(port, count):
    socks = []
    for _ in range(count):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            break
    return socks


def closed_by_server(s):
    """True when the server closed the connection (EOF or reset), without waiting."""
    try:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        return s.recv(4096, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class SlowHeads(threading.Thread):
    """Clients that send a request head one byte every 0.2 s and never finish it."""

    def __init__(self, port, count):
        super().__init__(daemon=True)
        self.socks = open_idle(port, count)
        self.stopping = threading.Event()
        for s in self.socks:
            try:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            except OSError:
                pass

    def run(self):
        while not self.stopping.wait(0.2):
            for s in self.socks:
                try:
                    s.send(b"X", socket.MSG_DONTWAIT)
                except OSError:
                    pass

    def close(self):
        self.stopping.set()
        self.join()
        for s in self.socks:
            s.close()


def wait_closed(socks, limit_s):
    """Seconds until the server closed every socket (None if some were open after limit_s)."""
    start = time.monotonic()
    open_socks = list(socks)
    while open_socks and time.monotonic() - start < limit_s:
        open_socks = [s for s in open_socks if not closed_by_server(s)]
        time.sleep(0.1)
    return None if open_socks else time.monotonic() - start


def big_body(port, results, chunked=False, limit_s=10.0):
    """Sends a 100 MB body (or chunks without end); notes the status and the bytes sent first."""
    start = time.monotonic()
    sent, status = 0, 0
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        results.append((0, 0, 0.0))
        return
    with s:
        head = "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (
            "Transfer-Encoding: chunked\r\n\r\n" if chunked else
            f"Content-Length: {BIG_BODY_BYTES}\r\n\r\n")
        s.sendall(head.encode())
        s.setblocking(False)
        piece = b"x" * 65536
        if chunked:
            piece = b"10000\r\n" + piece + b"\r\n"
        data = b""
        while time.monotonic() - start < limit_s:
            writable = [s] if (chunked or sent < BIG_BODY_BYTES) else []
            r, w, _ = select.select([s], writable, [], 0.05)
            if r:
                try:
                    chunk = s.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
                if b"\r\n\r\n" in data:
                    break
            if w:
                try:
                    sent += s.send(piece)
                except BlockingIOError:
                    pass
                except OSError:  # closed after its answer: the answer may wait unread
                    try:
                        data += s.recv(65536)
                    except OSError:
                        pass
                    break
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        status = int(m.group(1)) if m else 0
    results.append((status, sent, time.monotonic() - start))


def big_bodies(port, results, chunked=False, seconds=2.0):
    """big_body again and again for `seconds`: a client that keeps uploading."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        big_body(port, results, chunked)


def head_only_body(port):
    """Only the head of a 100 MB POST: the status that comes back without any body sent."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        return 0, 0.0
    with s:
        start = time.monotonic()
        s.sendall(f"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {BIG_BODY_BYTES}"
                  "\r\n\r\n".encode())
        s.settimeout(2)
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        return (int(m.group(1)) if m else 0), time.monotonic() - start


def start_exporter(migscope, env, log_path, listen="127.0.0.1:0"):
    log = open(log_path, "w")
    proc = subprocess.Popen([migscope, "exporter", "--listen", listen, "--idle-power-w", "100",
                             "--pod-resources-socket", ""],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    for _ in range(100):
        with open(log_path) as f:
            m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", f.read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    return proc, 0


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    migscope, fake_library, fake_config = sys.argv[1:]
    env = dict(os.environ, MIGSCOPE_NVML_LIBRARY=fake_library,
               MIGSCOPE_FAKE_NVML_CONFIG=fake_config)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="migscope-hostile-") as tmp:
        proc, port = start_exporter(migscope, env, os.path.join(tmp, "exporter.log"))
        if not port:
            print(open(os.path.join(tmp, "exporter.log")).read())
            check(False, "the exporter starts")
            return 1
        try:
            run_hostile(migscope, env, proc, port, tmp)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print(f"      {time.monotonic() - began:.1f} s in all")
    if failures:
        print(f"{len(failures)} requirement(s) failed")
        return 1
    print("every requirement held")
    return 0


def run_hostile(migscope, env, proc, port, tmp):
    for _ in range(5):  # warm: the answer path and the allocator's arenas exist before "before"
        scrape(port)
    time.sleep(0.5)
    rss_before = rss_kib(proc.pid)
    print(f"      RSS before: {rss_before} KiB")

    # 1. Idle connections and slow request heads, beside scrapes.
    prober = Prober(port)
    prober.start()
    idle = open_idle(port, IDLE_CLIENTS)
    slow = SlowHeads(port, SLOW_CLIENTS)
    slow.start()
    check(len(idle) == IDLE_CLIENTS and len(slow.socks) == SLOW_CLIENTS,
          f"{IDLE_CLIENTS} idle and {SLOW_CLIENTS} slow-head connections open (opened "
          f"{len(idle)} and {len(slow.socks)})")
    time.sleep(2.0)
    prober.finish(f"{IDLE_CLIENTS} idle + {SLOW_CLIENTS} slow-head connections")
    idle_closed_s = wait_closed(idle, REQUEST_TIMEOUT_S + 2)
    slow_closed_s = wait_closed(slow.socks, 2.0 if idle_closed_s is not None else 0.1)
    if idle_closed_s is not None and slow_closed_s is not None:
        slow_closed_s += idle_closed_s
    print(f"      idle connections closed by the exporter after "
          f"{'-' if idle_closed_s is None else f'{2 + idle_closed_s:.1f} s'}, slow heads after "
          f"{'-' if slow_closed_s is None else f'{2 + slow_closed_s:.1f} s'}")
    check(idle_closed_s is not None,
          f"idle connections closed within {REQUEST_TIMEOUT_S:g} s (+2 s)")
    check(slow_closed_s is not None,
          f"slow request heads closed within {REQUEST_TIMEOUT_S:g} s (+2 s)")
    slow.close()
    for s in idle:
        s.close()

    # 2. Request bodies: refused unread, alone and sixteen at once, with and without a length.
    status, seconds = head_only_body(port)
    print(f"      a 100 MB POST's head alone: status {status} after {seconds * 1000:.0f} ms")
    check(status == 413, "a body over the limit is refused with 413 before it is sent")
    prober = Prober(port)
    prober.start()
    results = []
    threads = [threading.Thread(target=big_bodies, args=(port, results)) for _ in
               range(BIG_BODY_CLIENTS)]
    threads += [threading.Thread(target=big_bodies, args=(port, results, True)) for _ in
                range(CHUNKED_CLIENTS)]
    for t in threads:
        t.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        peak = max(peak, rss_kib(proc.pid))
        time.sleep(0.05)
    prober.finish(f"{BIG_BODY_CLIENTS} 100 MB bodies + {CHUNKED_CLIENTS} endless chunked ones")
    statuses = sorted(set(r[0] for r in results))
    print(f"      {sum(1 for r in results if r[0] == 0)} uploads without an answer")
    most_sent = max(r[1] for r in results)
    print(f"      bodies: {len(results)} uploads, statuses {statuses}, at most {most_sent / 1e6:.1f} MB sent before the "
          f"answer, slowest {max(r[2] for r in results):.2f} s; peak RSS {peak} KiB")
    check(statuses == [413], "every big body answered 413")
    check(most_sent < BIG_BODY_BYTES, "no body was taken whole before the answer")

    time.sleep(1.0)
    rss_after = rss_kib(proc.pid)
    print(f"      RSS after: {rss_after} KiB ({rss_after / rss_before:.2f}x before)")
    check(rss_after <= RSS_GROWTH_LIMIT * rss_before,
          f"RSS after the hostile clients at most {RSS_GROWTH_LIMIT:g}x before")
    seconds, status, _ = scrape(port)
    check(status == 200, "/metrics answers after the hostile clients")

    # 3. A second exporter on the same address.
    second = subprocess.Popen([migscope, "exporter", "--listen", f"127.0.0.1:{port}",
                               "--pod-resources-socket", ""], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = second.communicate(timeout=5)
        code = second.returncode
    except subprocess.TimeoutExpired:
        second.kill()
        out, _ = second.communicate()
        code = None
    print(f"      a second exporter on 127.0.0.1:{port}: "
          f"{'still running after 5 s' if code is None else f'exit {code}'}")
    check(code == 3 and f"cannot listen on 127.0.0.1:{port}: the address is in use" in out,
          "a second exporter on the same address exits 3 naming it")

    # 4. SIGTERM under load: idle, slow heads and bodies in flight.
    idle = open_idle(port, IDLE_CLIENTS)
    slow = SlowHeads(port, SLOW_CLIENTS)
    slow.start()
    results = []
    threads = [threading.Thread(target=big_body, args=(port, results, False, 6.0), daemon=True)
               for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        code = None
    seconds = time.monotonic() - start
    print(f"      SIGTERM with {IDLE_CLIENTS} idle, {SLOW_CLIENTS} slow and 4 uploading clients: "
          f"{'still running after 10 s' if code is None else f'exit {code} after {seconds:.2f} s'}")
    check(code == 0 and seconds <= SIGTERM_LIMIT_S,
          f"SIGTERM under load exits 0 within {SIGTERM_LIMIT_S:g} s")
    slow.close()
    for s in idle:
        s.close()
    for t in threads:
        t.join()


if __name__ == "__main__":
    sys.exit(main())
