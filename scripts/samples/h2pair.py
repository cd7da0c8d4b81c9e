#!/usr/bin/env python3
"""An h2c server and client (Python `h2`) that log every frame they send: the ground truth of
the HTTP/2 samples (scripts/make-h2-samples).

  h2pair.py server PORT LOG [--upgrade]   serve one connection (prior knowledge, or h2c Upgrade)
  h2pair.py client PORT LOG               one prior-knowledge connection, the scripted exchange
  h2pair.py truth LOG... > NAME.truth.jsonl

Every frame a peer writes is logged as {"side", "label", "stream", "type", "flags", "length",
"data"} where label names the message the frame belongs to ("request:S", "response:S",
"interim:S", "push:P") or "conn" (frames no message owns), and data is a DATA frame's body
bytes without padding. Traffic: 127.0.0.1 only; every socket times out, the whole run is
bounded by an alarm.
"""
import gzip
import json
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
            data = 0
            if ftype == 0:
                data = length - (1 + payload[0] if flags & 0x8 else 0)
            self.write({"label": label, "stream": stream, "type": ftype, "flags": flags, "length": length,
                        "data": data})
            pos += 9 + length
        assert pos == len(raw), "frames must end where the bytes do"

    def write(self, record):
        record["side"] = self.side
        record.update(self.endpoints)
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()


class Peer:
    def __init__(self, sock, log, client):
        self.sock = sock
        self.log = log
        config = h2.config.H2Configuration(client_side=client, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)

    def flush(self, label="conn"):
        raw = self.conn.data_to_send()
        if raw:
            self.log.frames(raw, label)
            self.sock.sendall(raw)

    def events(self):
        data = self.sock.recv(65536)
        if not data:
            return None
        events = self.conn.receive_data(data)
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        self.flush()
        return events


def text(n, seed):
    words = [b"meter", b"audit", b"frame", b"stream", b"hpack", b"window", b"settings", b"padding"]
    return b" ".join(words[(i * 7 + seed) % len(words)] for i in range(n))[:n]


BIG = "x" * 20000  # more than the 16,384-byte default frame size: HEADERS + CONTINUATION
GZIPPED = gzip.compress(text(20000, 3), mtime=0)
PLAIN = text(4000, 1)


def request_headers(path, method="GET", extra=()):
    return [(":method", method), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", path),
            ("user-agent", "h2pair/1"), ("accept", "*/*"), *extra]


def client(port, path):
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    local = sock.getsockname()
    log = FrameLog(path, "client")
    log.endpoints = {"client": f"{local[0]}:{local[1]}", "server": f"127.0.0.1:{port}"}
    peer = Peer(sock, log, client=True)
    conn = peer.conn
    conn.initiate_connection()
    peer.flush()
    conn.send_headers(1, request_headers("/a"), end_stream=True)
    peer.flush("request:1")
    conn.send_headers(3, request_headers("/upload", "POST", [("content-type", "text/plain")]))
    conn.send_data(3, PLAIN[:1500], pad_length=10)
    conn.send_data(3, PLAIN[1500:3000])
    conn.send_headers(3, [("x-checksum", "abc123")], end_stream=True)
    peer.flush("request:3")
    conn.send_headers(5, request_headers("/big", extra=[("x-big", BIG)]), end_stream=True)
    peer.flush("request:5")
    conn.send_headers(7, request_headers("/gzip", extra=[("accept-encoding", "gzip")]), end_stream=True,
                      priority_weight=200)  # the PRIORITY flag's 5 bytes in HEADERS
    peer.flush("request:7")
    conn.send_headers(9, request_headers("/reset"), end_stream=True)
    peer.flush("request:9")
    conn.send_headers(11, request_headers("/a"), end_stream=True)  # repeated: a smaller block
    peer.flush("request:11")
    conn.send_headers(13, request_headers("/early"), end_stream=True)
    peer.flush("request:13")
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


def respond(peer, stream, status, headers, body, label=None, end=True):
    label = label or f"response:{stream}"
    peer.conn.send_headers(stream, [(":status", str(status)), *headers], end_stream=not body and end)
    peer.flush(label)
    if body:
        peer.conn.send_data(stream, body, end_stream=end)
        peer.flush(label)


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
    conn.push_stream(1, 2, request_headers("/pushed.css"))
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
    conn.send_headers(3, [("x-served", "yes")], end_stream=True)
    peer.flush("response:3")
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


def server(port, path, upgrade):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    listener.settimeout(TIMEOUT)
    sock, remote = listener.accept()
    sock.settimeout(TIMEOUT)
    log = FrameLog(path, "server")
    log.endpoints = {"client": f"{remote[0]}:{remote[1]}", "server": f"127.0.0.1:{port}"}
    peer = Peer(sock, log, client=False)
    if upgrade:
        serve_upgrade(peer, sock, log)
    else:
        peer.conn.initiate_connection()
        peer.flush()
        serve(peer)
    sock.close()


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


def truth(paths):
    """One record per message, its sizes summed from the frames its sender logged."""
    records = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                frame = json.loads(line)
                label = frame["label"]
                if label in ("conn", "http1"):
                    continue
                role, stream = label.split(":")
                kind = "request" if role in ("request", "push") else "response"
                key = (frame["client"], frame["server"], role, int(stream))
                record = records.setdefault(key, {
                    "client": frame["client"], "server": frame["server"], "kind": kind, "stream": int(stream),
                    "interim": role == "interim", "pushed": role == "push", "wire_line": 0, "wire_headers": 0,
                    "wire_body": 0, "frames": 0, "body": 0, "end_stream": False})
                record["frames"] += 1
                if frame["type"] == 0:
                    record["wire_body"] += 9 + frame["length"]
                    record["body"] += frame["data"]
                else:
                    record["wire_headers"] += 9 + frame["length"]
                if frame["type"] in (0, 1) and frame["flags"] & 1:
                    record["end_stream"] = True
    for record in sorted(records.values(), key=lambda r: (r["client"], r["kind"], r["stream"], not r["interim"])):
        # A pushed request and an interim response end with their block.
        record["complete"] = record.pop("end_stream") or record["pushed"] or record["interim"]
        print(json.dumps(record))


def main():
    signal.alarm(60)
    mode = sys.argv[1]
    if mode == "server":
        server(int(sys.argv[2]), sys.argv[3], "--upgrade" in sys.argv)
    elif mode == "client":
        client(int(sys.argv[2]), sys.argv[3])
    elif mode == "truth":
        truth(sys.argv[2:])
    else:
        sys.exit(f"h2pair.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
