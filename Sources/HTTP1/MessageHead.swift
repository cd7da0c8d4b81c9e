import CaptureIO
import MessageModel

/// A parsed start line.
enum StartLine: Equatable {
    case request(method: [UInt8], target: [UInt8], version: [UInt8])
    case response(version: [UInt8], status: Int, reason: [UInt8])

    var kind: MessageKind {
        if case .request = self { return .request } else { return .response }
    }

    /// Parses a line without its terminator (`CR` already removed); nil when it is no start line.
    static func parse(_ line: ArraySlice<UInt8>) -> StartLine? {
        if line.starts(with: httpSlash) {
            return parseStatusLine(line)
        }
        return parseRequestLine(line)
    }

    private static let httpSlash = Array("HTTP/".utf8)

    /// Methods that a request line glued to other bytes is recognized by (a method is a
    /// token, so without a list there is no telling where it begins).
    private static let knownMethods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE"]
        .map { Array($0.utf8) + [32] }

    /// A start line that begins after the first byte of `line` (a status line at `HTTP/`, a
    /// request line at a well-known method), of `kind` when given; the first one found, with
    /// how many bytes precede it.
    static func parseGlued(_ line: ArraySlice<UInt8>, kind: MessageKind?) -> (start: StartLine, skip: Int)? {
        var index = line.startIndex + 1
        while index < line.endIndex {
            let rest = line[index...]
            let candidate =
                (kind != .request && rest.starts(with: httpSlash))
                || (kind != .response && knownMethods.contains { rest.starts(with: $0) })
            if candidate, let start = parse(rest), kind == nil || start.kind == kind {
                return (start, index - line.startIndex)
            }
            index += 1
        }
        return nil
    }

    /// Whether `bytes` begin with a request line: true or false once they tell, nil while
    /// they are a prefix that could still become one.
    static func beginsRequestLine(_ bytes: ArraySlice<UInt8>) -> Bool? {
        if let lf = bytes.firstIndex(of: 10) {
            var end = lf
            if end > bytes.startIndex, bytes[end - 1] == 13 { end -= 1 }
            if case .request? = parse(bytes[bytes.startIndex..<end]) { return true }
            return false
        }
        // method SP target SP HTTP/d.d CR, checked byte by byte
        var part = 0
        var partLength = 0
        for c in bytes {
            switch part {
            case 0, 1:
                if c == 32 && partLength > 0 {
                    part += 1
                    partLength = 0
                    continue
                }
                guard part == 0 ? isTokenChar(c) : (c > 32 && c != 127) else { return false }
            default:
                let fits: Bool
                switch partLength {
                case 0..<5: fits = c == httpSlash[partLength]
                case 5, 7: fits = isDigit(c)
                case 6: fits = c == UInt8(ascii: ".")
                case 8: fits = c == 13
                default: fits = false
                }
                guard fits else { return false }
            }
            partLength += 1
        }
        return nil
    }

    /// A request line that `parse` refuses but a server may still answer (docs/DECISIONS.md):
    /// `method SP target SP version` whose method may hold non-ASCII bytes and whose version
    /// begins with `HTTP/` but is malformed, or HTTP/0.9's `method SP /path` (empty version).
    /// No control bytes anywhere; nil otherwise.
    static func parseMalformedRequest(_ line: ArraySlice<UInt8>) -> StartLine? {
        guard !line.starts(with: httpSlash), !line.contains(where: { $0 < 32 || $0 == 127 }) else { return nil }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ !$0.isEmpty }),
            parts[0].allSatisfy({ isTokenChar($0) || $0 >= 0x80 })
        else { return nil }
        if parts.count == 3 {
            guard parts[2].starts(with: httpSlash) else { return nil }
        } else {
            guard parts[1].first == UInt8(ascii: "/") else { return nil }
        }
        return .request(
            method: Array(parts[0]), target: Array(parts[1]), version: parts.count == 3 ? Array(parts[2]) : [])
    }

    /// The beginning of a start line that a hole or snaplen cut short: a status line once its
    /// status code is in, a request line once its method and the space after it are. Nil when
    /// the bytes are no such beginning.
    static func parseCut(_ line: ArraySlice<UInt8>) -> StartLine? {
        var content = line
        if content.last == 13 { content = content.dropLast() }
        if content.starts(with: httpSlash) { return parseStatusLine(content) }
        guard beginsRequestLine(content) == nil, let space = content.firstIndex(of: 32) else { return nil }
        let afterMethod = content[(space + 1)...]
        let targetEnd = afterMethod.firstIndex(of: 32) ?? afterMethod.endIndex
        let version = targetEnd < afterMethod.endIndex ? Array(afterMethod[(targetEnd + 1)...]) : []
        return .request(method: Array(content[..<space]), target: Array(afterMethod[..<targetEnd]), version: version)
    }

    private static func isVersion(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 8, bytes.starts(with: httpSlash) else { return false }
        let b = bytes.startIndex
        return isDigit(bytes[b + 5]) && bytes[b + 6] == UInt8(ascii: ".") && isDigit(bytes[b + 7])
    }

    private static func parseStatusLine(_ line: ArraySlice<UInt8>) -> StartLine? {
        let b = line.startIndex
        guard line.count >= 12, isVersion(line[b..<(b + 8)]), line[b + 8] == UInt8(ascii: " "),
            isDigit(line[b + 9]), isDigit(line[b + 10]), isDigit(line[b + 11])
        else { return nil }
        if line.count > 12, line[b + 12] != UInt8(ascii: " ") { return nil }
        let status = Int(line[b + 9] - 48) * 100 + Int(line[b + 10] - 48) * 10 + Int(line[b + 11] - 48)
        let reason = line.count > 13 ? Array(line[(b + 13)...]) : []
        return .response(version: Array(line[b..<(b + 8)]), status: status, reason: reason)
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> StartLine? {
        guard let firstSpace = line.firstIndex(of: UInt8(ascii: " ")), firstSpace > line.startIndex,
            let lastSpace = line.lastIndex(of: UInt8(ascii: " ")), lastSpace > firstSpace + 1
        else { return nil }
        let method = line[line.startIndex..<firstSpace]
        let target = line[(firstSpace + 1)..<lastSpace]
        let version = line[(lastSpace + 1)...]
        guard method.allSatisfy(isTokenChar), isVersion(version),
            target.allSatisfy({ $0 > 32 && $0 != 127 })
        else { return nil }
        return .request(method: Array(method), target: Array(target), version: Array(version))
    }
}

/// RFC 9110 tchar.
@inline(__always) func isTokenChar(_ c: UInt8) -> Bool {
    switch c {
    case 48...57, 65...90, 97...122: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default: return false
    }
}


/// Header field lines parsed from a complete head.
struct FieldBlock {
    var fields: [HeaderField] = []
    var anomalies: MessageAnomalies = []

    /// Parses field lines: each element is a line without its terminator; obs-fold lines
    /// (starting with SP or HT) continue the previous field.
    init<Lines: Sequence>(lines: Lines) where Lines.Element == ArraySlice<UInt8> {
        for line in lines {
            if let first = line.first, isHorizontalSpace(first) {
                anomalies.insert(.obsFold)
                guard !fields.isEmpty else {
                    anomalies.insert(.malformedField)
                    continue
                }
                let continuation = trimmed(line)
                if !continuation.isEmpty {
                    if !fields[fields.count - 1].value.isEmpty { fields[fields.count - 1].value.append(32) }
                    fields[fields.count - 1].value.append(contentsOf: continuation)
                }
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                anomalies.insert(.malformedField)
                continue
            }
            fields.append(
                HeaderField(
                    name: Array(line[line.startIndex..<colon]),
                    value: Array(trimmed(line[(colon + 1)...]))))
        }
    }
}
