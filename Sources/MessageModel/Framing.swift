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
        let transferCodings = message.values(of: "transfer-encoding")
        let contentLength = parseContentLength(message.values(of: "content-length"))
        var decision = Decision(framing: .none)
        if case .invalid = contentLength { decision.anomalies.insert(.invalidContentLength) }
        if !transferCodings.isEmpty {
            if case .valid = contentLength { decision.anomalies.insert(.lengthAndChunked) }
            let last = transferCodings.last.map { trimmed(lastListElement($0)) } ?? []
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
        for value in values {
            guard addContentLength(value, to: &result) else { return .invalid }
        }
        return result.map { .valid($0) } ?? .invalid
    }

    /// `parseContentLength` of the values of the Content-Length fields among `fields`, found
    /// without gathering them (once per response, for the estimators).
    public static func parseContentLength(in fields: [HeaderField]) -> ContentLength {
        var found = false
        var result: Int64?
        for field in fields where field.name.count == 14 && field.hasName("content-length") {
            found = true
            guard addContentLength(field.value, to: &result) else { return .invalid }
        }
        guard found else { return .absent }
        return result.map { .valid($0) } ?? .invalid
    }

    /// Reads one Content-Length value into `result` (the number every element so far gave);
    /// false when it is not a list of whole numbers equal to it.
    private static func addContentLength(_ value: [UInt8], to result: inout Int64?) -> Bool {
        // The comma-separated elements, empty ones included, walked in place: no array of
        // pieces (once per response and per estimate).
        var start = value.startIndex
        while true {
            let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
            let digits = trimmed(value[start..<end])
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(isDigit) else { return false }
            let number = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
            if let previous = result, previous != number { return false }
            result = number
            guard end < value.endIndex else { return true }
            start = end + 1
        }
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
