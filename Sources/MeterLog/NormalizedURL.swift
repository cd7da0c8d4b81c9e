import CaptureIO

/// A URL in the one spelling the join compares: scheme and host in lower case, the scheme's
/// default port left out, percent-escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// decoded and the others in upper-case hex, an empty path written `/`, no fragment, no
/// user info. `pathKey` is everything but the query; `query` is nil when the URL has none
/// (or an empty one), which the join reads as "matches any query".
public struct NormalizedURL: Hashable, Sendable, CustomStringConvertible {
    /// `scheme://host[:port]/path`.
    public let pathKey: String
    /// Without its `?`; nil when absent or empty.
    public let query: String?

    public var description: String { query.map { pathKey + "?" + $0 } ?? pathKey }

    public init(pathKey: String, query: String?) {
        self.pathKey = pathKey
        self.query = query
    }

    /// An absolute URL (`scheme://authority[/path][?query][#fragment]`); nil when it has no
    /// scheme or no host, or a port that is not a number up to 65535.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        var position = 0
        while position < bytes.count, Self.isSchemeByte(bytes[position], first: position == 0) { position += 1 }
        guard position > 0, position + 2 < bytes.count, bytes[position] == UInt8(ascii: ":"),
            bytes[position + 1] == UInt8(ascii: "/"), bytes[position + 2] == UInt8(ascii: "/")
        else { return nil }
        var key: [UInt8] = []
        key.reserveCapacity(bytes.count + 1)
        for byte in bytes[0..<position] { key.append(Self.lower(byte)) }
        let defaultPort = Self.defaultPort(key)
        key.append(contentsOf: "://".utf8)
        position += 3
        let authorityStart = position
        while position < bytes.count, !Self.endsAuthority(bytes[position]) { position += 1 }
        let authorityEnd = position
        let valid = bytes.withUnsafeBufferPointer {
            Self.appendAuthority(
                UnsafeBufferPointer(rebasing: $0[authorityStart..<authorityEnd]), defaultPort: defaultPort, to: &key)
        }
        guard valid else { return nil }
        self.init(prefix: &key, target: bytes[position...])
    }

    /// A wire record's URL: its scheme (`http`, `https`), its host as the request named it (a
    /// `Host` field or `:authority`, port included or not) and its request target in origin form
    /// (`/path?query`). Nil when the host is empty or its port is not a number up to 65535.
    public init?(scheme: String, host: String, target: String) {
        self.init(scheme: scheme, host: host, targetBytes: Array(target.utf8))
    }

    /// `init(scheme:host:target:)` for a target given as its bytes (a request's, which are
    /// the String's UTF-8 when they are ASCII: only then is this the same URL). Made in one
    /// buffer: a capture's every request URL is made here.
    public init?(scheme: String, host: String, targetBytes: [UInt8]) {
        var key: [UInt8] = []
        key.reserveCapacity(scheme.utf8.count + 4 + host.utf8.count + targetBytes.count)
        for byte in scheme.utf8 { key.append(Self.lower(byte)) }
        guard !key.isEmpty else { return nil }
        let defaultPort = Self.defaultPort(key)
        key.append(contentsOf: "://".utf8)
        var host = host
        let valid = host.withUTF8 { Self.appendAuthority($0, defaultPort: defaultPort, to: &key) }
        guard valid else { return nil }
        self.init(prefix: &key, target: targetBytes[...])
    }

    /// `key` holds `scheme://authority`, normalized; the target's path and query follow.
    private init(prefix key: inout [UInt8], target: ArraySlice<UInt8>) {
        let pathStart = target.startIndex
        // The path ends at the first `?` or `#`.
        var position =
            target.withUnsafeBufferPointer { bytes in
                bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            }.map { pathStart + $0 } ?? target.endIndex
        if position == pathStart || target[pathStart] != UInt8(ascii: "/") { key.append(UInt8(ascii: "/")) }
        Self.appendNormalizedEscapes(target[pathStart..<position], to: &key)
        var query: String?
        if position < target.endIndex, target[position] == UInt8(ascii: "?") {
            position += 1
            let queryStart = position
            position =
                target[queryStart...].withUnsafeBufferPointer { bytes in
                    bytes.firstIndex(of: UInt8(ascii: "#"))
                }.map { queryStart + $0 } ?? target.endIndex
            if position > queryStart {
                let written = target[queryStart..<position]
                if written.withUnsafeBufferPointer({ $0.contains(UInt8(ascii: "%")) }) {
                    var text: [UInt8] = []
                    Self.appendNormalizedEscapes(written, to: &text)
                    query = String(decoding: text, as: UTF8.self)
                } else {
                    query = String(decoding: written, as: UTF8.self)
                }
            }
        }
        self.init(pathKey: String(decoding: key, as: UTF8.self), query: query)
    }

    /// `host[:port]` of `raw` lowered, user info dropped, the scheme's default port dropped,
    /// appended to `out`; false when the host is empty or the port not a number up to 65535.
    private static func appendAuthority(_ raw: UnsafeBufferPointer<UInt8>, defaultPort: Int?, to out: inout [UInt8])
        -> Bool
    {
        var start = 0
        let end = raw.count
        var index = end
        while index > 0 {
            index -= 1
            if raw[index] == UInt8(ascii: "@") {
                start = index + 1
                break
            }
        }
        var afterBracket = start
        index = end
        while index > start {
            index -= 1
            if raw[index] == UInt8(ascii: "]") {
                afterBracket = index + 1
                break
            }
        }
        var hostEnd = end
        var portStart = end
        index = end
        while index > afterBracket {
            index -= 1
            if raw[index] == UInt8(ascii: ":") {
                hostEnd = index
                portStart = index + 1
                break
            }
        }
        guard hostEnd > start else { return false }
        for byte in raw[start..<hostEnd] { out.append(lower(byte)) }
        guard portStart < end else { return true }
        guard end - portStart <= 5 else { return false }
        var value = 0
        for byte in raw[portStart..<end] {
            guard isDigit(byte) else { return false }
            value = value * 10 + Int(byte - 48)
        }
        guard value <= 65535 else { return false }
        if value != defaultPort {
            out.append(UInt8(ascii: ":"))
            var divisor = 10_000
            while divisor > 1, value / divisor == 0 { divisor /= 10 }
            while divisor > 0 {
                out.append(UInt8(48 + value / divisor % 10))
                divisor /= 10
            }
        }
        return true
    }

    // MARK: Pieces

    private static func defaultPort(_ scheme: [UInt8]) -> Int? {
        if scheme.elementsEqual("http".utf8) || scheme.elementsEqual("ws".utf8) { return 80 }
        if scheme.elementsEqual("https".utf8) || scheme.elementsEqual("wss".utf8) { return 443 }
        return nil
    }

    static func appendNormalizedEscapes(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        let hasEscape = bytes.withUnsafeBufferPointer { $0.contains(UInt8(ascii: "%")) }
        guard hasEscape else { return out.append(contentsOf: bytes) }
        func hex(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 55 + value }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(hex(high))
                    out.append(hex(low))
                }
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        isDigit(byte) || (lower(byte) >= UInt8(ascii: "a") && lower(byte) <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    private static func isSchemeByte(_ byte: UInt8, first: Bool) -> Bool {
        let letter = lower(byte) >= UInt8(ascii: "a") && lower(byte) <= UInt8(ascii: "z")
        if first { return letter }
        return letter || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
