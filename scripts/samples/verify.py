#!/usr/bin/env python3
"""Cross-check a truth file against the capture, using tshark (scripts/make-samples runs this).

usage: verify.py CAPTURE TRUTH [--no-tshark-view] [--layout [--bodies-cut]]

1. Byte check (must pass): tshark dumps every TCP segment (tcp.seq_raw, tcp.len,
   tcp.payload); per connection and direction the byte stream is rebuilt in sequence
   space and the truth messages are laid over it, in index order. Each start line must
   end exactly at wire_line, the header block must end with its empty line exactly at
   wire_headers, the body length must match what the headers announce (Content-Length,
   chunked framing parsed from the bytes, or up to FIN), the decoded length (de-chunked,
   gunzip/inflate) must equal body_decoded, and the messages must cover every byte of
   the direction (a capture starting mid-connection may have unowned bytes before the
   first listed message). Where the payload was cut by the snaplen, only the sequence
   space accounting is checked.
   A body whose payload was cut must have body_decoded == wire_body if it is
   Content-Length delimited (identity: nothing to decode; content-coded: the
   snaplen rule of docs/SAMPLES.md).
   --layout (python-snaplen): every TCP segment with payload must lie entirely
   inside one message's head (start line + header block) or inside one message's
   body, and every head segment must be whole (frame.cap_len == frame.len);
   with --bodies-cut every body segment must be truncated (frame.cap_len < frame.len).
2. tshark's own HTTP view (informational): `tshark -2 -T pdml` HTTP PDUs are compared
   with the truth (method/status, start line, header block, body and decoded sizes)
   and every difference is printed as "tshark-view:".
"""
import gzip
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from collections import defaultdict

FIELDS = ["tcp.stream", "ip.src", "ipv6.src", "tcp.srcport", "ip.dst", "ipv6.dst", "tcp.dstport",
          "tcp.seq_raw", "tcp.len", "tcp.flags.syn", "tcp.flags.fin", "frame.len", "frame.cap_len",
          "tcp.payload"]
REQ_LINE = re.compile(rb"^([A-Z]+) \S+ HTTP/1\.[01]\r?\n$")
RESP_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3})( [^\r\n]*)?\r?\n$")


def ep(ip, port):
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def tshark(args):
    return subprocess.run(["tshark", "-n", *args], check=True, capture_output=True).stdout


class Direction:
    def __init__(self):
        self.segs, self.syn, self.fin = [], None, None
        self.frames = []    # (frame.len, frame.cap_len) of every segment in segs
        self.regions = []   # (start, end, "head"/"body", tag) laid down by check_direction

    def build(self):
        base = self.syn + 1 if self.syn is not None else min(s for s, _, _ in self.segs)
        end = 0
        rel = []
        self.rel = [((seq - base) % 2 ** 32, n) for seq, n, _ in self.segs]
        for seq, n, payload in self.segs:
            r = (seq - base) % 2 ** 32
            rel.append((r, n, payload))
            end = max(end, r + n)
        self.data = bytearray(end)
        self.known = bytearray(end)   # 1 = payload byte captured
        covered = bytearray(end)
        for r, n, payload in rel:
            covered[r:r + n] = b"\1" * n
            self.data[r:r + len(payload)] = payload
            self.known[r:r + len(payload)] = b"\1" * len(payload)
        if 0 in covered:
            raise SystemExit(f"gap in sequence space at offset {covered.index(0)}")
        self.length = end
        self.truncated = 0 in self.known
        return self

    def has(self, a, b):
        return b <= self.length and 0 not in self.known[a:b]


def load_streams(cap):
    out = tshark(["-r", cap, "-o", "tcp.desegment_tcp_streams:FALSE", "-Y", "tcp", "-T", "fields",
                  "-E", "separator=\t", "-E", "occurrence=f"] + sum([["-e", f] for f in FIELDS], []))
    conns = defaultdict(lambda: defaultdict(Direction))
    for line in out.decode().splitlines():
        f = dict(zip(FIELDS, line.split("\t")))
        src = ep(f["ip.src"] or f["ipv6.src"], f["tcp.srcport"])
        dst = ep(f["ip.dst"] or f["ipv6.dst"], f["tcp.dstport"])
        key = tuple(sorted((src, dst)))
        d = conns[key][src]
        seq, n = int(f["tcp.seq_raw"]), int(f["tcp.len"])
        if f["tcp.flags.syn"] in ("1", "True"):
            d.syn = seq
        if f["tcp.flags.fin"] in ("1", "True"):
            d.fin = seq
        if n:
            d.segs.append((seq, n, bytes.fromhex(f["tcp.payload"].replace(":", ""))))
            d.frames.append((int(f["frame.len"]), int(f["frame.cap_len"])))
    return conns


def parse_headers(block):
    """{lower-case name: value}; repeated names joined with ", " (two Content-Encoding
    fields are the list "gzip, gzip")."""
    fields = {}
    last = None
    for l in re.split(rb"\r?\n", block):
        if not l:
            continue
        if l[:1] in (b" ", b"\t") and last:
            fields[last][-1] += b" " + l.strip()
            continue
        n, _, v = l.partition(b":")
        last = n.strip().lower().decode()
        fields.setdefault(last, []).append(v.strip())
    return {k: b", ".join(v).decode("latin-1") for k, v in fields.items()}


def content_length(value):
    """A Content-Length value; a list of identical numbers ("7, 7") is that number."""
    items = {int(x) for x in value.split(",")}
    if len(items) != 1:
        raise ValueError(f"conflicting Content-Length {value!r}")
    return items.pop()


def chunked_len(data, pos):
    """(wire length, decoded bytes) of a chunked body starting at pos."""
    start, out = pos, b""
    while True:
        eol = data.index(b"\n", pos)
        size = int(bytes(data[pos:eol]).split(b";")[0].strip(), 16)
        pos = eol + 1
        if size == 0:
            break
        out += data[pos:pos + size]
        pos += size
        if data[pos:pos + 2] == b"\r\n":
            pos += 2
        elif data[pos:pos + 1] == b"\n":
            pos += 1
        else:
            raise ValueError("chunk data not followed by CRLF")
    while True:
        eol = data.index(b"\n", pos)
        line = data[pos:eol + 1]
        pos = eol + 1
        if line in (b"\r\n", b"\n"):
            return pos - start, out


def decode(body, coding):
    """Remove a Content-Encoding value (a list: last coding first; names case-insensitive)."""
    if coding is None:
        return body
    for c in reversed(coding.split(",")):
        c = c.strip(" \t").lower()
        if c in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif c == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:
                body = zlib.decompress(body, -15)
        elif c not in ("", "identity"):
            raise ValueError(f"unknown coding {c}")
    return body


def check_direction(d, msgs, kind, methods, errors, notes):
    """Lay msgs (one direction, index order) over d's bytes."""
    pos = 0
    if msgs and d.syn is None:
        # mid-connection capture: skip the tail of a message whose start was not captured
        pat = rb"HTTP/1\.[01] \d{3}" if kind == "response" else rb"[A-Z]+ \S+ HTTP/1\.[01]\r?\n"
        m = re.compile(rb"(" + pat + rb")").search(bytes(d.data))  # sample bodies never contain "HTTP/"
        if not m:
            errors.append("no start line found in mid-connection stream")
            return
        pos = m.start(1)
        notes.append(f"{kind}s: {pos} leading bytes belong to a message started before the capture")
    mq = list(methods)
    for t in msgs:
        wl, wh, wb = t["wire_line"], t["wire_headers"], t["wire_body"]
        tag = f"{kind} #{t['index']}"
        b0 = pos + wl + wh
        d.regions += [(pos, b0, "head", tag), (b0, b0 + wb, "body", tag)]
        if not t["complete"]:
            if b0 + wb != d.length:
                errors.append(f"{tag}: cut-short message does not end at the end of the capture")
            pos = b0 + wb
            continue
        if not d.has(pos, b0):
            pos = b0 + wb  # payload not captured (snaplen): sequence-space accounting only
            continue
        line, head = bytes(d.data[pos:pos + wl]), bytes(d.data[pos + wl:b0])
        m = (REQ_LINE if kind == "request" else RESP_LINE).match(line)
        if not m:
            errors.append(f"{tag}: bytes at wire_line are not a start line: {line[:60]!r}")
            return
        if kind == "request" and m.group(1).decode() != t["method"]:
            errors.append(f"{tag}: method {m.group(1)!r} != {t['method']}")
        if kind == "response" and int(m.group(1)) != t["status"]:
            errors.append(f"{tag}: status {m.group(1)!r} != {t['status']}")
        if not (head in (b"\r\n", b"\n") or head.endswith(b"\r\n\r\n") or head.endswith(b"\n\n")) \
                or re.search(rb"\n\r?\n", head[:-1]):
            errors.append(f"{tag}: header block does not end exactly at wire_headers: {head[-40:]!r}")
            return
        h = parse_headers(head)
        status = t["status"]
        method = None
        if kind == "response" and not 100 <= status < 200:
            method = mq.pop(0) if mq else None
        te, cl = h.get("transfer-encoding", "").lower(), h.get("content-length")
        announced = "chunked" in te or (cl is not None and content_length(cl) > 0)
        if kind == "request" and wb == 0 and announced:
            # e.g. refused by 417: the sender never wrote the announced body
            rest = bytes(d.data[b0:b0 + 16])
            if rest and not re.match(rb"[A-Z]+ ", rest):
                errors.append(f"{tag}: announced body missing but next bytes are not a request")
            notes.append(f"{tag}: body announced ({'chunked' if 'chunked' in te else 'Content-Length ' + cl})"
                         f" but never sent (truth wire_body 0)")
            expect, body = 0, b""
        elif kind == "response" and (method == "HEAD" or status in (204, 304) or 100 <= status < 200):
            expect, body = 0, b""
        elif "chunked" in te:
            if not d.has(b0, b0 + wb):
                pos = b0 + wb
                continue
            expect, body = chunked_len(d.data, b0)
        elif cl is not None:
            expect = content_length(cl)
            body = bytes(d.data[b0:b0 + expect])
        elif kind == "response":
            expect = d.length - b0
            body = bytes(d.data[b0:])
            if d.fin is None:
                errors.append(f"{tag}: close-delimited body but no FIN captured")
            notes.append(f"{tag}: close-delimited body of {expect} bytes")
        else:
            expect, body = 0, b""
        if expect != wb:
            errors.append(f"{tag}: wire_body {wb} but the bytes say {expect}")
        if wb and not d.has(b0, b0 + wb) and "chunked" not in te and t["body_decoded"] != wb:
            errors.append(f"{tag}: body payload cut by the snaplen, Content-Length body, "
                          f"but body_decoded {t['body_decoded']} != wire_body {wb}")
        if d.has(b0, b0 + wb):
            try:
                dec = len(decode(bytes(body), h.get("content-encoding")))
            except Exception as e:  # noqa: BLE001
                errors.append(f"{tag}: cannot decode body: {e}")
                dec = None
            if dec is not None and dec != t["body_decoded"]:
                errors.append(f"{tag}: body_decoded {t['body_decoded']} but decoding gives {dec}")
        pos = b0 + wb
    if pos != d.length:
        errors.append(f"{kind}s cover {pos} bytes, direction has {d.length}")


def check_layout(d, who, bodies_cut, errors, stats):
    """--layout: segments vs the head/body regions check_direction laid down."""
    regions = sorted(r for r in d.regions if r[1] > r[0])
    for (r, n), (flen, caplen) in zip(d.rel, d.frames):
        inside = [g for g in regions if g[0] <= r and r + n <= g[1]]
        if not inside:
            hit = [f"{g[3]} {g[2]} [{g[0]},{g[1]})" for g in regions if g[0] < r + n and r < g[1]]
            errors.append(f"{who}: segment [{r},{r + n}) is not inside one head or one body: {hit}")
            continue
        part = inside[0][2]
        stats[part] += 1
        if part == "head" and caplen != flen:
            errors.append(f"{who}: head segment [{r},{r + n}) of {inside[0][3]} cut: cap_len {caplen} < len {flen}")
        if part == "body":
            stats["body_cut"] += caplen < flen
            if bodies_cut and caplen == flen:
                errors.append(f"{who}: body segment [{r},{r + n}) of {inside[0][3]} not cut (len {flen})")


# --------------------------------------------------------------------------- tshark HTTP view

def tshark_view(cap):
    """[(client?, src, dst, dict)] for every HTTP PDU tshark dissects."""
    xml = tshark(["-r", cap, "-2", "-Y", "http", "-T", "pdml"])
    out = []
    for pkt in ET.fromstring(xml).iter("packet"):
        fv = {}
        for f in pkt.iter("field"):
            if f.get("name") in ("ip.src", "ipv6.src", "ip.dst", "ipv6.dst", "tcp.srcport", "tcp.dstport"):
                fv.setdefault(f.get("name"), f.get("show"))
        src = ep(fv.get("ip.src") or fv.get("ipv6.src"), fv["tcp.srcport"])
        dst = ep(fv.get("ip.dst") or fv.get("ipv6.dst"), fv["tcp.dstport"])
        for proto in pkt.findall("proto"):
            if proto.get("name") != "http":
                continue
            kids = list(proto)
            pdu = {"line": None, "headers": 0, "body": None, "decoded": None, "method": None, "status": None}
            seen_end = False
            for k in kids:
                n, show, size = k.get("name"), k.get("show") or "", int(k.get("size") or 0)
                if pdu["line"] is None and n == "" and (show.endswith("\\r\\n") or show.endswith("\\n")):
                    pdu["line"] = size
                    for g in k.iter("field"):
                        if g.get("name") == "http.request.method":
                            pdu["method"] = g.get("show")
                        if g.get("name") == "http.response.code":
                            pdu["status"] = int(g.get("show"))
                elif n in ("http.request.line", "http.response.line", "http.unknown_header"):
                    pdu["headers"] += size
                elif n == "" and show in ("\\r\\n", "\\n") and not seen_end:
                    pdu["headers"] += size
                    seen_end = True
                elif n == "" and show == "HTTP chunked response":
                    pdu["body"] = size
                elif n == "http.content_length" and (k.get("show") or "").isdigit():
                    pdu.setdefault("cl", int(k.get("show")))
                elif n == "http.file_data":
                    pdu["decoded"] = size
                elif n == "" and show.startswith("Content-encoded entity body"):
                    pdu["coded"] = size
            if pdu["body"] is None and pdu["decoded"] is not None:
                pdu["body"] = pdu.get("coded", pdu["decoded"])
            out.append((src, dst, pdu))
    return out


def compare_tshark(cap, truth):
    msgs = defaultdict(list)
    for t in truth:
        src = t["client"] if t["kind"] == "request" else t["server"]
        dst = t["server"] if t["kind"] == "request" else t["client"]
        msgs[(src, dst)].append(t)
    seen = defaultdict(list)
    for src, dst, pdu in tshark_view(cap):
        seen[(src, dst)].append(pdu)
    diffs = []
    for key in sorted(set(msgs) | set(seen)):
        ts, ps = msgs.get(key, []), seen.get(key, [])
        if len(ts) != len(ps):
            diffs.append(f"{key[0]} -> {key[1]}: truth has {len(ts)} messages, tshark dissects {len(ps)} "
                         f"(truth {[t['method'] or t['status'] for t in ts]}, "
                         f"tshark {[p['method'] or p['status'] for p in ps]})")
        for t, p in zip(ts, ps):
            who = f"{key[0]} -> {key[1]} {t['kind']} #{t['index']}"
            if (t["method"] or t["status"]) != (p["method"] or p["status"]):
                diffs.append(f"{who}: truth {t['method'] or t['status']}, tshark {p['method'] or p['status']}")
                continue
            for name, tv, pv in (("wire_line", t["wire_line"], p["line"]),
                                 ("wire_headers", t["wire_headers"], p["headers"]),
                                 ("wire_body", t["wire_body"], p["body"] or 0),
                                 ("body_decoded", t["body_decoded"], p["decoded"] or 0)):
                if tv != pv:
                    diffs.append(f"{who} ({t['method'] or t['status']}): {name} truth {tv}, tshark {pv}")
    return diffs


def main():
    cap, truth_path = sys.argv[1], sys.argv[2]
    truth = [json.loads(l) for l in open(truth_path) if l.strip()]
    conns = load_streams(cap)
    errors, notes = [], []
    by_conn = defaultdict(list)
    for t in truth:
        by_conn[tuple(sorted((t["client"], t["server"])))].append(t)
    truncated = False
    layout = defaultdict(int)
    for key, dirs in conns.items():
        if key not in by_conn:
            if any(d.segs for d in dirs.values()):
                errors.append(f"{key}: payload in the capture but no truth messages")
            continue
        ts = by_conn[key]
        client, server = ts[0]["client"], ts[0]["server"]
        reqs = sorted((t for t in ts if t["kind"] == "request"), key=lambda t: t["index"])
        resps = sorted((t for t in ts if t["kind"] == "response"), key=lambda t: t["index"])
        for kind, src, ms in (("request", client, reqs), ("response", server, resps)):
            d = dirs.get(src)
            if d is None or not d.segs:
                if ms:
                    errors.append(f"{client}: {len(ms)} {kind}s in truth, no bytes in capture")
                continue
            d.build()
            truncated |= d.truncated
            e0 = len(errors)
            check_direction(d, ms, kind, [t["method"] for t in reqs], errors, notes)
            if "--layout" in sys.argv:
                check_layout(d, f"{src} {kind}s", "--bodies-cut" in sys.argv, errors, layout)
            for i in range(e0, len(errors)):
                errors[i] = f"{client} {errors[i]}"
    for key in by_conn:
        if key not in conns:
            errors.append(f"{key}: truth messages but connection not in capture")
    name = cap.rsplit("/", 1)[-1]
    for n in notes:
        print(f"verify: {name}: note: {n}")
    if not truncated and "--no-tshark-view" not in sys.argv:
        for dff in compare_tshark(cap, truth):
            print(f"verify: {name}: tshark-view: {dff}")
    if errors:
        for e in errors:
            print(f"verify: {name}: ERROR: {e}", file=sys.stderr)
        sys.exit(1)
    if "--layout" in sys.argv:
        print(f"verify: {name}: layout: {layout['head']} head segments, all whole (cap_len == len); "
              f"{layout['body']} body segments, {layout['body_cut']} truncated (cap_len < len); "
              f"no segment mixes head and body bytes")
    print(f"verify: {name}: OK ({len(truth)} messages, {len(by_conn)} connections"
          f"{', payload truncated: sequence-space check only where cut' if truncated else ''})")


if __name__ == "__main__":
    main()
