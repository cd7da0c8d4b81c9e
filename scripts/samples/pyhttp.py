#!/usr/bin/env python3
"""Raw-socket HTTP/1.x server and client used by scripts/make-samples.

Both sides build every message as explicit byte strings (start line, header
block, body), write them with sendall() and append one JSON line per message
to their own *sender log*: the exact number of bytes written for each part.
Those logs are the ground truth for the Python captures (see truth.py).

Visibility: when --marker-dir is given, every write records whether the file
<marker-dir>/capture.on existed at the time of the write (make-samples creates
it once tcpdump is listening and removes it before stopping tcpdump), so the
truth builder knows which bytes made it into the capture.

Only the standard library is used. All sockets are bounded by timeouts, the
server by --max-seconds.
"""
import argparse
import gzip
import json
import os
import random
import select
import signal
import socket
import ssl
import sys
import threading
import time
import zlib

TIMEOUT = 10.0
WORDS = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"foxtrot", b"golf", b"hotel",
         b"india", b"juliet", b"kilo", b"lima", b"meter", b"audit", b"wire", b"byte",
         b"packet", b"segment", b"window", b"stream"]


def text(n, seed):
    """Deterministic lowercase text of exactly n bytes (never contains 'HTTP')."""
    rnd = random.Random(seed)
    out = bytearray()
    col = 0
    while len(out) < n:
        w = rnd.choice(WORDS)
        out += w
        col += len(w)
        if col > 64:
            out += b"\n"
            col = 0
        else:
            out += b" "
            col += 1
    return bytes(out[:n])


def endpoint(addr):
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# --------------------------------------------------------------------------- capture markers

class Markers:
    def __init__(self, directory):
        self.dir = directory

    def capture_on(self):
        return self.dir is None or os.path.exists(os.path.join(self.dir, "capture.on"))

    def pause(self, tag, timeout=30.0):
        """Announce <tag>.paused and block until make-samples creates <tag>.go."""
        if self.dir is None:
            return
        with open(os.path.join(self.dir, tag + ".paused"), "w") as f:
            f.write(str(os.getpid()))
        deadline = time.monotonic() + timeout
        go = os.path.join(self.dir, tag + ".go")
        while not os.path.exists(go):
            if time.monotonic() > deadline:
                raise TimeoutError(f"marker {go} never appeared")
            time.sleep(0.02)


# --------------------------------------------------------------------------- sending + logging

class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, rec):
        with self.lock:
            self.f.write(json.dumps(rec, sort_keys=True) + "\n")
            self.f.flush()


class Message:
    """One HTTP message as the byte parts that will be written."""

    def __init__(self, kind, line, headers, body=b"", method=None, status=None,
                 body_decoded=None, dechunked=None, coding=None, note=None):
        self.kind = kind
        self.method = method
        self.status = status
        self.parts = [("line", line), ("headers", headers)]
        if isinstance(body, list):
            self.parts += [("body", b) for b in body]
        elif body:
            self.parts.append(("body", body))
        wire = sum(len(p) for k, p in self.parts if k == "body")
        self.body_decoded = wire if body_decoded is None else body_decoded
        self.dechunked = wire if dechunked is None else dechunked
        self.coding = coding
        self.note = note

    def data(self):
        return b"".join(p for _, p in self.parts)

    def paced(self):
        """Re-cut the body into PIECES (see pieces()) for Sender.send_paced."""
        body = b"".join(p for k, p in self.parts if k == "body")
        self.parts = [(k, p) for k, p in self.parts if k != "body"] + [("body", b) for b in pieces(body)]
        return self


class Sender:
    """Writes messages on one connection and logs exactly what was written."""

    def __init__(self, sock, role, log, markers, source):
        local, peer = endpoint(sock.getsockname()), endpoint(sock.getpeername())
        self.client, self.server = (local, peer) if role == "client" else (peer, local)
        self.sock, self.log, self.markers, self.source = sock, log, markers, source
        self.seq = {"request": 0, "response": 0}

    def _record(self, msg, written):
        rec = {"source": self.source, "client": self.client, "server": self.server,
               "kind": msg.kind, "seq": self.seq[msg.kind], "method": msg.method,
               "status": msg.status, "parts": written, "body_decoded": msg.body_decoded,
               "dechunked": msg.dechunked, "coding": msg.coding}
        if msg.note:
            rec["note"] = msg.note
        self.seq[msg.kind] += 1
        self.log.write(rec)

    def send(self, *msgs):
        """Write all messages with ONE sendall (pipelining when several)."""
        on = self.markers.capture_on()
        self.sock.sendall(b"".join(m.data() for m in msgs))
        for m in msgs:
            self._record(m, [[k, len(p), on] for k, p in m.parts])

    def send_paced(self, msg):
        """Head (start line + header block) in one write, then every body part in its own
        write, PACE_SLEEP apart, with TCP_NODELAY: one TCP segment per write on loopback
        (no Nagle hold-back, no autocorking), so head and body never share a segment."""
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        written = []
        head = [(k, p) for k, p in msg.parts if k != "body"]
        body = [(k, p) for k, p in msg.parts if k == "body"]
        on = self.markers.capture_on()
        self.sock.sendall(b"".join(p for _, p in head))
        written += [[k, len(p), on] for k, p in head]
        for k, p in body:
            time.sleep(PACE_SLEEP)
            on = self.markers.capture_on()
            self.sock.sendall(p)
            written.append([k, len(p), on])
        self._record(msg, written)

    def send_in_two(self, msg, split_part, split_at, between):
        """Write msg up to byte split_at of part #split_part, call between(), write the rest."""
        written = []
        parts = list(msg.parts)
        first = parts[:split_part] + [(parts[split_part][0], parts[split_part][1][:split_at])]
        rest = [(parts[split_part][0], parts[split_part][1][split_at:])] + parts[split_part + 1:]
        for group in (first, rest):
            on = self.markers.capture_on()
            self.sock.sendall(b"".join(p for _, p in group))
            written += [[k, len(p), on] for k, p in group if p]
            if group is first:
                between()
        self._record(msg, written)


# --------------------------------------------------------------------------- reading

class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError
        self.buf += d

    def readline(self):
        while b"\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\n") + 1
        line, self.buf = self.buf[:i], self.buf[i:]
        return line

    def read(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_to_eof(self):
        try:
            while True:
                self._fill()
        except EOFError:
            pass
        out, self.buf = self.buf, b""
        return out


def read_head(rd):
    """Start line + header fields (obs-fold unfolded, names lower-cased)."""
    line = rd.readline()
    fields = []
    while True:
        h = rd.readline()
        if h in (b"\r\n", b"\n"):
            break
        if h[:1] in (b" ", b"\t") and fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + b" " + h.strip())
            continue
        name, _, value = h.partition(b":")
        fields.append((name.strip().lower().decode(), value.strip()))
    return line, fields


def field(fields, name):
    """First value of a field (latin-1: header values may hold any byte)."""
    for n, v in fields:
        if n == name:
            return v.decode("latin-1")
    return None


def content_length(value):
    """Content-Length value; a list of identical numbers ("7, 7", RFC 9110 8.6) is one number."""
    items = {int(x) for x in value.split(",")}
    if len(items) != 1:
        raise ValueError(f"conflicting Content-Length {value!r}")
    return items.pop()


def read_chunked(rd):
    raw, data = b"", b""
    while True:
        size_line = rd.readline()
        raw += size_line
        size = int(size_line.split(b";")[0].strip(), 16)
        if size == 0:
            break
        chunk = rd.read(size + 2)
        raw += chunk
        data += chunk[:size]
    while True:  # trailers
        t = rd.readline()
        raw += t
        if t in (b"\r\n", b"\n"):
            return raw, data


def read_body(rd, fields, is_response, request_method=None, status=None, version=b"HTTP/1.1"):
    if is_response and (request_method == "HEAD" or status in (204, 304) or 100 <= status < 200):
        return b"", b""
    te = field(fields, "transfer-encoding")
    if te and "chunked" in te.lower():
        return read_chunked(rd)
    cl = field(fields, "content-length")
    if cl is not None:
        b = rd.read(content_length(cl))
        return b, b
    if is_response:
        b = rd.read_to_eof()
        return b, b
    return b"", b""


# --------------------------------------------------------------------------- builders

def hdr(*lines, eol=b"\r\n"):
    """Header block: each line + eol, then the empty line."""
    return b"".join(l + eol for l in lines) + eol


def chunked(chunks, trailers=(), upper=False):
    """chunks: [(data, ext)] -> wire bytes of a chunked body (last-chunk + trailers + CRLF)."""
    out = b""
    for data, ext in chunks:
        size = b"%X" % len(data) if upper else b"%x" % len(data)
        out += size + ext + b"\r\n" + data + b"\r\n"
    out += b"0\r\n" + b"".join(t + b"\r\n" for t in trailers) + b"\r\n"
    return out


def split(data, n):
    return [data[i:i + n] for i in range(0, len(data), n)]


# Body pieces of the paced (python-snaplen) messages: 1000..3000 bytes each, far above the
# TCP payload the sample's snaplen keeps, so every body segment is cut and no head is.
PIECES = (1200, 2000, 1000, 2800, 1500, 3000)
PIECE_MIN = 1000
PACE_SLEEP = 0.005


def pieces(data):
    out, i, k = [], 0, 0
    while i < len(data):
        n = PIECES[k % len(PIECES)]
        out.append(data[i:i + n])
        i, k = i + n, k + 1
    if len(out) > 1 and len(out[-1]) < PIECE_MIN:  # no short last piece
        out[-2:] = [out[-2] + out[-1]]
    return out


def gzip_bytes(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


# --------------------------------------------------------------------------- server

SERVER_HDR = b"Server: meteraudit-samples/1"


def response_for(method, path, query, req_fields, req_body):
    """Build the final response Message for a request (None = do not answer)."""
    q = dict(kv.split("=", 1) for kv in query.split("&") if "=" in kv) if query else {}
    conn_close = (field(req_fields, "connection") or "").lower() == "close"
    close_hdr = [b"Connection: close"] if conn_close else []
    if path == "/cl":
        n = int(q.get("n", "100"))
        body = text(n, f"cl{n}")
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Length: %d" % n, *close_hdr)
        if method == "HEAD":
            return Message("response", b"HTTP/1.1 200 OK\r\n", head, b"", status=200, body_decoded=0)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, body, status=200)
    if path == "/chunked":
        small = "small" in q
        data = [(b"hello", b";name=value"), (text(300 if not small else 20, "ch1"), b";ext"),
                (text(1000 if not small else 40, "ch2"), b""), (b"bye.\r\n", b';a=1;b="q s"')]
        trailers = [b"X-Checksum: %08x" % zlib.crc32(b"".join(d for d, _ in data)), b"X-Note: trailer two"]
        body = chunked(data, trailers, upper=True)
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Transfer-Encoding: chunked",
                   b"Trailer: X-Checksum, X-Note", *close_hdr)
        dec = sum(len(d) for d, _ in data)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, body, status=200, body_decoded=dec, dechunked=dec)
    if path == "/gzip-chunked":
        plain = text(4000, "gz")
        comp = gzip_bytes(plain)
        body = chunked([(c, b"") for c in split(comp, 500)])
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Encoding: gzip",
                   b"Transfer-Encoding: chunked", b"Vary: Accept-Encoding", *close_hdr)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, body, status=200,
                       body_decoded=len(plain), dechunked=len(comp), coding="gzip")
    if path == "/deflate":
        plain = text(5000, "df")
        comp = zlib.compress(plain, 6)  # zlib-wrapped, as HTTP "deflate" means
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Encoding: deflate",
                   b"Content-Length: %d" % len(comp), *close_hdr)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, comp, status=200,
                       body_decoded=len(plain), coding="deflate")
    if path == "/gzip":
        plain = text(int(q["n"]), "gzcl")
        comp = gzip_bytes(plain)
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Encoding: gzip",
                   b"Content-Length: %d" % len(comp), b"Vary: Accept-Encoding", *close_hdr)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, comp, status=200,
                       body_decoded=len(plain), coding="gzip")
    if path == "/echo":
        head = hdr(SERVER_HDR, b"Content-Type: application/octet-stream",
                   b"Content-Length: %d" % len(req_body), *close_hdr)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, req_body, status=200)
    if path in ("/upload", "/expect100", "/expect417"):
        body = b"received %d bytes\n" % len(req_body)
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Length: %d" % len(body), *close_hdr)
        code = b"200 OK" if path == "/expect100" else b"201 Created"
        return Message("response", b"HTTP/1.1 " + code + b"\r\n", head, body, status=int(code[:3]))
    if path == "/close10":
        body = text(1500, "close10")
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Connection: close")
        return Message("response", b"HTTP/1.0 200 OK\r\n", head, body, status=200,
                       note="close-delimited body (no Content-Length); server closes after the body")
    if path == "/lf":
        body = text(120 if method == "GET" else 60, "lf" + method)
        head = hdr(b"Server: meteraudit-samples/1", b"Content-Type: text/plain", b"X-Folded: alpha",
                   b"\tbeta gamma", b"Content-Length: %d" % len(body), eol=b"\n")
        return Message("response", b"HTTP/1.1 200 OK\n", head, body, status=200,
                       note="bare LF line endings and an obs-fold header line")
    if path == "/slow":
        n = int(q["n"])
        body = text(n, f"slow{n}")
        head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Length: %d" % n, *close_hdr)
        return Message("response", b"HTTP/1.1 200 OK\r\n", head, body, status=200)
    if path.startswith("/api/"):
        body = api_json(method, path, q)
        if body is not None:
            head = hdr(SERVER_HDR, b"Content-Type: application/json; charset=utf-8", b"Cache-Control: no-cache",
                       b"Content-Length: %d" % len(body), *close_hdr)
            return Message("response", b"HTTP/1.1 200 OK\r\n", head, body, status=200)
    body = b"not found\n"
    head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Length: %d" % len(body), *close_hdr)
    return Message("response", b"HTTP/1.1 404 Not Found\r\n", head, body, status=404)


def api_json(method, path, q):
    """polling-runaway (scripts/make-polling-sample): a bus app's small JSON answers. Each body
    depends on the method, path and query only (never on time or order): sizes are fixed."""
    def dump(obj):
        return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()

    if method == "GET" and path == "/api/line/status":        # the side bar's leaked timers
        line = int(q.get("line", "1"))
        stops = [f"stop-{line}-{i:02d}" for i in range(12)]
        buses = [{"bus": f"B{line}{i:02d}", "next_stop": stops[(3 * i + 1) % 12], "eta_s": 45 + 70 * i,
                  "lat": round(31.2 + 0.0031 * i, 6), "lng": round(121.47 + 0.0027 * i, 6), "crowd": i % 3}
                 for i in range(4)]
        return dump({"line": line, "direction": "up", "buses": buses, "stops": stops, "status": "normal"})
    if method == "GET" and path == "/api/stops/nearby":       # the steady 2 s poll
        stops = [{"id": 1000 + i, "name": f"Stop {chr(65 + i)} Road", "dist_m": 60 + 85 * i,
                  "lines": [12 + i, 42, 101 + 2 * i]} for i in range(8)]
        return dump({"lat": q.get("lat"), "lng": q.get("lng"), "stops": stops})
    if method == "POST" and path == "/api/route/plan":        # called by hand
        legs = [{"line": 42 + i, "from": f"stop-{i}", "to": f"stop-{i + 1}", "minutes": 7 + 3 * i,
                 "text": text(160, f"leg{i}").decode()} for i in range(5)]
        return dump({"routes": [{"legs": legs, "minutes": 80, "transfers": 4}]})
    return None


# python-quirks: responses chosen by the raw request-target of scn_quirks' requests (each
# request-target quirk is paired with one response quirk of the documented estimator,
# docs/METERING.md §4.1). Bodies are small; every response has a Content-Length.
QUIRK_TARGETS = {
    "/caf%C3%A9/": "set-cookie",
    "/bad%zz": "gzip",
    "/x%FF": "Gzip",
    "/p;v=1/q;w=2/": "gzip-gzip",
    "/p?": "latin1-value",
    "/search?q=caf%C3%A9&sp=a%20b": "reason",
    "http://user@Example.test:18099/abs/?q=1": "cl-list",
    "/v6/dir/?a=%2F&b=": "plain",
    "/v6/%7Euser/": "plain",
}


def quirk_response(target, req_fields):
    """The final response of a python-quirks request (None: not a quirks target)."""
    kind = QUIRK_TARGETS.get(target)
    if kind is None:
        return None
    conn_close = (field(req_fields, "connection") or "").lower() == "close"
    close_hdr = [b"Connection: close"] if conn_close else []
    ok, ctype = b"HTTP/1.1 200 OK\r\n", b"Content-Type: text/plain"

    def resp(body, *fields, line=ok, decoded=None, coding=None):
        head = hdr(SERVER_HDR, ctype, *fields, b"Content-Length: %d" % len(body), *close_hdr)
        return Message("response", line, head, body, status=200, body_decoded=decoded, coding=coding,
                       note="python-quirks: " + kind)

    if kind == "set-cookie":      # two Set-Cookie fields: one entry, values joined by ", "
        return resp(text(200, "q-cookie"), b"Set-Cookie: session=s3cr3t; Path=/; HttpOnly",
                    b"Set-Cookie: theme=dark; Path=/; Max-Age=3600")
    if kind in ("gzip", "Gzip"):  # "Gzip" is gzip, but not the seed's exact string "gzip"
        plain = text(600 if kind == "gzip" else 500, "q-" + kind)
        return resp(gzip_bytes(plain), b"Content-Encoding: " + kind.encode(), b"Vary: Accept-Encoding",
                    decoded=len(plain), coding="gzip")
    if kind == "gzip-gzip":       # two Content-Encoding fields over a doubly gzipped body
        plain = text(700, "q-gzgz")
        return resp(gzip_bytes(gzip_bytes(plain)), b"Content-Encoding: gzip", b"Content-Encoding: gzip",
                    decoded=len(plain), coding="gzip, gzip")
    if kind == "latin1-value":    # a header value with a byte that is not UTF-8 (ISO-8859-1 e-acute)
        return resp(text(50, "q-latin1"), b"X-Place: caf\xe9")
    if kind == "reason":          # an unusual reason phrase (UTF-8 text)
        return resp(text(40, "q-reason"), line="HTTP/1.1 200 Très bien, merci\r\n".encode())
    if kind == "cl-list":         # Content-Length as a list of identical values
        body = b"seven!\n"
        head = hdr(SERVER_HDR, ctype, b"Content-Length: %d, %d" % (len(body), len(body)), *close_hdr)
        return Message("response", ok, head, body, status=200, note="python-quirks: Content-Length: 7, 7")
    return resp(text(30, "q-plain"))


def handle_conn(conn, log, markers, tls=None):
    conn.settimeout(TIMEOUT)
    if tls is not None:  # TLS server (make-tls-samples): the handshake runs on this thread
        try:
            conn = tls.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError) as e:
            print(f"pyhttp server: TLS handshake: {e!r}", file=sys.stderr)
            conn.close()
            return
    snd = Sender(conn, "server", log, markers, "python-server")
    rd = Reader(conn)
    try:
        while True:
            try:
                line, fields = read_head(rd)
            except EOFError:
                return
            method, target, version = line.decode().strip().split(" ")
            path, _, query = target.partition("?")
            expect = (field(fields, "expect") or "").lower() == "100-continue"
            if path == "/expect417" and expect:
                body = b"expectation not supported here\n"
                head = hdr(SERVER_HDR, b"Content-Type: text/plain", b"Content-Length: %d" % len(body))
                snd.send(Message("response", b"HTTP/1.1 417 Expectation Failed\r\n", head, body, status=417,
                                 note="sent right after the request header block; request body never read"))
                continue  # next request (our clients never send the refused body)
            if expect and version == "HTTP/1.1":
                snd.send(Message("response", b"HTTP/1.1 100 Continue\r\n", b"\r\n", status=100,
                                 note="interim response"))
            _, body = read_body(rd, fields, False)
            if path == "/noreply":
                return  # read the request, close without answering
            if path == "/hold":
                rd.read_to_eof()  # wait until the client gives up and closes
                return
            msg = quirk_response(target, fields) or response_for(method, path, query, fields, body)
            if "paced=1" in query.split("&"):
                snd.send_paced(msg.paced())
            elif path == "/slow":
                q = dict(kv.split("=", 1) for kv in query.split("&"))
                snd.send_in_two(msg, 2, int(q["pause"]), lambda: markers.pause(q["tag"]))
            else:
                snd.send(msg)
            if version == "HTTP/1.0" or (field(fields, "connection") or "").lower() == "close":
                return
    except (socket.timeout, ConnectionError, TimeoutError) as e:
        print(f"pyhttp server: {snd.client}: {e!r}", file=sys.stderr)
    finally:
        conn.close()


def listener(addr):
    host, port = addr.rsplit(":", 1)
    host = host.strip("[]")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    ls.bind((host, int(port)))
    ls.listen(16)
    ls.setblocking(False)
    return ls


def serve(args):
    listeners = [listener(a) for a in args.listen]
    log, markers = Log(args.log), Markers(args.marker_dir)
    tls = None
    if args.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls_cert, args.tls_key)
        if args.keylog:
            tls.keylog_filename = args.keylog
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.ready:
        open(args.ready, "w").close()
    deadline = time.monotonic() + args.max_seconds
    threads = []
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            ready, _, _ = select.select(listeners, [], [], 0.2)
        except InterruptedError:
            continue
        for ls in ready:
            try:
                conn, _ = ls.accept()
            except (BlockingIOError, InterruptedError):
                continue
            conn.setblocking(True)
            t = threading.Thread(target=handle_conn, args=(conn, log, markers, tls), daemon=True)
            t.start()
            threads.append(t)
    for ls in listeners:
        ls.close()
    for t in threads:
        t.join(timeout=2)


# --------------------------------------------------------------------------- client scenarios

class Client:
    def __init__(self, server, log, markers, tls=None, server_name=None):
        host, port = server.rsplit(":", 1)
        self.host, self.port = host.strip("[]"), int(port)
        self.authority = server.encode()
        self.log, self.markers = log, markers
        self.tls, self.server_name = tls, server_name

    def connect(self):
        s = socket.create_connection((self.host, self.port), timeout=TIMEOUT)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            s = self.tls.wrap_socket(s, server_hostname=self.server_name)
        return s, Sender(s, "client", self.log, self.markers, "python-client"), Reader(s)

    def get(self, target, *extra, method=b"GET", version=b"HTTP/1.1"):
        head = hdr(b"Host: " + self.authority, b"User-Agent: meteraudit-samples/1", *extra)
        return Message("request", method + b" " + target + b" " + version + b"\r\n", head, method=method.decode())

    def body_req(self, method, target, body, *extra):
        head = hdr(b"Host: " + self.authority, b"User-Agent: meteraudit-samples/1",
                   b"Content-Type: text/plain", b"Content-Length: %d" % len(body), *extra)
        return Message("request", method + b" " + target + b" HTTP/1.1\r\n", head, body, method=method.decode())


def read_response(rd, method):
    """Read one response; returns (status, fields). Interim 1xx responses are returned too."""
    line, fields = read_head(rd)
    status = int(line.split(b" ")[1])
    read_body(rd, fields, True, method, status)
    return status, fields


def scn_chunked(c):
    s, snd, rd = c.connect()
    snd.send(c.get(b"/chunked"))
    read_response(rd, "GET")
    snd.send(c.get(b"/gzip-chunked", b"Accept-Encoding: gzip"))
    read_response(rd, "GET")
    snd.send(c.get(b"/deflate", b"Accept-Encoding: deflate"))
    read_response(rd, "GET")
    snd.send(c.body_req(b"POST", b"/upload", text(2000, "up1")))
    read_response(rd, "POST")
    data = [(text(1024, "upc1"), b";part=1"), (text(300, "upc2"), b""), (text(17, "upc3"), b";last")]
    body = chunked(data, [b"X-Upload-Sum: %08x" % zlib.crc32(b"".join(d for d, _ in data))])
    head = hdr(b"Host: " + c.authority, b"User-Agent: meteraudit-samples/1", b"Content-Type: text/plain",
               b"Transfer-Encoding: chunked", b"Trailer: X-Upload-Sum")
    dec = sum(len(d) for d, _ in data)
    snd.send(Message("request", b"POST /upload HTTP/1.1\r\n", head, body, method="POST",
                     body_decoded=dec, dechunked=dec, note="chunked request body with extensions and a trailer"))
    read_response(rd, "POST")
    snd.send(c.get(b"/cl?n=0", b"Connection: close"))
    read_response(rd, "GET")
    s.close()


def scn_pipeline(c):
    s, snd, rd = c.connect()
    batch = [c.get(b"/cl?n=300"), c.get(b"/cl?n=1200", method=b"HEAD"), c.get(b"/chunked?small=1"),
             c.get(b"/cl?n=40", b"Connection: close")]
    snd.send(*batch)  # one write
    for m in batch:
        read_response(rd, m.method)
    rd.read_to_eof()
    s.close()


def scn_close(c):
    # 1: HTTP/1.0 request, close-delimited response
    s, snd, rd = c.connect()
    snd.send(c.get(b"/close10", version=b"HTTP/1.0"))
    read_response(rd, "GET")
    s.close()
    # 2: one normal exchange, then a request the server reads and answers by closing
    s, snd, rd = c.connect()
    snd.send(c.get(b"/cl?n=100"))
    read_response(rd, "GET")
    snd.send(c.get(b"/noreply"))
    rd.read_to_eof()
    s.close()
    # 3: the client sends a request and closes before the server answers
    s, snd, rd = c.connect()
    snd.send(c.get(b"/hold"))
    time.sleep(0.05)
    s.close()


def scn_expect(c):
    # 1: 100 Continue, then the body, then the final response; one more exchange after it
    s, snd, rd = c.connect()
    body = text(1500, "exp100")
    m = c.body_req(b"POST", b"/expect100", text(1500, "exp100"), b"Expect: 100-continue")
    interim = []
    # header block first; the body only after the interim response arrived
    snd.send_in_two(m, 2, 0, lambda: interim.append(read_response(rd, "POST")[0]))
    assert interim == [100], interim
    read_response(rd, "POST")
    snd.send(c.get(b"/cl?n=64"))
    read_response(rd, "GET")
    s.close()
    # 2: 417 -> body not sent, next request on the same connection
    s, snd, rd = c.connect()
    m = c.body_req(b"POST", b"/expect417", text(1024, "exp417"), b"Expect: 100-continue")
    refused = Message("request", m.parts[0][1], m.parts[1][1], method="POST", body_decoded=0,
                      note="Content-Length: 1024 announced, body NOT sent after 417; next request follows")
    snd.send(refused)
    status, _ = read_response(rd, "POST")
    assert status == 417, status
    snd.send(c.get(b"/cl?n=32"))
    read_response(rd, "GET")
    s.close()
    # 3: 417 -> body not sent, client closes
    s, snd, rd = c.connect()
    m = c.body_req(b"PUT", b"/expect417", text(2048, "exp417b"), b"Expect: 100-continue")
    snd.send(Message("request", m.parts[0][1], m.parts[1][1], method="PUT", body_decoded=0,
                     note="Content-Length: 2048 announced, body NOT sent after 417; client closed"))
    status, _ = read_response(rd, "PUT")
    assert status == 417, status
    s.close()


def scn_barelf(c):
    s, snd, rd = c.connect()
    a = c.authority
    head = hdr(b"Host: " + a, b"User-Agent: meteraudit-samples/1", b"X-Folded: first part",
               b"   second part", b"Accept: */*", eol=b"\n")
    snd.send(Message("request", b"GET /lf HTTP/1.1\n", head, method="GET",
                     note="bare LF line endings and an obs-fold header line"))
    read_response(rd, "GET")
    body = text(300, "lfpost")
    head = hdr(b"Host: " + a, b"Content-Type: text/plain", b"X-Folded: one", b"\ttwo",
               b"Content-Length: %d" % len(body), eol=b"\n")
    snd.send(Message("request", b"POST /lf HTTP/1.1\n", head, body, method="POST",
                     note="bare LF line endings and an obs-fold header line, Content-Length body"))
    read_response(rd, "POST")
    snd.send(c.get(b"/cl?n=10", b"Connection: close"))
    read_response(rd, "GET")
    s.close()


def scn_midstream(c):
    s, snd, rd = c.connect()
    for target in (b"/cl?n=200", b"/chunked",
                   b"/slow?n=6000&pause=2000&tag=start",   # capture starts inside this body
                   b"/cl?n=300", b"/deflate",
                   b"/slow?n=5000&pause=1500&tag=stop"):    # capture stops inside this body
        extra = [b"Accept-Encoding: deflate"] if target == b"/deflate" else []
        snd.send(c.get(target, *extra))
        read_response(rd, "GET")
    s.close()


def scn_snaplen(c):
    """Heads and bodies in separate segments (Sender.send_paced on both sides), Content-Length
    bodies only, so that a snaplen keeping every head and cutting every body segment leaves
    all sizes known (python-snaplen.pcap)."""
    s, snd, rd = c.connect()
    for target, extra in ((b"/cl?n=6000&paced=1", []),
                          (b"/gzip?n=24000&paced=1", [b"Accept-Encoding: gzip"]),
                          (None, []),
                          (b"/cl?n=9000&paced=1", []),
                          (b"/cl?n=3500&paced=1", [b"Connection: close"])):
        if target is None:
            snd.send_paced(c.body_req(b"POST", b"/echo?paced=1", text(5000, "echo")).paced())
            read_response(rd, "POST")
            continue
        snd.send(c.get(target, *extra))
        read_response(rd, "GET")
    rd.read_to_eof()
    s.close()
    # the same server on [::1]
    c6 = Client(f"[::1]:{c.port}", c.log, c.markers)
    s, snd, rd = c6.connect()
    snd.send(c6.get(b"/cl?n=4500&paced=1"))
    read_response(rd, "GET")
    snd.send(c6.get(b"/gzip?n=16000&paced=1", b"Accept-Encoding: gzip", b"Connection: close"))
    read_response(rd, "GET")
    rd.read_to_eof()
    s.close()


def scn_quirks(c):
    """python-quirks.pcap: what the documented estimator (docs/METERING.md §4.1) does with odd but
    legal requests and responses. Every request carries the fields the network stack adds
    (Host with a port, User-Agent, Accept, Accept-Encoding, Accept-Language, Connection,
    Content-Length on bodies), a Cookie and a repeated non-standard field; the server picks
    each response by the raw request-target (QUIRK_TARGETS)."""
    def req(cl, target, *extra, method=b"GET", body=b"", host=None, close=False, tag2=b"X-Tag: a",
            body_decoded=None, coding=None):
        fields = [b"Host: " + (host or cl.authority), b"X-Tag: a", b"Accept: */*",
                  b"Cookie: session=s3cr3t; theme=dark",
                  b"User-Agent: MeterAuditSamples/1 CFNetwork/1494.0.7 Darwin/23.4.0",
                  b"Accept-Language: en-US;q=1.0, fr-FR;q=0.9",
                  b"Accept-Encoding: gzip, deflate", tag2, *extra]
        if method == b"POST":
            fields.append(b"Content-Length: %d" % len(body))
        fields.append(b"Connection: close" if close else b"Connection: keep-alive")
        return Message("request", method + b" " + target + b" HTTP/1.1\r\n", hdr(*fields), body,
                       method=method.decode(), body_decoded=body_decoded, coding=coding)

    s, snd, rd = c.connect()
    for target in (b"/caf%C3%A9/",                    # %XX -> UTF-8 "/caf\u00e9", trailing slash
                   b"/bad%zz",                        # undecodable escape -> (null)
                   b"/x%FF",                          # decodes to a byte that is not UTF-8 -> (null)
                   b"/p;v=1/q;w=2/",                  # ;params stay, trailing slash
                   b"/p?",                            # empty query
                   b"/search?q=caf%C3%A9&sp=a%20b"):  # query with escapes, kept raw
        snd.send(req(c, target))
        read_response(rd, "GET")
    # absolute-form target with userinfo and port; Host as the URL's authority says
    snd.send(req(c, b"http://user@Example.test:18099/abs/?q=1", host=b"Example.test:18099"))
    read_response(rd, "GET")
    # request body already gzip (starts 1f 8b) under Content-Encoding: gzip
    plain = text(800, "q-upgz")
    snd.send(req(c, b"/upload?enc=gzip", b"Content-Type: text/plain", b"Content-Encoding: gzip",
                 method=b"POST", body=gzip_bytes(plain), body_decoded=len(plain), coding="gzip"))
    read_response(rd, "POST")
    # plain body under Content-Encoding: identity (the seed re-compresses it anyway)
    snd.send(req(c, b"/upload", b"Content-Type: text/plain", b"Content-Encoding: identity",
                 method=b"POST", body=text(900, "q-upid"), close=True))
    read_response(rd, "POST")
    rd.read_to_eof()
    s.close()
    # IPv6: Host "[::1]:port" (host without brackets), the repeated field spelled differently
    c6 = Client(f"[::1]:{c.port}", c.log, c.markers)
    s, snd, rd = c6.connect()
    snd.send(req(c6, b"/v6/dir/?a=%2F&b=", tag2=b"x-tag: a"))
    read_response(rd, "GET")
    snd.send(req(c6, b"/v6/%7Euser/", close=True))
    read_response(rd, "GET")
    rd.read_to_eof()
    s.close()


def scn_loss(c):
    """python-loss.pcap.gz (scripts/make-loss-sample): ordinary keep-alive exchanges and two
    ~1 MB downloads over a loopback that drops 1 TCP packet in 20, so both directions carry
    real retransmissions. The client closes each connection itself after its last response;
    the server sees EOF and closes too."""
    s, snd, rd = c.connect()
    snd.send(c.get(b"/cl?n=300"))
    read_response(rd, "GET")
    snd.send(c.get(b"/gzip?n=20000", b"Accept-Encoding: gzip"))
    read_response(rd, "GET")
    snd.send(c.body_req(b"POST", b"/echo", text(150000, "loss-up")))
    read_response(rd, "POST")
    snd.send(c.get(b"/cl?n=1200000"))
    read_response(rd, "GET")
    s.close()
    s, snd, rd = c.connect()
    snd.send(c.get(b"/chunked"))
    read_response(rd, "GET")
    snd.send(c.get(b"/cl?n=1000000"))
    read_response(rd, "GET")
    snd.send(c.body_req(b"POST", b"/upload", text(40000, "loss-up2")))
    read_response(rd, "POST")
    s.close()


SCENARIOS = {"chunked": scn_chunked, "pipeline": scn_pipeline, "close": scn_close,
             "expect": scn_expect, "barelf": scn_barelf, "midstream": scn_midstream,
             "snaplen": scn_snaplen, "quirks": scn_quirks, "loss": scn_loss}


def client(args):
    tls = None
    if args.tls:  # a throwaway self-signed server: no verification
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        tls.check_hostname = False
        tls.verify_mode = ssl.CERT_NONE
        if args.tls_max == "1.2":
            tls.maximum_version = ssl.TLSVersion.TLSv1_2
        if args.ciphers:
            tls.set_ciphers(args.ciphers)
        if args.keylog:
            tls.keylog_filename = args.keylog
    c = Client(args.server, Log(args.log), Markers(args.marker_dir), tls, args.server_name)
    for name in args.scenario:
        SCENARIOS[name](c)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("server")
    sp.add_argument("--listen", required=True, action="append", help="host:port, repeatable")
    sp.add_argument("--log", required=True)
    sp.add_argument("--marker-dir")
    sp.add_argument("--ready", help="file created once listening")
    sp.add_argument("--max-seconds", type=float, default=120)
    sp.add_argument("--tls-cert", help="serve TLS with this certificate (PEM)")
    sp.add_argument("--tls-key", help="its private key (PEM)")
    sp.add_argument("--keylog", help="append NSS key log lines (SSLKEYLOGFILE format) here")
    cp = sub.add_parser("client")
    cp.add_argument("--server", required=True)
    cp.add_argument("--log", required=True)
    cp.add_argument("--marker-dir")
    cp.add_argument("--tls", action="store_true", help="speak TLS (no certificate check)")
    cp.add_argument("--tls-max", choices=["1.2", "1.3"], default="1.3")
    cp.add_argument("--ciphers", help="OpenSSL cipher list (TLS 1.2)")
    cp.add_argument("--server-name", help="SNI to send")
    cp.add_argument("--keylog", help="append NSS key log lines here")
    cp.add_argument("scenario", nargs="+", choices=sorted(SCENARIOS))
    args = ap.parse_args()
    signal.alarm(int(getattr(args, "max_seconds", 60)) + 30)  # hard bound on any process
    serve(args) if args.cmd == "server" else client(args)


if __name__ == "__main__":
    main()
