#!/usr/bin/env python3
"""Generate a large benchmark HAR for MeterAudit, deterministically, streamed to disk.

    python3 scripts/bench-har.py [--size-mb 500] [--seed 1] OUT.har

Used by scripts/bench (see docs/BENCHMARK.md, section "HAR"). Python 3 standard library only.

The file is laid out like a Chrome DevTools export (`log.version` "1.2", `log.creator.name`
"WebInspector", `pages`, then `entries`, pretty-printed with 2-space indentation) of an app
talking to 127.0.0.1 loopback origins:

  - http://127.0.0.1:8080 (pages, static files) and http://127.0.0.1:3000 (JSON API), HTTP/1.1:
    `headersSize` is the exact length of the raw head (start line, `Name: value` lines, blank
    line, CRLF, UTF-8 bytes) computed from the listed fields, `bodySize` the body on the wire,
    `_transferSize` their sum;
  - https://127.0.0.1:8443 (API and static), "http/2.0": pseudo-headers in the request,
    lower-case names, empty statusText, `headersSize` and response `bodySize` -1, and
    `_transferSize` (header block + DATA frame overhead + body, estimated).

Traffic mix (from --seed): mostly GET with JSON or HTML responses (plain `content.text`), also
JS/CSS; 30-40% of the bytes are binary responses (PNG/JPEG/WebP/WOFF2/octet-stream, 20-200 KB
each) as base64 `content.text`; some POSTs with JSON `postData.text`; some 304 and 404; a few
gzip responses (`Content-Encoding: gzip`, decoded text in `content.text`, `bodySize` = the
compressed length, plus chunk framing for the chunked ones); header lists of 6-15 fields; and
repeated bodies (the same URL fetched again with identical content, as polling apps and shared
images do). Text bodies contain some non-ASCII UTF-8 and JSON-escaped characters.

The file is written entry by entry (only the current entry and a small cache of bodies to repeat
are in memory) to OUT.tmp-PID and renamed to OUT when complete; its size is at least --size-mb
MB (10^6 bytes) and exceeds it by at most one entry. Next to it, OUT.json records the parameters,
byte count, sha256 and mix. Same seed and size, same Python and zlib: identical bytes.
Prints the entry count and bytes written on stdout.
"""

import argparse
import base64
import hashlib
import json
import os
import platform
import random
import sys
import time
import urllib.parse
import zlib

GENERATOR_VERSION = 1
BASE_EPOCH = 1768471200          # 2026-01-15T10:00:00Z
PAGE_SECONDS = 900               # pages start 15 minutes apart
PAGE_BYTES = 10_000_000          # about one page (navigation) per 10 MB of HAR
BINARY_SHARE = (0.30, 0.40)      # target share of the bytes in binary-response entries
INDENT = " " * 6                 # entries sit at depth 3 of the pretty-printed document

CHROME_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/131.0.0.0 Safari/537.36")
SEC_CH_UA = '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"'
SYLLABLES = ["ka", "lo", "mer", "tin", "sa", "ve", "ro", "quen", "dal", "pi", "nor", "esh", "ul",
             "tra", "gon", "bi", "fel", "ari", "om", "wes", "cy", "zu", "han", "der", "ist", "op"]
NON_ASCII = ["café", "Zürich", "naïve", "größe", "東京", "Ωmega", "déjà", "São", "straße", "crème"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
BINARY_KINDS = [  # mime, extension, magic, weight
    ("image/png", "png", b"\x89PNG\r\n\x1a\n", 40),
    ("image/jpeg", "jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", 30),
    ("image/webp", "webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ", 10),
    ("font/woff2", "woff2", b"wOF2\x00\x01\x00\x00", 10),
    ("application/octet-stream", "bin", b"\x00\x01MA", 10),
]
ORIGINS = {  # name -> scheme, port, HTTP version as Chrome writes it
    "web": ("http", 8080, "HTTP/1.1"),
    "api": ("http", 3000, "HTTP/1.1"),
    "h2": ("https", 8443, "http/2.0"),
}


def log(msg):
    print(f"bench-har: {msg}", file=sys.stderr, flush=True)


def http_date(t):
    g = time.gmtime(t)
    return f"{DAYS[g.tm_wday]}, {g.tm_mday:02d} {MONTHS[g.tm_mon - 1]} {g.tm_year} " \
           f"{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d} GMT"


def iso_time(ms):
    """Epoch milliseconds -> Chrome's startedDateTime (UTC, millisecond precision)."""
    sec, milli = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{milli:03d}Z"


def log_uniform(rng, lo, hi):
    return int(lo * (hi / lo) ** rng.random())


# --------------------------------------------------------------------------------------------
# Content
# --------------------------------------------------------------------------------------------

class Text:
    """Text bodies built from a fixed pool of sentences (Zipf-distributed words from a synthetic
    vocabulary with a few non-ASCII words), so megabytes of fresh text are cheap to produce."""

    def __init__(self, rng):
        words = set()
        while len(words) < 1800:
            words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
        vocab = sorted(words) + NON_ASCII
        rng.shuffle(vocab)
        cum, total = [], 0.0
        for i in range(len(vocab)):
            total += 1.0 / (i + 1) ** 1.1
            cum.append(total)
        self.rng = rng
        self.vocab, self.cum = vocab, cum
        self.sentences = [self._sentence() for _ in range(16000)]
        self.ascii_words = [w for w in vocab if w.isascii()][:600]

    def words(self, k):
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=k)

    def word(self):
        return self.rng.choice(self.ascii_words)

    def _sentence(self):
        w = self.words(self.rng.randint(5, 18))
        w[0] = w[0].capitalize()
        return " ".join(w) + self.rng.choice((".", ".", ".", "?", "!"))

    def para(self, k):
        return " ".join(self.rng.choices(self.sentences, k=k))

    def html(self, size):
        rng = self.rng
        title = " ".join(self.words(4)).title()
        out = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               f"<title>{title}</title>\n<link rel=\"stylesheet\" href=\"/static/site.css\">\n"
               f"<script src=\"/static/app.js\" defer></script>\n</head>\n<body>\n<div class=\"container\">\n"]
        n = len(out[0])
        while n < size:
            r = rng.random()
            if r < 0.12:
                s = f"<h2 id=\"{self.word()}-{self.word()}\">{' '.join(self.words(3)).title()}</h2>\n"
            elif r < 0.3:
                s = "<ul>\n" + "".join(f"  <li><a href=\"/{self.word()}/{self.word()}.html?ref={rng.randint(1, 999)}\">"
                                       f"{' '.join(self.words(3))}</a></li>\n"
                                       for _ in range(rng.randint(2, 6))) + "</ul>\n"
            elif r < 0.36:
                s = (f"<img src=\"/img/{self.word()}{rng.randint(1, 400)}.png\" alt=\"{' '.join(self.words(2))}\" "
                     f"width=\"{rng.randint(40, 1200)}\" height=\"{rng.randint(40, 900)}\">\n")
            else:
                s = f"<p class=\"{self.word()}\">" + self.para(rng.randint(2, 7)) + "</p>\n"
            out.append(s)
            n += len(s)
        out.append("</div>\n</body>\n</html>\n")
        return "".join(out)

    def json_doc(self, size):
        rng = self.rng
        out = [f"{{\"page\":{rng.randint(1, 50)},\"total\":{rng.randint(100, 100000)},\"items\":["]
        n, i = len(out[0]), 0
        while n < size:
            w = self.words(4)
            s = (("," if i else "") +
                 f"{{\"id\":{rng.randint(1, 10**7)},\"name\":\"{w[0]} {w[1]}\",\"slug\":\"{self.word()}-{self.word()}\","
                 f"\"score\":{rng.random() * 100:.3f},\"active\":{'true' if rng.random() < 0.7 else 'false'},"
                 f"\"tags\":[\"{w[2]}\",\"{w[3]}\"],\"updated\":\"2026-01-{rng.randint(1, 28):02d}T"
                 f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z\","
                 f"\"description\":\"{self.para(rng.randint(1, 3))}\"}}")
            out.append(s)
            n += len(s)
            i += 1
        out.append("]}")
        return "".join(out)

    def json_small(self):
        rng = self.rng
        return json.dumps({"ok": True, "id": rng.randint(1, 10**9), "status": rng.choice(("queued", "done", "running")),
                           "message": self.para(1), "ts": rng.randint(1768000000, 1769000000)},
                          ensure_ascii=False, separators=(",", ":"))

    def css(self, size):
        rng = self.rng
        out, n = [], 0
        while n < size:
            s = (f".{self.word()}-{self.word()} .{self.word()} {{\n  margin: {rng.randint(0, 32)}px {rng.randint(0, 32)}px;\n"
                 f"  color: #{rng.randrange(1 << 24):06x};\n  font-size: {rng.choice((12, 13, 14, 16, 18, 24))}px;\n"
                 f"  display: {rng.choice(('block', 'flex', 'inline-block', 'none', 'grid'))};\n}}\n")
            out.append(s)
            n += len(s)
        return "".join(out)

    def js(self, size):
        rng = self.rng
        out, n = ["\"use strict\";\n"], 14
        while n < size:
            a, b, c, d, e = (self.word() for _ in range(5))
            s = (f"function {a}{b.capitalize()}({c}, {d}) {{\n"
                 f"  const {e} = {c}.map((x) => x * {rng.randint(2, 99)} + {d});\n"
                 f"  if ({e}.length > {rng.randint(1, 500)}) {{ return \"{self.para(1)}\"; }}\n"
                 f"  return {e}.filter(Boolean).join(\"{rng.choice((',', ';', ' ', '-'))}\");\n}}\n")
            out.append(s)
            n += len(s)
        return "".join(out)


def chunked_framing(length, chunk=8192):
    """Bytes that chunked transfer coding adds to a body of `length` bytes sent in `chunk`-byte chunks."""
    extra, left = 5, length                     # last-chunk "0\r\n" + final CRLF
    while left > 0:
        c = min(chunk, left)
        extra += len(f"{c:x}") + 4
        left -= c
    return extra


def gzip_len(data):
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return len(z.compress(data)) + len(z.flush())


# --------------------------------------------------------------------------------------------
# Entries
# --------------------------------------------------------------------------------------------

def head_size(start_line, headers):
    """Length of the raw HTTP/1.1 head: start line, fields, blank line, CRLF, UTF-8 bytes."""
    n = len(start_line.encode("utf-8")) + 2 + 2
    for h in headers:
        n += len(h["name"].encode("utf-8")) + len(h["value"].encode("utf-8")) + 4
    return n


def h2_header_block(headers):
    """Rough size of an HPACK-coded HEADERS frame for these fields (frame header + ~40%)."""
    return 9 + sum(len(h["name"]) + len(h["value"]) + 2 for h in headers) * 2 // 5


def hdrs(pairs):
    return [{"name": n, "value": v} for n, v in pairs]


class Generator:
    def __init__(self, seed, target_bytes):
        self.rng = random.Random(seed)
        self.text = Text(self.rng)
        self.target = target_bytes
        self.n_pages = max(1, round(target_bytes / PAGE_BYTES))
        rng = self.rng
        self.pages = []
        for k in range(self.n_pages):
            url = f"http://127.0.0.1:8080/{self.text.word()}/{self.text.word()}.html"
            start = (BASE_EPOCH + k * PAGE_SECONDS) * 1000 + rng.randint(0, 999)
            self.pages.append({"startedDateTime": iso_time(start), "id": f"page_{k + 1}",
                               "title": url, "pageTimings": {"onContentLoad": round(rng.uniform(80, 900), 3),
                                                              "onLoad": round(rng.uniform(900, 3000), 3)},
                               "_url": url, "_start": start})
        self.page = -1
        self.clock = 0
        self.cookie = f"sid={rng.getrandbits(96):024x}; theme=dark"
        self.conn_next = 400000 + rng.randint(0, 99999)
        self.conns = {}
        self.recent = []               # bodies that may be fetched again: dicts, bounded
        self.stats = {"entries": 0, "get": 0, "post": 0, "status": {}, "http/1.1": 0, "http/2.0": 0,
                      "binary_entries": 0, "binary_entry_bytes": 0, "base64_text_bytes": 0,
                      "gzip": 0, "chunked": 0, "repeated": 0, "text_entries": 0}

    # -- connections: 6 keep-alive connections per HTTP/1.1 origin, one per HTTP/2 origin and page
    def connection(self, origin):
        rng = self.rng
        pool = self.conns.setdefault(origin, [])
        limit = 1 if origin == "h2" else 6
        if len(pool) < limit and (not pool or rng.random() < 0.3):
            self.conn_next += rng.randint(1, 40)
            pool.append(str(self.conn_next))
            return pool[-1], True
        return rng.choice(pool), False

    def next_page(self):
        self.page += 1
        self.conns = {}
        self.clock = self.pages[self.page]["_start"]

    def binary_probability(self, written):
        share = self.stats["binary_entry_bytes"] / written if written > 2_000_000 else None
        if share is None:
            return 0.08
        if share < BINARY_SHARE[0]:
            return 0.25
        if share > BINARY_SHARE[1]:
            return 0.0
        return 0.08

    # -- one entry's plan: what is fetched, and the (decoded) body
    def plan(self, written, first_of_page):
        rng, text = self.rng, self.text
        page_url = self.pages[self.page]["_url"]
        if first_of_page:
            body = text.html(log_uniform(rng, 8_000, 120_000)).encode("utf-8")
            return dict(origin="web", method="GET", path=page_url.split(":8080", 1)[1], query=[],
                        kind="document", mime="text/html", body=body, binary=False, status=200)
        if self.recent and rng.random() < 0.10:
            p = dict(rng.choice(self.recent))
            p["repeat"] = True
            return p
        r = rng.random()
        if r < self.binary_probability(written):
            mime, ext, magic, _ = rng.choices(BINARY_KINDS, weights=[k[3] for k in BINARY_KINDS])[0]
            size = log_uniform(rng, 20_000, 200_000)
            body = magic + rng.randbytes(size - len(magic))
            origin = "h2" if rng.random() < 0.3 else "web"
            kind = "font" if ext == "woff2" else ("other" if ext == "bin" else "image")
            folder = {"font": "fonts", "other": "download", "image": "img"}[kind]
            return dict(origin=origin, method="GET", path=f"/{folder}/{text.word()}-{rng.getrandbits(32):08x}.{ext}",
                        query=[], kind=kind, mime=mime, body=body, binary=True, status=200)
        r = rng.random()
        if r < 0.13:                                       # POST to the API
            origin = "h2" if rng.random() < 0.25 else "api"
            req = json.dumps({"action": text.word(), "items": [rng.randint(1, 10**6) for _ in range(rng.randint(1, 20))],
                              "note": text.para(rng.randint(1, 12)), "client": {"tz": "Europe/Zürich", "v": "2.4.1"}},
                             ensure_ascii=False, separators=(",", ":"))
            body = (text.json_small() if rng.random() < 0.6 else text.json_doc(log_uniform(rng, 500, 30_000))).encode("utf-8")
            return dict(origin=origin, method="POST", path=f"/api/v1/{text.word()}/{rng.randint(1, 9999)}", query=[],
                        kind="fetch", mime="application/json", body=body, binary=False, status=201 if rng.random() < 0.3 else 200,
                        post=req)
        if r < 0.16:
            return dict(origin="web", method="GET", path=f"/static/{text.word()}.css", query=[], kind="stylesheet",
                        mime="text/css", body=b"", binary=False, status=304)
        if r < 0.17:
            return dict(origin="api", method="GET", path=f"/api/v1/{text.word()}/{rng.randint(1, 9999)}", query=[],
                        kind="xhr", mime="text/html",
                        body=b"<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center>"
                             b"<hr><center>nginx</center></body></html>\n", binary=False, status=404)
        if r < 0.27:
            kind, mime = ("script", "application/javascript") if rng.random() < 0.6 else ("stylesheet", "text/css")
            size = log_uniform(rng, 1_000, 150_000)
            body = (text.js(size) if kind == "script" else text.css(size)).encode("utf-8")
            ext = "js" if kind == "script" else "css"
            return dict(origin="h2" if rng.random() < 0.3 else "web", method="GET",
                        path=f"/static/{text.word()}.{rng.getrandbits(32):08x}.{ext}", query=[], kind=kind, mime=mime,
                        body=body, binary=False, status=200)
        if r < 0.37:                                       # HTML fragment / sub-document
            return dict(origin="web", method="GET", path=f"/{text.word()}/{text.word()}.html", query=[],
                        kind="document" if rng.random() < 0.3 else "xhr", mime="text/html",
                        body=text.html(log_uniform(rng, 2_000, 100_000)).encode("utf-8"), binary=False, status=200)
        query = [("page", str(rng.randint(1, 40))), ("limit", rng.choice(("20", "50", "100")))]
        if rng.random() < 0.4:
            query.append(("q", urllib.parse.quote_plus(" ".join(text.words(2)))))
        return dict(origin="h2" if rng.random() < 0.25 else "api", method="GET",
                    path=f"/api/v1/{text.word()}", query=query, kind=rng.choice(("fetch", "xhr")),
                    mime="application/json", body=text.json_doc(log_uniform(rng, 200, 64_000)).encode("utf-8"),
                    binary=False, status=200)

    # -- the HAR entry for a plan
    def entry(self, p):
        rng = self.rng
        scheme, port, version = ORIGINS[p["origin"]]
        h2 = version == "http/2.0"
        authority = f"127.0.0.1:{port}"
        qs = "&".join(f"{n}={v}" for n, v in p["query"])
        target = p["path"] + (f"?{qs}" if qs else "")
        url = f"{scheme}://{authority}{target}"
        page_url = self.pages[self.page]["_url"]
        self.clock += rng.randint(1, 40)
        t0 = self.clock
        conn, fresh = self.connection(p["origin"])
        body = p["body"]
        status = p["status"]
        has_body = status not in (204, 304)

        # request
        accept = {"document": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
                              "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
                  "image": "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
                  "stylesheet": "text/css,*/*;q=0.1", "script": "*/*", "font": "*/*", "other": "*/*",
                  "fetch": "application/json, text/plain, */*", "xhr": "application/json, text/plain, */*"}[p["kind"]]
        dest = {"document": "document", "image": "image", "stylesheet": "style", "script": "script",
                "font": "font", "other": "empty", "fetch": "empty", "xhr": "empty"}[p["kind"]]
        fields = [("Accept", accept), ("Accept-Encoding", "gzip, deflate, br, zstd"),
                  ("Accept-Language", "en-US,en;q=0.9,de;q=0.8")]
        opt = []
        if p["kind"] == "document" and rng.random() < 0.5:
            opt.append(("Cache-Control", "max-age=0"))
        if not h2:
            fields.append(("Connection", "keep-alive"))
        if p["method"] == "POST":
            fields += [("Content-Length", str(len(p["post"].encode("utf-8")))), ("Content-Type", "application/json")]
        if rng.random() < 0.6:
            opt.append(("Cookie", self.cookie))
        if not h2:
            fields.append(("Host", authority))
        if p["method"] == "POST" or (p["kind"] in ("fetch", "font") and rng.random() < 0.5):
            fields.append(("Origin", "http://127.0.0.1:8080"))
        if p["status"] == 304:
            fields += [("If-Modified-Since", http_date(t0 // 1000 - 86400)), ("If-None-Match", f'W/"{rng.getrandbits(40):x}"')]
        if url != page_url:
            opt.append(("Referer", page_url))
        opt += [("Sec-Fetch-Dest", dest), ("Sec-Fetch-Mode", "navigate" if dest == "document" else "cors"),
                ("Sec-Fetch-Site", "same-site" if p["origin"] != "web" else "same-origin")]
        fields.append(("User-Agent", CHROME_UA))
        opt += [("sec-ch-ua", SEC_CH_UA), ("sec-ch-ua-mobile", "?0"), ("sec-ch-ua-platform", '"Linux"')]
        if p["kind"] == "xhr":
            opt.append(("X-Requested-With", "XMLHttpRequest"))
        keep = rng.randint(max(0, 6 - len(fields)), max(0, min(len(opt), 15 - len(fields))))
        fields += rng.sample(opt, keep)
        if h2:
            fields = [(n.lower(), v) for n, v in fields]
        fields.sort(key=lambda f: f[0].lower())
        if h2:
            fields = [(":authority", authority), (":method", p["method"]), (":path", target), (":scheme", scheme)] + fields
        req_headers = hdrs(fields)
        cookies = [{"name": c.split("=")[0], "value": c.split("=")[1], "path": "/", "domain": "127.0.0.1",
                    "expires": "1970-01-01T00:00:00.000Z", "httpOnly": False, "secure": False}
                   for c in self.cookie.split("; ")] if any(f[0].lower() == "cookie" for f in fields) else []
        post = p.get("post")
        request = {"method": p["method"], "url": url, "httpVersion": version, "headers": req_headers,
                   "queryString": [{"name": n, "value": v} for n, v in p["query"]], "cookies": cookies,
                   "headersSize": -1 if h2 else head_size(f"{p['method']} {target} HTTP/1.1", req_headers),
                   "bodySize": len(post.encode("utf-8")) if post is not None else 0}
        if post is not None:
            request["postData"] = {"mimeType": "application/json", "text": post}

        # response body on the wire
        gz = has_body and not p["binary"] and len(body) > 1000 and rng.random() < 0.10
        wire = gzip_len(body) if gz else len(body)
        chunked = gz and not h2 and rng.random() < 0.5
        if chunked:
            wire += chunked_framing(wire)
        rfields = [("Content-Type", p["mime"] + ("; charset=utf-8" if p["mime"].startswith("text/") else "")),
                   ("Date", http_date(t0 // 1000))]
        ropt = [("Server", "nginx/1.22.1"), ("X-Content-Type-Options", "nosniff"),
                ("X-Request-Id", f"{rng.getrandbits(128):032x}")]
        if not h2:
            rfields += [("Connection", "keep-alive"), ("Keep-Alive", "timeout=65")]
        if has_body:
            rfields.append(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(wire)))
        if gz:
            rfields += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
        if p["kind"] in ("image", "font", "stylesheet", "script", "other") or status == 304:
            ropt += [("Cache-Control", "public, max-age=86400"), ("ETag", f'"{rng.getrandbits(48):x}-{len(body):x}"'),
                     ("Last-Modified", http_date(BASE_EPOCH - rng.randint(3600, 10**7))), ("Accept-Ranges", "bytes")]
        else:
            ropt += [("Cache-Control", "no-store"), ("Access-Control-Allow-Origin", "http://127.0.0.1:8080"),
                     ("Access-Control-Allow-Credentials", "true")]
        if rng.random() < 0.05:
            ropt.append(("Set-Cookie", f"csrftoken={rng.getrandbits(64):016x}; Path=/; SameSite=Lax"))
        keep = rng.randint(max(0, 6 - len(rfields)), max(0, min(len(ropt), 15 - len(rfields))))
        rfields += rng.sample(ropt, keep)
        if h2:
            rfields = [(n.lower(), v) for n, v in rfields]
        resp_headers = hdrs(rfields)
        status_text = "" if h2 else {200: "OK", 201: "Created", 304: "Not Modified", 404: "Not Found"}[status]
        rcookies = [{"name": "csrftoken", "value": v.split("=")[1].split(";")[0], "path": "/", "expires": None,
                     "httpOnly": False, "secure": False, "sameSite": "Lax"}
                    for n, v in rfields if n.lower() == "set-cookie"]
        content = {"size": len(body) if has_body else 0, "mimeType": p["mime"]}
        if h2:
            head, body_size = -1, (0 if status == 304 else -1)
            transfer = h2_header_block(resp_headers) + (wire + 9 * -(-wire // 16384) if has_body else 0)
        else:
            head = head_size(f"HTTP/1.1 {status} {status_text}", resp_headers)
            body_size = wire if has_body else 0
            transfer = head + body_size
            if status != 304:
                content["compression"] = content["size"] - body_size
        if has_body:
            if p["binary"]:
                content["text"] = base64.b64encode(body).decode("ascii")
                content["encoding"] = "base64"
            else:
                content["text"] = body.decode("utf-8")
        response = {"status": status, "statusText": status_text, "httpVersion": version, "headers": resp_headers,
                    "cookies": rcookies, "content": content, "redirectURL": "", "headersSize": head,
                    "bodySize": body_size, "_transferSize": transfer, "_error": None}

        # timings (ms)
        connect = round(rng.uniform(0.2, 1.5), 3) if fresh else -1
        ssl = round(rng.uniform(2, 6), 3) if fresh and scheme == "https" else -1
        if ssl > 0:
            connect = round(connect + ssl, 3)
        timings = {"blocked": round(rng.uniform(0.3, 6), 3), "dns": -1, "ssl": ssl, "connect": connect,
                   "send": round(rng.uniform(0.03, 0.4), 3), "wait": round(rng.uniform(0.8, 45), 3),
                   "receive": round(0.05 + wire / 400_000, 3), "_blocked_queueing": round(rng.uniform(0.1, 2), 3)}
        total = round(sum(v for k, v in timings.items() if not k.startswith("_") and k != "ssl" and v > 0), 3)
        initiator = ({"type": "other"} if p["kind"] == "document" and url == page_url else
                     {"type": "parser", "url": page_url, "lineNumber": rng.randint(5, 400)}
                     if p["kind"] in ("image", "stylesheet", "script", "font") else
                     {"type": "script", "stack": {"callFrames": [
                         {"functionName": f"{self.text.word()}{self.text.word().capitalize()}", "scriptId": str(rng.randint(10, 99)),
                          "url": "http://127.0.0.1:8080/static/app.js", "lineNumber": rng.randint(1, 4000),
                          "columnNumber": rng.randint(1, 120)}]}})
        priority = {"document": "VeryHigh", "stylesheet": "VeryHigh", "script": "High", "font": "VeryHigh",
                    "image": "Low", "other": "Low", "fetch": "High", "xhr": "High"}[p["kind"]]
        entry = {"_initiator": initiator, "_priority": priority, "_resourceType": p["kind"], "cache": {},
                 "connection": conn, "pageref": self.pages[self.page]["id"], "request": request, "response": response,
                 "serverIPAddress": "127.0.0.1", "startedDateTime": iso_time(t0), "time": total, "timings": timings}

        # bookkeeping
        st = self.stats
        st["entries"] += 1
        st["get" if p["method"] == "GET" else "post"] += 1
        st["status"][str(status)] = st["status"].get(str(status), 0) + 1
        st[version.lower()] += 1
        st["gzip"] += gz
        st["chunked"] += chunked
        st["repeated"] += bool(p.get("repeat"))
        if not p.get("repeat") and p["method"] == "GET" and status == 200 and rng.random() < 0.25:
            self.recent.append(p)                          # may be fetched again later, same URL and body
            if len(self.recent) > 48:
                self.recent.pop(rng.randrange(len(self.recent)))
        return entry, p["binary"] and has_body, len(content.get("text", "")) if p["binary"] else 0

    def run(self, f):
        """Writes the document to binary file f; returns (entries, bytes, sha256 hex)."""
        sha = hashlib.sha256()
        written = 0

        def out(s):
            nonlocal written
            b = s.encode("utf-8")
            f.write(b)
            sha.update(b)
            written += len(b)

        pages = [{k: v for k, v in pg.items() if not k.startswith("_")} for pg in self.pages]
        head = {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": pages}
        doc = json.dumps({"log": head}, indent=2, ensure_ascii=False)
        assert doc.endswith("\n  }\n}")
        out(doc[:-len("\n  }\n}")] + ",\n    \"entries\": [\n")
        tail = "\n    ]\n  }\n}\n"
        first = True
        while first or written + len(tail) < self.target:
            page = min(self.n_pages - 1, written * self.n_pages // self.target)
            first_of_page = page != self.page
            while self.page < page:
                self.next_page()
            entry, binary, b64 = self.entry(self.plan(written, first_of_page))
            s = json.dumps(entry, indent=2, ensure_ascii=False)
            before = written
            out(("" if first else ",\n") + INDENT + s.replace("\n", "\n" + INDENT))
            if binary:
                self.stats["binary_entries"] += 1
                self.stats["binary_entry_bytes"] += written - before
                self.stats["base64_text_bytes"] += b64
            else:
                self.stats["text_entries"] += 1
            first = False
        out(tail)
        return self.stats["entries"], written, sha.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", metavar="OUT.har", help="HAR file to write (replaced atomically)")
    ap.add_argument("--size-mb", type=int, default=500, help="minimum size in MB (10^6 bytes); default 500")
    ap.add_argument("--seed", type=int, default=1, help="seed of the content; default 1")
    args = ap.parse_args()
    if args.size_mb < 1:
        ap.error("--size-mb must be a positive integer")
    out = os.path.abspath(args.out)
    tmp = f"{out}.tmp-{os.getpid()}"
    t0 = time.monotonic()
    gen = Generator(args.seed, args.size_mb * 1_000_000)
    try:
        with open(tmp, "wb", buffering=1 << 20) as f:
            entries, written, digest = gen.run(f)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    secs = time.monotonic() - t0
    st = gen.stats
    meta = {"generator": "scripts/bench-har.py", "generator_version": GENERATOR_VERSION,
            "python": platform.python_version(), "zlib": zlib.ZLIB_VERSION,
            "size_mb": args.size_mb, "seed": args.seed, "bytes": written, "sha256": digest,
            "entries": entries, "expected_records": 2 * entries, "pages": gen.n_pages,
            "binary_byte_share": round(st["binary_entry_bytes"] / written, 4),
            "base64_text_share": round(st["base64_text_bytes"] / written, 4),
            "mix": st, "seconds": round(secs, 1)}
    with open(out + ".json", "w", encoding="utf-8") as m:
        json.dump(meta, m, indent=2, ensure_ascii=False)
        m.write("\n")
    print(f"{out}: {entries} entries, {written} bytes ({written / 1e6:.1f} MB) in {secs:.1f} s")
    print(f"  {st['get']} GET, {st['post']} POST; status {st['status']}; "
          f"{st['http/1.1']} HTTP/1.1, {st['http/2.0']} http/2.0; {st['binary_entries']} binary responses "
          f"({meta['binary_byte_share'] * 100:.1f}% of the bytes); {st['gzip']} gzip ({st['chunked']} chunked); "
          f"{st['repeated']} repeated bodies; {2 * entries} records expected")


if __name__ == "__main__":
    main()
