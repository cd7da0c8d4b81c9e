#!/usr/bin/env python3
"""Turn the senders' own logs into Samples/*.truth.jsonl (used by scripts/make-samples).

Every message a sender wrote becomes one *sender record*:
  {"source", "client", "server", "kind", "seq", "method", "status",
   "parts": [[part, bytes, captured], ...], "body_decoded", "dechunked", "coding"}
where part is line/headers/body, seq counts the sender's messages on that
connection (all of them, captured or not) and captured says whether the write
happened while tcpdump was capturing.

Sources:
  python  pyhttp.py logs (already sender records)
  curl    `curl --trace` (=> Send header / => Send data blocks: the exact bytes curl
          wrote) + the `-w` lines of the same invocation (local/remote address)
  curl-exchanges  the same trace read both ways: also <= Recv header / <= Recv data, the
          exact plaintext bytes curl read (over TLS: what it decrypted), as the
          responses' truth; any number of transfers and connections, one -w line per
          transfer (the transfer's connection)
  raw     request bytes a script wrote itself (files, in order), on the one connection
          nginx's JSON access log names (openssl s_client's requests)
  nginx   the JSON access log ($bytes_sent, $body_bytes_sent, $status, ...) + the
          debug error log ("send 100 Continue", "http chunk: N") + the served files

`build` merges sender records into the truth file: a message is listed when its
start line was captured, index counts listed messages per (connection, kind),
complete is false when later parts of it were not captured.
"""
import argparse
import json
import os
import re
import sys
import zlib

TRUTH_KEYS = ["client", "server", "kind", "index", "method", "status", "wire_line",
              "wire_headers", "wire_body", "body_decoded", "complete"]


def endpoint(ip, port):
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def dechunk(raw):
    """(decoded data, consumed length) of a chunked body."""
    pos, out = 0, b""
    while True:
        eol = raw.index(b"\n", pos)
        size = int(raw[pos:eol].split(b";")[0].strip(), 16)
        pos = eol + 1
        if size == 0:
            break
        out += raw[pos:pos + size]
        pos += size
        pos = raw.index(b"\n", pos) + 1
    while True:
        eol = raw.index(b"\n", pos)
        line = raw[pos:eol + 1]
        pos = eol + 1
        if line in (b"\r\n", b"\n"):
            return out, pos


def header_value(head, name):
    for l in head.split(b"\n")[1:]:
        n, _, v = l.partition(b":")
        if n.strip().lower() == name.encode():
            return v.strip().decode()
    return None


# --------------------------------------------------------------------------- curl

BLOCK = re.compile(r"^(=>|<=|==) (Send header|Send data|Recv header|Recv data|Info|Send SSL data|Recv SSL data)(?:, (\d+) bytes)?")


def parse_curl_trace(path):
    """[(direction+type, bytes)] in trace order ('Info' blocks carry their text)."""
    blocks = []
    for line in open(path, encoding="latin-1"):
        line = line.rstrip("\n")
        m = BLOCK.match(line)
        if m:
            if m.group(2) == "Info":
                blocks.append(["Info", line.split("Info: ", 1)[1], None])
            else:
                blocks.append([m.group(2), bytearray(), int(m.group(3))])
            continue
        if blocks and blocks[-1][0] != "Info" and re.match(r"^[0-9a-f]{4}: ", line):
            blocks[-1][1] += bytes(int(t, 16) for t in line[6:6 + 48].split())
    for kind, data, n in blocks:
        if kind != "Info" and len(data) != n:
            sys.exit(f"{path}: {kind} block has {len(data)} bytes, header says {n}")
    return [(k, bytes(d) if k != "Info" else d) for k, d, _ in blocks]


def curl_records(trace, wout):
    """Sender records for the requests of ONE curl invocation (one connection)."""
    blocks = parse_curl_trace(trace)
    ws = [l.split() for l in open(wout) if l.strip()]
    ends = {(w[0], w[1], w[2], w[3]) for w in ws}
    connects = sum(1 for k, d in blocks if k == "Info" and d.startswith("Connected to "))
    if len(ends) != 1 or connects != 1:
        sys.exit(f"{trace}: expected exactly one connection per curl invocation, got {ends} / {connects}")
    lip, lport, rip, rport = ends.pop()
    client, server = endpoint(lip, lport), endpoint(rip, rport)
    recs = []
    for kind, data in blocks:
        if kind == "Send header":
            eol = data.index(b"\n") + 1
            if not (data.endswith(b"\r\n\r\n") or data.endswith(b"\n\n")):
                sys.exit(f"{trace}: header block does not end with an empty line")
            recs.append({"source": "curl", "client": client, "server": server, "kind": "request",
                         "seq": len(recs), "method": data.split(b" ", 1)[0].decode(), "status": None,
                         "parts": [["line", eol, True], ["headers", len(data) - eol, True]],
                         "_head": data, "_body": b""})
        elif kind == "Send data":
            recs[-1]["parts"].append(["body", len(data), True])
            recs[-1]["_body"] += data
    for r in recs:
        head, body = r.pop("_head"), r.pop("_body")
        te = (header_value(head, "transfer-encoding") or "").lower()
        decoded = dechunk(body)[0] if "chunked" in te and body else body
        r.update(body_decoded=len(decoded), dechunked=len(decoded), coding=None)
    return recs


def curl_exchange_records(trace, wout):
    """Sender records for both directions of every transfer of one curl invocation: requests
    from the bytes curl sent, responses (interim 1xx ones too) from the bytes it received.
    Transfer i is the i-th request in the trace and the i-th -w line (its connection)."""
    blocks = parse_curl_trace(trace)
    ws = [l.split() for l in open(wout) if l.strip()]
    transfers = sum(1 for k, _ in blocks if k == "Send header")
    if transfers != len(ws):
        sys.exit(f"{trace}: {transfers} requests but {len(ws)} -w lines")
    seq, recs, transfer = {}, [], -1
    current = None  # the response being read

    def new_record(kind, data, eol):
        ends = ws[transfer]
        client, server = endpoint(ends[0], ends[1]), endpoint(ends[2], ends[3])
        k = seq.get((client, kind), 0)
        seq[(client, kind)] = k + 1
        r = {"source": "curl", "client": client, "server": server, "kind": kind, "seq": k,
             "method": data.split(b" ", 1)[0].decode() if kind == "request" else None,
             "status": int(data.split(b" ", 2)[1]) if kind == "response" else None,
             "parts": [["line", eol, True]], "_head": data, "_body": b""}
        recs.append(r)
        return r

    for kind, data in blocks:
        if kind == "Send header":
            transfer += 1
            current = None
            eol = data.index(b"\n") + 1
            if not (data.endswith(b"\r\n\r\n") or data.endswith(b"\n\n")):
                sys.exit(f"{trace}: header block does not end with an empty line")
            r = new_record("request", data, eol)
            r["parts"].append(["headers", len(data) - eol, True])
        elif kind == "Send data":
            req = [r for r in recs if r["kind"] == "request"][-1]
            req["parts"].append(["body", len(data), True])
            req["_body"] += data
        elif kind == "Recv header":
            # curl logs each received header line as its own block: the status line starts a
            # response, the empty line ends its head
            if current is None or current["_done"]:
                if not data.startswith(b"HTTP/"):
                    sys.exit(f"{trace}: response does not start with a status line: {data[:40]!r}")
                current = new_record("response", data, len(data))
                current["_done"] = False
                current["parts"].append(["headers", 0, True])
            else:
                current["parts"][1][1] += len(data)
                current["_head"] += data
                if data in (b"\r\n", b"\n"):
                    current["_done"] = True
        elif kind == "Recv data":
            if current is None or not current["_done"]:
                sys.exit(f"{trace}: data received outside a response body")
            if len(current["parts"]) == 2:
                current["parts"].append(["body", 0, True])
            current["parts"][2][1] += len(data)
            current["_body"] += data
    for r in recs:
        head, body = r.pop("_head"), r.pop("_body")
        r.pop("_done", None)
        te = (header_value(head, "transfer-encoding") or "").lower()
        dechunked = dechunk(body)[0] if "chunked" in te and body else body
        coding = (header_value(head, "content-encoding") or "").lower() or None
        if coding == "gzip":
            decoded = len(zlib.decompress(dechunked, 47))
        elif coding:
            sys.exit(f"{trace}: unexpected content coding {coding}")
        else:
            decoded = len(dechunked)
        r.update(body_decoded=decoded, dechunked=len(dechunked), coding=coding)
    return recs


# --------------------------------------------------------------------------- nginx

# ngx_http_status_lines of nginx 1.22 (the reason phrases nginx writes)
NGINX_REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
                 301: "Moved Permanently", 302: "Moved Temporarily", 303: "See Other", 304: "Not Modified",
                 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
                 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Not Allowed",
                 406: "Not Acceptable", 408: "Request Time-out", 409: "Conflict", 411: "Length Required",
                 412: "Precondition Failed", 413: "Request Entity Too Large", 415: "Unsupported Media Type",
                 416: "Requested Range Not Satisfiable", 500: "Internal Server Error",
                 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Temporarily Unavailable",
                 504: "Gateway Time-out"}
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"   # hard-coded in ngx_http_test_expect()
DEBUG = re.compile(r"\[debug\] \d+#\d+: \*(\d+) (.*)$")


def nginx_debug(path):
    """{connection: [per request: {"continue": bool, "chunks": [sizes]}]} from the debug log."""
    conns = {}
    for line in open(path, encoding="latin-1"):
        m = DEBUG.search(line.rstrip("\n"))
        if not m:
            continue
        reqs = conns.setdefault(int(m.group(1)), [])
        msg = m.group(2)
        if msg.startswith("http request line:"):
            reqs.append({"continue": False, "continue_sent": None, "chunks": []})
        elif not reqs:
            continue
        elif msg == "send 100 Continue":
            reqs[-1]["continue"] = True
        elif reqs[-1]["continue"] and reqs[-1]["continue_sent"] is None and msg.startswith("send: fd:"):
            reqs[-1]["continue_sent"] = msg  # "send: fd:N 25 of 25"
        elif msg.startswith("http chunk: "):
            reqs[-1]["chunks"].append(int(msg.split(": ")[1]))
    return conns


def nginx_records(access, debug, root):
    dbg = nginx_debug(debug)
    recs, seq = [], {}
    for a in read_jsonl(access):
        client = endpoint(a["remote_addr"], a["remote_port"])
        server = endpoint(a["server_addr"], a["server_port"])
        reqs = dbg.get(int(a["connection"]), [])
        n = int(a["connection_requests"])
        if n > len(reqs):
            sys.exit(f"nginx debug log lacks request {n} of connection {a['connection']}")
        d = reqs[n - 1]
        status = int(a["status"])
        bytes_sent, body_sent = int(a["bytes_sent"]), int(a["body_bytes_sent"])
        # $bytes_sent = c->sent; $body_bytes_sent = c->sent - r->header_size. An interim
        # "100 Continue" written by ngx_http_test_expect() is in c->sent but not in
        # header_size, so it shows up inside $body_bytes_sent.
        if d["continue"]:
            if d["continue_sent"] is None or not d["continue_sent"].endswith(f"{len(CONTINUE)} of {len(CONTINUE)}"):
                sys.exit(f"nginx: partial 100 Continue write: {d['continue_sent']}")
            k = seq.setdefault(client, 0)
            recs.append({"source": "nginx", "client": client, "server": server, "kind": "response",
                         "seq": k, "method": None, "status": 100,
                         "parts": [["line", len(CONTINUE) - 2, True], ["headers", 2, True]],
                         "body_decoded": 0, "dechunked": 0, "coding": None})
            seq[client] = k + 1
            body_sent -= len(CONTINUE)
        # nginx always writes "HTTP/1.1 <code> <reason>\r\n" (for proxied responses the
        # upstream's status line text; our upstream is nginx itself, same table)
        line = len(f"HTTP/1.1 {status} {NGINX_REASONS[status]}\r\n")
        headers = bytes_sent - int(a["body_bytes_sent"]) - line
        coding = a["content_encoding"] or None
        chunked = "chunked" in a["transfer_encoding"]
        dechunked = sum(d["chunks"]) if chunked else body_sent
        if coding == "gzip":
            decoded = os.path.getsize(a["request_filename"])
        elif coding:
            sys.exit(f"nginx: unexpected content coding {coding}")
        else:
            decoded = dechunked
        if a["request_method"] == "HEAD" or status in (204, 304):
            assert body_sent == 0, a
            decoded = dechunked = 0
        parts = [["line", line, True], ["headers", headers, True]]
        if body_sent:
            parts.append(["body", body_sent, True])
        k = seq.setdefault(client, 0)
        recs.append({"source": "nginx", "client": client, "server": server, "kind": "response",
                     "seq": k, "method": None, "status": status, "parts": parts,
                     "body_decoded": decoded, "dechunked": dechunked, "coding": coding})
        seq[client] = k + 1
    return recs


def raw_request_records(access, files):
    """Sender records for requests whose exact bytes are in files, written in that order on
    the one connection of nginx's JSON access log (which gives the client's port)."""
    ends = {(a["remote_addr"], a["remote_port"], a["server_addr"], a["server_port"]) for a in read_jsonl(access)}
    if len(ends) != 1:
        sys.exit(f"{access}: expected one connection, got {ends}")
    lip, lport, rip, rport = ends.pop()
    recs = []
    for k, path in enumerate(files):
        data = open(path, "rb").read()
        eol = data.index(b"\n") + 1
        if not data.endswith(b"\r\n\r\n") or b"content-length" in data.lower():
            sys.exit(f"{path}: expected a request head without a body")
        recs.append({"source": "raw", "client": endpoint(lip, lport), "server": endpoint(rip, rport),
                     "kind": "request", "seq": k, "method": data.split(b" ", 1)[0].decode(), "status": None,
                     "parts": [["line", eol, True], ["headers", len(data) - eol, True]],
                     "body_decoded": 0, "dechunked": 0, "coding": None})
    return recs


# --------------------------------------------------------------------------- build

def build(records, snaplen_rule=False):
    groups = {}
    for r in records:
        groups.setdefault((r["client"], r["server"], r["kind"]), []).append(r)
    out = []
    for (client, server, kind), rs in groups.items():
        rs.sort(key=lambda r: r["seq"])
        seqs = [r["seq"] for r in rs]
        if seqs != list(range(len(rs))) or len({r["source"] for r in rs}) != 1:
            sys.exit(f"{client} {kind}: sender records are not one sender's 0..n-1 sequence: {seqs}")
        index = 0
        for r in rs:
            parts = r["parts"]
            if not parts[0][2]:
                continue  # start line not in the capture
            complete = all(p[2] for p in parts)
            size = {k: sum(p[1] for p in parts if p[0] == k and p[2]) for k in ("line", "headers", "body")}
            decoded = r["body_decoded"]
            if not complete:
                if r["coding"] or r["dechunked"] != sum(p[1] for p in parts if p[0] == "body"):
                    sys.exit(f"{client}: cut-short message must have an identity Content-Length body")
                decoded = size["body"]
            if snaplen_rule and r["coding"]:
                decoded = r["dechunked"]
            out.append({"client": client, "server": server, "kind": kind, "index": index,
                        "method": r["method"] if kind == "request" else None,
                        "status": r["status"] if kind == "response" else None,
                        "wire_line": size["line"], "wire_headers": size["headers"],
                        "wire_body": size["body"], "body_decoded": decoded, "complete": complete})
            index += 1
    out.sort(key=lambda t: (t["client"], t["kind"], t["index"], t["server"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", nargs="*", default=[], help="pyhttp.py sender logs")
    ap.add_argument("--curl", nargs=2, action="append", default=[], metavar=("TRACE", "WOUT"),
                    help="curl --trace file and the -w output of the same invocation")
    ap.add_argument("--curl-exchanges", nargs=2, action="append", default=[], metavar=("TRACE", "WOUT"),
                    help="curl --trace file and the -w output (one line per transfer): both directions")
    ap.add_argument("--raw-requests", nargs="+", metavar=("ACCESS", "FILE"),
                    help="nginx JSON access log (the connection), then the request files in order")
    ap.add_argument("--nginx", nargs=3, metavar=("ACCESS", "DEBUG", "ROOT"))
    ap.add_argument("--records", help="also write the merged sender records here")
    ap.add_argument("--snaplen-rule", action="store_true",
                    help="body_decoded of content-coded bodies = de-chunked wire size (payload not captured)")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    records = []
    for p in args.python:
        records += read_jsonl(p)
    for trace, wout in args.curl:
        records += curl_records(trace, wout)
    for trace, wout in args.curl_exchanges:
        records += curl_exchange_records(trace, wout)
    if args.raw_requests:
        records += raw_request_records(args.raw_requests[0], args.raw_requests[1:])
    if args.nginx:
        records += nginx_records(*args.nginx)
    if args.records:
        with open(args.records, "w") as f:
            for r in records:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    truth = build(records, args.snaplen_rule)
    with open(args.out, "w") as f:
        for t in truth:
            f.write(json.dumps({k: t[k] for k in TRUTH_KEYS}) + "\n")
    print(f"truth: {os.path.basename(args.out)}: {len(truth)} messages", file=sys.stderr)


if __name__ == "__main__":
    main()
