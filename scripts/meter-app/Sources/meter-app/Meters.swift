import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a meter computes for one message: its request line (or status line), header block and
/// body, in bytes.
struct Sizes { var line = 0, headers = 0, body = 0 }

/// Seed 001's meter, as its Objective-C computes it (docs/METERING.md §4.1 describes the same
/// rule as the `documented` estimator).
enum SeedMeter {
    static let name = "seed001"

    /// `cll_getLineLength`: "{host} {method} {path} HTTP/1.1 {query}\n", NSURL's host, path and
    /// query, `(null)` for a nil one (Objective-C's `%@` of nil).
    static func requestLine(_ request: URLRequest) -> Int {
        let u = request.url.flatMap { NSURL(string: $0.absoluteString) }
        let host = u?.host ?? "(null)"
        let path = u?.path ?? "(null)"
        let query = u?.query ?? "(null)"
        let method = request.httpMethod ?? "GET"
        return "\(host) \(method) \(path) HTTP/1.1 \(query)\n".utf8.count
    }

    /// `cll_getHeadersLengthWithCookie`: allHTTPHeaderFields, plus the cookie store's Cookie
    /// field for the URL (it replaces one the app set), "name: value\r\n" each, and "\r\n".
    static func requestHeaders(_ request: URLRequest, cookies: HTTPCookieStorage) -> Int {
        var fields = request.allHTTPHeaderFields ?? [:]
        if let url = request.url, let jar = cookies.cookies(for: url), !jar.isEmpty {
            for (k, v) in HTTPCookie.requestHeaderFields(with: jar) { fields[k] = v }
        }
        return headerBlock(fields.map { ($0.key, $0.value) })
    }

    /// `cll_getBodyLength`: HTTPBody's length; when the app set a Content-Encoding field (any
    /// value), the length of `gzippedData` of the body (read from HTTPBodyStream if need be).
    static func requestBody(_ request: URLRequest, body: Data?) -> Int {
        let declared = request.httpBody?.count ?? 0
        if request.allHTTPHeaderFields?["Content-Encoding"] != nil {
            return gzippedData(request.httpBody ?? body ?? Data()).count
        }
        return declared
    }

    /// The status line `CFHTTPMessageCopyResponseStatusLine` gives on Apple platforms. Linux
    /// Foundation has no status line, no HTTP version and no reason phrase: the meter writes
    /// "HTTP/1.1 {code} {the standard reason phrase}".
    static func statusLine(_ response: HTTPURLResponse) -> Int {
        "HTTP/1.1 \(response.statusCode) \(reasonPhrase(response.statusCode))".utf8.count
    }

    /// `cll_getHeadersLength`: allHeaderFields, "name: value\r\n" each, and "\r\n".
    static func responseHeaders(_ response: HTTPURLResponse) -> Int {
        headerBlock(response.allHeaderFields.map { ("\($0.key)", "\($0.value)") })
    }

    /// stopLoading: the data received (decoded by the stack); `gzippedData` of it when
    /// Content-Encoding is exactly "gzip".
    static func responseBody(_ response: HTTPURLResponse, data: Data) -> Int {
        if let ce = response.allHeaderFields["Content-Encoding"] as? String, ce == "gzip" {
            return gzippedData(data).count
        }
        return data.count
    }

    static func headerBlock(_ fields: [(String, String)]) -> Int {
        fields.reduce(2) { $0 + $1.0.utf8.count + 2 + $1.1.utf8.count + 2 }
    }
}

/// The body-only meter seed 001 criticizes (docs/METERING.md §4.2's `naive`): the request body as
/// the app passed it; the response's expectedContentLength when known, else the data received;
/// no line, no headers.
enum BodyOnlyMeter {
    static let name = "bodyonly"
    static func request(body: Data?) -> Sizes { Sizes(body: body?.count ?? 0) }
    static func response(_ response: HTTPURLResponse, data: Data) -> Sizes {
        Sizes(body: response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : data.count)
    }
}

func reasonPhrase(_ code: Int) -> String {
    switch code {
    case 100: return "Continue"
    case 101: return "Switching Protocols"
    case 200: return "OK"
    case 201: return "Created"
    case 202: return "Accepted"
    case 204: return "No Content"
    case 206: return "Partial Content"
    case 301: return "Moved Permanently"
    case 302: return "Found"
    case 303: return "See Other"
    case 304: return "Not Modified"
    case 307: return "Temporary Redirect"
    case 308: return "Permanent Redirect"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 500: return "Internal Server Error"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    default: return ""
    }
}
