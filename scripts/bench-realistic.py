#!/usr/bin/env python3
"""Generate an exporter-realistic benchmark HAR, or a Charles JSON session, streamed to disk.

    python3 scripts/bench-realistic.py har   [--size-mb 300] OUT.har
    python3 scripts/bench-realistic.py chlsj [--size-mb 300] OUT.chlsj

`har`: the entries of the real exporters' HARs in Samples/ (Chrome DevTools with its `_initiator`
stacks, `timings`, `cookies`; Firefox; Fiddler; and Firefox's entries under Firebug's creator
fields, which Firebug's NetExport wrote alike), pretty-printed as the exporters write them, each
repeated in turn with a new URL (a counter in the path and query) until the file reaches
--size-mb MB (10^6 bytes). Used by scripts/bench (--har-realistic) beside the lean developers'
HAR of scripts/bench-har.py.

`chlsj`: the good transactions of Samples/charles-*.chlsj repeated the same way (a new path each).

Deterministic: same samples, same bytes. Python 3 standard library only.
"""

import argparse
import copy
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def load(name):
    with open(os.path.join(ROOT, "Samples", name), encoding="utf-8-sig") as f:
        return json.load(f)


def renamed(url, counter):
    base, sep, query = url.partition("?")
    extra = f"n={counter}"
    return f"{base}/{counter}" + "?" + (query + "&" + extra if query else extra)


def har_entries():
    sources = []
    for name in ("chrome-devtools.har", "firefox.har", "fiddler.har"):
        sources += load(name)["log"]["entries"]
    firebug = copy.deepcopy(load("firefox.har")["log"]["entries"])
    for entry in firebug:
        entry.pop("_securityState", None)
    return sources + firebug


def write_har(out, size):
    entries = har_entries()
    written = 0
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        head = ('{\n  "log": {\n    "version": "1.2",\n    "creator": {"name": "WebInspector", "version": "537.36"},\n'
                '    "pages": [],\n    "entries": [\n')
        f.write(head)
        written += len(head.encode())
        counter = 0
        while written < size:
            entry = copy.deepcopy(entries[counter % len(entries)])
            entry["request"]["url"] = renamed(entry["request"]["url"], counter)
            text = ("" if counter == 0 else ",\n") + "\n".join("      " + line for line in json.dumps(entry, indent=2, ensure_ascii=False).split("\n"))
            f.write(text)
            written += len(text.encode())
            counter += 1
        f.write("\n    ]\n  }\n}\n")
    os.replace(out + ".tmp", out)
    return counter


def write_chlsj(out, size):
    transactions = []
    for name in ("charles-nginx-curl.chlsj", "charles-mixed.chlsj"):
        for t in load(name):
            if isinstance(t, dict) and "method" in t and isinstance((t.get("response") or {}).get("status", 0), int):
                body = (t.get("response") or {}).get("body") or {}
                if "encoded" in body and body["encoded"] == "not base64!":
                    continue
                transactions.append(t)
    written = 0
    counter = 0
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write("[\n")
        while written < size:
            t = copy.deepcopy(transactions[counter % len(transactions)])
            if t.get("path"):
                t["path"] = f"{t['path']}/{counter}"
            text = ("" if counter == 0 else ",\n") + json.dumps(t, indent=2, ensure_ascii=False)
            f.write(text)
            written += len(text.encode())
            counter += 1
        f.write("\n]\n")
    os.replace(out + ".tmp", out)
    return counter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["har", "chlsj"])
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=int, default=300)
    args = parser.parse_args()
    count = (write_har if args.kind == "har" else write_chlsj)(args.out, args.size_mb * 1_000_000)
    print(f"{count} entries, {os.path.getsize(args.out)} bytes")


if __name__ == "__main__":
    sys.exit(main())
