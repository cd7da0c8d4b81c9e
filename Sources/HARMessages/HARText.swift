import CaptureIO
import MessageModel

/// A HAR `request.url` read as the absolute-form target it stands for.
struct HARURL {
    /// The URL without its `#fragment`, which is never sent.
    let target: [UInt8]
    let parts: RequestTarget
    let scheme: String
    /// The URL is ASCII: its bytes are its characters.
    let isASCII: Bool

    init(_ url: String) {
        // ASCII, as most URLs are: bytes are characters, so the byte scans below find what the
        // character scans would, without grapheme breaking.
        let asciiTarget = url.utf8.withContiguousStorageIfAvailable { bytes -> [UInt8]? in
            var fragment = bytes.count
            for index in bytes.indices {
                let byte = bytes[index]
                if byte >= 0x80 { return nil }
                if byte == UInt8(ascii: "#"), fragment == bytes.count { fragment = index }
            }
            return Array(UnsafeBufferPointer(rebasing: bytes[..<fragment]))
        }
        if let asciiTarget, let target = asciiTarget {
            self.target = target
            isASCII = true
            parts = RequestTarget(target)
            if parts.authorityBytes == nil {
                scheme = ""
            } else {
                let colon = target.firstIndex(of: UInt8(ascii: ":")) ?? target.endIndex
                // A scheme is nearly always written in lowercase: then it is its bytes as they are.
                let written = target[..<colon]
                let lower = !written.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
                scheme = lower ? String(decoding: written, as: UTF8.self) : String(decoding: written, as: UTF8.self).lowercased()
            }
            return
        }
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        target = Array(withoutFragment.utf8)
        isASCII = false
        parts = RequestTarget(target)
        scheme = parts.authorityBytes == nil ? "" : String(withoutFragment.prefix { $0 != ":" }).lowercased()
    }

    /// The request-target an HTTP/1.1 request line carries to the server: `host:port` for
    /// CONNECT, else the path (`/` when empty) and query.
    func requestLineTarget(method: String) -> String {
        if method == "CONNECT", let authority = parts.authority {
            return String(authority.split(separator: "@").last ?? Substring(authority))
        }
        return originForm
    }

    /// The request line an HTTP/1.1 client sends for this URL: method, `requestLineTarget`,
    /// `HTTP/1.1`; built from the target's bytes when the URL is ASCII (they are the text's).
    func requestLine(method: String) -> [UInt8] {
        guard isASCII, method != "CONNECT" else {
            return HARMessageBuilder.line(method, requestLineTarget(method: method), "HTTP/1.1")
        }
        let version = " HTTP/1.1"
        var line: [UInt8] = []
        line.reserveCapacity(method.utf8.count + 2 + parts.path.count + 1 + (parts.query?.count ?? 0) + 9)
        HARMessageBuilder.append(method, to: &line)
        line.append(UInt8(ascii: " "))
        if parts.path.isEmpty { line.append(UInt8(ascii: "/")) } else { line.append(contentsOf: parts.path) }
        if let query = parts.query {
            line.append(UInt8(ascii: "?"))
            line.append(contentsOf: query)
        }
        HARMessageBuilder.append(version, to: &line)
        return line
    }

    var originForm: String {
        let path = parts.path.isEmpty ? "/" : String(httpBytes: parts.path)
        return parts.query.map { path + "?" + String(httpBytes: $0) } ?? path
    }

    /// `serverIPAddress` with the URL's port (else the scheme's), IPv6 in brackets; empty
    /// without an address.
    func server(address: String?) -> String {
        guard let address, !address.isEmpty else { return "" }
        let host = Self.containsColon(address) && !address.hasPrefix("[") ? "[\(address)]" : address
        return "\(host):\(port)"
    }

    /// Whether the text holds a ":" character: for ASCII a byte scan (bytes are characters),
    /// without the Character comparisons of `contains(":")`.
    static func containsColon(_ text: String) -> Bool {
        let colon = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var found = false
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte == UInt8(ascii: ":") { found = true }
            }
            return found
        }
        if let colon, let found = colon { return found }
        return text.contains(":")
    }

    private var port: String {
        // ASCII authority (as nearly all are): the same scans over bytes, without Character
        // comparisons.
        // An ASCII URL's authority bytes are its text (no String made of them).
        let asciiAuthority: ArraySlice<UInt8>? =
            if isASCII { parts.authorityBytes } else {
                parts.authority.flatMap { $0.utf8.allSatisfy({ $0 < 0x80 }) ? Array($0.utf8)[...] : nil }
            }
        if var hostPort = asciiAuthority {
            if let at = hostPort.lastIndex(of: UInt8(ascii: "@")) { hostPort = hostPort[(at + 1)...] }
            if let close = hostPort.lastIndex(of: UInt8(ascii: "]")) { hostPort = hostPort[(close + 1)...] }
            if let colon = hostPort.lastIndex(of: UInt8(ascii: ":")) {
                let digits = hostPort[(colon + 1)...]
                if !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                    return String(decoding: digits, as: UTF8.self)
                }
            }
            return scheme == "https" || scheme == "wss" ? "443" : "80"
        }
        if var hostPort = parts.authority.map({ Substring($0) }) {
            if let at = hostPort.lastIndex(of: "@") { hostPort = hostPort[hostPort.index(after: at)...] }
            if let close = hostPort.lastIndex(of: "]") { hostPort = hostPort[hostPort.index(after: close)...] }
            if let colon = hostPort.lastIndex(of: ":") {
                let digits = hostPort[hostPort.index(after: colon)...]
                if !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) { return String(digits) }
            }
        }
        return scheme == "https" || scheme == "wss" ? "443" : "80"
    }
}

/// `application/x-www-form-urlencoded` serialization (WHATWG URL standard), for a request
/// whose HAR gives only `postData.params`.
enum FormURLEncoding {
    static func body(_ params: [HARHeader]) -> [UInt8] {
        var body: [UInt8] = []
        for (offset, param) in params.enumerated() {
            if offset > 0 { body.append(UInt8(ascii: "&")) }
            append(param.nameBytes, to: &body)
            body.append(UInt8(ascii: "="))
            append(param.valueBytes, to: &body)
        }
        return body
    }

    private static func append(_ text: [UInt8], to body: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "_"):
                body.append(byte)
            case UInt8(ascii: " "):
                body.append(UInt8(ascii: "+"))
            default:
                body += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
    }
}
