#!/usr/bin/env python3
"""A meter log of every HTTP message a run found, for the meter-join benchmark (docs/BENCHMARK.md).

Reads a run's messages.csv (`meteraudit analyze CAPTURE --out DIR`) and writes a JSON Lines meter
log (docs/METER-LOG.md) with one entry per request and response record: the record's method, its
URL (http://host/path?query), its status, its time on a clock off by --offset seconds (3.25 by
default: the join must estimate it), the documented estimator's total and parts as the meter's
figures, and an id per exchange (connection and pair). Interim responses and records without a
method are left out, as no meter sees them. Deterministic: the same messages.csv gives the same
log.

    scripts/bench-meter-log.py DIR/messages.csv OUT.meter.jsonl [--offset SECONDS]

Prints the number of entries written.
"""

import argparse
import csv
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("messages", help="a run's messages.csv")
    parser.add_argument("out", help="the meter log to write (JSON Lines)")
    parser.add_argument("--offset", type=float, default=3.25, help="capture time minus meter time, seconds")
    args = parser.parse_args()

    count = 0
    with open(args.messages, newline="", encoding="utf-8") as source, open(args.out, "w", encoding="utf-8") as out:
        for row in csv.DictReader(source):
            if row["kind"] not in ("request", "response") or not row["method"] or not row["time"]:
                continue
            if row["kind"] == "response" and row["status"] and int(row["status"]) < 200:
                continue
            query = "?" + row["query"] if row["query"] else ""
            scheme = "https" if row["transport"] == "tls" else "http"
            entry = {
                "time": f"{float(row['time']) - args.offset:.6f}",
                "kind": row["kind"],
                "method": row["method"],
                "url": f"{scheme}://{row['host'] or row['server']}{row['path']}{query}",
            }
            if row["kind"] == "response" and row["status"]:
                entry["status"] = int(row["status"])
            total = row["est_documented"] or row["wire_total"] or "0"
            entry["bytes"] = int(total)
            parts = [row["est_documented_line"], row["est_documented_headers"], row["est_documented_body"]]
            if row["est_documented"] and all(parts):
                entry["line"], entry["headers"], entry["body"] = (int(p) for p in parts)
            entry["id"] = f"{row['source']}/{row['conn']}/{row['pair']}"
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")
            count += 1
    print(count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
