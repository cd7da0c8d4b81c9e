#!/usr/bin/env python3
"""A small HTTP CONNECT proxy for scripts/make-tls-samples (127.0.0.1 only), and the step that
turns what it did into sender records for truth.py.

  connect-proxy.py serve --listen 127.0.0.1:PORT --map MAP.jsonl --ready FILE --max-seconds N
      Accepts `CONNECT host:port HTTP/1.1`, connects to host:port (127.0.0.1 / localhost
      only), answers `HTTP/1.1 200 Connection established`, then copies bytes both ways
      until either side closes. One line per tunnel in MAP: the client's endpoint, the
      proxy's, the upstream connection's local endpoint, and the 200's line and header sizes.

  connect-proxy.py merge --map MAP.jsonl --server-log SERVER.jsonl -o OUT.jsonl
      The capture holds only the client-proxy leg: the server's sender records (pyhttp.py,
      logged on the proxy-server leg) are moved to the client-proxy connection, after the
      proxy's own 200 response, which becomes their seq 0.
"""
import argparse
import json
import os
import select
import socket
import sys
import threading
import time

OK_LINE = b"HTTP/1.1 200 Connection established\r\n"
OK_HEADERS = b"\r\n"


def endpoint(addr):
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise EOFError
        data += chunk
        if len(data) > 65536:
            raise ValueError("CONNECT head too long")
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def tunnel(conn, map_log, lock):
    conn.settimeout(30)
    try:
        head, rest = read_head(conn)
        method, authority, _ = head.split(b"\r\n", 1)[0].decode().split(" ")
        host, _, port = authority.rpartition(":")
        if method != "CONNECT" or host not in ("127.0.0.1", "localhost"):
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
        conn.sendall(OK_LINE + OK_HEADERS)
        with lock:
            map_log.write(json.dumps({
                "client": endpoint(conn.getpeername()), "server": endpoint(conn.getsockname()),
                "upstream": endpoint(upstream.getsockname()), "line": len(OK_LINE),
                "headers": len(OK_HEADERS)}) + "\n")
            map_log.flush()
        if rest:
            upstream.sendall(rest)
        pair = {conn: upstream, upstream: conn}
        while True:
            readable, _, _ = select.select(list(pair), [], [], 30)
            if not readable:
                return
            for s in readable:
                data = s.recv(65536)
                if not data:
                    return
                pair[s].sendall(data)
    except (EOFError, ValueError, OSError) as e:
        print(f"connect-proxy: {e!r}", file=sys.stderr)
    finally:
        conn.close()


def serve(args):
    host, port = args.listen.rsplit(":", 1)
    if host != "127.0.0.1":
        sys.exit("connect-proxy: listens on 127.0.0.1 only")
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, int(port)))
    ls.listen(8)
    ls.settimeout(0.2)
    lock = threading.Lock()
    map_log = open(args.map, "a")
    open(args.ready, "w").close()
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline:
        try:
            conn, _ = ls.accept()
        except socket.timeout:
            continue
        threading.Thread(target=tunnel, args=(conn, map_log, lock), daemon=True).start()


def merge(args):
    tunnels = [json.loads(l) for l in open(args.map) if l.strip()]
    by_upstream = {t["upstream"]: t for t in tunnels}
    out = []
    for t in tunnels:
        out.append({"source": "proxy-tunnel", "client": t["client"], "server": t["server"], "kind": "response",
                    "seq": 0, "method": None, "status": 200,
                    "parts": [["line", t["line"], True], ["headers", t["headers"], True]],
                    "body_decoded": 0, "dechunked": 0, "coding": None})
    for line in open(args.server_log):
        if not line.strip():
            continue
        r = json.loads(line)
        t = by_upstream.get(r["client"])
        if t is None:
            sys.exit(f"connect-proxy merge: {r['client']} is no tunnel's upstream connection")
        r.update(source="proxy-tunnel", client=t["client"], server=t["server"], seq=r["seq"] + 1)
        out.append(r)
    with open(args.out, "w") as f:
        for r in out:
            f.write(json.dumps(r, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--listen", required=True)
    s.add_argument("--map", required=True)
    s.add_argument("--ready", required=True)
    s.add_argument("--max-seconds", type=float, default=60)
    m = sub.add_parser("merge")
    m.add_argument("--map", required=True)
    m.add_argument("--server-log", required=True)
    m.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    serve(args) if args.command == "serve" else merge(args)


if __name__ == "__main__":
    main()
