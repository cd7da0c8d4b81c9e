import MessageModel
import Records

/// The estimator of seed 001, reproduced exactly, quirks included (docs/METERING.md §4.1).
///
/// Request line: `"{host} {method} {path} HTTP/1.1 {query}\n"`; headers: the app-visible
/// fields (the client profile's stack-added ones removed, Cookie kept) as
/// `name: value\r\n` plus the final CRLF; body: the body as the app passed it, or its
/// `gzippedData` when the request has a Content-Encoding field. Response line: the status
/// line without CRLF; headers: every field merged NSHTTPURLResponse-style; body: the decoded
/// body, or its `gzippedData` when Content-Encoding is exactly `gzip`.
public struct DocumentedEstimator: Estimator {
    public let name = "documented"
    public let profile: ClientProfile

    /// The profile's stack-added names as bytes, when all are ASCII: a field name is then
    /// looked up among them without making a String per field (once per record and field).
    private let asciiStackAddedNames: [[UInt8]]?
    /// Bit n set when a stack-added name is n bytes long (bit 63: 63 or longer): an ASCII name
    /// of no such length is none of them, without comparing it with each.
    private let stackAddedLengths: UInt64
    /// Whether a name that is not ASCII may still equal a stack-added name as Strings compare
    /// (canonical equivalence): only when one holds `;`, `` ` `` or `K`, the ASCII characters
    /// that another character (U+037E, U+1FEF, U+212A) decomposes to.
    private let stackAddedNamesHaveTwins: Bool

    public init(profile: ClientProfile = .urlSession) {
        self.profile = profile
        let names = profile.stackAddedFields.sorted().map { Array($0.utf8) }
        asciiStackAddedNames = names.allSatisfy { $0.allSatisfy { $0 < 0x80 } } ? names : nil
        stackAddedLengths = names.reduce(0) { $0 | Self.lengthBit($1.count) }
        stackAddedNamesHaveTwins = names.contains { $0.contains { $0 == 0x3B || $0 == 0x60 || $0 == 0x4B } }
    }

    @inline(__always) private static func lengthBit(_ length: Int) -> UInt64 { 1 << UInt64(min(length, 63)) }

    /// Whether the client's stack adds a field of this name (compared as lowercased text).
    func isStackAdded(_ name: [UInt8]) -> Bool {
        // Byte equality is String equality for ASCII text on both sides.
        if let names = asciiStackAddedNames {
            // Without twins, a name of no stack-added name's length is none of them, whatever its bytes.
            if !stackAddedNamesHaveTwins, stackAddedLengths & Self.lengthBit(name.count) == 0 { return false }
            if name.allSatisfy({ $0 < 0x80 }) { return names.contains { Self.sameNameIgnoringASCIICase($0, name) } }
        }
        return profile.stackAddedFields.contains(asciiLowercased(name))
    }

    public func bodyNeeds(for message: HTTPMessage) -> BodyNeeds {
        switch message.kind {
        case .request: return hasContentEncoding(message) ? .gzipTransferDecoded : []
        case .response: return respondsWithGzip(message) ? .gzipDecoded : []
        }
    }

    public func estimate(_ message: HTTPMessage, body: BodyFacts) -> Result<Estimate, EstimateUnavailable> {
        // Every component reads the fields: the line, the headers, and the body's coding.
        guard message.fieldsKnown else { return .failure(.fieldsUnknown) }
        guard body.contentKnown else { return .failure(.bodyUnknown) }
        switch message.kind {
        case .request:
            var bodySize = body.transferDecodedLength
            if hasContentEncoding(message) {
                // The seed re-compresses whenever the field exists, whatever the body already is.
                guard !body.bytesMissing else { return .failure(.bodyBytesMissing) }
                guard let gzipped = body.gzippedTransferDecoded else { return .failure(.bodyUnknown) }
                bodySize = gzipped
            }
            return .success(
                Estimate(
                    line: requestLineLength(message),
                    headers: visibleHeaderBlockLength(message.fields),
                    body: bodySize))
        case .response:
            var bodySize = body.decodedLength
            if respondsWithGzip(message) {
                guard !body.bytesMissing else { return .failure(.bodyBytesMissing) }
                guard body.decodedExactly else { return .failure(.bodyNotDecoded) }
                guard let gzipped = body.gzippedDecoded else { return .failure(.bodyUnknown) }
                bodySize = gzipped
            }
            return .success(
                Estimate(
                    line: responseLineLength(message),
                    headers: Self.headerBlockLength(message.fields, separator: 2),
                    body: bodySize))
        }
    }

    public func explain(_ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate)
        -> [ErrorCause]
    {
        var causes: [ErrorCause] = []
        causes.reserveCapacity(6)
        let headersError = estimate.headers - wire.headers
        switch message.kind {
        case .request:
            causes.add(.line, .requestLineWritten, estimate.line - wire.line)
            var stackAdded = 0
            for field in message.fields where isStackAdded(field.name) {
                stackAdded += field.name.count + field.value.count + 4
            }
            causes.add(.headers, .stackAddedFields, -stackAdded)
            causes.add(.headers, .requestHeaderFormatting, headersError + stackAdded)
        case .response:
            causes.add(.line, message.protocolFacts.startLineInHeaderBlock ? .http2StatusCounted : .statusLineCRLF, estimate.line - wire.line)
            var merged = 0
            for (name, count) in Self.repeatedFieldNames(message.fields) {
                let saved = (count - 1) * (name.count + 2)
                causes.add(.headers, "merged \(String(httpBytes: name)) fields", -saved)
                merged += saved
            }
            causes.add(.headers, .responseHeaderFormatting, headersError + merged)
        }
        let framing = Self.chunkFraming(message, wire: wire)
        causes.add(framing)
        let contentError = estimate.body - wire.body - framing.bytes
        let recompressed = bodyNeeds(for: message) != []
        causes.add(.body, recompressed ? .gzipRecompression : .decodedBodyCounted, contentError)
        return causes
    }

    /// Names sent more than once (first spelling), with how often.
    static func repeatedFieldNames(_ fields: [HeaderField]) -> [(name: [UInt8], count: Int)] {
        guard hasRepeatedNames(fields) else { return [] }
        var order: [[UInt8]] = []
        var counts: [[UInt8]: (name: [UInt8], count: Int)] = [:]
        for field in fields {
            let key = asciiLowercased(field.name)
            if let seen = counts[key] {
                counts[key] = (seen.name, seen.count + 1)
            } else {
                counts[key] = (field.name, 1)
                order.append(key)
            }
        }
        return order.compactMap { counts[$0] }.filter { $0.count > 1 }
    }

    private func hasContentEncoding(_ message: HTTPMessage) -> Bool {
        !message.values(of: "content-encoding").isEmpty
    }

    /// The seed compares the merged value with `isEqualToString:@"gzip"`: case-sensitive,
    /// and `gzip, gzip` is not `gzip`.
    private func respondsWithGzip(_ message: HTTPMessage) -> Bool {
        let values = message.values(of: "content-encoding")
        return values.count == 1 && values[0] == Array("gzip".utf8)
    }

    /// The status line the app reads back: as sent without its CRLF over HTTP/1.x; when the
    /// status travels in the header block (HTTP/2), which has no line, `{version} {status}`:
    /// `HTTP/2 200` (docs/METERING.md §2a).
    func responseLineLength(_ message: HTTPMessage) -> Int {
        if message.protocolFacts.startLineInHeaderBlock {
            return message.version.utf8.count + 1 + Self.decimalLength(message.status ?? 0)
        }
        return FoundationText.utf8Length(message.startLine)
    }

    /// `"{host} {method} {path} HTTP/1.1 {query}\n"`, counted in UTF-8.
    func requestLineLength(_ message: HTTPMessage) -> Int {
        let target = RequestTarget(message.target)
        let host = urlHost(message, target: target)
        // A String is valid UTF-8: its bytes are what Foundation counts.
        let method = (message.method ?? "").utf8.count
        let path = urlPathLength(target) ?? Self.nullText.utf8.count
        let query = target.query.map(FoundationText.utf8Length) ?? Self.nullText.utf8.count
        return host + 1 + method + 1 + path + 1 + "HTTP/1.1".utf8.count + 1 + query + 1
    }

    /// The length of `String(value)` (ASCII digits and a sign), without making it.
    static func decimalLength(_ value: Int) -> Int {
        var length = value < 0 ? 2 : 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            length += 1
        }
        return length
    }

    /// Objective-C's `%@` of nil.
    static let nullText = "(null)"

    /// NSURL `host`: the absolute-form authority or the Host field, without userinfo and
    /// port, IPv6 without brackets; empty without either.
    private func urlHost(_ message: HTTPMessage, target: RequestTarget) -> Int {
        // An ASCII authority is its own text's UTF-8: no String is made of it (once per request).
        let authority =
            target.authorityBytes.map {
                $0.contains(where: { $0 >= 0x80 }) ? Array(String(httpBytes: $0).utf8)[...] : $0
            }
            ?? message.values(of: "host").first?[...]
        guard var host = authority else { return 0 }
        if let at = host.lastIndex(of: UInt8(ascii: "@")) { host = host[(at + 1)...] }
        if host.first == UInt8(ascii: "[") {
            let close = host.firstIndex(of: UInt8(ascii: "]")) ?? host.endIndex
            host = host[(host.startIndex + 1)..<close]
        } else if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
            host = host[..<colon]
        }
        return FoundationText.utf8Length(host)
    }

    /// The UTF-8 length of `urlPath`; nil when it is nil.
    private func urlPathLength(_ target: RequestTarget) -> Int? {
        let path = target.path
        // ASCII without escapes (nearly every path) is its own decoding: no copy is made.
        guard path.contains(where: { $0 == UInt8(ascii: "%") || $0 >= 0x80 }) else {
            return Self.droppingTrailingSlash(path).count
        }
        return urlPath(target).map(FoundationText.utf8Length)
    }

    /// NSURL `path`: percent-decoded, one trailing slash stripped unless the path is `/`;
    /// nil when decoding fails.
    private func urlPath(_ target: RequestTarget) -> [UInt8]? {
        guard let path = FoundationText.percentDecoded(Array(target.path)) else { return nil }
        return Array(Self.droppingTrailingSlash(path[...]))
    }

    /// NSURL drops one trailing slash from a path, unless the path is `/`.
    private static func droppingTrailingSlash(_ path: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        path.count > 1 && path.last == UInt8(ascii: "/") ? path.dropLast() : path
    }

    /// `headerBlockLength` of the fields the client's stack does not add (the app's own), without
    /// making their array: they are marked in a word (up to 64 fields; more take the array).
    func visibleHeaderBlockLength(_ fields: [HeaderField]) -> Int {
        guard fields.count <= 64 else {
            return Self.headerBlockLength(fields.filter { !isStackAdded($0.name) }, separator: 1)
        }
        var visible: UInt64 = 0
        for index in fields.indices where !isStackAdded(fields[index].name) { visible |= 1 << UInt64(index) }
        guard !Self.hasRepeatedNames(fields, among: visible) else {
            return Self.headerBlockLength(fields.filter { !isStackAdded($0.name) }, separator: 1)
        }
        var length = 2
        for index in fields.indices where visible & (1 << UInt64(index)) != 0 {
            length += FoundationText.utf8Length(fields[index].name) + 2 + FoundationText.utf8Length(fields[index].value) + 2
        }
        return length
    }

    /// Σ `len(name) + 2 + len(value) + 2` over fields merged by name (first spelling kept,
    /// values joined by a separator of `separator` bytes), plus 2 for the final CRLF.
    static func headerBlockLength(_ fields: [HeaderField], separator: Int) -> Int {
        if !hasRepeatedNames(fields) {
            // Nothing merges: each field counts alone, no dictionary needed.
            return fields.reduce(2) {
                $0 + FoundationText.utf8Length($1.name) + 2 + FoundationText.utf8Length($1.value) + 2
            }
        }
        var merged: [[UInt8]: (name: Int, value: Int)] = [:]
        for field in fields {
            let key = asciiLowercased(field.name)
            let valueLength = FoundationText.utf8Length(field.value)
            if let existing = merged[key] {
                merged[key] = (existing.name, existing.value + separator + valueLength)
            } else {
                merged[key] = (FoundationText.utf8Length(field.name), valueLength)
            }
        }
        return merged.values.reduce(2) { $0 + $1.name + 2 + $1.value + 2 }
    }
}

extension DocumentedEstimator {
    /// Whether two fields share a name, compared as `asciiLowercased` compares them; true
    /// beyond 64 fields (the callers then take their general path).
    static func hasRepeatedNames(_ fields: [HeaderField]) -> Bool {
        guard fields.count <= 64 else { return true }
        return hasRepeatedNames(fields, among: fields.count == 64 ? ~0 : (1 << UInt64(fields.count)) - 1)
    }

    /// `hasRepeatedNames` of the fields whose bit is set in `among` (at most 64 fields). Names
    /// of different lengths differ: only those of equal length are compared byte by byte.
    static func hasRepeatedNames(_ fields: [HeaderField], among: UInt64) -> Bool {
        fields.withUnsafeBufferPointer { fields in
            for second in fields.indices where among & (1 << UInt64(second)) != 0 {
                let length = fields[second].name.count
                for first in 0..<second where among & (1 << UInt64(first)) != 0 && fields[first].name.count == length {
                    if sameNameIgnoringASCIICase(fields[first].name, fields[second].name) { return true }
                }
            }
            return false
        }
    }

    /// `asciiLowercased(a) == asciiLowercased(b)`, without making either.
    static func sameNameIgnoringASCIICase(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        for index in a.indices {
            if a[index] != b[index] && asciiLower(a[index]) != asciiLower(b[index]) { return false }
        }
        return true
    }
}

func asciiLowercased(_ bytes: [UInt8]) -> [UInt8] { bytes.map(asciiLower) }

extension Set where Element == String {
    func contains(_ lowercasedName: [UInt8]) -> Bool {
        contains(String(decoding: lowercasedName, as: UTF8.self))
    }
}
