#!/usr/bin/env python3
"""An HTTP/3 server and client over aioquic (PyPI), for scripts/make-h3-samples.

Both peers log every QUIC packet and HTTP/3 frame they send and receive as qlog
(aioquic's QuicFileLogger, one file per connection and vantage point): the ground truth that
scripts/h3-truth reads. The client writes an NSS key log (secrets_log_file). Each peer also
writes a JSON Lines application log (--log): per message it sent, the stream, kind, path or
status and the body's length before and after content coding, which qlog does not tell.

    h3pair.py server --listen HOST:PORT --cert C --key K --qlog DIR --log F [--ready F]
    h3pair.py client --server HOST:PORT --qlog DIR --keys F --log F SCENARIO [--version 2]

Server paths: /text?n=N (N bytes of text), /gzip?n=N (gzip-coded text), /upload (POST, echoes
the body's length), /trailers, /hints (103 Early Hints, then 200), /reset (headers, some
DATA, then RESET_STREAM), /push (a PUSH_PROMISE for /pushed.css and its push stream).
Scenarios: mixed, download, small, midconn, loss (see scripts/make-h3-samples).
Every run is bounded in time (--max-seconds); traffic only to the address given.
"""
import argparse
import asyncio
import gzip
import json
import os
import signal
import ssl
import sys
import time
from urllib.parse import urlparse, parse_qs

from aioquic.asyncio import serve, connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection, ErrorCode
from aioquic.h3.events import DataReceived, HeadersReceived, PushPromiseReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent, StreamReset
from aioquic.quic.logger import QuicFileLogger
from aioquic.quic.packet import QuicProtocolVersion

WORDS = b"meter audit quic stream frame header body packet datagram window flow control "


def text(n, seed=0):
    """N bytes of compressible word text (deterministic)."""
    out = bytearray()
    i = seed
    while len(out) < n:
        out += WORDS[i % 7 * 3:] + str(i).encode() + b"\n"
        i += 1
    return bytes(out[:n])


class AppLog:
    def __init__(self, path):
        self.f = open(path, "a")

    def write(self, **kw):
        self.f.write(json.dumps(kw, sort_keys=True) + "\n")
        self.f.flush()


# ------------------------------------------------------------------ server

class ServerProtocol(QuicConnectionProtocol):
    log: AppLog = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.requests = {}

    def quic_event_received(self, event: QuicEvent):
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                req = self.requests.setdefault(ev.stream_id, {"headers": ev.headers, "body": b""})
                if ev.stream_ended:
                    self.respond(ev.stream_id, req)
            elif isinstance(ev, DataReceived):
                req = self.requests.setdefault(ev.stream_id, {"headers": [], "body": b""})
                req["body"] += ev.data
                if ev.stream_ended:
                    self.respond(ev.stream_id, req)

    def respond(self, sid, req):
        h = dict(req["headers"])
        url = urlparse(h.get(b":path", b"/").decode())
        q = parse_qs(url.query)
        n = int(q.get("n", ["1000"])[0])
        path = url.path
        base = [(b"server", b"h3pair/1")]
        log = lambda **kw: self.log.write(side="server", stream=sid, path=h.get(b":path", b"").decode(), **kw)
        if path == "/text":
            body = text(n, sid)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/plain"),
                                       (b"content-length", str(len(body)).encode())] + base)
            self.send_body(sid, body)
            log(kind="response", status=200, body=len(body), body_decoded=len(body))
        elif path == "/gzip":
            plain = text(n, sid)
            body = gzip.compress(plain, mtime=0)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/plain"),
                                       (b"content-encoding", b"gzip")] + base)
            self.send_body(sid, body)
            log(kind="response", status=200, body=len(body), body_decoded=len(plain))
        elif path == "/upload":
            body = b"received %d bytes\n" % len(req["body"])
            self.h3.send_headers(sid, [(b":status", b"201"), (b"content-type", b"text/plain")] + base)
            self.h3.send_data(sid, body, end_stream=True)
            log(kind="response", status=201, body=len(body), body_decoded=len(body), request_body=len(req["body"]))
        elif path == "/trailers":
            body = text(2000, sid)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/plain")] + base)
            self.h3.send_data(sid, body, end_stream=False)
            self.h3.send_headers(sid, [(b"x-checksum", b"abc123"), (b"x-rows", b"42")], end_stream=True)
            log(kind="response", status=200, body=len(body), body_decoded=len(body), trailers=2)
        elif path == "/hints":
            self.h3.send_headers(sid, [(b":status", b"103"), (b"link", b"</style.css>; rel=preload; as=style")])
            log(kind="interim", status=103, body=0, body_decoded=0)
            body = text(800, sid)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/html"),
                                       (b"link", b"</style.css>; rel=preload; as=style")] + base)
            self.h3.send_data(sid, body, end_stream=True)
            log(kind="response", status=200, body=len(body), body_decoded=len(body))
        elif path == "/reset":
            body = text(4000, sid)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/plain")] + base)
            self.h3.send_data(sid, body, end_stream=False)
            self.transmit()
            self._quic.reset_stream(sid, ErrorCode.H3_REQUEST_CANCELLED)
            log(kind="response", status=200, body=len(body), body_decoded=len(body), reset=True)
        elif path == "/push":
            try:
                push_sid = self.h3.send_push_promise(sid, [
                    (b":method", b"GET"), (b":scheme", b"https"),
                    (b":authority", h.get(b":authority", b"localhost")), (b":path", b"/pushed.css")])
                css = text(600, 99)
                self.h3.send_headers(push_sid, [(b":status", b"200"), (b"content-type", b"text/css")] + base)
                self.h3.send_data(push_sid, css, end_stream=True)
                log(kind="push", push_stream=push_sid, status=200, body=len(css), body_decoded=len(css))
            except Exception as e:  # the client may not allow pushes
                log(kind="push-refused", error=repr(e))
            body = text(500, sid)
            self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/html")] + base)
            self.h3.send_data(sid, body, end_stream=True)
            log(kind="response", status=200, body=len(body), body_decoded=len(body))
        else:
            self.h3.send_headers(sid, [(b":status", b"404")] + base, end_stream=True)
            log(kind="response", status=404, body=0, body_decoded=0)
        self.transmit()

    def send_body(self, sid, body):
        # DATA frames of at most 16 KiB, as a server writing a file in chunks would
        for i in range(0, len(body), 16384):
            self.h3.send_data(sid, body[i:i + 16384], end_stream=i + 16384 >= len(body))
        if not body:
            self.h3.send_data(sid, b"", end_stream=True)


async def run_server(args):
    host, port = args.listen.rsplit(":", 1)
    host = host.strip("[]")
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN,
                               quic_logger=QuicFileLogger(os.path.join(args.qlog, "server")))
    config.load_cert_chain(args.cert, args.key)
    ServerProtocol.log = AppLog(args.log)
    server = await serve(host, int(port), configuration=config, create_protocol=ServerProtocol)
    stop = asyncio.Event()
    # a background job of a script ignores SIGINT: SIGTERM ends the server
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    if args.ready:
        open(args.ready, "w").close()
    try:
        await asyncio.wait_for(stop.wait(), args.max_seconds)
    except asyncio.TimeoutError:
        pass
    finally:
        server.close()


# ------------------------------------------------------------------ client

class ClientProtocol(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiters = {}
        self.received = {}
        self.on_data = None

    def quic_event_received(self, event: QuicEvent):
        if isinstance(event, StreamReset) and event.stream_id in self.waiters:
            r = self.received[event.stream_id]
            r["reset"] = True
            w = self.waiters.pop(event.stream_id)
            if not w.done():
                w.set_result(r)
        for ev in self.h3.handle_event(event):
            if isinstance(ev, (HeadersReceived, DataReceived)) and ev.stream_id in self.received:
                r = self.received[ev.stream_id]
                if isinstance(ev, HeadersReceived):
                    r["heads"].append(ev.headers)
                else:
                    r["body"] += ev.data
                    if self.on_data:
                        self.on_data(ev.stream_id, len(r["body"]))
                if ev.stream_ended and ev.stream_id in self.waiters:
                    w = self.waiters.pop(ev.stream_id)
                    if not w.done():
                        w.set_result(r)

    async def request(self, log, method, path, body=None, headers=()):
        sid = self._quic.get_next_available_stream_id()
        fields = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", b"localhost"),
                  (b":path", path.encode()), (b"user-agent", b"h3pair/1"), (b"accept", b"*/*")] + list(headers)
        self.received[sid] = {"heads": [], "body": b"", "reset": False}
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[sid] = waiter
        self.h3.send_headers(sid, fields, end_stream=body is None)
        if body is not None:
            self.h3.send_data(sid, body, end_stream=True)
        log.write(side="client", stream=sid, kind="request", method=method, path=path,
                  body=len(body or b""), body_decoded=len(body or b""))
        self.transmit()
        r = await asyncio.wait_for(waiter, 20)
        log.write(side="client", stream=sid, kind="received", path=path, heads=len(r["heads"]),
                  body=len(r["body"]), reset=r["reset"])
        return r


async def run_client(args):
    host, port = args.server.rsplit(":", 1)
    host = host.strip("[]")
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                               server_name="localhost", quic_logger=QuicFileLogger(os.path.join(args.qlog, "client")),
                               secrets_log_file=open(args.keys, "a"))
    if args.version == 2:
        config.supported_versions = [QuicProtocolVersion.VERSION_2]
    if args.scenario in ("download", "loss"):
        # small windows: the server waits for MAX_STREAM_DATA and MAX_DATA (flow control)
        config.max_stream_data = 65536
        config.max_data = 131072
    log = AppLog(args.log)
    async with connect(host, int(port), configuration=config, create_protocol=ClientProtocol) as client:
        c: ClientProtocol = client
        if args.scenario == "mixed":
            await asyncio.gather(
                c.request(log, "GET", "/text?n=1200"),
                c.request(log, "GET", "/text?n=3000"),
                c.request(log, "GET", "/gzip?n=20000"),
                c.request(log, "POST", "/upload", body=text(5000, 7),
                          headers=[(b"content-type", b"text/plain"), (b"content-length", b"5000")]),
                c.request(log, "GET", "/trailers"),
                c.request(log, "GET", "/hints"),
            )
            await c.request(log, "GET", "/reset")
            await c.request(log, "GET", "/push")
            await asyncio.sleep(0.2)
        elif args.scenario == "download":
            updated = []

            def on_data(sid, have):
                if not updated and have >= 100000:
                    updated.append(sid)
                    c._quic.request_key_update()
                    log.write(side="client", kind="key-update", after_body_bytes=have)
            c.on_data = on_data
            await c.request(log, "GET", "/text?n=300000")
            await c.request(log, "GET", "/text?n=500")
        elif args.scenario == "small":
            await asyncio.gather(c.request(log, "GET", "/text?n=1500"), c.request(log, "GET", "/gzip?n=8000"))
        elif args.scenario == "midconn":
            await c.request(log, "GET", "/text?n=1000")
            log.write(side="client", kind="pause", time=time.time())
            await asyncio.sleep(1.5)
            log.write(side="client", kind="resume", time=time.time())
            await asyncio.gather(c.request(log, "GET", "/text?n=2000"), c.request(log, "GET", "/gzip?n=6000"))
            await c.request(log, "POST", "/upload", body=text(1500, 3), headers=[(b"content-type", b"text/plain")])
        elif args.scenario == "loss":
            await asyncio.gather(c.request(log, "GET", "/text?n=120000"),
                                 *[c.request(log, "GET", "/text?n=%d" % (1000 + 700 * i)) for i in range(6)])
            await c.request(log, "POST", "/upload", body=text(30000, 5), headers=[(b"content-type", b"text/plain")])
        else:
            raise SystemExit("unknown scenario " + args.scenario)
        c.close()
        await c.wait_closed()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--listen", required=True)
    s.add_argument("--cert", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--qlog", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--ready")
    s.add_argument("--max-seconds", type=float, default=60)
    c = sub.add_parser("client")
    c.add_argument("--server", required=True)
    c.add_argument("--qlog", required=True)
    c.add_argument("--keys", required=True)
    c.add_argument("--log", required=True)
    c.add_argument("--version", type=int, default=1)
    c.add_argument("--max-seconds", type=float, default=60)
    c.add_argument("scenario")
    args = p.parse_args()
    # one directory per peer: aioquic names each trace by the connection id alone
    os.makedirs(os.path.join(args.qlog, args.cmd), exist_ok=True)
    if args.cmd == "server":
        try:
            asyncio.run(run_server(args))
        except KeyboardInterrupt:
            pass
    else:
        asyncio.run(asyncio.wait_for(run_client(args), args.max_seconds))


if __name__ == "__main__":
    main()
