import CaptureIO
import MessageModel

/// A HAR `request.url` read as the absolute-form target it stands for.
struct HARURL {
    /// The URL without its `#fragment`, which is never sent.
    let target: [UInt8]
    let parts: RequestTarget
    let scheme: String

    init(_ url: String) {
        // ASCII, as most URLs are: bytes are characters, so the byte scans below find what the
        // character scans would, without grapheme breaking.
        let utf8 = url.utf8
        if let ascii = utf8.withContiguousStorageIfAvailable({ bytes in bytes.allSatisfy { $0 < 0x80 } }), ascii {
            let fragment = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
            target = Array(utf8[..<fragment])
            parts = RequestTarget(target)
            if parts.authorityBytes == nil {
                scheme = ""
            } else {
                let colon = target.firstIndex(of: UInt8(ascii: ":")) ?? target.endIndex
                scheme = String(decoding: target[..<colon], as: UTF8.self).lowercased()
            }
            return
        }
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        target = Array(withoutFragment.utf8)
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
        let utf8 = text.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) { return utf8.contains(UInt8(ascii: ":")) }
        return text.contains(":")
    }

    private var port: String {
        // ASCII authority (as nearly all are): the same scans over bytes, without Character
        // comparisons.
        if let authority = parts.authority, authority.utf8.allSatisfy({ $0 < 0x80 }) {
            var hostPort = Array(authority.utf8)[...]
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
