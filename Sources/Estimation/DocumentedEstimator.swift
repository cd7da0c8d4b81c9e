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
    /// The `NameKey` of each of `asciiStackAddedNames`, in the same order: a name is compared
    /// byte by byte only with those of its key, and only when it is longer than 16 bytes.
    private let stackAddedKeys: [NameKey]
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
        stackAddedKeys = (asciiStackAddedNames ?? []).map { NameKey.of($0).key }
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

    /// `isStackAdded` of a name whose `NameKey` is at hand and that is ASCII or not.
    @inline(__always) func isStackAdded(_ name: [UInt8], key: NameKey, ascii: Bool) -> Bool {
        guard ascii, let names = asciiStackAddedNames else { return isStackAdded(name) }
        for index in stackAddedKeys.indices where stackAddedKeys[index] == key {
            if key.isWholeName || Self.sameNameIgnoringASCIICase(names[index], name) { return true }
        }
        return false
    }

    public func bodyNeeds(for message: HTTPMessage) -> BodyNeeds {
        let coding = ContentEncodingFields(message.fields)
        switch message.kind {
        case .request: return coding.present ? .gzipTransferDecoded : []
        case .response: return coding.isGzip ? .gzipDecoded : []
        }
    }

    public func estimate(_ message: HTTPMessage, body: BodyFacts) -> Result<Estimate, EstimateUnavailable> {
        estimate(message, body: body, scan: FieldScan.of(message, estimator: self))
    }

    public func explain(_ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate)
        -> [ErrorCause]
    {
        explain(message, wire: wire, body: body, estimate: estimate, scan: FieldScan.of(message, estimator: self))
    }

    /// The estimate and its causes from one pass over the fields (once per record: the
    /// estimate and the causes read the same figures of them).
    public func assess(_ message: HTTPMessage, wire: WireSize, body: BodyFacts) -> Assessment {
        let scan = FieldScan.of(message, estimator: self)
        return Assessment(estimate(message, body: body, scan: scan), wire: wire) { split, estimate in
            explain(message, wire: split, body: body, estimate: estimate, scan: scan)
        }
    }

    private func estimate(_ message: HTTPMessage, body: BodyFacts, scan: FieldScan)
        -> Result<Estimate, EstimateUnavailable>
    {
        // Every component reads the fields: the line, the headers, and the body's coding.
        guard message.fieldsKnown else { return .failure(.fieldsUnknown) }
        guard body.contentKnown else { return .failure(.bodyUnknown) }
        switch message.kind {
        case .request:
            var bodySize = body.transferDecodedLength
            if scan.coding.present {
                // The seed re-compresses whenever the field exists, whatever the body already is.
                guard !body.bytesMissing else { return .failure(.bodyBytesMissing) }
                guard let gzipped = body.gzippedTransferDecoded else { return .failure(.bodyUnknown) }
                bodySize = gzipped
            }
            return .success(
                Estimate(
                    line: requestLineLength(message, host: scan.host),
                    headers: scan.visibleHeaderBlockLength ?? visibleHeaderBlockLength(message.fields),
                    body: bodySize))
        case .response:
            var bodySize = body.decodedLength
            if scan.coding.isGzip {
                guard !body.bytesMissing else { return .failure(.bodyBytesMissing) }
                guard body.decodedExactly else { return .failure(.bodyNotDecoded) }
                guard let gzipped = body.gzippedDecoded else { return .failure(.bodyUnknown) }
                bodySize = gzipped
            }
            return .success(
                Estimate(
                    line: responseLineLength(message),
                    headers: scan.headerBlockLength(separator: 2)
                        ?? Self.headerBlockLength(message.fields, separator: 2),
                    body: bodySize))
        }
    }

    private func explain(
        _ message: HTTPMessage, wire: ComponentSizes, body: BodyFacts, estimate: Estimate, scan: FieldScan
    ) -> [ErrorCause] {
        var causes: [ErrorCause] = []
        causes.reserveCapacity(6)
        let headersError = estimate.headers - wire.headers
        switch message.kind {
        case .request:
            causes.add(.line, .requestLineWritten, estimate.line - wire.line)
            let stackAdded = scan.stackAddedBytes ?? stackAddedBytes(message.fields)
            causes.add(.headers, .stackAddedFields, -stackAdded)
            causes.add(.headers, .requestHeaderFormatting, headersError + stackAdded)
        case .response:
            causes.add(.line, message.protocolFacts.startLineInHeaderBlock ? .http2StatusCounted : .statusLineCRLF, estimate.line - wire.line)
            var merged = 0
            if scan.mayRepeatNames {
                for (name, count) in Self.repeatedFieldNames(message.fields) {
                    let saved = (count - 1) * (name.count + 2)
                    causes.add(.headers, "merged \(String(httpBytes: name)) fields", -saved)
                    merged += saved
                }
            }
            causes.add(.headers, .responseHeaderFormatting, headersError + merged)
        }
        let framing = Self.chunkFraming(message, wire: wire)
        causes.add(framing)
        let contentError = estimate.body - wire.body - framing.bytes
        let recompressed = message.kind == .request ? scan.coding.present : scan.coding.isGzip
        causes.add(.body, recompressed ? .gzipRecompression : .decodedBodyCounted, contentError)
        return causes
    }

    /// The bytes of the fields the client's stack adds, as sent (name, `: `, value, CRLF).
    private func stackAddedBytes(_ fields: [HeaderField]) -> Int {
        var bytes = 0
        for field in fields where isStackAdded(field.name) { bytes += field.name.count + field.value.count + 4 }
        return bytes
    }

    /// Names sent more than once (first spelling), with how often.
    static func repeatedFieldNames(_ fields: [HeaderField]) -> [(name: [UInt8], count: Int)] {
        guard hasRepeatedNames(fields) else { return [] }
        if fields.count <= 64 {
            // Each field not yet counted under an earlier spelling counts those after it with
            // its name: no dictionary or lowercased copies (a response with Set-Cookie twice).
            var repeated: [(name: [UInt8], count: Int)] = []
            var counted: UInt64 = 0
            for first in fields.indices where counted & (1 << UInt64(first)) == 0 {
                let name = fields[first].name
                var count = 1
                for later in (first + 1)..<fields.count where counted & (1 << UInt64(later)) == 0 {
                    if sameNameIgnoringASCIICase(name, fields[later].name) {
                        count += 1
                        counted |= 1 << UInt64(later)
                    }
                }
                if count > 1 { repeated.append((name, count)) }
            }
            return repeated
        }
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
        requestLineLength(message, host: FieldScan.firstHostField(message.fields))
    }

    /// `requestLineLength` with the index of the first Host field at hand (nil: none).
    private func requestLineLength(_ message: HTTPMessage, host hostField: Int?) -> Int {
        let target = RequestTarget(message.target)
        let host = urlHost(message, target: target, hostField: hostField)
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
    private func urlHost(_ message: HTTPMessage, target: RequestTarget, hostField: Int?) -> Int {
        if let authority = target.authorityBytes {
            // An ASCII authority is its own text's UTF-8: no String is made of it (once per request).
            guard authority.contains(where: { $0 >= 0x80 }) else {
                return authority.withUnsafeBufferPointer { Self.hostLength(in: $0) }
            }
            return Array(String(httpBytes: authority).utf8).withUnsafeBufferPointer { Self.hostLength(in: $0) }
        }
        guard let hostField else { return 0 }
        return message.fields[hostField].value.withUnsafeBufferPointer { Self.hostLength(in: $0) }
    }

    /// The UTF-8 length of the host in an authority: without userinfo and port, IPv6
    /// without brackets.
    private static func hostLength(in authority: UnsafeBufferPointer<UInt8>) -> Int {
        var start = authority.lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? 0
        var end = authority.count
        if start < end, authority[start] == UInt8(ascii: "[") {
            end = authority[(start + 1)...].firstIndex(of: UInt8(ascii: "]")) ?? end
            start += 1
        } else {
            end = authority[start...].firstIndex(of: UInt8(ascii: ":")) ?? end
        }
        return FoundationText.utf8Length(UnsafeBufferPointer(rebasing: authority[start..<end]))
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

/// The Content-Encoding fields of a head, as the documented meter reads them.
struct ContentEncodingFields {
    /// How many there are.
    var count = 0
    /// Whether the first one's value is exactly `gzip`.
    var firstIsGzip = false

    /// A request is re-compressed whenever the field exists.
    var present: Bool { count > 0 }

    /// The seed compares the merged value with `isEqualToString:@"gzip"`: case-sensitive,
    /// and `gzip, gzip` is not `gzip`.
    var isGzip: Bool { count == 1 && firstIsGzip }

    init() {}

    init(_ fields: [HeaderField]) {
        for field in fields where field.name.count == 16 {
            if DocumentedEstimator.sameNameIgnoringASCIICase(FieldScan.contentEncodingName, field.name) { add(field.value) }
        }
    }

    mutating func add(_ value: [UInt8]) {
        if count == 0 { firstIsGzip = Self.isGzip(value) }
        count += 1
    }

    private static func isGzip(_ value: [UInt8]) -> Bool {
        value.count == 4 && value[0] == UInt8(ascii: "g") && value[1] == UInt8(ascii: "z")
            && value[2] == UInt8(ascii: "i") && value[3] == UInt8(ascii: "p")
    }
}

/// What the documented meter reads of a head's fields, from one pass over them (once per
/// record: the estimate, its causes and the body's needs read the same figures). Up to 64
/// fields, names are told apart by a word of their first bytes; beyond, the figures of the
/// general path (`headerBlockLength`, `repeatedFieldNames`) are left nil and taken field by field.
struct FieldScan {
    var coding = ContentEncodingFields()
    /// The index of the first Host field (requests only).
    var host: Int?
    /// `visibleHeaderBlockLength` (requests only; nil beyond 64 fields).
    var visibleHeaderBlockLength: Int?
    /// The bytes of the stack-added fields as sent (requests only; nil beyond 64 fields).
    var stackAddedBytes: Int?
    /// False when no two fields share a name (as `asciiLowercased` compares them).
    var mayRepeatNames = true
    /// The parts of `headerBlockLength` (responses only; nil beyond 64 fields): the values'
    /// UTF-8 lengths, each first spelling's name + 4, and how many fields repeat a name.
    private var allFields: (values: Int, heads: Int, repeats: Int)?

    /// `DocumentedEstimator.headerBlockLength` of every field; nil beyond 64 fields.
    func headerBlockLength(separator: Int) -> Int? {
        allFields.map { 2 + $0.values + $0.heads + separator * $0.repeats }
    }

    static let contentEncodingName = Array("content-encoding".utf8)

    /// The scan of a message's fields (a function, not an init: its arguments are borrowed,
    /// not copied).
    static func of(_ message: HTTPMessage, estimator: DocumentedEstimator) -> FieldScan {
        var scan = FieldScan()
        let fields = message.fields
        let isRequest = message.kind == .request
        guard fields.count <= 64 else {
            scan.coding = ContentEncodingFields(fields)
            if isRequest { scan.host = firstHostField(fields) }
            return scan
        }
        scan.mayRepeatNames = false
        var values = 0, heads = 0, repeats = 0
        var stackAdded = 0
        withUnsafeTemporaryAllocation(of: NameKey.self, capacity: max(fields.count, 1)) { keys in
            for index in fields.indices {
                let name = fields[index].name
                let value = fields[index].value
                let (key, ascii) = NameKey.of(name)
                keys.initializeElement(at: index, to: key)
                // A field whose name an earlier field has is merged into that one's line.
                var first = true
                for earlier in 0..<index where keys[earlier] == key {
                    if key.isWholeName || DocumentedEstimator.sameNameIgnoringASCIICase(fields[earlier].name, name) {
                        first = false
                        break
                    }
                }
                if !first { scan.mayRepeatNames = true }
                if key == NameKey.contentEncoding { scan.coding.add(value) }
                if isRequest {
                    if scan.host == nil, key == NameKey.host { scan.host = index }
                    // Fields of one name are all stack-added or none: the app's own merge among
                    // themselves, and the block counts theirs alone.
                    if estimator.isStackAdded(name, key: key, ascii: ascii) {
                        stackAdded += name.count + value.count + 4
                        continue
                    }
                }
                let valueASCII = value.withUnsafeBufferPointer { FoundationText.orOfBytes($0) } < 0x80
                values += valueASCII ? value.count : FoundationText.utf8Length(value)
                if first { heads += (ascii ? name.count : FoundationText.utf8Length(name)) + 4 } else { repeats += 1 }
            }
        }
        if isRequest {
            // Repeats among the app's fields join with a comma.
            scan.visibleHeaderBlockLength = 2 + values + heads + repeats
            scan.stackAddedBytes = stackAdded
        } else {
            scan.allFields = (values, heads, repeats)
        }
        return scan
    }

    /// The index of the first field named Host.
    static func firstHostField(_ fields: [HeaderField]) -> Int? {
        fields.firstIndex { $0.hasName("host") }
    }
}

/// What equal names (as `asciiLowercased` compares them) share: the length, and the first and
/// last eight bytes lowercased, a word at a time. Names of up to 16 bytes (nearly all) are
/// equal exactly when their keys are; longer ones are compared in full when their keys are.
struct NameKey: Equatable {
    var length: Int
    var head: UInt64
    var tail: UInt64

    /// Whether the key holds every byte of the name.
    var isWholeName: Bool { length <= 16 }

    /// `content-encoding`: "content-" and "encoding" as little-endian words.
    static let contentEncoding = NameKey(length: 16, head: 0x2D74_6E65_746E_6F63, tail: 0x676E_6964_6F63_6E65)
    /// `host`, its four bytes from the lowest up.
    static let host = NameKey(length: 4, head: 0x7473_6F68, tail: 0)

    /// A name's key, and whether the name is ASCII, in one look at its bytes.
    @inline(__always) static func of(_ name: [UInt8]) -> (key: NameKey, ascii: Bool) {
        name.withUnsafeBufferPointer { bytes in
            let count = bytes.count
            guard let base = bytes.baseAddress, count >= 8 else {
                var word: UInt64 = 0
                for index in 0..<count { word |= UInt64(bytes[index]) << (UInt64(index) * 8) }
                return (NameKey(length: count, head: lowercased(word), tail: 0), word & 0x8080_8080_8080_8080 == 0)
            }
            let head = UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
            let tail = UInt64(littleEndian: UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self))
            var ascii = (head | tail) & 0x8080_8080_8080_8080 == 0
            if count > 16 { ascii = ascii && FoundationText.orOfBytes(UnsafeBufferPointer(rebasing: bytes[8..<(count - 8)])) < 0x80 }
            return (NameKey(length: count, head: lowercased(head), tail: lowercased(tail)), ascii)
        }
    }

    /// Each byte of `A`–`Z` made `a`–`z`, the others left as they are (`asciiLower` of each
    /// byte): a byte's low seven bits plus 0x3F carry into its top bit from `A` up, plus 0x25
    /// from `[` up; bytes of 0x80 and above are left out.
    @inline(__always) static func lowercased(_ word: UInt64) -> UInt64 {
        let low7 = word & 0x7F7F_7F7F_7F7F_7F7F
        let fromA = low7 &+ 0x3F3F_3F3F_3F3F_3F3F
        let pastZ = low7 &+ 0x2525_2525_2525_2525
        let capitals = fromA & ~pastZ & ~word & 0x8080_8080_8080_8080
        return word | capitals >> 2
    }
}
