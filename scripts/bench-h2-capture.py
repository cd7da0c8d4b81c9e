#!/usr/bin/env python3
"""Generate the MeterAudit HTTP/2 benchmark capture: the traffic of scripts/bench-capture.py (same
plan, same responses) as cleartext HTTP/2 with prior knowledge (h2c), many streams at once.

Used by scripts/bench (see docs/BENCHMARK.md); can be run on its own (as root):

    python3 scripts/bench-h2-capture.py [--size-mb 60] [--seed 1] [--connections 24] [--streams 8]
                                        [--regenerate]

What it does, all on 127.0.0.1 and bounded in count and time:
  1. Re-runs itself in a network namespace of its own (`unshare --net`), where lo runs at MTU 1500
     with its segmentation offloads off (bench-tls-capture.py's set-up, reused), so the kernel
     cuts every TCP segment to the MSS and tcpdump sees frames of at most 1514 bytes.
  2. Plans the traffic from --seed with bench-capture.py's plan() (catalogue, bodies, exchanges
     per connection), then drives it with bench-capture.py's drive(): tcpdump on lo, a server
     and one client thread per connection, both built on the Python `h2` package. Each client
     keeps up to --streams streams open at once (24 x 8 = 192 concurrent streams in all). A
     request is the plan's HTTP/1.1 request as HTTP/2 fields (:method, :scheme, :authority,
     :path, then the fields without Host, Connection and Transfer-Encoding); a POST body goes in
     DATA frames, with content-length unless the plan made it chunked. The server answers with
     bench-capture.py's responses (gzip JSON, binary, text, 1 KB-200 KB, 304, 404): bodies the
     plan sends chunked go out one DATA frame per chunk (no content-length), the others in
     frames of the peer's maximum frame size (with content-length). Flow control is real: the
     client's stream windows are 256 KiB (connection 1 MiB), the server's the default 65,535
     bytes, and both send WINDOW_UPDATEs as they consume data.
  3. Requires "0 packets dropped by kernel", passes the capture through bench-capture.py's
     post-processing (it must find no super-packet to split; it recomputes the checksums lo
     leaves partial), and verifies with tshark: frames <= 1514 bytes, no lost segment, one TCP
     stream per connection.
  4. Writes FILE (pcap) and FILE.json (parameters, sha256, counts, the peak of concurrent
     streams); a later run with the same parameters reuses FILE while it matches.

Prints the capture path as the last line of stdout. The server port (default 28933) is in
FILE.json (`server_port`): tshark needs it (`-d tcp.port==PORT,http2`).
"""

import collections
import importlib.util
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bc = _load("bench_capture", "bench-capture.py")
btls = _load("bench_tls_capture", "bench-tls-capture.py")

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.settings
except ImportError:  # reported in main(): scripts/setup --samples installs it
    h2 = None

GENERATOR_VERSION = 1
NETNS_MARK = "METERAUDIT_BENCH_H2_NETNS"
CLIENT_STREAM_WINDOW = 256 * 1024
CLIENT_CONNECTION_WINDOW = 1024 * 1024


def log(msg):
    print(f"bench-h2-capture: {msg}", file=sys.stderr, flush=True)


def request_fields(ex, port):
    """The plan's HTTP/1.1 request (bench-capture.py's encode_request) as HTTP/2 fields and body."""
    text = bc.encode_request(ex, port)
    head, _, _ = text.partition(b"\r\n\r\n")
    lines = head.decode("ascii").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    fields = [(b":method", method.encode()), (b":scheme", b"http"),
              (b":authority", f"{bc.HOST}:{port}".encode()), (b":path", target.encode())]
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name in ("host", "connection", "transfer-encoding"):
            continue  # connection-specific in HTTP/2, or the :authority
        fields.append((name.encode(), value.strip().encode()))
    body = ex["payload"]
    if body is not None and ex["chunked_req"]:
        # A streamed body: no content-length, as a client uploading as it goes sends it.
        fields = [f for f in fields if f[0] != b"content-length"]
    return fields, body


class Outbox:
    """Bodies waiting for flow-control window, sent in order of their streams."""

    def __init__(self):
        self.pending = collections.OrderedDict()  # stream -> deque of memoryview pieces

    def add(self, stream, pieces):
        self.pending[stream] = collections.deque(memoryview(p) for p in pieces)

    def pump(self, conn):
        for stream in list(self.pending):
            pieces = self.pending[stream]
            while pieces:
                window = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
                if window <= 0:
                    break
                piece = pieces[0]
                n = min(len(piece), window)
                last = n == len(piece) and len(pieces) == 1
                conn.send_data(stream, piece[:n].tobytes(), end_stream=last)
                if n == len(piece):
                    pieces.popleft()
                else:
                    pieces[0] = piece[n:]
            if not pieces:
                del self.pending[stream]


class H2Server(bc.Server):
    """bench-capture.py's server (its responses), speaking HTTP/2 with prior knowledge."""

    def converse(self, sock):
        """HTTP/2 streams on one connection until the client sends GOAWAY or closes."""
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        requests, outbox, closing = {}, Outbox(), False
        while not closing and time.monotonic() < self.deadline:
            data = sock.recv(262144)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = event.headers
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.respond(conn, outbox, event.stream_id, requests.pop(event.stream_id))
                elif isinstance(event, h2.events.ConnectionTerminated):
                    closing = True
            outbox.pump(conn)
            sock.sendall(conn.data_to_send())

    def respond(self, conn, outbox, stream, fields):
        pseudo = {n.decode(): v.decode() for n, v in fields if n.startswith(b":")}
        headers = {n.decode(): v.decode() for n, v in fields if not n.startswith(b":")}
        # The exchange's number on its connection: client streams are 1, 3, 5... in plan order.
        k = (stream - 1) // 2
        h, body, chunked, rng = self.response(f"{pseudo[':method']} {pseudo[':path']} HTTP/2", headers, k)
        status = h[0].split(" ")[1]
        out = [(b":status", status.encode())]
        for line in h[1:]:
            name, _, value = line.partition(":")
            out.append((name.strip().lower().encode(), value.strip().encode()))
        if not chunked and status != "304":
            out.append((b"content-length", str(len(body)).encode()))
        conn.send_headers(stream, out, end_stream=not body)
        if body:
            # A chunked plan: one DATA frame (at most) per flush point; else as the window allows.
            outbox.add(stream, bc.chunk_split(body, rng) if chunked else [body])


def run_h2_client(port, exchanges, deadline, gate, stats, errors, lock, streams):
    try:
        with gate:
            sock, mss = bc.connect(port)
            conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
            conn.local_settings = h2.settings.Settings(
                client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: CLIENT_STREAM_WINDOW})
            conn.initiate_connection()
            conn.increment_flow_control_window(CLIENT_CONNECTION_WINDOW - 65535)
            pending, open_streams, outbox, done, peak = collections.deque(exchanges), set(), Outbox(), 0, 0
            while pending or open_streams:
                if time.monotonic() > deadline:
                    raise TimeoutError("generation deadline exceeded")
                while pending and len(open_streams) < streams:
                    fields, body = request_fields(pending.popleft(), port)
                    stream = conn.get_next_available_stream_id()
                    conn.send_headers(stream, fields, end_stream=body is None)
                    if body is not None:
                        outbox.add(stream, [body])
                    open_streams.add(stream)
                    with lock:
                        stats["open"] += 1
                        stats["peak_open"] = max(stats["peak_open"], stats["open"])
                peak = max(peak, len(open_streams))
                outbox.pump(conn)
                sock.sendall(conn.data_to_send())
                data = sock.recv(262144)
                if not data:
                    raise EOFError("server closed the connection")
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.DataReceived):
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        open_streams.discard(event.stream_id)
                        done += 1
                        with lock:
                            stats["open"] -= 1
                    elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                        raise RuntimeError(f"unexpected {event!r}")
            conn.close_connection()
            sock.sendall(conn.data_to_send())
            sock.shutdown(socket.SHUT_WR)
            bc.finish_client(sock, done, mss, stats, lock)
            with lock:
                stats["peak_per_connection"] = max(stats["peak_per_connection"], peak)
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"client: {e!r}")


def generate(args, raw_path):
    text, catalogue, bodies, conns, mix = bc.plan(args)
    deadline = time.monotonic() + args.timeout
    server = H2Server(args.seed, catalogue, bodies, text, args.port, deadline)
    stats = {"exchanges": 0, "mss": set(), "open": 0, "peak_open": 0, "peak_per_connection": 0}

    def client(_index, exchanges, gate, errors, lock):
        run_h2_client(server.port, exchanges, deadline, gate, stats, errors, lock, args.streams)

    traffic_s, tstats = bc.drive(server, raw_path, conns, deadline, len(conns), client, stats)
    log(f"traffic done in {traffic_s:.1f}s; tcpdump: {tstats}; peak concurrent streams {stats['peak_open']}")
    return bc.traffic_info(conns, mix, server, stats, traffic_s, tstats,
                           peak_concurrent_streams=stats["peak_open"],
                           peak_streams_per_connection=stats["peak_per_connection"])


def in_namespace(args, out, meta_path, params):
    """The generation proper, inside our network namespace."""
    loopback = btls.setup_namespace_loopback()
    log(f"network namespace: lo {loopback}")
    raw, tmp = out + ".raw", out + ".tmp"
    try:
        t0 = time.monotonic()
        try:
            info = generate(args, raw)
        except (RuntimeError, OSError) as e:
            log(f"generation failed: {e}")
            return 1
        meta = bc.publish_capture(args, info, raw, tmp, out, meta_path, {"params": params, "loopback": loopback},
                                  t0, log)
        if meta is None:
            return 1
        log(f"wrote {out} ({meta['bytes'] / 1e6:.1f} MB, {info['exchanges']} exchanges on {info['connections']} "
            f"connections, {meta['verify']['frames']} frames, peak {info['peak_concurrent_streams']} concurrent streams)")
        return 0
    finally:
        for p in (raw, tmp):
            if os.path.exists(p):
                os.unlink(p)


def main():
    ap = bc.arguments(__doc__, "h2c-bench", 24, 28933, "server port on 127.0.0.1 (in our own namespace)",
                      extra=lambda ap: ap.add_argument("--streams", type=int, default=8,
                                                       help="concurrent streams per connection (default 8)"))
    args = ap.parse_args()
    if args.size_mb < 1 or args.connections < 1 or args.streams < 1:
        ap.error("--size-mb, --connections and --streams must be positive")

    repo = os.path.dirname(HERE)
    out = os.path.abspath(args.out or os.path.join(repo, "bench-data", f"h2c-bench-{args.size_mb}mb-s{args.seed}.pcap"))
    meta_path = out + ".json"
    params = {"generator_version": GENERATOR_VERSION, "base_generator_version": bc.GENERATOR_VERSION,
              "size_mb": args.size_mb, "seed": args.seed, "connections": args.connections,
              "streams": args.streams}
    if os.environ.get(NETNS_MARK) == "1":
        return in_namespace(args, out, meta_path, params)

    if not args.regenerate and bc.reuse(out, meta_path, params, log):
        return 0
    if h2 is None:
        log("the Python h2 package is missing (run scripts/setup --samples)")
        return 2
    return btls.launch_in_namespace(__file__, NETNS_MARK, args, out, (out, meta_path),
                                    ("tcpdump", "tshark", "ethtool", "ip", "unshare"), log,
                                    extra_argv=("--streams", str(args.streams)))


if __name__ == "__main__":
    sys.exit(main())
