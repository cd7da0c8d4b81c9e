import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 001's interception meter on FoundationNetworking: a URLProtocol subclass put first in the
/// app session's `protocolClasses`. It loads each request through an inner URLSession of its own
/// (made once, outside the protocol, without this class: no recursion) and meters what it sees:
/// the request (line, headers plus cookies, body) when it starts it, and the response (status line,
/// headers, body) when the inner task completes. A redirect the inner session follows is two
/// exchanges: the 3xx response, then the new request, as the seed's `willSendRequest:` sees it.
/// Requests whose cache policy allows a cached answer are answered from the app's URLCache when it
/// holds one, and metered all the same (nothing goes on the wire).
final class MeterProtocol: URLProtocol {
    static var seedLog: MeterLog!
    static var bodyLog: MeterLog!
    static var appCache: URLCache!
    static var cookies: HTTPCookieStorage = .shared
    static let inner = InnerSession()
    private static let idLock = NSLock()
    private static var lastID = 0
    static func nextID() -> Int { idLock.lock(); defer { idLock.unlock() }; lastID += 1; return lastID }

    override class func canInit(with request: URLRequest) -> Bool {
        let s = request.url?.scheme?.lowercased()
        return s == "http" || s == "https"
    }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    private var exchange = 0
    private var current: URLRequest!
    private var body: Data?
    private var response: HTTPURLResponse?
    private var data = Data()
    private var innerTask: URLSessionDataTask?
    private var taskID: Int { task?.taskIdentifier ?? -1 }

    override func startLoading() {
        var req = request
        // The body as the app passed it: HTTPBody, or the bytes of HTTPBodyStream (read once,
        // handed on to the inner request as a body).
        if let b = req.httpBody {
            body = b
        } else if let s = req.httpBodyStream {
            body = readAll(s)
            req.httpBodyStream = nil
            req.httpBody = body
        }
        current = request
        exchange = Self.nextID()
        let fromCache = (request.cachePolicy == .returnCacheDataElseLoad || request.cachePolicy == .returnCacheDataDontLoad)
            ? Self.appCache.cachedResponse(for: request) : nil
        meterRequest(request, source: fromCache == nil ? "network" : "cache")
        if let cached = fromCache, let http = cached.response as? HTTPURLResponse {
            client?.urlProtocol(self, didReceive: http, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: cached.data)
            response = http
            data = cached.data
            meterResponse(source: "cache")
            client?.urlProtocolDidFinishLoading(self)
            return
        }
        // Started asynchronously: a synchronous start inside startLoading trapped in
        // swift-corelibs-foundation (docs/SAMPLES.md, the meter-app section).
        let inner = Self.inner
        DispatchQueue.global().async { [self] in
            let t = inner.session.dataTask(with: req)
            innerTask = t
            inner.register(t, self)
            t.resume()
        }
    }

    override func stopLoading() { innerTask?.cancel() }

    // MARK: metering

    private func meterRequest(_ req: URLRequest, source: String) {
        let now = Date().timeIntervalSince1970
        let method = req.httpMethod ?? "GET"
        let url = req.url?.absoluteString ?? ""
        let seed = Sizes(line: SeedMeter.requestLine(req),
                         headers: SeedMeter.requestHeaders(req, cookies: Self.cookies),
                         body: SeedMeter.requestBody(req, body: body))
        let naive = BodyOnlyMeter.request(body: body)
        for (log, s) in [(Self.seedLog!, seed), (Self.bodyLog!, naive)] {
            log.write(MeterEntry(time: now, kind: "request", method: method, url: url, status: nil,
                                 line: s.line, headers: s.headers, body: s.body, id: exchange,
                                 task: taskID, tag: tagOf(req), source: source))
        }
    }

    private func meterResponse(source: String) {
        guard let r = response else { return }
        let now = Date().timeIntervalSince1970
        let seed = Sizes(line: SeedMeter.statusLine(r), headers: SeedMeter.responseHeaders(r),
                         body: SeedMeter.responseBody(r, data: data))
        let naive = BodyOnlyMeter.response(r, data: data)
        let method = current.httpMethod ?? "GET"
        let url = current.url?.absoluteString ?? ""
        for (log, s) in [(Self.seedLog!, seed), (Self.bodyLog!, naive)] {
            log.write(MeterEntry(time: now, kind: "response", method: method, url: url, status: r.statusCode,
                                 line: s.line, headers: s.headers, body: s.body, id: exchange,
                                 task: taskID, tag: tagOf(current), source: source))
        }
    }

    // MARK: inner task events (InnerSession's delegate queue)

    func innerRedirect(_ r: HTTPURLResponse, to next: URLRequest) {
        response = r
        meterResponse(source: "network")
        current = next
        body = next.httpBody
        data = Data()
        response = nil
        exchange = Self.nextID()
        meterRequest(next, source: "network")
    }

    func innerResponse(_ r: URLResponse) {
        response = r as? HTTPURLResponse
        client?.urlProtocol(self, didReceive: r, cacheStoragePolicy: .notAllowed)
    }

    func innerData(_ d: Data) {
        data.append(d)
        client?.urlProtocol(self, didLoad: d)
    }

    func innerComplete(_ error: Error?) {
        if let error {
            client?.urlProtocol(self, didFailWithError: error)
            return
        }
        meterResponse(source: "network")
        if let r = response, r.statusCode == 200, (current.httpMethod ?? "GET") == "GET",
           let cc = r.allHeaderFields["Cache-Control"] as? String, cc.contains("max-age") {
            Self.appCache.storeCachedResponse(CachedURLResponse(response: r, data: data), for: current)
        }
        client?.urlProtocolDidFinishLoading(self)
    }
}

/// The sample's tag of a request: its X-Tag field, else its `tag` query parameter.
func tagOf(_ req: URLRequest) -> String {
    if let t = req.value(forHTTPHeaderField: "X-Tag") { return t }
    guard let u = req.url, let c = URLComponents(url: u, resolvingAgainstBaseURL: false) else { return "" }
    return c.queryItems?.first(where: { $0.name == "tag" })?.value ?? ""
}

func readAll(_ s: InputStream) -> Data {
    var out = Data()
    var buf = [UInt8](repeating: 0, count: 4096)
    s.open()
    defer { s.close() }
    while true {
        let n = s.read(&buf, maxLength: buf.count)
        if n <= 0 { break }
        out.append(buf, count: n)
    }
    return out
}

/// The protocol's own URLSession (default protocol classes, the shared cookie store, no cache),
/// and the map from its tasks to the protocol instances that started them.
final class InnerSession: NSObject, URLSessionDataDelegate {
    private let lock = NSLock()
    private var owners: [Int: MeterProtocol] = [:]
    lazy var session: URLSession = {
        let c = URLSessionConfiguration.default
        c.urlCache = nil
        c.requestCachePolicy = .reloadIgnoringLocalCacheData
        c.httpCookieStorage = MeterProtocol.cookies
        c.httpShouldSetCookies = true
        c.httpCookieAcceptPolicy = .always
        let q = OperationQueue()
        q.maxConcurrentOperationCount = 1
        return URLSession(configuration: c, delegate: self, delegateQueue: q)
    }()

    func register(_ t: URLSessionTask, _ p: MeterProtocol) { lock.lock(); owners[t.taskIdentifier] = p; lock.unlock() }
    private func owner(_ t: URLSessionTask) -> MeterProtocol? { lock.lock(); defer { lock.unlock() }; return owners[t.taskIdentifier] }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        owner(task)?.innerRedirect(response, to: request)
        completionHandler(request)
    }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        owner(dataTask)?.innerResponse(response)
        completionHandler(.allow)
    }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        owner(dataTask)?.innerData(data)
    }
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        owner(task)?.innerComplete(error)
        lock.lock(); owners[task.taskIdentifier] = nil; lock.unlock()
    }
}
