#!/usr/bin/env python3
"""Generate the MeterAudit HTTP/3 benchmark capture: real HTTP/3 over QUIC v1 between an aioquic
(PyPI) server and client on 127.0.0.1, captured by tcpdump, with the client's NSS key log.

Used by scripts/bench (see docs/BENCHMARK.md); can be run on its own (as root):

    python3 scripts/bench-h3-capture.py [--size-mb 50] [--seed 1] [--connections 24]
                                        [--streams 8] [--port 18540] [--regenerate]

What it does, all on 127.0.0.1 and bounded in count and time:
  1. Plans the traffic from --seed: per connection a list of requests (GET /text?n=N,
     GET /gzip?n=N of 1 KB-200 KB, POST /upload of 1-40 KB), until the planned response and
     upload bodies reach 1.05 x --size-mb (gzip bodies counted at 1/8 of their text; the file
     comes out at about --size-mb: QUIC, UDP, IP and pcap framing and ACK packets fill the rest).
  2. Starts the server (this script, --role server: aioquic, no qlog, so that it keeps up),
     tcpdump on lo (`udp port PORT`, snaplen 65600, 64 MiB buffer), then the client (--role
     client): --connections QUIC connections in one event loop, each keeping up to --streams
     requests open at once (24 x 8 = 192 concurrent streams). The client writes the key log.
     The server answers in DATA frames of at most 16 KiB (as scripts/samples/h3pair.py does).
     Every process has a deadline (server 600 s, client 500 s).
  3. Requires "0 packets dropped by kernel" and that every planned exchange completed (else the
     run is made again, at most 3 times), then
     writes FILE (pcap), FILE.keys and FILE.json (parameters, sha256, counts); a later run with
     the same parameters reuses FILE while its sha256 matches.

Prints the capture path as the last line of stdout. tshark needs the key log to decrypt
(`-o tls.keylog_file:FILE.keys`); aioquic's server sends no key log, the client's has both
directions' secrets.
"""

import argparse
import asyncio
import gzip
import hashlib
import json
import os
import random
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse, parse_qs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORDS = b"meter audit quic stream frame header body packet datagram window flow control "


def text(n, seed=0):
    """N bytes of compressible word text (deterministic), as h3pair.py's text()."""
    out = bytearray()
    i = seed
    while len(out) < n:
        out += WORDS[i % 7 * 3:] + str(i).encode() + b"\n"
        i += 1
    return bytes(out[:n])


def plan(size_mb, seed, connections):
    """Per connection, a list of (method, path, upload length); and the planned body bytes."""
    rng = random.Random(seed)
    target = int(size_mb * 1e6 * 1.05)
    per_conn = [[] for _ in range(connections)]
    total = 0
    i = 0
    while total < target:
        kind = rng.random()
        if kind < 0.55:
            n = rng.choice([rng.randint(1000, 20000), rng.randint(20000, 200000)])
            per_conn[i % connections].append(("GET", "/text?n=%d" % n, 0))
            total += n
        elif kind < 0.9:
            n = rng.randint(5000, 400000)
            per_conn[i % connections].append(("GET", "/gzip?n=%d" % n, 0))
            total += n // 8   # word text deflates about 8:1
        else:
            n = rng.randint(1000, 40000)
            per_conn[i % connections].append(("POST", "/upload", n))
            total += n
        i += 1
    return per_conn, total


# ------------------------------------------------------------------ peers (aioquic)

def server_main(args):
    from aioquic.asyncio import serve
    from aioquic.asyncio.protocol import QuicConnectionProtocol
    from aioquic.h3.connection import H3_ALPN, H3Connection
    from aioquic.h3.events import DataReceived, HeadersReceived
    from aioquic.quic.configuration import QuicConfiguration

    gz_cache = {}

    class Server(QuicConnectionProtocol):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.h3 = H3Connection(self._quic)
            self.requests = {}

        def quic_event_received(self, event):
            for ev in self.h3.handle_event(event):
                if isinstance(ev, HeadersReceived):
                    req = self.requests.setdefault(ev.stream_id, {"headers": ev.headers, "body": 0})
                    if ev.stream_ended:
                        self.respond(ev.stream_id, self.requests.pop(ev.stream_id))
                elif isinstance(ev, DataReceived):
                    req = self.requests.setdefault(ev.stream_id, {"headers": [], "body": 0})
                    req["body"] += len(ev.data)
                    if ev.stream_ended:
                        self.respond(ev.stream_id, self.requests.pop(ev.stream_id))

        def respond(self, sid, req):
            h = dict(req["headers"])
            url = urlparse(h.get(b":path", b"/").decode())
            n = int(parse_qs(url.query).get("n", ["1000"])[0])
            base = [(b"server", b"bench-h3/1"), (b"cache-control", b"max-age=60")]
            if url.path == "/text":
                body = text(n, sid)
                self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"text/plain"),
                                           (b"content-length", str(len(body)).encode())] + base)
            elif url.path == "/gzip":
                body = gz_cache.get(n)
                if body is None:
                    body = gz_cache[n] = gzip.compress(text(n, 0), 6, mtime=0)
                self.h3.send_headers(sid, [(b":status", b"200"), (b"content-type", b"application/json"),
                                           (b"content-encoding", b"gzip")] + base)
            else:
                body = b"received %d bytes\n" % req["body"]
                self.h3.send_headers(sid, [(b":status", b"201"), (b"content-type", b"text/plain")] + base)
            for i in range(0, len(body), 16384):
                self.h3.send_data(sid, body[i:i + 16384], end_stream=i + 16384 >= len(body))
            self.transmit()

    async def run():
        config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
        config.load_cert_chain(args.cert, args.key)
        server = await serve("127.0.0.1", args.port, configuration=config, create_protocol=Server)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        open(args.ready, "w").close()
        try:
            await asyncio.wait_for(stop.wait(), 600)
        except asyncio.TimeoutError:
            pass
        finally:
            server.close()

    asyncio.run(run())


def client_main(args):
    from aioquic.asyncio import connect
    from aioquic.asyncio.protocol import QuicConnectionProtocol
    from aioquic.h3.connection import H3_ALPN, H3Connection
    from aioquic.h3.events import DataReceived, HeadersReceived
    from aioquic.quic.configuration import QuicConfiguration

    per_conn, _ = plan(args.size_mb, args.seed, args.connections)

    class Client(QuicConnectionProtocol):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.h3 = H3Connection(self._quic)
            self.waiters = {}

        def quic_event_received(self, event):
            for ev in self.h3.handle_event(event):
                if isinstance(ev, (HeadersReceived, DataReceived)) and ev.stream_ended:
                    w = self.waiters.pop(ev.stream_id, None)
                    if w and not w.done():
                        w.set_result(True)

        async def request(self, method, path, upload):
            sid = self._quic.get_next_available_stream_id()
            fields = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", b"localhost"),
                      (b":path", path.encode()), (b"user-agent", b"bench-h3/1"), (b"accept", b"*/*")]
            if upload:
                fields.append((b"content-type", b"text/plain"))
            waiter = asyncio.get_running_loop().create_future()
            self.waiters[sid] = waiter
            self.h3.send_headers(sid, fields, end_stream=not upload)
            if upload:
                self.h3.send_data(sid, text(upload, sid), end_stream=True)
            self.transmit()
            await asyncio.wait_for(waiter, 60)

    done = [0]

    async def one(index, keys):
        config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                                   server_name="localhost", secrets_log_file=keys)
        async with connect("127.0.0.1", args.port, configuration=config, create_protocol=Client) as c:
            queue = list(per_conn[index])
            sem = asyncio.Semaphore(args.streams)

            async def run(req):
                async with sem:
                    await c.request(*req)
                    done[0] += 1
            await asyncio.gather(*(run(r) for r in queue))
            c.close()
            await c.wait_closed()

    async def run():
        with open(args.keys, "a") as keys:
            await asyncio.wait_for(asyncio.gather(*(one(i, keys) for i in range(args.connections))), 500)
        print(json.dumps({"exchanges": done[0]}))

    asyncio.run(run())


# ------------------------------------------------------------------ driver

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def generate(args, path):
    per_conn, planned = plan(args.size_mb, args.seed, args.connections)
    exchanges = sum(len(c) for c in per_conn)
    work = tempfile.mkdtemp(prefix="bench-h3-")
    try:
        cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
        ready, keys, pcap = os.path.join(work, "ready"), os.path.join(work, "keys"), os.path.join(work, "cap.pcap")
        me = [sys.executable, os.path.abspath(__file__)]
        common = ["--port", str(args.port), "--size-mb", str(args.size_mb), "--seed", str(args.seed),
                  "--connections", str(args.connections), "--streams", str(args.streams)]
        server = subprocess.Popen(me + ["--role", "server", "--cert", cert, "--key", key, "--ready", ready] + common)
        tcpdump = None
        try:
            if not wait_for(lambda: os.path.exists(ready), 20):
                raise SystemExit("bench-h3-capture: the server did not start")
            tlog = open(os.path.join(work, "tcpdump.log"), "w+")
            tcpdump = subprocess.Popen(["tcpdump", "-i", "lo", "-U", "-s", "65600", "-B", "65536", "-Z", "root",
                                        "-w", pcap, "udp port %d" % args.port], stderr=tlog)
            if not wait_for(lambda: "listening on" in open(tlog.name).read(), 20):
                raise SystemExit("bench-h3-capture: tcpdump did not start")
            time.sleep(0.3)
            started = time.monotonic()
            out = subprocess.run(me + ["--role", "client", "--keys", keys] + common, capture_output=True,
                                 text=True, timeout=520)
            elapsed = time.monotonic() - started
            if out.returncode != 0:
                sys.stderr.write(out.stderr[-3000:])
                raise SystemExit("bench-h3-capture: the client failed")
            done = json.loads(out.stdout.strip().splitlines()[-1])["exchanges"]
            time.sleep(0.5)
        finally:
            if tcpdump:
                tcpdump.send_signal(signal.SIGINT)
                tcpdump.wait(30)
            server.terminate()
            server.wait(30)
        tcpdump_log = open(os.path.join(work, "tcpdump.log")).read()
        if "\n0 packets dropped by kernel" not in "\n" + tcpdump_log:
            raise SystemExit("bench-h3-capture: tcpdump dropped packets:\n" + tcpdump_log)
        if done != exchanges:
            raise SystemExit("bench-h3-capture: %d of %d exchanges completed" % (done, exchanges))
        packets = int(tcpdump_log.split(" packets captured")[0].split()[-1])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.move(keys, path + ".keys")
        shutil.move(pcap, path + ".tmp")
        os.replace(path + ".tmp", path)
        meta = {"size_mb": args.size_mb, "seed": args.seed, "connections": args.connections,
                "streams": args.streams, "server_port": args.port, "exchanges": exchanges,
                "http_messages": 2 * exchanges, "planned_body_bytes": planned, "packets": packets,
                "bytes": os.path.getsize(path), "sha256": sha256(path), "client_seconds": round(elapsed, 2)}
        with open(path + ".json", "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
        sys.stderr.write("bench-h3-capture: %d packets, %.1f MB, %d exchanges in %.1f s\n"
                         % (packets, meta["bytes"] / 1e6, exchanges, elapsed))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size-mb", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--connections", type=int, default=24)
    p.add_argument("--streams", type=int, default=8)
    p.add_argument("--port", type=int, default=18540)
    p.add_argument("--regenerate", action="store_true")
    p.add_argument("--role", choices=["server", "client"])
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--ready")
    p.add_argument("--keys")
    args = p.parse_args()
    if args.size_mb < 1 or args.connections < 1 or args.streams < 1:
        p.error("--size-mb, --connections and --streams must be positive")
    if args.role == "server":
        return server_main(args)
    if args.role == "client":
        return client_main(args)
    path = os.path.join(REPO, "bench-data", "h3-bench-%dmb-s%d-c%d-x%d.pcap"
                        % (args.size_mb, args.seed, args.connections, args.streams))
    meta = None
    try:
        meta = json.load(open(path + ".json"))
    except (OSError, ValueError):
        pass
    if (args.regenerate or meta is None or not os.path.exists(path + ".keys")
            or not os.path.exists(path) or meta.get("bytes") != os.path.getsize(path) or meta.get("sha256") != sha256(path)):
        sys.stderr.write("bench-h3-capture: generating %s\n" % path)
        # aioquic on a loaded machine now and then leaves a request unanswered past its 60 s
        # (a loss it does not recover from): such a run is thrown away and made again, 3 tries.
        for attempt in range(1, 4):
            try:
                generate(args, path)
                break
            except (SystemExit, subprocess.TimeoutExpired) as failure:
                sys.stderr.write("bench-h3-capture: attempt %d failed: %s\n" % (attempt, failure))
                if attempt == 3:
                    raise SystemExit("bench-h3-capture: no complete capture in 3 attempts")
    else:
        sys.stderr.write("bench-h3-capture: reusing %s\n" % path)
    print(path)


if __name__ == "__main__":
    main()
