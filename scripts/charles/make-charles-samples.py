#!/usr/bin/env python3
"""Write Charles session samples (.chlsj and .chlsx) from traffic whose truth is known.

    python3 scripts/charles/make-charles-samples.py [--samples DIR]

Charles Proxy cannot be installed here, so its sessions are written from sample captures: every
HTTP/1.1 message of Samples/nginx-curl.pcap (cut from the capture's TCP streams at the sizes its
truth file gives) and HTTP/2 messages of Samples/h2c-prior.h2truth.jsonl (fields and bodies as the
truth records them), in the fields public Charles sessions show (docs/CHARLES.md). Writes:

  charles-nginx-curl.chlsj / .chlsx   every transaction of nginx-curl.pcap; gzip responses
                                      alternately `decoded: true` (text decoded) and `false`
                                      (the coded bytes, base64 in `encoded`)
  charles-nginx-curl.truth.jsonl      per record, in file order: the capture record it stands for
  charles-mixed.chlsj / .chlsx        a CONNECT tunnel (the undecrypted TLS connection of
                                      tls13-nokey.pcap, sizes from its packets), HTTP/2
                                      transactions, a request without a response, sizes that
                                      contradict the message (rebuilt), null sizes, broken entries
  charles-mixed.truth.jsonl           per record and per tunnel, what the reader must give

Python 3 standard library only; same inputs, same bytes.
"""

import argparse
import base64
import gzip
import json
import os
import struct
import zlib
from datetime import datetime, timedelta, timezone

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OFFSET = timezone(timedelta(hours=2))   # times carry an offset, as Charles writes them


# ---------------------------------------------------------------- pcap → TCP streams

def read_pcap(path):
    data = open(path, "rb").read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        endian, nano = "<", False
    elif magic == b"\xa1\xb2\xc3\xd4":
        endian, nano = ">", False
    elif magic == b"\x4d\x3c\xb2\xa1":
        endian, nano = "<", True
    else:
        raise SystemExit(f"{path}: not a classic pcap")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack(endian + "IIII", data[pos:pos + 16])
        pos += 16
        frame = data[pos:pos + caplen]
        pos += caplen
        yield sec + frac / (1e9 if nano else 1e6), (sec, frac if not nano else frac // 1000), linktype, frame


def tcp_segments(path):
    for _, (sec, usec), linktype, frame in read_pcap(path):
        if linktype == 1:
            ethertype = struct.unpack(">H", frame[12:14])[0]
            ip = frame[14:]
        elif linktype == 113:
            ethertype = struct.unpack(">H", frame[14:16])[0]
            ip = frame[16:]
        else:
            continue
        if ethertype == 0x0800:
            ihl = (ip[0] & 15) * 4
            total = struct.unpack(">H", ip[2:4])[0]
            if ip[9] != 6:
                continue
            src = ".".join(map(str, ip[12:16]))
            dst = ".".join(map(str, ip[16:20]))
            tcp = ip[ihl:total]
        elif ethertype == 0x86DD:
            if ip[6] != 6:
                continue
            plen = struct.unpack(">H", ip[4:6])[0]
            src = "[" + ipv6(ip[8:24]) + "]"
            dst = "[" + ipv6(ip[24:40]) + "]"
            tcp = ip[40:40 + plen]
        else:
            continue
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        offset = (tcp[12] >> 4) * 4
        flags = tcp[13]
        yield (sec, usec), f"{src}:{sport}", f"{dst}:{dport}", seq, flags, tcp[offset:]


def ipv6(raw):
    import ipaddress
    return str(ipaddress.IPv6Address(raw))


def streams(path):
    """{(client, server): {client: (bytes, [(offset, time)]), server: ...}} from SYNs."""
    isn, data, times, order = {}, {}, {}, []
    for time, src, dst, seq, flags, payload in tcp_segments(path):
        if flags & 0x02:
            isn[(src, dst)] = seq + 1
            if not flags & 0x10:
                order.append((src, dst))
            continue
        key = (src, dst)
        if key not in isn or not payload:
            continue
        offset = (seq - isn[key]) % (1 << 32)
        buf = data.setdefault(key, bytearray())
        if offset > len(buf):
            raise SystemExit(f"{path}: a gap in {key}; cut samples from loss-free captures")
        if offset + len(payload) > len(buf):
            new = payload[len(buf) - offset:]
            times.setdefault(key, []).append((len(buf), time))
            buf.extend(new)
    return order, data, times


def time_at(times, offset):
    found = times[0][1]
    for start, time in times:
        if start <= offset:
            found = time
        else:
            break
    return found


def iso(sec_usec):
    sec, usec = sec_usec
    moment = datetime.fromtimestamp(sec, tz=OFFSET) + timedelta(microseconds=usec)
    return moment.isoformat(timespec="microseconds")


# ---------------------------------------------------------------- messages

def parse_head(line, headers):
    first = line.rstrip(b"\r\n").decode("utf-8")
    fields = []
    for raw in headers.split(b"\r\n"):
        if not raw:
            continue
        name, _, value = raw.partition(b":")
        fields.append({"name": name.decode("utf-8"), "value": value.strip(b" \t").decode("utf-8")})
    return first, fields


def field(fields, name):
    values = [f["value"] for f in fields if f["name"].lower() == name]
    return ", ".join(values) if values else None


def dechunk(body):
    out, pos = bytearray(), 0
    while True:
        end = body.index(b"\r\n", pos)
        size = int(body[pos:end].split(b";")[0], 16)
        pos = end + 2
        if size == 0:
            return bytes(out)
        out += body[pos:pos + size]
        pos += size + 2


def capture_messages(pcap, truth):
    """The capture's messages in truth order, cut at the truth's sizes, each with its bytes and time."""
    order, data, times = streams(pcap)
    rows = [json.loads(line) for line in open(truth)]
    cursors = {}
    messages = []
    for row in rows:
        client, server = row["client"], row["server"]
        key = (client, server) if row["kind"] == "request" else (server, client)
        pos = cursors.get(key, 0)
        stream = data[key]
        line = stream[pos:pos + row["wire_line"]]
        headers = stream[pos + row["wire_line"]:pos + row["wire_line"] + row["wire_headers"]]
        body = stream[pos + row["wire_line"] + row["wire_headers"]:pos + row["wire_line"] + row["wire_headers"] + row["wire_body"]]
        time = time_at(times[key], pos)
        cursors[key] = pos + row["wire_line"] + row["wire_headers"] + row["wire_body"]
        first, fields = parse_head(bytes(line), bytes(headers))
        messages.append(dict(row=row, first=first, fields=fields, body=bytes(body), time=time))
    return messages


def transactions_from_capture(messages):
    """Requests paired with their final responses (interim 1xx left out: Charles keeps the final one)."""
    out = []
    for message in messages:
        row = message["row"]
        if row["kind"] != "request":
            continue
        final = [m for m in messages if m["row"]["kind"] == "response" and m["row"]["client"] == row["client"]
                 and m["row"]["server"] == row["server"] and not (100 <= (m["row"]["status"] or 0) < 200)]
        requests = [m for m in messages if m["row"]["kind"] == "request" and m["row"]["client"] == row["client"]]
        position = requests.index(message)
        out.append((message, final[position] if position < len(final) else None))
    out.sort(key=lambda pair: pair[0]["time"])
    return out


def body_part(message, decoded_flag):
    """`body` of a message: text when it is UTF-8, else base64 in `encoded`; and the bytes recorded."""
    raw = message["body"]
    if field(message["fields"], "transfer-encoding") == "chunked":
        raw = dechunk(raw)
    coding = field(message["fields"], "content-encoding")
    if coding and decoded_flag:
        raw = gzip.decompress(raw) if coding == "gzip" else raw
    if not raw:
        return None
    try:
        text = raw.decode("utf-8")
        if coding and not decoded_flag:
            raise UnicodeDecodeError("utf-8", raw, 0, 1, "coded")
        return {"text": text, "decoded": decoded_flag}
    except UnicodeDecodeError:
        return {"encoded": base64.b64encode(raw).decode("ascii"), "decoded": decoded_flag}


def part(message, decoded_flag=True, handshake=0, status=None):
    row = message["row"]
    out = {}
    if status is not None:
        out["status"] = status
    out["sizes"] = {"handshake": handshake, "headers": row["wire_line"] + row["wire_headers"], "body": row["wire_body"]}
    out["mimeType"] = field(message["fields"], "content-type")
    out["contentEncoding"] = field(message["fields"], "content-encoding")
    out["header"] = {"firstLine": message["first"], "headers": message["fields"]}
    body = body_part(message, decoded_flag)
    if body is not None:
        out["body"] = body
    return out


def split_host(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def transaction(request, response, gzip_turn):
    client_host, client_port = split_host(request["row"]["client"])
    server_host, server_port = split_host(request["row"]["server"])
    method, target, version = request["first"].split(" ", 2)
    path, _, query = target.partition("?")
    total = sum(m["row"]["wire_line"] + m["row"]["wire_headers"] + m["row"]["wire_body"] for m in (request, response) if m)
    t = {
        "status": "COMPLETE" if response else "FAILED",
        "method": method, "protocolVersion": version, "scheme": "http",
        "host": server_host, "actualPort": server_port, "path": path, "query": query or None,
        "tunnel": False, "keptAlive": True, "webSocket": False,
        "remoteAddress": f"{server_host}/{server_host}",
        "clientAddress": f"/{client_host}", "clientPort": client_port,
        "times": {"start": iso(request["time"]), "requestBegin": iso(request["time"])},
        "durations": {"total": 1, "dns": None, "connect": None, "ssl": None, "request": 0, "latency": 1, "response": 0},
        "speeds": {"overall": 0, "request": 0, "response": 0},
        "totalSize": total,
        "request": part(request),
    }
    if response:
        t["times"]["responseBegin"] = iso(response["time"])
        coded = field(response["fields"], "content-encoding") is not None
        decoded = True
        if coded:
            decoded = gzip_turn[0] % 2 == 0
            gzip_turn[0] += 1
        t["response"] = part(response, decoded_flag=decoded, status=response["row"]["status"])
    return t


# ---------------------------------------------------------------- HTTP/2 from h2 truth

def h2_transactions(truth, limit):
    rows = [json.loads(line) for line in open(truth)]
    out, expected = [], []
    for request in rows:
        if request["kind"] != "request" or request["pushed"] or len(out) >= limit:
            continue
        answer = next((r for r in rows if r["kind"] == "response" and r["stream"] == request["stream"]
                       and not r["interim"] and r["client"] == request["client"]), None)
        fields = dict((k, v) for k, v in request["fields"])
        server_host, server_port = split_host(request["server"])
        client_host, client_port = split_host(request["client"])

        def h2part(row, first):
            p = {"sizes": {"handshake": 0, "headers": row["wire_headers"], "body": row["wire_body"]},
                 "header": {"firstLine": first, "headers": [{"name": k, "value": v} for k, v in row["fields"]]}}
            body = zlib.decompress(base64.b64decode(row["body_z"]))
            if body:
                try:
                    p["body"] = {"text": body.decode("utf-8"), "decoded": True}
                except UnicodeDecodeError:
                    p["body"] = {"encoded": base64.b64encode(body).decode("ascii"), "decoded": True}
            return p

        path, _, query = fields[":path"].partition("?")
        t = {"status": "COMPLETE", "method": fields[":method"], "protocolVersion": "HTTP/2.0", "scheme": "http",
             "host": server_host, "actualPort": server_port, "path": path, "query": query or None, "tunnel": False,
             "remoteAddress": f"{server_host}/{server_host}", "clientAddress": f"/{client_host}",
             "clientPort": client_port, "times": {"start": "2026-01-15T11:00:00.000000+01:00"},
             "alpn": None, "request": h2part(request, f"{fields[':method']} {fields[':path']} HTTP/2.0")}
        status = int(dict(answer["fields"])[":status"])
        t["response"] = dict(status=status, **h2part(answer, f"HTTP/2.0 {status}"))
        out.append(t)
        for row in (request, answer):
            expected.append({"kind": row["kind"], "wire_line": 0, "wire_headers": row["wire_headers"],
                             "wire_body": row["wire_body"], "body_decoded": row["body_decoded"],
                             "wire_source": "charles", "protocol": "h2", "from": f"h2c-prior stream {row['stream']}"})
    return out, expected


# ---------------------------------------------------------------- XML

def xml_attr(value):
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#9;"))


def xml_text(value):
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def xml_ok(text):
    return all(c in "\t\n\r" or ord(c) >= 0x20 for c in text)


def to_xml(transactions):
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<!DOCTYPE charles-session SYSTEM "http://www.charlesproxy.com/dtd/charles-session-1_0.dtd">',
           "<charles-session>"]
    scalar = ["status", "method", "protocolVersion", "scheme", "host", "actualPort", "path", "query", "tunnel",
              "keptAlive", "remoteAddress", "clientAddress", "clientPort", "totalSize"]
    for t in transactions:
        attrs = "".join(f' {k}="{xml_attr(t[k])}"' for k in scalar if t.get(k) is not None)
        out.append(f"  <transaction{attrs}>")
        for name in ("times", "ssl", "alpn"):
            if isinstance(t.get(name), dict):
                attrs = "".join(f' {k}="{xml_attr(v)}"' for k, v in t[name].items() if v is not None)
                out.append(f"    <{name}{attrs}/>")
        for side in ("request", "response"):
            p = t.get(side)
            if not isinstance(p, dict):
                continue
            status = f' status="{p["status"]}"' if p.get("status") is not None else ""
            out.append(f"    <{side}{status}>")
            if isinstance(p.get("sizes"), dict):
                attrs = "".join(f' {k}="{xml_attr(v)}"' for k, v in p["sizes"].items() if v is not None)
                out.append(f"      <sizes{attrs}/>")
            if isinstance(p.get("header"), dict):
                out.append("      <headers>")
                if p["header"].get("firstLine") is not None:
                    out.append(f"        <first-line>{xml_text(p['header']['firstLine'])}</first-line>")
                for f in p["header"].get("headers") or []:
                    out.append(f"        <header><name>{xml_text(f['name'])}</name><value>{xml_text(f['value'])}</value></header>")
                out.append("      </headers>")
            body = p.get("body")
            if isinstance(body, dict):
                decoded = f' decoded="{xml_attr(body["decoded"])}"' if "decoded" in body else ""
                if "text" in body and xml_ok(body["text"]):
                    out.append(f'      <body encoding="plain"{decoded}>{xml_text(body["text"])}</body>')
                else:
                    raw = body["encoded"] if "encoded" in body else base64.b64encode(body["text"].encode()).decode()
                    out.append(f'      <body encoding="base64"{decoded}>{raw}</body>')
            out.append(f"    </{side}>")
        out.append("  </transaction>")
    out.append("</charles-session>")
    return "\n".join(out) + "\n"


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def write_session(samples, name, transactions, xml_transactions=None):
    write(os.path.join(samples, name + ".chlsj"), json.dumps(transactions, indent=2, ensure_ascii=False) + "\n")
    write(os.path.join(samples, name + ".chlsx"), to_xml(xml_transactions if xml_transactions is not None else transactions))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", default=os.path.join(ROOT, "Samples"))
    args = parser.parse_args()
    samples = args.samples

    # 1. nginx-curl.pcap, every transaction.
    messages = capture_messages(os.path.join(samples, "nginx-curl.pcap"), os.path.join(samples, "nginx-curl.truth.jsonl"))
    pairs = transactions_from_capture(messages)
    turn = [0]
    session, truth = [], []
    for request, response in pairs:
        t = transaction(request, response, turn)
        session.append(t)
        for message in (request, response):
            if message:
                row = message["row"]
                truth.append(dict(from_capture="nginx-curl.pcap", client=row["client"], kind=row["kind"],
                                  capture_index=row["index"], wire_line=row["wire_line"],
                                  wire_headers=row["wire_headers"], wire_body=row["wire_body"],
                                  body_decoded=row["body_decoded"], wire_source="charles",
                                  decoded=(t["response"].get("body", {}).get("decoded") if message is response else None)))
    write_session(samples, "charles-nginx-curl", session)
    write(os.path.join(samples, "charles-nginx-curl.truth.jsonl"), "".join(json.dumps(r) + "\n" for r in truth))

    # 2. The mixed session.
    mixed, expected = [], []
    # A CONNECT tunnel Charles did not decrypt: tls13-nokey.pcap's one connection, sized from its
    # packets (TLS handshake records, then application data records).
    order, data, _ = streams(os.path.join(samples, "tls13-nokey.pcap"))
    client, server = order[0]

    def tls_split(stream):
        handshake, application, pos = 0, 0, 0
        while pos + 5 <= len(stream):
            kind, length = stream[pos], struct.unpack(">H", stream[pos + 3:pos + 5])[0]
            if kind == 23:
                application += 5 + length
            else:
                handshake += 5 + length
            pos += 5 + length
        return handshake, application

    up_hs, up_app = tls_split(data[(client, server)])
    down_hs, down_app = tls_split(data[(server, client)])
    client_host, client_port = split_host(client)
    server_host, server_port = split_host(server)
    connect_head = f"CONNECT localhost:{server_port} HTTP/1.1\r\nHost: localhost:{server_port}\r\n\r\n"
    answer_head = "HTTP/1.1 200 Connection established\r\n\r\n"
    mixed.append({
        "status": "COMPLETE", "method": "CONNECT", "protocolVersion": "HTTP/1.1", "scheme": "https",
        "host": "localhost", "actualPort": server_port, "path": None, "query": None, "tunnel": True,
        "remoteAddress": f"localhost/{server_host}", "clientAddress": f"/{client_host}", "clientPort": client_port,
        "times": {"start": "2026-01-15T10:59:59.500000+01:00"}, "totalSize": None,
        "ssl": {"protocol": "TLSv1.3", "cipherSuite": "TLS_AES_256_GCM_SHA384"}, "alpn": {"protocol": "http/1.1"},
        "request": {"sizes": {"handshake": up_hs, "headers": len(connect_head), "body": up_app},
                    "header": {"firstLine": f"CONNECT localhost:{server_port} HTTP/1.1",
                               "headers": [{"name": "Host", "value": f"localhost:{server_port}"}]}},
        "response": {"status": 200, "sizes": {"handshake": down_hs, "headers": len(answer_head), "body": down_app},
                     "header": {"firstLine": "HTTP/1.1 200 Connection established", "headers": []}},
    })
    tunnel_truth = {"tunnel": True, "server_name": "localhost", "client": client, "server": server,
                    "up_tcp": up_hs + len(connect_head) + up_app, "down_tcp": down_hs + len(answer_head) + down_app,
                    "up_handshake": up_hs, "down_handshake": down_hs, "tls_version": "TLSv1.3",
                    "from": "tls13-nokey.pcap (TLS records of its one connection)"}
    # HTTP/2 transactions.
    h2, h2_expected = h2_transactions(os.path.join(samples, "h2c-prior.h2truth.jsonl"), 3)
    mixed += h2
    expected += h2_expected
    # A request without a response: the first request of nginx-curl.pcap, the server never answered.
    lone = transaction(pairs[0][0], None, [0])
    mixed.append(lone)
    row = pairs[0][0]["row"]
    expected.append({"kind": "request", "wire_line": row["wire_line"], "wire_headers": row["wire_headers"],
                     "wire_body": row["wire_body"], "body_decoded": 0, "wire_source": "charles", "pair": None,
                     "from": "nginx-curl.pcap request 0, its response dropped"})
    # Sizes that contradict the message: a request head of 0 beside its fields, a response body
    # of 0 beside a body. Rebuilt from the record, they equal the capture's sizes again.
    request, response = pairs[1]
    contradicted = transaction(request, response, [1])  # the coded body: it bounds the wire body
    contradicted["request"]["sizes"]["headers"] = 0
    contradicted["response"]["sizes"]["body"] = 0
    mixed.append(contradicted)
    for message in (request, response):
        r = message["row"]
        expected.append({"kind": r["kind"], "wire_line": r["wire_line"], "wire_headers": r["wire_headers"],
                         "wire_body": r["wire_body"], "body_decoded": r["body_decoded"],
                         "wire_source": "charles-reconstructed",
                         "from": f"nginx-curl.pcap {r['kind']} {r['index']}, sizes contradicted"})
    # Null and negative sizes: unknown, never 0.
    request, response = pairs[2]
    unknown = transaction(request, response, [0])
    unknown["request"]["sizes"]["headers"] = None
    unknown["response"]["sizes"]["body"] = -1
    mixed.append(unknown)
    for message in (request, response):
        r = message["row"]
        expected.append({"kind": r["kind"], "wire_total": None, "wire_source": "unknown",
                         "body_decoded": r["body_decoded"], "from": f"nginx-curl.pcap {r['kind']} {r['index']}, sizes nulled"})
    # Broken entries: each reported by index, the rest kept.
    broken = transaction(pairs[3][0], pairs[3][1], [0])
    del broken["method"]
    mixed.append(broken)
    broken = transaction(pairs[4][0], pairs[4][1], [0])
    broken["response"]["body"] = {"encoded": "not base64!", "decoded": False}
    mixed.append(broken)
    broken = transaction(pairs[5][0], pairs[5][1], [0])
    broken["response"]["status"] = "OK"
    mixed.append(broken)
    write_session(samples, "charles-mixed", mixed)
    first_broken = len(mixed) - 3
    meta = {"tunnels": [tunnel_truth], "broken": [first_broken, first_broken + 1, first_broken + 2]}
    write(os.path.join(samples, "charles-mixed.truth.jsonl"),
          json.dumps(meta) + "\n" + "".join(json.dumps(r) + "\n" for r in expected))
    print(f"charles-nginx-curl: {len(session)} transactions; charles-mixed: {len(mixed)} transactions")


if __name__ == "__main__":
    main()
