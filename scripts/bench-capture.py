#!/usr/bin/env python3
"""Generate the MeterAudit benchmark capture: real HTTP/1.1 traffic on 127.0.0.1, captured by tcpdump.

Used by scripts/bench (see docs/BENCHMARK.md); can be run on its own:

    python3 scripts/bench-capture.py [--size-mb 60] [--seed 1] [--connections 64] [--regenerate]

What it does, all on 127.0.0.1 and bounded in count and time:
  1. Plans the traffic from --seed: an object catalogue (HTML/JSON/CSS/JS/text/binary, 1 KB-200 KB),
     and for every keep-alive connection a list of exchanges (GET mostly, some POST with
     Content-Length or chunked request bodies, some 304/404), until the planned HTTP bytes reach
     --size-mb. Responses are gzip (Content-Encoding: gzip) or identity, Content-Length or chunked.
  2. Starts `tcpdump -i lo -n -U -B 65536 -s 0 -w RAW 'host 127.0.0.1 and tcp port P'`, a threaded
     Python server on 127.0.0.1:P (P = 28931, or a free port if taken) and one Python client thread
     per connection (all concurrent), bounded by the fixed plan, 30 s socket timeouts and --timeout.
     Every socket has TCP_MAXSEG=1460 (MSS 1448 with timestamps) and TCP_NODELAY, and writes at
     most one MSS per send().
  3. Stops tcpdump and requires "0 packets dropped by kernel" (retries slower if not).
  4. Post-processes the capture like a NIC's segmentation offload would: loopback hands tcpdump
     GSO super-packets (up to 64 KB) whenever data queues in the kernel, so any TCP segment whose
     frame exceeds 1514 bytes is split into MSS-sized segments (sequence numbers, IP ids, lengths,
     flags adjusted); TCP checksums (left "partial" by loopback checksum offload) are recomputed
     for every packet so the file reads like a wire capture. Counts are recorded in the metadata.
  5. Verifies with tshark: every frame <= 1514 bytes, no lost segments, one TCP stream per connection;
     records the frame-size histogram and the (real, kernel-made) retransmission count.
  6. Writes FILE.json next to FILE (parameters, sha256, counts). A later run with the same
     parameters reuses FILE if it still matches its metadata (unless --regenerate).

The bytes of every HTTP message are reproducible from the seed; packet timing and TCP segmentation
at flush points are not (they come from the kernel), so two generations differ slightly in frames.
Prints the capture path as the last line of stdout.
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

GENERATOR_VERSION = 2
MSS_OPTION = 1460          # TCP_MAXSEG: Ethernet MSS; with TCP timestamps each segment carries 1448 bytes
MAX_FRAME = 1514           # Ethernet frame without FCS, as captured
HOST = "127.0.0.1"


def log(msg):
    print(f"bench-capture: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Deterministic content
# --------------------------------------------------------------------------------------------

SYLLABLES = ["ka", "lo", "mer", "tin", "sa", "ve", "ro", "quen", "dal", "pi", "nor", "esh", "ul",
             "tra", "gon", "bi", "fel", "ari", "om", "wes", "cy", "zu", "han", "der", "ist", "op"]


def make_vocabulary(rng, n=1800):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    words = sorted(words)
    rng.shuffle(words)
    return words


class TextMaker:
    """Real-ish text: Zipf-distributed words from a fixed vocabulary, in per-type templates."""

    def __init__(self, vocab):
        self.vocab = vocab
        weights = [1.0 / (i + 1) ** 1.1 for i in range(len(vocab))]
        total = 0.0
        self.cum = []
        for w in weights:
            total += w
            self.cum.append(total)

    def words(self, rng, k):
        return rng.choices(self.vocab, cum_weights=self.cum, k=k)

    def sentence(self, rng):
        w = self.words(rng, rng.randint(5, 18))
        w[0] = w[0].capitalize()
        return " ".join(w) + rng.choice((".", ".", ".", "?", "!"))

    def body(self, rng, kind, size):
        out, n = [], 0
        if kind == "html":
            head = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    f"<title>{' '.join(self.words(rng, 4)).title()}</title>\n"
                    f"<link rel=\"stylesheet\" href=\"/static/site.css\">\n</head>\n<body>\n"
                    f"<div class=\"container\">\n")
            out.append(head)
            n = len(head)
            while n < size:
                if rng.random() < 0.15:
                    s = f"<h2 id=\"{self.words(rng, 1)[0]}\">{' '.join(self.words(rng, 3)).title()}</h2>\n"
                elif rng.random() < 0.2:
                    s = "<ul>\n" + "".join(f"  <li><a href=\"/{'/'.join(self.words(rng, 2))}.html\">"
                                          f"{' '.join(self.words(rng, 3))}</a></li>\n"
                                          for _ in range(rng.randint(2, 6))) + "</ul>\n"
                else:
                    s = "<p>" + " ".join(self.sentence(rng) for _ in range(rng.randint(2, 6))) + "</p>\n"
                out.append(s)
                n += len(s)
        elif kind == "json":
            out.append("{\"items\":[\n")
            n = 11
            i = 0
            while n < size:
                w = self.words(rng, 6)
                s = (("," if i else "") +
                     f"{{\"id\":{rng.randint(1, 10**7)},\"name\":\"{w[0]} {w[1]}\",\"slug\":\"{w[2]}-{w[3]}\","
                     f"\"score\":{rng.random() * 100:.3f},\"active\":{'true' if rng.random() < 0.7 else 'false'},"
                     f"\"tags\":[\"{w[4]}\",\"{w[5]}\"],\"description\":\"{self.sentence(rng)}\"}}\n")
                out.append(s)
                n += len(s)
                i += 1
        elif kind == "css":
            while n < size:
                w = self.words(rng, 3)
                s = (f".{w[0]}-{w[1]} .{w[2]} {{\n  margin: {rng.randint(0, 32)}px {rng.randint(0, 32)}px;\n"
                     f"  color: #{rng.randrange(1 << 24):06x};\n  font-size: {rng.choice((12, 13, 14, 16, 18, 24))}px;\n"
                     f"  display: {rng.choice(('block', 'flex', 'inline-block', 'none', 'grid'))};\n}}\n")
                out.append(s)
                n += len(s)
        elif kind == "js":
            while n < size:
                w = self.words(rng, 5)
                s = (f"function {w[0]}{w[1].capitalize()}({w[2]}, {w[3]}) {{\n"
                     f"  const {w[4]} = {w[2]}.map((x) => x * {rng.randint(2, 99)} + {w[3]});\n"
                     f"  if ({w[4]}.length > {rng.randint(1, 500)}) {{ return \"{self.sentence(rng)}\"; }}\n"
                     f"  return {w[4]}.filter(Boolean).join(\"{rng.choice((',', ';', ' ', '-'))}\");\n}}\n")
                out.append(s)
                n += len(s)
        else:  # text/plain: access-log-like lines
            while n < size:
                w = self.words(rng, 3)
                s = (f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
                     f"{rng.randint(0, 59):02d}Z {rng.choice(('INFO', 'INFO', 'INFO', 'WARN', 'DEBUG', 'ERROR'))} "
                     f"{w[0]}.{w[1]} request_id={rng.getrandbits(64):016x} {w[2]}: {self.sentence(rng)}\n")
                out.append(s)
                n += len(s)
        return "".join(out).encode("utf-8")[:size]


KINDS = [  # kind, content type, weight, compressible
    ("html", "text/html; charset=utf-8", 30, True),
    ("json", "application/json", 25, True),
    ("css", "text/css", 10, True),
    ("js", "application/javascript", 15, True),
    ("txt", "text/plain; charset=utf-8", 5, True),
    ("bin", "image/png", 15, False),
]


def build_catalogue(seed, n_objects=384):
    """Object id -> (kind, content-type, compressible, size). Sizes log-uniform in 1 KB..200 KB."""
    rng = random.Random(f"{seed}:catalogue")
    kinds = [k for k in KINDS]
    weights = [k[2] for k in kinds]
    cat = []
    for _ in range(n_objects):
        kind, ctype, _, compressible = rng.choices(kinds, weights=weights)[0]
        size = int(round(1024 * (200 ** rng.random())))
        cat.append((kind, ctype, compressible, size))
    return cat


def build_bodies(seed, catalogue, text):
    """Object id -> (identity body, gzip body or None). Deterministic (gzip mtime 0)."""
    bodies = []
    for oid, (kind, _ctype, compressible, size) in enumerate(catalogue):
        rng = random.Random(f"{seed}:object:{oid}")
        if kind == "bin":
            raw = b"\x89PNG\r\n\x1a\n" + rng.randbytes(size - 8)
        else:
            raw = text.body(rng, kind, size)
        gz = gzip.compress(raw, compresslevel=6, mtime=0) if compressible else None
        bodies.append((raw, gz))
    return bodies


# --------------------------------------------------------------------------------------------
# Traffic plan
# --------------------------------------------------------------------------------------------

USER_AGENTS = [
    "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36",
    "curl/8.5.0",
    "python-requests/2.31.0",
]
EXT = {"html": "html", "json": "json", "css": "css", "js": "js", "txt": "log", "bin": "png"}


def plan_traffic(seed, catalogue, bodies, text, n_conn, target_bytes):
    """Round-robin exchanges over n_conn connections until planned request+response bytes reach
    target_bytes. Each exchange is a dict with the exact request bytes and the response parameters;
    the server derives the response deterministically from the request."""
    rng = random.Random(f"{seed}:plan")
    conns = [[] for _ in range(n_conn)]
    agents = [rng.choice(USER_AGENTS) for _ in range(n_conn)]
    popularity = [1.0 / (i + 1) ** 0.6 for i in range(len(catalogue))]
    order = list(range(len(catalogue)))
    rng.shuffle(order)
    planned = 0
    i = 0
    while planned < target_bytes:
        c = i % n_conn
        k = len(conns[c])
        roll = rng.random()
        if roll < 0.15:
            # POST with a JSON body; 20% of them use chunked transfer coding for the request.
            payload = text.body(rng, "json", rng.randint(200, 20000))
            chunked_req = rng.random() < 0.2
            target = f"/api/v1/{text.words(rng, 1)[0]}/submit?seq={k}"
            resp = {"kind": "api", "size": rng.randint(1024, 8192), "gzip": rng.random() < 0.5,
                    "chunked": rng.random() < 0.4, "status": 200}
            method = "POST"
        else:
            oid = order[rng.choices(range(len(catalogue)), weights=popularity)[0]]
            kind, _ctype, compressible, _size = catalogue[oid]
            payload, chunked_req = None, False
            target = f"/static/{oid:04d}/{text.words(rng, 1)[0]}.{EXT[kind]}?v={k}"
            status = 200
            r2 = rng.random()
            if r2 < 0.05:
                status = 304
            elif r2 < 0.07:
                status = 404
            resp = {"kind": "obj", "oid": oid, "status": status,
                    "gzip": compressible and rng.random() < 0.75,
                    "chunked": rng.random() < 0.4}
            method = "GET"
        last = False  # fixed up below
        conns[c].append({"method": method, "target": target, "payload": payload,
                         "chunked_req": chunked_req, "resp": resp, "last": last,
                         "agent": agents[c], "seed": rng.getrandbits(32)})
        # Planned size estimate (request ~ 350 B of headers + body; response headers ~ 300 B).
        req_est = 350 + (len(payload) if payload else 0)
        if resp["kind"] == "api":
            resp_est = 300 + (resp["size"] // 3 if resp["gzip"] else resp["size"])
        elif resp["status"] == 200:
            raw, gz = bodies[resp["oid"]]
            resp_est = 300 + (len(gz) if resp["gzip"] else len(raw))
        else:
            resp_est = 400
        planned += req_est + resp_est
        i += 1
    for ex in conns:
        if ex:
            ex[-1]["last"] = True
    return conns


def describe_mix(conns, catalogue):
    """Counts of the message kinds in the plan (for the metadata and the docs)."""
    mix = {"GET": 0, "POST": 0, "post_body_content_length": 0, "post_body_chunked": 0,
           "status_200": 0, "status_304": 0, "status_404": 0,
           "resp_gzip": 0, "resp_identity_with_body": 0, "resp_chunked": 0, "resp_content_length": 0,
           "resp_body_decoded_min": None, "resp_body_decoded_max": 0}
    for ex in (e for c in conns for e in c):
        r = ex["resp"]
        mix[ex["method"]] += 1
        if ex["payload"] is not None:
            mix["post_body_chunked" if ex["chunked_req"] else "post_body_content_length"] += 1
        mix[f"status_{r['status']}"] += 1
        if r["status"] == 304:
            continue
        gz = r["gzip"] and r["status"] == 200
        chunked = r["chunked"] and r["status"] == 200
        mix["resp_gzip" if gz else "resp_identity_with_body"] += 1
        mix["resp_chunked" if chunked else "resp_content_length"] += 1
        if r["status"] == 200:
            size = r["size"] if r["kind"] == "api" else catalogue[r["oid"]][3]
            lo = mix["resp_body_decoded_min"]
            mix["resp_body_decoded_min"] = size if lo is None else min(lo, size)
            mix["resp_body_decoded_max"] = max(mix["resp_body_decoded_max"], size)
    return mix


def encode_request(ex, port):
    h = [f"{ex['method']} {ex['target']} HTTP/1.1",
         f"Host: {HOST}:{port}",
         f"User-Agent: {ex['agent']}",
         "Accept: */*",
         "Accept-Language: en-US,en;q=0.8"]
    if ex["resp"].get("gzip"):
        h.append("Accept-Encoding: gzip, deflate")
    if ex["resp"].get("chunked"):
        h.append("X-Bench-Framing: chunked")
    if ex["resp"].get("status") == 304:
        h.append(f"If-None-Match: \"{ex['seed']:08x}\"")
    if ex["resp"].get("status") == 404:
        h.append("X-Bench-Missing: 1")
    if ex["resp"]["kind"] == "api":
        h.append(f"X-Bench-Size: {ex['resp']['size']}")
    if ex["last"]:
        h.append("Connection: close")
    body = b""
    if ex["payload"] is not None:
        h.append("Content-Type: application/json")
        if ex["chunked_req"]:
            h.append("Transfer-Encoding: chunked")
            body = chunk_encode(ex["payload"], random.Random(ex["seed"]))
        else:
            h.append(f"Content-Length: {len(ex['payload'])}")
            body = ex["payload"]
    return ("\r\n".join(h) + "\r\n\r\n").encode("ascii") + body


def chunk_split(data, rng):
    """Split data into chunks of 1-16 KB (the points where a streaming server would flush)."""
    parts, pos = [], 0
    while pos < len(data):
        n = rng.randint(1024, 16384)
        parts.append(data[pos:pos + n])
        pos += n
    return parts


def chunk_encode(data, rng):
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in chunk_split(data, rng)) + b"0\r\n\r\n"


# --------------------------------------------------------------------------------------------
# HTTP/1.1 stream reading (just enough for our own traffic)
# --------------------------------------------------------------------------------------------

class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def _fill(self):
        d = self.sock.recv(262144)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def until(self, marker):
        start = 0
        while True:
            i = self.buf.find(marker, start)
            if i >= 0:
                out = bytes(self.buf[:i + len(marker)])
                del self.buf[:i + len(marker)]
                return out
            start = max(0, len(self.buf) - len(marker) + 1)
            self._fill()

    def exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def head(self):
        raw = self.until(b"\r\n\r\n")
        lines = raw[:-4].decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        return lines[0], headers

    def body(self, headers):
        if headers.get("transfer-encoding", "").lower() == "chunked":
            total = 0
            while True:
                size = int(self.until(b"\r\n")[:-2].split(b";")[0], 16)
                if size == 0:
                    self.until(b"\r\n")  # no trailers in our traffic
                    return total
                self.exactly(size + 2)
                total += size
        n = int(headers.get("content-length", "0"))
        self.exactly(n)
        return n


def send_segments(sock, data, mss):
    """Write at most one MSS per send() so the kernel rarely builds GSO super-packets."""
    view = memoryview(data)
    for pos in range(0, len(view), mss):
        sock.sendall(view[pos:pos + mss])


def tune(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


# --------------------------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------------------------

class Server:
    def __init__(self, seed, catalogue, bodies, text, port, deadline):
        self.seed, self.catalogue, self.bodies, self.text = seed, catalogue, bodies, text
        self.deadline = deadline
        self.errors = []
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, MSS_OPTION)  # inherited by accept()
        try:
            self.lsock.bind((HOST, port))
        except OSError as e:
            if port == 0:
                raise
            log(f"port {port} unavailable ({e.strerror}); using a free port (Host headers will differ)")
            self.lsock.bind((HOST, 0))
        self.lsock.listen(256)
        self.lsock.settimeout(0.5)
        self.port = self.lsock.getsockname()[1]
        self.stop = threading.Event()
        self.threads = []
        self.api_cache = {}

    def serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            t = threading.Thread(target=self.accepted, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    def accepted(self, conn):
        """A new connection, on its own thread (subclasses wrap it first, e.g. in TLS)."""
        self.handle(conn)

    def response(self, start, headers, k):
        method, target, _ = start.split(" ", 2)
        path, _, query = target.partition("?")
        rng = random.Random(f"{self.seed}:resp:{path}:{query}:{k}")
        gz_ok = "gzip" in headers.get("accept-encoding", "")
        chunked = headers.get("x-bench-framing") == "chunked"
        h = ["Server: nginx/1.24.0",
             "Date: Tue, 14 May 2024 10:%02d:%02d GMT" % (k % 60, rng.randint(0, 59))]
        if headers.get("if-none-match"):
            h[0:0] = ["HTTP/1.1 304 Not Modified"]
            h += [f"ETag: {headers['if-none-match']}", "Cache-Control: public, max-age=3600"]
            return h, b"", False, None
        if headers.get("x-bench-missing"):
            status, ctype, gz_ok, chunked = "404 Not Found", "text/html; charset=utf-8", False, False
            raw = (b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found"
                   b"</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")
            body = raw
        elif method == "POST":
            status, ctype = "200 OK", "application/json"
            size = int(headers.get("x-bench-size", "2048"))
            raw = self.text.body(rng, "json", size)
            body = gzip.compress(raw, compresslevel=6, mtime=0) if gz_ok else raw
        else:
            oid = int(path.split("/")[2])
            _kind, ctype, compressible, _size = self.catalogue[oid]
            raw, gz = self.bodies[oid]
            status = "200 OK"
            gz_ok = gz_ok and compressible
            body = gz if gz_ok else raw
            h += ["Cache-Control: public, max-age=3600", f"ETag: \"{oid:04x}-{len(raw):x}\"",
                  "Last-Modified: Mon, 06 May 2024 08:00:00 GMT"]
        h[0:0] = [f"HTTP/1.1 {status}"]
        h.append(f"Content-Type: {ctype}")
        if gz_ok:
            h += ["Content-Encoding: gzip", "Vary: Accept-Encoding"]
        return h, body, chunked, rng

    def handle(self, conn):
        """Serves one accepted connection: records its error, if any, then closes it gracefully
        (our FIN, then the peer's) so the capture holds the whole TCP teardown."""
        try:
            conn.settimeout(30)
            tune(conn)
            self.converse(conn)
        except Exception as e:  # noqa: BLE001 - recorded and reported by the caller
            self.errors.append(f"server: {e!r}")
        finally:
            try:
                conn.shutdown(socket.SHUT_WR)
                conn.settimeout(5)
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            conn.close()

    def converse(self, conn):
        """HTTP/1.1 keep-alive exchanges on one connection until the client closes or asks to."""
        mss = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
        rd = Reader(conn)
        k = 0
        while time.monotonic() < self.deadline:
            try:
                start, headers = rd.head()
            except EOFError:
                break
            rd.body(headers)
            h, body, chunked, rng = self.response(start, headers, k)
            close = headers.get("connection", "").lower() == "close"
            h.append("Connection: close" if close else "Connection: keep-alive")
            if chunked:
                h.append("Transfer-Encoding: chunked")
            elif not h[0].startswith("HTTP/1.1 304"):
                h.append(f"Content-Length: {len(body)}")
            head = ("\r\n".join(h) + "\r\n\r\n").encode("ascii")
            if chunked:
                # One write (flush) per chunk; the headers go with the first chunk and the
                # terminating zero-size chunk with the last one, as most servers do.
                writes = [b"%x\r\n%s\r\n" % (len(p), p) for p in chunk_split(body, rng)] or [b""]
                writes[0] = head + writes[0]
                writes[-1] += b"0\r\n\r\n"
                for w in writes:
                    send_segments(conn, w, mss)
            else:
                send_segments(conn, head + body, mss)
            k += 1
            if close:
                break

    def close(self):
        self.stop.set()
        try:
            self.lsock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# Clients
# --------------------------------------------------------------------------------------------

def connect(port):
    """A client socket to our server, with the bench's MSS and socket options; returns it and its MSS."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, MSS_OPTION)
    s.settimeout(30)
    s.connect((HOST, port))
    tune(s)
    return s, s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)


def finish_client(s, done, mss, stats, lock):
    """Reads the server's FIN, closes the socket and counts its `done` exchanges and its MSS."""
    s.settimeout(10)
    while s.recv(65536):
        pass
    s.close()
    with lock:
        stats["exchanges"] += done
        stats["mss"].add(mss)


def run_client(port, exchanges, deadline, gate, stats, errors, lock):
    try:
        with gate:
            s, mss = connect(port)
            rd = Reader(s)
            done = 0
            for ex in exchanges:
                if time.monotonic() > deadline:
                    raise TimeoutError("generation deadline exceeded")
                send_segments(s, encode_request(ex, port), mss)
                status, headers = rd.head()
                if " 304 " not in status + " ":
                    rd.body(headers)
                done += 1
            # Server closes after "Connection: close"; read its FIN, then close ours.
            finish_client(s, done, mss, stats, lock)
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"client: {e!r}")


# --------------------------------------------------------------------------------------------
# Capture post-processing: split GSO super-packets, recompute TCP checksums
# --------------------------------------------------------------------------------------------

def csum(data):
    """Internet checksum of data (ones' complement of the ones' complement sum of 16-bit words)."""
    if len(data) % 2:
        data += b"\0"
    s = int.from_bytes(data, "big") % 0xFFFF if data else 0
    if s == 0 and any(data):
        s = 0xFFFF
    return (~s) & 0xFFFF


def tcp_csum(src, dst, tcp):
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    return csum(pseudo + tcp)


def postprocess(raw_path, out_path):
    """Rewrite a tcpdump pcap (Ethernet/IPv4/TCP): split segments whose frame exceeds MAX_FRAME into
    MSS-sized segments the way TSO/GSO would on the wire; recompute TCP checksums of all segments."""
    st = {"frames_in": 0, "frames_out": 0, "superpackets_split": 0, "max_frame_in": 0}
    with open(raw_path, "rb") as f, open(out_path, "wb") as out:
        gh = f.read(24)
        magic = struct.unpack("<I", gh[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            endian = ">"
        else:
            raise ValueError(f"{raw_path}: not a pcap file (magic {magic:#x})")
        linktype = struct.unpack(endian + "I", gh[20:24])[0] & 0x0FFFFFFF
        if linktype != 1:
            raise ValueError(f"{raw_path}: link type {linktype}, expected Ethernet (1)")
        # Raise snaplen in the header we write if needed (it is 262144 from tcpdump anyway).
        out.write(gh)
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            ts_s, ts_frac, incl, orig = rec.unpack(h)
            pkt = f.read(incl)
            if len(pkt) < incl:
                raise ValueError(f"{raw_path}: truncated record")
            st["frames_in"] += 1
            st["max_frame_in"] = max(st["max_frame_in"], orig)
            frames = [pkt]
            if incl == orig and len(pkt) >= 54 and pkt[12:14] == b"\x08\x00" and pkt[23] == 6:
                ihl = (pkt[14] & 0x0F) * 4
                ip = pkt[14:14 + ihl]
                tot = struct.unpack("!H", pkt[16:18])[0]
                t0 = 14 + ihl
                thl = (pkt[t0 + 12] >> 4) * 4
                tcp_hdr = pkt[t0:t0 + thl]
                payload = pkt[t0 + thl:14 + tot]
                trailer = pkt[14 + tot:]
                src, dst = ip[12:16], ip[16:20]
                seg_max = MAX_FRAME - 14 - ihl - thl
                pieces = [payload]
                if len(payload) > seg_max:
                    pieces = [payload[i:i + seg_max] for i in range(0, len(payload), seg_max)]
                    st["superpackets_split"] += 1
                frames = []
                seq0 = struct.unpack("!I", tcp_hdr[4:8])[0]
                ip_id0 = struct.unpack("!H", ip[4:6])[0]
                flags0 = tcp_hdr[13]
                off = 0
                for n, piece in enumerate(pieces):
                    first, last = n == 0, n == len(pieces) - 1
                    flags = flags0
                    if not last:
                        flags &= ~(0x01 | 0x08)        # FIN, PSH only on the last segment
                    if not first:
                        flags &= ~0x80                  # CWR only on the first
                    t = bytearray(tcp_hdr)
                    t[4:8] = struct.pack("!I", (seq0 + off) & 0xFFFFFFFF)
                    t[13] = flags
                    t[16:18] = b"\0\0"
                    seg = bytes(t) + piece
                    t[16:18] = struct.pack("!H", tcp_csum(src, dst, seg))
                    i2 = bytearray(ip)
                    i2[2:4] = struct.pack("!H", ihl + len(t) + len(piece))
                    if len(pieces) > 1:
                        i2[4:6] = struct.pack("!H", (ip_id0 + n) & 0xFFFF)
                        i2[10:12] = b"\0\0"
                        i2[10:12] = struct.pack("!H", csum(bytes(i2)))
                    frames.append(pkt[:14] + bytes(i2) + bytes(t) + piece + (trailer if last else b""))
                    off += len(piece)
            for fr in frames:
                out.write(rec.pack(ts_s, ts_frac, len(fr), len(fr)))
                out.write(fr)
                st["frames_out"] += 1
    return st


# --------------------------------------------------------------------------------------------
# tcpdump control, verification, metadata
# --------------------------------------------------------------------------------------------

def start_tcpdump(path, port):
    cmd = ["tcpdump", "-i", "lo", "-n", "-U", "-B", "65536", "-s", "0", "-w", path,
           f"host {HOST} and tcp port {port}"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    ready = threading.Event()

    def pump():
        for line in p.stderr:
            lines.append(line.rstrip("\n"))
            if "listening on" in line:
                ready.set()
        ready.set()

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    if not ready.wait(15) or p.poll() is not None:
        p.kill()
        raise RuntimeError("tcpdump did not start: " + " | ".join(lines))
    return p, t, lines


def stop_tcpdump(p, t, lines):
    time.sleep(1.0)  # let the last packets (FIN/ACK) reach the capture buffer
    p.send_signal(signal.SIGINT)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    t.join(5)
    stats = {}
    for line in lines:
        m = re.match(r"(\d+) packets? (captured|received by filter|dropped by kernel)", line)
        if m:
            stats[m.group(2)] = int(m.group(1))
    if "dropped by kernel" not in stats:
        raise RuntimeError("tcpdump statistics missing: " + " | ".join(lines))
    return stats


def tshark_verify(path):
    """Frame-size histogram, TCP stream count and lost-segment check, via tshark."""
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.len", "-e", "tcp.stream",
           "-e", "tcp.analysis.lost_segment", "-e", "tcp.analysis.retransmission",
           "-E", "occurrence=f"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"tshark failed: {p.stderr.strip()}")
    buckets = {"<=100": 0, "101-1000": 0, "1001-1513": 0, "1514": 0, ">1514": 0}
    streams, frames, max_len, lost, retrans = set(), 0, 0, 0, 0
    for line in p.stdout.splitlines():
        f = line.split("\t")
        n = int(f[0])
        frames += 1
        max_len = max(max_len, n)
        streams.add(f[1])
        lost += bool(f[2])
        retrans += bool(f[3])
        key = ("<=100" if n <= 100 else "101-1000" if n <= 1000 else "1001-1513" if n < 1514
               else "1514" if n == 1514 else ">1514")
        buckets[key] += 1
    return {"frames": frames, "max_frame_len": max_len, "frame_len_histogram": buckets,
            "tcp_streams": len(streams), "lost_segments": lost, "retransmissions": retrans}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def reusable(path, meta_path, params):
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("params") != params:
            return None
        if os.path.getsize(path) != meta["bytes"] or meta["bytes"] < params["size_mb"] * 1_000_000:
            return None
        if sha256(path) != meta["sha256"]:
            return None
        return meta
    except (OSError, ValueError, KeyError):
        return None


def reuse(out, meta_path, params, log, check=reusable):
    """Prints `out` and returns True when its capture (as `check` judges) can serve again."""
    meta = check(out, meta_path, params)
    if meta:
        log(f"reusing {out} ({meta['bytes'] / 1e6:.1f} MB, {meta['http_messages']} HTTP messages)")
        print(out)
    return bool(meta)


def publish_capture(args, info, raw, tmp, out, meta_path, head, t0, log, companions=()):
    """The end of a generation in a namespace with lo's offloads off: requires no packet dropped,
    post-processes raw into tmp (which must find no super-packet), verifies tmp with tshark
    (frame size, lost segments, one stream per connection) and its size, then moves tmp to out and
    each companion (tmp path, final path, metadata key) to its place and writes meta_path:
    `head`, the files' sizes and hashes, `info`, the post-processing and verification.
    Returns the metadata, or None after logging why the capture is refused."""
    if info["tcpdump"]["dropped by kernel"]:
        log(f"tcpdump dropped {info['tcpdump']['dropped by kernel']} packets")
        return None
    pp = postprocess(raw, tmp)
    log(f"post-processed: {pp}")
    if pp["superpackets_split"]:
        log(f"{pp['superpackets_split']} segments larger than a frame: offloads were not off")
        return None
    ver = tshark_verify(tmp)
    log(f"tshark: {ver}")
    if ver["max_frame_len"] > MAX_FRAME or ver["lost_segments"] or ver["tcp_streams"] != args.connections:
        log("verification failed (frame size, lost segments or stream count)")
        return None
    size = os.path.getsize(tmp)
    if size < args.size_mb * 1_000_000:
        log(f"capture is {size / 1e6:.1f} MB, less than {args.size_mb} MB")
        return None
    os.replace(tmp, out)
    meta = {"params": head["params"], "file": os.path.basename(out), "bytes": size, "sha256": sha256(out)}
    for tmp_path, path, key in companions:
        os.replace(tmp_path, path)
        meta.update({key: os.path.basename(path), f"{key}_bytes": os.path.getsize(path),
                     f"{key}_sha256": sha256(path)})
    meta.update({k: v for k, v in head.items() if k != "params"})
    meta.update({**info, "postprocess": pp, "verify": ver, "generated_seconds": round(time.monotonic() - t0, 1)})
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def traffic_info(conns, mix, server, stats, traffic_s, tstats, **extra):
    """The metadata of a generation's traffic; `extra` goes after the MSS."""
    n_ex = sum(len(c) for c in conns)
    return {"exchanges": n_ex, "http_messages": 2 * n_ex, "connections": len(conns), "mix": mix,
            "server_port": server.port, "mss": sorted(stats["mss"]), **extra,
            "traffic_seconds": round(traffic_s, 1), "tcpdump": tstats}


def plan(args):
    """The traffic of a bench run: its text, catalogue, bodies and connections, from the seed."""
    seed = args.seed
    t0 = time.monotonic()
    vocab = make_vocabulary(random.Random(f"{seed}:vocab"))
    text = TextMaker(vocab)
    catalogue = build_catalogue(seed)
    bodies = build_bodies(seed, catalogue, text)
    conns = plan_traffic(seed, catalogue, bodies, text, args.connections, args.size_mb * 1_000_000)
    n_ex = sum(len(c) for c in conns)
    mix = describe_mix(conns, catalogue)
    log(f"planned {n_ex} exchanges on {len(conns)} connections ({time.monotonic() - t0:.1f}s): {mix}")
    return text, catalogue, bodies, conns, mix


def drive(server, raw_path, conns, deadline, parallel, client, stats):
    """Captures `server`'s port while one `client(index, exchanges, gate, errors, lock)` thread per
    connection runs (at most `parallel` at once), then stops tcpdump and checks every exchange
    completed. Returns (traffic seconds, tcpdump statistics)."""
    try:
        td = start_tcpdump(raw_path, server.port)
    except Exception:
        server.close()
        raise
    stopped = False
    n_ex = sum(len(c) for c in conns)
    errors, lock = [], threading.Lock()
    try:
        log(f"tcpdump listening; server on {HOST}:{server.port}")
        srv_thread = threading.Thread(target=server.serve, daemon=True)
        srv_thread.start()
        gate = threading.BoundedSemaphore(parallel)
        t1 = time.monotonic()
        clients = [threading.Thread(target=client, args=(i, ex, gate, errors, lock), daemon=True)
                   for i, ex in enumerate(conns)]
        for c in clients:
            c.start()
        for c in clients:
            c.join(max(1.0, deadline - time.monotonic() + 60))
        traffic_s = time.monotonic() - t1
        server.close()
        for t in server.threads:
            t.join(10)
        stopped = True
        tstats = stop_tcpdump(*td)
    finally:
        server.close()
        if not stopped:  # error path: stop our tcpdump, keep the original exception
            td[0].terminate()
            try:
                td[0].wait(10)
            except subprocess.TimeoutExpired:
                td[0].kill()
    errors += server.errors
    if errors:
        raise RuntimeError(f"{len(errors)} traffic errors, first: {errors[0]}")
    if stats["exchanges"] != n_ex:
        raise RuntimeError(f"only {stats['exchanges']} of {n_ex} exchanges completed")
    return traffic_s, tstats


def generate(args, raw_path, slow):
    text, catalogue, bodies, conns, mix = plan(args)
    deadline = time.monotonic() + args.timeout
    server = Server(args.seed, catalogue, bodies, text, args.port, deadline)
    stats = {"exchanges": 0, "mss": set()}

    def client(_index, exchanges, gate, errors, lock):
        run_client(server.port, exchanges, deadline, gate, stats, errors, lock)

    traffic_s, tstats = drive(server, raw_path, conns, deadline, 16 if slow else len(conns), client, stats)
    log(f"traffic done in {traffic_s:.1f}s; tcpdump: {tstats}")
    return traffic_info(conns, mix, server, stats, traffic_s, tstats)


def arguments(doc, prefix, connections, port, port_help, extra=lambda ap: None):
    """The options every bench generator takes; `extra` adds its own before --port."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", help=f"capture path (default bench-data/{prefix}-<N>mb-s<SEED>.pcap at the repo root)")
    ap.add_argument("--size-mb", type=int, default=60, help="minimum capture size in MB (10^6 bytes); default 60")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--connections", type=int, default=connections)
    extra(ap)
    ap.add_argument("--port", type=int, default=port, help=port_help)
    ap.add_argument("--timeout", type=int, default=300, help="traffic deadline in seconds (default 300)")
    ap.add_argument("--regenerate", action="store_true", help="ignore an existing capture")
    return ap


def main():
    ap = arguments(__doc__, "http-bench", 64, 28931,
                   "server port on 127.0.0.1 (default 28931; a free port is used if it is taken)")
    args = ap.parse_args()
    if args.size_mb < 1 or args.connections < 1:
        ap.error("--size-mb and --connections must be positive")

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args.out or os.path.join(repo, "bench-data", f"http-bench-{args.size_mb}mb-s{args.seed}.pcap")
    meta_path = out + ".json"
    params = {"generator_version": GENERATOR_VERSION, "size_mb": args.size_mb, "seed": args.seed,
              "connections": args.connections}
    if not args.regenerate and reuse(out, meta_path, params, log):
        return 0
    for tool in ("tcpdump", "tshark"):
        if not shutil.which(tool):
            log(f"{tool} not found (run scripts/setup)")
            return 2
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for p in (out, meta_path):
        if os.path.exists(p):
            os.unlink(p)
    raw, tmp = out + ".raw", out + ".tmp"
    try:
        return produce(args, out, meta_path, params, raw, tmp)
    finally:
        for p in (raw, tmp):
            if os.path.exists(p):
                os.unlink(p)


def produce(args, out, meta_path, params, raw, tmp):
    """Generate traffic into raw, post-process into tmp, verify, move to out, write meta_path."""
    t0 = time.monotonic()
    info = None
    for attempt, slow in ((1, False), (2, True)):
        try:
            info = generate(args, raw, slow)
        except (RuntimeError, OSError) as e:
            log(f"generation failed: {e}")
            return 1
        if info["tcpdump"]["dropped by kernel"] == 0:
            break
        log(f"tcpdump dropped {info['tcpdump']['dropped by kernel']} packets"
            + ("; retrying with 16 concurrent connections" if attempt == 1 else ""))
    else:
        log("tcpdump kept dropping packets; giving up")
        return 1
    if info["tcpdump"]["dropped by kernel"]:
        return 1
    pp = postprocess(raw, tmp)
    os.unlink(raw)
    log(f"post-processed: {pp}")
    ver = tshark_verify(tmp)
    log(f"tshark: {ver}")
    if ver["max_frame_len"] > MAX_FRAME:
        log(f"frames larger than {MAX_FRAME} bytes remain")
        return 1
    if ver["lost_segments"]:
        log(f"tshark reports {ver['lost_segments']} lost segments: the capture is incomplete")
        return 1
    if ver["tcp_streams"] != args.connections:
        log(f"expected {args.connections} TCP streams, tshark sees {ver['tcp_streams']}")
        return 1
    size = os.path.getsize(tmp)
    if size < args.size_mb * 1_000_000:
        log(f"capture is {size / 1e6:.1f} MB, less than {args.size_mb} MB")
        return 1
    os.replace(tmp, out)
    meta = {"params": params, "file": os.path.basename(out), "bytes": size, "sha256": sha256(out),
            **info, "postprocess": pp, "verify": ver, "generated_seconds": round(time.monotonic() - t0, 1)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    log(f"wrote {out} ({size / 1e6:.1f} MB, {info['exchanges']} exchanges on {info['connections']} "
        f"connections, {ver['frames']} frames, max frame {ver['max_frame_len']} B) in {meta['generated_seconds']}s")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
