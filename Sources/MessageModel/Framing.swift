import CaptureIO

/// Space and horizontal tab: what surrounds field values and list elements (RFC 9110 §5.6.3).
@inlinable @inline(__always) public func isHorizontalSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 }

/// The bytes without leading and trailing spaces and tabs.
@inlinable public func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, isHorizontalSpace(first) { slice = slice.dropFirst() }
    while let last = slice.last, isHorizontalSpace(last) { slice = slice.dropLast() }
    return slice
}

/// The framing rules of RFC 9112 §6.3, in one place: HTTP/1's parser and the HAR reader decide by them.
public enum Framing {
    /// What the message's head says of its body.
    public struct Decision: Sendable {
        public var framing: BodyFraming
        public var anomalies: MessageAnomalies = []
        /// The connection becomes a tunnel after this message (2xx to CONNECT, 101).
        public var startsTunnel = false

        public init(framing: BodyFraming, anomalies: MessageAnomalies = [], startsTunnel: Bool = false) {
            self.framing = framing
            self.anomalies = anomalies
            self.startsTunnel = startsTunnel
        }
    }

    /// Decides how the body of `message` is delimited. For a response, `requestMethod` is the
    /// method of the request it answers (nil when unknown).
    public static func decide(for message: HTTPMessage, requestMethod: String?) -> Decision {
        if message.kind == .response, let status = message.status {
            if status == 101 { return Decision(framing: .none, startsTunnel: true) }
            if status < 200 || status == 204 || status == 304 { return Decision(framing: .none) }
            if requestMethod == "HEAD" { return Decision(framing: .none) }
            if requestMethod == "CONNECT", status < 300 { return Decision(framing: .none, startsTunnel: true) }
        }
        // The last Transfer-Encoding value and the Content-Length values, found without
        // gathering them into arrays (once per message).
        let lastTransferCoding: [UInt8]? = withBytes("transfer-encoding") { name in
            message.fields.last { $0.hasName(lowercasedBytes: name) }?.value
        }
        let contentLength = parseContentLength(in: message.fields)
        var decision = Decision(framing: .none)
        if case .invalid = contentLength { decision.anomalies.insert(.invalidContentLength) }
        if let lastTransferCoding {
            if case .valid = contentLength { decision.anomalies.insert(.lengthAndChunked) }
            let last = trimmed(lastListElement(lastTransferCoding))
            let chunked = last.count == 7 && zip(last, "chunked".utf8).allSatisfy { asciiLower($0) == $1 }
            decision.framing = chunked ? .chunked : (message.kind == .response ? .untilClose : .none)
            return decision
        }
        switch contentLength {
        case let .valid(length): decision.framing = length > 0 ? .length(length) : .none
        case .absent, .invalid: decision.framing = message.kind == .response ? .untilClose : .none
        }
        return decision
    }

    public enum ContentLength: Equatable, Sendable { case absent, valid(Int64), invalid }

    /// A whole number, or a list of identical ones (RFC 9110 §8.6); anything else is invalid.
    public static func parseContentLength(_ values: [[UInt8]]) -> ContentLength {
        guard !values.isEmpty else { return .absent }
        var result: Int64?
        for value in values where !foldContentLength(value, into: &result) { return .invalid }
        return result.map { .valid($0) } ?? .invalid
    }

    /// `parseContentLength` of the values of the Content-Length fields among `fields`, found
    /// without gathering them (once per response, for the estimators).
    public static func parseContentLength(in fields: [HeaderField]) -> ContentLength {
        var found = false
        var result: Int64?
        for field in fields where field.name.count == 14 && field.hasName("content-length") {
            found = true
            guard foldContentLength(field.value, into: &result) else { return .invalid }
        }
        guard found else { return .absent }
        return result.map { .valid($0) } ?? .invalid
    }

    /// One Content-Length value's comma-separated elements checked against `result` (the
    /// number the earlier ones gave, set by the first), walked in place with no array of
    /// pieces: false when one is no whole number or differs.
    @inline(__always)
    static func foldContentLength(_ value: [UInt8], into result: inout Int64?) -> Bool {
        var start = value.startIndex
        while true {
            let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
            let digits = trimmed(value[start..<end])
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(isDigit) else { return false }
            let number = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
            if let previous = result, previous != number { return false }
            result = number
            if end == value.endIndex { return true }
            start = end + 1
        }
    }

    /// A lowercase ASCII name's bytes, for `HeaderField.hasName(lowercasedBytes:)`.
    @inline(__always)
    static func withBytes<Result>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    private static func lastListElement(_ value: [UInt8]) -> ArraySlice<UInt8> {
        if let comma = value.lastIndex(of: UInt8(ascii: ",")) { return value[(comma + 1)...] }
        return value[...]
    }

    /// The size in a chunk-size line (`1a;ext=1`), nil when the line does not parse.
    public static func chunkSize(_ line: ArraySlice<UInt8>) -> Int64? {
        var size: Int64 = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = hexValue(line[index]) {
            guard digits < 15 else { return nil }
            size = size << 4 | Int64(value)
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        while index < line.endIndex, isHorizontalSpace(line[index]) { index += 1 }
        guard index == line.endIndex || line[index] == UInt8(ascii: ";") else { return nil }
        return size
    }
}
