#!/usr/bin/env python3
"""The client of Samples/polling-runaway.pcap (scripts/make-polling-sample), and the rate
figures a test can recompute from its log.

usage: polling.py client --server 127.0.0.1:PORT --log SENDER_LOG --fires FIRES_LOG
       polling.py schedule          (each timer's fire instants; the last line is the total)
       polling.py figures FIRES [--pcap CAPTURE] [--json]

client: seed 001's bug, compressed into 49.4 s. A bus app's side bar polls the status of
line 42. Every time the side bar opens, the app starts one more repeating timer on
GET /api/line/status?line=42 and never stops the old ones, so the rate grows by one timer's
rate at every opening. A second endpoint, GET /api/stops/nearby, polls at a steady period;
a third, POST /api/route/plan, is called a few times by hand. Each timer has its own
keep-alive connection (opened when the timer starts, closed by the client at the end), as a
URL session's pool would give several connections to one endpoint; the manual calls share
one. The schedule (SCHEDULE, in integer milliseconds from the client's start, on the
monotonic clock) is fixed, so the number of requests per timer is fixed; only the instants
jitter by the scheduler's delay.

Each request is built and written by scripts/samples/pyhttp.py's Sender (one sendall,
logged to SENDER_LOG part by part: the byte truth that truth.py reads, as for every Python
sample). Just before that write the client appends one line to FIRES_LOG:

  {"time": "1700000012.345678", "at_ms": 12250, "timer": "sidebar-3", "method": "GET",
   "url": "http://127.0.0.1:18095/api/line/status?line=42", "target": "/api/line/status?line=42",
   "endpoint": "GET 127.0.0.1:18095 /api/line/status", "client": "127.0.0.1:41234",
   "server": "127.0.0.1:18095", "index": 3}

time: wall clock (time.time_ns(), epoch seconds with 6 decimals, as a string so that no
float rounding touches it); at_ms: the scheduled instant; endpoint: docs/METERING.md §5's
`METHOD host /path` (query dropped); client/server/index: the request's connection and its
index there, as in the truth file (join on client, kind "request", index).
make-polling-sample sorts the log by time into Samples/polling-runaway.fires.jsonl.

figures: per endpoint, from the fire times (and, with --pcap, the same from tshark's request
frames: frame.time_epoch of the frame that ends each request): count, active span
(last − first), mean requests/minute over the span (both n·60/span and (n−1)·60/span),
peak requests in a sliding 60 s window [t, t+60 s), intervals between consecutive requests
of the endpoint over all its connections (median: middle one, or the mean of the two
middle ones; minimum; maximum), and the growth: requests in the last third of the span
over those in the first third. Exact decimal arithmetic on the logged strings.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from decimal import Decimal, ROUND_HALF_EVEN

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhttp  # noqa: E402

LINE = b"/api/line/status?line=42"
NEARBY = b"/api/stops/nearby?lat=31.2304&lng=121.4737"
PLAN = b"/api/route/plan"
PLAN_BODY = b'{"from":"People\'s Square","to":"Hongqiao Airport T2","time":"now","mode":"bus"}'

# Side-bar openings 6.3 / 6.6 s apart, each at its own phase of the 1.8 s period (0, .9, .3,
# 1.2, .6, 1.5 s): every line-status fire lies on a 0.3 s grid, so with all six timers the
# requests are 0.3 s apart, a 1 s window holds 4 of them at most (seed 001's "4 in one
# second"; a fifth is 1.2 s after the first), and no two fires are 1.0 s apart (jitter
# cannot make it 5).
SIDEBAR_OPENS_MS = [0, 6300, 12900, 19200, 25800, 32100]
SIDEBAR_PERIOD_MS = 1800                                   # first fire one period after the opening
NEARBY_START_MS, NEARBY_PERIOD_MS = 1400, 2000             # first fire at 1.4 s, last at 47.4 s
MANUAL_MS = [3300, 9100, 10400, 17900, 24200, 32800, 40100]  # gaps 5.8 1.3 7.5 6.3 8.6 7.3 s
END_MS = 49400                                             # no timer fires at or after this


def schedule():
    """[(timer, target, method, start_ms, [fire_ms...])]: every timer and when it fires."""
    timers = []
    for i, o in enumerate(SIDEBAR_OPENS_MS, 1):
        fires = list(range(o + SIDEBAR_PERIOD_MS, END_MS, SIDEBAR_PERIOD_MS))
        timers.append((f"sidebar-{i}", LINE, "GET", o, fires))
    timers.append(("nearby", NEARBY, "GET", 0, list(range(NEARBY_START_MS, END_MS, NEARBY_PERIOD_MS))))
    timers.append(("manual", PLAN, "POST", 0, list(MANUAL_MS)))
    return timers


APP_FIELDS = [b"Accept: application/json", b"Accept-Language: zh-Hans-CN;q=1.0, en-CN;q=0.9",
              b"Accept-Encoding: gzip, deflate, br", b"User-Agent: BusNow/3.2.1 (iPhone; iOS 17.4; Scale/3.00)",
              b"X-App-Session: 7f3a9c2e-41d8-4b6a-9e0f-5c1d2b3a4e6f", b"Connection: keep-alive"]


def request(c, method, target):
    if method == "POST":
        head = pyhttp.hdr(b"Host: " + c.authority, *APP_FIELDS, b"Content-Type: application/json",
                          b"Content-Length: %d" % len(PLAN_BODY))
        return pyhttp.Message("request", b"POST " + target + b" HTTP/1.1\r\n", head, PLAN_BODY, method="POST")
    head = pyhttp.hdr(b"Host: " + c.authority, *APP_FIELDS)
    return pyhttp.Message("request", b"GET " + target + b" HTTP/1.1\r\n", head, method="GET")


def run_timer(c, t0, fires_log, timer, target, method, start_ms, fire_ms, errors):
    def sleep_until(ms):
        d = t0 + ms / 1000 - time.monotonic()
        if d > 0:
            time.sleep(d)
    try:
        sleep_until(start_ms)                     # the side bar opens: the timer's connection
        s, snd, rd = c.connect()
        for ms in fire_ms:
            sleep_until(ms)
            msg = request(c, method, target)
            index = snd.seq["request"]
            ns = time.time_ns()
            fires_log.write({"time": f"{ns // 10**9}.{ns // 1000 % 10**6:06d}", "at_ms": ms, "timer": timer,
                             "method": method, "url": f"http://{c.authority.decode()}{target.decode()}",
                             "target": target.decode(),
                             "endpoint": f"{method} {c.authority.decode()} {target.decode().split('?')[0]}",
                             "client": snd.client, "server": snd.server, "index": index})
            snd.send(msg)
            status, _ = pyhttp.read_response(rd, method)
            if status != 200:
                raise RuntimeError(f"{timer}: {target!r} answered {status}")
        s.close()
    except Exception as e:  # noqa: BLE001 - reported, and the run fails
        errors.append(f"{timer}: {e!r}")


def client(args):
    c = pyhttp.Client(args.server, pyhttp.Log(args.log), pyhttp.Markers(None))
    fires_log = pyhttp.Log(args.fires)
    errors = []
    t0 = time.monotonic() + 0.2
    threads = [threading.Thread(target=run_timer, args=(c, t0, fires_log, *t, errors), daemon=True)
               for t in schedule()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=END_MS / 1000 + 20)
    if errors or any(t.is_alive() for t in threads):
        sys.exit("polling.py client: " + ("; ".join(errors) or "a timer did not finish"))


# --------------------------------------------------------------------------- figures

def fmt(x, places=6):
    return str(x.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


def figures(times):
    """The rate figures of one endpoint from its request times (Decimal seconds)."""
    t = sorted(times)
    n = len(t)
    span = t[-1] - t[0]
    gaps = [b - a for a, b in zip(t, t[1:])]
    g = sorted(gaps)
    m = len(g)
    median_mid = g[(m - 1) // 2] if m else None              # lower middle (the middle one when odd)
    median_mean = (g[(m - 1) // 2] + g[m // 2]) / 2 if m else None
    j = 0
    peak = 0
    for i in range(n):                                        # windows [t_i, t_i + 60)
        while j < n and t[j] < t[i] + 60:
            j += 1
        peak = max(peak, j - i)
    third = span / 3
    first = sum(1 for x in t if x < t[0] + third)
    last = sum(1 for x in t if x >= t[-1] - third)
    per_s = 0
    j = 0
    for i in range(n):                                        # windows [t_i, t_i + 1)
        while j < n and t[j] < t[i] + 1:
            j += 1
        per_s = max(per_s, j - i)
    out = {"count": n, "first": str(t[0]), "last": str(t[-1]), "span_s": str(span)}
    if span > 0:
        out["rpm_n_over_span"] = fmt(Decimal(n) * 60 / span)
        out["rpm_n_minus_1_over_span"] = fmt(Decimal(n - 1) * 60 / span)
    out.update({"peak_60s": peak, "peak_1s": per_s,
                "interval_median_s": None if m == 0 else str(median_mid),
                "interval_median_mean_s": None if m == 0 else fmt(median_mean),
                "interval_min_s": None if m == 0 else str(g[0]),
                "interval_max_s": None if m == 0 else str(g[-1]),
                "first_third": first, "last_third": last,
                "growth": fmt(Decimal(last) / first, 3) if first else None})
    return out


def pcap_requests(path):
    """{endpoint: [time]} from tshark: the frame that completes each HTTP request."""
    out = subprocess.run(["tshark", "-n", "-r", path, "-Y", "http.request", "-T", "fields", "-E", "separator=\t",
                          "-e", "frame.time_epoch", "-e", "http.request.method", "-e", "http.host",
                          "-e", "http.request.uri"], check=True, capture_output=True, text=True).stdout
    by = {}
    for line in out.splitlines():
        ts, method, host, uri = line.split("\t")
        by.setdefault(f"{method} {host.lower()} {uri.split('?')[0]}", []).append(Decimal(ts))
    return by


def figures_cmd(args):
    fires = [json.loads(l) for l in open(args.fires) if l.strip()]
    by = {}
    for f in fires:
        by.setdefault(f["endpoint"], []).append(Decimal(f["time"]))
    result = {"fires": {e: figures(ts) for e, ts in sorted(by.items())}}
    if args.pcap:
        result["pcap"] = {e: figures(ts) for e, ts in sorted(pcap_requests(args.pcap).items())}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for src, eps in result.items():
        print(f"# from {src}")
        for e, f in eps.items():
            print(f"{e}\n  " + "\n  ".join(f"{k}: {v}" for k, v in f.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    cp = sub.add_parser("client")
    cp.add_argument("--server", required=True)
    cp.add_argument("--log", required=True, help="pyhttp sender log (byte truth)")
    cp.add_argument("--fires", required=True, help="one JSON line per request fired")
    sub.add_parser("schedule")
    fp = sub.add_parser("figures")
    fp.add_argument("fires")
    fp.add_argument("--pcap")
    fp.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.cmd == "client":
        signal.alarm(END_MS // 1000 + 40)  # hard bound
        client(args)
    elif args.cmd == "schedule":
        total = 0
        for timer, target, method, start_ms, fires in schedule():
            print(f"{timer}: {method} {target.decode()} starts {start_ms} ms, {len(fires)} fires (ms): "
                  + " ".join(map(str, fires)))
            total += len(fires)
        print(total)
    else:
        figures_cmd(args)


if __name__ == "__main__":
    main()
