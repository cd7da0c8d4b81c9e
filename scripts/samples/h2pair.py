#!/usr/bin/env python3
"""An h2c server and client (Python `h2`) that log every frame they send: the ground truth of
the HTTP/2 samples (scripts/make-h2-samples).

  h2pair.py server PORT LOG [--upgrade | --more | --generic]
        serve one connection: the prior-knowledge script (default), h2c Upgrade, the second
        script (--more); or any client's requests on one connection after another, logging the
        frames it receives too (--generic)
  h2pair.py client PORT LOG [--more]      one prior-knowledge connection, the scripted exchange
  h2pair.py truth [--after-mark] LOG... > NAME.h2truth.jsonl

Every frame a peer writes is logged as {"side", "label", "stream", "type", "flags", "length",
"data", "z"} where label names the message the frame belongs to ("request:S", "response:S",
"interim:S", "push:P") or "conn" (frames no message owns), data is a DATA frame's body
bytes without padding and z those bytes, zlib-compressed and base64-encoded (so the truth
knows the bodies, not only their sizes). Every header block a peer sends is logged as
{"kind": "fields", "label", "fields": [[name, value], ...]}: the fields as the peer handed them
to HPACK, pseudo-fields first. With --generic the server logs the frames and fields it
receives the same way, under the sender's side. The client of --more logs {"label": "mark"}
after its first exchange: `truth --after-mark` keeps what was sent after it (a capture cut
there, docs/SAMPLES.md). Traffic: 127.0.0.1 only; every socket times out, the whole run is
bounded by an alarm.
"""
import base64
import gzip
import json
import time
import zlib
import signal
import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TIMEOUT = 10


class FrameLog:
    def __init__(self, path, side):
        self.file = open(path, "a")
        self.side = side
        self.endpoints = {}

    def frames(self, raw, label):
        if raw.startswith(PREFACE):
            self.write({"label": "conn", "type": "preface", "length": len(PREFACE)})
            raw = raw[len(PREFACE):]
        pos = 0
        while pos < len(raw):
            length = int.from_bytes(raw[pos:pos + 3], "big")
            ftype, flags = raw[pos + 3], raw[pos + 4]
            stream = int.from_bytes(raw[pos + 5:pos + 9], "big") & 0x7FFFFFFF
            payload = raw[pos + 9:pos + 9 + length]
            record = {"label": label, "stream": stream, "type": ftype, "flags": flags, "length": length, "data": 0}
            if ftype == 0:
                pad = 1 + payload[0] if flags & 0x8 else 0
                body = payload[1:length - pad + 1] if pad else payload
                record["data"] = len(body)
                record["z"] = base64.b64encode(zlib.compress(bytes(body), 9)).decode()
            self.write(record)
            pos += 9 + length
        assert pos == len(raw), "frames must end where the bytes do"

    def write(self, record):
        record["side"] = self.side
        record.update(self.endpoints)
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def fields(self, label, headers):
        self.write({"kind": "fields", "label": label, "fields": [[str(n), str(v)] for n, v in headers]})


class InboundLog:
    """The frames a peer receives, cut from its received bytes, each labelled by its stream:
    for the server of --generic, whose client (curl) logs nothing itself."""

    def __init__(self, log, sender, role):
        self.log = FrameLog.__new__(FrameLog)
        self.log.file, self.log.side, self.log.endpoints = log.file, sender, log.endpoints
        self.role = role
        self.buffer = b""
        self.block_label = None

    def received(self, data):
        self.buffer += data
        if self.buffer.startswith(PREFACE):
            self.log.write({"label": "conn", "type": "preface", "length": len(PREFACE)})
            self.buffer = self.buffer[len(PREFACE):]
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            frame, self.buffer = self.buffer[:9 + length], self.buffer[9 + length:]
            ftype, stream = frame[3], int.from_bytes(frame[5:9], "big") & 0x7FFFFFFF
            if ftype in (0, 1):
                label = f"{self.role}:{stream}"
            elif ftype == 9:
                label = self.block_label
            else:
                label = "conn"
            if ftype == 1:
                self.block_label = label
            self.log.frames(frame, label)


class Peer:
    def __init__(self, sock, log, client):
        self.sock = sock
        self.log = log
        config = h2.config.H2Configuration(client_side=client, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)

        self.inbound = None

    def flush(self, label="conn"):
        raw = self.conn.data_to_send()
        if raw:
            self.log.frames(raw, label)
            self.sock.sendall(raw)

    def events(self):
        data = self.sock.recv(65536)
        if not data:
            return None
        if self.inbound:
            self.inbound.received(data)
        events = self.conn.receive_data(data)
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if self.inbound and isinstance(event, (h2.events.RequestReceived, h2.events.TrailersReceived)):
                self.inbound.log.fields(f"{self.inbound.role}:{event.stream_id}", event.headers)
        self.flush()
        return events

    def headers(self, stream, headers, label, **options):
        """HEADERS (and CONTINUATION) for stream, logged with the fields they carry."""
        self.log.fields(label, headers)
        self.conn.send_headers(stream, headers, **options)
        self.flush(label)

    def body(self, stream, data, label, end=True):
        """DATA within the flow-control windows: waits for the peer's WINDOW_UPDATEs."""
        while True:
            room = min(self.conn.local_flow_control_window(stream), self.conn.max_outbound_frame_size)
            chunk = data[:room]
            last = len(chunk) == len(data)
            if chunk or last:
                self.conn.send_data(stream, chunk, end_stream=end and last)
                self.flush(label)
                data = data[len(chunk):]
                if last:
                    return
            else:
                self.events()


def text(n, seed):
    words = [b"meter", b"audit", b"frame", b"stream", b"hpack", b"window", b"settings", b"padding"]
    return b" ".join(words[(i * 7 + seed) % len(words)] for i in range(n))[:n]


BIG = "x" * 20000  # more than the 16,384-byte default frame size: HEADERS + CONTINUATION
GZIPPED = gzip.compress(text(20000, 3), mtime=0)
PLAIN = text(4000, 1)


def request_headers(path, method="GET", extra=()):
    return [(":method", method), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", path),
            ("user-agent", "h2pair/1"), ("accept", "*/*"), *extra]


def client(port, path, more=False):
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    local = sock.getsockname()
    log = FrameLog(path, "client")
    log.endpoints = {"client": f"{local[0]}:{local[1]}", "server": f"127.0.0.1:{port}"}
    peer = Peer(sock, log, client=True)
    conn = peer.conn
    conn.initiate_connection()
    peer.flush()
    if more:
        return client_more(peer)
    peer.headers(1, request_headers("/a"), "request:1", end_stream=True)
    upload = request_headers("/upload", "POST", [("content-type", "text/plain")])
    log.fields("request:3", upload)
    conn.send_headers(3, upload)
    conn.send_data(3, PLAIN[:1500], pad_length=10)
    conn.send_data(3, PLAIN[1500:3000])
    log.fields("request:3", [("x-checksum", "abc123")])
    conn.send_headers(3, [("x-checksum", "abc123")], end_stream=True)
    peer.flush("request:3")
    peer.headers(5, request_headers("/big", extra=[("x-big", BIG)]), "request:5", end_stream=True)
    peer.headers(7, request_headers("/gzip", extra=[("accept-encoding", "gzip")]), "request:7", end_stream=True,
                 priority_weight=200)  # the PRIORITY flag's 5 bytes in HEADERS
    peer.headers(9, request_headers("/reset"), "request:9", end_stream=True)
    peer.headers(11, request_headers("/a"), "request:11", end_stream=True)  # repeated: a smaller block
    peer.headers(13, request_headers("/early"), "request:13", end_stream=True)
    conn.ping(b"pingpong")
    peer.flush()
    done = set()
    while len(done) < 8:  # 7 streams and the pushed one
        events = peer.events()
        if events is None:
            break
        for event in events:
            if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                done.add(event.stream_id)
    conn.close_connection()
    peer.flush()
    sock.close()


LARGE = text(100000, 5)  # more than the 65,535-byte initial windows: WINDOW_UPDATEs
CANCELLED = text(30000, 6)
UPLOAD_GZ = gzip.compress(text(5000, 2), mtime=0)


def client_more(peer):
    """First exchange, the mark (a capture cut there starts mid-connection), then HEAD, a 304,
    a flow-controlled 100,000-byte download, a download the client cancels mid-body
    (RST_STREAM), and a gzip-coded upload."""
    conn = peer.conn

    def wait_for(streams):
        done = set()
        while not streams <= done:
            events = peer.events()
            if events is None:
                return
            for event in events:
                if isinstance(event, h2.events.DataReceived) and event.stream_id == 9 and 9 not in done:
                    conn.reset_stream(9, error_code=8)  # CANCEL after the first DATA frame
                    peer.flush()
                    done.add(9)
                if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    done.add(event.stream_id)

    peer.headers(1, request_headers("/first"), "request:1", end_stream=True)
    wait_for({1})
    peer.log.write({"label": "mark", "time": time.time()})
    time.sleep(1.0)
    peer.headers(3, request_headers("/head", "HEAD"), "request:3", end_stream=True)
    peer.headers(5, request_headers("/cached", extra=[("if-none-match", '"v1"')]), "request:5", end_stream=True)
    peer.headers(7, request_headers("/large"), "request:7", end_stream=True)
    peer.headers(9, request_headers("/cancel"), "request:9", end_stream=True)
    upload = request_headers("/upload", "POST", [("content-type", "text/plain"), ("content-encoding", "gzip")])
    peer.headers(11, upload, "request:11")
    peer.body(11, UPLOAD_GZ, "request:11")
    wait_for({3, 5, 7, 9, 11})
    conn.close_connection()
    peer.flush()
    peer.sock.close()


def respond(peer, stream, status, headers, body, label=None, end=True):
    label = label or f"response:{stream}"
    peer.headers(stream, [(":status", str(status)), *headers], label, end_stream=not body and end)
    if body:
        peer.body(stream, body, label, end=end)


def serve(peer):
    conn = peer.conn
    ended = set()
    while len(ended) < 7:
        events = peer.events()
        if events is None:
            return
        for event in events:
            if isinstance(event, h2.events.StreamEnded):
                ended.add(event.stream_id)
    # A push promised on stream 1, an Early Hints before stream 13's answer.
    pushed = request_headers("/pushed.css")
    peer.log.fields("push:2", pushed)
    conn.push_stream(1, 2, pushed)
    peer.flush("push:2")
    respond(peer, 13, 103, [("link", "</pushed.css>; rel=preload")], b"", label="interim:13", end=False)
    # Streams 3 and 7 interleave their DATA frames; 3 is padded and ends with trailers.
    respond(peer, 3, 200, [("content-type", "text/plain")], b"", end=False)
    respond(peer, 7, 200, [("content-type", "text/plain"), ("content-encoding", "gzip")], b"", end=False)
    for i in range(0, max(len(PLAIN), len(GZIPPED)), 1000):
        if i < len(PLAIN):
            conn.send_data(3, PLAIN[i:i + 1000], pad_length=(i // 1000) * 3)
            peer.flush("response:3")
        if i < len(GZIPPED):
            conn.send_data(7, GZIPPED[i:i + 1000], end_stream=i + 1000 >= len(GZIPPED))
            peer.flush("response:7")
    peer.headers(3, [("x-served", "yes")], "response:3", end_stream=True)
    respond(peer, 1, 200, [("content-type", "text/plain")], text(300, 2))
    respond(peer, 2, 200, [("content-type", "text/css")], text(200, 5))
    respond(peer, 5, 200, [("x-big-echo", BIG)], text(100, 4))
    respond(peer, 9, 200, [("content-type", "text/plain")], text(500, 6), end=False)
    conn.reset_stream(9)
    peer.flush()
    respond(peer, 11, 200, [("content-type", "text/plain")], text(300, 2))
    respond(peer, 13, 200, [("content-type", "text/plain")], text(50, 7))
    while peer.events() is not None:
        pass


def ended_streams(peer, wanted):
    ended = set()
    while not wanted <= ended:
        events = peer.events()
        if events is None:
            return
        for event in events:
            if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                ended.add(event.stream_id)


def serve_more(peer):
    """The server of client_more."""
    conn = peer.conn
    ended_streams(peer, {1})
    respond(peer, 1, 200, [("content-type", "text/plain")], text(400, 3))
    ended_streams(peer, {3, 5, 7, 9, 11})
    respond(peer, 3, 200, [("content-type", "text/plain"), ("content-length", "1234")], b"")
    respond(peer, 5, 304, [("etag", '"v1"')], b"")
    respond(peer, 11, 201, [("content-type", "text/plain")], text(20, 1))
    # One DATA frame of stream 9, then nothing until the client's RST_STREAM.
    respond(peer, 9, 200, [("content-type", "text/plain")], b"", end=False)
    conn.send_data(9, CANCELLED[:8000])
    peer.flush("response:9")
    reset = False
    while not reset:
        events = peer.events()
        if events is None:
            return
        reset = any(isinstance(e, h2.events.StreamReset) and e.stream_id == 9 for e in events)
    respond(peer, 7, 200, [("content-type", "text/plain")], LARGE)
    while peer.events() is not None:
        pass


def serve_generic(peer):
    """Any client's requests (curl): /gz answers gzip-coded text, anything else plain text whose
    length the path's last number gives (default 700); HEAD gets the head only."""
    requests = {}
    while True:
        events = peer.events()
        if events is None:
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                requests[event.stream_id] = dict(event.headers)
            if not isinstance(event, h2.events.StreamEnded):
                continue
            stream = event.stream_id
            request = requests.get(stream, {})
            path = request.get(":path", "/")
            digits = "".join(c for c in path.rsplit("/", 1)[-1] if c.isdigit())
            body = text(int(digits) if digits else 700, stream)
            headers = [("content-type", "text/plain")]
            if path.startswith("/gz"):
                body = gzip.compress(body, mtime=0)
                headers.append(("content-encoding", "gzip"))
            if request.get(":method") == "HEAD":
                respond(peer, stream, 200, [*headers, ("content-length", str(len(body)))], b"")
            else:
                respond(peer, stream, 200, headers, body)


def server(port, path, mode):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    listener.settimeout(TIMEOUT)
    while True:
        try:
            sock, remote = listener.accept()
        except TimeoutError:
            return
        sock.settimeout(TIMEOUT)
        log = FrameLog(path, "server")
        log.endpoints = {"client": f"{remote[0]}:{remote[1]}", "server": f"127.0.0.1:{port}"}
        peer = Peer(sock, log, client=False)
        if mode == "--upgrade":
            serve_upgrade(peer, sock, log)
        else:
            if mode == "--generic":
                peer.inbound = InboundLog(log, "client", "request")
            peer.conn.initiate_connection()
            peer.flush()
            {"--more": serve_more, "--generic": serve_generic}.get(mode, serve)(peer)
        sock.close()
        if mode != "--generic":
            return
        # --generic serves one connection after another (curl 7.88 cannot reuse a prior-knowledge
        # connection), until none comes for 2 s.
        listener.settimeout(2)


def serve_upgrade(peer, sock, log):
    """HTTP/1.1 request with Upgrade: h2c, answered by 101; its response goes as stream 1."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            return
        head += chunk
    request, rest = head.split(b"\r\n\r\n", 1)
    settings = next(line.split(b":", 1)[1].strip() for line in request.split(b"\r\n")
                    if line.lower().startswith(b"http2-settings:"))
    switching = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
    log.write({"label": "http1", "kind": "response", "status": 101, "length": len(switching)})
    sock.sendall(switching)
    peer.conn.initiate_upgrade_connection(settings)
    peer.flush()
    if rest:
        peer.conn.receive_data(rest)
        peer.flush()
    respond(peer, 1, 200, [("content-type", "text/plain")], text(700, 1))
    while peer.events() is not None:
        pass


def header_list_size(fields):
    """RFC 7541 §4.1: the size of a header list is Σ len(name) + len(value) + 32."""
    return sum(len(n.encode()) + len(v.encode()) + 32 for n, v in fields)


def decoded(body, fields):
    """The body after its content codings (gzip only in these samples), last coding first."""
    codings = [c.strip().lower() for n, v in fields if n.lower() == "content-encoding" for c in v.split(",")]
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif coding != "identity":
            raise ValueError(f"coding {coding} not in these samples")
    return body


def truth(paths, after_mark=False):
    """One record per message: sizes summed from the frames its sender logged, the header list
    size and fields of its blocks, its body bytes (zlib, base64) and decoded length. After the
    mark (a capture cut there) the HPACK state is unknown: header_list and fields are null, and
    the body is taken as it came (its codings unknown)."""
    records = {}
    for path in paths:
        marked = not after_mark
        with open(path) as f:
            for line in f:
                frame = json.loads(line)
                label = frame["label"]
                if label == "mark":
                    marked = True
                if not marked or label in ("conn", "http1", "mark"):
                    continue
                role, stream = label.split(":")
                kind = "request" if role in ("request", "push") else "response"
                key = (frame["client"], frame["server"], role, int(stream))
                record = records.setdefault(key, {
                    "client": frame["client"], "server": frame["server"], "kind": kind, "stream": int(stream),
                    "interim": role == "interim", "pushed": role == "push", "wire_line": 0, "wire_headers": 0,
                    "wire_body": 0, "frames": 0, "body": 0, "end_stream": False, "blocks": [], "bytes": b""})
                if frame.get("kind") == "fields":
                    record["blocks"].append(frame["fields"])
                    continue
                record["frames"] += 1
                if frame["type"] == 0:
                    record["wire_body"] += 9 + frame["length"]
                    record["body"] += frame["data"]
                    record["bytes"] += zlib.decompress(base64.b64decode(frame["z"]))
                else:
                    record["wire_headers"] += 9 + frame["length"]
                if frame["type"] in (0, 1) and frame["flags"] & 1:
                    record["end_stream"] = True
    for record in sorted(records.values(), key=lambda r: (r["client"], r["kind"], r["stream"], not r["interim"])):
        # A pushed request and an interim response end with their block.
        record["complete"] = record.pop("end_stream") or record["pushed"] or record["interim"]
        blocks, body = record.pop("blocks"), record.pop("bytes")
        assert len(body) == record["body"]
        if after_mark:
            record["header_list"] = record["fields"] = record["trailers"] = None
            record["body_decoded"] = len(body)
        else:
            record["header_list"] = sum(header_list_size(block) for block in blocks)
            record["fields"] = blocks[0] if blocks else []
            record["trailers"] = [field for block in blocks[1:] for field in block]
            record["body_decoded"] = len(decoded(body, record["fields"]))
        record["body_z"] = base64.b64encode(zlib.compress(body, 9)).decode()
        print(json.dumps(record))


def main():
    signal.alarm(60)
    mode = sys.argv[1]
    options = [a for a in sys.argv[2:] if a.startswith("--")]
    arguments = [a for a in sys.argv[2:] if not a.startswith("--")]
    if mode == "server":
        server(int(arguments[0]), arguments[1], options[0] if options else "")
    elif mode == "client":
        client(int(arguments[0]), arguments[1], more="--more" in options)
    elif mode == "truth":
        truth(arguments, after_mark="--after-mark" in options)
    else:
        sys.exit(f"h2pair.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
