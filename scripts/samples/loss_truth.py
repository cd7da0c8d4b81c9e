#!/usr/bin/env python3
"""The sender side's own count of what it sent again, for scripts/make-loss-sample.

  loss_truth.py --ss SS_EVENTS --snmp-before F --snmp-after F --tcpdump-log F --port N
                --drop-rule RULE -o NAME.loss.json
  loss_truth.py --check NAME.loss.json LAYER_TOTALS.json

SS_EVENTS is the output of `ss -E -tin` (one entry per TCP socket as the kernel destroys
it: its final tcp_info, after its last retransmission); the snmp files are the namespace's
/proc/net/snmp before and after the traffic (the namespace is new, so nothing else counts).

The JSON written, one object:
  drop_rule                the nftables rule that dropped packets
  namespace                TcpOutSegs, TcpRetransSegs: the namespace-wide deltas
  tcpdump                  packets captured, received by filter, dropped by kernel (must be 0)
  sockets                  one per socket that carried traffic on PORT, sorted by src:
                           src, dst (ip:port: what this socket sent, to whom), segs_out,
                           data_segs_out, bytes_sent, bytes_retrans (0 when ss omits it),
                           retrans (the second number of ss's retrans:A/B: tcpi_total_retrans)

--check compares it with scripts/layer-totals' JSON of the capture and exits 1 on a
difference: per socket bytes_retrans = the capture's retransmitted payload bytes of that
direction, retrans = its retransmitted segments + repeated SYN/FIN, and the namespace's
TcpRetransSegs = their sum over every direction.
"""
import argparse
import json
import re
import sys


def snmp_tcp(path):
    lines = [l.split() for l in open(path) if l.startswith("Tcp:")]
    names, values = lines[0][1:], lines[1][1:]
    return dict(zip(names, (int(v) for v in values)))


def endpoint(text):
    """ss prints 127.0.0.1:80 and [::1]:80 (or ::1:80 in old versions)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if host.startswith("::ffff:"):
        host = host[len("::ffff:"):]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def ss_sockets(path, port):
    """Entries of `ss -E -tin`: a line 'STATE RECVQ SENDQ LOCAL PEER' then an indented info line."""
    sockets = []
    current = None
    for line in open(path):
        if not line.strip() or line.startswith("State"):
            continue
        if not line[0].isspace():
            fields = line.split()
            current = dict(src=endpoint(fields[3]), dst=endpoint(fields[4]))
            sockets.append(current)
            continue
        if current is None:
            continue
        info = line.split()
        for item in info:
            key, sep, value = item.partition(":")
            if not sep:
                continue
            if key in ("segs_out", "data_segs_out", "bytes_sent", "bytes_retrans"):
                current[key] = int(value)
            elif key == "retrans":
                current["retrans"] = int(value.split("/")[1])
    wanted = []
    for s in sockets:
        if s["dst"].endswith(":*") or "segs_out" not in s:
            continue  # the listening socket
        if not (s["src"].endswith(f":{port}") or s["dst"].endswith(f":{port}")):
            continue
        wanted.append(dict(src=s["src"], dst=s["dst"], segs_out=s["segs_out"],
                           data_segs_out=s.get("data_segs_out", 0), bytes_sent=s.get("bytes_sent", 0),
                           bytes_retrans=s.get("bytes_retrans", 0), retrans=s.get("retrans", 0)))
    return sorted(wanted, key=lambda s: s["src"])


def tcpdump_stats(path):
    text = open(path).read()
    def number(what):
        m = re.search(r"^(\d+) packets? " + what, text, re.M)
        if not m:
            sys.exit(f"loss_truth.py: {path}: no '{what}' line")
        return int(m.group(1))
    return dict(captured=number("captured"), received_by_filter=number("received by filter"),
                dropped_by_kernel=number("dropped by kernel"))


def write(args):
    before, after = snmp_tcp(args.snmp_before), snmp_tcp(args.snmp_after)
    truth = dict(drop_rule=args.drop_rule,
                 namespace={k: after[k] - before[k] for k in ("OutSegs", "RetransSegs")},
                 tcpdump=tcpdump_stats(args.tcpdump_log),
                 sockets=ss_sockets(args.ss, args.port))
    truth["namespace"] = {"TcpOutSegs": truth["namespace"]["OutSegs"],
                          "TcpRetransSegs": truth["namespace"]["RetransSegs"]}
    with open(args.o, "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write("\n")


def check(truth_path, totals_path):
    truth = json.load(open(truth_path))
    totals = json.load(open(totals_path))
    directions = {}
    for conn in totals["connections"]:
        for d in (conn["client_to_server"], conn["server_to_client"]):
            key = (d["src"], d["dst"])
            if key in directions:
                sys.exit(f"loss_truth.py: {totals_path}: 4-tuple {key} used twice")
            directions[key] = d
    problems = []
    if truth["tcpdump"]["dropped_by_kernel"] != 0:
        problems.append(f"tcpdump dropped {truth['tcpdump']['dropped_by_kernel']} packets")
    if len(truth["sockets"]) != len(directions):
        problems.append(f"{len(truth['sockets'])} sockets reported by ss, {len(directions)} directions captured")
    all_retransmissions = 0
    for d in directions.values():
        all_retransmissions += d["retransmitted_segments"] + d["retransmitted_control"]
    for s in truth["sockets"]:
        d = directions.get((s["src"], s["dst"]))
        if d is None:
            problems.append(f"{s['src']} -> {s['dst']}: not in the capture")
            continue
        captured = d["retransmitted_segments"] + d["retransmitted_control"]
        print(f"loss_truth.py: {s['src']} -> {s['dst']}: sender: {s['retrans']} retransmissions, "
              f"{s['bytes_retrans']} bytes, {s['segs_out']} segments out; capture: {captured} "
              f"({d['retransmitted_segments']} with payload), {d['retransmitted_bytes']} bytes, "
              f"{d['packets']} packets", file=sys.stderr)
        if s["bytes_retrans"] != d["retransmitted_bytes"]:
            problems.append(f"{s['src']} -> {s['dst']}: bytes_retrans {s['bytes_retrans']}, "
                            f"capture {d['retransmitted_bytes']}")
        if s["retrans"] != captured:
            problems.append(f"{s['src']} -> {s['dst']}: retrans {s['retrans']}, capture {captured}")
    if truth["namespace"]["TcpRetransSegs"] != all_retransmissions:
        problems.append(f"TcpRetransSegs {truth['namespace']['TcpRetransSegs']}, capture {all_retransmissions}")
    for p in problems:
        print(f"loss_truth.py: MISMATCH: {p}", file=sys.stderr)
    sys.exit(1 if problems else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ss")
    ap.add_argument("--snmp-before")
    ap.add_argument("--snmp-after")
    ap.add_argument("--tcpdump-log")
    ap.add_argument("--port", type=int)
    ap.add_argument("--drop-rule")
    ap.add_argument("-o")
    ap.add_argument("--check", nargs=2, metavar=("LOSS_JSON", "LAYER_TOTALS_JSON"))
    args = ap.parse_args()
    if args.check:
        check(*args.check)
    else:
        write(args)


if __name__ == "__main__":
    main()
