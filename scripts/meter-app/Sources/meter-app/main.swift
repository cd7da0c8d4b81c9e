// meter-app: makes a fixed, bounded set of tagged requests to loopback servers through a
// URLSession whose first protocol class is seed 001's meter (MeterProtocol), and writes
//   --meter-log FILE     the seed meter's log (meter "seed001")
//   --bodyonly-log FILE  the body-only meter's log (meter "bodyonly")
//   --tags FILE          the ground truth: one line per tag, what the request is and whether it
//                        should be on the wire (in the capture) and in the meter logs
// Usage: meter-app --ngx4 http://127.0.0.1:P --ngx6 http://[::1]:P --py http://127.0.0.1:P
//          --ngx6-literal http://[::1]:P --uncaptured http://127.0.0.1:P [--tls https://127.0.0.1:P] [--h2 https://127.0.0.1:P]
//          --meter-log F --bodyonly-log F --tags F --cache-dir D [--deadline SECONDS]
// Requests are made one at a time; each is bounded by a 15 s timeout, the run by --deadline.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

setvbuf(stdout, nil, _IOLBF, 0)
var opts: [String: String] = [:]
var argv = CommandLine.arguments.dropFirst()
while let a = argv.popFirst() {
    guard a.hasPrefix("--"), let v = argv.popFirst() else { FileHandle.standardError.write("meter-app: bad argument \(a)\n".data(using: .utf8)!); exit(2) }
    opts[String(a.dropFirst(2))] = v
}
func opt(_ k: String) -> String {
    guard let v = opts[k] else { FileHandle.standardError.write("meter-app: --\(k) is required\n".data(using: .utf8)!); exit(2) }
    return v
}
func fail(_ s: String) -> Never { FileHandle.standardError.write("meter-app: \(s)\n".data(using: .utf8)!); exit(1) }

let deadline = Double(opts["deadline"] ?? "90") ?? 90
DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { fail("deadline of \(deadline) s reached") }

// The app's state: its own cookie store (emptied first) and URL cache.
let cookies = HTTPCookieStorage.shared
for c in cookies.cookies ?? [] { cookies.deleteCookie(c) }
let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: opt("cache-dir"))
cache.removeAllCachedResponses()

MeterProtocol.seedLog = try MeterLog(meter: SeedMeter.name, path: opt("meter-log"))
MeterProtocol.bodyLog = try MeterLog(meter: BodyOnlyMeter.name, path: opt("bodyonly-log"))
MeterProtocol.appCache = cache
MeterProtocol.cookies = cookies

let config = URLSessionConfiguration.default
config.protocolClasses = [MeterProtocol.self] + (config.protocolClasses ?? [])
config.httpCookieStorage = cookies
config.urlCache = nil  // the meter answers from the app's cache itself (MeterProtocol)
config.timeoutIntervalForRequest = 15
config.timeoutIntervalForResource = 15
let session = URLSession(configuration: config)

/// One tagged request of the plan, and what the ground truth says about it.
struct Step {
    var tag: String
    var method = "GET"
    var base: String
    var path: String
    var extraQuery = ""
    var headers: [String: String] = [:]
    var body: Data? = nil
    var cachePolicy: URLRequest.CachePolicy = .reloadIgnoringLocalCacheData
    var expectStatus: Int
    var onWire = true          // in the capture (false: served from cache, or a port not captured)
    var captured = true        // the port is in the capture filter
    var fromCacheOf: String? = nil  // the URL is that tag's: the answer comes from the app's cache
    var conditionalOn: String? = nil  // If-None-Match / If-Modified-Since from that tag's response
    var redirectTo: (tag: String, status: Int)? = nil  // the server redirects to path?tag=TAG
    var note: String
}

var steps: [Step] = []
let ngx4 = opt("ngx4"), ngx6 = opt("ngx6"), ngx6Literal = opt("ngx6-literal"), py = opt("py"), unc = opt("uncaptured")
let json = #"{"user":"meter","items":[1,2,3],"note":"a JSON body posted by meter-app","pad":"\#(String(repeating: "x", count: 200))"}"#.data(using: .utf8)!
steps += [
    Step(tag: "h1-get", base: ngx4, path: "/page.html", expectStatus: 200,
         note: "nginx, IPv4: a 4 KB page, gzip-encoded by nginx (libcurl sends Accept-Encoding)"),
    Step(tag: "h1-login", base: ngx4, path: "/login", expectStatus: 200,
         note: "nginx sets two cookies (Set-Cookie x2)"),
    Step(tag: "h1-cookies", base: ngx4, path: "/data.json", expectStatus: 200,
         note: "sends the two cookies back; gzip-encoded JSON"),
    Step(tag: "h1-redirect", base: ngx4, path: "/old", expectStatus: 302, redirectTo: ("h1-redirected", 200),
         note: "nginx 302 to /page.html?tag=h1-redirected, followed by the stack: two exchanges"),
    Step(tag: "h1-etag", base: ngx4, path: "/style.css", expectStatus: 200,
         note: "a stylesheet with ETag and Last-Modified"),
    Step(tag: "h1-304", base: ngx4, path: "/style.css", headers: [:], expectStatus: 304, conditionalOn: "h1-etag",
         note: "conditional GET (If-None-Match, If-Modified-Since set by the app from h1-etag's response): 304"),
    Step(tag: "h1-ipv6", base: ngx6, path: "/page.html", expectStatus: 200,
         note: "nginx on [::1], by a host name that resolves to ::1 only (the literal fails: h1-ipv6-literal)"),
    Step(tag: "h1-ipv6-literal", base: ngx6Literal, path: "/page.html", expectStatus: -1, onWire: false,
         note: "a literal IPv6 URL: FoundationNetworking fails it with NSURLErrorBadURL (-1000) before any connection; the meter logged the request, no response"),
    Step(tag: "h1-empty", base: ngx4, path: "/empty", expectStatus: 204, note: "204, no body"),
    Step(tag: "h1-post-json", method: "POST", base: py, path: "/upload",
         headers: ["Content-Type": "application/json"], body: json, expectStatus: 201,
         note: "Python server: POST with a JSON body"),
    Step(tag: "h1-post-gzip", method: "POST", base: py, path: "/echo",
         headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: gzippedData(json), expectStatus: 200,
         note: "Python server: POST of a gzipped JSON body with Content-Encoding: gzip (gzippedData leaves it as it is)"),
    Step(tag: "h1-py-gzip", base: py, path: "/gzip", extraQuery: "n=3000", expectStatus: 200,
         note: "Python server: gzip body with Content-Length"),
    Step(tag: "h1-py-chunked", base: py, path: "/gzip-chunked", expectStatus: 200,
         note: "Python server: gzip body, chunked (a chunked body with trailers crashes FoundationNetworking: not used)"),
    Step(tag: "h1-cacheable", base: ngx4, path: "/cacheable.json", expectStatus: 200,
         note: "Cache-Control: max-age=3600: the meter stores it in the app's URLCache"),
    Step(tag: "h1-cache-hit", base: ngx4, path: "/cacheable.json", headers: ["X-Tag": "h1-cache-hit"],
         cachePolicy: .returnCacheDataElseLoad, expectStatus: 200, onWire: false, fromCacheOf: "h1-cacheable",
         note: "h1-cacheable's URL again (tag in X-Tag), returnCacheDataElseLoad: answered from the app's cache, metered, not on the wire"),
    Step(tag: "h1-uncaptured", base: unc, path: "/page.html", expectStatus: 200, onWire: false, captured: false,
         note: "nginx on a loopback port outside the capture filter: metered, not in the capture"),
]
if let tls = opts["tls"] {
    steps += [
        Step(tag: "tls-get", base: tls, path: "/page.html", expectStatus: 200, note: "nginx TLS (HTTP/1.1 only): gzip page"),
        Step(tag: "tls-cookies", base: tls, path: "/data.json", expectStatus: 200, note: "nginx TLS: the cookies are for 127.0.0.1, any port: sent here too"),
        Step(tag: "tls-post-json", method: "POST", base: tls, path: "/post", headers: ["Content-Type": "application/json"],
             body: json, expectStatus: 200, note: "nginx TLS: POST with a JSON body"),
    ]
}
if let h2 = opts["h2"] {
    steps += [
        Step(tag: "h2-get", base: h2, path: "/page.html", expectStatus: 200, note: "nginx TLS with http2 (ALPN h2 offered by libcurl)"),
        Step(tag: "h2-json", base: h2, path: "/data.json", expectStatus: 200, note: "nginx TLS h2: gzip JSON, cookies"),
        Step(tag: "h2-post-json", method: "POST", base: h2, path: "/post", headers: ["Content-Type": "application/json"],
             body: json, expectStatus: 200, note: "nginx TLS h2: POST with a JSON body"),
    ]
}

func urlFor(_ s: Step, tag: String) -> String {
    s.base + s.path + "?" + (s.extraQuery.isEmpty ? "" : s.extraQuery + "&") + "tag=" + tag
}

var responses: [String: HTTPURLResponse] = [:]
var urls: [String: String] = [:]
var tagLines: [String] = []
var problems: [String] = []
let done = DispatchSemaphore(value: 0)

for s in steps {
    let urlString = urlFor(s, tag: s.fromCacheOf ?? s.tag)
    var req = URLRequest(url: URL(string: urlString)!, cachePolicy: s.cachePolicy, timeoutInterval: 15)
    req.httpMethod = s.method
    for (k, v) in s.headers { req.setValue(v, forHTTPHeaderField: k) }
    if let c = s.conditionalOn, let prev = responses[c] {
        if let e = prev.allHeaderFields["Etag"] as? String ?? prev.allHeaderFields["ETag"] as? String { req.setValue(e, forHTTPHeaderField: "If-None-Match") }
        if let m = prev.allHeaderFields["Last-Modified"] as? String { req.setValue(m, forHTTPHeaderField: "If-Modified-Since") }
    }
    req.httpBody = s.body
    var status = -1
    var got = 0
    var err: String? = nil
    session.dataTask(with: req) { data, resp, error in
        if let h = resp as? HTTPURLResponse { status = h.statusCode; responses[s.tag] = h }
        got = data?.count ?? 0
        if let error { err = "\(error)" }
        done.signal()
    }.resume()
    done.wait()
    let finalStatus = s.redirectTo?.status ?? s.expectStatus
    print("meter-app: \(s.tag) \(s.method) \(urlString) -> \(status) (\(got) bytes)\(err.map { " error: \($0)" } ?? "")")
    if status != finalStatus { problems.append("\(s.tag): status \(status), expected \(finalStatus)") }
    func truth(_ tag: String, _ method: String, _ url: String, _ expect: Int, _ onWire: Bool, _ captured: Bool,
               _ source: String, _ note: String, _ extra: String = "") -> String {
        let u = URL(string: url)!
        return "{\"tag\":\(jsonString(tag)),\"method\":\(jsonString(method)),\"url\":\(jsonString(url))"
            + ",\"scheme\":\(jsonString(u.scheme ?? "")),\"host\":\(jsonString(u.host ?? "")),\"port\":\(u.port ?? -1)"
            + ",\"status\":\(expect),\"on_wire\":\(onWire),\"port_captured\":\(captured),\"in_meter\":true"
            + ",\"meter_entries\":{\"request\":1,\"response\":\(expect < 0 ? 0 : 1)},\"source\":\(jsonString(source))\(extra)"
            + ",\"note\":\(jsonString(note))}"
    }
    let extra = (s.fromCacheOf.map { ",\"same_url_as\":\(jsonString($0)),\"tag_in\":\"X-Tag\"" } ?? ",\"tag_in\":\"query\"")
        + (s.redirectTo.map { ",\"redirects_to\":\(jsonString($0.tag))" } ?? "")
        + (s.body.map { ",\"request_body_bytes\":\($0.count)" } ?? "")
    tagLines.append(truth(s.tag, s.method, urlString, s.expectStatus, s.onWire, s.captured,
                          s.fromCacheOf == nil ? "network" : "cache", s.note, extra))
    if let r = s.redirectTo {
        let to = s.base + "/page.html?tag=" + r.tag
        tagLines.append(truth(r.tag, "GET", to, r.status, s.onWire, s.captured, "network",
                              "the request the stack made for \(s.tag)'s redirect", ",\"tag_in\":\"query\",\"redirected_from\":\(jsonString(s.tag))"))
    }
}

MeterProtocol.seedLog.close()
MeterProtocol.bodyLog.close()
try (tagLines.joined(separator: "\n") + "\n").write(toFile: opt("tags"), atomically: true, encoding: .utf8)
print("meter-app: \(steps.count) requests, \(MeterProtocol.seedLog.count) seed001 entries, \(MeterProtocol.bodyLog.count) bodyonly entries")
if !problems.isEmpty { fail(problems.joined(separator: "; ")) }
exit(0)
