import CaptureIO
import Foundation
import MessageModel

/// Groups request paths into endpoints. The user's rewrite rules run first, in order, each
/// replacing every match in the path; then segments that are identifiers (numbers, UUIDs,
/// long hex or base64-like tokens) become `{id}`. Segments a rule produced with braces are
/// left alone.
public struct EndpointNormalizer: @unchecked Sendable {
    /// One `REGEX=TEMPLATE` rewrite; the template may use `$1`… for capture groups.
    public struct Rule: @unchecked Sendable {
        public let pattern: String
        public let template: String
        let regex: NSRegularExpression

        /// Parses `REGEX=TEMPLATE`, split at the last `=` (templates rarely hold one, patterns may).
        public init(parsing text: String) throws {
            guard let equals = text.lastIndex(of: "=") else { throw RuleError.missingEquals(text) }
            try self.init(pattern: String(text[..<equals]), template: String(text[text.index(after: equals)...]))
        }

        public init(pattern: String, template: String) throws {
            guard !pattern.isEmpty else { throw RuleError.emptyPattern }
            do {
                regex = try NSRegularExpression(pattern: pattern)
            } catch {
                throw RuleError.invalidPattern(pattern, error.localizedDescription)
            }
            self.pattern = pattern
            self.template = template
        }

        func apply(to path: String) -> String {
            regex.stringByReplacingMatches(
                in: path, range: NSRange(path.startIndex..., in: path), withTemplate: template)
        }
    }

    public enum RuleError: Error, Equatable, CustomStringConvertible {
        case missingEquals(String)
        case emptyPattern
        case invalidPattern(String, String)
        case unreadableFile(String, String)
        case invalidLine(file: String, line: Int, String)

        public var description: String {
            switch self {
            case let .missingEquals(text): return "endpoint rule '\(text)' has no '=': write REGEX=TEMPLATE"
            case .emptyPattern: return "endpoint rule with an empty pattern"
            case let .invalidPattern(pattern, reason):
                return "endpoint rule pattern '\(pattern)' is not a valid regular expression: \(reason)"
            case let .unreadableFile(path, reason): return "\(path): cannot read endpoint rules: \(reason)"
            case let .invalidLine(file, line, reason): return "\(file):\(line): \(reason)"
            }
        }
    }

    public var rules: [Rule]

    public init(rules: [Rule] = []) {
        self.rules = rules
    }

    /// Rules from a file: one `REGEX=TEMPLATE` per line; blank lines and lines starting
    /// with `#` are skipped.
    public static func rules(fromFile path: String) throws -> [Rule] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw RuleError.unreadableFile(path, error.localizedDescription)
        }
        var rules: [Rule] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do {
                rules.append(try Rule(parsing: trimmed))
            } catch {
                throw RuleError.invalidLine(file: path, line: number + 1, String(describing: error))
            }
        }
        return rules
    }

    public func normalize(path: String) -> String {
        guard !path.isEmpty else { return "/" }
        var rewritten = rules.reduce(path) { $1.apply(to: $0) }
        // Once per record: ASCII paths (nearly all) are cut at `/` bytes in place.
        if let normalized = rewritten.withUTF8({ Self.normalizeASCII($0) }) { return normalized }
        return rewritten.split(separator: "/", omittingEmptySubsequences: false)
            .map { !$0.contains("{") && Self.isIdentifier($0.utf8) ? "{id}" : String($0) }
            .joined(separator: "/")
    }

    /// `METHOD host normalized-path` as `MessageRecord` writes its endpoint, when there are no
    /// rewrite rules and host and path are ASCII (lowercasing and decoding are then bytewise);
    /// nil otherwise.
    func asciiEndpoint(method: String, host: String, path: ArraySlice<UInt8>) -> String? {
        guard rules.isEmpty else { return nil }
        var host = host
        var method = method
        return host.withUTF8 { hostBytes -> String? in
            method.withUTF8 { methodBytes in
                path.withUnsafeBufferPointer { pathBytes in
                    guard (hostBytes.max() ?? 0) < 0x80, (pathBytes.max() ?? 0) < 0x80 else { return nil }
                    // Written into scratch space and made a String once, of its exact length: an
                    // identifier segment of n bytes becomes `{id}`, at most 4n.
                    let bound = methodBytes.count + 1 + hostBytes.count + 1 + max(1, 4 * pathBytes.count)
                    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { scratch in
                        var length = 0
                        func put(_ byte: UInt8) {
                            scratch[length] = byte
                            length += 1
                        }
                        for byte in methodBytes { put(byte) }
                        put(UInt8(ascii: " "))
                        for byte in hostBytes { put(asciiLower(byte)) }
                        put(UInt8(ascii: " "))
                        if pathBytes.isEmpty {
                            put(UInt8(ascii: "/"))
                        } else {
                            length = Self.writeNormalizedASCII(pathBytes, to: scratch, at: length)
                        }
                        return String(decoding: UnsafeBufferPointer(rebasing: scratch[..<length]), as: UTF8.self)
                    }
                }
            }
        }
    }

    /// An ASCII path's segments written from `start` into a buffer with room for them, each
    /// identifier segment as `{id}`; the end.
    private static func writeNormalizedASCII(
        _ path: UnsafeBufferPointer<UInt8>, to out: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        var written = start
        var segmentStart = 0
        while true {
            var end = segmentStart
            while end < path.count && path[end] != UInt8(ascii: "/") { end += 1 }
            let segment = UnsafeBufferPointer(rebasing: path[segmentStart..<end])
            if !segment.contains(UInt8(ascii: "{")) && isIdentifier(segment) {
                for byte in "{id}".utf8 {
                    out[written] = byte
                    written += 1
                }
            } else {
                for byte in segment {
                    out[written] = byte
                    written += 1
                }
            }
            guard end < path.count else { break }
            out[written] = UInt8(ascii: "/")
            written += 1
            segmentStart = end + 1
        }
        return written
    }

    /// What the split by characters gives, for a path of ASCII bytes (each its own character
    /// but CR LF, which is no `/`); nil for any other path.
    private static func normalizeASCII(_ path: UnsafeBufferPointer<UInt8>) -> String? {
        guard !path.contains(where: { $0 >= 0x80 }) else { return nil }
        // An identifier segment of n bytes becomes `{id}`: at most 4n.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, 4 * path.count)) { scratch in
            let length = writeNormalizedASCII(path, to: scratch, at: 0)
            return String(decoding: UnsafeBufferPointer(rebasing: scratch[..<length]), as: UTF8.self)
        }
    }

    static func isIdentifier<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return false }
        if bytes.allSatisfy(isDigit) { return true }
        if isUUID(bytes) { return true }
        if bytes.count >= 16 && bytes.allSatisfy({ hexValue($0) != nil }) { return true }
        // base64 / base64url tokens: long, mixed letters and digits, no dots (file names keep theirs).
        let base64 = bytes.allSatisfy { isAlphanumeric($0) || $0 == 43 || $0 == 45 || $0 == 95 || $0 == 61 }
        return base64 && bytes.count >= 20 && bytes.contains(where: isDigit) && bytes.contains(where: isLetter)
    }

    private static func isUUID<Bytes: Collection>(_ b: Bytes) -> Bool where Bytes.Element == UInt8 {
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) { if c != 45 { return false } } else if hexValue(c) == nil { return false }
        }
        return true
    }

    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 97 && (c | 0x20) <= 122 }
    private static func isAlphanumeric(_ c: UInt8) -> Bool { isDigit(c) || isLetter(c) }
}
