#!/usr/bin/env python3
"""Checks Samples/meter-app.* against each other without the project's join code.

For every tag of the ground truth (meter-app.tags.jsonl) it counts
- the requests and responses tshark finds in the capture with that tag (the `tag` query parameter
  of the request target, or an X-Tag field), HTTP/1.x and HTTP/2, decrypted with the key log;
- the entries of each meter log with that tag;
- the requests nginx logged with that tag (its access log), for the tags sent to nginx;
and compares them with what the ground truth says (on_wire, in_meter, port_captured).
Prints one line per tag and a summary; exits 1 on any disagreement.
"""
import argparse, collections, json, re, subprocess, sys
from urllib.parse import urlsplit, parse_qs

ap = argparse.ArgumentParser()
ap.add_argument("--pcap", required=True)
ap.add_argument("--keys")
ap.add_argument("--tags", required=True)
ap.add_argument("--meter", action="append", default=[], help="a meter log (repeatable)")
ap.add_argument("--nginx-log")
a = ap.parse_args()

def tag_of_target(target):
    q = parse_qs(urlsplit(target).query)
    return q.get("tag", [None])[0]

def tshark(*args):
    cmd = ["tshark", "-r", a.pcap, "-n"] + (["-o", "tls.keylog_file:" + a.keys] if a.keys else []) + list(args)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

wire_req = collections.Counter()
wire_resp = collections.Counter()
wire_status = collections.defaultdict(list)
wire_proto = collections.defaultdict(set)
# HTTP/1.x: requests (the X-Tag field wins over the query), responses by the request they answer
out = tshark("-Y", "http.request", "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=\x01",
             "-e", "frame.number", "-e", "http.request.uri", "-e", "http.request.line")
req_tag_by_frame = {}
for line in out.splitlines():
    frame, uri, lines = (line.split("\t") + ["", ""])[:3]
    tag = None
    for l in lines.split("\x01"):
        m = re.match(r"(?i)x-tag:\s*(\S+)", l.strip())
        if m: tag = m.group(1)
    tag = tag or tag_of_target(uri)
    req_tag_by_frame[frame] = tag
    wire_req[tag] += 1
    wire_proto[tag].add("http/1.1")
out = tshark("-Y", "http.response", "-T", "fields", "-E", "separator=\t", "-e", "http.request_in", "-e", "http.response.code")
for line in out.splitlines():
    req_in, code = (line.split("\t") + [""])[:2]
    tag = req_tag_by_frame.get(req_in)
    wire_resp[tag] += 1
    wire_status[tag].append(int(code))
# HTTP/2: HEADERS frames; a stream's request headers carry :path (and x-tag), its response :status
out = tshark("-Y", "http2.type == 1", "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=\x01",
             "-e", "tcp.stream", "-e", "http2.streamid", "-e", "http2.type", "-e", "http2.header.name", "-e", "http2.header.value")
h2_tag = {}
for line in out.splitlines():
    stream, sids, types, names, values = (line.split("\t") + ["", "", "", ""])[:5]
    names, values = names.split("\x01"), values.split("\x01")
    # the stream ids of the packet's HEADERS frames (it holds other frames too)
    sids = [sid for sid, ty in zip(sids.split("\x01"), types.split("\x01")) if ty == "1"]
    # one packet may hold several HEADERS frames (several streams): split at the pseudo-headers
    fields = list(zip(names, values))
    block = []
    blocks = []
    for n, v in fields:
        if n in (":method", ":status") and block:
            blocks.append(block); block = []
        block.append((n, v))
    if block: blocks.append(block)
    for b, sid in zip(blocks, sids):
        d = dict(b)
        key = (stream, sid)
        if ":method" in d:
            tag = d.get("x-tag") or tag_of_target(d.get(":path", ""))
            h2_tag[key] = tag
            wire_req[tag] += 1
            wire_proto[tag].add("h2")
        elif ":status" in d:
            tag = h2_tag.get(key)
            wire_resp[tag] += 1
            wire_status[tag].append(int(d[":status"]))

meters = {}
for path in a.meter:
    per = collections.defaultdict(collections.Counter)
    name = None
    for n, line in enumerate(open(path), 1):
        e = json.loads(line)
        name = e.get("meter", path)
        per[e["tag"]][e["kind"]] += 1
        c = e.get("line", 0) + e.get("headers", 0) + e.get("body", 0)
        if c != e["bytes"]:
            print(f"{path}:{n}: components {c} != bytes {e['bytes']}"); sys.exit(1)
    meters[name] = per

served = collections.Counter()
nginx_ports = set()
if a.nginx_log:
    for line in open(a.nginx_log):
        e = json.loads(line)
        served[tag_of_target(e["request_uri"])] += 1
        nginx_ports.add(int(e["server_port"]))

tags = [json.loads(l) for l in open(a.tags)]
bad = 0
n_wire = 0
for t in tags:
    tag = t["tag"]
    want_wire = 1 if t["on_wire"] else 0
    n_wire += want_wire
    got = (wire_req[tag], wire_resp[tag])
    problems = []
    if got != (want_wire, want_wire):
        problems.append(f"wire requests/responses {got}, expected {(want_wire, want_wire)}")
    if want_wire and wire_status[tag] != [t["status"]]:
        problems.append(f"wire status {wire_status[tag]}, expected {t['status']}")
    for name, per in meters.items():
        want = collections.Counter(t["meter_entries"]) if t["in_meter"] else collections.Counter()
        if per[tag] != want:
            problems.append(f"{name}: entries {dict(per[tag])}, expected {dict(want)}")
    if t["port"] in nginx_ports:  # nginx's access log: every request that reached the server
        want_served = 1 if (t["on_wire"] or not t["port_captured"]) else 0
        if served[tag] != want_served:
            problems.append(f"servers logged {served[tag]}, expected {want_served}")
    bad += bool(problems)
    print(f"{tag:16} wire {got[0]}/{got[1]} {','.join(sorted(wire_proto[tag])) or '-':9} "
          + " ".join(f"{name} {per[tag]['request']}/{per[tag]['response']}" for name, per in meters.items())
          + (f" nginx {served[tag]}" if t["port"] in nginx_ports else "") + ("  OK" if not problems else "  BAD: " + "; ".join(problems)))
known = {t["tag"] for t in tags}
for tag in set(wire_req) | set(wire_resp):
    if tag not in known:
        print(f"untagged or unknown on the wire: {tag!r} {wire_req[tag]}/{wire_resp[tag]}"); bad += 1
for name, per in meters.items():
    for tag in per:
        if tag not in known:
            print(f"{name}: unknown tag {tag!r}"); bad += 1
print(f"check: {len(tags)} tags, {n_wire} expected on the wire; wire requests {sum(wire_req.values())}, "
      f"responses {sum(wire_resp.values())}; " + ("all agree" if not bad else f"{bad} disagreements"))
sys.exit(1 if bad else 0)
