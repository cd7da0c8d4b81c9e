#!/usr/bin/env python3
"""HAR -> Samples/X.har.truth.jsonl, plus a cross-check against the senders' logs.

Standard library only; nothing of mitmproxy is imported (the HAR is read as JSON).

Truth (one line per HAR message, sorted by entry index, request before response):
  {"index": i, "kind": "request"|"response", "method", "url", "status",
   "headersSize", "bodySize", "wire_total", "body_decoded"}
  * method is set on request lines, status on response lines (the other is null), as
    in the pcap truth files; url (the entry's request.url) on both.
  * headersSize / bodySize: the HAR value when it is an integer >= 0, else null
    (-1, missing, null, non-integer = unknown, docs/METERING.md §3).
  * wire_total = headersSize + bodySize when both are known, else null.
  * body_decoded: response -> byte length of content.text (base64-decoded when
    content.encoding is "base64", UTF-8 bytes otherwise); request -> the same for
    postData.text; null when the text (or postData) is absent.
  * An entry without a response object, or with status 0, has no response line.

--check-senders compares every entry with what the senders logged (exit 1 on a
mismatch of the checked facts, the comparison table is informational):
  * requests: curl --trace of each curl invocation (one transfer each, in entry order):
    the bytes curl wrote TO THE PROXY; nginx $request_length: the request as mitmproxy
    forwarded it to nginx.
  * responses: nginx access/debug logs (scripts/samples/truth.py nginx_records) and the
    pyhttp.py server log: the bytes the server wrote to mitmproxy.
  Checked: request bodySize and body_decoded = curl's body; response bodySize = the
  de-chunked body the server wrote; response body_decoded = the server's decoded size;
  headersSize = len() of the Python repr "Headers[(b'name', b'value'), ...]" of the HAR's
  own header list (what har_dump.py's len(str(headers)) computes in mitmproxy 8.1).
"""
import argparse
import base64
import json
import os
import sys
from urllib.parse import urlsplit

KEYS = ["index", "kind", "method", "url", "status", "headersSize", "bodySize", "wire_total", "body_decoded"]


def size(v):
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def text_len(obj):
    """Byte length of a HAR content / postData text, None when there is no text."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return None
    if obj.get("encoding") == "base64":
        return len(base64.b64decode(obj["text"], validate=True))
    return len(obj["text"].encode("utf-8", "surrogatepass"))


def truth_lines(har):
    out = []
    for i, e in enumerate(har["log"]["entries"]):
        rq, rs = e.get("request") or {}, e.get("response")
        url = rq.get("url")
        h, b = size(rq.get("headersSize")), size(rq.get("bodySize"))
        out.append({"index": i, "kind": "request", "method": rq.get("method"), "url": url, "status": None,
                    "headersSize": h, "bodySize": b,
                    "wire_total": h + b if h is not None and b is not None else None,
                    "body_decoded": text_len(rq.get("postData"))})
        if not isinstance(rs, dict) or not rs.get("status"):
            continue
        h, b = size(rs.get("headersSize")), size(rs.get("bodySize"))
        out.append({"index": i, "kind": "response", "method": None, "url": url, "status": rs["status"],
                    "headersSize": h, "bodySize": b,
                    "wire_total": h + b if h is not None and b is not None else None,
                    "body_decoded": text_len(rs.get("content"))})
    return out


def repr_headers_len(headers):
    """len(str(mitmproxy.http.Headers)) in mitmproxy 8.1: Headers has no __str__, so
    str() is the _MultiDict __repr__ "Headers[(b'n', b'v'), ...]" over the raw fields."""
    enc = lambda s: s.encode("utf-8", "surrogateescape")
    return len("Headers[" + ", ".join(repr((enc(h["name"]), enc(h["value"]))) for h in headers) + "]")


# --------------------------------------------------------------------------- senders

def load_senders(args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples"))
    import truth as T  # scripts/samples/truth.py: the pcap samples' sender-log parsers
    nginx = []
    if args.nginx:
        access = T.read_jsonl(args.nginx[0])
        recs = [r for r in T.nginx_records(*args.nginx) if r["status"] != 100]
        if len(recs) != len(access):
            sys.exit("nginx: 100 Continue records in the log (not expected behind mitmproxy)")
        nginx = list(zip(access, recs))
    python = [r for p in args.python for r in T.read_jsonl(p) if r["kind"] == "response"]
    curl = []
    for trace, wout in args.curl:
        recs = T.curl_records(trace, wout)
        if len(recs) != 1:
            sys.exit(f"{trace}: expected one request per curl invocation, got {len(recs)}")
        blocks = T.parse_curl_trace(trace)
        recs[0]["_sent_head"] = next(d for k, d in blocks if k == "Send header")
        # what the proxy sent back to curl (interim 100 Continue heads included)
        recs[0]["_recv"] = (sum(len(d) for k, d in blocks if k == "Recv header"),
                            sum(len(d) for k, d in blocks if k == "Recv data"))
        curl.append(recs[0])
    return nginx, python, curl, T


def part(rec, name):
    return sum(p[1] for p in rec["parts"] if p[0] == name)


def check(har, lines, args, out):
    nginx, python, curl, T = load_senders(args)
    entries = har["log"]["entries"]
    if len(curl) != len(entries):
        sys.exit(f"{len(entries)} HAR entries but {len(curl)} curl invocations")
    by = {(l["index"], l["kind"]): l for l in lines}
    ports = {int(p) for p in args.nginx_ports.split(",")}
    errors, rows = [], []
    ni = pi = 0
    for i, e in enumerate(entries):
        rq, rs = e["request"], e["response"]
        u = urlsplit(rq["url"])
        tq, ts = by[(i, "request")], by[(i, "response")]
        # ---- request: what curl wrote to the proxy
        c = curl[i]
        c_head = part(c, "line") + part(c, "headers")
        c_body = part(c, "body")
        if rq["method"] != c["method"]:
            errors.append(f"entry {i}: method {rq['method']} but curl sent {c['method']}")
        if tq["bodySize"] != c["dechunked"]:
            errors.append(f"entry {i}: request bodySize {tq['bodySize']} but curl sent {c['dechunked']} body bytes")
        if tq["body_decoded"] is not None and tq["body_decoded"] != c["body_decoded"]:
            errors.append(f"entry {i}: postData {tq['body_decoded']} bytes but curl sent {c['body_decoded']}")
        if rq["headersSize"] != repr_headers_len(rq["headers"]):
            errors.append(f"entry {i}: request headersSize {rq['headersSize']} != repr length {repr_headers_len(rq['headers'])}")
        sent_names = [l.split(b":", 1)[0].decode().lower() for l in c["_sent_head"].split(b"\r\n")[1:] if b":" in l]
        har_names = [h["name"].lower() for h in rq["headers"]]
        fwd = None
        # ---- response: what the server wrote to mitmproxy
        if u.port in ports:
            a, r = nginx[ni]; ni += 1
            if a["request_uri"] != (u.path + ("?" + u.query if u.query else "")) or a["request_method"] != rq["method"]:
                errors.append(f"entry {i}: nginx log line {ni - 1} is {a['request_method']} {a['request_uri']}")
            fwd = int(a["request_length"])
            src = "nginx"
        else:
            r = python[pi]; pi += 1
            src = "python"
        w_head, w_body = part(r, "line") + part(r, "headers"), part(r, "body")
        if rs["status"] != r["status"]:
            errors.append(f"entry {i}: status {rs['status']} but {src} sent {r['status']}")
        if ts["bodySize"] != r["dechunked"]:
            errors.append(f"entry {i}: response bodySize {ts['bodySize']} but {src} wrote {r['dechunked']} de-chunked body bytes")
        if ts["body_decoded"] != r["body_decoded"]:
            errors.append(f"entry {i}: content.text {ts['body_decoded']} bytes but {src} decoded size {r['body_decoded']}")
        if rs["headersSize"] != repr_headers_len(rs["headers"]):
            errors.append(f"entry {i}: response headersSize {rs['headersSize']} != repr length {repr_headers_len(rs['headers'])}")
        rows.append({"i": i, "method": rq["method"], "path": u.path + ("?" + u.query if u.query else ""),
                     "src": src, "status": rs["status"],
                     "q_hs": tq["headersSize"], "q_head": c_head, "q_bs": tq["bodySize"], "q_body": c_body,
                     "q_fwd": fwd, "q_dropped": sorted(set(sent_names) - set(har_names)),
                     "s_hs": ts["headersSize"], "s_head": w_head, "s_line": part(r, "line"),
                     "s_nfields": len(rs["headers"]), "s_bs": ts["bodySize"], "s_body": w_body,
                     "s_wt": ts["wire_total"], "c_recv": c["_recv"]})
    if ni != len(nginx) or pi != len(python):
        errors.append(f"unused sender records: nginx {len(nginx) - ni}, python {len(python) - pi}")
    write_table(rows, out)
    return errors


def write_table(rows, path):
    L = ["mitmproxy har_dump headersSize vs the real heads (sizes in bytes)", "",
         "responses: wire head = status line + header block as the server wrote it (nginx $bytes_sent -",
         "$body_bytes_sent; pyhttp log); wire body = body bytes as transmitted (chunk framing included);",
         "curl got = Recv header / Recv data bytes of curl's trace: what mitmproxy sent on to the client",
         "",
         f"{'#':>2} {'request':<28} {'src':<6} {'st':>3} | {'hdrSize':>7} {'wire head':>9} {'diff':>5} {'fields':>6} "
         f"{'5+8k-line':>9} | {'bodySize':>8} {'wire body':>9} | {'HAR total':>9} {'wire total':>10} {'diff':>5} | "
         f"{'curl got':>8} {'head+body':>9}"]
    tot = [0, 0]
    for r in rows:
        wt = r["s_head"] + r["s_body"]
        tot[0] += r["s_wt"]; tot[1] += wt
        L.append(f"{r['i']:>2} {(r['method'] + ' ' + r['path'])[:28]:<28} {r['src']:<6} {r['status']:>3} | "
                 f"{r['s_hs']:>7} {r['s_head']:>9} {r['s_hs'] - r['s_head']:>+5} {r['s_nfields']:>6} "
                 f"{5 + 8 * r['s_nfields'] - r['s_line']:>+9} | {r['s_bs']:>8} {r['s_body']:>9} | "
                 f"{r['s_wt']:>9} {wt:>10} {r['s_wt'] - wt:>+5} | {r['c_recv'][0]:>8} {r['c_recv'][1]:>9}")
    L.append(f"{'':>2} {'sum':<28} {'':<6} {'':>3} | {'':>7} {'':>9} {'':>5} {'':>6} {'':>9} | {'':>8} {'':>9} | "
             f"{tot[0]:>9} {tot[1]:>10} {tot[0] - tot[1]:>+5}")
    L += ["", "requests: curl head = request line + header block curl wrote to the proxy (absolute-form",
          "target, Proxy-Connection); nginx in = $request_length, the request as mitmproxy forwarded it",
          "",
          f"{'#':>2} {'request':<28} | {'hdrSize':>7} {'curl head':>9} {'diff':>5} | {'bodySize':>8} {'curl body':>9} | "
          f"{'nginx in':>8} | fields curl sent that the HAR lacks"]
    for r in rows:
        fwd = "" if r["q_fwd"] is None else r["q_fwd"]
        L.append(f"{r['i']:>2} {(r['method'] + ' ' + r['path'])[:28]:<28} | {r['q_hs']:>7} {r['q_head']:>9} "
                 f"{r['q_hs'] - r['q_head']:>+5} | {r['q_bs']:>8} {r['q_body']:>9} | {fwd:>8} | "
                 f"{', '.join(r['q_dropped'])}")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--har", required=True)
    ap.add_argument("-o", "--out", required=True, help="truth file to write")
    ap.add_argument("--check-senders", action="store_true")
    ap.add_argument("--nginx", nargs=3, metavar=("ACCESS", "DEBUG", "ROOT"))
    ap.add_argument("--nginx-ports", default="18180,18181")
    ap.add_argument("--python", nargs="*", default=[], help="pyhttp.py server logs")
    ap.add_argument("--curl", nargs=2, action="append", default=[], metavar=("TRACE", "WOUT"))
    ap.add_argument("--compare", help="write the comparison table here (with --check-senders)")
    args = ap.parse_args()
    with open(args.har, encoding="utf-8") as f:
        har = json.load(f)
    lines = truth_lines(har)
    if args.check_senders:
        errors = check(har, lines, args, args.compare or os.devnull)
        if errors:
            print("\n".join("har_truth: " + e for e in errors), file=sys.stderr)
            sys.exit(1)
    with open(args.out, "w") as f:
        for l in lines:
            f.write(json.dumps({k: l[k] for k in KEYS}) + "\n")
    print(f"har_truth: {os.path.basename(args.out)}: {len(har['log']['entries'])} entries, "
          f"{len(lines)} messages", file=sys.stderr)


if __name__ == "__main__":
    main()
