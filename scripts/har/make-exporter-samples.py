#!/usr/bin/env python3
"""Write small hand-made HAR files into Samples/, one per exporter, each in that
exporter's own layout (key order, field spellings, size conventions, quirks).

    scripts/har/make-exporter-samples.py [--out DIR]     # default: <repo>/Samples

Standard library only (json, base64, gzip, zlib). Deterministic: no clock, no
randomness, gzip with mtime=0; running it twice gives byte-identical files. Traffic
is imaginary: every URL is 127.0.0.1 / [::1] (ports 18180, 18181, 18443) or an
example.com name. JSON is written with indent=2, ensure_ascii=False (UTF-8), keys
in the order the exporter writes them (log.version / log.creator before
log.entries; Polly.JS sorts every object's keys, so there "version" comes last).

Where sizes are "exact", headersSize is computed here from the listed fields: the
start line (request: "{method} {origin-form} HTTP/1.1\\r\\n" -- CONNECT uses its
authority-form --, response: "HTTP/1.1 {status} {text}\\r\\n") + one
"name: value\\r\\n" per field + "\\r\\n", in UTF-8 bytes (raw_request_head /
raw_response_head below).

Which file covers which behaviour (e<N> = entry index):

  BOM (EF BB BF) at the start of the file ......... fiddler
  base64 content.text (binary body) ............... chrome-devtools e1 (PNG),
                                                    fiddler e2 (PNG), pcap2har e0 (GIF)
  base64 postData.text ............................ charles e0 (gzip body), proxyman e1 (PNG)
  missing postData on GETs ........................ every exporter except Insomnia;
                                                    pcap2har e1: a POST without postData
  cookies missing ................................. proxyman (all entries)
  serverIPAddress null ............................ charles e3
  serverIPAddress missing ......................... fiddler e0 e2, safari e2, firefox e3,
                                                    insomnia, pollyjs, pcap2har
  connection missing .............................. charles (all), chrome e2 e5, safari e2,
                                                    firefox e3
  headersSize null ................................ charles e3 (request)
  content.text missing ............................ charles e2 (HEAD), firefox e2 (304),
                                                    proxyman e1 (204), pollyjs e2 (204),
                                                    charles e3 / chrome e5 (status 0)
  no response object .............................. proxyman e3 (key absent),
                                                    pcap2har e2 ("response": null)
  response status 0 ............................... chrome-devtools e5 (_error
                                                    net::ERR_CONNECTION_REFUSED),
                                                    insomnia e2, charles e3 (FAILED)
  HTTP/2 .......................................... chrome e0 "http/2.0", chrome e2,
                                                    safari e0 "HTTP/2", proxyman e0 "h2"
  HTTP/3 .......................................... chrome-devtools e1 "h3"
  pseudo-header fields (:authority ... :status) ... chrome-devtools e0 e1 (headersSize -1)
  _transferSize, HTTP/2 / HTTP/3 (H = B = -1) ..... chrome-devtools e0 e1
  _transferSize, HTTP/1.1 (exact H) ............... chrome-devtools e3 e4, safari e1
  exact headersSize ............................... chrome e3 e4; charles e0 e1 e2 e4;
                                                    fiddler all; proxyman e1 e2;
                                                    firefox e0 e1 e2; safari e1
  _webSocketMessages (101, 3 messages) ............ chrome-devtools e4 (on [::1])
  Chrome _fromCache "memory" ...................... chrome-devtools e2
  cache.beforeRequest non-empty ................... firefox e3 (afterRequest: firefox e2)
  response Content-Encoding gzip, decoded text,
    bodySize = gzip length ........................ chrome-devtools e3, charles e1
  POST postData.text JSON ......................... chrome e5, firefox e1, insomnia e0
  POST form, params only (space, non-ASCII) ....... fiddler e0
  multipart POST, params only (body unknown) ...... pollyjs e1
  request Content-Encoding gzip, base64 postData .. charles e0
  Set-Cookie twice ................................ fiddler e0, pollyjs e0
  HEAD ............................................ charles e2
  204 without content.text ........................ proxyman e1, pollyjs e2
  304 without content.text ........................ firefox e2
  sizes -1 (Insomnia), Polly's own estimate of
    headersSize, _id/_order (Polly.JS), pcap2har
    headersSize -1 and numeric connection ......... insomnia, pollyjs, pcap2har
  startedDateTime forms: "...000Z" (chrome, safari, insomnia, pollyjs),
    "+01:00" with 3 digits (firefox, charles), 6 digits "Z" (pcap2har e0 e2),
    7 digits "+01:00" (fiddler), no fraction "+01:00" (proxyman), no fraction "Z"
    (pcap2har e1).

Exporter facts used (checked against the exporters' sources where they are public):
  * Chrome DevTools (front_end/models/har/Log.ts): creator "WebInspector"; entry keys
    _fromCache, _initiator, _priority, _resourceType, _webSocketMessages, cache,
    connection, pageref, request, response, serverIPAddress, startedDateTime, time,
    timings; headersSize = length of the raw header text, -1 without it (HTTP/2, /3,
    failures); response bodySize = _transferSize - headersSize, 0 for cache hits,
    -1 without header text; h2 is spelled "http/2.0", h3 "h3", a failed request ""
    ; serverIPAddress keeps IPv6 brackets (the code's /\\[\\]/ regex removes only
    "[]"); content.compression only with header text.
  * Firefox (devtools/client/netmonitor/src/har/har-builder.js): request bodySize =
    postData.text.length (UTF-16 code units, not bytes); response bodySize =
    networkEvent.transferredSize, which counts the response head as well
    (headers + body, as browsermob-proxy#723 observed); connection = remote PORT;
    cache.afterRequest only on 304s. It never writes cache.beforeRequest: e3 has one
    so that readers' beforeRequest branch is exercised.
  * Safari (WebKit HARBuilder.js): creator "WebKit Web Inspector"; httpVersion from
    displayNameForProtocol ("HTTP/2", "HTTP/1.1"); sizes -1 when unknown;
    _transferSize, _serverPort, _fetchType ("Network Load" / "Memory Cache"),
    _priority.
  * Charles Proxy: layout of Tests/Fixtures/har/charles.har (_charlesStatus first in
    the response, redirectURL null, no connection). The FAILED entry (null
    serverIPAddress, null headersSize, status 0) is modeled, not copied from Charles.
  * Fiddler (BasicFormats HTTPArchiveJSONExport): headersSize = ByteCount() + 2 (the
    raw head); form bodies become params only (decoded), no text; a body whose
    Content-Type is not text-like is written base64 -- also an empty one
    ("encoding": "base64", "text": ""); serverIPAddress only when the session has a
    comment; connection = client port; StreamWriter UTF-8 writes a BOM; dates .NET "o".
  * Proxyman (closed source): creator "Proxyman", no log.pages, startedDateTime
    without fraction, entries of unfinished requests without "response"
    (ProxymanApp/proxyman-windows-linux#560). The "h2" spelling, missing cookies and
    the base64 request body layout are assumptions.
  * Insomnia (app/common/har.ts): creator "Insomnia REST Client", every
    headersSize/bodySize -1, postData on every request ({mimeType, text, params};
    a multipart/form body has text "" and params), every entry the same
    startedDateTime (export time), comment = request name, a request without stored
    response gets status 0.
  * Polly.JS (@pollyjs/persister): keys sorted (fast-json-stable-stringify); header
    names lower case, repeated headers with _fromType "array"; headersSize =
    utf8(method + url + names.join() + values.join()) + 2k + 16 (request) or
    utf8(names.join() + values.join()) + 2k + 4 (response): Polly's estimate, not a
    wire size; bodySize = Content-Length or text length; postData.text only for
    string bodies (a FormData body gives params [] and no text).
  * pcap2har (andrewf/pcap2har har.py / httpsession.py): log.version "1.1";
    headersSize always -1; bodySize = body length; no postData at all; response
    httpVersion without "HTTP/" ("1.1", dpkt's version); header names lower case,
    sorted; startedDateTime = datetime.isoformat() + "Z" (no fraction when the
    microseconds are 0); an unanswered request has "response": null. The numeric
    "connection" is an addition (pcap2har writes none) to exercise numeric values.
"""
import argparse
import base64
import gzip
import json
import os
import sys
import zlib
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

UA_CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/122.0.0.0 Safari/537.36")
UA_FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:124.0) Gecko/20100101 Firefox/124.0"
UA_SAFARI = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
             "(KHTML, like Gecko) Version/17.3 Safari/605.1.15")
UA_FIDDLER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:124.0) Gecko/20100101 Firefox/124.0"
DATE = "Fri, 01 Mar 2024 10:00:00 GMT"


# ---------------------------------------------------------------- helpers

def H(name, value):
    return {"name": name, "value": value}


def origin_form(url):
    u = urlsplit(url)
    target = u.path or "/"
    if "?" in url.split("#", 1)[0]:
        target += "?" + u.query
    return target


def head_len(start_line, headers):
    text = start_line + "\r\n"
    for h in headers:
        text += "%s: %s\r\n" % (h["name"], h["value"])
    text += "\r\n"
    return len(text.encode("utf-8"))


def raw_request_head(method, url, headers, target=None):
    return head_len("%s %s HTTP/1.1" % (method, target or origin_form(url)), headers)


def raw_response_head(status, text, headers):
    return head_len("HTTP/1.1 %d %s" % (status, text), headers)


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def utf8len(s):
    return len(s.encode("utf-8"))


def png(rgb):
    """A valid 1x1 RGB PNG (deterministic: zlib level 9 of fixed bytes)."""
    def chunk(kind, data):
        return (len(data).to_bytes(4, "big") + kind + data
                + (zlib.crc32(kind + data) & 0xFFFFFFFF).to_bytes(4, "big"))
    ihdr = (1).to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    idat = zlib.compress(b"\x00" + bytes(rgb), 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


GIF_1x1 = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00"
           b"\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


def polly_req_headers_size(method, url, headers):
    names = ",".join(h["name"] for h in headers)
    values = ",".join(h["value"] for h in headers)
    return utf8len(method + url + names + values) + len(headers) * 2 + 2 + 12 + 2


def polly_resp_headers_size(headers):
    names = ",".join(h["name"] for h in headers)
    values = ",".join(h["value"] for h in headers)
    return utf8len(names + values) + len(headers) * 2 + 2 + 2


def sort_keys_deep(o):
    if isinstance(o, dict):
        return {k: sort_keys_deep(o[k]) for k in sorted(o)}
    if isinstance(o, list):
        return [sort_keys_deep(x) for x in o]
    return o


# ---------------------------------------------------------------- Chrome DevTools

def chrome():
    entries = []

    # e0: HTTP/2 document, pseudo-header fields, sizes -1, _transferSize.
    html0 = ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>Meter sample</title><script src=\"/app.js\"></script></head>\n"
             "<body><h1>Meter sample</h1><img src=\"/logo.png\" alt=\"\"></body></html>\n")
    url0 = "https://127.0.0.1:18443/"
    entries.append({
        "_initiator": {"type": "other"},
        "_priority": "VeryHigh",
        "_resourceType": "document",
        "cache": {},
        "connection": "118",
        "pageref": "page_1",
        "request": {
            "method": "GET", "url": url0, "httpVersion": "http/2.0",
            "headers": [
                H(":authority", "127.0.0.1:18443"), H(":method", "GET"), H(":path", "/"),
                H(":scheme", "https"),
                H("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
                H("accept-encoding", "gzip, deflate, br"), H("accept-language", "en-US,en;q=0.9"),
                H("user-agent", UA_CHROME),
            ],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
        },
        "response": {
            "status": 200, "statusText": "", "httpVersion": "http/2.0",
            "headers": [
                H(":status", "200"), H("content-type", "text/html; charset=utf-8"),
                H("content-length", str(utf8len(html0))), H("date", DATE),
            ],
            "cookies": [],
            "content": {"size": utf8len(html0), "mimeType": "text/html", "text": html0},
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
            "_transferSize": utf8len(html0) + 61, "_error": None,
        },
        "serverIPAddress": "127.0.0.1",
        "startedDateTime": "2024-03-01T10:00:00.000Z",
        "time": 21.847,
        "timings": {"blocked": 1.204, "dns": 0.011, "ssl": 3.412, "connect": 4.007, "send": 0.118,
                    "wait": 14.9, "receive": 1.607, "_blocked_queueing": 0.731},
    })

    # e1: HTTP/3 image, base64 body, pseudo-header fields, sizes -1, _transferSize.
    logo = png((0x1f, 0x6f, 0xeb))
    entries.append({
        "_initiator": {"type": "parser", "url": url0, "lineNumber": 1},
        "_priority": "Low",
        "_resourceType": "image",
        "cache": {},
        "connection": "126",
        "pageref": "page_1",
        "request": {
            "method": "GET", "url": "https://127.0.0.1:18443/logo.png", "httpVersion": "h3",
            "headers": [
                H(":authority", "127.0.0.1:18443"), H(":method", "GET"), H(":path", "/logo.png"),
                H(":scheme", "https"),
                H("accept", "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"),
                H("accept-encoding", "gzip, deflate, br"), H("referer", url0),
                H("user-agent", UA_CHROME),
            ],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
        },
        "response": {
            "status": 200, "statusText": "", "httpVersion": "h3",
            "headers": [
                H(":status", "200"), H("content-type", "image/png"),
                H("content-length", str(len(logo))), H("cache-control", "max-age=3600"),
                H("date", DATE),
            ],
            "cookies": [],
            "content": {"size": len(logo), "mimeType": "image/png", "text": b64(logo), "encoding": "base64"},
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
            "_transferSize": len(logo) + 48, "_error": None,
        },
        "serverIPAddress": "127.0.0.1",
        "startedDateTime": "2024-03-01T10:00:00.031Z",
        "time": 6.512,
        "timings": {"blocked": 0.402, "dns": -1, "ssl": -1, "connect": -1, "send": 0.09,
                    "wait": 5.71, "receive": 0.31, "_blocked_queueing": 0.302},
    })

    # e2: memory-cache hit: headersSize -1, bodySize 0, _transferSize 0, text present.
    js = "document.querySelector('h1').dataset.ready = '1';\n"
    entries.append({
        "_fromCache": "memory",
        "_initiator": {"type": "parser", "url": url0, "lineNumber": 1},
        "_priority": "High",
        "_resourceType": "script",
        "cache": {},
        "pageref": "page_1",
        "request": {
            "method": "GET", "url": "https://127.0.0.1:18443/app.js", "httpVersion": "http/2.0",
            "headers": [H("Referer", url0), H("User-Agent", UA_CHROME)],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
        },
        "response": {
            "status": 200, "statusText": "", "httpVersion": "http/2.0",
            "headers": [
                H("content-type", "text/javascript"), H("content-length", str(utf8len(js))),
                H("cache-control", "max-age=3600"), H("date", DATE),
            ],
            "cookies": [],
            "content": {"size": utf8len(js), "mimeType": "text/javascript", "text": js},
            "redirectURL": "", "headersSize": -1, "bodySize": 0,
            "_transferSize": 0, "_error": None,
        },
        "serverIPAddress": "127.0.0.1",
        "startedDateTime": "2024-03-01T10:00:00.052Z",
        "time": 0.371,
        "timings": {"blocked": 0.208, "dns": -1, "ssl": -1, "connect": -1, "send": 0,
                    "wait": 0.1, "receive": 0.063, "_blocked_queueing": 0.208},
    })

    # e3: HTTP/1.1 with exact headersSize, gzip body (bodySize = compressed length).
    page = ("<!doctype html>\n<html><head><title>Plain HTTP/1.1 page</title></head><body>\n"
            + "".join("<p>Paragraph %02d: the quick brown fox jumps over the lazy dog.</p>\n" % i
                      for i in range(16))
            + "</body></html>\n").encode("utf-8")
    page_gz = gz(page)
    url3 = "http://127.0.0.1:18180/page.html"
    req3 = [
        H("Host", "127.0.0.1:18180"), H("Connection", "keep-alive"),
        H("Upgrade-Insecure-Requests", "1"), H("User-Agent", UA_CHROME),
        H("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        H("Accept-Encoding", "gzip, deflate, br"), H("Accept-Language", "en-US,en;q=0.9"),
    ]
    resp3 = [
        H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "text/html"),
        H("Last-Modified", "Thu, 29 Feb 2024 09:00:00 GMT"), H("Connection", "keep-alive"),
        H("ETag", 'W/"65e04a10-4d6"'), H("Content-Encoding", "gzip"),
        H("Content-Length", str(len(page_gz))),
    ]
    h3req = raw_request_head("GET", url3, req3)
    h3resp = raw_response_head(200, "OK", resp3)
    entries.append({
        "_initiator": {"type": "other"},
        "_priority": "VeryHigh",
        "_resourceType": "document",
        "cache": {},
        "connection": "31",
        "pageref": "page_2",
        "request": {
            "method": "GET", "url": url3, "httpVersion": "HTTP/1.1", "headers": req3,
            "queryString": [], "cookies": [], "headersSize": h3req, "bodySize": 0,
        },
        "response": {
            "status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": resp3,
            "cookies": [],
            "content": {"size": len(page), "mimeType": "text/html",
                        "compression": len(page) - len(page_gz), "text": page.decode("utf-8")},
            "redirectURL": "", "headersSize": h3resp, "bodySize": len(page_gz),
            "_transferSize": h3resp + len(page_gz), "_error": None,
        },
        "serverIPAddress": "127.0.0.1",
        "startedDateTime": "2024-03-01T10:00:01.250Z",
        "time": 3.904,
        "timings": {"blocked": 0.61, "dns": 0.014, "ssl": -1, "connect": 0.212, "send": 0.07,
                    "wait": 2.6, "receive": 0.398, "_blocked_queueing": 0.48},
    })

    # e4: WebSocket handshake on [::1], 101 with exact sizes, 3 messages.
    url4 = "ws://[::1]:18181/socket"
    req4 = [
        H("Host", "[::1]:18181"), H("Connection", "Upgrade"), H("Pragma", "no-cache"),
        H("Cache-Control", "no-cache"), H("User-Agent", UA_CHROME), H("Upgrade", "websocket"),
        H("Origin", "http://[::1]:18181"), H("Sec-WebSocket-Version", "13"),
        H("Accept-Encoding", "gzip, deflate, br"), H("Accept-Language", "en-US,en;q=0.9"),
        H("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        H("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits"),
    ]
    resp4 = [
        H("Upgrade", "websocket"), H("Connection", "Upgrade"),
        H("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
    ]
    h4req = raw_request_head("GET", url4, req4)
    h4resp = raw_response_head(101, "Switching Protocols", resp4)
    entries.append({
        "_initiator": {"type": "script", "stack": {"callFrames": [
            {"functionName": "", "scriptId": "12", "url": "http://[::1]:18181/chat.js",
             "lineNumber": 0, "columnNumber": 13}]}},
        "_priority": "Low",
        "_resourceType": "websocket",
        "_webSocketMessages": [
            {"type": "send", "time": 1709287202.501, "opcode": 1, "data": "{\"hello\":\"server\"}"},
            {"type": "receive", "time": 1709287202.503, "opcode": 1, "data": "{\"hello\":\"café\"}"},
            {"type": "receive", "time": 1709287202.51, "opcode": 2, "data": "AAECAwQ="},
        ],
        "cache": {},
        "connection": "40",
        "request": {
            "method": "GET", "url": url4, "httpVersion": "HTTP/1.1", "headers": req4,
            "queryString": [], "cookies": [], "headersSize": h4req, "bodySize": 0,
        },
        "response": {
            "status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1",
            "headers": resp4, "cookies": [],
            "content": {"size": 0, "mimeType": "x-unknown", "compression": 0},
            "redirectURL": "", "headersSize": h4resp, "bodySize": 0,
            "_transferSize": h4resp, "_error": None,
        },
        "serverIPAddress": "[::1]",
        "startedDateTime": "2024-03-01T10:00:02.500Z",
        "time": 1.22,
        "timings": {"blocked": 0.3, "dns": -1, "ssl": -1, "connect": 0.19, "send": 0.05,
                    "wait": 0.68, "receive": 0, "_blocked_queueing": 0.3},
    })

    # e5: POST JSON refused: status 0, _error, httpVersion "", provisional headers.
    body5 = '{"event":"view","page":"/page.html","label":"Übersicht"}'
    entries.append({
        "_initiator": {"type": "script"},
        "_priority": "High",
        "_resourceType": "fetch",
        "cache": {},
        "pageref": "page_2",
        "request": {
            "method": "POST", "url": "http://127.0.0.1:18180/api/track", "httpVersion": "",
            "headers": [H("Content-Type", "application/json"), H("Referer", url3),
                        H("User-Agent", UA_CHROME)],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": utf8len(body5),
            "postData": {"mimeType": "application/json", "text": body5},
        },
        "response": {
            "status": 0, "statusText": "", "httpVersion": "", "headers": [], "cookies": [],
            "content": {"size": 0, "mimeType": "x-unknown"},
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
            "_transferSize": 0, "_error": "net::ERR_CONNECTION_REFUSED",
        },
        "serverIPAddress": "",
        "startedDateTime": "2024-03-01T10:00:03.000Z",
        "time": 1.512,
        "timings": {"blocked": 1.512, "dns": -1, "ssl": -1, "connect": -1, "send": 0,
                    "wait": 0, "receive": 0, "_blocked_queueing": -1},
    })

    return {"log": {
        "version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "pages": [
            {"startedDateTime": "2024-03-01T10:00:00.000Z", "id": "page_1", "title": url0,
             "pageTimings": {"onContentLoad": 48.31, "onLoad": 60.02}},
            {"startedDateTime": "2024-03-01T10:00:01.250Z", "id": "page_2", "title": url3,
             "pageTimings": {"onContentLoad": 9.4, "onLoad": 11.87}},
        ],
        "entries": entries,
    }}


# ---------------------------------------------------------------- Firefox

def firefox():
    entries = []
    base = "http://127.0.0.1:18180"
    ff_req = [H("Host", "127.0.0.1:18180"), H("User-Agent", UA_FIREFOX)]
    timings = {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 3, "receive": 0}

    # e0: plain 200, exact headersSize; bodySize = transferredSize (head + body).
    html = "<!doctype html>\n<title>Firefox sample</title>\n<p>Grüße aus Köln.</p>\n"
    url0 = base + "/index.html"
    req0 = ff_req + [
        H("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"),
        H("Accept-Language", "en-US,en;q=0.5"), H("Accept-Encoding", "gzip, deflate"),
        H("Connection", "keep-alive"), H("Upgrade-Insecure-Requests", "1"),
    ]
    resp0 = [
        H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "text/html; charset=utf-8"),
        H("Content-Length", str(utf8len(html))), H("Last-Modified", "Thu, 29 Feb 2024 09:00:00 GMT"),
        H("Connection", "keep-alive"), H("ETag", '"65e04a10-48"'), H("Accept-Ranges", "bytes"),
    ]
    h0 = raw_response_head(200, "OK", resp0)
    entries.append({
        "startedDateTime": "2024-03-01T11:00:00.000+01:00",
        "request": {"bodySize": 0, "method": "GET", "url": url0, "httpVersion": "HTTP/1.1",
                    "headers": req0, "cookies": [], "queryString": [],
                    "headersSize": raw_request_head("GET", url0, req0)},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": resp0, "cookies": [],
                     "content": {"mimeType": "text/html; charset=utf-8", "size": utf8len(html),
                                 "text": html},
                     "redirectURL": "", "headersSize": h0, "bodySize": h0 + utf8len(html)},
        "cache": {},
        "timings": timings,
        "time": 3,
        "_securityState": "insecure",
        "serverIPAddress": "127.0.0.1",
        "connection": "18180",
        "pageref": "page_1",
    })

    # e1: POST JSON with non-ASCII: bodySize counts UTF-16 code units.
    note = '{"title":"Zoë\'s café","tags":["naïve","smörgåsbord"]}'
    url1 = base + "/api/notes"
    req1 = ff_req + [
        H("Accept", "*/*"), H("Accept-Language", "en-US,en;q=0.5"),
        H("Accept-Encoding", "gzip, deflate"), H("Content-Type", "application/json; charset=utf-8"),
        H("Content-Length", str(utf8len(note))), H("Origin", base), H("Connection", "keep-alive"),
        H("Referer", url0),
    ]
    created = '{"id":7,"title":"Zoë\'s café"}'
    resp1 = [
        H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/json"),
        H("Content-Length", str(utf8len(created))), H("Connection", "keep-alive"),
        H("Location", "/api/notes/7"),
    ]
    h1 = raw_response_head(201, "Created", resp1)
    entries.append({
        "startedDateTime": "2024-03-01T11:00:00.412+01:00",
        "request": {"bodySize": len(note.encode("utf-16-le")) // 2, "method": "POST", "url": url1,
                    "httpVersion": "HTTP/1.1", "headers": req1, "cookies": [], "queryString": [],
                    "headersSize": raw_request_head("POST", url1, req1),
                    "postData": {"mimeType": "application/json; charset=utf-8", "params": [],
                                 "text": note}},
        "response": {"status": 201, "statusText": "Created", "httpVersion": "HTTP/1.1",
                     "headers": resp1, "cookies": [],
                     "content": {"mimeType": "application/json", "size": utf8len(created),
                                 "text": created},
                     "redirectURL": "/api/notes/7", "headersSize": h1,
                     "bodySize": h1 + utf8len(created)},
        "cache": {},
        "timings": {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 5, "receive": 0},
        "time": 5,
        "_securityState": "insecure",
        "serverIPAddress": "127.0.0.1",
        "connection": "18180",
        "pageref": "page_1",
    })

    # e2: 304 without content.text; cache.afterRequest as Firefox writes it.
    url2 = base + "/style.css"
    req2 = ff_req + [
        H("Accept", "text/css,*/*;q=0.1"), H("Accept-Language", "en-US,en;q=0.5"),
        H("Accept-Encoding", "gzip, deflate"), H("Connection", "keep-alive"), H("Referer", url0),
        H("If-Modified-Since", "Thu, 29 Feb 2024 09:00:00 GMT"), H("If-None-Match", '"65e04a10-1f"'),
    ]
    resp2 = [
        H("Server", "nginx/1.22.1"), H("Date", DATE),
        H("Last-Modified", "Thu, 29 Feb 2024 09:00:00 GMT"), H("Connection", "keep-alive"),
        H("ETag", '"65e04a10-1f"'),
    ]
    h2 = raw_response_head(304, "Not Modified", resp2)
    entries.append({
        "startedDateTime": "2024-03-01T11:00:00.431+01:00",
        "request": {"bodySize": 0, "method": "GET", "url": url2, "httpVersion": "HTTP/1.1",
                    "headers": req2, "cookies": [], "queryString": [],
                    "headersSize": raw_request_head("GET", url2, req2)},
        "response": {"status": 304, "statusText": "Not Modified", "httpVersion": "HTTP/1.1",
                     "headers": resp2, "cookies": [],
                     "content": {"mimeType": "text/css", "size": 31},
                     "redirectURL": "", "headersSize": h2, "bodySize": h2},
        "cache": {"afterRequest": {"expires": "1709290800", "lastFetched": "1709283600",
                                   "fetchCount": "3", "_dataSize": "31",
                                   "_lastModified": "1709283600", "_device": "disk"}},
        "timings": {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 2, "receive": 0},
        "time": 2,
        "_securityState": "insecure",
        "serverIPAddress": "127.0.0.1",
        "connection": "18180",
        "pageref": "page_1",
    })

    # e3: cache hit with a non-empty cache.beforeRequest (not something Firefox writes).
    js = "console.log('from cache');\n"
    entries.append({
        "startedDateTime": "2024-03-01T11:00:00.433+01:00",
        "request": {"bodySize": 0, "method": "GET", "url": base + "/app.js", "httpVersion": "HTTP/1.1",
                    "headers": ff_req + [H("Accept", "*/*"), H("Referer", url0)],
                    "cookies": [], "queryString": [], "headersSize": -1},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": [H("Content-Type", "text/javascript"),
                                 H("Content-Length", str(utf8len(js)))],
                     "cookies": [],
                     "content": {"mimeType": "text/javascript", "size": utf8len(js), "text": js},
                     "redirectURL": "", "headersSize": -1, "bodySize": 0},
        "cache": {"beforeRequest": {"expires": "2024-03-01T11:00:00.000Z",
                                    "lastAccess": "2024-03-01T10:59:00.000Z",
                                    "eTag": '"65e04a10-1c"', "hitCount": 2}},
        "timings": {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 0, "receive": 0},
        "time": 0,
        "_securityState": "insecure",
        "pageref": "page_1",
    })

    return {"log": {
        "version": "1.2",
        "creator": {"name": "Firefox", "version": "124.0"},
        "browser": {"name": "Firefox", "version": "124.0"},
        "pages": [{"id": "page_1", "pageTimings": {"onContentLoad": 31, "onLoad": 44},
                   "startedDateTime": "2024-03-01T11:00:00.000+01:00", "title": url0}],
        "entries": entries,
    }}


# ---------------------------------------------------------------- Safari

def safari():
    entries = []
    timings0 = {"blocked": 0.4, "dns": 0.02, "connect": 3.1, "ssl": 2.6, "send": 0.1,
                "wait": 9.8, "receive": 0.7}

    # e0: HTTP/2 over [::1], sizes -1 (no metrics), serverIPAddress without brackets.
    doc = "<!DOCTYPE html><title>WebKit sample</title><p>hello</p>\n"
    url0 = "https://[::1]:18443/"
    entries.append({
        "pageref": "page_0",
        "startedDateTime": "2024-03-01T14:00:00.000Z",
        "time": 14.1,
        "request": {"method": "GET", "url": url0, "httpVersion": "HTTP/2", "cookies": [],
                    "headers": [H("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
                                H("Accept-Encoding", "gzip, deflate, br"),
                                H("Accept-Language", "en-GB,en;q=0.9"),
                                H("User-Agent", UA_SAFARI)],
                    "queryString": [], "headersSize": -1, "bodySize": -1},
        "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2", "cookies": [],
                     "headers": [H("Content-Type", "text/html; charset=utf-8"),
                                 H("Content-Length", str(utf8len(doc))), H("Date", DATE)],
                     "content": {"size": utf8len(doc), "compression": 0, "mimeType": "text/html",
                                 "text": doc},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {},
        "timings": timings0,
        "serverIPAddress": "::1",
        "_serverPort": 18443,
        "connection": "1",
        "_fetchType": "Network Load",
        "_priority": "high",
    })

    # e1: HTTP/1.1 with exact headersSize and _transferSize.
    data = '{"items":[1,2,3],"unit":"µs"}'
    url1 = "http://127.0.0.1:18180/data.json?v=2"
    req1 = [H("Host", "127.0.0.1:18180"), H("Accept", "*/*"), H("Accept-Language", "en-GB,en;q=0.9"),
            H("Connection", "keep-alive"), H("Accept-Encoding", "gzip, deflate"),
            H("User-Agent", UA_SAFARI), H("Referer", url0)]
    resp1 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/json"),
             H("Content-Length", str(utf8len(data))), H("Connection", "keep-alive")]
    hq = raw_request_head("GET", url1, req1)
    hr = raw_response_head(200, "OK", resp1)
    entries.append({
        "pageref": "page_0",
        "startedDateTime": "2024-03-01T14:00:00.120Z",
        "time": 2.4,
        "request": {"method": "GET", "url": url1, "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": req1, "queryString": [H("v", "2")], "headersSize": hq, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": resp1,
                     "content": {"size": utf8len(data), "compression": 0, "mimeType": "application/json",
                                 "text": data},
                     "redirectURL": "", "headersSize": hr, "bodySize": utf8len(data),
                     "_transferSize": hr + utf8len(data)},
        "cache": {},
        "timings": {"blocked": 0.2, "dns": -1, "connect": 0.3, "ssl": -1, "send": 0.1,
                    "wait": 1.5, "receive": 0.3},
        "serverIPAddress": "127.0.0.1",
        "_serverPort": 18180,
        "connection": "2",
        "_fetchType": "Network Load",
        "_priority": "medium",
    })

    # e2: memory cache: sizes -1, no serverIPAddress / connection.
    entries.append({
        "pageref": "page_0",
        "startedDateTime": "2024-03-01T14:00:00.310Z",
        "time": 0,
        "request": {"method": "GET", "url": "http://127.0.0.1:18180/data.json?v=2", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": [], "queryString": [H("v", "2")],
                    "headersSize": -1, "bodySize": -1},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": [H("Content-Type", "application/json"),
                                 H("Content-Length", str(utf8len(data)))],
                     "content": {"size": utf8len(data), "compression": 0, "mimeType": "application/json",
                                 "text": data},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 0, "receive": 0},
        "_fetchType": "Memory Cache",
        "_priority": "medium",
    })

    return {"log": {
        "version": "1.2",
        "creator": {"name": "WebKit Web Inspector", "version": "19618.1.15.11.14"},
        "pages": [{"startedDateTime": "2024-03-01T14:00:00.000Z", "id": "page_0", "title": url0,
                   "pageTimings": {"onContentLoad": 18.5, "onLoad": 20.25}}],
        "entries": entries,
    }}


# ---------------------------------------------------------------- Charles Proxy

def charles():
    entries = []
    t = {"dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 4, "receive": 1}

    # e0: POST with Content-Encoding: gzip, base64 postData, exact sizes.
    items = json.dumps({"items": [{"sku": "A-%03d" % i, "qty": i % 3 + 1} for i in range(12)]},
                       separators=(",", ":")).encode("utf-8")
    items_gz = gz(items)
    url0 = "https://127.0.0.1:18443/v1/cart"
    req0 = [H("Host", "127.0.0.1:18443"), H("Content-Type", "application/json"),
            H("Content-Encoding", "gzip"), H("Content-Length", str(len(items_gz))),
            H("Accept", "application/json"), H("User-Agent", "MeterApp/1.4 CFNetwork/1410.0.3 Darwin/22.6.0"),
            H("Accept-Language", "en-GB,en;q=0.9"), H("Accept-Encoding", "gzip, deflate, br")]
    ok = '{"cart":"c-81","count":12}'
    resp0 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/json"),
             H("Content-Length", str(utf8len(ok))), H("Connection", "keep-alive")]
    entries.append({
        "startedDateTime": "2024-03-01T12:00:00.000+01:00",
        "time": 9,
        "request": {"method": "POST", "url": url0, "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": req0, "queryString": [],
                    "postData": {"mimeType": "application/json", "text": b64(items_gz), "encoding": "base64"},
                    "headersSize": raw_request_head("POST", url0, req0), "bodySize": len(items_gz)},
        "response": {"_charlesStatus": "COMPLETE", "status": 201, "statusText": "Created",
                     "httpVersion": "HTTP/1.1", "cookies": [], "headers": resp0,
                     "content": {"size": utf8len(ok), "mimeType": "application/json", "text": ok},
                     "redirectURL": None, "headersSize": raw_response_head(201, "Created", resp0),
                     "bodySize": utf8len(ok)},
        "serverIPAddress": "127.0.0.1",
        "cache": {},
        "timings": {"dns": 0, "connect": 1, "ssl": 3, "send": 0, "wait": 4, "receive": 1},
    })

    # e1: gzip response: decoded text, bodySize = gzip length, exact head.
    feed = json.dumps({"entries": [{"id": i, "title": "Entry number %d" % i, "read": False}
                                   for i in range(14)]}, separators=(",", ":")).encode("utf-8")
    feed_gz = gz(feed)
    url1 = "http://127.0.0.1:18180/feed.json"
    req1 = [H("Host", "127.0.0.1:18180"), H("Accept", "application/json"),
            H("Accept-Encoding", "gzip, deflate"), H("User-Agent", "curl/7.88.1")]
    resp1 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/json"),
             H("Content-Length", str(len(feed_gz))), H("Connection", "keep-alive"),
             H("Content-Encoding", "gzip"), H("Vary", "Accept-Encoding")]
    entries.append({
        "startedDateTime": "2024-03-01T12:00:01.000+01:00",
        "time": 3,
        "request": {"method": "GET", "url": url1, "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": req1, "queryString": [],
                    "headersSize": raw_request_head("GET", url1, req1), "bodySize": 0},
        "response": {"_charlesStatus": "COMPLETE", "status": 200, "statusText": "OK",
                     "httpVersion": "HTTP/1.1", "cookies": [], "headers": resp1,
                     "content": {"size": len(feed), "mimeType": "application/json",
                                 "text": feed.decode("utf-8")},
                     "redirectURL": None, "headersSize": raw_response_head(200, "OK", resp1),
                     "bodySize": len(feed_gz)},
        "serverIPAddress": "127.0.0.1",
        "cache": {},
        "timings": t,
    })

    # e2: HEAD: Content-Length announced, no body, no content.text.
    url2 = "http://127.0.0.1:18180/big.bin"
    req2 = [H("Host", "127.0.0.1:18180"), H("User-Agent", "curl/7.88.1"), H("Accept", "*/*")]
    resp2 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/octet-stream"),
             H("Content-Length", "1048576"), H("Last-Modified", "Thu, 29 Feb 2024 09:00:00 GMT"),
             H("Connection", "keep-alive"), H("ETag", '"65e04a10-100000"'), H("Accept-Ranges", "bytes")]
    entries.append({
        "startedDateTime": "2024-03-01T12:00:02.000+01:00",
        "time": 1,
        "request": {"method": "HEAD", "url": url2, "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": req2, "queryString": [],
                    "headersSize": raw_request_head("HEAD", url2, req2), "bodySize": 0},
        "response": {"_charlesStatus": "COMPLETE", "status": 200, "statusText": "OK",
                     "httpVersion": "HTTP/1.1", "cookies": [], "headers": resp2,
                     "content": {"size": 0, "mimeType": "application/octet-stream"},
                     "redirectURL": None, "headersSize": raw_response_head(200, "OK", resp2),
                     "bodySize": 0},
        "serverIPAddress": "127.0.0.1",
        "cache": {},
        "timings": {"dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 1, "receive": 0},
    })

    # e3: failed lookup: serverIPAddress null, request headersSize null, status 0.
    entries.append({
        "startedDateTime": "2024-03-01T12:00:03.000+01:00",
        "time": 12,
        "request": {"method": "GET", "url": "http://no-such-host.example.com:18180/ping",
                    "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": [H("Host", "no-such-host.example.com:18180"), H("User-Agent", "curl/7.88.1"),
                                H("Accept", "*/*")],
                    "queryString": [], "headersSize": None, "bodySize": 0},
        "response": {"_charlesStatus": "FAILED", "status": 0, "statusText": "", "httpVersion": "HTTP/1.1",
                     "cookies": [], "headers": [], "content": {"size": 0, "mimeType": None},
                     "redirectURL": None, "headersSize": None, "bodySize": None},
        "serverIPAddress": None,
        "cache": {},
        "timings": {"dns": 12, "connect": -1, "ssl": -1, "send": -1, "wait": -1, "receive": -1},
    })

    # e4: CONNECT tunnel (authority-form request-target), exact sizes.
    req4 = [H("Host", "127.0.0.1:18443"), H("User-Agent", "curl/7.88.1"),
            H("Proxy-Connection", "Keep-Alive")]
    entries.append({
        "startedDateTime": "2024-03-01T12:00:04.000+01:00",
        "time": 2,
        "request": {"method": "CONNECT", "url": "https://127.0.0.1:18443", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": req4, "queryString": [],
                    "headersSize": raw_request_head("CONNECT", "", req4, target="127.0.0.1:18443"),
                    "bodySize": 0},
        "response": {"_charlesStatus": "COMPLETE", "status": 200, "statusText": "Connection established",
                     "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                     "content": {"size": 0, "mimeType": None},
                     "redirectURL": None,
                     "headersSize": raw_response_head(200, "Connection established", []),
                     "bodySize": 0},
        "serverIPAddress": "127.0.0.1",
        "cache": {},
        "timings": {"connect": 1, "ssl": -1, "send": 0, "wait": 1, "receive": 0},
    })

    return {"log": {"version": "1.2", "creator": {"name": "Charles Proxy", "version": "4.6.6"},
                    "entries": entries}}


# ---------------------------------------------------------------- Fiddler

def fiddler():
    entries = []
    base = "http://127.0.0.1:18180"

    # e0: form POST -> params only (decoded), 302 with Set-Cookie twice, empty body as base64 "".
    form = "user=Zo%C3%AB+Martin&city=K%C3%B6ln&remember=on"
    url0 = base + "/login"
    req0 = [H("Host", "127.0.0.1:18180"), H("Connection", "keep-alive"),
            H("Content-Length", str(len(form))), H("Content-Type", "application/x-www-form-urlencoded"),
            H("User-Agent", UA_FIDDLER), H("Accept", "text/html,*/*;q=0.8"), H("Origin", base)]
    resp0 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Length", "0"),
             H("Connection", "keep-alive"), H("Location", "/home"),
             H("Set-Cookie", "sid=4f9c2a7e; Path=/; HttpOnly"),
             H("Set-Cookie", "theme=dark; Path=/; Max-Age=3600")]
    entries.append({
        "startedDateTime": "2024-03-01T13:00:00.1234567+01:00",
        "request": {"method": "POST", "url": url0, "httpVersion": "HTTP/1.1",
                    "headersSize": raw_request_head("POST", url0, req0), "bodySize": len(form),
                    "headers": req0, "cookies": [], "queryString": [],
                    "postData": {"mimeType": "application/x-www-form-urlencoded",
                                 "params": [H("user", "Zoë Martin"), H("city", "Köln"), H("remember", "on")]}},
        "response": {"status": 302, "statusText": "Found", "httpVersion": "HTTP/1.1",
                     "headersSize": raw_response_head(302, "Found", resp0), "redirectURL": "/home",
                     "bodySize": 0, "headers": resp0,
                     "cookies": [{"name": "sid", "value": "4f9c2a7e", "httpOnly": "true", "path": "/"},
                                 {"name": "theme", "value": "dark", "path": "/"}],
                     "content": {"size": 0, "compression": 0, "mimeType": "", "encoding": "base64", "text": ""}},
        "cache": {},
        "time": 4,
        "timings": {"blocked": -1, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 4, "receive": 0},
        "connection": "52814",
    })

    # e1: GET with Cookie, text body; session comment -> serverIPAddress present.
    home = "<html><body><p>Welcome back, Zoë.</p></body></html>\n"
    url1 = base + "/home"
    req1 = [H("Host", "127.0.0.1:18180"), H("Connection", "keep-alive"), H("User-Agent", UA_FIDDLER),
            H("Accept", "text/html,*/*;q=0.8"), H("Referer", url0),
            H("Cookie", "sid=4f9c2a7e; theme=dark")]
    resp1 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "text/html; charset=utf-8"),
             H("Content-Length", str(utf8len(home))), H("Connection", "keep-alive")]
    entries.append({
        "startedDateTime": "2024-03-01T13:00:00.1304512+01:00",
        "request": {"method": "GET", "url": url1, "httpVersion": "HTTP/1.1",
                    "headersSize": raw_request_head("GET", url1, req1), "bodySize": 0,
                    "headers": req1,
                    "cookies": [{"name": "sid", "value": "4f9c2a7e"}, {"name": "theme", "value": "dark"}],
                    "queryString": []},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headersSize": raw_response_head(200, "OK", resp1), "redirectURL": "",
                     "bodySize": utf8len(home), "headers": resp1, "cookies": [],
                     "content": {"size": utf8len(home), "compression": 0,
                                 "mimeType": "text/html; charset=utf-8", "text": home}},
        "cache": {},
        "time": 2,
        "timings": {"blocked": -1, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 2, "receive": 0},
        "comment": "logged in",
        "serverIPAddress": "127.0.0.1",
        "connection": "52814",
    })

    # e2: binary body, base64.
    avatar = png((0xe9, 0x4e, 0x1b))
    url2 = base + "/avatar.png?size=1"
    req2 = [H("Host", "127.0.0.1:18180"), H("Connection", "keep-alive"), H("User-Agent", UA_FIDDLER),
            H("Accept", "image/avif,image/webp,*/*"), H("Referer", url1),
            H("Cookie", "sid=4f9c2a7e; theme=dark")]
    resp2 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "image/png"),
             H("Content-Length", str(len(avatar))), H("Connection", "keep-alive"),
             H("Cache-Control", "private, max-age=60")]
    entries.append({
        "startedDateTime": "2024-03-01T13:00:00.1409871+01:00",
        "request": {"method": "GET", "url": url2, "httpVersion": "HTTP/1.1",
                    "headersSize": raw_request_head("GET", url2, req2), "bodySize": 0,
                    "headers": req2,
                    "cookies": [{"name": "sid", "value": "4f9c2a7e"}, {"name": "theme", "value": "dark"}],
                    "queryString": [H("size", "1")]},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headersSize": raw_response_head(200, "OK", resp2), "redirectURL": "",
                     "bodySize": len(avatar), "headers": resp2, "cookies": [],
                     "content": {"size": len(avatar), "compression": 0, "mimeType": "image/png",
                                 "encoding": "base64", "text": b64(avatar)}},
        "cache": {},
        "time": 1,
        "timings": {"blocked": -1, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 1, "receive": 0},
        "connection": "52815",
    })

    return {"log": {
        "version": "1.2",
        "pages": [],
        "comment": "exported @ 01/03/2024 13:00:05",
        "creator": {"name": "Fiddler", "version": "5.0.20204.45441", "comment": "http://www.fiddler2.com"},
        "entries": entries,
    }}


# ---------------------------------------------------------------- Proxyman

def proxyman():
    entries = []

    # e0: HTTP/2 ("h2"), headersSize -1, body length known; no cookies arrays.
    prof = '{"id":42,"name":"Zoë","plan":"pro"}'
    entries.append({
        "startedDateTime": "2024-03-01T15:30:00+01:00",
        "time": 18,
        "request": {"method": "GET", "url": "https://127.0.0.1:18443/api/profile", "httpVersion": "h2",
                    "headers": [H(":method", "GET"), H(":scheme", "https"), H(":path", "/api/profile"),
                                H(":authority", "127.0.0.1:18443"), H("accept", "application/json"),
                                H("user-agent", "MeterApp/1.4 CFNetwork/1410.0.3 Darwin/22.6.0"),
                                H("accept-language", "en-GB,en;q=0.9"),
                                H("accept-encoding", "gzip, deflate, br")],
                    "queryString": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "h2",
                     "headers": [H(":status", "200"), H("content-type", "application/json"),
                                 H("content-length", str(utf8len(prof))), H("date", DATE)],
                     "content": {"size": utf8len(prof), "mimeType": "application/json", "text": prof},
                     "redirectURL": "", "headersSize": -1, "bodySize": utf8len(prof)},
        "serverIPAddress": "127.0.0.1",
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 17, "receive": 1},
    })

    # e1: PUT binary body as base64 postData, 204 without content.text, exact sizes.
    img = png((0x10, 0x20, 0x30))
    url1 = "http://127.0.0.1:18180/api/avatar"
    req1 = [H("Host", "127.0.0.1:18180"), H("Content-Type", "image/png"),
            H("Content-Length", str(len(img))), H("Accept", "*/*"),
            H("User-Agent", "MeterApp/1.4 CFNetwork/1410.0.3 Darwin/22.6.0"),
            H("Accept-Encoding", "gzip, deflate"), H("Connection", "keep-alive")]
    resp1 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Connection", "keep-alive")]
    entries.append({
        "startedDateTime": "2024-03-01T15:30:01+01:00",
        "time": 4,
        "request": {"method": "PUT", "url": url1, "httpVersion": "HTTP/1.1", "headers": req1,
                    "queryString": [],
                    "postData": {"mimeType": "image/png", "text": b64(img), "encoding": "base64"},
                    "headersSize": raw_request_head("PUT", url1, req1), "bodySize": len(img)},
        "response": {"status": 204, "statusText": "No Content", "httpVersion": "HTTP/1.1",
                     "headers": resp1, "content": {"size": 0, "mimeType": ""},
                     "redirectURL": "", "headersSize": raw_response_head(204, "No Content", resp1),
                     "bodySize": 0},
        "serverIPAddress": "127.0.0.1",
        "connection": "61022",
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": 0, "ssl": -1, "send": 1, "wait": 3, "receive": 0},
    })

    # e2: GET with an encoded query, exact sizes.
    items = '{"page":2,"items":["café","crème"]}'
    url2 = "http://127.0.0.1:18180/api/items?page=2&q=caf%C3%A9"
    req2 = [H("Host", "127.0.0.1:18180"), H("Accept", "application/json"),
            H("User-Agent", "MeterApp/1.4 CFNetwork/1410.0.3 Darwin/22.6.0"),
            H("Accept-Encoding", "gzip, deflate"), H("Connection", "keep-alive")]
    resp2 = [H("Server", "nginx/1.22.1"), H("Date", DATE), H("Content-Type", "application/json; charset=utf-8"),
             H("Content-Length", str(utf8len(items))), H("Connection", "keep-alive")]
    entries.append({
        "startedDateTime": "2024-03-01T15:30:02+01:00",
        "time": 3,
        "request": {"method": "GET", "url": url2, "httpVersion": "HTTP/1.1", "headers": req2,
                    "queryString": [H("page", "2"), H("q", "café")],
                    "headersSize": raw_request_head("GET", url2, req2), "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": resp2,
                     "content": {"size": utf8len(items), "mimeType": "application/json", "text": items},
                     "redirectURL": "", "headersSize": raw_response_head(200, "OK", resp2),
                     "bodySize": utf8len(items)},
        "serverIPAddress": "127.0.0.1",
        "connection": "61022",
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 3, "receive": 0},
    })

    # e3: request still in flight at export: no "response" key at all.
    url3 = "http://127.0.0.1:18180/api/stream"
    req3 = [H("Host", "127.0.0.1:18180"), H("Accept", "text/event-stream"),
            H("User-Agent", "MeterApp/1.4 CFNetwork/1410.0.3 Darwin/22.6.0"),
            H("Connection", "keep-alive")]
    entries.append({
        "startedDateTime": "2024-03-01T15:30:03+01:00",
        "time": 0,
        "request": {"method": "GET", "url": url3, "httpVersion": "HTTP/1.1", "headers": req3,
                    "queryString": [], "headersSize": raw_request_head("GET", url3, req3), "bodySize": 0},
        "serverIPAddress": "127.0.0.1",
        "connection": "61023",
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": 0, "ssl": -1, "send": 0, "wait": -1, "receive": -1},
    })

    return {"log": {"version": "1.2", "creator": {"name": "Proxyman", "version": "5.1.1"},
                    "entries": entries}}


# ---------------------------------------------------------------- Insomnia

def insomnia():
    exported = "2024-03-01T16:00:00.000Z"   # every entry: the export time
    timings = lambda ms: {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": ms,
                          "receive": 0, "ssl": -1}
    entries = []

    body0 = '{"name": "Zoë", "plan": "pro"}'
    echo = '{"json": {"name": "Zoë", "plan": "pro"}, "method": "PUT"}'
    entries.append({
        "startedDateTime": exported, "time": 212,
        "request": {"method": "PUT", "url": "http://127.0.0.1:18180/anything", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": [H("Content-Type", "application/json"),
                                               H("User-Agent", "insomnia/2023.5.8")],
                    "queryString": [],
                    "postData": {"mimeType": "application/json", "text": body0, "params": []},
                    "headersSize": -1, "bodySize": -1, "settingEncodeUrl": True},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": [H("Server", "nginx/1.22.1"), H("Date", DATE),
                                 H("Content-Type", "application/json"),
                                 H("Content-Length", str(utf8len(echo)))],
                     "content": {"size": utf8len(echo), "mimeType": "application/json", "text": echo},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": timings(212), "comment": "Update profile",
    })

    entries.append({
        "startedDateTime": exported, "time": 35,
        "request": {"method": "POST", "url": "http://127.0.0.1:18180/upload", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": [H("Content-Type", "multipart/form-data"),
                                               H("User-Agent", "insomnia/2023.5.8")],
                    "queryString": [],
                    "postData": {"mimeType": "multipart/form-data", "text": "",
                                 "params": [{"name": "title", "value": "Rapport été"},
                                            {"name": "file", "fileName": "/home/zoe/report.pdf"}]},
                    "headersSize": -1, "bodySize": -1, "settingEncodeUrl": True},
        "response": {"status": 201, "statusText": "Created", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": [H("Content-Type", "application/json"), H("Content-Length", "9")],
                     "content": {"size": 9, "mimeType": "application/json", "text": '{"id":12}'},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": timings(35), "comment": "Upload report",
    })

    entries.append({
        "startedDateTime": exported, "time": 0,
        "request": {"method": "GET", "url": "http://127.0.0.1:18180/never-sent", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": [H("User-Agent", "insomnia/2023.5.8")],
                    "queryString": [],
                    "postData": {"mimeType": "", "text": "", "params": []},
                    "headersSize": -1, "bodySize": -1, "settingEncodeUrl": True},
        "response": {"status": 0, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                     "content": {"size": 0, "mimeType": ""},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": timings(0), "comment": "Draft request (never sent)",
    })

    return {"log": {"version": "1.2",
                    "creator": {"name": "Insomnia REST Client", "version": "insomnia.desktop.app:v2023.5.8"},
                    "entries": entries}}


# ---------------------------------------------------------------- Polly.JS

def pollyjs():
    entries = []

    def req(method, url, headers, query=(), body_text=None, mime=None):
        r = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": headers,
             "headersSize": polly_req_headers_size(method, url, headers),
             "queryString": [H(k, v) for k, v in query], "cookies": []}
        if mime is not None:
            r["postData"] = {"mimeType": mime, "params": []}
            if body_text is not None:
                r["postData"]["text"] = body_text
        cl = [h["value"] for h in headers if h["name"].lower() == "content-length"]
        r["bodySize"] = int(cl[0]) if cl else (utf8len(body_text) if body_text else 0)
        return r

    def resp(status, text, headers, body=None, cookies=()):
        r = {"httpVersion": "HTTP/1.1", "status": status, "statusText": text, "headers": headers,
             "headersSize": polly_resp_headers_size(headers), "cookies": list(cookies),
             "redirectURL": ""}
        ct = [h["value"] for h in headers if h["name"] == "content-type"]
        r["content"] = {"mimeType": ct[0] if ct else "text/plain"}
        if body:
            r["content"]["text"] = body
        cl = [h["value"] for h in headers if h["name"] == "content-length"]
        r["content"]["size"] = int(cl[0]) if cl else (utf8len(body) if body else 0)
        r["bodySize"] = r["content"]["size"]
        return r

    def timings(ms):
        return {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": ms, "receive": 0, "ssl": -1}

    listing = '{"page":1,"items":[{"id":7,"name":"Crème brûlée"}]}'
    url0 = "http://127.0.0.1:18180/api/list?page=1"
    entries.append({
        "_id": "9a1c3e5f7b2d4c6e8f0a1b3c5d7e9f10", "_order": 0,
        "startedDateTime": "2024-03-01T16:30:00.000Z", "time": 12,
        "request": req("GET", url0, [H("accept", "application/json"), H("user-agent", "node-fetch")],
                       query=[("page", "1")]),
        "response": resp(200, "OK", [
            H("content-type", "application/json; charset=utf-8"),
            H("content-length", str(utf8len(listing))), H("date", DATE),
            {"name": "set-cookie", "value": "sid=7e1f; Path=/; HttpOnly", "_fromType": "array"},
            {"name": "set-cookie", "value": "lang=fr; Path=/", "_fromType": "array"},
        ], listing, cookies=[{"name": "sid", "value": "7e1f", "path": "/", "httpOnly": True},
                             {"name": "lang", "value": "fr", "path": "/"}]),
        "cache": {}, "timings": timings(12),
    })

    boundary = "----pollyBoundary7MA4YWxkTrZu0gW"
    created = '{"id":31}'
    entries.append({
        "_id": "0b2d4f6a8c1e3a5c7e9b0d2f4a6c8e1b", "_order": 0,
        "startedDateTime": "2024-03-01T16:30:00.250Z", "time": 40,
        "request": req("POST", "http://127.0.0.1:18180/api/upload",
                       [H("content-type", "multipart/form-data; boundary=" + boundary),
                        H("content-length", "231"), H("user-agent", "node-fetch")],
                       mime="multipart/form-data; boundary=" + boundary),
        "response": resp(201, "Created", [H("content-type", "application/json"),
                                          H("content-length", str(utf8len(created)))], created),
        "cache": {}, "timings": timings(40),
    })

    entries.append({
        "_id": "5e7a9c1b3d5f7a9c2e4b6d8f0a2c4e6b", "_order": 0,
        "startedDateTime": "2024-03-01T16:30:00.500Z", "time": 6,
        "request": req("DELETE", "http://127.0.0.1:18180/api/list/7", [H("user-agent", "node-fetch")]),
        "response": resp(204, "No Content", [H("date", DATE)]),
        "cache": {}, "timings": timings(6),
    })

    return sort_keys_deep({"log": {
        "_recordingName": "api/list",
        "creator": {"comment": "persister:fs", "name": "Polly.JS", "version": "6.0.6"},
        "entries": entries,
        "pages": [],
        "version": "1.2",
    }})


# ---------------------------------------------------------------- pcap2har

def pcap2har():
    ua = "curl/7.88.1"
    entries = []

    def hdrs(pairs):                      # dpkt: lower-case names, pcap2har sorts them
        return [H(k, v) for k, v in sorted(pairs)]

    entries.append({
        "pageref": "page_0", "startedDateTime": "2024-03-01T17:00:00.123456Z", "time": 2,
        "request": {"method": "GET", "url": "http://127.0.0.1:18180/pixel.gif", "httpVersion": "HTTP/1.1",
                    "cookies": [], "queryString": [],
                    "headers": hdrs([("host", "127.0.0.1:18180"), ("user-agent", ua), ("accept", "*/*")]),
                    "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "1.1", "cookies": [],
                     "headersSize": -1, "bodySize": len(GIF_1x1), "redirectURL": "",
                     "headers": hdrs([("server", "nginx/1.22.1"), ("date", DATE),
                                      ("content-type", "image/gif"),
                                      ("content-length", str(len(GIF_1x1)))]),
                     "content": {"size": len(GIF_1x1), "compression": 0, "mimeType": "image/gif",
                                 "text": b64(GIF_1x1), "encoding": "base64"}},
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": 0, "send": 0, "wait": 2, "receive": 0},
        "connection": 1,
    })

    form = "q=meter&n=10"
    entries.append({
        "pageref": "page_0", "startedDateTime": "2024-03-01T17:00:01Z", "time": 3,
        "request": {"method": "POST", "url": "http://127.0.0.1:18180/search", "httpVersion": "HTTP/1.1",
                    "cookies": [], "queryString": [],
                    "headers": hdrs([("host", "127.0.0.1:18180"), ("user-agent", ua), ("accept", "*/*"),
                                     ("content-length", str(len(form))),
                                     ("content-type", "application/x-www-form-urlencoded")]),
                    "headersSize": -1, "bodySize": len(form)},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "1.1", "cookies": [],
                     "headersSize": -1, "bodySize": 2, "redirectURL": "",
                     "headers": hdrs([("server", "nginx/1.22.1"), ("date", DATE),
                                      ("content-type", "application/json"), ("content-length", "2")]),
                     "content": {"size": 2, "compression": 0, "mimeType": "application/json", "text": "[]"}},
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": 0, "send": 0, "wait": 3, "receive": 0},
        "connection": 1,
    })

    entries.append({
        "pageref": "page_0", "startedDateTime": "2024-03-01T17:00:02.500000Z", "time": -1,
        "request": {"method": "GET", "url": "http://127.0.0.1:18180/never-answered", "httpVersion": "HTTP/1.1",
                    "cookies": [], "queryString": [],
                    "headers": hdrs([("host", "127.0.0.1:18180"), ("user-agent", ua), ("accept", "*/*")]),
                    "headersSize": -1, "bodySize": 0},
        "response": None,
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": 0, "send": 0, "wait": -1, "receive": -1},
        "connection": 2,
    })

    return {"log": {
        "version": "1.1",
        "creator": {"version": "0.1", "name": "pcap2har"},
        "browser": {"version": "mumble", "name": ua},
        "pages": [{"startedDateTime": "2024-03-01T17:00:00.123456Z", "id": "page_0",
                   "title": "http://127.0.0.1:18180/pixel.gif",
                   "pageTimings": {"onContentLoad": -1, "onLoad": -1}}],
        "entries": entries,
    }}


# ---------------------------------------------------------------- main

SAMPLES = [
    ("chrome-devtools.har", chrome, False),
    ("firefox.har", firefox, False),
    ("safari.har", safari, False),
    ("charles.har", charles, False),
    ("fiddler.har", fiddler, True),      # .NET StreamWriter(UTF8): byte-order mark
    ("proxyman.har", proxyman, False),
    ("insomnia.har", insomnia, False),
    ("pollyjs.har", pollyjs, False),
    ("pcap2har.har", pcap2har, False),
]


def render(har, bom):
    text = json.dumps(har, indent=2, ensure_ascii=False) + "\n"
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if bom else data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "Samples"), help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, build, bom in SAMPLES:
        data = render(build(), bom)
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            f.write(data)
        print("%-22s %6d bytes, %d entries" % (name, len(data), len(json.loads(data.decode("utf-8-sig"))["log"]["entries"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
